// OpenAI-compatible mock LLM server, used by `aiperf-node mock-server` and
// embedded in `aiperf-node profile` when no --url is given.
//
// Endpoints: POST /v1/chat/completions, /v1/completions (SSE or JSON),
// /v1/embeddings; GET /v1/models, /health, /metrics. Anything else is 404
// with OpenAI's "Invalid URL (METHOD /path)" error object.
//
// Timing: token i of a response is written at start + TTFT + ITL*i, where
// start is when the request was fully read; deadlines are absolute, so there
// is no drift. A non-streamed answer (chat/completions) is written when its
// last token would have been (start + TTFT + ITL*(n-1)); embeddings after
// TTFT. --fast drops all waits and writes a whole stream with one write.
//
// --stamp-events: a streamed response carries the header
// `X-Mock-Received-Ns: <CLOCK_MONOTONIC ns>` (when the request was fully
// read: the start of its TTFT), and every SSE event (tokens, usage, [DONE])
// starts with a comment line `: t=<CLOCK_MONOTONIC ns>\n`, immediately
// before its `data:` line in the same event block, taken after the event's
// deadline passed and right before it is written. SSE clients ignore
// comment lines.
//
// --error-rate P: each generation request (after validation) fails with 500
// and an OpenAI `server_error` object with probability P%, drawn from a
// counter-based RNG seeded by --random-seed (same seed + same request order
// -> same failures).
//
// /metrics (Prometheus text):
//   aiperf_mock_requests_total{endpoint="chat|completions|embeddings|models|
//     health|metrics|other"}, aiperf_mock_responses_total{status="..."},
//   aiperf_mock_prompt_tokens_total, aiperf_mock_output_tokens_total (tokens
//   actually written), aiperf_mock_in_flight (requests being answered).
//
// --access-log FILE ('-' = stdout): one line per answered request in the
// Common Log Format, e.g.
//   10.1.0.7 - - [02/Dec/2026:20:41:07 +0000] "POST /v1/chat/completions HTTP/1.1" 200 -
// (client address, time the response ended, request line, status; the size
// is not kept). Lines are flushed one at a time, so a reader (kubectl logs)
// sees every request answered so far.
//
// --tokenizer (resolved as `profile --tokenizer` is, runtime/tokenizer
// resolve.hpp) counts usage's prompt_tokens and completion_tokens, so a run
// counting with the same tokenizer finds no difference to the server's.
#pragma once

#include "proto/error.hpp"
#include "runtime/http_server/http_server.hpp"
#include "tools/mock_server/responses.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace aiperf::tokenizer {
class any_tokenizer;
}

namespace aiperf::mock_server {

/// Why the mock server refuses its options.
enum class errc : std::uint8_t {
  bad_option = 1,  // a flag's value is out of range
  already_started, // start() was called twice
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::mock_server

// Mock server errors: a mock_server::errc and a message naming the flag and
// the fix.
AIPERF_ERROR_ENUM(aiperf::mock_server::errc, "mock")

namespace aiperf::mock_server {

/// Server settings; the CLI flags map 1:1 onto these.
struct options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8000; // 0 = ephemeral
  double ttft_ms = 20;
  double itl_ms = 5;
  bool fast = false;     // zero latency
  double error_rate = 0; // percent, 0-100
  std::uint64_t random_seed = 0;
  std::vector<std::string> model_names; // empty = any model
  bool stamp_events = false;
  unsigned workers = 1; // io threads
  std::uint64_t default_max_tokens = 1000;
  unsigned embedding_dims = 768;
  /// `--tokenizer` / `--tokenizer-revision`: what usage counts in.
  std::string tokenizer = "whitespace8";
  std::string tokenizer_revision = "main";
  /// `--access-log`: "" = none, "-" = stdout, else a file appended to.
  std::string access_log;
  /// An already loaded tokenizer used instead of loading `tokenizer` (the
  /// built-in mock of `profile` shares the run's).
  std::shared_ptr<const tokenizer::any_tokenizer> loaded_tokenizer;
};

/// Fails with bad_option naming the flag and the fix when `opts` is invalid.
[[nodiscard]] caf::expected<void> validate(const options& opts);

struct state; // counters and settings shared by the io threads

/// The mock server. Thread-safe counters; start()/stop() from one thread.
class server {
public:
  explicit server(options opts);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// Validates the options, binds and starts serving; returns the bound port.
  /// Fails with bad_option (invalid options), already_started, or the
  /// http_server::errc of a failed bind, each naming the input and the fix.
  [[nodiscard]] caf::expected<std::uint16_t> start();

  /// Graceful stop; idempotent, also run by the destructor.
  void stop();

  /// The bound port (0 before start()).
  [[nodiscard]] std::uint16_t port() const noexcept;

  /// The /metrics text, also handy for in-process checks.
  [[nodiscard]] std::string metrics_text() const;

private:
  std::shared_ptr<state> state_;
  std::unique_ptr<http_server::server> http_;
};

/// Adds the `mock-server` subcommand to `app`; when it runs, its exit code
/// (0 after SIGINT/SIGTERM, 1 if it cannot listen, 2 on invalid flags) is
/// stored in `exit_code`. `exit_code` must outlive app.parse().
void add_subcommand(CLI::App& app, int& exit_code);

/// Runs the server in the foreground until SIGINT/SIGTERM; prints
/// `mock-server listening on http://HOST:PORT` (flushed) once bound.
[[nodiscard]] int run(const options& opts);

} // namespace aiperf::mock_server
