#include "runtime/stats/histogram.hpp"
#include "runtime/stats/summary.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace aiperf;

namespace {

// Values from ~1 ns to hours: log-uniform over 13 decades.
std::vector<double> wide_sample(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> exp10(0.0, 13.0);
  std::vector<double> v(n);
  for (auto& x : v)
    x = std::pow(10.0, exp10(rng));
  return v;
}

} // namespace

// Verifies the documented ≤ 0.1 % bound against exact numpy-style
// percentiles on random data spanning ns to hours.
TEST(log_linear_histogram, percentiles_within_error_bound) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    auto v = wide_sample(200'000, seed);
    stats::log_linear_histogram h;
    for (auto x : v)
      h.record(x);
    std::sort(v.begin(), v.end());
    for (double q : {0.0, 1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0,
                     99.9, 100.0}) {
      auto exact = stats::percentile_sorted(v, q);
      auto approx = h.percentile(q);
      EXPECT_LE(std::abs(approx - exact) / exact, 0.001) << "q=" << q;
      EXPECT_LE(std::abs(approx - exact) / exact,
                stats::log_linear_histogram::max_relative_error * 1.0001)
          << "q=" << q;
    }
    EXPECT_EQ(h.count(), v.size());
    EXPECT_DOUBLE_EQ(h.min(), v.front());
    EXPECT_DOUBLE_EQ(h.max(), v.back());
  }
}

// Verifies merge(a, b) equals recording everything into one histogram.
TEST(log_linear_histogram, merge_equals_recording_all) {
  auto a = wide_sample(50'000, 11);
  auto b = wide_sample(70'000, 12);
  stats::log_linear_histogram ha, hb, all;
  for (auto x : a) {
    ha.record(x);
    all.record(x);
  }
  for (auto x : b) {
    hb.record(x * 1e-6); // different range: forces re-alignment
    all.record(x * 1e-6);
  }
  ha.merge(hb);
  EXPECT_TRUE(ha == all);
  for (double q : {1.0, 50.0, 99.0})
    EXPECT_DOUBLE_EQ(ha.percentile(q), all.percentile(q));
}

TEST(log_linear_histogram, handles_zero_and_negative_values) {
  stats::log_linear_histogram h;
  std::vector<double> v{-100, -10, 0, 0, 10, 100, 1000};
  for (auto x : v)
    h.record(x);
  h.record(std::nan(""));
  EXPECT_EQ(h.count(), v.size());
  EXPECT_DOUBLE_EQ(h.percentile(0), -100);
  EXPECT_DOUBLE_EQ(h.percentile(100), 1000);
  EXPECT_EQ(h.percentile(50), 0); // rank 3 of 7
  EXPECT_NEAR(h.value_at_rank(4), 10, 10 * 0.0005);
  EXPECT_NEAR(h.value_at_rank(1), -10, 10 * 0.0005);
  EXPECT_EQ(h.value_at_rank(2), 0);
}

// Verifies a strictly decreasing sequence (worst case for growth) works.
TEST(log_linear_histogram, decreasing_sequence) {
  stats::log_linear_histogram h;
  for (double x = 1e12; x > 1e-3; x *= 0.97)
    h.record(x);
  EXPECT_GT(h.count(), 1000u);
  EXPECT_LT(h.min(), 1e-3 / 0.97);
}
