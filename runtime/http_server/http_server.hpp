// A small HTTP/1.1 server on Boost.Beast/Asio for our own endpoints: the mock
// LLM server now, the API and results services later.
//
// Shape: N io threads, each with its own io_context (concurrency hint 1, so
// Asio takes no locks) and its own SO_REUSEPORT listener on the same port; the
// kernel spreads connections over them. A connection lives on one thread for
// its whole life, so handlers never need locks for per-connection state.
// One coroutine per connection: keep-alive loop of parse -> handler -> write.
//
// Responses are serialized by hand into one buffer and written with one
// async_write (headers + body), because on loopback the syscall count, not
// the bytes, is what limits requests/s. Streamed (chunked) responses coalesce
// everything that is due into one write and flush only before waiting for a
// later absolute time point, so a zero-latency stream is also one write.
#pragma once

// clang-format off
#include <utility> // first: Boost 1.74 awaitable.hpp needs std::exchange (g++ 12)
// clang-format on

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "proto/error.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::http_server {

/// Why a server could not start.
enum class errc : std::uint8_t {
  bind_failed = 1, // the address is in use or cannot be bound
  bad_config,      // the host is not an IP literal, or threads is out of range
  already_started, // start() was called twice
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::http_server

// HTTP server errors: an http_server::errc and a message naming the host/port
// or setting and the fix.
AIPERF_ERROR_ENUM(aiperf::http_server::errc, "httpserver")

namespace aiperf::http_server {

using request = boost::beast::http::request<boost::beast::http::string_body>;
using clock = std::chrono::steady_clock; // CLOCK_MONOTONIC on Linux

/// Writes one response on a connection; handed to the handler per request.
///
/// Either call send() once, or begin_chunked(), then any sequence of
/// append_chunk()/wait_until()/flush(), then end_chunked(). Bytes are
/// buffered until a flush point: send(), flush(), end_chunked(), or a
/// wait_until() whose deadline is still in the future. Not thread-safe: use it
/// only from the connection's coroutine.
class response_writer {
public:
  /// `buffer` is the connection's reusable output buffer (kept across
  /// requests so that steady-state responses allocate nothing); it must be
  /// empty and outlive the writer.
  /// `received` is when the request's last bytes reached the socket (the
  /// default: now).
  response_writer(boost::asio::ip::tcp::socket& socket,
                  boost::asio::steady_timer& timer, std::string& buffer,
                  bool keep_alive, clock::time_point received = {});

  /// When the kernel received the request's last bytes (SO_TIMESTAMPNS),
  /// or when the server read it if the kernel gave no stamp. A handler that
  /// promises latencies (the mock's TTFT) counts from here, so the time the
  /// request waited in the socket while this thread served others is part
  /// of the promised latency, as on a server whose NIC stamps arrivals.
  [[nodiscard]] clock::time_point received_at() const noexcept {
    return received_;
  }

  /// Sends a complete response (`Content-Length`) with one write.
  /// `extra_headers` are preformatted lines, each ending in "\r\n".
  boost::asio::awaitable<void> send(unsigned status,
                                    std::string_view content_type,
                                    std::string_view body,
                                    std::string_view extra_headers = {});

  /// Buffers the header of a `Transfer-Encoding: chunked` response.
  void begin_chunked(unsigned status, std::string_view content_type,
                     std::string_view extra_headers = {});

  /// Buffers `data` as one chunk (ignored when empty: an empty chunk would
  /// end the body).
  void append_chunk(std::string_view data);

  /// Flushes pending bytes if `deadline` is in the future, then waits until
  /// `deadline`. The deadline is absolute, so a schedule built from
  /// `start + offset` never accumulates drift. The timer is armed early by
  /// this io thread's measured wake-up latency (at most 100 µs) and the
  /// rest is spun, so it returns at the deadline rather than tens of µs
  /// after it.
  boost::asio::awaitable<void> wait_until(clock::time_point deadline);

  /// Writes pending bytes now.
  boost::asio::awaitable<void> flush();

  /// Buffers the last chunk and flushes.
  boost::asio::awaitable<void> end_chunked();

  /// True once a write failed (peer gone); later writes are skipped, so a
  /// handler may simply run to its end.
  [[nodiscard]] bool failed() const noexcept { return failed_; }

  /// True once a complete response has been produced.
  [[nodiscard]] bool done() const noexcept { return done_; }

  /// Whether the connection stays open after this response.
  [[nodiscard]] bool keep_alive() const noexcept { return keep_alive_; }

  /// The status of the response begun so far (0 before send()/begin_chunked()).
  [[nodiscard]] unsigned status() const noexcept { return status_; }

  /// The client's address ("10.1.0.7", "::1"); "-" when the socket has
  /// none any more (the peer reset the connection).
  [[nodiscard]] std::string peer_address() const;

private:
  void append_head(unsigned status, std::string_view content_type,
                   std::string_view extra_headers);

  boost::asio::ip::tcp::socket& socket_;
  boost::asio::steady_timer& timer_;
  std::string& out_;
  bool keep_alive_;
  clock::time_point received_;
  unsigned status_ = 0;
  bool failed_ = false;
  bool done_ = false;
};

/// Answers one request. Runs on the connection's io thread; may be called
/// concurrently from several io threads for different connections. It must
/// produce exactly one response through the writer; if it returns without
/// one, the server answers 500.
using handler
    = std::function<boost::asio::awaitable<void>(request&, response_writer&)>;

/// Listener settings.
struct options {
  /// Address to bind (IPv4 or IPv6 literal).
  std::string host = "127.0.0.1";
  /// Port to bind; 0 picks a free one (read it back from start()).
  std::uint16_t port = 0;
  /// Number of io threads, each with its own SO_REUSEPORT listener.
  unsigned threads = 1;
  /// Largest accepted request body; larger requests get 413 and a close.
  std::uint64_t body_limit = 64ull << 20;
  /// How long stop() lets in-flight responses finish before cutting them.
  std::chrono::milliseconds stop_grace{2000};
  /// Nice value the io threads ask for (0 = leave as is). A server that
  /// times its writes (the mock's TTFT/ITL) on a shared host uses a negative
  /// value so a busy neighbour does not delay its timers by a scheduler
  /// slice; going below 0 needs CAP_SYS_NICE, otherwise it is ignored.
  int thread_nice = 0;
};

/// The canonical reason phrase of an HTTP status code ("OK", "Not Found").
[[nodiscard]] std::string_view reason_phrase(unsigned status) noexcept;

/// An HTTP/1.1 server. start() binds and spawns the io threads; stop() (also
/// called by the destructor) stops accepting, closes idle connections, lets
/// busy ones finish their response within `stop_grace`, then joins.
/// start()/stop() must be called from one controlling thread.
class server {
public:
  server(options opts, handler h);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  /// Binds the listeners and starts serving; returns the bound port. Fails
  /// (with a message naming the host/port) with bad_config if the address or
  /// thread count is invalid, bind_failed if the address is in use, or
  /// already_started if called twice.
  [[nodiscard]] caf::expected<std::uint16_t> start();

  /// Graceful stop; idempotent.
  void stop();

  /// The bound port (0 before a successful start()).
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

  /// Connections currently open, over all io threads.
  [[nodiscard]] std::size_t open_connections() const noexcept {
    return connections_->load(std::memory_order_relaxed);
  }

  struct worker; // one io thread; defined in http_server.cpp

private:
  options opts_;
  handler handler_;
  std::uint16_t port_ = 0;
  bool started_ = false;
  bool stopped_ = false;
  std::shared_ptr<std::atomic<std::size_t>> connections_;
  std::vector<std::unique_ptr<worker>> workers_;
};

} // namespace aiperf::http_server
