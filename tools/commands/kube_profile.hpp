// `kube profile`'s decisions as functions, so tests pin each without a
// cluster (kube_profile_command.cpp).
#pragma once

#include "config/profile/profile_config.hpp"
#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "k8s/client/config.hpp"
#include "k8s/manifests/manifests.hpp"
#include "tools/commands/kube_cluster.hpp"

#include <optional>
#include <string>
#include <vector>

namespace aiperf::kube_command {

enum class profile_mode : std::uint8_t { direct, operator_mode };

/// The mode a discovery answer for `GET /apis/aiperf.nvidia.com/v1alpha1`
/// means: aiperfjobs listed → operator mode; 404 → direct; anything else an
/// error naming the answer (exit 1).
[[nodiscard]] caf::expected<profile_mode>
mode_from_discovery(const caf::expected<k8s::response>& answer);

/// The process exit code of a terminal AIPerfJob status: Completed 0 (5
/// with Degraded=True), Failed the run's exit code when it failed on its own
/// terms (4, 6) else 1, Cancelled 1; nullopt while the job is not terminal.
[[nodiscard]] std::optional<int> exit_code_of_job(const k8s::json& status);

/// The refusal of local-only flags (`--worker-pods`) naming them; empty
/// when none was given.
[[nodiscard]] std::string local_only_refusal(const std::vector<std::string>& given);

/// `jobset.jobset.x-k8s.io/aiperf-<name> created in <ns> (direct mode)` or
/// `aiperfjob.aiperf.nvidia.com/<name> created in <ns> (operator mode)`.
[[nodiscard]] std::string first_line(const std::string& job, const std::string& ns,
                                     profile_mode mode);

/// Whether to return after creation: --detach; else, as in AIPerf, when
/// stdout is not a terminal (with `warning` set) unless --no-detach.
[[nodiscard]] bool should_detach(bool detach, bool no_detach, bool stdout_tty,
                                 std::string* warning);

/// A pod condition that keeps the run from ever starting
/// (ImagePullBackOff, ErrImagePull, CrashLoopBackOff, Unschedulable, ...),
/// described with the pod and container; nullopt when none.
[[nodiscard]] std::optional<std::string> startup_problem(const k8s::json& pod);

/// The exit code of the controller pod's `control-plane` container once it
/// terminated.
[[nodiscard]] std::optional<int> controller_exit_code(const k8s::json& pod);

/// Pods of the run's JobSet.
[[nodiscard]] caf::expected<std::vector<k8s::json>> list_pods_of(cluster& c,
                                                                 const std::string& job);

/// Everything `kube profile` was given, parsed.
struct profile_request {
  cluster_flags cluster;
  k8s::manifests::deployment deploy; // deploy.ns resolved
  config::profile_config run;        // finalized
  config::profile_config typed;      // as given (operator mode writes it into the spec)
  bool skip_endpoint_check = false;
  k8s::manifests::env_lookup env;    // resource overrides
  k8s::client::environment home_env = k8s::client::process_environment();
  std::vector<std::string> local_only_flags; // given flags that are refused
  bool operator_flag = false;
  bool no_operator_flag = false;
  bool detach = false;
  bool no_detach = false;
  bool dry_run = false;
};

/// Runs `kube profile`; the process exit code.
[[nodiscard]] int run_profile(const profile_request& req);

} // namespace aiperf::kube_command
