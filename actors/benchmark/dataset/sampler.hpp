// `--dataset-sampling-strategy`: which conversation a new session uses.
#pragma once

#include "actors/benchmark/dataset/random.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace aiperf::dataset {

/// sequential: 0, 1, ..., n-1, 0, ...; random: uniform with replacement;
/// shuffle: a fresh random permutation per pass (every conversation once
/// per pass).
enum class sampling_strategy { sequential, random, shuffle };

/// Parses "sequential" | "random" | "shuffle".
[[nodiscard]] std::optional<sampling_strategy>
parse_sampling_strategy(std::string_view name);

/// AIPerf's default: sequential for traces (timestamps), shuffle otherwise.
[[nodiscard]] constexpr sampling_strategy
default_sampling_strategy(bool is_trace) noexcept {
  return is_trace ? sampling_strategy::sequential : sampling_strategy::shuffle;
}

/// Picks conversation indexes for new sessions; seeded, so the sequence is
/// reproducible. Not thread-safe (owned by the dataset manager).
class dataset_sampler {
public:
  /// `size` must be > 0.
  dataset_sampler(sampling_strategy strategy, std::size_t size,
                  std::uint64_t seed);

  /// Returns the conversation index for the next session.
  [[nodiscard]] std::size_t next();

  [[nodiscard]] sampling_strategy strategy() const noexcept {
    return strategy_;
  }

private:
  sampling_strategy strategy_;
  std::size_t size_;
  rng gen_;
  std::size_t pos_ = 0;
  std::vector<std::size_t> order_;
};

} // namespace aiperf::dataset
