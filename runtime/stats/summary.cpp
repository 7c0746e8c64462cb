#include "runtime/stats/summary.hpp"

#include <algorithm>
#include <array>
#include <cmath>
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
  // The ~20 order statistics the percentiles need: one multi-selection
  // (O(n log k)) instead of one nth_element pass per rank; nothing at all
  // when the sample is already sorted (constant metrics such as ISL).
  std::array<std::size_t, 2 * percentile_levels.size()> needed{};
  std::size_t k = 0;
  for (auto q : percentile_levels) {
    auto r = ranks_of(q, n);
    needed[k++] = r.lo;
    needed[k++] = r.hi;
  }
  std::sort(needed.begin(), needed.end());
  auto last = std::unique(needed.begin(), needed.end());
  if (!std::is_sorted(values.begin(), values.end()))
    select_ranks(values.begin(), values.end(), values.begin(),
                 std::span<const std::size_t>{needed.begin(), last});
  for (std::size_t i = 0; i < percentile_levels.size(); ++i) {
    auto r = ranks_of(percentile_levels[i], n);
    auto a = values[r.lo];
    auto diff = values[r.hi] - a;
    s.pct[i] = r.frac >= 0.5 ? values[r.hi] - diff * (1.0 - r.frac)
                             : a + diff * r.frac;
  }
  return s;
}

} // namespace aiperf::stats
