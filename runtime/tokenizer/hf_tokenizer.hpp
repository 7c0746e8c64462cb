// A Hugging Face `tokenizer.json` tokenizer, so that ISL/OSL of a real model
// are counted with the token IDs the model's own tokenizer produces.
//
// What is implemented follows Hugging Face's `tokenizers` library
// (huggingface/tokenizers tokenizers/src): the added vocabulary (special and
// added tokens found in the text first, leftmost-longest, as
// AddedVocabulary::find_matches does), the normalizer, the pre-tokenizer,
// the model, and for `decode` the decoder. Pre-tokenizer regexes run through
// Oniguruma, the engine the library itself uses, so every `Split` pattern has
// the same meaning. Supported (others fail `from_json` naming the type):
//   normalizers     NFC, NFD, NFKC, NFKD (ICU), Lowercase, Prepend, Replace,
//                   Strip, Sequence
//   pre-tokenizers  Split (all behaviours, invert), ByteLevel, Sequence
//   models          BPE (merges, ignore_merges, byte_fallback, unk/fuse_unk,
//                   continuing_subword_prefix, end_of_word_suffix)
//   decoders        ByteLevel, Replace, ByteFallback, Fuse, Strip, Sequence
// `encode` adds no special tokens (no post-processor): that is how ISL is
// counted.
#pragma once

#include "proto/error.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::tokenizer {

/// Why a tokenizer could not be loaded or resolved.
enum class errc : std::uint8_t {
  invalid_file = 1, // not JSON, or a field of the wrong shape
  unsupported, // a normalizer/pre-tokenizer/model/decoder type not implemented
  not_found,   // no tokenizer at any path or URL tried (all named)
  io,          // a file could not be read
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::tokenizer

AIPERF_ERROR_ENUM(aiperf::tokenizer::errc, "tokenizer")

namespace aiperf::tokenizer {

/// An immutable tokenizer; copies share the loaded tables, and every member
/// is safe to call from several threads at once.
class hf_tokenizer {
public:
  /// Parses the text of a `tokenizer.json`; `origin` (a path or URL) names
  /// it in error messages.
  [[nodiscard]] static caf::expected<hf_tokenizer>
  from_json(std::string_view json_text, std::string_view origin);

  /// Reads and parses a `tokenizer.json` file.
  [[nodiscard]] static caf::expected<hf_tokenizer>
  from_file(const std::filesystem::path& path);

  /// The token IDs of `text`, no special tokens added.
  [[nodiscard]] std::vector<std::uint32_t> encode(std::string_view text) const;

  /// The number of tokens of `text` (`encode(text).size()`).
  [[nodiscard]] std::size_t count(std::string_view text) const;

  /// The text of `ids` through the decoder; special tokens are kept.
  /// Invalid UTF-8 that byte-level tokens produce becomes U+FFFD.
  [[nodiscard]] std::string decode(std::span<const std::uint32_t> ids) const;

  /// The largest token ID plus one (model vocabulary and added tokens).
  [[nodiscard]] std::size_t vocab_size() const noexcept;

  struct impl;

private:
  explicit hf_tokenizer(std::shared_ptr<const impl> p) : impl_(std::move(p)) {}
  std::shared_ptr<const impl> impl_;
};

} // namespace aiperf::tokenizer
