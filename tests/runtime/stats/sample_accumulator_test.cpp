#include "runtime/stats/sample_accumulator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

using namespace aiperf;
using stats::pct;

TEST(sample_accumulator, exact_within_budget) {
  stats::sample_accumulator acc(16);
  for (double x : {1.0, 2.0, 3.0, 4.0})
    acc.add(x);
  EXPECT_TRUE(acc.exact());
  auto s = acc.summarize();
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->exact);
  EXPECT_DOUBLE_EQ(s->at(pct::p25), 1.75);
  EXPECT_DOUBLE_EQ(s->at(pct::p90), 3.7);
  EXPECT_DOUBLE_EQ(acc.mean(), 2.5);
  EXPECT_DOUBLE_EQ(acc.variance(), 1.25);
}

// Verifies that past the budget samples are dropped, the flag says so, the
// moments stay exact and percentiles stay within the histogram bound.
TEST(sample_accumulator, spills_to_histogram_past_budget) {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> dist(15, 1.5);
  std::vector<double> all(10'000);
  for (auto& x : all)
    x = dist(rng);
  stats::sample_accumulator acc(1000);
  for (auto x : all)
    acc.add(x);
  EXPECT_FALSE(acc.exact());
  auto s = acc.summarize();
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->exact);
  auto ref = stats::summarize(all);
  ASSERT_TRUE(ref);
  EXPECT_EQ(s->count, ref->count);
  EXPECT_DOUBLE_EQ(s->min, ref->min);
  EXPECT_DOUBLE_EQ(s->max, ref->max);
  EXPECT_NEAR(s->avg, ref->avg, ref->avg * 1e-12);
  EXPECT_NEAR(s->sum, ref->sum, ref->sum * 1e-12);
  EXPECT_NEAR(s->std, ref->std, ref->std * 1e-9);
  for (std::size_t i = 0; i < s->pct.size(); ++i)
    EXPECT_LE(std::abs(s->pct[i] - ref->pct[i]) / ref->pct[i], 0.001) << i;
}

// Verifies merging equals adding everything into one, in both modes.
TEST(sample_accumulator, merge_equals_single_accumulator) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> dist(1, 1e6);
  for (std::size_t budget : {100000u, 500u}) {
    stats::sample_accumulator a(budget), b(budget), one(budget);
    for (int i = 0; i < 3000; ++i) {
      auto x = dist(rng);
      (i % 3 == 0 ? a : b).add(x);
      one.add(x);
    }
    a.merge(b);
    EXPECT_EQ(a.exact(), one.exact());
    auto sa = a.summarize();
    auto so = one.summarize();
    ASSERT_TRUE(sa && so);
    EXPECT_EQ(sa->count, so->count);
    EXPECT_DOUBLE_EQ(sa->min, so->min);
    EXPECT_DOUBLE_EQ(sa->max, so->max);
    EXPECT_NEAR(sa->avg, so->avg, so->avg * 1e-12);
    EXPECT_NEAR(sa->std, so->std, so->std * 1e-9);
    for (std::size_t i = 0; i < sa->pct.size(); ++i)
      EXPECT_DOUBLE_EQ(sa->pct[i], so->pct[i]) << "budget " << budget;
  }
}

// Verifies an exact accumulator merged into a spilled one is fully counted.
TEST(sample_accumulator, merge_exact_into_spilled) {
  stats::sample_accumulator big(10), small(10);
  for (int i = 1; i <= 20; ++i)
    big.add(i);
  for (int i = 21; i <= 25; ++i)
    small.add(i);
  big.merge(small);
  EXPECT_FALSE(big.exact());
  EXPECT_EQ(big.count(), 25u);
  EXPECT_DOUBLE_EQ(big.sum(), 325);
  EXPECT_DOUBLE_EQ(big.max(), 25);
}

TEST(sample_accumulator, ignores_non_finite_and_reports_empty) {
  stats::sample_accumulator acc;
  acc.add(std::nan(""));
  EXPECT_TRUE(acc.empty());
  EXPECT_FALSE(acc.summarize());
}
