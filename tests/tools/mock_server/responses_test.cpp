// Request handling without sockets: request JSON in, response bytes out.
#include "runtime/tokenizer/resolve.hpp"
#include "runtime/tokenizer/tokenizer.hpp"
#include "tools/mock_server/responses.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <cstdio>

using namespace aiperf;
using namespace aiperf::mock_server;

namespace {

constexpr std::string_view json = "application/json";

generation parse_ok(endpoint kind, std::string_view body,
                    const parse_settings& s = {}) {
  auto r = parse_request(kind, json, body, s);
  if (auto* e = std::get_if<api_error>(&r)) {
    ADD_FAILURE() << "unexpected error " << e->status << ": " << e->body;
    return {};
  }
  return std::get<generation>(r);
}

api_error parse_err(endpoint kind, std::string_view body,
                    std::string_view ct = json, const parse_settings& s = {}) {
  auto r = parse_request(kind, ct, body, s);
  if (!std::holds_alternative<api_error>(r)) {
    ADD_FAILURE() << "expected an error for " << body;
    return {};
  }
  return std::get<api_error>(r);
}

rapidjson::Document parse_json(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

// Splits an SSE body into the payloads of its data: lines.
std::vector<std::string> data_lines(std::string_view sse) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < sse.size()) {
    auto end = sse.find("\n\n", pos);
    EXPECT_NE(end, std::string_view::npos) << "unterminated event";
    if (end == std::string_view::npos)
      break;
    auto event = sse.substr(pos, end - pos);
    EXPECT_EQ(event.substr(0, 6), "data: ") << event;
    out.emplace_back(event.substr(6));
    pos = end + 2;
  }
  return out;
}

const std::string chat_body
    = R"({"model":"m","messages":[{"role":"system","content":"be brief"},)"
      R"({"role":"user","content":[{"type":"text","text":"hello world"}]}],)"
      R"("max_completion_tokens":5,"stream":true,)"
      R"("stream_options":{"include_usage":true}})";

} // namespace

TEST(mock_responses, chat_prompt_is_message_contents_joined_by_one_space) {
  auto g = parse_ok(endpoint::chat, chat_body);
  EXPECT_EQ(g.prompt_tokens, tokenizer::count_tokens("be brief hello world"));
  EXPECT_EQ(g.seed, tokenizer::hash("be brief hello world"));
  EXPECT_EQ(g.output_tokens, 5u);
  EXPECT_TRUE(g.length_limited);
  EXPECT_TRUE(g.stream);
  EXPECT_TRUE(g.include_usage);
  EXPECT_EQ(g.model, "m");
}

TEST(mock_responses, random_seed_changes_the_output_seed) {
  parse_settings s;
  s.random_seed = 42;
  auto g = parse_ok(endpoint::chat, chat_body, s);
  EXPECT_EQ(g.seed, tokenizer::hash("be brief hello world") ^ 42u);
}

TEST(mock_responses, stream_bytes_follow_the_openai_chunk_format) {
  auto g = parse_ok(endpoint::chat, chat_body);
  auto sse = render_stream(g, "chatcmpl-1", 1700000000);
  auto events = data_lines(sse);
  ASSERT_EQ(events.size(), 5u + 2u); // tokens, usage, [DONE]
  EXPECT_EQ(events.back(), "[DONE]");
  std::string content;
  for (std::size_t i = 0; i < 5; ++i) {
    auto d = parse_json(events[i]);
    EXPECT_STREQ(d["object"].GetString(), "chat.completion.chunk");
    EXPECT_STREQ(d["id"].GetString(), "chatcmpl-1");
    EXPECT_EQ(d["created"].GetInt64(), 1700000000);
    const auto& c = d["choices"][0];
    EXPECT_EQ(c["delta"].HasMember("role"), i == 0);
    if (i == 4)
      EXPECT_STREQ(c["finish_reason"].GetString(), "length");
    else
      EXPECT_TRUE(c["finish_reason"].IsNull());
    content += c["delta"]["content"].GetString();
  }
  EXPECT_EQ(tokenizer::count_tokens(content), 5u);
  std::string expected;
  for (std::uint64_t i = 0; i < 5; ++i)
    tokenizer::append_token(expected, g.seed, i);
  EXPECT_EQ(content, expected);
  auto usage = parse_json(events[5]);
  EXPECT_TRUE(usage["choices"].IsArray() && usage["choices"].Empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"].GetUint64(), 5u);
  EXPECT_EQ(usage["usage"]["prompt_tokens"].GetUint64(), g.prompt_tokens);
  EXPECT_EQ(usage["usage"]["total_tokens"].GetUint64(), g.prompt_tokens + 5);
  EXPECT_EQ(usage["usage"]["completion_tokens_details"]["reasoning_tokens"]
                .GetUint64(),
            0u);
}

TEST(mock_responses, usage_chunk_only_with_include_usage) {
  auto g = parse_ok(
      endpoint::chat,
      R"({"model":"m","messages":[{"content":"x"}],"max_tokens":2,"stream":true})");
  auto events = data_lines(render_stream(g, "id", 1));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2], "[DONE]");
}

TEST(mock_responses, stamp_is_a_comment_line_before_data) {
  auto g = parse_ok(endpoint::chat, chat_body);
  std::string out;
  append_token_event(out, g, "id", 1, 0, 123456789);
  EXPECT_EQ(out.substr(0, 14), ": t=123456789\n");
  EXPECT_EQ(out.substr(14, 6), "data: ");
  std::string done;
  append_done_event(done, 5);
  EXPECT_EQ(done, ": t=5\ndata: [DONE]\n\n");
}

TEST(mock_responses, text_completion_stream_uses_text_field) {
  auto g = parse_ok(
      endpoint::completions,
      R"({"model":"m","prompt":"once upon","max_tokens":3,"stream":true})");
  auto events = data_lines(render_stream(g, "cmpl-1", 1));
  ASSERT_EQ(events.size(), 4u);
  std::string text;
  for (int i = 0; i < 3; ++i) {
    auto d = parse_json(events[i]);
    EXPECT_STREQ(d["object"].GetString(), "text_completion");
    text += d["choices"][0]["text"].GetString();
  }
  EXPECT_EQ(tokenizer::count_tokens(text), 3u);
}

TEST(mock_responses, non_streaming_chat_and_completion_bodies) {
  auto g = parse_ok(
      endpoint::chat,
      R"({"model":"m","messages":[{"content":"a b c"}],"max_tokens":4})");
  auto d = parse_json(render_completion(g, "chatcmpl-2", 3));
  EXPECT_STREQ(d["object"].GetString(), "chat.completion");
  EXPECT_STREQ(d["choices"][0]["message"]["role"].GetString(), "assistant");
  EXPECT_EQ(tokenizer::count_tokens(
                d["choices"][0]["message"]["content"].GetString()),
            4u);
  EXPECT_STREQ(d["choices"][0]["finish_reason"].GetString(), "length");
  EXPECT_EQ(d["usage"]["prompt_tokens"].GetUint64(), 3u);
  auto c = parse_ok(endpoint::completions,
                    R"({"model":"m","prompt":["a b","c"],"max_tokens":2})");
  EXPECT_EQ(c.prompt_tokens, 3u);
  auto cd = parse_json(render_completion(c, "cmpl-2", 3));
  EXPECT_STREQ(cd["object"].GetString(), "text_completion");
  EXPECT_EQ(tokenizer::count_tokens(cd["choices"][0]["text"].GetString()), 2u);
}

TEST(mock_responses, output_length_without_maximum_is_deterministic) {
  // max(16, prompt tokens), raised to min_tokens, capped at 1000.
  auto short_prompt = parse_ok(
      endpoint::chat, R"({"model":"m","messages":[{"content":"hi"}]})");
  EXPECT_EQ(short_prompt.output_tokens, 16u);
  EXPECT_FALSE(short_prompt.length_limited);
  std::string words;
  for (int i = 0; i < 40; ++i)
    words += " w";
  auto longer
      = parse_ok(endpoint::chat, R"({"model":"m","messages":[{"content":")"
                                     + words + R"("}]})");
  EXPECT_EQ(longer.output_tokens, 40u);
  auto min = parse_ok(
      endpoint::chat,
      R"({"model":"m","messages":[{"content":"hi"}],"min_tokens":100,"ignore_eos":true})");
  EXPECT_EQ(min.output_tokens, 100u);
  parse_settings s;
  s.default_max_tokens = 20;
  auto capped = parse_ok(
      endpoint::chat,
      R"({"model":"m","messages":[{"content":")" + words + R"("}]})", s);
  EXPECT_EQ(capped.output_tokens, 20u);
  auto g = parse_ok(endpoint::chat,
                    R"({"model":"m","messages":[{"content":"hi"}]})");
  auto d = parse_json(render_completion(g, "x", 1));
  EXPECT_STREQ(d["choices"][0]["finish_reason"].GetString(), "stop");
}

TEST(mock_responses, max_completion_tokens_wins_over_max_tokens) {
  auto g = parse_ok(
      endpoint::chat,
      R"({"model":"m","messages":[{"content":"x"}],"max_tokens":9,"max_completion_tokens":7,"min_tokens":3})");
  EXPECT_EQ(g.output_tokens, 7u);
}

TEST(mock_responses, bad_input_gets_openai_error_objects) {
  auto check = [](const api_error& e, unsigned status, std::string_view code) {
    EXPECT_EQ(e.status, status);
    auto d = parse_json(e.body);
    ASSERT_TRUE(d.HasMember("error"));
    EXPECT_TRUE(d["error"]["message"].IsString());
    EXPECT_TRUE(d["error"]["type"].IsString());
    if (code.empty())
      EXPECT_TRUE(d["error"]["code"].IsNull());
    else
      EXPECT_EQ(std::string_view{d["error"]["code"].GetString()}, code);
  };
  check(parse_err(endpoint::chat, "{not json"), 400, "");
  check(parse_err(endpoint::chat, chat_body, "text/plain"), 400, "");
  check(parse_err(endpoint::chat, chat_body, ""), 400, "");
  check(parse_err(endpoint::chat, "[1,2]"), 400, "");
  check(parse_err(endpoint::chat, R"({"messages":[{"content":"x"}]})"), 400,
        "missing_required_parameter");
  check(parse_err(endpoint::chat, R"({"model":"m"})"), 400,
        "missing_required_parameter");
  check(parse_err(endpoint::chat, R"({"model":"m","messages":[]})"), 400,
        "invalid_type");
  check(
      parse_err(endpoint::chat, R"({"model":"m","messages":[{"content":5}]})"),
      400, "invalid_type");
  check(
      parse_err(endpoint::chat,
                R"({"model":"m","messages":[{"content":"x"}],"max_tokens":0})"),
      400, "integer_out_of_range");
  check(parse_err(
            endpoint::chat,
            R"({"model":"m","messages":[{"content":"x"}],"max_tokens":-3})"),
        400, "invalid_type");
  check(
      parse_err(endpoint::chat,
                R"({"model":"m","messages":[{"content":"x"}],"stream":"yes"})"),
      400, "invalid_type");
  check(parse_err(endpoint::completions, R"({"model":"m","prompt":{}})"), 400,
        "invalid_type");
  check(parse_err(endpoint::embeddings,
                  R"({"model":"m","input":"x","encoding_format":"hex"})"),
        400, "invalid_value");
  parse_settings s;
  s.model_names = {"a", "b"};
  check(parse_err(endpoint::chat,
                  R"({"model":"c","messages":[{"content":"x"}]})", json, s),
        404, "model_not_found");
  EXPECT_EQ(parse_ok(endpoint::chat,
                     R"({"model":"b","messages":[{"content":"x"}]})", s)
                .model,
            "b");
}

TEST(mock_responses, content_type_may_carry_parameters) {
  auto r = parse_request(endpoint::chat, "Application/JSON; charset=utf-8",
                         R"({"model":"m","messages":[{"content":"x"}]})", {});
  EXPECT_TRUE(std::holds_alternative<generation>(r));
}

TEST(mock_responses, model_name_is_escaped_in_json) {
  auto g = parse_ok(
      endpoint::chat,
      R"({"model":"a\"b\\c","messages":[{"content":"x"}],"max_tokens":1})");
  auto d = parse_json(render_completion(g, "x", 1));
  EXPECT_STREQ(d["model"].GetString(), "a\"b\\c");
}

TEST(mock_responses, embeddings_are_deterministic_unit_vectors) {
  auto g = parse_ok(endpoint::embeddings,
                    R"({"model":"e","input":["one two","three"]})");
  EXPECT_EQ(g.prompt_tokens, 3u);
  auto d = parse_json(render_embeddings(g));
  ASSERT_EQ(d["data"].Size(), 2u);
  const auto& v = d["data"][0]["embedding"];
  ASSERT_EQ(v.Size(), 768u);
  double norm = 0;
  for (const auto& x : v.GetArray())
    norm += x.GetDouble() * x.GetDouble();
  EXPECT_NEAR(norm, 1.0, 1e-4);
  EXPECT_EQ(d["data"][1]["index"].GetInt(), 1);
  EXPECT_EQ(d["usage"]["prompt_tokens"].GetUint64(), 3u);
  EXPECT_EQ(embedding_vector(7, 16), embedding_vector(7, 16));
  EXPECT_NE(embedding_vector(7, 16), embedding_vector(8, 16));
}

TEST(mock_responses, embeddings_base64_is_little_endian_float32) {
  auto g = parse_ok(
      endpoint::embeddings,
      R"({"model":"e","input":"x","encoding_format":"base64","dimensions":3})");
  auto d = parse_json(render_embeddings(g));
  std::string b64 = d["data"][0]["embedding"].GetString();
  EXPECT_EQ(b64.size(), 16u); // 12 bytes -> 16 base64 characters
  auto v = embedding_vector(g.input_seeds[0], 3);
  // Decode the first 4 bytes (first 8 chars hold 6 bytes) and compare.
  auto val = [](char c) -> std::uint32_t {
    std::string_view a
        = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    return static_cast<std::uint32_t>(a.find(c));
  };
  std::uint32_t bits = 0;
  std::uint64_t acc = 0;
  for (int i = 0; i < 8; ++i)
    acc = (acc << 6) | val(b64[i]);
  // acc holds 48 bits: bytes b0..b5, big-endian order in the stream.
  unsigned char bytes[6];
  for (int i = 0; i < 6; ++i)
    bytes[i] = static_cast<unsigned char>(acc >> (40 - 8 * i));
  bits = bytes[0] | (bytes[1] << 8) | (bytes[2] << 16)
         | (static_cast<std::uint32_t>(bytes[3]) << 24);
  float f;
  std::memcpy(&f, &bits, 4);
  EXPECT_EQ(f, v[0]);
}

TEST(mock_responses, models_list) {
  auto d = parse_json(render_models({"a", "b"}));
  ASSERT_EQ(d["data"].Size(), 2u);
  EXPECT_STREQ(d["data"][1]["id"].GetString(), "b");
  auto any = parse_json(render_models({}));
  EXPECT_STREQ(any["data"][0]["id"].GetString(), "mock-model");
}

namespace {

// A byte-level tokenizer.json without merges: every byte of printable ASCII
// is one token ("Ġ" is the space), so counts differ from whitespace8's.
std::string bytes_tokenizer_file() {
  std::string vocab = R"("\u0120": 0)";
  for (int c = 33, id = 1; c < 127; ++c, ++id) {
    std::string ch(1, static_cast<char>(c));
    if (ch == "\"" || ch == "\\")
      ch = "\\" + ch;
    vocab += ", \"" + ch + "\": " + std::to_string(id);
  }
  auto path = ::testing::TempDir() + "mock_bytes_tokenizer.json";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fprintf(f,
               R"({"normalizer": null, "pre_tokenizer": {"type": "ByteLevel",
  "add_prefix_space": false, "trim_offsets": false, "use_regex": true},
  "decoder": {"type": "ByteLevel"}, "model": {"type": "BPE", "vocab": {%s},
  "merges": []}})",
               vocab.c_str());
  std::fclose(f);
  return path;
}

} // namespace

// Verifies --tokenizer: usage counts the prompt and the output text in that
// tokenizer, so a client counting with it finds no difference.
TEST(mock_responses, usage_counts_in_the_configured_tokenizer) {
  auto tok = tokenizer::any_tokenizer::load(bytes_tokenizer_file());
  ASSERT_TRUE(tok) << error_message(tok.error());
  parse_settings s;
  s.tokenizer = &*tok;
  auto g = parse_ok(endpoint::chat,
                    R"({"model":"m","max_tokens":12,)"
                    R"("messages":[{"role":"user","content":"hello big world"}]})",
                    s);
  EXPECT_EQ(g.prompt_tokens, 15u); // 15 bytes, one token each
  EXPECT_EQ(g.output_tokens, 12u); // the requested length in words
  auto d = parse_json(render_completion(g, "chatcmpl-t", 1));
  std::string content = d["choices"][0]["message"]["content"].GetString();
  EXPECT_EQ(d["usage"]["completion_tokens"].GetUint64(), tok->count(content));
  EXPECT_GT(tok->count(content), 12u); // words are several bytes
  EXPECT_EQ(d["usage"]["prompt_tokens"].GetUint64(), 15u);
  EXPECT_EQ(d["usage"]["total_tokens"].GetUint64(), 15u + tok->count(content));
  // Without a tokenizer: whitespace8, one word one token.
  auto plain = parse_ok(endpoint::chat,
                        R"({"model":"m","max_tokens":12,)"
                        R"("messages":[{"role":"user","content":"hello big world"}]})");
  EXPECT_EQ(plain.prompt_tokens, 3u);
  EXPECT_EQ(plain.completion_tokens, 12u);
}
