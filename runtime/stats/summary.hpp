// Exact summary statistics with numpy's conventions, so that our exports can
// be compared number for number with AIPerf's, which computes them with
// numpy (linear-interpolation percentiles, population standard deviation).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>

namespace aiperf::stats {

/// The percentiles every summary carries, in the order of `summary::pct`.
inline constexpr std::array<double, 10> percentile_levels
    = {1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9};

/// Index of a level in `percentile_levels` / `summary::pct`.
enum class pct : std::uint8_t {
  p1,
  p5,
  p10,
  p25,
  p50,
  p75,
  p90,
  p95,
  p99,
  p99_9
};

/// Statistics of a non-empty sample.
struct summary {
  std::uint64_t count = 0;
  double sum = 0;
  double avg = 0;
  double min = 0;
  double max = 0;
  /// Population standard deviation (numpy `std`, ddof=0).
  double std = 0;
  /// Values at `percentile_levels`, numpy default (linear) interpolation.
  std::array<double, percentile_levels.size()> pct{};
  /// False when the percentiles come from a histogram (≤ 0.1 % relative error).
  bool exact = true;

  [[nodiscard]] double at(stats::pct p) const noexcept {
    return pct[static_cast<std::size_t>(p)];
  }
};

/// Neumaier-compensated sum: exact to ~1 ulp for sums of many values of
/// mixed magnitude, where a naive double sum drifts.
class compensated_sum {
public:
  void add(double x) noexcept {
    auto t = sum_ + x;
    // Keep the low-order bits of whichever operand lost them.
    if (std::abs(sum_) >= std::abs(x))
      comp_ += (sum_ - t) + x;
    else
      comp_ += (x - t) + sum_;
    sum_ = t;
  }
  void add(const compensated_sum& other) noexcept {
    add(other.sum_);
    add(other.comp_);
  }
  [[nodiscard]] double value() const noexcept { return sum_ + comp_; }

private:
  double sum_ = 0;
  double comp_ = 0;
};

/// Returns the linearly interpolated `q`-th percentile (0 ≤ q ≤ 100) of a
/// sorted, non-empty sample: rank = q/100·(n−1), between floor and ceil.
[[nodiscard]] double percentile_sorted(std::span<const double> sorted,
                                       double q) noexcept;

/// Summarizes `values` exactly; returns nullopt when empty. Reorders `values`
/// (selection instead of a full sort) but keeps the multiset intact.
[[nodiscard]] std::optional<summary> summarize(std::span<double> values);

} // namespace aiperf::stats
