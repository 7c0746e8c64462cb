// Counter increase, histogram_quantile and gauge statistics, checked
// against the values promql computes for the same inputs.
#include "runtime/prometheus/series.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace aiperf::prometheus {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();

TEST(series, counter_increase_survives_resets) {
  EXPECT_EQ(counter_increase({}), 0);
  EXPECT_EQ(counter_increase({5}), 0);
  EXPECT_EQ(counter_increase({5, 7, 10}), 5);
  // 10 -> 2 is a restart: 5..10 is 5, then 0..2 and 2..6 add 6.
  EXPECT_EQ(counter_increase({5, 10, 2, 6}), 11);
  // What came before the first sample is not part of the window.
  EXPECT_EQ(counter_increase({3, 0, 0, 4}), 4);
}

TEST(series, histogram_quantile_interpolates_inside_the_bucket) {
  std::vector<bucket> b = {{0.1, 40}, {1.0, 90}, {inf, 100}, {0.001, 0}};
  // rank 50 falls in (0.1, 1.0]: 10 of its 50 observations.
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, b), 0.1 + 0.9 * (10.0 / 50.0));
  // rank 20 in (0.001, 0.1]: 20 of 40.
  EXPECT_DOUBLE_EQ(histogram_quantile(0.2, b), 0.001 + 0.099 * 0.5);
  // rank 99 falls in +Inf: the highest finite bound.
  EXPECT_DOUBLE_EQ(histogram_quantile(0.99, b), 1.0);
  EXPECT_EQ(histogram_quantile(-0.1, b), -inf);
  EXPECT_EQ(histogram_quantile(1.1, b), inf);
  EXPECT_TRUE(std::isnan(histogram_quantile(NAN, b)));
}

TEST(series, histogram_quantile_first_bucket_and_degenerate_inputs) {
  // The first bucket interpolates from 0.
  EXPECT_DOUBLE_EQ(histogram_quantile(0.25, {{2.0, 10}, {inf, 10}}), 0.5);
  // A non-positive first bound is returned as is.
  EXPECT_DOUBLE_EQ(histogram_quantile(0.5, {{-1.0, 10}, {inf, 10}}), -1.0);
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, {{1.0, 10}, {2.0, 20}})));
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, {{inf, 10}})));
  EXPECT_TRUE(std::isnan(histogram_quantile(0.5, {{1.0, 0}, {inf, 0}})));
  // A count below a smaller bucket's (a torn scrape) is raised to it.
  // Raised: 10, 10, 20, 20; rank 15 is the middle of (2, 3].
  EXPECT_DOUBLE_EQ(
      histogram_quantile(0.75, {{1.0, 10}, {2.0, 4}, {3.0, 20}, {inf, 20}}),
      2.5);
}

TEST(series, gauge_statistics) {
  auto s = summarize_gauge({4, 1, 3, 2});
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.avg, 2.5);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.p50, 2.5);
  EXPECT_DOUBLE_EQ(s.p99, 3.97);
  auto none = summarize_gauge({});
  EXPECT_EQ(none.count, 0u);
  EXPECT_TRUE(std::isnan(none.avg) && std::isnan(none.p99));
}

} // namespace
} // namespace aiperf::prometheus
