// The targeted scanner against RapidJSON: on a corpus of real-shaped chunks
// and on mutations of it, parse() must give exactly what the DOM gives.
#include "actors/benchmark/worker/response_parser.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace {

using aiperf::proto::endpoint_kind;
using aiperf::worker::message_fields;
using aiperf::worker::response_parser;
using aiperf::worker::scan_result;

/// message_fields with owned strings (the views die with the parser call).
struct owned {
  bool valid = false;
  std::string content;
  std::string reasoning;
  bool has_usage = false;
  std::int64_t prompt = -1, completion = -1, total = -1, reasoning_tokens = -1;
  bool is_error = false;
  std::string error_message;
  bool has_embedding = false;
  bool operator==(const owned&) const = default;
};

owned own(bool valid, const message_fields& f) {
  return {valid,         std::string{f.content},    std::string{f.reasoning},
          f.has_usage,   f.usage.prompt_tokens,     f.usage.completion_tokens,
          f.usage.total_tokens, f.usage.reasoning_tokens, f.is_error,
          std::string{f.error_message}, f.has_embedding};
}

owned via_dom(std::string_view json, endpoint_kind kind) {
  response_parser p;
  message_fields f;
  auto ok = p.parse_dom(json, kind, f);
  return own(ok, f);
}

owned via_parse(std::string_view json, endpoint_kind kind) {
  response_parser p;
  message_fields f;
  auto ok = p.parse(json, kind, f);
  return own(ok, f);
}

struct sample {
  const char* json;
  endpoint_kind kind = endpoint_kind::chat;
  bool fast = true; ///< the scanner is expected to handle it itself
};

const std::vector<sample>& corpus() {
  static const std::vector<sample> c = {
    // vLLM chat chunks (role, content, finish, usage-only)
    {R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]})"},
    {R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1718000000,"model":"m","choices":[{"index":0,"delta":{"content":" Hello"},"logprobs":null,"finish_reason":null}]})"},
    {R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1718000000,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"length","stop_reason":null}]})"},
    {R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1718000000,"model":"m","choices":[],"usage":{"prompt_tokens":550,"total_tokens":700,"completion_tokens":150}})"},
    {R"({"id":"x","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}],"usage":null})"},
    // SGLang: usage with details, reasoning_content null
    {R"({"id":"9f","object":"chat.completion.chunk","created":1,"model":"default","choices":[{"index":0,"delta":{"role":null,"content":" world","reasoning_content":null,"tool_calls":null},"logprobs":null,"finish_reason":null,"matched_stop":null}],"usage":null})"},
    {R"({"id":"9f","object":"chat.completion.chunk","created":1,"model":"default","choices":[],"usage":{"prompt_tokens":12,"total_tokens":40,"completion_tokens":28,"prompt_tokens_details":null,"completion_tokens_details":{"reasoning_tokens":20}}})"},
    // TRT-LLM (pretty printed, different key order)
    {"{\n  \"choices\" : [ {\n    \"delta\" : { \"content\" : \"token\\n\" },\n    \"index\" : 0\n  } ],\n  \"model\" : \"trt\",\n  \"id\" : \"cmpl-3\"\n}\n"},
    {"{\"model\":\"trt\",\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"\\t\\\"quoted\\\" \\\\ back\"}}]}"},
    // OpenAI: content null, refusal, usage with details
    {R"({"id":"chatcmpl-A","object":"chat.completion.chunk","created":1,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":null},"logprobs":null,"finish_reason":null}],"usage":null})"},
    {R"({"id":"chatcmpl-A","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}})"},
    // reasoning models: reasoning_content (DeepSeek/vLLM) and reasoning (gpt-oss)
    {R"({"id":"r","choices":[{"index":0,"delta":{"reasoning_content":"Let me think","content":null},"finish_reason":null}]})"},
    {R"({"id":"r","choices":[{"index":0,"delta":{"content":null,"reasoning":"step 1"}}]})"},
    {R"({"id":"r","choices":[{"index":0,"delta":{"reasoning_content":"","reasoning":"fallback"}}]})"},
    {R"({"id":"r","choices":[{"index":0,"delta":{"reasoning_content":"both","reasoning":"ignored","content":"x"}}]})"},
    // non-streaming chat
    {R"({"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"The answer is 42.","reasoning_content":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}})"},
    {R"({"choices":[{"message":{"content":"m"},"delta":{"content":"d"}}]})"},
    {R"({"choices":[{"delta":null,"message":{"content":"m"}}]})"},
    // completions
    {R"({"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" once upon","logprobs":null,"finish_reason":null}]})",
     endpoint_kind::completions},
    {R"({"id":"cmpl-1","object":"text_completion","choices":[{"index":0,"text":"","finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}})",
     endpoint_kind::completions},
    {R"({"choices":[{"text":null}]})", endpoint_kind::completions},
    // unicode: raw UTF-8, BMP escapes, surrogate pairs
    {R"({"choices":[{"delta":{"content":"héllo 世界 🚀"}}]})"},
    {R"({"choices":[{"delta":{"content":"\u00e9\u4e16\ud83d\ude80\u0041"}}]})"},
    {R"({"choices":[{"delta":{"content":"nul\u0000byte \/ slash \b\f\r"}}]})"},
    // logprobs and nested arrays before the fields (skipped)
    {R"({"choices":[{"index":0,"logprobs":{"content":[{"token":"a","logprob":-0.25,"bytes":[97],"top_logprobs":[]}]},"delta":{"content":"a"}}]})"},
    {R"({"meta":[1,-2,3.5,true,false,null,{"a":[[]]}],"choices":[{"delta":{"content":"z"}},{"delta":{"content":"second"}}]})"},
    // whitespace variations
    {" \t\r\n{ \"choices\" :\n[ { \"delta\" :{\"content\":\"ws\"} } ] }\r\n"},
    // odd shapes the DOM path still answers
    {R"({"choices":"none"})"},
    {R"({"choices":[1,2]})"},
    {R"({"choices":[{"delta":{"content":5}}]})"},
    {R"({"usage":{"prompt_tokens":"7","completion_tokens":null,"total_tokens":1.5}})"},
    {R"({"usage":[]})"},
    {R"({"choices":[{"delta":{"content":"first","content":"second"}}]})"},
    {R"({"usage":{"prompt_tokens":1,"prompt_tokens":2,"total_tokens":-3}})"},
    {R"({})"},
    // duplicates of top-level keys: the first one counts
    {R"({"usage":null,"usage":{"prompt_tokens":1}})"},
    // error objects and other shapes left to RapidJSON
    {R"({"error":{"message":"The model `x` does not exist.","type":"NotFoundError","param":null,"code":404}})",
     endpoint_kind::chat, false},
    {R"({"object":"error","message":"bad","type":"BadRequestError","code":400,"error":"boom"})",
     endpoint_kind::chat, false},
    {R"({"choices":[{"delta":{"content":"lone \udc00"}}]})", endpoint_kind::chat, false},
    {R"({"usage":{"prompt_tokens":1e3}})", endpoint_kind::chat, false},
    {R"({"usage":{"prompt_tokens":-0}})", endpoint_kind::chat, false},
    {R"({"usage":{"prompt_tokens":12345678901234567890}})", endpoint_kind::chat, false},
    {R"({"ch\u006fices":[{"delta":{"content":"escaped key"}}]})", endpoint_kind::chat, false},
    {R"({"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.2]}],"usage":{"prompt_tokens":4,"total_tokens":4}})",
     endpoint_kind::embeddings, false},
    // invalid JSON: the DOM path rejects, so must parse()
    {R"({"choices":[{"delta":{"content":"unterminated}]})", endpoint_kind::chat, false},
    {R"({"choices":[{"delta":{"content":"a"}}]} trailing)", endpoint_kind::chat, false},
    {R"({"choices":[{"delta":{"content":"bad \x escape"}}]})", endpoint_kind::chat, false},
    {R"({"choices":[{"delta":{"content":"\ud83d alone"}}]})", endpoint_kind::chat, false},
    {"{\"choices\":[{\"delta\":{\"content\":\"raw\ncontrol\"}}]}", endpoint_kind::chat, false},
    {R"({"a":01})", endpoint_kind::chat, false},
    {R"([1,2])", endpoint_kind::chat, false},
    {R"(data: {"x":1})", endpoint_kind::chat, false},
    {"", endpoint_kind::chat, false},
  };
  return c;
}

TEST(response_parser, scanner_matches_dom_on_the_corpus) {
  for (auto& s : corpus()) {
    SCOPED_TRACE(s.json);
    auto dom = via_dom(s.json, s.kind);
    EXPECT_EQ(via_parse(s.json, s.kind), dom);
    response_parser p;
    message_fields f;
    auto r = p.scan(s.json, s.kind, f);
    EXPECT_EQ(r == scan_result::ok, s.fast);
    if (r == scan_result::ok) {
      EXPECT_EQ(own(true, f), dom);
    }
  }
}

TEST(response_parser, extracts_the_expected_values) {
  auto a = via_parse(
    R"({"choices":[{"delta":{"content":"\u00e9\ud83d\ude80\n\"q\""}}]})",
    endpoint_kind::chat);
  EXPECT_TRUE(a.valid);
  EXPECT_EQ(a.content, "\xC3\xA9\xF0\x9F\x9A\x80\n\"q\"");
  auto u = via_parse(
    R"({"choices":[],"usage":{"prompt_tokens":12,"total_tokens":40,"completion_tokens":28,"completion_tokens_details":{"reasoning_tokens":20}}})",
    endpoint_kind::chat);
  EXPECT_TRUE(u.has_usage);
  EXPECT_EQ(u.prompt, 12);
  EXPECT_EQ(u.completion, 28);
  EXPECT_EQ(u.total, 40);
  EXPECT_EQ(u.reasoning_tokens, 20);
  auto r = via_parse(R"({"choices":[{"delta":{"content":null,"reasoning":"hm"}}]})",
                     endpoint_kind::chat);
  EXPECT_EQ(r.content, "");
  EXPECT_EQ(r.reasoning, "hm");
  auto t = via_parse(R"({"choices":[{"text":"abc"}]})", endpoint_kind::completions);
  EXPECT_EQ(t.content, "abc");
  auto e = via_parse(R"({"error":{"message":"overloaded","code":503}})",
                     endpoint_kind::chat);
  EXPECT_TRUE(e.is_error);
  EXPECT_EQ(e.error_message, "overloaded");
  EXPECT_FALSE(via_parse("{\"choices\":", endpoint_kind::chat).valid);
}

TEST(response_parser, common_chunks_never_fall_back) {
  response_parser p;
  message_fields f;
  for (auto& s : corpus())
    if (s.fast) {
      ASSERT_TRUE(p.parse(s.json, s.kind, f)) << s.json;
    }
  EXPECT_EQ(p.fallbacks(), 0u);
}

TEST(response_parser, views_into_scratch_survive_the_whole_message) {
  // Several escaped strings in one message: the first decoded view must not
  // be invalidated by decoding the later ones.
  response_parser p;
  message_fields f;
  std::string json = R"({"choices":[{"delta":{"reasoning_content":"r\n)";
  json += std::string(300, 'x');
  json += R"(","content":"c\t)";
  json += std::string(300, 'y');
  json += R"("}}]})";
  ASSERT_TRUE(p.parse(json, endpoint_kind::chat, f));
  EXPECT_EQ(f.reasoning, "r\n" + std::string(300, 'x'));
  EXPECT_EQ(f.content, "c\t" + std::string(300, 'y'));
  EXPECT_EQ(p.fallbacks(), 0u);
}

TEST(response_parser, mutations_agree_with_dom) {
  // Truncations, byte flips and insertions of JSON-significant bytes: the
  // scanner may decline, but whatever parse() answers must be the DOM's.
  std::mt19937 rng{12345};
  const std::string alphabet = "{}[]\",:\\ u0123456789abcdefnrtule-.+E\n\x01\xc3";
  std::size_t cases = 0;
  for (auto& s : corpus()) {
    std::string base = s.json;
    for (std::size_t cut = 0; cut <= base.size(); ++cut) {
      auto t = base.substr(0, cut);
      ASSERT_EQ(via_parse(t, s.kind), via_dom(t, s.kind)) << t;
      ++cases;
    }
    if (base.empty())
      continue;
    for (int i = 0; i < 400; ++i) {
      auto m = base;
      std::uniform_int_distribution<std::size_t> pos{0, m.size() - 1};
      std::uniform_int_distribution<std::size_t> ch{0, alphabet.size() - 1};
      switch (i % 3) {
        case 0:
          m[pos(rng)] = alphabet[ch(rng)];
          break;
        case 1:
          m.insert(pos(rng), 1, alphabet[ch(rng)]);
          break;
        default:
          m.erase(pos(rng), 1);
          break;
      }
      ASSERT_EQ(via_parse(m, s.kind), via_dom(m, s.kind)) << m;
      ++cases;
    }
  }
  EXPECT_GT(cases, 20000u);
}

TEST(response_parser, template_answers_later_chunks_of_a_stream) {
  response_parser p;
  message_fields f;
  const std::string head
    = R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":)";
  const std::string tail = R"(},"logprobs":null,"finish_reason":null}]})";
  ASSERT_TRUE(p.parse(head + R"(" Hello")" + tail, endpoint_kind::chat, f));
  EXPECT_EQ(f.content, " Hello");
  EXPECT_EQ(p.template_hits(), 0u);
  ASSERT_TRUE(p.parse(head + R"(" world")" + tail, endpoint_kind::chat, f));
  EXPECT_EQ(f.content, " world");
  ASSERT_TRUE(p.parse(head + R"("\u00e9\n")" + tail, endpoint_kind::chat, f));
  EXPECT_EQ(f.content, "\xC3\xA9\n");
  ASSERT_TRUE(p.parse(head + R"("")" + tail, endpoint_kind::chat, f));
  EXPECT_EQ(f.content, "");
  EXPECT_EQ(p.template_hits(), 3u);
  // Same bytes around a string, other endpoint kind: not the template's.
  ASSERT_TRUE(p.parse(head + R"("x")" + tail, endpoint_kind::completions, f));
  EXPECT_EQ(f.content, "");
  EXPECT_EQ(p.template_hits(), 3u);
  // A usage-only chunk is scanned (it is no template itself) and leaves the
  // last template in place: the next stream's chunks still hit it.
  ASSERT_TRUE(p.parse(
    R"({"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}})",
    endpoint_kind::chat, f));
  EXPECT_TRUE(f.has_usage);
  EXPECT_EQ(f.usage.total_tokens, 3);
  EXPECT_EQ(p.template_hits(), 3u);
  ASSERT_TRUE(p.parse(head + R"(" again")" + tail, endpoint_kind::chat, f));
  EXPECT_EQ(f.content, " again");
  EXPECT_FALSE(f.has_usage);
  EXPECT_EQ(p.template_hits(), 4u);
  EXPECT_EQ(p.fallbacks(), 0u);
}

// An SSE block `data: <message>\n\n` whose message matches the template is
// taken whole: the same content as parse(), and the end of the block.
TEST(response_parser, data_block_takes_a_template_block_whole) {
  response_parser p;
  message_fields f;
  const std::string head
    = R"({"id":"c","choices":[{"index":0,"delta":{"content":)";
  const std::string tail = R"(},"finish_reason":null}]})";
  ASSERT_TRUE(p.parse(head + R"(" Hello")" + tail, endpoint_kind::chat, f));
  std::string_view content;
  auto take = [&](const std::string& bytes) -> std::ptrdiff_t {
    auto* end = p.match_data_block(bytes.data(), bytes.data() + bytes.size(),
                                   endpoint_kind::chat, content);
    return end == nullptr ? -1 : end - bytes.data();
  };
  const std::string block = "data: " + head + R"(" world")" + tail + "\n\n";
  EXPECT_EQ(take(block + "data: [DONE]\n\n"),
            static_cast<std::ptrdiff_t>(block.size()));
  EXPECT_EQ(content, " world");
  const std::string escaped = "data: " + head + R"("\u00e9\n")" + tail + "\n\n";
  EXPECT_EQ(take(escaped), static_cast<std::ptrdiff_t>(escaped.size()));
  EXPECT_EQ(content, "\xC3\xA9\n");
  EXPECT_EQ(p.template_hits(), 2u);
  // Anything the SSE rules would read differently is left to the parser.
  const std::string msg = head + R"(" x")" + tail;
  for (const std::string& other : {
         "data:" + msg + "\n\n",            // no space: still one event, but
                                             // not the shape taken here
         "data: " + msg + "\r\n\r\n",        // CRLF
         "data: " + msg + "\n",              // the blank line not read yet
         "data: " + msg + "\nid: 1\n\n",     // more fields in the block
         ": t=1\ndata: " + msg + "\n\n",     // comment first
         "event: error\ndata: " + msg + "\n\n",
         "data: " + head + "\" a\nb\"" + tail + "\n\n", // LF inside the string
         "data: " + head + R"(" x")" + tail + " \n\n", // other bytes after it
       })
    EXPECT_EQ(take(other), -1) << other;
  EXPECT_EQ(p.template_hits(), 2u);
}

// Blocks in a row, driven as the SSE parser drives the shortcut (each call
// at the block right after the last): the same takes and contents as calls
// that never chain, every untouched template block taken, and whatever is
// taken is what RapidJSON reads from that message and nothing else.
TEST(response_parser, data_blocks_in_a_row_match_one_at_a_time) {
  const std::string head
    = R"({"id":"c","choices":[{"index":0,"delta":{"content":)";
  const std::string tail = R"(},"finish_reason":null}]})";
  auto learned = [&] {
    response_parser p;
    message_fields f;
    EXPECT_TRUE(p.parse(head + R"(" x")" + tail, endpoint_kind::chat, f));
    return p;
  };
  std::mt19937 rng{4242};
  const std::string alphabet = "ax \"\\{}:,0\x01";
  const std::vector<std::string> contents = {
    R"(" w")", R"("")", R"("\n\n")", R"("\u00e9 \"q\"")", R"(" a longer piece of text")"};
  std::size_t taken = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string buffer;
    std::vector<std::size_t> starts;
    std::vector<std::string> messages; // "" for blocks that are no message
    std::vector<bool> untouched;
    auto blocks = 1 + rng() % 8;
    for (std::size_t b = 0; b < blocks; ++b) {
      starts.push_back(buffer.size());
      std::string msg = head + contents[rng() % contents.size()] + tail;
      bool pristine = true;
      switch (rng() % 5) {
        case 0: // one byte changed, inserted or removed (never a line break)
          switch (rng() % 3) {
            case 0:
              msg[rng() % msg.size()] = alphabet[rng() % alphabet.size()];
              break;
            case 1:
              msg.insert(rng() % msg.size(), 1, alphabet[rng() % alphabet.size()]);
              break;
            default:
              msg.erase(rng() % msg.size(), 1);
              break;
          }
          pristine = false;
          break;
        case 1:
          msg = R"({"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}})";
          pristine = false;
          break;
        default:
          break;
      }
      buffer += "data: " + msg + "\n\n";
      messages.push_back(msg);
      untouched.push_back(pristine);
    }
    // Sometimes the read ends inside the last block.
    bool cut = rng() % 4 == 0;
    if (cut)
      buffer.resize(starts.back() + rng() % (buffer.size() - starts.back()));
    auto next_start = [&](std::size_t at) {
      auto it = std::upper_bound(starts.begin(), starts.end(), at);
      return it == starts.end() ? buffer.size() : *it;
    };
    // As the parser calls it, then one call per block on its own copy.
    auto chained = learned();
    auto single = learned();
    std::vector<std::string> copies;
    for (std::size_t i = 0; i < starts.size() && starts[i] < buffer.size(); ++i) {
      std::string_view got;
      const char* end = chained.match_data_block(
        buffer.data() + starts[i], buffer.data() + buffer.size(),
        endpoint_kind::chat, got);
      copies.push_back(buffer.substr(starts[i]));
      std::string_view want;
      const char* want_end = single.match_data_block(
        copies.back().data(), copies.back().data() + copies.back().size(),
        endpoint_kind::chat, want);
      ASSERT_EQ(end == nullptr, want_end == nullptr) << buffer << " block " << i;
      bool last_complete = !cut || i + 1 < starts.size();
      if (untouched[i] && last_complete) {
        ASSERT_NE(end, nullptr) << buffer << " block " << i;
      }
      if (end == nullptr)
        continue;
      ++taken;
      ASSERT_EQ(std::string{got}, std::string{want});
      ASSERT_EQ(static_cast<std::size_t>(end - buffer.data()), next_start(starts[i]));
      owned expect = via_dom(messages[i], endpoint_kind::chat);
      owned only_content;
      only_content.valid = true;
      only_content.content = std::string{got};
      ASSERT_EQ(expect, only_content) << messages[i];
    }
  }
  EXPECT_GT(taken, 5000u);
}

// A template learned from a message with a line break in its bytes cannot
// describe a one-line `data:` field: blocks are left to the SSE parser.
TEST(response_parser, data_block_needs_a_one_line_template) {
  response_parser p;
  message_fields f;
  const std::string head = "{\"choices\":[{\"delta\":\n{\"content\":";
  const std::string tail = "}}]}";
  ASSERT_TRUE(p.parse(head + R"(" a")" + tail, endpoint_kind::chat, f));
  ASSERT_TRUE(p.parse(head + R"(" b")" + tail, endpoint_kind::chat, f));
  EXPECT_EQ(p.template_hits(), 1u) << "the template itself works";
  const std::string block = "data: " + head + R"(" c")" + tail + "\n\n";
  std::string_view content;
  EXPECT_EQ(p.match_data_block(block.data(), block.data() + block.size(),
                               endpoint_kind::chat, content),
            nullptr);
}

TEST(response_parser, template_never_answers_what_the_dom_would_not) {
  // One parser learns each corpus message, then sees mutations of it (and
  // of its content string): whatever parse() answers must be the DOM's.
  std::mt19937 rng{777};
  const std::string alphabet = "{}[]\",:\\ u0123456789abcdefnrtule-.+E\n\x01\xc3";
  std::size_t hits = 0;
  for (auto& s : corpus()) {
    std::string base = s.json;
    if (base.empty())
      continue;
    for (int i = 0; i < 300; ++i) {
      response_parser p;
      message_fields f;
      (void)p.parse(base, s.kind, f);
      auto m = base;
      std::uniform_int_distribution<std::size_t> pos{0, m.size() - 1};
      std::uniform_int_distribution<std::size_t> ch{0, alphabet.size() - 1};
      switch (i % 4) {
        case 0:
          m[pos(rng)] = alphabet[ch(rng)];
          break;
        case 1:
          m.insert(pos(rng), 1, alphabet[ch(rng)]);
          break;
        case 2:
          m.erase(pos(rng), 1);
          break;
        default:
          m = m.substr(0, pos(rng));
          break;
      }
      auto before = p.template_hits();
      auto ok = p.parse(m, s.kind, f);
      hits += p.template_hits() - before;
      ASSERT_EQ(own(ok, f), via_dom(m, s.kind)) << base << "\n -> " << m;
    }
  }
  // Random content strings (escapes, controls, quotes, bad UTF-16) between
  // a template's bytes.
  const std::string head = R"({"id":"c","choices":[{"index":0,"delta":{"content":")";
  const std::string tail = R"("},"finish_reason":null}]})";
  const std::string bytes = "ab\"\\/u0dD8fF\n\x01\x7f\xc3\xa9 ";
  for (int i = 0; i < 4000; ++i) {
    response_parser p;
    message_fields f;
    ASSERT_TRUE(p.parse(head + "x" + tail, endpoint_kind::chat, f));
    std::string content;
    std::uniform_int_distribution<int> len{0, 12};
    std::uniform_int_distribution<std::size_t> ch{0, bytes.size() - 1};
    for (int n = len(rng); n > 0; --n)
      content += bytes[ch(rng)];
    auto m = head + content + tail;
    auto before = p.template_hits();
    auto ok = p.parse(m, endpoint_kind::chat, f);
    hits += p.template_hits() - before;
    ASSERT_EQ(own(ok, f), via_dom(m, endpoint_kind::chat)) << m;
  }
  // Edits inside content strings keep the surrounding bytes: the template
  // path must really have been exercised.
  EXPECT_GT(hits, 1000u);
}

} // namespace

// Verifies `"error": null`, which some servers put on every chunk, is not an
// error: the chunk's content still counts.
TEST(response_parser, null_error_member_is_not_an_error) {
  response_parser parser;
  message_fields out;
  ASSERT_TRUE(parser.parse(
    R"({"choices":[{"index":0,"delta":{"content":" hi"}}],"error":null})",
    endpoint_kind::chat, out));
  EXPECT_FALSE(out.is_error);
  EXPECT_EQ(out.content, " hi");
  ASSERT_TRUE(parser.parse(R"({"error":{"message":"boom"}})",
                           endpoint_kind::chat, out));
  EXPECT_TRUE(out.is_error);
  EXPECT_EQ(out.error_message, "boom");
}
