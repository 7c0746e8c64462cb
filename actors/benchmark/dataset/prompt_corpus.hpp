// Synthetic prompt text as AIPerf makes it (ai-dynamo/aiperf
// aiperf/dataset/generator/prompt.py, PromptGenerator): the corpus is
// tokenized once with the run's tokenizer, a prompt of N tokens is the
// window of N corpus tokens at a random offset (wrapping at the end),
// decoded to text.
//
// Decoding a window and encoding the text again need not give N tokens
// back (a window may start inside a word that then merges differently, or
// end before a space the next token carried). So each prompt is re-encoded
// and the window length adjusted by the difference until the count is N
// (or, after a few tries, another offset is drawn). What is guaranteed:
//   whitespace8     exactly N, by construction (corpus pieces never merge);
//   tokenizer.json  exactly N when some window of at most 64 tries re-encodes
//                   to N; otherwise the closest text found, whose real count
//                   is what the prompt records as its ISL (never N claimed
//                   for a text that is not N tokens).
// The corpora (actors/benchmark/dataset/corpus/, sources in docs/profile.md):
//   sonnet   Shakespeare's Sonnets 1-35 but 9 and 13 (1609, public
//            domain), lines joined with one space as AIPerf joins its
//            corpus lines;
//   coding   code and tool-use transcripts written for aiperf-node, kept
//            with their newlines and indentation.
#pragma once

#include "actors/benchmark/dataset/random.hpp"
#include "proto/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::tokenizer {
class any_tokenizer;
}

namespace aiperf::dataset {

/// `--prompt-corpus`: the text synthetic prompts are cut from.
enum class prompt_corpus : std::uint8_t { sonnet, coding };

/// "sonnet" or "coding" (AIPerf's spelling).
[[nodiscard]] std::string_view to_string(prompt_corpus c) noexcept;

/// The corpus `name` selects, or none for an unknown name.
[[nodiscard]] std::optional<prompt_corpus>
parse_prompt_corpus(std::string_view name) noexcept;

/// The corpus text that gets tokenized (sonnet lines already joined).
[[nodiscard]] const std::string& corpus_text(prompt_corpus c);

/// A synthetic prompt and its token count in the generator's tokenizer.
struct prompt_text {
  std::string text;
  std::uint64_t tokens = 0;
};

/// Cuts prompts of a requested token count from a tokenized corpus. Built
/// once per dataset (the corpus is tokenized here, not per request).
class prompt_generator {
public:
  /// Tokenizes `corpus` with `tok`, which must outlive the generator.
  prompt_generator(const tokenizer::any_tokenizer& tok, prompt_corpus corpus);

  /// A prompt of `tokens` tokens (see the guarantee above); draws its
  /// offsets from `gen`, so the same stream gives the same prompts.
  [[nodiscard]] prompt_text generate(std::uint64_t tokens, rng& gen) const;

  /// Tokens in the tokenized corpus.
  [[nodiscard]] std::size_t corpus_tokens() const noexcept;

private:
  prompt_text whitespace_window(std::uint64_t tokens, rng& gen) const;
  prompt_text id_window(std::uint64_t tokens, rng& gen) const;

  const tokenizer::any_tokenizer* tok_;
  // tokenizer.json: the corpus token IDs.
  std::vector<std::uint32_t> ids_;
  // whitespace8: the corpus cut into its tokens; every piece starts with
  // its whitespace, so pieces concatenate without merging.
  std::vector<std::string_view> pieces_;
  std::string piece_text_;
};

} // namespace aiperf::dataset
