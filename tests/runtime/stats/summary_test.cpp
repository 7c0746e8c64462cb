#include "runtime/stats/summary.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <vector>

using namespace aiperf;
using stats::pct;

// AIPerf's statistics of 1..5, as numpy computes them.
TEST(summary, one_to_five) {
  std::vector<double> v{5, 3, 1, 4, 2};
  auto s = stats::summarize(v);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->count, 5u);
  EXPECT_DOUBLE_EQ(s->min, 1);
  EXPECT_DOUBLE_EQ(s->max, 5);
  EXPECT_DOUBLE_EQ(s->avg, 3);
  EXPECT_DOUBLE_EQ(s->sum, 15);
  EXPECT_DOUBLE_EQ(s->at(pct::p50), 3);
  // numpy.std([1,2,3,4,5]) = sqrt(2) (population, ddof=0).
  EXPECT_DOUBLE_EQ(s->std, std::sqrt(2.0));
  EXPECT_TRUE(s->exact);
}

TEST(summary, tens_median) {
  std::vector<double> v{50, 10, 40, 20, 30};
  auto s = stats::summarize(v);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->at(pct::p50), 30);
  EXPECT_DOUBLE_EQ(s->std, std::sqrt(200.0));
}

// Verified by hand: rank = q·(n−1); for [1,2,3,4]: p25 → rank 0.75 → 1.75,
// p90 → rank 2.7 → 3.7, p50 → 2.5, p1 → 1.03, p99 → 3.97, p99.9 → 3.997.
TEST(summary, numpy_linear_interpolation) {
  std::vector<double> v{4, 1, 3, 2};
  auto s = stats::summarize(v);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->at(pct::p25), 1.75);
  EXPECT_DOUBLE_EQ(s->at(pct::p90), 3.7);
  EXPECT_DOUBLE_EQ(s->at(pct::p50), 2.5);
  EXPECT_DOUBLE_EQ(s->at(pct::p1), 1.03);
  EXPECT_DOUBLE_EQ(s->at(pct::p99), 3.97);
  EXPECT_DOUBLE_EQ(s->at(pct::p99_9), 3.997);
  EXPECT_DOUBLE_EQ(s->at(pct::p75), 3.25);
}

TEST(summary, single_value_and_empty) {
  std::vector<double> one{42};
  auto s = stats::summarize(one);
  ASSERT_TRUE(s);
  for (auto p : s->pct)
    EXPECT_DOUBLE_EQ(p, 42);
  EXPECT_DOUBLE_EQ(s->std, 0);
  std::vector<double> none;
  EXPECT_FALSE(stats::summarize(none));
}

// Verifies selection gives the same percentiles as a full sort.
TEST(summary, selection_matches_sorted_reference) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(10, 2);
  for (std::size_t n : {2u, 3u, 10u, 101u, 1000u, 12345u}) {
    std::vector<double> v(n);
    for (auto& x : v)
      x = dist(rng);
    auto sorted = v;
    std::sort(sorted.begin(), sorted.end());
    auto s = stats::summarize(v);
    ASSERT_TRUE(s);
    for (std::size_t i = 0; i < stats::percentile_levels.size(); ++i)
      EXPECT_DOUBLE_EQ(s->pct[i], stats::percentile_sorted(
                                      sorted, stats::percentile_levels[i]))
          << "n=" << n << " level " << stats::percentile_levels[i];
  }
}

// Verifies the compensated sum does not lose small addends to a big one.
TEST(summary, compensated_sum_keeps_small_terms) {
  stats::compensated_sum s;
  s.add(1e16);
  for (int i = 0; i < 1000; ++i)
    s.add(1.0);
  s.add(-1e16);
  EXPECT_DOUBLE_EQ(s.value(), 1000.0);
}

// Large samples take the bucket passes: the same order statistics as a full
// sort, bit for bit, for spread, bunched, duplicated, negative and
// outlier-heavy samples (the last ones fall back to plain selection).
TEST(summary, bucket_selection_matches_sorted_reference) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> lognormal(15, 1);
  std::uniform_real_distribution<double> uniform(-5e6, 5e6);
  std::uniform_int_distribution<int> small(0, 40);
  std::vector<std::function<double(std::size_t)>> shapes{
    [&](std::size_t) { return lognormal(rng); },
    [&](std::size_t) { return uniform(rng); },
    [&](std::size_t) { return static_cast<double>(small(rng)); },
    [&](std::size_t i) { return i % 1000 == 0 ? 1e12 : uniform(rng); },
    [&](std::size_t i) { return i == 7 ? -1e300 : 20e6 + small(rng); },
  };
  for (std::size_t n : {131072u, 131073u, 400000u}) {
    for (std::size_t shape = 0; shape < shapes.size(); ++shape) {
      std::vector<double> v(n);
      for (std::size_t i = 0; i < n; ++i)
        v[i] = shapes[shape](i);
      auto sorted = v;
      std::sort(sorted.begin(), sorted.end());
      auto s = stats::summarize(v);
      ASSERT_TRUE(s);
      for (std::size_t i = 0; i < stats::percentile_levels.size(); ++i)
        EXPECT_EQ(s->pct[i], stats::percentile_sorted(
                                 sorted, stats::percentile_levels[i]))
            << "n=" << n << " shape " << shape << " level "
            << stats::percentile_levels[i];
      EXPECT_EQ(s->min, sorted.front());
      EXPECT_EQ(s->max, sorted.back());
    }
  }
}
