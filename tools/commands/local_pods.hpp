// The controller process of a distributed run: `profile --worker-pods N`
// (N worker processes started here from /proc/self/exe) and `service --role
// controller` (pods started elsewhere, e.g. by Kubernetes).
#pragma once

#include "actors/benchmark/system_controller/system_controller.hpp"
#include "config/profile/profile_config.hpp"
#include "runtime/system/errc.hpp"
#include "runtime/zmq_bridge/settings.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <filesystem>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace aiperf::api_service {
class status_board;
} // namespace aiperf::api_service

namespace aiperf::local_pods {

struct controller_options {
  /// Start the worker processes here (local multi-process mode).
  bool spawn_children = true;
  /// Interface of the TCP binds (bridge and API).
  std::string bind_host = "127.0.0.1";
  /// Bridge and API ports; 0 = ephemeral (local mode always).
  zmq_bridge::port_config ports{0, 0, 0, 0, 0, 0};
  /// Also bind the bridge on IPC (local children connect there).
  bool ipc = true;
  /// AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT (default 50, as AIPerf).
  double abort_threshold_percent = 50;
  std::chrono::milliseconds registration_timeout{60'000};
  std::chrono::milliseconds heartbeat_timeout{5'000};
  /// AIPERF_K8S_CONTROLLER_HEARTBEAT_INTERVAL_SECONDS: the cadence of the
  /// status pushes into the AIPerfJob (operator mode: AIPERF_JOB_UID set).
  std::chrono::milliseconds status_push_interval{10'000};
  /// Extra environment of every child (tests).
  std::vector<std::pair<std::string, std::string>> child_env;
  /// AIPERF_K8S_PORTS_FILE: once bound, the controller writes its ports here
  /// (remote/ports_file.hpp), so processes started after it can bind 0.
  std::filesystem::path ports_file;
  /// Runs after the final export and the results-ready marker, while the
  /// API still serves (its board is marked finished, so POST /api/shutdown
  /// is accepted): a pod's linger. Empty = tear down at once (`profile
  /// --worker-pods`, whose caller reads the results from disk).
  std::function<void(const system_controller::run_result&,
                     const std::shared_ptr<api_service::status_board>&)>
    after_results;
};

/// Reads AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT, AIPERF_K8S_PORTS_FILE,
/// AIPERF_K8S_CONTROLLER_HEARTBEAT_INTERVAL_SECONDS and the tuning variables AIPERF_REGISTRATION_TIMEOUT_MS /
/// AIPERF_HEARTBEAT_TIMEOUT_MS into `opts`; fails with system::errc::bad_env naming the variable (and
/// its system::env_error as a payload).
[[nodiscard]] caf::expected<void> apply_env(controller_options& opts);

/// Runs the benchmark as the controller of `cfg.worker_pods` worker
/// processes and returns like a local run (same exports). `cfg` is the
/// finalized configuration with the real URLs (it becomes the run file;
/// secrets travel as AIPERF_INJECTED_* env); `plan` comes from the recorded
/// configuration. `publish` receives the system_controller handle (for
/// SIGINT) once it exists and a null handle when it is gone. A lost pod
/// within the threshold turns exit code 0 into 5 (degraded). Once the exports
/// exist, `.aiperf_results_ready.json` is written last into the run's
/// artifact dir (api_service/results_files.hpp).
/// Call from the main thread: children die with the thread that forked them.
[[nodiscard]] system_controller::run_result
run_controller(caf::actor_system& sys, const config::profile_config& cfg,
               system_controller::run_plan plan, controller_options opts,
               const std::function<void(caf::actor)>& publish);

/// The AIPERF_INJECTED_* environment that carries `cfg`'s credentials to
/// the children, which read the redacted run file
/// (endpoint_credentials::child_env).
[[nodiscard]] std::vector<std::pair<std::string, std::string>>
secret_env(const config::profile_config& cfg);

} // namespace aiperf::local_pods
