// The built-in deterministic tokenizer shared by the mock server and by
// `profile`, so that ISL/OSL are exact when we benchmark our own mock.
//
// Definition (documented in README "Token model"):
//   whitespace = ' ', '\t', '\n', '\r', '\f', '\v' (bytes; UTF-8 passes through)
//   a token    = a (possibly empty) run of whitespace followed by 1..8
//                non-whitespace bytes (a longer word is cut every 8 bytes;
//                the pieces after the first carry no whitespace)
//   trailing whitespace that no word follows counts as one token.
// So " hello world" is 2 tokens, "internationalization" is 3 (8+8+4), and a
// text built by concatenating vocabulary tokens (" word", each ≤ 8 letters)
// has exactly as many tokens as pieces: the count survives concatenation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace aiperf::tokenizer {

/// Longest run of non-whitespace bytes that forms one token.
inline constexpr std::size_t max_word_piece = 8;

/// Returns the number of tokens in `text` (no allocation).
[[nodiscard]] std::size_t count_tokens(std::string_view text) noexcept;

/// Number of words in the built-in vocabulary.
[[nodiscard]] std::size_t vocabulary_size() noexcept;

/// Returns vocabulary word `index % vocabulary_size()` (1..8 ASCII letters).
[[nodiscard]] std::string_view word(std::uint64_t index) noexcept;

/// Returns the text of output token `i` of a response whose word sequence
/// starts at `seed`: the word, preceded by a space unless `i == 0`.
/// Appends to `out` to avoid allocations on hot paths.
void append_token(std::string& out, std::uint64_t seed, std::uint64_t i);

/// Deterministic 64-bit hash of `text` (FNV-1a), used to derive seeds.
[[nodiscard]] std::uint64_t hash(std::string_view text) noexcept;

} // namespace aiperf::tokenizer
