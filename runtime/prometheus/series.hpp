// What the server-metrics scraper computes from the samples of one series
// over a profiling window, with Prometheus' own rules so that the figures
// agree with what a Grafana panel over the same server shows:
//   - a counter's increase survives resets (a value lower than the one
//     before starts again from zero: promql's `increase` without the
//     extrapolation to the window's edges, which a scrape at both edges
//     makes unnecessary);
//   - a histogram's quantile interpolates linearly inside the bucket that
//     holds the rank (promql/quantile.go, bucketQuantile).
#pragma once

#include <cstddef>
#include <vector>

namespace aiperf::prometheus {

/// The increase of a counter sampled as `values` (in scrape order),
/// reset-aware. 0 for fewer than two samples.
[[nodiscard]] double counter_increase(const std::vector<double>& values);

/// A cumulative histogram bucket: observations <= upper_bound.
struct bucket {
  double upper_bound = 0;
  double cumulative_count = 0;
};

/// The q-quantile (0 <= q <= 1) of a cumulative histogram as
/// histogram_quantile() computes it: buckets are sorted by bound; a count
/// lower than a smaller bucket's is raised to it (scrapes are not atomic);
/// NaN without a +Inf bucket, with fewer than two buckets or with no
/// observation; the highest finite bound when the rank falls in +Inf;
/// -Inf for q < 0, +Inf for q > 1.
[[nodiscard]] double histogram_quantile(double q, std::vector<bucket> buckets);

/// Summary statistics of a gauge's samples; all NaN when there are none.
struct gauge_stats {
  std::size_t count = 0;
  double avg = 0, min = 0, max = 0, p50 = 0, p99 = 0;
};

/// avg, min, max and the p50/p99 of the samples (linear interpolation
/// between closest ranks, as numpy's default).
[[nodiscard]] gauge_stats summarize_gauge(std::vector<double> values);

} // namespace aiperf::prometheus
