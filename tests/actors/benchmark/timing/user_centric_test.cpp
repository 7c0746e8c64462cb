#include "actors/benchmark/timing/user_centric.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using namespace aiperf::timing;

namespace {

constexpr std::int64_t s = 1'000'000'000;

user_centric_options make(std::uint64_t users, double qps,
                          std::uint32_t turns) {
  user_centric_options o;
  o.num_users = users;
  o.qps = qps;
  o.session_turns = turns;
  return o;
}

} // namespace

// AIPerf's example: 15 users at 1 req/s → a 15 s gap per user.
TEST(user_centric_schedule, turn_gap_is_users_over_qps) {
  EXPECT_EQ(user_centric_schedule(make(15, 1.0, 20), 0).turn_gap_ns(), 15 * s);
  EXPECT_EQ(user_centric_schedule(make(15, 4.0, 20), 0).turn_gap_ns(),
            3'750'000'000);
  EXPECT_EQ(user_centric_schedule(make(15, 0.5, 20), 0).turn_gap_ns(), 30 * s);
}

TEST(user_centric_schedule, users_are_staggered_evenly_from_start) {
  const std::int64_t start = 7 * s;
  user_centric_schedule sched{make(4, 2.0, 3), start};
  ASSERT_EQ(sched.users().size(), 4u);
  for (std::size_t u = 0; u < 4; ++u)
    EXPECT_EQ(sched.users()[u].first_due_ns,
              start + static_cast<std::int64_t>(u) * s / 2);
}

// Verifies the virtual history: remaining turns spread over 1..turns so that
// session ends (and new users) are spread instead of simultaneous.
TEST(user_centric_schedule, virtual_history_spreads_remaining_turns) {
  user_centric_schedule sched{make(4, 1.0, 8), 0};
  std::vector<std::uint32_t> initial;
  for (const auto& u : sched.users())
    initial.push_back(u.initial_turns);
  EXPECT_EQ(initial, (std::vector<std::uint32_t>{8, 6, 4, 2}));

  user_centric_schedule many{make(15, 1.0, 20), 0};
  std::int64_t prev_end = -1;
  for (const auto& u : many.users()) {
    EXPECT_GE(u.initial_turns, 1u);
    EXPECT_LE(u.initial_turns, 20u);
    const auto end
        = u.first_due_ns + (u.initial_turns - 1) * many.turn_gap_ns();
    EXPECT_NE(end, prev_end); // no two first sessions end together
    prev_end = end;
  }
  EXPECT_EQ(many.users().front().initial_turns, 20u); // a fresh user
}

// Over one turn gap the whole population sends exactly num_users turns at
// evenly spaced times: the aggregate rate is qps.
TEST(user_centric_schedule, steady_aggregate_rate_equals_qps) {
  user_centric_schedule sched{make(10, 5.0, 4), 0};
  std::vector<std::int64_t> sends;
  for (const auto& u : sched.users()) {
    std::int64_t due = u.first_due_ns;
    for (int k = 0; k < 3; ++k) {
      sends.push_back(due);
      due = sched.next_due(due, due); // response came back at once
    }
  }
  std::sort(sends.begin(), sends.end());
  for (std::size_t i = 1; i < sends.size(); ++i)
    EXPECT_EQ(sends[i] - sends[i - 1], s / 5);
}

TEST(user_centric_schedule, slow_response_rebases_without_catch_up) {
  user_centric_schedule sched{make(2, 1.0, 3), 0};    // gap 2 s
  EXPECT_EQ(sched.next_due(0, 1 * s), 2 * s);         // in time: planned
  EXPECT_EQ(sched.next_due(0, 5 * s), 5 * s);         // late: at the return
  EXPECT_EQ(sched.next_due(5 * s, 5 * s + 1), 7 * s); // rebased from 5 s
}

TEST(user_centric_schedule, validate_names_the_option) {
  EXPECT_TRUE(validate(make(3, 1.0, 2)));
  auto message = [](const user_centric_options& o) {
    return aiperf::error_message(validate(o).error());
  };
  EXPECT_NE(message(make(0, 1.0, 2)).find("--num-users"), std::string::npos);
  EXPECT_NE(message(make(3, 0.0, 2)).find("--user-centric-rate"),
            std::string::npos);
  EXPECT_NE(message(make(3, 1.0, 1)).find("--session-turns-mean"),
            std::string::npos);
}
