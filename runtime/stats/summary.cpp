#include "runtime/stats/summary.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace aiperf::stats {

double percentile_sorted(std::span<const double> sorted, double q) noexcept {
  auto n = sorted.size();
  auto rank = q / 100.0 * static_cast<double>(n - 1);
  auto lo = static_cast<std::size_t>(std::floor(rank));
  auto hi = std::min(lo + 1, n - 1);
  auto frac = rank - static_cast<double>(lo);
  // numpy's _lerp: a + (b − a)·t, and b − (b − a)·(1 − t) when t ≥ 0.5.
  auto a = sorted[lo];
  auto b = sorted[hi];
  auto diff = b - a;
  return frac >= 0.5 ? b - diff * (1.0 - frac) : a + diff * frac;
}

namespace {

struct rank_pair {
  std::size_t lo;
  std::size_t hi;
  double frac;
};

rank_pair ranks_of(double q, std::size_t n) {
  auto rank = q / 100.0 * static_cast<double>(n - 1);
  auto lo = static_cast<std::size_t>(std::floor(rank));
  return {lo, std::min(lo + 1, n - 1), rank - static_cast<double>(lo)};
}

using iterator = std::span<double>::iterator;

// Places the elements of the given ascending `ranks` (absolute indices from
// `base`) at their sorted positions within [first, last): select the middle
// rank, then recurse on each side with the ranks that fall there.
void select_ranks(iterator first, iterator last, iterator base,
                  std::span<const std::size_t> ranks) {
  while (!ranks.empty()) {
    auto mid = ranks.size() / 2;
    auto nth = base + static_cast<std::ptrdiff_t>(ranks[mid]);
    std::nth_element(first, nth, last);
    select_ranks(first, nth, base, ranks.first(mid));
    // The right half continues in this loop instead of recursing.
    first = nth + 1;
    ranks = ranks.subspan(mid + 1);
  }
}

// Finds the values of the ascending `ranks` with two linear passes instead
// of a selection over everything: the values are counted into equal-width
// buckets between `lo` and `hi` (bucket order is value order), and only the
// buckets that hold a wanted rank are gathered and selected in. Returns
// false (nothing written) when that does not pay: small or degenerate
// samples, non-finite values, or values bunched into the wanted buckets.
bool select_by_buckets(std::span<const double> values, double lo, double hi,
                       std::span<const std::size_t> ranks,
                       std::span<double> rank_values) {
  constexpr std::size_t bucket_count = std::size_t{1} << 14;
  const auto n = values.size();
  if (n < 8 * bucket_count || n > 0xffff'ffffu)
    return false;
  const auto range = hi - lo;
  if (!(range > 0) || !std::isfinite(range))
    return false;
  const auto scale = static_cast<double>(bucket_count) / range;
  // Monotonic in v, so bucket order is value order; NaN lands in 0 (and is
  // caught by `outside` below).
  auto bucket_of = [lo, scale](double v) {
    auto x = (v - lo) * scale;
    return x > 0 ? (x < static_cast<double>(bucket_count)
                        ? static_cast<std::size_t>(x)
                        : bucket_count - 1)
                 : std::size_t{0};
  };
  std::vector<std::uint32_t> counts(bucket_count, 0);
  bool outside = false;
  for (auto v : values) {
    outside |= !(v >= lo && v <= hi);
    ++counts[bucket_of(v)];
  }
  if (outside)
    return false;
  // The bucket of each rank and where that bucket starts, in rank order.
  std::array<std::size_t, 2 * percentile_levels.size()> rank_bucket{};
  std::array<std::size_t, 2 * percentile_levels.size()> bucket_start{};
  std::size_t b = 0;
  std::size_t start = 0;
  for (std::size_t j = 0; j < ranks.size(); ++j) {
    while (start + counts[b] <= ranks[j])
      start += counts[b++];
    rank_bucket[j] = b;
    bucket_start[j] = start;
  }
  // Each wanted bucket gets a segment of `gathered`.
  std::vector<std::int32_t> slot(bucket_count, -1);
  std::array<std::size_t, 2 * percentile_levels.size() + 1> seg_begin{};
  std::size_t segments = 0;
  std::size_t total = 0;
  for (std::size_t j = 0; j < ranks.size(); ++j) {
    if (slot[rank_bucket[j]] >= 0)
      continue;
    slot[rank_bucket[j]] = static_cast<std::int32_t>(segments);
    seg_begin[segments++] = total;
    total += counts[rank_bucket[j]];
  }
  seg_begin[segments] = total;
  if (total > n / 8)
    return false;
  std::vector<double> gathered(total);
  auto fill = seg_begin;
  for (auto v : values)
    if (auto s = slot[bucket_of(v)]; s >= 0)
      gathered[fill[static_cast<std::size_t>(s)]++] = v;
  // Select inside each segment, all of its ranks at once.
  for (std::size_t j = 0; j < ranks.size();) {
    auto s = static_cast<std::size_t>(slot[rank_bucket[j]]);
    std::array<std::size_t, 2 * percentile_levels.size()> local{};
    std::size_t k = 0;
    auto first_j = j;
    for (; j < ranks.size() && rank_bucket[j] == rank_bucket[first_j]; ++j)
      local[k++] = ranks[j] - bucket_start[j];
    std::span<double> seg{gathered.data() + seg_begin[s],
                          seg_begin[s + 1] - seg_begin[s]};
    select_ranks(seg.begin(), seg.end(), seg.begin(),
                 std::span<const std::size_t>{local.data(), k});
    for (std::size_t i = 0; i < k; ++i)
      rank_values[first_j + i] = seg[local[i]];
  }
  return true;
}

} // namespace

std::optional<summary> summarize(std::span<double> values) {
  if (values.empty())
    return std::nullopt;
  summary s;
  auto n = values.size();
  s.count = n;
  compensated_sum sum;
  auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  s.min = *mn;
  s.max = *mx;
  for (auto v : values)
    sum.add(v);
  s.sum = sum.value();
  s.avg = s.sum / static_cast<double>(n);
  // Two passes like numpy: the mean first, then the squared deviations.
  compensated_sum sq;
  for (auto v : values) {
    auto d = v - s.avg;
    sq.add(d * d);
  }
  s.std = std::sqrt(std::max(0.0, sq.value()) / static_cast<double>(n));
  // The ~20 order statistics the percentiles need: two bucket passes
  // (select_by_buckets) or one multi-selection (O(n log k)) instead of one
  // nth_element pass per rank; nothing at all when the sample is already
  // sorted (constant metrics such as ISL).
  std::array<std::size_t, 2 * percentile_levels.size()> needed{};
  std::size_t k = 0;
  for (auto q : percentile_levels) {
    auto r = ranks_of(q, n);
    needed[k++] = r.lo;
    needed[k++] = r.hi;
  }
  std::sort(needed.begin(), needed.end());
  auto last = std::unique(needed.begin(), needed.end());
  std::span<const std::size_t> ranks{needed.begin(), last};
  std::array<double, 2 * percentile_levels.size()> rank_values{};
  auto sorted = std::is_sorted(values.begin(), values.end());
  if (sorted || !select_by_buckets(values, s.min, s.max, ranks, rank_values)) {
    if (!sorted)
      select_ranks(values.begin(), values.end(), values.begin(), ranks);
    for (std::size_t j = 0; j < ranks.size(); ++j)
      rank_values[j] = values[ranks[j]];
  }
  auto value_of = [&](std::size_t rank) {
    auto at = std::lower_bound(ranks.begin(), ranks.end(), rank);
    return rank_values[static_cast<std::size_t>(at - ranks.begin())];
  };
  for (std::size_t i = 0; i < percentile_levels.size(); ++i) {
    auto r = ranks_of(percentile_levels[i], n);
    auto a = value_of(r.lo);
    auto b = value_of(r.hi);
    auto diff = b - a;
    s.pct[i] = r.frac >= 0.5 ? b - diff * (1.0 - r.frac) : a + diff * r.frac;
  }
  return s;
}

} // namespace aiperf::stats
