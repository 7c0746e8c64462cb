// Maps a finalized profile_config onto the configuration of every service.
// Pure, so the mapping is unit-tested without actors.
#pragma once

#include "actors/benchmark/dataset_manager/dataset_manager.hpp"
#include "actors/benchmark/record_processor/record_processor.hpp"
#include "actors/benchmark/records_manager/records_manager.hpp"
#include "config/profile/profile_config.hpp"
#include "proto/benchmark_errors.hpp"
#include "proto/timing.hpp"
#include "proto/timing_manager.hpp"
#include "proto/worker.hpp"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace aiperf::system_controller {

/// What the controller reports of a running benchmark (the pods' controller
/// serves it on /api/progress).
struct run_progress {
  /// "configuring", "running", "exporting", "complete", "cancelled", "failed".
  std::string state;
  proto::timing_progress timing;
  /// Failed profiling requests so far.
  std::uint64_t errors = 0;
  /// Completed requests per second since the load started.
  double requests_per_second = 0;
};

struct run_plan {
  std::string run_id;
  std::string artifact_dir;
  dataset_manager::dataset_config dataset;
  /// Without the session plans (they come from the dataset_manager).
  proto::timing_config timing;
  proto::worker_config worker;
  std::uint32_t num_workers = 1;
  record_processor::processor_config processor;
  std::uint32_t num_processors = 1;
  records_manager::records_config records;
  /// --failed-request-threshold, a ratio of failed profiling requests
  /// (< 0: off); judged by the records_manager (records.failed_request_*).
  double failed_request_threshold = -1;
  /// The run stops (exit code 3) once every connection attempt was refused
  /// for this long, with no request reaching the server in between: env
  /// AIPERF_UNREACHABLE_TIMEOUT_MS, default 10 s; 0 turns the check off.
  std::int64_t unreachable_timeout_ms = 10'000;
  /// The --url values, for the message of that stop.
  std::string urls;
  bool show_progress = false;
  /// Called on every state change and every 500 ms while the load runs
  /// (unset = nobody listens). Runs in the system_controller: it must not
  /// block.
  std::function<void(const run_progress&)> on_progress;
  /// How long the controller waits for each service's answers; `run` is
  /// derived from the configuration (longest_run).
  benchmark::service_timeouts timeouts;
  /// Called once when every credit is back, before the exports: closes the
  /// HTTP connections (a run near the fd limit needs them for its files).
  std::function<void()> release_connections;
  /// Called once when the load starts (the timing manager is started).
  std::function<void()> client_self_check_start;
  /// Called once when the credits are complete: the client self-check's
  /// warnings and its measurements as a JSON object (unset = none).
  std::function<std::pair<std::vector<std::string>, std::string>()>
    client_self_check;
};

/// `cfg` must have passed config::finalize(). `run_id` names this run in
/// request ids and the export's benchmark_id; `input_config_json` is the
/// redacted configuration the exports embed.
[[nodiscard]] run_plan make_run_plan(const config::profile_config& cfg,
                                     std::string run_id,
                                     std::string input_config_json);

/// The longest the timing manager's run can legitimately take, plus a
/// margin: the bound for its start request. A duration run ends at duration
/// + grace; a counted one when every request ended, each within
/// `timeout_ms`, `concurrency` at a time (1 when unlimited), sent no
/// faster than the rate. Think times (turn delays, schedules from a file)
/// have no bound known here: they add a day.
[[nodiscard]] std::chrono::milliseconds longest_run(const proto::timing_config& t,
                                                    std::int64_t timeout_ms,
                                                    bool has_think_time);

/// run_plan::unreachable_timeout_ms from AIPERF_UNREACHABLE_TIMEOUT_MS's
/// value: a whole number of milliseconds (0: off); unset, empty or not such
/// a number: the default, 10 s.
[[nodiscard]] std::int64_t unreachable_timeout_ms(const char* env) noexcept;

/// A random RFC 4122 version 4 UUID.
[[nodiscard]] std::string make_uuid();

} // namespace aiperf::system_controller
