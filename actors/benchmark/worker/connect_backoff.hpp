// The wait before a worker's next send after refused connections. Pure, so
// the schedule is unit-tested without clocks or sleeps.
#pragma once

#include <algorithm>
#include <cstdint>

namespace aiperf::worker {

/// First wait after a connection failure, and the most one wait can be.
constexpr std::int64_t connect_backoff_initial_ns = 10'000'000; // 10 ms
constexpr std::int64_t connect_backoff_max_ns = 1'000'000'000;  // 1 s

/// The wait before the next send after `failures` (>= 1) connection
/// failures in a row on one worker: 10 ms doubling per failure, capped at
/// 1 s, scaled by `jitter` into [d/2, d] ("equal jitter": every wait is at
/// least half the schedule's, so a dead endpoint costs a bounded number of
/// attempts per second, and workers do not retry in lockstep). `jitter` is
/// clamped to [0, 1]; 0 for no failure.
[[nodiscard]] constexpr std::int64_t
connect_backoff_ns(std::uint32_t failures, double jitter) noexcept {
  if (failures == 0)
    return 0;
  std::int64_t d = connect_backoff_initial_ns;
  for (std::uint32_t i = 1; i < failures && d < connect_backoff_max_ns; ++i)
    d *= 2;
  d = std::min(d, connect_backoff_max_ns);
  jitter = std::clamp(jitter, 0.0, 1.0);
  return d / 2 + static_cast<std::int64_t>(static_cast<double>(d / 2) * jitter);
}

} // namespace aiperf::worker
