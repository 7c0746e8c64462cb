#include "actors/benchmark/dataset/sampler.hpp"

#include <numeric>

namespace aiperf::dataset {

std::optional<sampling_strategy>
parse_sampling_strategy(std::string_view name) {
  if (name == "sequential")
    return sampling_strategy::sequential;
  if (name == "random")
    return sampling_strategy::random;
  if (name == "shuffle")
    return sampling_strategy::shuffle;
  return std::nullopt;
}

dataset_sampler::dataset_sampler(sampling_strategy strategy, std::size_t size,
                                 std::uint64_t seed)
    : strategy_(strategy), size_(size == 0 ? 1 : size), gen_(seed) {
  if (strategy_ == sampling_strategy::shuffle) {
    order_.resize(size_);
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    pos_ = size_; // forces a shuffle on the first call
  }
}

std::size_t dataset_sampler::next() {
  switch (strategy_) {
  case sampling_strategy::sequential: {
    const auto i = pos_;
    pos_ = (pos_ + 1) % size_;
    return i;
  }
  case sampling_strategy::random:
    return static_cast<std::size_t>(uniform_index(gen_, size_));
  case sampling_strategy::shuffle:
    if (pos_ == size_) {
      shuffle(order_.begin(), order_.end(), gen_);
      pos_ = 0;
    }
    return order_[pos_++];
  }
  return 0;
}

} // namespace aiperf::dataset
