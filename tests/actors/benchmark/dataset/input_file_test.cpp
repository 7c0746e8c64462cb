#include "actors/benchmark/dataset/input_file.hpp"
#include "runtime/tokenizer/tokenizer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace aiperf;
using namespace aiperf::dataset;

namespace {

// The load_errors of a failed load (none on success).
std::vector<load_error>
errors_of(const caf::expected<aiperf::dataset::dataset>& r) {
  if (r)
    return {};
  if (const auto* errors = error_payload<std::vector<load_error>>(r.error()))
    return *errors;
  ADD_FAILURE() << "no load_error payload: " << error_message(r.error());
  return {};
}

// Returns the single error of `content`, failing the test if there is not
// exactly one.
load_error only_error(std::string_view content, input_file_type type) {
  auto r = parse_input_file(content, type);
  EXPECT_FALSE(r);
  auto errors = errors_of(r);
  EXPECT_EQ(errors.size(), 1u);
  if (errors.empty())
    return {};
  return errors.front();
}

constexpr auto single = input_file_type::single_turn;
constexpr auto multi = input_file_type::multi_turn;
constexpr auto mooncake = input_file_type::mooncake_trace;

} // namespace

// ---- single_turn -----------------------------------------------------------

TEST(single_turn, parses_text_texts_and_optional_fields) {
  auto r = parse_input_file(
      "{\"text\": \"hello world\"}\n"
      "\n"
      "{\"texts\": [\"a b\", \"c\"], \"output_length\": 12, \"delay\": 30}\r\n",
      single);
  ASSERT_TRUE(r) << error_message(r.error());
  const auto& convs = r->conversations;
  ASSERT_EQ(convs.size(), 2u);
  EXPECT_EQ(convs[0].turns[0].text, "hello world");
  EXPECT_EQ(convs[0].turns[0].input_tokens, 2u);
  EXPECT_EQ(convs[0].turns[0].max_output_tokens, -1);
  EXPECT_EQ(convs[1].turns[0].text, "a b c"); // pieces joined with " "
  EXPECT_EQ(convs[1].turns[0].input_tokens, 3u);
  EXPECT_EQ(convs[1].turns[0].max_output_tokens, 12);
  EXPECT_EQ(convs[1].turns[0].delay_ms, 30);
  EXPECT_EQ(convs[1].session_id, "line-3");
  EXPECT_FALSE(r->has_timestamps);
}

TEST(single_turn, groups_lines_by_session_id_in_file_order) {
  auto r = parse_input_file("{\"session_id\": \"s1\", \"text\": \"one\"}\n"
                            "{\"session_id\": \"s2\", \"text\": \"other\"}\n"
                            "{\"session_id\": \"s1\", \"text\": \"two\"}\n",
                            single);
  ASSERT_TRUE(r);
  const auto& convs = r->conversations;
  ASSERT_EQ(convs.size(), 2u);
  EXPECT_EQ(convs[0].session_id, "s1");
  ASSERT_EQ(convs[0].turns.size(), 2u);
  EXPECT_EQ(convs[0].turns[1].text, "two");
  EXPECT_EQ(convs[1].session_id, "s2");
}

TEST(single_turn, timestamps_on_every_line_set_has_timestamps) {
  auto r = parse_input_file("{\"text\": \"a\", \"timestamp\": 0}\n"
                            "{\"text\": \"b\", \"timestamp\": 250}\n",
                            single);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->has_timestamps);
  EXPECT_EQ(r->conversations[1].turns[0].timestamp_ms, 250);
}

TEST(single_turn, bad_json_names_the_line_and_column) {
  auto e
      = only_error("{\"text\": \"ok\"}\n{\"text\": \"unterminated}\n", single);
  EXPECT_EQ(e.line, 2u);
  EXPECT_NE(e.message.find("invalid JSON"), std::string::npos);
}

TEST(input_file, invalid_utf8_names_the_line_and_column) {
  // A lone continuation byte, an overlong '/', a surrogate, a code point
  // above U+10FFFF and a truncated sequence: each line is rejected.
  const std::vector<std::string> bad = {
      "\x80", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82"};
  std::string content = "{\"text\": \"ok\"}\n";
  for (const auto& b : bad)
    content += "{\"text\": \"x" + b + "\"}\n";
  auto r = parse_input_file(content, single);
  ASSERT_FALSE(r);
  auto errors = errors_of(r);
  ASSERT_EQ(errors.size(), bad.size());
  for (std::size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ(errors[i].line, i + 2);
    EXPECT_NE(errors[i].message.find("invalid UTF-8 at column 12"),
              std::string::npos)
        << errors[i].message;
  }
}

TEST(input_file, valid_multibyte_text_is_kept) {
  const std::string text = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xEF\xBF\xBD";
  auto r = parse_input_file("{\"text\": \"" + text + "\"}\n", single);
  ASSERT_TRUE(r) << error_message(r.error());
  EXPECT_EQ(r->conversations[0].turns[0].text, text);
}

TEST(input_file, invalid_utf8_on_disk_names_the_file_and_line) {
  std::string path = testing::TempDir();
  path += "dataset_utf8_test.jsonl";
  {
    std::ofstream out{path, std::ios::binary};
    out << "{\"text\": \"fine\"}\n{\"text\": \"bad \xFF\"}\n";
  }
  auto r = load_input_file(path, single);
  std::remove(path.c_str());
  ASSERT_FALSE(r);
  auto msg = error_message(r.error());
  EXPECT_NE(msg.find("--input-file " + path), std::string::npos) << msg;
  EXPECT_NE(msg.find("line 2: invalid UTF-8"), std::string::npos) << msg;
  auto errors = errors_of(r);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 2u);
}

TEST(single_turn, non_object_line_is_an_error) {
  auto e = only_error("[1, 2]\n", single);
  EXPECT_EQ(e.line, 1u);
  EXPECT_NE(e.message.find("JSON object"), std::string::npos);
}

TEST(single_turn, missing_text_names_the_field_and_the_fix) {
  auto e = only_error("{\"timestamp\": 5}\n", single);
  EXPECT_EQ(e.line, 1u);
  EXPECT_EQ(e.field, "text");
  EXPECT_NE(e.message.find("add \"text\""), std::string::npos);
}

TEST(single_turn, wrong_types_are_errors) {
  EXPECT_EQ(only_error("{\"text\": 5}", single).field, "text");
  EXPECT_EQ(only_error("{\"texts\": \"x\"}", single).field, "texts");
  EXPECT_EQ(only_error("{\"texts\": [\"x\", 3]}", single).field, "texts[1]");
  EXPECT_EQ(only_error("{\"text\": \"x\", \"timestamp\": \"5\"}", single).field,
            "timestamp");
  EXPECT_EQ(
      only_error("{\"text\": \"x\", \"output_length\": 1.5}", single).field,
      "output_length");
  EXPECT_EQ(only_error("{\"text\": \"x\", \"session_id\": 3}", single).field,
            "session_id");
  EXPECT_EQ(only_error("{\"text\": \"x\", \"texts\": [\"y\"]}", single).field,
            "texts");
}

TEST(single_turn, negative_values_are_errors) {
  auto e = only_error("{\"text\": \"x\", \"output_length\": -4}", single);
  EXPECT_EQ(e.field, "output_length");
  EXPECT_NE(e.message.find("negative"), std::string::npos);
  EXPECT_EQ(only_error("{\"text\": \"x\", \"delay\": -1}", single).field,
            "delay");
  EXPECT_EQ(only_error("{\"text\": \"x\", \"timestamp\": -10}", single).field,
            "timestamp");
}

// Lengths above 1M tokens would build GBs of prompt text before a send.
TEST(input_file, lengths_above_a_million_tokens_are_errors) {
  struct length_case {
    std::string line;
    input_file_type type;
    std::string field;
  };
  for (const auto& c : std::vector<length_case>{
           {R"({"timestamp": 0, "input_length": 2147483647})", mooncake,
            "input_length"},
           {R"({"timestamp": 0, "input_length": 5, "output_length": 1000001})",
            mooncake, "output_length"},
           {R"({"text": "x", "output_length": 1000001})", single,
            "output_length"}}) {
    SCOPED_TRACE(c.line);
    auto e = only_error(c.line, c.type);
    EXPECT_EQ(e.line, 1u);
    EXPECT_EQ(e.field, c.field);
    EXPECT_NE(e.message.find("1000000"), std::string::npos) << e.message;
  }
  EXPECT_TRUE(parse_input_file(R"({"timestamp": 0, "input_length": 1000000})",
                               mooncake));
}

TEST(single_turn, multimodal_fields_are_rejected) {
  auto e = only_error("{\"text\": \"x\", \"image\": \"a.png\"}", single);
  EXPECT_EQ(e.field, "image");
}

TEST(input_file, every_bad_line_is_reported) {
  auto r = parse_input_file("{\"text\": 1}\n{\"text\": \"ok\"}\nnot json\n",
                            single);
  EXPECT_FALSE(r);
  auto errors = errors_of(r);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].line, 1u);
  EXPECT_EQ(errors[1].line, 3u);
  EXPECT_EQ(errors[0].to_string().rfind("line 1: text: ", 0), 0u);
}

TEST(input_file, the_message_lists_the_first_errors_and_counts_the_rest) {
  std::string content;
  for (std::size_t i = 0; i < listed_load_errors + 5; ++i)
    content += "{\"text\": 1}\n";
  auto r = parse_input_file(content, single);
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), errc::bad_input));
  const auto msg = error_message(r.error());
  EXPECT_EQ(msg.rfind("input file:\n  line 1: text: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("\n  line 20: text: "), std::string::npos) << msg;
  EXPECT_EQ(msg.find("line 21:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\n  ... and 5 more"), std::string::npos) << msg;
  EXPECT_EQ(errors_of(r).size(), listed_load_errors + 5);
}

TEST(input_file, empty_file_is_an_error) {
  for (std::string_view content : {"", "\n\n  \n"}) {
    auto e = only_error(content, single);
    EXPECT_EQ(e.line, 0u);
    EXPECT_NE(e.message.find("no JSON lines"), std::string::npos);
  }
}

TEST(input_file, unreadable_path_is_an_error_naming_it) {
  auto r = load_input_file("/nonexistent/dir/x.jsonl", single);
  auto errors = errors_of(r);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("/nonexistent/dir/x.jsonl"),
            std::string::npos);
}

TEST(input_file, loads_from_disk) {
  std::string path = testing::TempDir();
  path += "dataset_input_test.jsonl"; // (+= dodges a GCC 12 -Wrestrict false
                                      // positive)
  {
    std::ofstream out{path};
    out << "{\"text\": \"from disk\"}\n";
  }
  auto r = load_input_file(path, single);
  std::remove(path.c_str());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->conversations[0].turns[0].text, "from disk");
}

TEST(input_file, parses_type_names) {
  EXPECT_EQ(parse_input_file_type("mooncake_trace"), mooncake);
  EXPECT_EQ(parse_input_file_type("multi_turn"), multi);
  EXPECT_EQ(parse_input_file_type("single_turn"), single);
  EXPECT_FALSE(parse_input_file_type("bailian_trace"));
}

// ---- multi_turn ------------------------------------------------------------

TEST(multi_turn, parses_sessions_with_turns) {
  auto r = parse_input_file(
      "{\"session_id\": \"abc\", \"turns\": [{\"text\": \"hi\"}, "
      "{\"text\": \"more please\", \"delay\": 1000, \"output_length\": 8}]}\n"
      "{\"turns\": [{\"texts\": [\"x\"]}]}\n",
      multi);
  ASSERT_TRUE(r) << error_message(r.error());
  const auto& convs = r->conversations;
  ASSERT_EQ(convs.size(), 2u);
  EXPECT_EQ(convs[0].session_id, "abc");
  ASSERT_EQ(convs[0].turns.size(), 2u);
  EXPECT_EQ(convs[0].turns[1].delay_ms, 1000);
  EXPECT_EQ(convs[0].turns[1].input_tokens, 2u);
  EXPECT_EQ(convs[0].turns[1].max_output_tokens, 8);
  EXPECT_EQ(convs[1].session_id, "line-2");
}

TEST(multi_turn, missing_or_empty_turns_is_an_error) {
  EXPECT_EQ(only_error("{\"session_id\": \"a\"}", multi).field, "turns");
  EXPECT_EQ(only_error("{\"turns\": []}", multi).field, "turns");
  EXPECT_EQ(only_error("{\"turns\": {}}", multi).field, "turns");
}

TEST(multi_turn, bad_turn_names_its_index) {
  auto e = only_error(
      "{\"turns\": [{\"text\": \"ok\"}, {\"text\": \"x\", \"delay\": -5}]}",
      multi);
  EXPECT_EQ(e.field, "turns[1].delay");
  EXPECT_EQ(only_error("{\"turns\": [\"str\"]}", multi).field, "turns[0]");
}

// ---- mooncake_trace --------------------------------------------------------

TEST(mooncake_trace, prompt_has_exactly_input_length_tokens) {
  auto r = parse_input_file(
      "{\"timestamp\": 0, \"input_length\": 1000, \"output_length\": 20, "
      "\"hash_ids\": [1, 2]}\n"
      "{\"timestamp\": 7, \"input_length\": 512, \"hash_ids\": [3]}\n"
      "{\"timestamp\": 9, \"input_length\": 1, \"hash_ids\": [4]}\n",
      mooncake);
  ASSERT_TRUE(r) << error_message(r.error());
  const auto& convs = r->conversations;
  ASSERT_EQ(convs.size(), 3u);
  EXPECT_EQ(tokenizer::count_tokens(convs[0].turns[0].text), 1000u);
  EXPECT_EQ(convs[0].turns[0].input_tokens, 1000u);
  EXPECT_EQ(convs[0].turns[0].max_output_tokens, 20);
  EXPECT_EQ(tokenizer::count_tokens(convs[1].turns[0].text), 512u);
  EXPECT_EQ(tokenizer::count_tokens(convs[2].turns[0].text), 1u);
  EXPECT_EQ(convs[1].turns[0].max_output_tokens, -1);
  EXPECT_EQ(convs[1].turns[0].timestamp_ms, 7);
  EXPECT_TRUE(r->has_timestamps);
}

// Verifies what makes mooncake traces useful for KV-cache tests: shared hash
// ids produce byte-identical prompt prefixes, different ids do not.
TEST(mooncake_trace, shared_hash_ids_share_prefixes_byte_for_byte) {
  auto r = parse_input_file(
      "{\"timestamp\": 0, \"input_length\": 1300, \"hash_ids\": [46, 47, 48]}\n"
      "{\"timestamp\": 1, \"input_length\": 1100, \"hash_ids\": [46, 47, 99]}\n"
      "{\"timestamp\": 2, \"input_length\": 600, \"hash_ids\": [50, 47]}\n",
      mooncake);
  ASSERT_TRUE(r) << error_message(r.error());
  const auto& a = r->conversations[0].turns[0].text;
  const auto& b = r->conversations[1].turns[0].text;
  const auto& c = r->conversations[2].turns[0].text;
  std::string two_blocks;
  append_hash_block(two_blocks, 46, 512);
  two_blocks.push_back(' ');
  append_hash_block(two_blocks, 47, 512);
  EXPECT_EQ(tokenizer::count_tokens(two_blocks), 1024u);
  EXPECT_EQ(a.compare(0, two_blocks.size(), two_blocks), 0);
  EXPECT_EQ(b.compare(0, two_blocks.size(), two_blocks), 0);
  EXPECT_NE(a.substr(two_blocks.size()), b.substr(two_blocks.size()));
  std::string block50;
  append_hash_block(block50, 50, 512);
  EXPECT_NE(c.substr(0, 200), a.substr(0, 200));
  EXPECT_EQ(c.compare(0, block50.size(), block50), 0);
}

TEST(mooncake_trace, block_text_depends_on_the_id_only) {
  std::string x, y, z;
  append_hash_block(x, 123, 512);
  append_hash_block(y, 123, 100);
  append_hash_block(z, 124, 512);
  EXPECT_EQ(x.compare(0, y.size(), y), 0); // truncation is a prefix
  EXPECT_NE(x, z);
  EXPECT_EQ(tokenizer::count_tokens(y), 100u);
}

TEST(mooncake_trace, input_length_must_fit_the_hash_blocks) {
  auto too_long = only_error(
      "{\"timestamp\": 0, \"input_length\": 1025, \"hash_ids\": [1, 2]}",
      mooncake);
  EXPECT_EQ(too_long.field, "hash_ids");
  EXPECT_NE(too_long.message.find("(n-1)*512 < input_length <= n*512"),
            std::string::npos);
  auto too_short = only_error(
      "{\"timestamp\": 0, \"input_length\": 512, \"hash_ids\": [1, 2]}",
      mooncake);
  EXPECT_EQ(too_short.field, "hash_ids");
  EXPECT_EQ(
      only_error("{\"timestamp\": 0, \"input_length\": 5, \"hash_ids\": []}",
                 mooncake)
          .field,
      "hash_ids");
}

TEST(mooncake_trace, block_size_option_changes_the_block) {
  file_options opts;
  opts.block_size = 16;
  auto r = parse_input_file(
      "{\"timestamp\": 0, \"input_length\": 40, \"hash_ids\": [1, 2, 3]}\n",
      mooncake, opts);
  ASSERT_TRUE(r) << error_message(r.error());
  EXPECT_EQ(r->conversations[0].turns[0].input_tokens, 40u);
}

TEST(mooncake_trace, without_hash_ids_generates_input_length_tokens) {
  const std::string line = "{\"timestamp\": 3, \"input_length\": 77}\n";
  auto a = parse_input_file(line, mooncake);
  auto b = parse_input_file(line, mooncake);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->conversations[0].turns[0].input_tokens, 77u);
  EXPECT_EQ(a->conversations[0].turns[0].text,
            b->conversations[0].turns[0].text);
}

TEST(mooncake_trace, text_input_is_used_verbatim) {
  auto r = parse_input_file(
      "{\"timestamp\": 0, \"text_input\": \"tell me a story\", "
      "\"output_length\": 3}",
      mooncake);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->conversations[0].turns[0].text, "tell me a story");
  EXPECT_EQ(r->conversations[0].turns[0].input_tokens, 4u);
}

TEST(mooncake_trace, sessions_group_and_later_turns_may_use_delay) {
  auto r = parse_input_file(
      "{\"session_id\": \"u\", \"timestamp\": 10, \"input_length\": 5}\n"
      "{\"session_id\": \"u\", \"delay\": 200, \"input_length\": 6}\n",
      mooncake);
  ASSERT_TRUE(r) << error_message(r.error());
  ASSERT_EQ(r->conversations.size(), 1u);
  const auto& turns = r->conversations[0].turns;
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[1].delay_ms, 200);
  EXPECT_EQ(turns[1].timestamp_ms, -1);
  EXPECT_TRUE(r->has_timestamps);
}

TEST(mooncake_trace, missing_required_fields_are_errors) {
  auto no_ts = only_error("{\"input_length\": 5}", mooncake);
  EXPECT_EQ(no_ts.field, "timestamp");
  auto no_len = only_error("{\"timestamp\": 5}", mooncake);
  EXPECT_EQ(no_len.field, "input_length");
  EXPECT_EQ(
      only_error("{\"timestamp\": 0, \"input_length\": -3}", mooncake).field,
      "input_length");
  EXPECT_EQ(
      only_error("{\"timestamp\": 0, \"input_length\": \"3\"}", mooncake).field,
      "input_length");
  EXPECT_EQ(only_error("{\"timestamp\": 0, \"input_length\": 5, "
                       "\"output_length\": -1}",
                       mooncake)
                .field,
            "output_length");
  EXPECT_EQ(only_error("{\"timestamp\": 0, \"input_length\": 5, "
                       "\"hash_ids\": [1, -2]}",
                       mooncake)
                .field,
            "hash_ids");
  EXPECT_EQ(only_error("{\"timestamp\": 0, \"input_length\": 600, "
                       "\"hash_ids\": [1, \"b\"]}",
                       mooncake)
                .field,
            "hash_ids[1]");
}

// ---- stop (SIGINT/SIGTERM while loading)
// --------------------------------------

namespace {

// One small valid file of each type.
const std::pair<input_file_type, const char*> every_type[] = {
    {single, "{\"text\": \"one two\"}\n{\"text\": \"three\"}\n"},
    {multi, "{\"session_id\": \"s\", \"turns\": [{\"text\": \"a\"}, {\"text\": "
            "\"b\"}]}\n"},
    {mooncake, "{\"timestamp\": 0, \"input_length\": 8}\n{\"timestamp\": 5, "
               "\"input_length\": 3}\n"},
};

} // namespace

TEST(input_file_stop, a_set_stop_cancels_every_type) {
  std::atomic<bool> stop{true};
  file_options opts;
  opts.stop = &stop;
  for (auto [type, content] : every_type) {
    SCOPED_TRACE(content);
    auto r = parse_input_file(content, type, opts);
    ASSERT_FALSE(r);
    EXPECT_TRUE(is_error(r.error(), errc::cancelled));
    EXPECT_NE(error_message(r.error()).find("nothing was exported"),
              std::string::npos);
    // Not a bad input: no line is blamed.
    EXPECT_EQ(error_payload<std::vector<load_error>>(r.error()), nullptr);
  }
}

TEST(input_file_stop, an_unset_stop_loads_as_without_one) {
  std::atomic<bool> stop{false};
  file_options opts;
  opts.stop = &stop;
  for (auto [type, content] : every_type) {
    SCOPED_TRACE(content);
    auto with = parse_input_file(content, type, opts);
    auto without = parse_input_file(content, type);
    ASSERT_TRUE(with && without);
    ASSERT_EQ(with->conversations.size(), without->conversations.size());
    for (std::size_t c = 0; c < with->conversations.size(); ++c)
      EXPECT_EQ(with->conversations[c].turns.size(),
                without->conversations[c].turns.size());
  }
}

TEST(input_file_stop, load_input_file_stops_before_reading) {
  auto path = (std::filesystem::temp_directory_path()
               / ("aiperf-input-stop-" + std::to_string(::getpid()) + ".jsonl"))
                  .string();
  {
    std::ofstream out{path};
    out << every_type[0].second;
  }
  std::atomic<bool> stop{true};
  file_options opts;
  opts.stop = &stop;
  auto r = load_input_file(path, single, opts);
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), errc::cancelled));
  EXPECT_NE(error_message(r.error()).find("--input-file " + path),
            std::string::npos);
  stop = false;
  auto loaded = load_input_file(path, single, opts);
  ASSERT_TRUE(loaded) << error_message(loaded.error());
  EXPECT_EQ(loaded->conversations.size(), 2u);
  std::remove(path.c_str());
}

// Prompts are tokenized in slices of 1 MiB (so a stop lands between them);
// the count must be the one of the whole text.
TEST(input_file_stop, sliced_tokenization_counts_as_the_whole_text) {
  std::string words;
  for (std::size_t i = 0; words.size() < (std::size_t{5} << 20); ++i) {
    words += std::string(1 + i % 3, i % 7 == 0 ? '\t' : ' ');
    words += std::string(1 + (i * 7) % 19,
                         static_cast<char>('a' + i % 26)); // some > 8 bytes
  }
  const std::string one_word(std::size_t{3} << 20, 'x');
  const std::string spaces
      = "lead" + std::string(std::size_t{3} << 20, ' ') + "tail  ";
  std::atomic<bool> stop{false};
  file_options opts;
  opts.stop = &stop;
  const std::vector<const std::string*> texts{&words, &one_word, &spaces};
  for (const auto* text : texts) {
    auto line = "{\"text\": \"" + *text + "\"}\n";
    // JSON needs the tab escaped.
    for (std::size_t at = line.find('\t'); at != std::string::npos;
         at = line.find('\t', at))
      line.replace(at, 1, "\\t");
    auto r = parse_input_file(line, single, opts);
    ASSERT_TRUE(r) << error_message(r.error());
    EXPECT_EQ(r->conversations[0].turns[0].input_tokens,
              tokenizer::count_tokens(*text));
  }
}
