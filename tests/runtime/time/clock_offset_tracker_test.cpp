#include "runtime/time/clock_offset_tracker.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <random>

using aiperf::time::clock_offset_tracker;

namespace {

constexpr std::int64_t ms = 1'000'000;
constexpr std::int64_t us = 1'000;

// A simulated link between a controller and a worker whose clock reads
// `skew` ns more than the controller's (so the true clock_offset_ns is
// `skew`). Delays are drawn from [min, min + jitter] per direction.
struct sim_link {
  std::int64_t skew;
  std::int64_t forward_min;
  std::int64_t backward_min;
  std::int64_t jitter;
  std::mt19937_64 rng{42};
  std::int64_t controller_now = 1'000'000 * ms;

  std::int64_t delay(std::int64_t min) {
    return min + static_cast<std::int64_t>(rng() % (jitter + 1));
  }

  // A credit granted now, received by the worker after a forward delay.
  void credit(clock_offset_tracker& t) {
    controller_now += 3 * ms;
    auto granted = controller_now;
    auto recv = granted + delay(forward_min) + skew;
    ASSERT_TRUE(t.add_one_way(recv, granted));
  }

  void ping(clock_offset_tracker& t) {
    controller_now += 3 * ms;
    auto send_w = controller_now + skew;
    auto at_controller = controller_now + delay(forward_min);
    auto recv_w = at_controller + delay(backward_min) + skew;
    ASSERT_TRUE(t.add_ping_pong(send_w, at_controller, recv_w));
  }
};

void expect_within_half_min_rtt(const clock_offset_tracker& t,
                                std::int64_t skew) {
  auto offset = t.offset_ns();
  ASSERT_TRUE(offset.has_value());
  auto rtt = t.min_rtt_ns();
  ASSERT_TRUE(rtt.has_value());
  EXPECT_LE(std::llabs(*offset - skew), *rtt / 2)
    << "offset " << *offset << " skew " << skew << " min rtt " << *rtt;
}

} // namespace

TEST(clock_offset_tracker, no_samples_means_no_estimate) {
  clock_offset_tracker t;
  EXPECT_FALSE(t.offset_ns().has_value());
  EXPECT_EQ(t.offset_or_zero_ns(), 0);
  EXPECT_FALSE(t.min_rtt_ns().has_value());
  EXPECT_FALSE(t.min_one_way_delta_ns().has_value());
}

TEST(clock_offset_tracker, symmetric_delays_recover_known_skew) {
  for (std::int64_t skew : {std::int64_t{0}, std::int64_t{7'500 * ms}, std::int64_t{-123'456'789'012}}) {
    clock_offset_tracker t;
    sim_link l{skew, 200 * us, 200 * us, 300 * us};
    for (int i = 0; i < 5; ++i)
      l.ping(t);
    for (int i = 0; i < 100; ++i)
      l.credit(t);
    expect_within_half_min_rtt(t, skew);
  }
}

TEST(clock_offset_tracker, exact_when_delays_are_constant_and_symmetric) {
  clock_offset_tracker t;
  sim_link l{42 * ms, 250 * us, 250 * us, 0};
  l.ping(t);
  l.credit(t);
  EXPECT_EQ(t.offset_ns(), 42 * ms);
  EXPECT_EQ(t.min_rtt_ns(), 500 * us);
  EXPECT_EQ(t.to_controller_ns(1'000 * ms), 1'000 * ms - 42 * ms);
}

TEST(clock_offset_tracker, asymmetric_delays_stay_within_half_min_rtt) {
  // Forward 10% of the round trip, backward 90%, and the reverse.
  for (auto [fwd, back] : {std::pair{100 * us, 900 * us},
                           std::pair{900 * us, 100 * us}}) {
    clock_offset_tracker t;
    sim_link l{-3 * ms, fwd, back, 50 * us};
    for (int i = 0; i < 5; ++i)
      l.ping(t);
    for (int i = 0; i < 50; ++i)
      l.credit(t);
    expect_within_half_min_rtt(t, -3 * ms);
    // The error is the asymmetry: |fwd - rtt/2| = 400 us, not zero.
    EXPECT_NE(*t.offset_ns(), -3 * ms);
  }
}

TEST(clock_offset_tracker, min_filter_forgets_samples_older_than_the_window) {
  clock_offset_tracker t{false, 20};
  EXPECT_EQ(t.window(), 20u);
  ASSERT_TRUE(t.add_one_way(1'000, 0)); // delta 1000, the smallest
  for (int i = 0; i < 19; ++i)
    ASSERT_TRUE(t.add_one_way(5'000 + i, 0));
  EXPECT_EQ(t.min_one_way_delta_ns(), 1'000);
  ASSERT_TRUE(t.add_one_way(9'000, 0)); // 21st sample evicts the first
  EXPECT_EQ(t.min_one_way_delta_ns(), 5'000);
  EXPECT_EQ(t.one_way_samples(), 21u);
  // Keeps cycling correctly past several wraps.
  for (int i = 0; i < 45; ++i)
    ASSERT_TRUE(t.add_one_way(7'000 + i, 0));
  EXPECT_EQ(t.min_one_way_delta_ns(), 7'000 + 25);
}

TEST(clock_offset_tracker, queueing_spikes_do_not_move_the_estimate) {
  clock_offset_tracker t;
  sim_link l{10 * ms, 100 * us, 100 * us, 0};
  l.ping(t);
  l.credit(t);
  auto before = *t.offset_ns();
  // A burst of credits delayed by queueing: one-way deltas grow, min stays.
  for (int i = 0; i < 19; ++i)
    ASSERT_TRUE(t.add_one_way(l.controller_now + 10 * ms + 50 * ms,
                              l.controller_now));
  EXPECT_EQ(*t.offset_ns(), before);
}

TEST(clock_offset_tracker, local_mode_pins_offset_to_zero) {
  clock_offset_tracker t{true};
  EXPECT_TRUE(t.local());
  EXPECT_EQ(t.offset_ns(), 0);
  sim_link l{5 * ms, 100 * us, 100 * us, 10 * us};
  l.ping(t);
  l.credit(t);
  EXPECT_EQ(t.offset_ns(), 0);
  EXPECT_EQ(t.to_controller_ns(1234), 1234);
  // Samples are still recorded for diagnostics.
  EXPECT_EQ(t.rtt_samples(), 1u);
  EXPECT_EQ(t.one_way_samples(), 1u);
}

TEST(clock_offset_tracker, ping_pong_alone_gives_a_midpoint_estimate) {
  clock_offset_tracker t;
  sim_link l{2 * ms, 300 * us, 300 * us, 0};
  l.ping(t);
  EXPECT_EQ(t.offset_ns(), 2 * ms);
  // The ping with the smallest RTT wins.
  ASSERT_TRUE(t.add_ping_pong(0, 0, 10 * ms));
  EXPECT_EQ(t.min_rtt_ns(), 600 * us);
  EXPECT_EQ(t.offset_ns(), 2 * ms);
}

TEST(clock_offset_tracker, one_way_without_rtt_assumes_zero_delay) {
  clock_offset_tracker t;
  ASSERT_TRUE(t.add_one_way(1'500, 1'000));
  EXPECT_EQ(t.offset_ns(), 500);
}

TEST(clock_offset_tracker, rejects_impossible_and_overflowing_samples) {
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  constexpr auto min = std::numeric_limits<std::int64_t>::min();
  clock_offset_tracker t;
  EXPECT_FALSE(t.add_ping_pong(100, 50, 99)); // pong before ping
  EXPECT_FALSE(t.add_ping_pong(min, 0, max)); // RTT overflows
  EXPECT_FALSE(t.add_one_way(max, -1));
  EXPECT_FALSE(t.add_one_way(min, 1));
  EXPECT_EQ(t.rtt_samples(), 0u);
  EXPECT_EQ(t.one_way_samples(), 0u);
  EXPECT_FALSE(t.offset_ns().has_value());
}

TEST(clock_offset_tracker, zero_window_acts_as_one) {
  clock_offset_tracker t{false, 0};
  EXPECT_EQ(t.window(), 1u);
  ASSERT_TRUE(t.add_one_way(10, 0));
  ASSERT_TRUE(t.add_one_way(30, 0));
  EXPECT_EQ(t.min_one_way_delta_ns(), 30);
}
