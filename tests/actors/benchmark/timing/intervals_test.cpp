#include "actors/benchmark/timing/intervals.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

using namespace aiperf::timing;

namespace {

struct gap_stats {
  double mean;
  double cv;
};

// Mean and coefficient of variation of 100k gaps (deterministic per seed,
// so the tolerances below never flake).
gap_stats stats_of(const interval_options& opts) {
  interval_generator gen{opts};
  constexpr int n = 100'000;
  // Welford: no cancellation, so a constant stream has CV exactly 0.
  double mean = 0;
  double m2 = 0;
  for (int i = 1; i <= n; ++i) {
    const double g = gen.next_gap_ns();
    EXPECT_GE(g, 0.0);
    const double delta = g - mean;
    mean += delta / i;
    m2 += delta * (g - mean);
  }
  return {mean, std::sqrt(m2 / n) / mean};
}

interval_options make(arrival_pattern p, double rate, double smoothness = 1,
                      std::uint64_t seed = 17) {
  interval_options o;
  o.pattern = p;
  o.rate = rate;
  o.smoothness = smoothness;
  o.seed = seed;
  return o;
}

} // namespace

TEST(interval_generator, constant_gaps_are_exactly_one_over_rate) {
  interval_generator gen{make(arrival_pattern::constant, 250)};
  for (int i = 0; i < 10; ++i)
    EXPECT_DOUBLE_EQ(gen.next_gap_ns(), 4e6);
  const auto s = stats_of(make(arrival_pattern::constant, 3));
  EXPECT_NEAR(s.mean, 1e9 / 3, 1e-3);
  EXPECT_NEAR(s.cv, 0.0, 1e-9);
}

// Exponential: mean 1/rate, CV 1. Standard errors at n = 100k are ~0.3 % for
// the mean and ~0.5 % for the CV; tolerances are ~4-5 standard errors.
TEST(interval_generator, poisson_has_mean_one_over_rate_and_cv_one) {
  const auto s = stats_of(make(arrival_pattern::poisson, 1000));
  EXPECT_NEAR(s.mean / 1e6, 1.0, 0.015);
  EXPECT_NEAR(s.cv, 1.0, 0.02);
}

// Gamma with shape k: mean 1/rate, CV 1/sqrt(k).
TEST(interval_generator, gamma_has_mean_one_over_rate_and_cv_from_smoothness) {
  for (double k : {0.25, 0.5, 1.0, 4.0, 16.0}) {
    const auto s = stats_of(make(arrival_pattern::gamma, 50, k));
    EXPECT_NEAR(s.mean / 2e7, 1.0, 0.03) << "smoothness " << k;
    EXPECT_NEAR(s.cv, 1.0 / std::sqrt(k), 0.03 / std::sqrt(k))
        << "smoothness " << k;
  }
}

TEST(interval_generator, same_seed_same_gaps_different_seed_different_gaps) {
  interval_generator a{make(arrival_pattern::poisson, 10, 1, 1)};
  interval_generator b{make(arrival_pattern::poisson, 10, 1, 1)};
  interval_generator c{make(arrival_pattern::poisson, 10, 1, 2)};
  std::vector<double> ga, gb, gc;
  for (int i = 0; i < 100; ++i) {
    ga.push_back(a.next_gap_ns());
    gb.push_back(b.next_gap_ns());
    gc.push_back(c.next_gap_ns());
  }
  EXPECT_EQ(ga, gb);
  EXPECT_NE(ga, gc);
}

TEST(interval_generator, validate_rejects_bad_rate_and_smoothness) {
  EXPECT_TRUE(validate(make(arrival_pattern::poisson, 5)));
  auto message = [](const interval_options& o) {
    return aiperf::error_message(validate(o).error());
  };
  EXPECT_NE(message(make(arrival_pattern::poisson, 0)).find("--request-rate"),
            std::string::npos);
  EXPECT_FALSE(validate(make(arrival_pattern::constant, -1)));
  EXPECT_FALSE(validate(make(arrival_pattern::constant, NAN)));
  EXPECT_NE(
    message(make(arrival_pattern::gamma, 5, 0)).find("--arrival-smoothness"),
    std::string::npos);
  EXPECT_TRUE(aiperf::is_error(
    validate(make(arrival_pattern::gamma, 5, 0)).error(), errc::bad_option));
  EXPECT_EQ(parse_arrival_pattern("gamma"), arrival_pattern::gamma);
  EXPECT_FALSE(parse_arrival_pattern("concurrency_burst"));
}
