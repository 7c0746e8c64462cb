// Trace replay (`--fixed-schedule`): first turns fire at their timestamps,
// later turns of a session follow the previous turn's return.
#pragma once

#include "actors/benchmark/dataset/dataset.hpp"
#include "actors/benchmark/timing/errc.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace aiperf::timing {

/// `--fixed-schedule-auto-offset`, `--fixed-schedule-start-offset`,
/// `--fixed-schedule-end-offset` (ms, trace time, inclusive bounds).
struct fixed_schedule_options {
  /// Zero = the earliest kept first-turn timestamp (replay starts at once).
  bool auto_offset = false;
  /// Keep first turns with timestamp ≥ this; also the zero point unless
  /// auto_offset. Unset: keep all, zero = 0 (absolute trace time).
  std::optional<std::int64_t> start_offset_ms;
  /// Keep first turns with timestamp ≤ this.
  std::optional<std::int64_t> end_offset_ms;
};

/// One session start: when, and which conversation (turn 0).
struct scheduled_turn {
  std::int64_t due_ns = 0;
  std::size_t conversation = 0;
  std::size_t turn = 0;

  friend bool operator==(const scheduled_turn&, const scheduled_turn&)
      = default;
};

/// First turns of a replay plus the rule for follow-up turns.
struct fixed_schedule {
  /// Sorted by due_ns; ties keep dataset order.
  std::vector<scheduled_turn> first_turns;
  std::int64_t start_ns = 0;
  /// Trace time (ms) that maps to start_ns.
  std::int64_t zero_ms = 0;

  /// Maps a trace timestamp to the absolute due time.
  [[nodiscard]] std::int64_t due_of(std::int64_t timestamp_ms) const noexcept {
    return start_ns + (timestamp_ms - zero_ms) * 1'000'000;
  }

  /// When turn `next` (not the first) may go out, given that the previous
  /// turn of its session returned at `prev_return_ns`: at its own timestamp
  /// if it has one (never before the return), else `delay_ms` after the
  /// return, else at the return.
  [[nodiscard]] std::int64_t
  follow_up_due(const dataset::turn& next,
                std::int64_t prev_return_ns) const noexcept;
};

/// Returns bad_option naming the option and the fix when `opts` is
/// unusable.
[[nodiscard]] caf::expected<void> validate(const fixed_schedule_options& opts);

/// Builds the replay of `data` starting at `start_ns`. Errors (with a fix):
/// bad_option (see validate), no_timestamps when the dataset has none,
/// empty_window when the offsets keep nothing.
[[nodiscard]] caf::expected<fixed_schedule>
make_fixed_schedule(const dataset::dataset& data, std::int64_t start_ns,
                    const fixed_schedule_options& opts);

} // namespace aiperf::timing
