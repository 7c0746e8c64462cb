#include "actors/benchmark/timing/fixed_schedule.hpp"

#include <algorithm>
#include <limits>

namespace aiperf::timing {

std::int64_t
fixed_schedule::follow_up_due(const dataset::turn& next,
                              std::int64_t prev_return_ns) const noexcept {
  if (next.timestamp_ms >= 0)
    return std::max(due_of(next.timestamp_ms), prev_return_ns);
  if (next.delay_ms >= 0)
    return prev_return_ns + next.delay_ms * 1'000'000;
  return prev_return_ns;
}

caf::expected<void> validate(const fixed_schedule_options& opts) {
  if (opts.start_offset_ms && *opts.start_offset_ms < 0)
    return make_error(errc::bad_option,
                      "fixed_schedule_start_offset: must be >= 0 ms; fix "
                      "--fixed-schedule-start-offset");
  if (opts.end_offset_ms && *opts.end_offset_ms < 0)
    return make_error(errc::bad_option,
                      "fixed_schedule_end_offset: must be >= 0 ms; fix "
                      "--fixed-schedule-end-offset");
  if (opts.start_offset_ms && opts.end_offset_ms
      && *opts.start_offset_ms > *opts.end_offset_ms)
    return make_error(errc::bad_option,
                      "fixed_schedule_end_offset: must be >= the start offset; "
                      "fix --fixed-schedule-start-offset/"
                      "--fixed-schedule-end-offset");
  if (opts.auto_offset && opts.start_offset_ms)
    return make_error(errc::bad_option,
                      "fixed_schedule_auto_offset: cannot be combined with "
                      "--fixed-schedule-start-offset; drop one of them");
  return caf::unit;
}

caf::expected<fixed_schedule>
make_fixed_schedule(const dataset::dataset& data, std::int64_t start_ns,
                    const fixed_schedule_options& opts) {
  if (auto valid = validate(opts); !valid)
    return std::move(valid.error());
  if (!data.has_timestamps)
    return make_error(errc::no_timestamps,
                      "fixed schedule: the dataset has no timestamps on its "
                      "first turns; use a trace input file or drop "
                      "--fixed-schedule");
  fixed_schedule out;
  out.start_ns = start_ns;
  const auto lo
      = opts.start_offset_ms.value_or(std::numeric_limits<std::int64_t>::min());
  const auto hi
      = opts.end_offset_ms.value_or(std::numeric_limits<std::int64_t>::max());
  std::vector<std::pair<std::int64_t, std::size_t>> kept; // (timestamp, conv)
  for (std::size_t c = 0; c < data.conversations.size(); ++c) {
    const auto& turns = data.conversations[c].turns;
    if (turns.empty())
      continue;
    const auto ts = turns.front().timestamp_ms;
    if (ts >= lo && ts <= hi)
      kept.emplace_back(ts, c);
  }
  if (kept.empty())
    return make_error(errc::empty_window,
                      "fixed schedule: no request has a timestamp inside the "
                      "start/end offsets; widen "
                      "--fixed-schedule-start-offset/-end-offset");
  std::stable_sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.first < b.first;
  });
  if (opts.auto_offset)
    out.zero_ms = kept.front().first;
  else
    out.zero_ms = opts.start_offset_ms.value_or(0);
  out.first_turns.reserve(kept.size());
  for (const auto& [ts, c] : kept)
    out.first_turns.push_back({out.due_of(ts), c, 0});
  return out;
}

} // namespace aiperf::timing
