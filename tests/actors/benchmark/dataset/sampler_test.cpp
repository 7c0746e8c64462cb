#include "actors/benchmark/dataset/sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

using namespace aiperf::dataset;

namespace {

std::vector<std::size_t> draw(dataset_sampler& s, std::size_t n) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(s.next());
  return out;
}

} // namespace

TEST(dataset_sampler, sequential_wraps_around) {
  dataset_sampler s{sampling_strategy::sequential, 3, 1};
  EXPECT_EQ(draw(s, 7), (std::vector<std::size_t>{0, 1, 2, 0, 1, 2, 0}));
}

TEST(dataset_sampler, shuffle_visits_each_index_once_per_pass) {
  dataset_sampler s{sampling_strategy::shuffle, 10, 5};
  for (int pass = 0; pass < 3; ++pass) {
    auto p = draw(s, 10);
    std::sort(p.begin(), p.end());
    for (std::size_t i = 0; i < 10; ++i)
      EXPECT_EQ(p[i], i);
  }
}

TEST(dataset_sampler, shuffle_is_seeded_and_not_identity) {
  dataset_sampler a{sampling_strategy::shuffle, 50, 9};
  dataset_sampler b{sampling_strategy::shuffle, 50, 9};
  dataset_sampler c{sampling_strategy::shuffle, 50, 10};
  const auto pa = draw(a, 50);
  EXPECT_EQ(pa, draw(b, 50));
  EXPECT_NE(pa, draw(c, 50));
  std::vector<std::size_t> identity(50);
  for (std::size_t i = 0; i < 50; ++i)
    identity[i] = i;
  EXPECT_NE(pa, identity);
}

TEST(dataset_sampler, random_stays_in_range_and_covers_it) {
  dataset_sampler s{sampling_strategy::random, 4, 2};
  std::vector<int> hits(4, 0);
  for (auto i : draw(s, 4000)) {
    ASSERT_LT(i, 4u);
    ++hits[i];
  }
  for (int h : hits)
    EXPECT_NEAR(h, 1000, 150); // binomial sd ≈ 27
}

TEST(dataset_sampler, parses_names_and_defaults) {
  EXPECT_EQ(parse_sampling_strategy("shuffle"), sampling_strategy::shuffle);
  EXPECT_EQ(parse_sampling_strategy("sequential"),
            sampling_strategy::sequential);
  EXPECT_EQ(parse_sampling_strategy("random"), sampling_strategy::random);
  EXPECT_FALSE(parse_sampling_strategy("Shuffle").has_value());
  EXPECT_EQ(default_sampling_strategy(true), sampling_strategy::sequential);
  EXPECT_EQ(default_sampling_strategy(false), sampling_strategy::shuffle);
}
