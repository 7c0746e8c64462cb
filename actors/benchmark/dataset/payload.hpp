// Request bodies for OpenAI-compatible endpoints, and `inputs.json`.
//
// Bodies have a fixed key order: "model", then "messages" (chat) | "prompt"
// (completions) | "input" (embeddings), "stream", the max-tokens key,
// "stream_options", then every extra input in its own order. An extra input
// whose key is one of ours replaces it (the base key is then omitted), so
// `--extra-inputs` always wins, as in AIPerf.
#pragma once

#include "actors/benchmark/dataset/dataset.hpp"

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aiperf::dataset {

/// `--endpoint-type` values this build can format.
enum class endpoint_type { chat, completions, embeddings };

/// Parses "chat" | "completions" | "embeddings".
[[nodiscard]] std::optional<endpoint_type>
parse_endpoint_type(std::string_view name);

/// How to format a request; the caller maps its config here.
struct payload_options {
  endpoint_type endpoint = endpoint_type::chat;
  /// `--model` (the name sent in "model" for turns whose turn::model is
  /// empty).
  std::string model;
  /// `--streaming`: "stream": true.
  bool streaming = false;
  /// `--use-legacy-max-tokens`: "max_tokens" instead of
  /// "max_completion_tokens".
  bool use_legacy_max_tokens = false;
  /// "stream_options": {"include_usage": true}; only sent when streaming
  /// (AIPerf sets it for `--use-server-token-count`).
  bool include_usage = false;
  /// `--extra-inputs` as one JSON object ("" = none), merged into every body.
  std::string extra_inputs_json;
};

/// Returns bad_option naming the field and the fix when `opts` is unusable.
[[nodiscard]] caf::expected<void> validate(const payload_options& opts);

/// Builds request bodies into one reused buffer (not thread-safe: one per
/// worker). Extra inputs are parsed once, at construction.
class payload_builder {
public:
  /// `opts` must have passed validate(); unparsable extra inputs are ignored.
  explicit payload_builder(payload_options opts);
  ~payload_builder();
  payload_builder(payload_builder&&) noexcept;
  payload_builder& operator=(payload_builder&&) noexcept;

  /// Returns the body of turn `turn_index` of `conv`. Chat: earlier user
  /// turns interleaved with `assistant_replies[i]` (the live replies, AIPerf's
  /// `deltas_without_responses` mode; missing replies are left out), then
  /// the current turn. Completions: the same sequence joined with " " as
  /// "prompt". Embeddings: the current turn as "input": [text]. The view is
  /// valid until the next call.
  [[nodiscard]] std::string_view
  build(const conversation& conv, std::size_t turn_index,
        const std::vector<std::string>& assistant_replies);

  [[nodiscard]] const payload_options& options() const noexcept {
    return opts_;
  }

private:
  payload_options opts_;
  /// Extra inputs as (key, serialized JSON value), in their original order.
  std::vector<std::pair<std::string, std::string>> extras_;
  /// The reused output buffer (a RapidJSON StringBuffer, kept out of this
  /// header).
  struct buffer;
  std::unique_ptr<buffer> buffer_;
};

/// One-shot form of payload_builder::build (parses extras on every call).
[[nodiscard]] std::string
build_payload(const payload_options& opts, const conversation& conv,
              std::size_t turn_index,
              const std::vector<std::string>& assistant_replies);

/// Returns `inputs.json`: {"data":[{"session_id":..., "payloads":[body per
/// turn]}]} with each body exactly as sent. Multi-turn payloads are built
/// with NO assistant replies (they only exist at run time), so turn k's chat
/// body holds user turns 0..k. `stop`, once set (by a signal), ends the
/// building after the conversation at hand: the result is then incomplete
/// (the caller drops it). Null = never stopped.
[[nodiscard]] std::string inputs_json(const payload_options& opts,
                                      const dataset& data,
                                      const std::atomic<bool>* stop = nullptr);

/// Writes inputs_json() to `path` atomically (io::atomic_write_file, so
/// readers never see half a file). Fails with errc::io naming the path and
/// the fix, or with errc::cancelled when `stop` was set before the file was
/// written (nothing is then written).
[[nodiscard]] caf::expected<void>
write_inputs_json(const std::string& path, const payload_options& opts,
                  const dataset& data, const std::atomic<bool>* stop = nullptr);

} // namespace aiperf::dataset
