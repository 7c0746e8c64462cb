// Inter-arrival gaps for `--request-rate` with `--arrival-pattern`.
#pragma once

#include "actors/benchmark/dataset/random.hpp"
#include "actors/benchmark/timing/errc.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace aiperf::timing {

/// constant: every gap is 1/rate. poisson: exponential gaps, mean 1/rate.
/// gamma: shape = smoothness, scale = 1/(rate·smoothness), so the mean is
/// 1/rate and the CV is 1/sqrt(smoothness) (smoothness 1 = poisson).
enum class arrival_pattern { constant, poisson, gamma };

/// Parses "constant" | "poisson" | "gamma".
[[nodiscard]] std::optional<arrival_pattern>
parse_arrival_pattern(std::string_view name);

/// `--request-rate`, `--arrival-pattern`, `--arrival-smoothness`,
/// `--random-seed`.
struct interval_options {
  arrival_pattern pattern = arrival_pattern::poisson;
  /// Requests per second; > 0.
  double rate = 1.0;
  /// Gamma shape; > 0 (ignored by the other patterns).
  double smoothness = 1.0;
  std::uint64_t seed = 0;
};

/// Returns bad_option naming the field and the fix when `opts` is unusable.
[[nodiscard]] caf::expected<void> validate(const interval_options& opts);

/// Draws gaps; same options → same sequence. Not thread-safe.
class interval_generator {
public:
  /// `opts` must have passed validate().
  explicit interval_generator(const interval_options& opts);

  /// Returns the next gap in nanoseconds (fractional: callers accumulate
  /// in double so rounding never drifts the rate).
  [[nodiscard]] double next_gap_ns();

  /// Mean gap, 1e9 / rate.
  [[nodiscard]] double mean_gap_ns() const noexcept { return mean_ns_; }

private:
  arrival_pattern pattern_;
  double mean_ns_;
  double smoothness_;
  dataset::rng gen_;
};

} // namespace aiperf::timing
