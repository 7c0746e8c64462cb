#include "actors/benchmark/dataset/dataset_file.hpp"
#include "actors/benchmark/dataset/input_file.hpp"
#include "actors/benchmark/dataset/models.hpp"
#include "actors/benchmark/dataset/payload.hpp"
#include "actors/benchmark/dataset/synthetic.hpp"

#include <gtest/gtest.h>

#include <map>

using namespace aiperf::dataset;
using aiperf::error_message;

namespace {

// Conversations of 1, 3 and 2 turns: round_robin must run across
// conversation boundaries, not restart per conversation.
dataset uneven_dataset() {
  dataset ds;
  ds.conversations.push_back({"c0", {turn{"a", 1}}});
  ds.conversations.push_back(
      {"c1", {turn{"b", 1}, turn{"c", 1}, turn{"d", 1}}});
  ds.conversations.push_back({"c2", {turn{"e", 1}, turn{"f", 1}}});
  return ds;
}

std::vector<std::string> models_in_order(const dataset& ds) {
  std::vector<std::string> out;
  for (const auto& conv : ds.conversations)
    for (const auto& t : conv.turns)
      out.push_back(t.model);
  return out;
}

model_options options(std::vector<std::string> names, model_selection s,
                      std::uint64_t seed = 42) {
  model_options opts;
  opts.names = std::move(names);
  opts.strategy = s;
  opts.seed = seed;
  return opts;
}

synthetic_options many_turns() {
  synthetic_options opts;
  opts.num_conversations = 50;
  opts.isl_mean = 8;
  opts.osl_mean = 4;
  opts.turn_mean = 4;
  opts.turn_stddev = 2;
  opts.random_seed = 7;
  return opts;
}

} // namespace

TEST(models, parses_strategy_names) {
  EXPECT_EQ(parse_model_selection("round_robin"), model_selection::round_robin);
  EXPECT_EQ(parse_model_selection("random"), model_selection::random);
  EXPECT_FALSE(parse_model_selection("roundrobin"));
}

TEST(models, empty_name_is_an_error_naming_the_field) {
  auto valid = validate(options({"a", ""}, model_selection::round_robin));
  ASSERT_FALSE(valid);
  auto msg = error_message(valid.error());
  EXPECT_NE(msg.find("model_names[1]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--model"), std::string::npos) << msg;
  EXPECT_TRUE(validate(options({"a", "b"}, model_selection::random)));
}

TEST(models, round_robin_cycles_over_turns_across_conversations) {
  auto ds = uneven_dataset();
  assign_models(ds, options({"a", "b", "c"}, model_selection::round_robin));
  EXPECT_EQ(models_in_order(ds),
            (std::vector<std::string>{"a", "b", "c", "a", "b", "c"}));
}

TEST(models, a_model_from_the_file_wins_and_does_not_take_a_slot) {
  auto ds = uneven_dataset();
  ds.conversations[1].turns[1].model = "pinned";
  assign_models(ds, options({"a", "b"}, model_selection::round_robin));
  EXPECT_EQ(models_in_order(ds),
            (std::vector<std::string>{"a", "b", "pinned", "a", "b", "a"}));
}

TEST(models, one_model_leaves_turns_unset) {
  auto ds = uneven_dataset();
  const auto before = ds;
  assign_models(ds, options({"only"}, model_selection::round_robin));
  EXPECT_EQ(ds, before);
  assign_models(ds, options({"only"}, model_selection::random));
  EXPECT_EQ(ds, before);
}

TEST(models, random_is_reproducible_from_the_seed_and_uses_every_model) {
  auto a = generate_synthetic(many_turns());
  auto b = a;
  auto c = a;
  const auto untouched = a;
  assign_models(a, options({"x", "y", "z"}, model_selection::random, 99));
  assign_models(b, options({"x", "y", "z"}, model_selection::random, 99));
  assign_models(c, options({"x", "y", "z"}, model_selection::random, 100));
  EXPECT_EQ(models_in_order(a), models_in_order(b));
  EXPECT_NE(models_in_order(a), models_in_order(c));
  std::map<std::string, std::size_t> counts;
  for (const auto& m : models_in_order(a))
    ++counts[m];
  ASSERT_GT(models_in_order(a).size(), 150u);
  ASSERT_EQ(counts.size(), 3u);
  for (const auto& [name, n] : counts)
    EXPECT_GT(n, models_in_order(a).size() / 6) << name;
  // Not a disguised round robin.
  auto rr = untouched;
  assign_models(rr, options({"x", "y", "z"}, model_selection::round_robin));
  EXPECT_NE(models_in_order(a), models_in_order(rr));
  // Only the models changed: the prompts and lengths are the seed's as before.
  for (std::size_t i = 0; i < a.conversations.size(); ++i)
    for (std::size_t t = 0; t < a.conversations[i].turns.size(); ++t) {
      auto turn = a.conversations[i].turns[t];
      turn.model.clear();
      ASSERT_EQ(turn, untouched.conversations[i].turns[t]);
    }
}

TEST(models, bodies_and_inputs_json_carry_each_turns_model) {
  auto ds = uneven_dataset();
  assign_models(ds, options({"a", "b"}, model_selection::round_robin));
  payload_options popts;
  popts.model = std::string{"a"};
  const auto body = build_payload(popts, ds.conversations[1], 0, {});
  EXPECT_EQ(body.rfind(R"({"model":"b",)", 0), 0u) << body;
  const auto json = inputs_json(popts, ds);
  std::vector<std::string> seen;
  for (auto pos = json.find("\"model\""); pos != std::string::npos;
       pos = json.find("\"model\"", pos + 1))
    seen.push_back(json.substr(pos + 9, 1)); // after `"model":"`
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "a", "b", "a", "b"}));
}

TEST(models, single_model_output_is_byte_identical_to_no_assignment) {
  const auto plain = generate_synthetic(many_turns());
  auto assigned = plain;
  assign_models(assigned, options({"m"}, model_selection::random));
  payload_options popts;
  popts.model = std::string{"m"};
  popts.streaming = true;
  EXPECT_EQ(inputs_json(popts, assigned), inputs_json(popts, plain));
  auto a = encode_dataset(assigned);
  auto b = encode_dataset(plain);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->data, b->data);
  EXPECT_EQ(a->index, b->index);
}

TEST(models, input_file_model_field_is_parsed_and_validated) {
  auto r = parse_input_file("{\"text\": \"hi\", \"model\": \"file-m\"}\n"
                            "{\"text\": \"there\"}\n",
                            input_file_type::single_turn);
  ASSERT_TRUE(r);
  auto& ds = *r;
  EXPECT_EQ(ds.conversations[0].turns[0].model, "file-m");
  EXPECT_EQ(ds.conversations[1].turns[0].model, "");
  assign_models(ds, options({"a", "b"}, model_selection::round_robin));
  EXPECT_EQ(models_in_order(ds), (std::vector<std::string>{"file-m", "a"}));

  auto multi = parse_input_file(
      R"({"turns": [{"text": "x", "model": "m1"}, {"text": "y"}]})"
      "\n",
      input_file_type::multi_turn);
  ASSERT_TRUE(multi);
  EXPECT_EQ(multi->conversations[0].turns[0].model, "m1");

  auto bad = parse_input_file("{\"text\": \"ok\"}\n"
                              "{\"text\": \"hi\", \"model\": 3}\n",
                              input_file_type::single_turn);
  ASSERT_FALSE(bad);
  const auto* errors
    = aiperf::error_payload<std::vector<load_error>>(bad.error());
  ASSERT_NE(errors, nullptr);
  ASSERT_EQ(errors->size(), 1u);
  EXPECT_EQ((*errors)[0].line, 2u);
  EXPECT_EQ((*errors)[0].field, "model");
  auto bad_multi = parse_input_file(
      R"({"turns": [{"text": "x"}, {"text": "y", "model": ""}]})"
      "\n",
      input_file_type::multi_turn);
  ASSERT_FALSE(bad_multi);
  errors = aiperf::error_payload<std::vector<load_error>>(bad_multi.error());
  ASSERT_NE(errors, nullptr);
  ASSERT_EQ(errors->size(), 1u);
  EXPECT_EQ((*errors)[0].field, "turns[1].model");
  EXPECT_NE((*errors)[0].to_string().find("line 1: turns[1].model"),
            std::string::npos);
}
