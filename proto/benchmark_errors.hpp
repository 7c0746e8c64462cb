// The errors the benchmark's actors answer requests with, and how long a
// requester waits for each kind of answer.
#pragma once

#include "proto/error.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace aiperf::benchmark {

enum class errc : std::uint8_t {
  /// A service did not answer a request within its timeout; the message
  /// names the service, the request and the timeout.
  silent_service = 1,
  /// A request arrived in a state that cannot take it (start before
  /// configure, configure while running, a controller request at a pod).
  bad_request,
  /// The run's configuration or input cannot be used (exit code 2).
  invalid_config,
  /// An export or a RAW part could not be written.
  export_failed,
  /// A pod or worker failed or was lost.
  pod_failed,
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::benchmark

AIPERF_ERROR_ENUM(aiperf::benchmark::errc, "benchmark")

namespace aiperf::benchmark {

/// How long a requester waits for each kind of answer. No request between
/// actors waits forever: when one of these passes, the requester fails the
/// run with `silent_service` naming who did not answer.
struct service_timeouts {
  /// The dataset_manager builds the dataset and writes inputs.json.
  std::chrono::milliseconds dataset{std::chrono::minutes{10}};
  /// Every worker and record processor registered (pods scheduled and up).
  std::chrono::milliseconds registration{std::chrono::minutes{10}};
  /// An answer from a service's state: configure, lost credits, handles.
  std::chrono::milliseconds control{std::chrono::seconds{30}};
  /// Record processors close their RAW parts; pods upload them.
  std::chrono::milliseconds finalize{std::chrono::minutes{10}};
  /// The records_manager aggregates and writes every export.
  std::chrono::milliseconds exports{std::chrono::minutes{30}};
  /// The timing_manager's profiling run, from start to the last credit:
  /// the run's own bound plus a margin (make_run_plan derives it).
  std::chrono::milliseconds run{std::chrono::hours{24}};

  /// Every step one after the other: the bound for waiting on a whole run.
  [[nodiscard]] std::chrono::milliseconds whole_run() const noexcept {
    return dataset + registration + 2 * control + run + finalize + exports;
  }
};

/// The error of a request to `service` that timed out after `after`:
/// "<service> did not answer <what> within <N> s".
[[nodiscard]] caf::error silent_service(std::string_view service, std::string_view what,
                                        std::chrono::milliseconds after);

/// `err` itself, or silent_service(...) when `err` is CAF's request timeout.
[[nodiscard]] caf::error name_timeout(caf::error err, std::string_view service,
                                      std::string_view what, std::chrono::milliseconds after);

} // namespace aiperf::benchmark
