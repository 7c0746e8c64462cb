#include "actors/benchmark/timing/fixed_schedule.hpp"

#include <gtest/gtest.h>

using namespace aiperf;
using namespace aiperf::timing;

namespace {

constexpr std::int64_t ms = 1'000'000;
constexpr std::int64_t start = 1'000 * ms;

dataset::dataset trace(std::vector<std::int64_t> first_timestamps) {
  dataset::dataset d;
  for (std::size_t i = 0; i < first_timestamps.size(); ++i) {
    dataset::conversation c;
    c.session_id = "s";
    c.session_id += std::to_string(i);
    c.turns.push_back({"x", 1, -1, first_timestamps[i], -1});
    d.conversations.push_back(std::move(c));
  }
  d.has_timestamps = true;
  return d;
}

const fixed_schedule& ok(const caf::expected<fixed_schedule>& r) {
  static const fixed_schedule none;
  if (!r) {
    ADD_FAILURE() << error_message(r.error());
    return none;
  }
  return *r;
}

} // namespace

TEST(fixed_schedule, first_turns_at_absolute_trace_time_sorted) {
  const auto r = make_fixed_schedule(trace({300, 100, 100, 0}), start, {});
  const auto& s = ok(r);
  EXPECT_EQ(s.first_turns,
            (std::vector<scheduled_turn>{{start, 3, 0},
                                         {start + 100 * ms, 1, 0},
                                         {start + 100 * ms, 2, 0},
                                         {start + 300 * ms, 0, 0}}));
}

TEST(fixed_schedule, auto_offset_starts_at_the_first_timestamp) {
  fixed_schedule_options o;
  o.auto_offset = true;
  const auto r = make_fixed_schedule(trace({5'000, 5'250}), start, o);
  const auto& s = ok(r);
  ASSERT_EQ(s.first_turns.size(), 2u);
  EXPECT_EQ(s.first_turns[0].due_ns, start);
  EXPECT_EQ(s.first_turns[1].due_ns, start + 250 * ms);
  EXPECT_EQ(s.zero_ms, 5'000);
}

TEST(fixed_schedule, start_and_end_offsets_filter_inclusively) {
  fixed_schedule_options o;
  o.start_offset_ms = 100;
  o.end_offset_ms = 300;
  const auto r = make_fixed_schedule(trace({50, 100, 200, 300, 301}), start, o);
  const auto& s = ok(r);
  ASSERT_EQ(s.first_turns.size(), 3u);
  EXPECT_EQ(s.first_turns[0], (scheduled_turn{start, 1, 0})); // zero = 100
  EXPECT_EQ(s.first_turns[2], (scheduled_turn{start + 200 * ms, 3, 0}));
}

TEST(fixed_schedule, follow_up_turns_use_timestamp_delay_or_return) {
  const auto r = make_fixed_schedule(trace({0}), start, {});
  const auto& s = ok(r);
  const std::int64_t returned = start + 40 * ms;
  dataset::turn at_ts{"x", 1, -1, 100, -1};
  EXPECT_EQ(s.follow_up_due(at_ts, returned), start + 100 * ms);
  dataset::turn late_ts{"x", 1, -1, 10, -1}; // its time already passed
  EXPECT_EQ(s.follow_up_due(late_ts, returned), returned);
  dataset::turn delayed{"x", 1, -1, -1, 25};
  EXPECT_EQ(s.follow_up_due(delayed, returned), returned + 25 * ms);
  dataset::turn plain{"x", 1, -1, -1, -1};
  EXPECT_EQ(s.follow_up_due(plain, returned), returned);
}

TEST(fixed_schedule, errors_name_the_fix) {
  auto no_ts = trace({1});
  no_ts.has_timestamps = false;
  auto r = make_fixed_schedule(no_ts, start, {});
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), errc::no_timestamps));
  EXPECT_NE(error_message(r.error()).find("--fixed-schedule"),
            std::string::npos);

  fixed_schedule_options o;
  o.end_offset_ms = 10;
  r = make_fixed_schedule(trace({50, 60}), start, o);
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), errc::empty_window));
  EXPECT_NE(error_message(r.error()).find("offset"), std::string::npos);

  o = {};
  o.auto_offset = true;
  o.start_offset_ms = 5;
  EXPECT_FALSE(validate(o));
  o = {};
  o.start_offset_ms = 10;
  o.end_offset_ms = 5;
  EXPECT_FALSE(validate(o));
  EXPECT_TRUE(is_error(validate(o).error(), errc::bad_option));
}
