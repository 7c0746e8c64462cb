#include "runtime/stats/sample_accumulator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
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

// A budget larger than one spill slice: the kept samples move into the
// histogram over later adds, never all at once in one add (a stall on the
// I/O thread). Counts hold at every step, a merge while kept samples wait
// counts them, and the result equals the same values spilled at once (a
// budget within one slice).
TEST(sample_accumulator, kept_samples_spill_over_later_adds) {
  constexpr std::size_t budget = 3 * stats::sample_accumulator::spill_slice;
  std::mt19937_64 rng(9);
  std::lognormal_distribution<double> dist(12, 1.0);
  stats::sample_accumulator sliced(budget), at_once(64);
  std::vector<std::int64_t> batch(63);
  std::uint64_t added = 0;
  bool counts_held = true;
  auto add_one_batch = [&] {
    for (auto& x : batch)
      x = static_cast<std::int64_t>(dist(rng));
    sliced.add_all(batch);
    at_once.add_all(batch);
    added += batch.size();
    counts_held = counts_held && sliced.count() == added;
  };
  while (sliced.exact())
    add_one_batch(); // the add that spills moves one slice only
  auto waiting = sliced;
  stats::sample_accumulator merged(budget);
  merged.add(1.0);
  merged.merge(waiting);
  EXPECT_EQ(merged.count(), added + 1);
  while (added < budget + 10 * 63)
    add_one_batch();
  EXPECT_TRUE(counts_held) << "kept samples not counted yet must still count";
  auto s = sliced.summarize();
  auto r = at_once.summarize();
  ASSERT_TRUE(s && r);
  EXPECT_EQ(s->count, added);
  EXPECT_EQ(s->count, r->count);
  EXPECT_EQ(s->min, r->min);
  EXPECT_EQ(s->max, r->max);
  EXPECT_NEAR(s->sum, r->sum, r->sum * 1e-12);
  EXPECT_NEAR(s->std, r->std, r->std * 1e-9);
  EXPECT_EQ(s->pct, r->pct); // the same histogram counts
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

// Pins the spilled add_all path bit for bit (moments and histogram) on
// batches with zeros, negatives and non-finite values: a faster loop must
// do exactly the same arithmetic. The expected fingerprint was taken from
// the straightforward three-loop version.
TEST(sample_accumulator, spilled_add_all_is_bit_stable) {
  stats::sample_accumulator acc(64);
  std::uint64_t state = 11;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 11;
  };
  std::vector<double> batch;
  for (int round = 0; round < 5000; ++round) {
    batch.clear();
    auto n = next() % 70;
    for (std::uint64_t i = 0; i < n; ++i) {
      auto r = next();
      double v = static_cast<double>(r % 10'000'000) + 0.25 * static_cast<double>(r % 4);
      if (r % 97 == 0)
        v = 0;
      else if (r % 89 == 0)
        v = -v;
      else if (r % 101 == 0)
        v = std::numeric_limits<double>::quiet_NaN();
      else if (r % 103 == 0)
        v = std::numeric_limits<double>::infinity();
      batch.push_back(v);
    }
    acc.add_all(batch);
  }
  ASSERT_FALSE(acc.exact());
  auto s = acc.summarize();
  ASSERT_TRUE(s);
  std::uint64_t fingerprint = s->count;
  auto mix = [&fingerprint](double v) {
    fingerprint = (fingerprint ^ std::bit_cast<std::uint64_t>(v)) * 1099511628211ull;
  };
  for (double v : {s->sum, s->avg, s->min, s->max, s->std})
    mix(v);
  for (double v : s->pct)
    mix(v);
  EXPECT_EQ(fingerprint, 10504881336359565898ull) << s->count;
}

// Integer batches (ns gaps) accumulate exactly like the same values as
// doubles, exact and spilled.
TEST(sample_accumulator, integer_batches_equal_double_batches) {
  for (std::size_t budget : {100000u, 50u}) {
    stats::sample_accumulator ints(budget);
    stats::sample_accumulator doubles(budget);
    std::uint64_t state = 5;
    for (int round = 0; round < 500; ++round) {
      std::vector<std::int64_t> batch;
      for (int i = 0; i < round % 64; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        batch.push_back(static_cast<std::int64_t>(state >> 40) - 1000);
      }
      ints.add_all(batch);
      std::vector<double> as_double(batch.begin(), batch.end());
      doubles.add_all(as_double);
    }
    EXPECT_EQ(ints.exact(), budget == 100000u);
    auto a = ints.summarize();
    auto b = doubles.summarize();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->count, b->count);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a->sum), std::bit_cast<std::uint64_t>(b->sum));
    EXPECT_EQ(std::bit_cast<std::uint64_t>(a->std), std::bit_cast<std::uint64_t>(b->std));
    EXPECT_EQ(a->pct, b->pct);
  }
}
