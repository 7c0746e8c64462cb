#include "actors/benchmark/timing/cancellation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

using namespace aiperf::timing;

namespace {

constexpr std::uint8_t profiling = 1;
constexpr std::uint8_t warmup = 0;

TEST(request_cancellation, share_zero_never_and_one_always_cancels) {
  for (std::uint32_t s = 0; s < 1000; ++s) {
    EXPECT_FALSE(should_cancel(0.0, 42, profiling, s, 0));
    EXPECT_TRUE(should_cancel(1.0, 42, profiling, s, 0));
  }
}

// The draw depends only on its inputs: any worker, any order, same answer.
TEST(request_cancellation, selection_is_a_function_of_seed_and_place) {
  for (std::uint32_t s = 0; s < 100; ++s)
    for (std::uint32_t t = 0; t < 4; ++t)
      EXPECT_EQ(should_cancel(0.3, 7, profiling, s, t),
                should_cancel(0.3, 7, profiling, s, t));
  // Pinned values: a change of the hash changes which requests a seed
  // cancels, which users comparing runs would see.
  EXPECT_EQ(mix64(0), 0xe220a8397b1dcdafULL);
  static_assert(cancellation_draw(1, profiling, 0, 0)
                == cancellation_draw(1, profiling, 0, 0));
}

TEST(request_cancellation, seeds_phases_and_turns_draw_apart) {
  int seed_diff = 0;
  int phase_diff = 0;
  int turn_diff = 0;
  for (std::uint32_t s = 0; s < 1000; ++s) {
    seed_diff += should_cancel(0.5, 1, profiling, s, 0)
                 != should_cancel(0.5, 2, profiling, s, 0);
    phase_diff += should_cancel(0.5, 1, profiling, s, 0)
                  != should_cancel(0.5, 1, warmup, s, 0);
    turn_diff += should_cancel(0.5, 1, profiling, s, 0)
                 != should_cancel(0.5, 1, profiling, s, 1);
  }
  // Independent halves differ on ~500 of 1000 (σ ≈ 16).
  for (int d : {seed_diff, phase_diff, turn_diff}) {
    EXPECT_GT(d, 400);
    EXPECT_LT(d, 600);
  }
}

// The share cancelled matches the rate: 100k draws, 5σ bounds (the draws
// are fixed by the seed, so this never flakes).
TEST(request_cancellation, share_matches_the_rate) {
  for (double share : {0.01, 0.25, 0.5, 0.9}) {
    constexpr int n = 100'000;
    int hits = 0;
    for (std::uint32_t s = 0; s < n; ++s)
      hits += should_cancel(share, 12345, profiling, s, 0);
    const double sigma = std::sqrt(n * share * (1 - share));
    EXPECT_NEAR(hits, n * share, 5 * sigma) << "share " << share;
  }
}

TEST(request_cancellation, draws_are_in_the_unit_interval) {
  for (std::uint32_t s = 0; s < 10'000; ++s) {
    auto d = cancellation_draw(99, profiling, s, s % 3);
    EXPECT_GE(d, 0.0);
    EXPECT_LT(d, 1.0);
  }
}

} // namespace
