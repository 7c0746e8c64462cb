// Estimates how far a worker process's clock is from the controller's, so
// quantities that span processes (schedule lag, credit drop latency,
// benchmark duration) can be expressed on one clock.
//
// Contract (same sign everywhere, stamped on records as clock_offset_ns):
//   controller_time = worker_time - clock_offset_ns
//
// Inputs:
// - One-way samples: every credit carries its grant time (controller clock)
//   and the worker stamps its arrival (worker clock). Their difference is
//   offset + forward delay; the minimum over the last `window` samples
//   approaches offset + the smallest delay, and a min filter is immune to the
//   queueing spikes that would drag a mean.
// - Round trips: TimePing/TimePong at start. The worker stamps the ping's
//   send and the pong's arrival on its own clock, so the RTT needs no offset.
//   Half the minimum RTT is the forward delay if the path is symmetric.
// Estimate: min one-way delta - min_rtt/2. If the real forward delay d lies
// anywhere in [0, min_rtt], the error |d - min_rtt/2| is at most min_rtt/2.
// Before any credit arrived, the best ping/pong (NTP-style midpoint) is used.
//
// Per-request latencies are measured on one clock and are never corrected.
// A worker on the controller's host (including one-host --worker-pods)
// shares its monotonic clock: `local` pins the offset to 0 so noise from
// the estimate never leaks into local runs.
//
// Not thread-safe; each worker owns one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace aiperf::time {

/// Min-filtered one-way clock offset estimator (see file comment).
class clock_offset_tracker {
public:
  /// Number of recent one-way samples the min filter looks at.
  static constexpr std::size_t default_window = 20;

  /// `local` forces the offset to 0 (worker shares the controller's clock).
  /// A `window` of 0 is treated as 1.
  explicit clock_offset_tracker(bool local = false,
                                std::size_t window = default_window);

  /// Records a credit granted at `controller_granted_ns` (controller clock)
  /// that arrived at `worker_recv_ns` (worker clock). Returns false (and
  /// records nothing) if the difference overflows int64.
  bool add_one_way(std::int64_t worker_recv_ns,
                   std::int64_t controller_granted_ns);

  /// Records a TimePing sent at `worker_send_ns`, answered by a TimePong
  /// stamped `controller_ns` by the controller and received at
  /// `worker_recv_ns`. Returns false (and records nothing) if the pong
  /// arrived before the ping left or the arithmetic overflows.
  bool add_ping_pong(std::int64_t worker_send_ns, std::int64_t controller_ns,
                     std::int64_t worker_recv_ns);

  /// Returns the estimated clock_offset_ns: 0 in local mode; otherwise
  /// std::nullopt until a one-way or ping/pong sample was recorded.
  [[nodiscard]] std::optional<std::int64_t> offset_ns() const;

  /// Returns offset_ns(), or 0 while there is no estimate yet.
  [[nodiscard]] std::int64_t offset_or_zero_ns() const {
    return offset_ns().value_or(0);
  }

  /// Maps a worker timestamp to the controller clock (contract above).
  [[nodiscard]] std::int64_t to_controller_ns(std::int64_t worker_ns) const {
    return worker_ns - offset_or_zero_ns();
  }

  /// Returns the smallest RTT seen, if any ping/pong was recorded.
  [[nodiscard]] std::optional<std::int64_t> min_rtt_ns() const;

  /// Returns the smallest one-way delta in the current window, if any.
  [[nodiscard]] std::optional<std::int64_t> min_one_way_delta_ns() const;

  /// Returns whether the offset is pinned to 0.
  [[nodiscard]] bool local() const noexcept { return local_; }

  /// Returns the window size of the min filter.
  [[nodiscard]] std::size_t window() const noexcept { return window_; }

  /// Returns how many one-way samples were recorded in total.
  [[nodiscard]] std::uint64_t one_way_samples() const noexcept {
    return one_way_count_;
  }

  /// Returns how many ping/pong samples were recorded in total.
  [[nodiscard]] std::uint64_t rtt_samples() const noexcept {
    return rtt_count_;
  }

private:
  bool local_;
  std::size_t window_;
  // Ring buffer of the last `window_` one-way deltas.
  std::vector<std::int64_t> deltas_;
  std::size_t next_ = 0;
  std::uint64_t one_way_count_ = 0;
  std::uint64_t rtt_count_ = 0;
  std::int64_t min_rtt_ = 0;
  // NTP-style offset of the ping/pong with the smallest RTT.
  std::int64_t best_ping_offset_ = 0;
};

} // namespace aiperf::time
