#include "tools/mock_server/mock_server.hpp"

#include "runtime/log/log.hpp"
#include "runtime/tokenizer/resolve.hpp"

#include <boost/beast/http/field.hpp>
#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <time.h>

namespace aiperf::mock_server {

namespace http = boost::beast::http;
using http_server::clock;

namespace {

enum class counter_endpoint {
  chat,
  completions,
  embeddings,
  models,
  health,
  metrics,
  other,
  count_
};

constexpr std::array<std::string_view, 7> endpoint_names{
    "chat",   "completions", "embeddings", "models",
    "health", "metrics",     "other"};

constexpr std::array<unsigned, 5> tracked_statuses{200, 400, 404, 413, 500};

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::uint64_t mix(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Fixed-width ids keep every response of one request shape the same size
// (the nginx benchmark serves a file of exactly that size).
std::string make_id(std::string_view prefix, std::uint64_t n) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(n));
  std::string id{prefix};
  id.append(buf, 16);
  return id;
}

} // namespace

struct state {
  options opts;
  parse_settings settings;
  std::shared_ptr<const tokenizer::any_tokenizer> tok; // settings.tokenizer
  clock::duration ttft{};
  clock::duration itl{};
  std::uint64_t error_threshold = 0; // out of 1'000'000
  std::array<std::atomic<std::uint64_t>, endpoint_names.size()> requests{};
  std::array<std::atomic<std::uint64_t>, tracked_statuses.size() + 1>
      responses{};
  std::atomic<std::uint64_t> prompt_tokens{0};
  std::atomic<std::uint64_t> output_tokens{0};
  std::atomic<std::int64_t> in_flight{0};
  std::atomic<std::uint64_t> ids{0};
  std::atomic<std::uint64_t> draws{0};
  std::FILE* access_log = nullptr; // owned unless stdout
  std::mutex access_log_mutex;

  ~state() {
    if (access_log && access_log != stdout)
      std::fclose(access_log);
  }

  void log_access(const http_server::request& req,
                  const http_server::response_writer& w);

  void count_request(counter_endpoint e) {
    requests[static_cast<std::size_t>(e)].fetch_add(1,
                                                    std::memory_order_relaxed);
  }

  void count_response(unsigned status) {
    std::size_t slot = tracked_statuses.size(); // "other"
    for (std::size_t i = 0; i < tracked_statuses.size(); ++i)
      if (tracked_statuses[i] == status)
        slot = i;
    responses[slot].fetch_add(1, std::memory_order_relaxed);
  }

  bool inject_error() {
    if (error_threshold == 0)
      return false;
    auto n = draws.fetch_add(1, std::memory_order_relaxed);
    return mix(opts.random_seed ^ mix(n)) % 1'000'000 < error_threshold;
  }

  boost::asio::awaitable<void> send(http_server::response_writer& w,
                                    unsigned status, std::string_view body) {
    count_response(status);
    co_await w.send(status, "application/json", body);
  }

  boost::asio::awaitable<void> generate(endpoint kind,
                                        http_server::request& req,
                                        http_server::response_writer& w,
                                        clock::time_point start);

  boost::asio::awaitable<void> handle(http_server::request& req,
                                      http_server::response_writer& w);

  std::string metrics() const;
};

void state::log_access(const http_server::request& req,
                       const http_server::response_writer& w) {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char when[32];
  std::strftime(when, sizeof(when), "%d/%b/%Y:%H:%M:%S +0000", &tm);
  auto method = req.method_string();
  auto target = req.target();
  auto line = fmt::format("{} - - [{}] \"{} {} HTTP/{}.{}\" {} -\n", w.peer_address(), when,
                          std::string_view{method.data(), method.size()},
                          std::string_view{target.data(), target.size()},
                          req.version() / 10, req.version() % 10,
                          w.status() ? w.status() : 500);
  std::lock_guard<std::mutex> guard{access_log_mutex};
  std::fwrite(line.data(), 1, line.size(), access_log);
  std::fflush(access_log);
}

namespace {

// A coroutine with no captures: its frame owns a copy of the state pointer.
boost::asio::awaitable<void> handle_and_log(std::shared_ptr<state> st,
                                            http_server::request& req,
                                            http_server::response_writer& w) {
  co_await st->handle(req, w);
  st->log_access(req, w);
}

} // namespace

boost::asio::awaitable<void> state::generate(endpoint kind,
                                             http_server::request& req,
                                             http_server::response_writer& w,
                                             clock::time_point start) {
  auto ct = req[http::field::content_type];
  auto parsed
      = parse_request(kind, {ct.data(), ct.size()}, req.body(), settings);
  if (auto* err = std::get_if<api_error>(&parsed)) {
    co_await send(w, err->status, err->body);
    co_return;
  }
  auto& g = std::get<generation>(parsed);
  prompt_tokens.fetch_add(g.prompt_tokens, std::memory_order_relaxed);
  if (inject_error()) {
    co_await send(w, 500,
                  error_body("The server had an error while processing your "
                             "request. Sorry about that! (injected by "
                             "--error-rate)",
                             "server_error"));
    co_return;
  }
  const bool wait = !opts.fast;
  if (kind == endpoint::embeddings) {
    if (wait)
      co_await w.wait_until(start + ttft);
    co_await send(w, 200, render_embeddings(g));
    co_return;
  }
  const auto id = make_id(kind == endpoint::chat ? "chatcmpl-" : "cmpl-",
                          ids.fetch_add(1, std::memory_order_relaxed));
  const std::int64_t created = std::time(nullptr);
  if (!g.stream) {
    if (wait)
      co_await w.wait_until(start + ttft + itl * (g.output_tokens - 1));
    output_tokens.fetch_add(g.output_tokens, std::memory_order_relaxed);
    co_await send(w, 200, render_completion(g, id, created));
    co_return;
  }
  count_response(200);
  if (opts.stamp_events) {
    // When the request's last bytes reached the socket (the kernel's stamp,
    // which every TTFT/ITL deadline counts from): splits a client's TTFT
    // overhead into request path (client send -> arrival) and this server's
    // write lateness.
    std::string extra = "Cache-Control: no-cache\r\nX-Mock-Received-Ns: ";
    extra += std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                start.time_since_epoch())
                                .count());
    extra += "\r\n";
    w.begin_chunked(200, "text/event-stream", extra);
  } else {
    w.begin_chunked(200, "text/event-stream", "Cache-Control: no-cache\r\n");
  }
  if (!wait && !opts.stamp_events) {
    // The whole stream as one chunk and one write.
    w.append_chunk(render_stream(g, id, created));
    output_tokens.fetch_add(g.output_tokens, std::memory_order_relaxed);
    co_await w.end_chunked();
    co_return;
  }
  std::string event;
  event.reserve(512);
  std::uint64_t sent = 0;
  auto stamp = [&]() -> std::optional<std::int64_t> {
    if (opts.stamp_events)
      return monotonic_ns();
    return std::nullopt;
  };
  for (std::uint64_t i = 0; i < g.output_tokens && !w.failed(); ++i) {
    if (wait)
      co_await w.wait_until(start + ttft + itl * i);
    event.clear();
    append_token_event(event, g, id, created, i, stamp());
    if (i + 1 == g.output_tokens) {
      if (g.include_usage)
        append_usage_event(event, g, id, created, stamp());
      append_done_event(event, stamp());
    }
    w.append_chunk(event);
    // Each token leaves when it is due, as from a real server; the last one
    // leaves with the terminating chunk (end_chunked flushes): one write and
    // one client read less per request, and no second wake-up for "0\r\n".
    if (wait && i + 1 < g.output_tokens)
      co_await w.flush();
    ++sent;
  }
  output_tokens.fetch_add(sent, std::memory_order_relaxed);
  co_await w.end_chunked();
}

boost::asio::awaitable<void> state::handle(http_server::request& req,
                                           http_server::response_writer& w) {
  const auto start = w.received_at();
  in_flight.fetch_add(1, std::memory_order_relaxed);
  struct leave {
    std::atomic<std::int64_t>& n;
    ~leave() { n.fetch_sub(1, std::memory_order_relaxed); }
  } guard{in_flight};

  std::string_view target{req.target().data(), req.target().size()};
  if (auto q = target.find('?'); q != std::string_view::npos)
    target = target.substr(0, q);
  const auto method = req.method();
  if (method == http::verb::post) {
    if (target == "/v1/chat/completions") {
      count_request(counter_endpoint::chat);
      co_await generate(endpoint::chat, req, w, start);
      co_return;
    }
    if (target == "/v1/completions") {
      count_request(counter_endpoint::completions);
      co_await generate(endpoint::completions, req, w, start);
      co_return;
    }
    if (target == "/v1/embeddings") {
      count_request(counter_endpoint::embeddings);
      co_await generate(endpoint::embeddings, req, w, start);
      co_return;
    }
  } else if (method == http::verb::get) {
    if (target == "/health") {
      count_request(counter_endpoint::health);
      co_await send(w, 200, R"({"status":"healthy"})");
      co_return;
    }
    if (target == "/v1/models") {
      count_request(counter_endpoint::models);
      co_await send(w, 200, render_models(opts.model_names));
      co_return;
    }
    if (target == "/metrics") {
      count_request(counter_endpoint::metrics);
      count_response(200);
      co_await w.send(200, "text/plain; version=0.0.4", metrics());
      co_return;
    }
  }
  count_request(counter_endpoint::other);
  std::string message = "Invalid URL (";
  message.append(
      std::string_view{req.method_string().data(), req.method_string().size()});
  message.push_back(' ');
  message.append(target);
  message.push_back(')');
  co_await send(w, 404, error_body(message, "invalid_request_error"));
}

std::string state::metrics() const {
  std::string out;
  out.reserve(2048);
  auto line
      = [&](std::string_view name, std::string_view labels, std::uint64_t v) {
          out.append(name);
          out.append(labels);
          out.push_back(' ');
          out.append(std::to_string(v));
          out.push_back('\n');
        };
  out.append("# HELP aiperf_mock_requests_total Requests received, by "
             "endpoint.\n# TYPE aiperf_mock_requests_total counter\n");
  for (std::size_t i = 0; i < endpoint_names.size(); ++i)
    line("aiperf_mock_requests_total",
         "{endpoint=\"" + std::string{endpoint_names[i]} + "\"}",
         requests[i].load(std::memory_order_relaxed));
  out.append("# HELP aiperf_mock_responses_total Responses sent, by HTTP "
             "status.\n# TYPE aiperf_mock_responses_total counter\n");
  for (std::size_t i = 0; i <= tracked_statuses.size(); ++i)
    line("aiperf_mock_responses_total",
         i < tracked_statuses.size()
             ? "{status=\"" + std::to_string(tracked_statuses[i]) + "\"}"
             : std::string{"{status=\"other\"}"},
         responses[i].load(std::memory_order_relaxed));
  out.append("# HELP aiperf_mock_prompt_tokens_total Prompt tokens of "
             "valid generation requests.\n# TYPE "
             "aiperf_mock_prompt_tokens_total counter\n");
  line("aiperf_mock_prompt_tokens_total", "",
       prompt_tokens.load(std::memory_order_relaxed));
  out.append("# HELP aiperf_mock_output_tokens_total Output tokens written."
             "\n# TYPE aiperf_mock_output_tokens_total counter\n");
  line("aiperf_mock_output_tokens_total", "",
       output_tokens.load(std::memory_order_relaxed));
  out.append("# HELP aiperf_mock_in_flight Requests being answered.\n"
             "# TYPE aiperf_mock_in_flight gauge\n");
  line("aiperf_mock_in_flight", "",
       static_cast<std::uint64_t>(std::max<std::int64_t>(
           0, in_flight.load(std::memory_order_relaxed))));
  return out;
}

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::bad_option:
      return "bad_option";
    case errc::already_started:
      return "already_started";
  }
  return "unknown";
}

caf::expected<void> validate(const options& o) {
  if (!std::isfinite(o.ttft_ms) || o.ttft_ms < 0)
    return make_error(errc::bad_option,
                      "--ttft must be a number of milliseconds >= 0");
  if (!std::isfinite(o.itl_ms) || o.itl_ms < 0)
    return make_error(errc::bad_option,
                      "--itl must be a number of milliseconds >= 0");
  if (!std::isfinite(o.error_rate) || o.error_rate < 0 || o.error_rate > 100)
    return make_error(errc::bad_option,
                      "--error-rate must be a percentage between 0 and 100");
  if (o.workers < 1 || o.workers > 64)
    return make_error(errc::bad_option, "--workers must be between 1 and 64");
  if (o.host.empty())
    return make_error(errc::bad_option,
                      "--host must not be empty (e.g. 127.0.0.1)");
  for (const auto& m : o.model_names)
    if (m.empty())
      return make_error(
        errc::bad_option,
        "--model-names must not contain empty names (e.g. a,b)");
  if (o.default_max_tokens < 1 || o.default_max_tokens > max_output_tokens)
    return make_error(
      errc::bad_option,
      "the default output length must be between 1 and 1000000");
  if (o.embedding_dims < 1 || o.embedding_dims > 8192)
    return make_error(errc::bad_option,
                      "embedding dimensions must be between 1 and 8192");
  return caf::unit;
}

server::server(options opts) : state_(std::make_shared<state>()) {
  state_->opts = std::move(opts);
}

server::~server() {
  stop();
}

caf::expected<std::uint16_t> server::start() {
  if (auto valid = validate(state_->opts); !valid)
    return std::move(valid.error());
  if (http_)
    return make_error(errc::already_started, "mock server already started");
  auto& s = *state_;
  s.settings.model_names = s.opts.model_names;
  s.settings.random_seed = s.opts.random_seed;
  s.settings.default_max_tokens = s.opts.default_max_tokens;
  s.settings.embedding_dims = s.opts.embedding_dims;
  s.tok = s.opts.loaded_tokenizer;
  if (!s.tok && s.opts.tokenizer != tokenizer::whitespace_model_name) {
    auto loaded = tokenizer::any_tokenizer::load(s.opts.tokenizer,
                                                 s.opts.tokenizer_revision);
    if (!loaded)
      return make_error(errc::bad_option, error_message(loaded.error()));
    s.tok = std::make_shared<const tokenizer::any_tokenizer>(
        std::move(*loaded));
  }
  s.settings.tokenizer = s.tok.get();
  auto to_duration = [](double ms) {
    return std::chrono::duration_cast<clock::duration>(
        std::chrono::duration<double, std::milli>(ms));
  };
  s.ttft = to_duration(s.opts.ttft_ms);
  s.itl = to_duration(s.opts.itl_ms);
  s.error_threshold
      = static_cast<std::uint64_t>(std::llround(s.opts.error_rate * 10'000));
  http_server::options ho;
  ho.host = s.opts.host;
  ho.port = s.opts.port;
  ho.threads = s.opts.workers;
  // Timed mode: its write times are the reference the client is measured
  // against, so its timers get a raised priority (when allowed). `--fast`
  // stays at normal priority, so comparisons with nginx are even.
  ho.thread_nice = s.opts.fast ? 0 : -10;
  if (s.opts.access_log == "-") {
    s.access_log = stdout;
  } else if (!s.opts.access_log.empty() && !s.access_log) {
    s.access_log = std::fopen(s.opts.access_log.c_str(), "ae");
    if (!s.access_log)
      return make_error(errc::bad_option,
                        "--access-log " + s.opts.access_log + ": cannot open for appending ("
                            + std::strerror(errno) + "); pass a writable path or '-' for stdout");
  }
  // The handler keeps the state alive even if a connection outlives us.
  http_server::handler h;
  if (s.access_log)
    h = [st = state_](http_server::request& req, http_server::response_writer& w) {
      return handle_and_log(st, req, w);
    };
  else
    h = [st = state_](http_server::request& req, http_server::response_writer& w) {
      return st->handle(req, w);
    };
  http_ = std::make_unique<http_server::server>(ho, std::move(h));
  auto result = http_->start();
  if (!result)
    http_.reset();
  else
    log::get("mock_server")
        ->info("serving on {}:{} (ttft {} ms, itl {} ms{})", s.opts.host,
               *result, s.opts.fast ? 0 : s.opts.ttft_ms,
               s.opts.fast ? 0 : s.opts.itl_ms, s.opts.fast ? ", fast" : "");
  return result;
}

void server::stop() {
  if (http_)
    http_->stop();
}

std::uint16_t server::port() const noexcept {
  return http_ ? http_->port() : 0;
}

std::string server::metrics_text() const {
  return state_->metrics();
}

} // namespace aiperf::mock_server
