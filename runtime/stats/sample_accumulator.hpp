// Per-metric accumulator: exact while the sample fits a memory budget, a
// histogram (≤ 0.1 % relative error on percentiles) beyond it. Count, sum,
// min, max, mean and variance stay exact in both modes.
#pragma once

#include "runtime/stats/histogram.hpp"
#include "runtime/stats/summary.hpp"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace aiperf::stats {

/// Accumulates one metric's values. Keeps up to `budget` values exactly
/// (default 2^22 = 4,194,304 values, 32 MiB); past the budget everything
/// goes into a `log_linear_histogram`, `exact()` is false and percentiles
/// are approximate. Neither step stalls the caller (the records manager,
/// on an I/O thread): the budget is reserved up front (address space only;
/// pages are touched as values come, huge pages past the first 4 MiB), so
/// the samples are never copied to grow, and the kept samples move into the
/// histogram `spill_slice` at a time, one slice per later add, the rest —
/// and their memory — when a result is asked for.
/// Moments are kept exactly either way (compensated sum, Welford/Chan
/// variance), so avg/std/min/max/sum/count never degrade. Not thread-safe.
class sample_accumulator {
public:
  static constexpr std::size_t default_budget = std::size_t{1} << 22;
  /// Kept samples moved into the histogram per add once spilled (~30 µs).
  static constexpr std::size_t spill_slice = 8192;

  explicit sample_accumulator(std::size_t budget = default_budget)
      : budget_(budget) {}

  /// Adds one value; NaN and infinities are ignored (they are "no value").
  void add(double value) {
    if (!std::isfinite(value))
      return;
    if (exact_ && samples_.size() < budget_) {
      if (samples_.capacity() == 0)
        reserve_samples();
      samples_.push_back(value);
      return;
    }
    add_spilled(value);
  }

  /// Adds every finite value of `values`; cheaper than one add() per value
  /// once spilled (one division per batch for the moments).
  void add_all(std::span<const double> values);
  /// Same for integer values (e.g. ns), each converted to double.
  void add_all(std::span<const std::int64_t> values);

  /// Adds everything `other` has seen, as if it had been added here. The
  /// result is exact only if both are exact and the union fits the budget.
  void merge(const sample_accumulator& other);

  /// True while percentiles are computed from the exact samples.
  [[nodiscard]] bool exact() const noexcept { return exact_; }
  [[nodiscard]] std::size_t budget() const noexcept { return budget_; }
  [[nodiscard]] std::uint64_t count() const noexcept;
  [[nodiscard]] bool empty() const noexcept { return count() == 0; }
  /// Compensated sum of all values.
  [[nodiscard]] double sum() const;
  [[nodiscard]] double mean() const;
  /// Population variance (ddof=0).
  [[nodiscard]] double variance() const;
  [[nodiscard]] double min() const;
  [[nodiscard]] double max() const;

  /// Returns the summary (nullopt when empty). In exact mode this reorders
  /// the retained samples, which is not observable.
  [[nodiscard]] std::optional<summary> summarize() const;

private:
  /// Reserves the whole budget for samples_ (see the class comment).
  void reserve_samples();

  // Running moments; valid once spilled (computed on demand before).
  struct moments {
    std::uint64_t n = 0;
    double mean = 0;
    double m2 = 0;
    compensated_sum sum;
    double min = 0;
    double max = 0;
    void add(double x) noexcept;
    void merge(const moments& other) noexcept;
  };

  template <class T>
  void add_batch(std::span<const T> values);
  /// Counts the finite `values` into the moments and the histogram.
  template <class T>
  void count_batch(std::span<const T> values) const;
  [[nodiscard]] moments current_moments() const;
  void spill();
  static constexpr std::size_t all_kept = static_cast<std::size_t>(-1);
  /// Moves up to `max` kept samples into the histogram; with all_kept (a
  /// result is asked for) also frees them.
  void count_kept(std::size_t max = all_kept) const;
  void add_spilled(double value) {
    if (exact_)
      spill();
    else
      count_kept(spill_slice);
    moments_.add(value);
    histogram_.record(value);
  }

  std::size_t budget_;
  bool exact_ = true;
  // Mutable: summarize() reorders the samples, and every result first
  // finishes moving the kept samples into the histogram; neither changes
  // what the accumulator reports.
  mutable std::vector<double> samples_;
  /// Once spilled: the first kept sample not counted yet.
  mutable std::size_t kept_next_ = 0;
  mutable moments moments_;
  mutable log_linear_histogram histogram_;
};

} // namespace aiperf::stats
