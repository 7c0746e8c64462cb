// Client self-check: what the benchmark client measured about itself, and
// the two warnings that say when the client changed a number.
//
// Every run measures (and exports as `client_self_check`):
//   - event-loop lag of the I/O thread (loop_lag_probe): how late a timer
//     armed for "now + interval" actually fired;
//   - CPU: process CPU (user + sys) against wall time and the cores this
//     process may run on, and the busy fraction of the I/O thread.
// Those are not warned about: response times are stamped by the kernel when
// the bytes arrive (SO_TIMESTAMPNS), not when the loop gets to them, so a
// late loop changes a number only where it
//   - reads later than the server's next write: two server writes merge into
//     one read, their gap reads 0 and an inter-chunk sample is lost
//     (read_counts, merged_reads_warning);
//   - sends a scheduled request late in rate mode: the server sees another
//     arrival process than the one asked for (send_lag_warning).
// Both warnings are computed from counters, so they are tested with fed
// numbers, never with machine load. The verdict logic is pure as well.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::selfcheck {

/// Percentiles of how late the probe timer fired, in nanoseconds.
struct lag_stats {
  std::uint64_t samples = 0;
  double p50_ns = 0;
  double p99_ns = 0;
  double max_ns = 0;
  /// The fifth-largest sample (0 with fewer than five).
  double fifth_largest_ns = 0;
};

/// A point-in-time reading of CPU consumed so far (monotonic counters).
struct cpu_reading {
  std::int64_t wall_ns = 0;   ///< CLOCK_MONOTONIC
  std::int64_t user_ns = 0;   ///< process user CPU (all threads)
  std::int64_t system_ns = 0; ///< process system CPU (all threads)
};

/// CPU use over an interval, derived from two readings.
struct cpu_usage {
  std::int64_t wall_ns = 0;
  std::int64_t user_ns = 0;
  std::int64_t system_ns = 0;
  double cores_available
      = 1; ///< cores this process may use (affinity, cgroup quota)
  /// (user + sys) / wall: 1.0 means one core fully busy.
  [[nodiscard]] double cores_used() const noexcept;
  /// cores_used() / cores_available, in [0, ∞) (can exceed 1 by jitter).
  [[nodiscard]] double saturation() const noexcept;
};

/// Where the self-check draws the line. Defaults: a loop that is late by a
/// millisecond at p99 moves TTFT/ITL percentiles by a visible amount at the
/// 0.01 ms export precision; 90 % of the cores leaves no headroom for bursts.
/// The lag must also be late at least `min_late_samples` times: a short run
/// has a p99 made of its largest two or three samples, and one burst (64
/// streams ending in the same millisecond) is not a client that cannot keep
/// up.
struct thresholds {
  std::chrono::nanoseconds lag_p99 = std::chrono::milliseconds{1};
  double cpu_saturation = 0.90; ///< of cores_available
  double io_thread_busy = 0.90; ///< of one core
  std::uint64_t min_lag_samples
      = 10; ///< fewer: lag is not judged (too short a run)
  /// Lag is judged only while the client works: the process used at least
  /// this many cores, or its I/O thread this fraction of one. An idle loop
  /// (a run waiting on a slow server) sleeps in epoll; how late its timer
  /// wakes it is the host's scheduling (a shared VM's vCPU), not client load.
  double min_busy_cores = 0.10;
  /// Judged through lag_stats::fifth_largest_ns, so fixed at five.
  static constexpr std::uint64_t min_late_samples = 5;
};

/// What the self-check measured and which lines it was over. Exported in
/// `client_self_check` for diagnosis; no warning is made of it (see the
/// file comment).
struct verdict {
  /// Over a line: lag, CPU or I/O thread.
  bool client_limited = false;
  bool lag_limited = false;
  bool cpu_limited = false;
  bool io_thread_limited = false;
  /// The client was below thresholds::min_busy_cores: lag was not judged.
  bool idle = false;
  lag_stats lag;
  cpu_usage cpu;
  std::optional<double> io_thread_busy; ///< fraction of one core, when measured
  /// One line with every measured number, for logs ("client self-check:
  /// loop lag p50 0.02 ms p99 0.15 ms max 0.9 ms (1000 samples), CPU 35% of
  /// 2 cores, I/O thread 61% busy").
  std::string summary;
};

/// Judges `lag`, `cpu` and the optional I/O thread busy fraction against
/// `limits`. Pure: no clocks are read.
[[nodiscard]] verdict judge(const lag_stats& lag, const cpu_usage& cpu,
                            std::optional<double> io_thread_busy,
                            const thresholds& limits = {});

/// The lag line of AIPERF_SELF_CHECK_LAG_P99_US (`env`: its value, or null
/// when unset): a whole number of microseconds >= 0 (0 judges every loop
/// that works as lagging, which tests use); anything else keeps the default
/// thresholds::lag_p99 (1 ms).
[[nodiscard]] std::chrono::nanoseconds
lag_p99_from_env(const char* env) noexcept;

/// One verdict for a process of several I/O threads, from each thread's
/// judge(): the numbers of the most lagging thread over a line (else of the
/// most lagging one). Pure; empty input gives an empty verdict.
[[nodiscard]] verdict combine(const std::vector<verdict>& threads);

// -- the warnings -------------------------------------------------------------

/// The socket reads of a run's streamed responses that carried content
/// events. Each content event is stamped with the kernel receive time of the
/// read that completed it, so events of one read share a stamp and the gap
/// between them reads 0: that inter-chunk sample is lost (the server wrote
/// them apart, or together; the client cannot tell which).
struct read_counts {
  /// Reads that carried at least one content event.
  std::uint64_t reads = 0;
  /// Of those, the reads that carried two or more.
  std::uint64_t merged_reads = 0;
  /// Inter-chunk gaps that read 0 (every event after the first of a read).
  std::uint64_t lost_gaps = 0;

  /// Counts one response's inter-chunk gaps (ns, one per pair of
  /// consecutive content events; empty for fewer than two events, which
  /// have no gap to lose and are not counted).
  void add_gaps(const std::vector<std::int64_t>& gaps) noexcept;
  void merge(const read_counts& other) noexcept;
  /// merged_reads / reads (0 without reads).
  [[nodiscard]] double merged_share() const noexcept;
};

/// Above this share of merged reads the run warns. The lowest percentile
/// the exports give is p1: with at most 1 % of the reads merged, at most
/// about 1 % of the inter-chunk samples are lost zeros, which can move p1
/// and nothing above it; past it p1, then p5, ... read a lost 0.
inline constexpr double merged_reads_warning_share = 0.01;

/// The warning for `counts` ("" when the merged share is at most `share`):
/// "3.2% of the SSE reads (320 of 10000) carried two or more events: 410
/// inter-chunk gaps read 0 ms and are lost from inter_chunk_latency ...".
[[nodiscard]] std::string merged_reads_warning(const read_counts& counts,
                                               double share
                                               = merged_reads_warning_share);

/// Above this fraction of the scheduled inter-arrival time, the p99 send
/// lag earns a warning. A send late by f of the gap shortens the gap to the
/// next send by as much: at a quarter, the server sees, at the p99, two
/// arrivals a third faster than the rate asked for (1 / (1 - 0.25)); below
/// it the lag stays within a quarter of the gap, well inside the spread of
/// Poisson arrivals (their gaps' standard deviation is the mean). At
/// 47 requests/s (21 ms apart) that line is 5.3 ms of lag.
inline constexpr double send_lag_warning_fraction = 0.25;

/// Fewer scheduled sends than this are not judged: the p99 of a shorter run
/// is its largest one or two lags.
inline constexpr std::uint64_t send_lag_min_sends = 100;

/// The warning for a rate-mode run of `sends` scheduled sends at
/// `request_rate` (requests/s) whose send lag p99 was `send_lag_p99_ns`
/// ("" when the lag is at most `fraction` of 1 / request_rate, or too few
/// sends): "send lag p99 6.20 ms is 29% of the scheduled inter-arrival time
/// (21.3 ms at --request-rate 47) ...".
[[nodiscard]] std::string
send_lag_warning(std::uint64_t sends, double send_lag_p99_ns,
                 double request_rate,
                 double fraction = send_lag_warning_fraction);

/// Returns the process CPU counters now (getrusage(RUSAGE_SELF)) and the
/// monotonic clock.
[[nodiscard]] cpu_reading read_process_cpu() noexcept;

/// Returns the CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), ns.
[[nodiscard]] std::int64_t thread_cpu_ns() noexcept;

/// Returns `to - from` as a usage over `cores_available` cores. A reading
/// that goes backwards (wrong order) yields zeros, not negative CPU.
[[nodiscard]] cpu_usage usage_between(const cpu_reading& from,
                                      const cpu_reading& to,
                                      double cores_available) noexcept;

/// Parses a cgroup v2 `cpu.max` line ("200000 100000" -> 2.0 cores,
/// "max 100000" -> nullopt: no quota). Returns nullopt for malformed text.
[[nodiscard]] std::optional<double> parse_cgroup_cpu_max(std::string_view text);

/// Cores this process may run on: the CPU affinity mask (taskset) capped by
/// the cgroup v2 quota of /sys/fs/cgroup/cpu.max when one is set. At least 1.
[[nodiscard]] double available_cores();

} // namespace aiperf::selfcheck
