// Absolute-time request-rate schedule (no clock inside: the caller passes
// `now`, so it is testable with synthetic times).
//
// Targets advance by the generator's gaps from the start time:
// target[k+1] = target[k] + gap. When the caller polls at `now`:
// - now < target: nothing is due yet (sleep until next_due()).
// - now − target ≤ catch-up window (10 ms, AIPerf PR #1185): send now and
//   record lag = now − target. Several targets inside the window each give a
//   send on successive polls, so short stalls are made up exactly.
// - later than the window: one send goes out now, every other target ≤ now
//   is COUNTED as skipped (never sent: no burst catch-up), and the schedule
//   restarts from now: the next target is now + gap.
#pragma once

#include "actors/benchmark/timing/intervals.hpp"

#include <cstdint>

namespace aiperf::timing {

/// AIPerf's bounded catch-up window.
inline constexpr std::int64_t default_catch_up_window_ns = 10'000'000;

/// What rate_schedule::poll decided.
struct rate_decision {
  /// True: send one request now.
  bool send = false;
  /// now − the target this send stands for (≥ 0); 0 when !send.
  std::int64_t lag_ns = 0;
  /// Targets dropped by this poll (a reset); they are never sent.
  std::uint64_t skipped = 0;
};

/// Not thread-safe: owned by the timing manager.
class rate_schedule {
public:
  /// The first target is `start_ns` (the first request goes out at once).
  rate_schedule(interval_generator gen, std::int64_t start_ns,
                std::int64_t catch_up_window_ns = default_catch_up_window_ns);

  /// Absolute time (ns) of the next target.
  [[nodiscard]] std::int64_t next_due() const noexcept;

  /// Decides what to do at `now_ns`; see the file comment.
  [[nodiscard]] rate_decision poll(std::int64_t now_ns);

  /// Drops the next target without sending (e.g. no session slot was free:
  /// AIPerf skips that tick) and counts it as skipped.
  void skip();

  /// Total targets skipped so far (resets and skip()).
  [[nodiscard]] std::uint64_t skipped_sends() const noexcept {
    return skipped_;
  }

  /// Sends decided so far.
  [[nodiscard]] std::uint64_t sends() const noexcept { return sends_; }

private:
  interval_generator gen_;
  double target_ns_;
  std::int64_t window_ns_;
  std::uint64_t skipped_ = 0;
  std::uint64_t sends_ = 0;
};

} // namespace aiperf::timing
