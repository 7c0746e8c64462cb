#include "actors/benchmark/timing/rate_schedule.hpp"

#include <gtest/gtest.h>

using namespace aiperf::timing;

namespace {

constexpr std::int64_t ms = 1'000'000;

rate_schedule constant_schedule(double rate, std::int64_t start) {
  interval_options o;
  o.pattern = arrival_pattern::constant;
  o.rate = rate;
  return rate_schedule{interval_generator{o}, start};
}

} // namespace

TEST(rate_schedule, first_send_is_due_at_start) {
  auto s = constant_schedule(100, 5 * ms);
  EXPECT_EQ(s.next_due(), 5 * ms);
  EXPECT_FALSE(s.poll(5 * ms - 1).send);
  auto d = s.poll(5 * ms);
  EXPECT_TRUE(d.send);
  EXPECT_EQ(d.lag_ns, 0);
  EXPECT_EQ(s.next_due(), 15 * ms);
}

TEST(rate_schedule, on_time_polls_follow_the_absolute_schedule) {
  auto s = constant_schedule(1000, 0); // 1 ms gaps
  for (int k = 0; k < 100; ++k) {
    const auto due = s.next_due();
    EXPECT_EQ(due, k * ms);
    // Sending 0.3 ms late does not shift later targets (absolute schedule).
    auto d = s.poll(due + 300'000);
    ASSERT_TRUE(d.send);
    EXPECT_EQ(d.lag_ns, 300'000);
  }
  EXPECT_EQ(s.sends(), 100u);
  EXPECT_EQ(s.skipped_sends(), 0u);
}

// Verifies the bounded catch-up: a stall shorter than 10 ms is made up by
// sending every missed target, each with its lag recorded.
TEST(rate_schedule, catches_up_within_the_window) {
  auto s = constant_schedule(1000, 0);
  ASSERT_TRUE(s.poll(0).send);
  const std::int64_t now = 5 * ms; // targets 1..5 ms passed
  std::vector<std::int64_t> lags;
  for (auto d = s.poll(now); d.send; d = s.poll(now))
    lags.push_back(d.lag_ns);
  EXPECT_EQ(lags,
            (std::vector<std::int64_t>{4 * ms, 3 * ms, 2 * ms, 1 * ms, 0}));
  EXPECT_EQ(s.skipped_sends(), 0u);
  EXPECT_EQ(s.next_due(), 6 * ms);
}

TEST(rate_schedule, exactly_the_window_still_catches_up) {
  auto s = constant_schedule(10, 0); // 100 ms gaps
  auto d = s.poll(10 * ms);
  EXPECT_TRUE(d.send);
  EXPECT_EQ(d.lag_ns, 10 * ms);
  EXPECT_EQ(d.skipped, 0u);
  EXPECT_EQ(s.next_due(), 100 * ms);
}

// Verifies the reset: far behind, one send goes out now, the other missed
// targets are counted (not burst), and the schedule restarts from now.
TEST(rate_schedule, resets_to_now_and_counts_skipped_sends_when_far_behind) {
  auto s = constant_schedule(1000, 0);
  ASSERT_TRUE(s.poll(0).send);
  const std::int64_t now = 50 * ms + 400'000; // targets 1..50 ms passed
  auto d = s.poll(now);
  ASSERT_TRUE(d.send);
  EXPECT_EQ(d.skipped, 49u);    // 50 targets passed, 1 sent
  EXPECT_EQ(d.lag_ns, 400'000); // against the latest passed target
  EXPECT_EQ(s.skipped_sends(), 49u);
  EXPECT_FALSE(s.poll(now).send); // no burst
  EXPECT_EQ(s.next_due(), now + ms);
  EXPECT_TRUE(s.poll(now + ms).send);
  EXPECT_EQ(s.sends(), 3u);
}

TEST(rate_schedule, skip_drops_one_target_and_counts_it) {
  auto s = constant_schedule(100, 0);
  s.skip();
  EXPECT_EQ(s.skipped_sends(), 1u);
  EXPECT_EQ(s.next_due(), 10 * ms);
}

// Over a long synthetic run with on-time polling, the achieved count equals
// the target rate exactly (poisson, seeded).
TEST(rate_schedule, poisson_schedule_delivers_the_rate_when_polled_on_time) {
  interval_options o;
  o.pattern = arrival_pattern::poisson;
  o.rate = 5000;
  o.seed = 4;
  rate_schedule s{interval_generator{o}, 0};
  std::int64_t now = 0;
  const std::int64_t end = 20'000 * ms; // 20 s of synthetic time
  while (true) {
    now = s.next_due();
    if (now > end)
      break;
    ASSERT_TRUE(s.poll(now).send);
  }
  EXPECT_NEAR(static_cast<double>(s.sends()), 100'000, 1'500); // sd ≈ 316
  EXPECT_EQ(s.skipped_sends(), 0u);
}
