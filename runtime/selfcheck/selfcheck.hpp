// Client self-check: decides whether the benchmark client itself, not the
// server, limited a run. A slow client inflates TTFT and ITL silently (its
// own queueing is charged to the server), so every run measures two things
// about itself and warns when either is saturated:
//   - event-loop lag of the I/O thread (loop_lag_probe): how late a timer
//     armed for "now + interval" actually fired; every microsecond of it is
//     also a microsecond by which SSE read stamps can be late;
//   - CPU saturation: process CPU (user + sys) against wall time and the
//     cores this process may run on, and the busy fraction of the I/O thread
//     (one thread cannot use more than one core, whatever the core count).
// The verdict logic is pure (judge) so it is tested with injected numbers.
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
  double cores_available = 1; ///< cores this process may use (affinity, cgroup quota)
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
  double cpu_saturation = 0.90;     ///< of cores_available
  double io_thread_busy = 0.90;     ///< of one core
  std::uint64_t min_lag_samples = 10; ///< fewer: lag is not judged (too short a run)
  /// Lag is judged only while the client works: the process used at least
  /// this many cores, or its I/O thread this fraction of one. An idle loop
  /// (a run waiting on a slow server) sleeps in epoll; how late its timer
  /// wakes it is the host's scheduling (a shared VM's vCPU), not client load.
  double min_busy_cores = 0.10;
  /// Judged through lag_stats::fifth_largest_ns, so fixed at five.
  static constexpr std::uint64_t min_late_samples = 5;
};

/// What the self-check concluded, with the numbers that led to it.
struct verdict {
  bool client_limited = false;
  bool lag_limited = false;
  bool cpu_limited = false;
  bool io_thread_limited = false;
  /// The client was below thresholds::min_busy_cores: lag was not judged.
  bool idle = false;
  lag_stats lag;
  cpu_usage cpu;
  std::optional<double> io_thread_busy; ///< fraction of one core, when measured
  /// Empty when not client-limited, else a one-line warning such as
  /// "client-limited: I/O thread lag p99 3.2 ms, CPU 97% of 2 cores;
  /// results may include client overhead".
  std::string warning;
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
/// most lagging one) and ONE warning for the process. Each thread's own
/// warning quotes its own lag, so N threads over the line made N different
/// lines; the combined one says how many were over it ("client-limited: I/O
/// thread lag p99 7.09 ms (the worst of 4 of 8 I/O threads over the line),
/// CPU 24% of 2 cores; ..."). Pure; empty input gives an empty verdict.
[[nodiscard]] verdict combine(const std::vector<verdict>& threads);

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
