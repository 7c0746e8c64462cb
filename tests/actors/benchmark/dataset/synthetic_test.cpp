#include "actors/benchmark/dataset/synthetic.hpp"
#include "runtime/tokenizer/tokenizer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace aiperf;
using namespace aiperf::dataset;

namespace {

synthetic_options multi_turn_options(std::uint64_t seed) {
  synthetic_options opts;
  opts.num_conversations = 50;
  opts.isl_mean = 300;
  opts.isl_stddev = 80;
  opts.osl_mean = 120;
  opts.osl_stddev = 30;
  opts.turn_mean = 3;
  opts.turn_stddev = 1;
  opts.turn_delay_mean_ms = 500;
  opts.turn_delay_stddev_ms = 100;
  opts.random_seed = seed;
  return opts;
}

} // namespace

// Verifies the core promise: the built-in tokenizer counts exactly the
// requested ISL for every turn, whatever the drawn length.
TEST(synthetic, prompt_token_count_equals_requested_isl_exactly) {
  const auto data = generate_synthetic(multi_turn_options(7));
  ASSERT_EQ(data.conversations.size(), 50u);
  std::size_t turns = 0;
  for (const auto& conv : data.conversations) {
    for (const auto& t : conv.turns) {
      EXPECT_EQ(tokenizer::count_tokens(t.text), t.input_tokens);
      EXPECT_GE(t.input_tokens, 1u);
      ++turns;
    }
  }
  EXPECT_GT(turns, 50u); // turn_mean 3 gives multi-turn conversations
}

TEST(synthetic, fixed_isl_without_stddev_is_exact_for_every_turn) {
  synthetic_options opts;
  opts.num_conversations = 20;
  opts.isl_mean = 550;
  const auto data = generate_synthetic(opts);
  for (const auto& conv : data.conversations) {
    ASSERT_EQ(conv.turns.size(), 1u);
    EXPECT_EQ(conv.turns[0].input_tokens, 550u);
    EXPECT_EQ(tokenizer::count_tokens(conv.turns[0].text), 550u);
    EXPECT_EQ(conv.turns[0].max_output_tokens, -1); // osl unset
    EXPECT_EQ(conv.turns[0].delay_ms, -1);
    EXPECT_EQ(conv.turns[0].timestamp_ms, -1);
  }
  EXPECT_FALSE(data.has_timestamps);
}

TEST(synthetic, same_seed_is_identical_and_different_seed_differs) {
  const auto a = generate_synthetic(multi_turn_options(42));
  const auto b = generate_synthetic(multi_turn_options(42));
  const auto c = generate_synthetic(multi_turn_options(43));
  EXPECT_EQ(a, b);
  EXPECT_NE(a.conversations[0].turns[0].text, c.conversations[0].turns[0].text);
  EXPECT_NE(a.conversations[0].session_id, c.conversations[0].session_id);
}

TEST(synthetic, session_ids_are_unique) {
  const auto data = generate_synthetic(multi_turn_options(1));
  std::set<std::string> ids;
  for (const auto& conv : data.conversations)
    ids.insert(conv.session_id);
  EXPECT_EQ(ids.size(), data.conversations.size());
  EXPECT_EQ(data.conversations[0].session_id.size(), 36u); // uuid shape
}

TEST(synthetic, lengths_follow_the_requested_normal) {
  synthetic_options opts;
  opts.num_conversations = 4000;
  opts.isl_mean = 200;
  opts.isl_stddev = 40;
  opts.osl_mean = 100;
  opts.osl_stddev = 10;
  opts.random_seed = 3;
  const auto data = generate_synthetic(opts);
  double isl_sum = 0, isl_sq = 0, osl_sum = 0;
  for (const auto& conv : data.conversations) {
    const double x = conv.turns[0].input_tokens;
    isl_sum += x;
    isl_sq += x * x;
    osl_sum += conv.turns[0].max_output_tokens;
  }
  const double n = 4000;
  const double mean = isl_sum / n;
  const double sd = std::sqrt(isl_sq / n - mean * mean);
  EXPECT_NEAR(mean, 200, 2.5); // se = 40/sqrt(4000) ≈ 0.63
  EXPECT_NEAR(sd, 40, 2.0);
  EXPECT_NEAR(osl_sum / n, 100, 1.0);
}

// Verifies lengths stay ≥ 1 even when the normal mostly lands below 1.
TEST(synthetic, positive_normal_never_yields_zero_lengths) {
  synthetic_options opts;
  opts.num_conversations = 500;
  opts.isl_mean = 2;
  opts.isl_stddev = 50;
  opts.turn_mean = 1;
  opts.turn_stddev = 5;
  const auto data = generate_synthetic(opts);
  for (const auto& conv : data.conversations) {
    ASSERT_FALSE(conv.turns.empty());
    for (const auto& t : conv.turns) {
      EXPECT_GE(t.input_tokens, 1u);
      EXPECT_EQ(tokenizer::count_tokens(t.text), t.input_tokens);
    }
  }
}

TEST(synthetic, delays_only_on_later_turns_and_scaled_by_ratio) {
  synthetic_options opts;
  opts.num_conversations = 10;
  opts.isl_mean = 5;
  opts.turn_mean = 4;
  opts.turn_delay_mean_ms = 1000;
  opts.turn_delay_ratio = 0.5;
  const auto data = generate_synthetic(opts);
  for (const auto& conv : data.conversations) {
    ASSERT_EQ(conv.turns.size(), 4u);
    EXPECT_EQ(conv.turns[0].delay_ms, -1);
    for (std::size_t i = 1; i < 4; ++i)
      EXPECT_EQ(conv.turns[i].delay_ms, 500);
  }
}

TEST(synthetic, validate_names_the_bad_field) {
  synthetic_options opts;
  EXPECT_TRUE(validate(opts));
  auto message = [](const synthetic_options& o) {
    return error_message(validate(o).error());
  };
  opts.isl_mean = 0;
  ASSERT_FALSE(validate(opts));
  EXPECT_TRUE(is_error(validate(opts).error(), errc::bad_option));
  EXPECT_NE(message(opts).find("--isl"), std::string::npos);
  opts = {};
  opts.osl_mean = -3;
  EXPECT_NE(message(opts).find("osl_mean"), std::string::npos);
  opts = {};
  opts.num_conversations = 0;
  EXPECT_NE(message(opts).find("num_conversations"), std::string::npos);
  opts = {};
  opts.turn_delay_stddev_ms = -1;
  EXPECT_NE(message(opts).find("turn_delay_stddev_ms"), std::string::npos);
}
