// `--input-file` loaders for AIPerf's JSONL custom dataset types.
//
// Formats (one JSON object per line; blank lines are skipped):
// - single_turn: `text` (string) | `texts` (array of strings, joined with
//   " "), optional `timestamp` (ms), `delay` (ms), `session_id`,
//   `output_length`, `model` (this turn's "model", overriding --model). Lines sharing a `session_id` become the turns of one
//   conversation, in file order (as AIPerf does); lines without one are
//   conversations of their own.
// - multi_turn: `{session_id?, turns: [single_turn objects]}`.
// - mooncake_trace: `timestamp` (ms), `input_length`, optional
//   `output_length`, `hash_ids` (ints), `text_input`, `session_id`, `delay`.
//   Each hash id is a fixed block of `block_size` tokens whose text depends on
//   the id only, so traces sharing ids share prompt prefixes byte for byte.
//   `text_input`, when present, is the prompt verbatim. Lines sharing a
//   `session_id` are turns of one conversation; later turns may give a
//   `delay` instead of a `timestamp`.
// Multimodal fields (image, audio, video, messages, tools) are rejected: this
// build sends text only, and silently dropping them would skew results.
#pragma once

#include "actors/benchmark/dataset/dataset.hpp"

#include <caf/meta/type_name.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::dataset {

/// `--custom-dataset-type`.
enum class input_file_type { single_turn, multi_turn, mooncake_trace };

/// Parses "single_turn" | "multi_turn" | "mooncake_trace".
[[nodiscard]] std::optional<input_file_type>
parse_input_file_type(std::string_view name);

/// Options of the file loaders.
struct file_options {
  /// Tokens per hash block (`--isl-block-size`, mooncake default 512).
  std::uint32_t block_size = 512;
  /// Set (by a signal) to stop loading: the load then fails with
  /// errc::cancelled, whatever it read. Checked between reads of the file,
  /// per line and per MiB of a prompt being tokenized. Null = never stopped.
  const std::atomic<bool>* stop = nullptr;
};

/// One problem in an input file.
struct load_error {
  /// 1-based line number; 0 = the file as a whole.
  std::size_t line = 0;
  /// JSON path of the offending field ("timestamp", "turns[1].text"), or "".
  std::string field;
  /// What is wrong and how to fix it.
  std::string message;

  /// Returns "line N: field: message" for logs and CLI output.
  [[nodiscard]] std::string to_string() const;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, load_error& x) {
  return f(caf::meta::type_name("aiperf::dataset::load_error"), x.line,
           x.field, x.message);
}

/// At most this many load_errors are listed in an error's message (all of
/// them are in its payload).
inline constexpr std::size_t listed_load_errors = 20;

/// Parses JSONL `content` of the given type. Fails with bad_input whose
/// message lists the first listed_load_errors problems ("input file:" then
/// one "line N: field: message" per line) and whose payload is the
/// std::vector<load_error> of every problem found (one per malformed line).
[[nodiscard]] caf::expected<dataset>
parse_input_file(std::string_view content, input_file_type type,
                 const file_options& opts = {});

/// Reads and parses the file at `path`: parse_input_file's errors, the
/// message starting "--input-file <path>:". An unreadable file fails with
/// errc::io and one load_error; a stop (file_options::stop) with
/// errc::cancelled. parse_input_file stops the same way.
[[nodiscard]] caf::expected<dataset>
load_input_file(const std::string& path, input_file_type type,
                const file_options& opts = {});

/// Appends the text of hash block `id`, truncated to `tokens` tokens
/// (≤ block size): vocabulary words separated by " ", a pure function of
/// `id`, so equal ids give equal text.
void append_hash_block(std::string& out, std::uint64_t id,
                       std::uint32_t tokens);

} // namespace aiperf::dataset
