// A mergeable log-linear histogram (HDR-style) for percentiles of samples too
// large to keep: each power of two is split into 1024 equal buckets, so a
// bucket's midpoint is within 1/2048 (< 0.05 %) of any value in it, for any
// normal double (sub-nanosecond to centuries).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace aiperf::stats {

class sample_accumulator;

/// Log-linear histogram of finite doubles (positive, zero and negative).
/// Memory is proportional to the range of magnitudes seen: about 8 KiB per
/// power of two actually used. Not thread-safe.
class log_linear_histogram {
public:
  /// Buckets per power of two, as a number of bits.
  static constexpr int sub_bucket_bits = 10;
  static constexpr std::int64_t sub_buckets = std::int64_t{1}
                                              << sub_bucket_bits;
  /// Guaranteed bound on the relative error of `percentile` for samples of
  /// one sign (interpolation between two bounded values keeps the bound).
  static constexpr double max_relative_error = 1.0 / (2.0 * sub_buckets);

  /// Adds `n` occurrences of `value`; NaN and infinities are ignored.
  void record(double value, std::uint64_t n = 1) {
    if (!std::isfinite(value) || n == 0)
      return;
    if (total_ == 0) {
      min_ = max_ = value;
    } else {
      min_ = value < min_ ? value : min_;
      max_ = value > max_ ? value : max_;
    }
    total_ += n;
    if (value > 0)
      positive_.add(index_of(value), n);
    else if (value < 0)
      negative_.add(index_of(-value), n);
    else
      zeros_ += n;
  }

  /// Adds every count of `other`; afterwards this equals a histogram that
  /// recorded both samples.
  void merge(const log_linear_histogram& other);

  [[nodiscard]] std::uint64_t count() const noexcept { return total_; }
  [[nodiscard]] double min() const noexcept { return min_; }
  [[nodiscard]] double max() const noexcept { return max_; }

  /// Returns the approximate value of the (0-based) `rank`-th smallest
  /// sample; the exact min/max for the first and last rank. Requires
  /// `rank < count()`.
  [[nodiscard]] double value_at_rank(std::uint64_t rank) const;

  /// Returns the `q`-th percentile (0 ≤ q ≤ 100) with numpy's linear
  /// interpolation between neighbouring ranks. Requires `count() > 0`.
  [[nodiscard]] double percentile(double q) const;

  friend bool operator==(const log_linear_histogram&,
                         const log_linear_histogram&);

private:
  // sample_accumulator::add_all counts buckets inside its own moments loop.
  friend class sample_accumulator;

  // The bucket part of record() for a finite `value`; `note_counted` then
  // adds the batch's count, min and max (same result as record() each).
  void count_finite(double value) {
    if (value > 0)
      positive_.add(index_of(value), 1);
    else if (value < 0)
      negative_.add(index_of(-value), 1);
    else
      ++zeros_;
  }
  void note_counted(std::uint64_t n, double lo, double hi) {
    if (n == 0)
      return;
    if (total_ == 0) {
      min_ = lo;
      max_ = hi;
    } else {
      min_ = lo < min_ ? lo : min_;
      max_ = hi > max_ ? hi : max_;
    }
    total_ += n;
  }

  // Counts per bucket index over the contiguous range that has been seen.
  struct side {
    std::int64_t offset = 0;
    std::vector<std::uint64_t> counts;
    void add(std::int64_t index, std::uint64_t n) {
      auto rel = index - offset;
      if (rel >= 0 && rel < static_cast<std::int64_t>(counts.size())) [[likely]]
        counts[static_cast<std::size_t>(rel)] += n;
      else
        grow_and_add(index, n);
    }
    void grow_and_add(std::int64_t index, std::uint64_t n);
    [[nodiscard]] std::uint64_t at(std::int64_t index) const;
  };

  // The bucket index is the top bits of the IEEE-754 representation:
  // 11 exponent bits then the first `sub_bucket_bits` mantissa bits, so it
  // is monotonic in the value and each bucket is 1/1024 of its octave.
  static std::int64_t index_of(double magnitude) noexcept {
    return static_cast<std::int64_t>(std::bit_cast<std::uint64_t>(magnitude)
                                     >> (52 - sub_bucket_bits));
  }
  // The midpoint: the bucket's bits followed by a 1 and zeros.
  static double midpoint_of(std::int64_t index) noexcept {
    auto bits = (static_cast<std::uint64_t>(index) << (52 - sub_bucket_bits))
                | (std::uint64_t{1} << (51 - sub_bucket_bits));
    return std::bit_cast<double>(bits);
  }

  side positive_;
  side negative_; // by magnitude
  std::uint64_t zeros_ = 0;
  std::uint64_t total_ = 0;
  double min_ = 0;
  double max_ = 0;
};

} // namespace aiperf::stats
