#include "runtime/tokenizer/tokenizer.hpp"

#include <array>
#include <cstdint>

namespace aiperf::tokenizer {

namespace {

constexpr bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
         || c == '\v';
}

// Common English words (all ≤ 8 letters) so that prompts read like text.
constexpr std::array<std::string_view, 128> vocabulary{
  "the",     "of",      "and",     "to",      "in",      "a",       "is",
  "that",    "for",     "it",      "as",      "was",     "with",    "be",
  "by",      "on",      "not",     "he",      "this",    "are",     "or",
  "his",     "from",    "at",      "which",   "but",     "have",    "an",
  "had",     "they",    "you",     "were",    "their",   "one",     "all",
  "we",      "can",     "her",     "has",     "there",   "been",    "if",
  "more",    "when",    "will",    "would",   "who",     "so",      "no",
  "time",    "people",  "world",   "year",    "way",     "day",     "man",
  "thing",   "woman",   "life",    "child",   "house",   "school",  "state",
  "family",  "student", "group",   "country", "problem", "hand",    "part",
  "place",   "case",    "week",    "company", "system",  "program", "question",
  "work",    "number",  "night",   "point",   "home",    "water",   "room",
  "mother",  "area",    "money",   "story",   "fact",    "month",   "lot",
  "right",   "study",   "book",    "eye",     "job",     "word",    "business",
  "issue",   "side",    "kind",    "head",    "service", "friend",  "father",
  "power",   "hour",    "game",    "line",    "end",     "member",  "law",
  "car",     "city",    "name",    "team",    "minute",  "idea",    "kid",
  "body",    "back",    "parent",  "face",    "others",  "level",   "office",
  "door",    "health",
};

} // namespace

std::size_t count_tokens(std::string_view text) noexcept {
  // One branch-free step per byte (this runs for every response of every
  // record): `piece` is the position inside the current word piece, 0 on
  // whitespace, and a token starts wherever it becomes 1.
  static constexpr auto space_table = [] {
    std::array<std::uint8_t, 256> t{};
    for (int c = 0; c < 256; ++c)
      t[static_cast<std::size_t>(c)] = is_space(static_cast<char>(c)) ? 1 : 0;
    return t;
  }();
  std::size_t tokens = 0;
  std::size_t piece = 0;
  for (unsigned char c : text) {
    auto next = piece == max_word_piece ? std::size_t{1} : piece + 1;
    piece = space_table[c] ? 0 : next;
    tokens += piece == 1 ? 1 : 0;
  }
  // Trailing whitespace forms one token.
  if (!text.empty() && space_table[static_cast<unsigned char>(text.back())])
    ++tokens;
  return tokens;
}

std::size_t vocabulary_size() noexcept {
  return vocabulary.size();
}

std::string_view word(std::uint64_t index) noexcept {
  return vocabulary[index % vocabulary.size()];
}

void append_token(std::string& out, std::uint64_t seed, std::uint64_t i) {
  if (i != 0)
    out.push_back(' ');
  // A multiplicative step keeps neighbouring tokens from repeating.
  out.append(word(seed + i * 37));
}

std::uint64_t hash(std::string_view text) noexcept {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

} // namespace aiperf::tokenizer
