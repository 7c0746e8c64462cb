#include "runtime/tokenizer/tokenizer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

using namespace aiperf;

TEST(tokenizer, counts_words_with_leading_whitespace) {
  EXPECT_EQ(tokenizer::count_tokens(""), 0u);
  EXPECT_EQ(tokenizer::count_tokens("hello"), 1u);
  EXPECT_EQ(tokenizer::count_tokens(" hello world"), 2u);
  EXPECT_EQ(tokenizer::count_tokens("a\tb\nc\r\nd"), 4u);
}

TEST(tokenizer, splits_long_words_every_eight_bytes) {
  EXPECT_EQ(tokenizer::count_tokens("internationalization"), 3u); // 8+8+4
  EXPECT_EQ(tokenizer::count_tokens("abcdefgh"), 1u);
  EXPECT_EQ(tokenizer::count_tokens("abcdefghi"), 2u);
}

TEST(tokenizer, trailing_whitespace_is_one_token) {
  EXPECT_EQ(tokenizer::count_tokens("a b "), 3u);
  EXPECT_EQ(tokenizer::count_tokens("   "), 1u);
}

// Verifies the property the mock relies on: N generated tokens, concatenated,
// count as exactly N, for any seed.
TEST(tokenizer, generated_tokens_survive_concatenation) {
  for (std::uint64_t seed : {0ull, 7ull, 123456789ull}) {
    for (std::uint64_t n : {1ull, 2ull, 17ull, 500ull}) {
      std::string text;
      for (std::uint64_t i = 0; i < n; ++i)
        tokenizer::append_token(text, seed, i);
      EXPECT_EQ(tokenizer::count_tokens(text), n) << "seed " << seed;
    }
  }
}

TEST(tokenizer, vocabulary_words_are_single_tokens) {
  for (std::size_t i = 0; i < tokenizer::vocabulary_size(); ++i) {
    auto w = tokenizer::word(i);
    ASSERT_FALSE(w.empty());
    ASSERT_LE(w.size(), tokenizer::max_word_piece);
    EXPECT_EQ(tokenizer::count_tokens(w), 1u) << w;
  }
}

TEST(tokenizer, hash_is_stable) {
  EXPECT_EQ(tokenizer::hash(""), 1469598103934665603ULL);
  EXPECT_NE(tokenizer::hash("a"), tokenizer::hash("b"));
}

namespace {

// The plain word-by-word definition, to check the branch-free loop against.
std::size_t reference_count(std::string_view text) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
           || c == '\v';
  };
  std::size_t tokens = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && space(text[i]))
      ++i;
    if (i == text.size()) {
      ++tokens;
      break;
    }
    for (std::size_t piece = 0;
         i < text.size() && !space(text[i]) && piece < tokenizer::max_word_piece; ++piece)
      ++i;
    ++tokens;
  }
  return tokens;
}

} // namespace

TEST(tokenizer, matches_the_word_by_word_definition_on_random_text) {
  constexpr std::string_view alphabet = "ab \t\n\r\f\vxyz\xff";
  std::uint64_t state = 42;
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    auto len = (state >> 33) % 40;
    for (std::uint64_t i = 0; i < len; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      // Mostly letters so that long words (> 8 bytes) occur too.
      auto r = (state >> 33) % 100;
      text.push_back(r < 70 ? 'a' : alphabet[r % alphabet.size()]);
    }
    ASSERT_EQ(tokenizer::count_tokens(text), reference_count(text)) << '"' << text << '"';
  }
}

// The 64-byte mask path: long texts, word runs crossing block edges, words
// of every length around the 8-byte cut, every whitespace byte.
TEST(tokenizer, block_path_matches_the_definition_on_long_text) {
  constexpr std::string_view spaces = " \t\n\r\f\v";
  std::uint64_t state = 7;
  auto next = [&state](std::uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % bound;
  };
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    auto len = next(400);
    // Some rounds have only short words (the mask path), others long ones.
    auto max_word = round % 3 == 0 ? 20 : 8;
    while (text.size() < len) {
      auto gap = next(3);
      for (std::uint64_t g = 0; g < gap; ++g)
        text.push_back(spaces[next(spaces.size())]);
      auto word = 1 + next(static_cast<std::uint64_t>(max_word));
      for (std::uint64_t w = 0; w < word; ++w)
        text.push_back(next(10) == 0 ? '\xc3' : static_cast<char>('a' + next(26)));
    }
    ASSERT_EQ(tokenizer::count_tokens(text), reference_count(text)) << '"' << text << '"';
  }
}

TEST(tokenizer, block_edges) {
  // A word piece ending or continuing exactly at byte 64, 128.
  for (std::size_t pad = 50; pad < 70; ++pad)
    for (std::size_t word = 1; word <= 20; ++word) {
      std::string text(pad, 'x');
      text[0] = ' ';
      for (std::size_t k = 8; k < pad; k += 9)
        text[k] = ' ';
      text += ' ';
      text.append(word, 'y');
      text.append(70, ' ');
      text += "tail words here and more words to cross the next block edge ok";
      ASSERT_EQ(tokenizer::count_tokens(text), reference_count(text)) << '"' << text << '"';
    }
  EXPECT_EQ(tokenizer::count_tokens(std::string(64, 'a')), 8u);
  EXPECT_EQ(tokenizer::count_tokens(std::string(65, 'a')), 9u);
  EXPECT_EQ(tokenizer::count_tokens(std::string(128, ' ')), 1u);
  std::string words;
  for (int i = 0; i < 64; ++i)
    words += " token";
  EXPECT_EQ(tokenizer::count_tokens(words), 64u);
}
