// What `--tokenizer` names, found on disk as AIPerf (through Hugging Face's
// transformers) finds it:
//   whitespace8        the mock's own token model (runtime/tokenizer
//                      tokenizer.hpp), no file at all
//   a tokenizer.json   that file
//   a directory        its tokenizer.json
//   ORG/NAME           the local Hugging Face cache, `$HF_HOME/hub` (default
//                      `~/.cache/huggingface/hub`), laid out as
//                      `models--ORG--NAME/refs/<revision>` (a commit) and
//                      `models--ORG--NAME/snapshots/<commit>/tokenizer.json`;
//                      a revision that is itself a snapshot folder name is
//                      used directly; absent there and unless
//                      HF_HUB_OFFLINE is set, downloaded into that cache
//                      (runtime/tokenizer/download.hpp).
//   builtin            AIPerf's name for tiktoken o200k_base; not shipped
//                      (see builtin_model_name), so an error saying what to
//                      pass instead.
// A name that resolves nowhere is an error listing every path and URL
// tried.
#pragma once

#include "runtime/tokenizer/hf_tokenizer.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::tokenizer {

/// The name that selects the whitespace token model.
inline constexpr std::string_view whitespace_model_name = "whitespace8";

/// AIPerf's `--tokenizer builtin` (tiktoken o200k_base). Its vocabulary is
/// not part of aiperf-node: this name is refused with the paths to pass.
inline constexpr std::string_view builtin_model_name = "builtin";

/// The `tokenizer.json` that `name` at `revision` stands for (see above).
/// `hf_home` overrides `$HF_HOME` (tests); empty reads the environment.
[[nodiscard]] caf::expected<std::filesystem::path>
find_tokenizer_json(std::string_view name, std::string_view revision = "main",
                    const std::filesystem::path& hf_home = {});

/// A tokenizer of either kind, as `--tokenizer` selects it.
class any_tokenizer {
public:
  /// Resolves and loads `name` (whitespace8 or a tokenizer.json, see
  /// find_tokenizer_json).
  [[nodiscard]] static caf::expected<any_tokenizer>
  load(std::string_view name, std::string_view revision = "main",
       const std::filesystem::path& hf_home = {});

  /// The tokens of `text` as ISL counts them (no special tokens added).
  [[nodiscard]] std::size_t count(std::string_view text) const;

  /// The token IDs of `text`; none for whitespace8, which has no IDs.
  [[nodiscard]] std::optional<std::vector<std::uint32_t>>
  encode(std::string_view text) const;

  /// The text of `ids` through the tokenizer.json's decoder; empty for
  /// whitespace8, which has no IDs.
  [[nodiscard]] std::string decode(std::span<const std::uint32_t> ids) const;

  /// True for a tokenizer.json, false for whitespace8.
  [[nodiscard]] bool has_ids() const noexcept { return hf_.has_value(); }

  /// The model's name (whitespace8) or the tokenizer.json it came from.
  [[nodiscard]] const std::string& origin() const noexcept { return origin_; }

private:
  std::optional<hf_tokenizer> hf_;
  std::string origin_;
};

/// Makes `tok` the tokenizer every ISL/OSL count of this process uses
/// (count_for_metrics). Called once at start, before any actor thread
/// exists, so reads need no lock; until then counts use whitespace8.
void set_metrics_tokenizer(any_tokenizer tok);

/// The tokens of `text` under the tokenizer set_metrics_tokenizer chose.
[[nodiscard]] std::size_t count_for_metrics(std::string_view text);

/// That tokenizer; null until set_metrics_tokenizer (whitespace8).
[[nodiscard]] const any_tokenizer* metrics_tokenizer();

/// The origin() of that tokenizer ("whitespace8" when none was set).
[[nodiscard]] std::string metrics_tokenizer_origin();

} // namespace aiperf::tokenizer
