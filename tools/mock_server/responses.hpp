// The mock LLM server's request handling as pure functions: request JSON in,
// response bytes out, no sockets and no clocks. mock_server.cpp adds timing
// and I/O around them; the unit tests check the bytes directly.
//
// Decisions (also in the README-level comment of mock_server.hpp):
// - Prompt text: chat = every message's content (strings, or the `text` of
//   content parts) joined with one space; completions = `prompt` (a string, or
//   strings joined with one space; token-id arrays count one token per id).
//   Prompt tokens = the prompt text's count in parse_settings::tokenizer
//   (--tokenizer; whitespace8, tokenizer::count_tokens, when unset).
// - Output token i = tokenizer::append_token(out, seed, i), seed =
//   tokenizer::hash(prompt text) XOR --random-seed, so a client that counts
//   the concatenated content with the same tokenizer gets exactly the count.
//   Under a tokenizer.json the words are not one token each: usage's
//   completion_tokens is then that tokenizer's count of the whole output
//   text, which is what a client counting with it gets too.
// - Output length: `max_completion_tokens`, else `max_tokens`, when given
//   (exactly that many, finish_reason "length"; we never stop early, so
//   `ignore_eos` is always satisfied). Otherwise max(16, prompt tokens),
//   raised to `min_tokens`, capped at options.default_max_tokens (1000);
//   finish_reason "stop".
// - Errors are OpenAI's error object {"error":{message,type,param,code}}.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace aiperf::tokenizer {
class any_tokenizer;
}

namespace aiperf::mock_server {

/// The generation endpoints.
enum class endpoint { chat, completions, embeddings };

/// Hard limit on any requested token count, to keep one request bounded.
inline constexpr std::uint64_t max_output_tokens = 1'000'000;

/// What the handler needs from the server options to parse a request.
struct parse_settings {
  /// Accepted model names; empty accepts any model.
  std::vector<std::string> model_names;
  /// XORed into every output seed (--random-seed).
  std::uint64_t random_seed = 0;
  /// Output length when the request gives no maximum.
  std::uint64_t default_max_tokens = 1000;
  /// Embedding size when the request gives no `dimensions`.
  unsigned embedding_dims = 768;
  /// Counts prompt and usage tokens; null = whitespace8. Must outlive
  /// every parse_request call.
  const tokenizer::any_tokenizer* tokenizer = nullptr;
};

/// A validated generation request.
struct generation {
  endpoint kind = endpoint::chat;
  bool stream = false;
  bool include_usage = false;
  std::string model;
  std::uint64_t prompt_tokens = 0;
  std::uint64_t output_tokens = 0;
  /// usage.completion_tokens: output_tokens, or under a tokenizer.json its
  /// count of the output text.
  std::uint64_t completion_tokens = 0;
  std::uint64_t seed = 0;
  /// True when output_tokens came from a requested maximum.
  bool length_limited = false;
  /// Embeddings: one seed per input, base64 output, vector size.
  std::vector<std::uint64_t> input_seeds;
  bool base64 = false;
  unsigned dimensions = 768;
};

/// An HTTP error response with an OpenAI error object body.
struct api_error {
  unsigned status = 400;
  std::string body;
};

/// Builds an OpenAI error object. `param`/`code` empty -> JSON null.
[[nodiscard]] std::string error_body(std::string_view message,
                                     std::string_view type,
                                     std::string_view param = {},
                                     std::string_view code = {});

/// Validates the content type and body of a POST to `kind`.
[[nodiscard]] std::variant<generation, api_error>
parse_request(endpoint kind, std::string_view content_type,
              std::string_view body, const parse_settings& settings);

/// Appends `text` JSON-escaped (without quotes).
void append_json_escaped(std::string& out, std::string_view text);

/// Appends the SSE event for output token `i` (role on the first, finish
/// reason on the last). `stamp_ns`, when set, precedes the `data:` line as a
/// `: t=<ns>` comment line.
void append_token_event(std::string& out, const generation& g,
                        std::string_view id, std::int64_t created,
                        std::uint64_t i,
                        std::optional<std::int64_t> stamp_ns = {});

/// Appends the usage event (`"choices":[]`); only sent with include_usage.
void append_usage_event(std::string& out, const generation& g,
                        std::string_view id, std::int64_t created,
                        std::optional<std::int64_t> stamp_ns = {});

/// Appends `data: [DONE]\n\n`.
void append_done_event(std::string& out,
                       std::optional<std::int64_t> stamp_ns = {});

/// The whole SSE body of a streamed response, as sent with --fast.
[[nodiscard]] std::string
render_stream(const generation& g, std::string_view id, std::int64_t created);

/// The JSON body of a non-streamed chat or text completion.
[[nodiscard]] std::string render_completion(const generation& g,
                                            std::string_view id,
                                            std::int64_t created);

/// The JSON body of an embeddings response.
[[nodiscard]] std::string render_embeddings(const generation& g);

/// The deterministic unit vector of embedding input `seed`.
[[nodiscard]] std::vector<float> embedding_vector(std::uint64_t seed,
                                                  unsigned dimensions);

/// The `GET /v1/models` body: the configured names, or "mock-model".
[[nodiscard]] std::string render_models(const std::vector<std::string>& names);

} // namespace aiperf::mock_server
