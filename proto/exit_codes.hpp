// The exit codes of every aiperf-node command that runs a benchmark
// (`profile`, the `service` pods, later `kube profile`, which exits with
// the code of the run it followed). docs/profile.md has the table.
#pragma once

namespace aiperf::proto {

enum exit_code : int {
  /// The run completed and every export was written.
  exit_ok = 0,
  /// A bug or an unexpected failure (a silent service, a failed export).
  exit_internal = 1,
  /// Bad usage or configuration; nothing was started.
  exit_config = 2,
  /// The endpoint did not accept a connection before the run, or refused
  /// every one for AIPERF_UNREACHABLE_TIMEOUT_MS during it (the results so
  /// far are then exported).
  exit_unreachable = 3,
  /// More requests failed than --failed-request-threshold allows; the
  /// results so far are exported.
  exit_failed_threshold = 4,
  /// Completed degraded: results exported, but pods were lost within
  /// AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT (or a RAW set is partial).
  exit_degraded = 5,
  /// Aborted: more pods were lost than
  /// AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT allows; what was measured
  /// is exported, marked was_cancelled.
  exit_pods_lost = 6,
  /// Hung up (SIGHUP: the terminal closed); exports marked was_cancelled.
  exit_hangup = 129,
  /// Interrupted by SIGINT (Ctrl+C); exports marked was_cancelled.
  exit_interrupted = 130,
  /// Terminated by SIGTERM; exports marked was_cancelled.
  exit_terminated = 143,
};

/// The exit code of a run stopped by signal `signo`: 128 + signo for
/// SIGHUP (129) and SIGTERM (143), else 130.
[[nodiscard]] constexpr int exit_code_of_signal(int signo) noexcept {
  return signo == 15  ? exit_terminated
         : signo == 1 ? exit_hangup
                      : exit_interrupted;
}

} // namespace aiperf::proto
