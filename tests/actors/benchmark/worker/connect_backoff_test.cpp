// The wait schedule after refused connections: pure, no clocks.
#include "actors/benchmark/worker/connect_backoff.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace {

using aiperf::worker::connect_backoff_initial_ns;
using aiperf::worker::connect_backoff_max_ns;
using aiperf::worker::connect_backoff_ns;

constexpr std::int64_t ms = 1'000'000;

TEST(connect_backoff, no_failure_no_wait) {
  EXPECT_EQ(connect_backoff_ns(0, 0.0), 0);
  EXPECT_EQ(connect_backoff_ns(0, 1.0), 0);
}

TEST(connect_backoff, doubles_from_10_ms_up_to_1_s) {
  // Full jitter (1.0) is the schedule itself.
  std::int64_t expected[] = {10, 20, 40, 80, 160, 320, 640, 1000, 1000};
  for (std::uint32_t n = 1; n <= 9; ++n)
    EXPECT_EQ(connect_backoff_ns(n, 1.0), expected[n - 1] * ms) << n;
  EXPECT_EQ(connect_backoff_ns(64, 1.0), connect_backoff_max_ns);
  EXPECT_EQ(connect_backoff_ns(UINT32_MAX, 1.0), connect_backoff_max_ns);
}

TEST(connect_backoff, jitter_keeps_at_least_half) {
  for (std::uint32_t n = 1; n <= 12; ++n) {
    auto full = connect_backoff_ns(n, 1.0);
    EXPECT_EQ(connect_backoff_ns(n, 0.0), full / 2) << n;
    auto mid = connect_backoff_ns(n, 0.5);
    EXPECT_GE(mid, full / 2) << n;
    EXPECT_LE(mid, full) << n;
    // Out-of-range jitter is clamped.
    EXPECT_EQ(connect_backoff_ns(n, -3.0), full / 2) << n;
    EXPECT_EQ(connect_backoff_ns(n, 7.0), full) << n;
  }
}

TEST(connect_backoff, a_dead_endpoint_costs_few_attempts) {
  // The least total wait of the first k attempts of one worker (every
  // jitter at its minimum): within 10 s, 26 attempts.
  std::int64_t waited = 0;
  std::uint32_t attempts = 0;
  while (waited < 10'000 * ms) {
    ++attempts;
    waited += connect_backoff_ns(attempts, 0.0);
  }
  EXPECT_EQ(attempts, 26u); // 7 doubling waits (635 ms), then 500 ms each
  EXPECT_EQ(connect_backoff_initial_ns, 10 * ms);
}

} // namespace
