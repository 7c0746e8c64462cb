#include "runtime/stats/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace aiperf::stats {

void log_linear_histogram::side::grow_and_add(std::int64_t index,
                                              std::uint64_t n) {
  if (counts.empty()) {
    offset = index;
    counts.assign(1, 0);
  } else if (index < offset) {
    // Grow with slack so that a decreasing sequence stays amortized O(1).
    auto slack = std::max<std::int64_t>(
        static_cast<std::int64_t>(counts.size()) / 2, sub_buckets);
    auto new_offset = index - slack;
    counts.insert(counts.begin(), static_cast<std::size_t>(offset - new_offset),
                  0);
    offset = new_offset;
  } else if (index - offset >= static_cast<std::int64_t>(counts.size())) {
    auto needed = static_cast<std::size_t>(index - offset + 1);
    counts.resize(std::max(needed, counts.size() + counts.size() / 2), 0);
  }
  counts[static_cast<std::size_t>(index - offset)] += n;
}

std::uint64_t log_linear_histogram::side::at(std::int64_t index) const {
  if (index < offset
      || index - offset >= static_cast<std::int64_t>(counts.size()))
    return 0;
  return counts[static_cast<std::size_t>(index - offset)];
}

void log_linear_histogram::merge(const log_linear_histogram& other) {
  if (other.total_ == 0)
    return;
  auto merge_side = [](side& into, const side& from) {
    for (std::size_t i = 0; i < from.counts.size(); ++i)
      if (from.counts[i] != 0)
        into.add(from.offset + static_cast<std::int64_t>(i), from.counts[i]);
  };
  merge_side(positive_, other.positive_);
  merge_side(negative_, other.negative_);
  zeros_ += other.zeros_;
  if (total_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  total_ += other.total_;
}

double log_linear_histogram::value_at_rank(std::uint64_t rank) const {
  if (rank == 0)
    return min_;
  if (rank + 1 >= total_)
    return max_;
  auto clamp = [this](double v) { return std::clamp(v, min_, max_); };
  std::uint64_t seen = 0;
  // Negatives first, largest magnitude first.
  for (auto i = negative_.counts.size(); i-- > 0;) {
    seen += negative_.counts[i];
    if (rank < seen)
      return clamp(
          -midpoint_of(negative_.offset + static_cast<std::int64_t>(i)));
  }
  seen += zeros_;
  if (rank < seen)
    return 0.0;
  for (std::size_t i = 0; i < positive_.counts.size(); ++i) {
    seen += positive_.counts[i];
    if (rank < seen)
      return clamp(
          midpoint_of(positive_.offset + static_cast<std::int64_t>(i)));
  }
  return max_;
}

double log_linear_histogram::percentile(double q) const {
  auto rank = q / 100.0 * static_cast<double>(total_ - 1);
  auto lo = static_cast<std::uint64_t>(std::floor(rank));
  auto hi = std::min(lo + 1, total_ - 1);
  auto frac = rank - static_cast<double>(lo);
  auto a = value_at_rank(lo);
  if (frac == 0.0 || hi == lo)
    return a;
  auto b = value_at_rank(hi);
  return a + (b - a) * frac;
}

bool operator==(const log_linear_histogram& x, const log_linear_histogram& y) {
  if (x.total_ != y.total_ || x.zeros_ != y.zeros_ || x.min_ != y.min_
      || x.max_ != y.max_)
    return false;
  // Compare by content, not by allocation (offsets and slack may differ).
  auto same = [](const log_linear_histogram::side& a,
                 const log_linear_histogram::side& b) {
    for (std::size_t i = 0; i < a.counts.size(); ++i)
      if (a.counts[i] != b.at(a.offset + static_cast<std::int64_t>(i)))
        return false;
    for (std::size_t i = 0; i < b.counts.size(); ++i)
      if (b.counts[i] != a.at(b.offset + static_cast<std::int64_t>(i)))
        return false;
    return true;
  };
  return same(x.positive_, y.positive_) && same(x.negative_, y.negative_);
}

} // namespace aiperf::stats
