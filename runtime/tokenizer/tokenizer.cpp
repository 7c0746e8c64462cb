#include "runtime/tokenizer/tokenizer.hpp"

#include <array>
#include <bit>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

constexpr auto space_table = [] {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c)
    t[static_cast<std::size_t>(c)] = is_space(static_cast<char>(c)) ? 1 : 0;
  return t;
}();

// One branch-free step per byte: `piece` is the position inside the current
// word piece, 0 on whitespace, and a token starts wherever it becomes 1.
std::size_t count_bytes(const unsigned char* p, std::size_t n,
                        std::size_t& piece) noexcept {
  std::size_t tokens = 0;
  for (std::size_t i = 0; i < n; ++i) {
    auto next = piece == max_word_piece ? std::size_t{1} : piece + 1;
    piece = space_table[p[i]] ? 0 : next;
    tokens += piece == 1 ? 1 : 0;
  }
  return tokens;
}

constexpr std::size_t block = 64;

// std::popcount is a libgcc call without -mpopcnt; this is a few ALU ops.
constexpr std::size_t popcount64(std::uint64_t x) noexcept {
  x -= (x >> 1) & 0x5555555555555555ull;
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<std::size_t>((x * 0x0101010101010101ull) >> 56);
}

// Bit i set = byte i of the 64 at `p` is not whitespace.
std::uint64_t word_mask(const unsigned char* p) noexcept {
#if defined(__SSE2__)
  std::uint64_t spaces = 0;
  for (int k = 0; k < 4; ++k) {
    auto v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    auto blank = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
    // '\t'..'\r' are 9..13: c - 9 <= 4 unsigned.
    auto t = _mm_sub_epi8(v, _mm_set1_epi8('\t'));
    auto ctl = _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(4)), t);
    auto bits = static_cast<std::uint16_t>(
      _mm_movemask_epi8(_mm_or_si128(blank, ctl)));
    spaces |= std::uint64_t{bits} << (16 * k);
  }
  return ~spaces;
#else
  std::uint64_t words = 0;
  for (std::size_t i = 0; i < block; ++i)
    words |= std::uint64_t{space_table[p[i]] ^ 1u} << i;
  return words;
#endif
}

} // namespace

std::size_t count_tokens(std::string_view text) noexcept {
  // This runs over every response of every record, so 64 bytes go at once
  // as a bit mask: where no word piece reaches 9 bytes (ordinary text), the
  // tokens are exactly the word starts. Blocks with longer words, and the
  // tail, take the byte loop; `piece` carries the state between the two.
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto n = text.size();
  std::size_t tokens = 0;
  std::size_t piece = 0;
  std::size_t i = 0;
  for (; i + block <= n; i += block) {
    auto w = word_mask(p + i);
    // Bit j set = bytes j..j+8 are all word bytes (a run of 9 or more).
    auto run = w & (w >> 1);
    run &= run >> 2;
    run &= run >> 4;
    run &= w >> 8;
    auto lead = static_cast<std::size_t>(std::countr_one(w));
    if (run != 0 || piece + lead > max_word_piece) {
      tokens += count_bytes(p + i, block, piece);
      continue;
    }
    auto starts = w & ~((w << 1) | (piece != 0 ? 1u : 0u));
    tokens += popcount64(starts);
    // w is not all ones here, so the last run (if any) began in this block.
    piece = static_cast<std::size_t>(std::countl_one(w));
  }
  tokens += count_bytes(p + i, n - i, piece);
  // Trailing whitespace forms one token.
  if (n != 0 && space_table[p[n - 1]])
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
