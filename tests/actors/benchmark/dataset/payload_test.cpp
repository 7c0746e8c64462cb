#include "actors/benchmark/dataset/payload.hpp"
#include "actors/benchmark/dataset/synthetic.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <sstream>

using namespace aiperf::dataset;
using aiperf::error_message;

namespace {

conversation two_turns() {
  conversation c;
  c.session_id = "s-1";
  c.turns.push_back({"first question", 2, 50, -1, -1});
  c.turns.push_back({"second \"quoted\" question", 3, -1, -1, 100});
  return c;
}

payload_options chat_options() {
  payload_options opts;
  // Move-assigned: assigning the literal trips GCC 12's -Wrestrict bug.
  opts.model = std::string{"m"};
  return opts;
}

} // namespace

TEST(payload, chat_first_turn_has_fixed_key_order) {
  EXPECT_EQ(build_payload(chat_options(), two_turns(), 0, {}),
            R"({"model":"m","messages":[{"role":"user","content":"first )"
            R"(question"}],"stream":false,"max_completion_tokens":50})");
}

// Verifies deltas_without_responses: earlier user turns interleaved with the
// live assistant replies, then the current turn.
TEST(payload, chat_later_turn_threads_live_replies) {
  auto opts = chat_options();
  opts.streaming = true;
  EXPECT_EQ(build_payload(opts, two_turns(), 1, {"reply one"}),
            R"({"model":"m","messages":[)"
            R"({"role":"user","content":"first question"},)"
            R"({"role":"assistant","content":"reply one"},)"
            R"({"role":"user","content":"second \"quoted\" question"}],)"
            R"("stream":true})");
}

TEST(payload, missing_replies_are_left_out) {
  EXPECT_EQ(build_payload(chat_options(), two_turns(), 1, {}),
            R"({"model":"m","messages":[)"
            R"({"role":"user","content":"first question"},)"
            R"({"role":"user","content":"second \"quoted\" question"}],)"
            R"("stream":false})");
}

TEST(payload, legacy_max_tokens_and_include_usage) {
  auto opts = chat_options();
  opts.use_legacy_max_tokens = true;
  opts.streaming = true;
  opts.include_usage = true;
  EXPECT_EQ(build_payload(opts, two_turns(), 0, {}),
            R"({"model":"m","messages":[{"role":"user","content":"first )"
            R"(question"}],"stream":true,"max_tokens":50,)"
            R"("stream_options":{"include_usage":true}})");
  opts.streaming = false; // include_usage only applies to streams
  EXPECT_EQ(build_payload(opts, two_turns(), 0, {}).find("stream_options"),
            std::string::npos);
}

TEST(payload, extra_inputs_are_appended_and_override) {
  auto opts = chat_options();
  opts.extra_inputs_json
      = R"({"ignore_eos":true,"max_completion_tokens":7,"nested":{"a":[1,2]}})";
  ASSERT_TRUE(validate(opts));
  EXPECT_EQ(build_payload(opts, two_turns(), 0, {}),
            R"({"model":"m","messages":[{"role":"user","content":"first )"
            R"(question"}],"stream":false,"ignore_eos":true,)"
            R"("max_completion_tokens":7,"nested":{"a":[1,2]}})");
}

TEST(payload, completions_joins_the_turns_into_prompt) {
  auto opts = chat_options();
  opts.endpoint = endpoint_type::completions;
  EXPECT_EQ(build_payload(opts, two_turns(), 0, {}),
            R"({"model":"m","prompt":"first question","stream":false,)"
            R"("max_completion_tokens":50})");
  EXPECT_EQ(build_payload(opts, two_turns(), 1, {"r"}),
            R"({"model":"m","prompt":"first question r second \"quoted\" )"
            R"(question","stream":false})");
}

TEST(payload, embeddings_sends_input_only) {
  auto opts = chat_options();
  opts.endpoint = endpoint_type::embeddings;
  opts.streaming = true;
  EXPECT_EQ(build_payload(opts, two_turns(), 0, {}),
            R"({"model":"m","input":["first question"]})");
}

TEST(payload, builder_reuses_its_buffer_and_matches_one_shot) {
  auto opts = chat_options();
  payload_builder builder{opts};
  const auto conv = two_turns();
  const std::string first{builder.build(conv, 0, {})};
  const std::string second{builder.build(conv, 1, {"x"})};
  EXPECT_EQ(first, build_payload(opts, conv, 0, {}));
  EXPECT_EQ(second, build_payload(opts, conv, 1, {"x"}));
}

TEST(payload, validate_names_the_bad_option) {
  payload_options opts;
  auto message = [](const payload_options& o) {
    return error_message(validate(o).error());
  };
  EXPECT_NE(message(opts).find("--model"), std::string::npos);
  opts.model = std::string{"m"};
  opts.extra_inputs_json = "[1]";
  EXPECT_NE(message(opts).find("--extra-inputs"), std::string::npos);
  opts.extra_inputs_json = "{bad";
  EXPECT_FALSE(validate(opts));
  EXPECT_TRUE(aiperf::is_error(validate(opts).error(), errc::bad_option));
  EXPECT_EQ(parse_endpoint_type("completions"), endpoint_type::completions);
  EXPECT_FALSE(parse_endpoint_type("rankings"));
}

TEST(inputs_json, holds_exact_bodies_per_turn_without_replies) {
  dataset data;
  data.conversations.push_back(two_turns());
  const auto opts = chat_options();
  const auto text = inputs_json(opts, data);
  rapidjson::Document doc;
  doc.Parse(text.c_str());
  ASSERT_FALSE(doc.HasParseError());
  const auto& entry = doc["data"][0];
  EXPECT_STREQ(entry["session_id"].GetString(), "s-1");
  ASSERT_EQ(entry["payloads"].Size(), 2u);
  EXPECT_EQ(entry["payloads"][1]["messages"].Size(), 2u); // user, user
  // The embedded body is byte-identical to what a worker would send.
  EXPECT_NE(text.find(build_payload(opts, data.conversations[0], 0, {})),
            std::string::npos);
}

TEST(inputs_json, same_seed_same_file_different_seed_different_file) {
  synthetic_options s;
  s.num_conversations = 5;
  s.isl_mean = 20;
  s.random_seed = 11;
  const auto a = inputs_json(chat_options(), generate_synthetic(s));
  const auto b = inputs_json(chat_options(), generate_synthetic(s));
  s.random_seed = 12;
  const auto c = inputs_json(chat_options(), generate_synthetic(s));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(inputs_json, writes_the_file_atomically) {
  dataset data;
  data.conversations.push_back(two_turns());
  std::string path = testing::TempDir();
  path += "dataset_inputs_test.json"; // (+= dodges a GCC 12 -Wrestrict false
                                      // positive)
  ASSERT_TRUE(write_inputs_json(path, chat_options(), data));
  std::ifstream in{path};
  std::stringstream buf;
  buf << in.rdbuf();
  std::remove(path.c_str());
  EXPECT_EQ(buf.str(), inputs_json(chat_options(), data));
  auto written
      = write_inputs_json("/nonexistent/dir/inputs.json", chat_options(), data);
  ASSERT_FALSE(written);
  EXPECT_NE(error_message(written.error()).find("/nonexistent/dir"),
            std::string::npos);
}

// A signal while inputs.json is built: nothing is written (not even a
// partial file under another name), the error says why.
TEST(inputs_json, a_set_stop_writes_nothing) {
  dataset data;
  data.conversations.push_back(two_turns());
  data.conversations.push_back(two_turns());
  std::string path = testing::TempDir();
  path += "dataset_inputs_stop_test.json";
  std::remove(path.c_str());
  std::atomic<bool> stop{true};
  auto written = write_inputs_json(path, chat_options(), data, &stop);
  ASSERT_FALSE(written);
  EXPECT_TRUE(aiperf::is_error(written.error(), errc::cancelled));
  EXPECT_FALSE(std::ifstream{path}.good());
  // The builder stops before the conversation at hand: an empty list.
  EXPECT_EQ(inputs_json(chat_options(), data, &stop).find("s-1"),
            std::string::npos);
  stop = false;
  EXPECT_EQ(inputs_json(chat_options(), data, &stop),
            inputs_json(chat_options(), data));
}
