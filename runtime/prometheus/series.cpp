#include "runtime/prometheus/series.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace aiperf::prometheus {

double counter_increase(const std::vector<double>& values) {
  if (values.size() < 2)
    return 0;
  double resets = 0;
  for (std::size_t i = 1; i < values.size(); ++i)
    if (values[i] < values[i - 1])
      resets += values[i - 1];
  return values.back() - values.front() + resets;
}

double histogram_quantile(double q, std::vector<bucket> buckets) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (std::isnan(q))
    return nan;
  if (q < 0)
    return -inf;
  if (q > 1)
    return inf;
  std::sort(buckets.begin(), buckets.end(),
            [](const bucket& a, const bucket& b) {
              return a.upper_bound < b.upper_bound;
            });
  if (buckets.size() < 2 || !std::isinf(buckets.back().upper_bound)
      || buckets.back().upper_bound < 0)
    return nan;
  for (std::size_t i = 1; i < buckets.size(); ++i)
    buckets[i].cumulative_count
        = std::max(buckets[i].cumulative_count, buckets[i - 1].cumulative_count);
  double observations = buckets.back().cumulative_count;
  if (!(observations > 0))
    return nan;
  double rank = q * observations;
  auto b = static_cast<std::size_t>(
      std::lower_bound(buckets.begin(), buckets.end(), rank,
                       [](const bucket& x, double r) {
                         return x.cumulative_count < r;
                       })
      - buckets.begin());
  if (b == buckets.size() - 1)
    return buckets[buckets.size() - 2].upper_bound;
  if (b == 0 && buckets[0].upper_bound <= 0)
    return buckets[0].upper_bound;
  double start = 0;
  double end = buckets[b].upper_bound;
  double count = buckets[b].cumulative_count;
  if (b > 0) {
    start = buckets[b - 1].upper_bound;
    count -= buckets[b - 1].cumulative_count;
    rank -= buckets[b - 1].cumulative_count;
  }
  return start + (end - start) * (rank / count);
}

gauge_stats summarize_gauge(std::vector<double> values) {
  gauge_stats s;
  s.count = values.size();
  if (values.empty()) {
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    s.avg = s.min = s.max = s.p50 = s.p99 = nan;
    return s;
  }
  std::sort(values.begin(), values.end());
  s.min = values.front();
  s.max = values.back();
  s.avg = std::accumulate(values.begin(), values.end(), 0.0)
          / static_cast<double>(values.size());
  auto pct = [&](double p) {
    double pos = p * static_cast<double>(values.size() - 1);
    auto lo = static_cast<std::size_t>(std::floor(pos));
    auto hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
  };
  s.p50 = pct(0.50);
  s.p99 = pct(0.99);
  return s;
}

} // namespace aiperf::prometheus
