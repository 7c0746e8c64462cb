// The HTTP/1.1 client engine: the hot path of the benchmark. Its rules: one
// io_context per I/O thread, one 64 KiB read per readable socket, a
// header-light Beast basic_parser that streams decoded body bytes straight to
// the consumer, and ONE monotonic clock read per completed read, shared by
// everything parsed from that read.
//
// Memory per connection stays small so tens of thousands of mostly idle
// streams fit: a plain connection waits for readability holding no buffer,
// then reads into a 64 KiB buffer borrowed from its client's pool and gives
// it back as soon as the bytes are parsed (a partial header or chunk line
// that must wait for more bytes is copied aside). TLS connections hold their
// buffer while a read is pending (OpenSSL may buffer bytes the socket no
// longer shows as readable).
//
// Threading model: a `client` belongs to exactly one io_context (use one
// client per I/O thread; io_pool makes the threads). All connection state is
// touched only on that thread; submit()/cancel() may be called from any
// thread and post to it. Sinks are called on the I/O thread.
#pragma once

#include "runtime/http/errors.hpp"
#include "runtime/http/url.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace boost::asio {
class io_context;
} // namespace boost::asio

namespace aiperf::http {

/// Monotonic nanoseconds (CLOCK_MONOTONIC), the clock of every sink stamp.
[[nodiscard]] std::int64_t now_ns() noexcept;


/// Outcome of one request, passed to response_sink::on_complete.
struct error_info {
  error_category category = error_category::none;
  int code = 0;          ///< errno / asio / OpenSSL code when there is one
  std::string message;   ///< human readable, names the endpoint
  [[nodiscard]] bool ok() const noexcept {
    return category == error_category::none;
  }
};

/// TLS settings shared by all https endpoints of a client.
struct tls_options {
  /// Extra CA bundle (PEM) trusted in addition to the system store.
  std::string ca_file;
  /// Skips certificate and host name verification (explicit opt-in).
  bool insecure = false;
};

/// One response header, viewing the read buffer.
struct header_view {
  std::string_view name;
  std::string_view value;
};

/// Status line and headers; every view is valid only during on_headers.
struct response_head {
  int status = 0;
  std::string_view content_type;
  /// The first max_header_fields fields, in arrival order.
  std::span<const header_view> fields;
  /// Returns the value of the first field named `name` (case-insensitive).
  [[nodiscard]] std::string_view find(std::string_view name) const noexcept;
};

/// Receives the events of one request. Every callback runs ON THE I/O THREAD
/// and must be cheap and never block (it stalls every connection of that
/// thread). The sink must stay alive until on_complete has returned.
class response_sink {
public:
  virtual ~response_sink() = default;
  /// Just before the request bytes are written: the request start stamp.
  /// Called again if a stale keep-alive connection forces a transparent
  /// retry; the last call is the one that counts.
  virtual void on_send(std::int64_t ts_ns) = 0;
  /// Once, when the status line and headers have arrived.
  virtual void on_headers(const response_head& head, std::int64_t ts_ns) = 0;
  /// Decoded body bytes (chunked framing removed). `read_ts_ns` is the stamp
  /// of the socket read that delivered them.
  virtual void on_body(std::string_view bytes, std::int64_t read_ts_ns) = 0;
  /// Exactly once per submitted request, success or not; last callback.
  virtual void on_complete(const error_info& err, std::int64_t ts_ns) = 0;
};

/// A request. Moved into submit() (nothing in it is referenced afterwards),
/// or lent to submit_here() (kept alive and unchanged until on_complete).
struct request {
  endpoint ep;
  std::string method = "GET";
  std::string target = "/";                               ///< path + query
  std::vector<std::pair<std::string, std::string>> headers; ///< extra fields
  /// Fields shared by many requests (sent before `headers`): a caller that
  /// sends the same fields every time builds them once instead of copying
  /// them into each request. Never modified once submitted.
  std::shared_ptr<const std::vector<std::pair<std::string, std::string>>>
    shared_headers;
  std::string body;
  /// Deadline for connect + send + full response, counted from the moment
  /// the request gets a connection (queueing for a free one is not counted).
  /// Zero means no deadline.
  std::int64_t timeout_ms = 0;
};

/// Identifies a submitted request for cancel().
using request_id = std::uint64_t;

/// Client settings.
struct client_options {
  /// Open connections per endpoint; further requests queue (FIFO).
  std::size_t max_connections_per_endpoint = 64;
  tls_options tls;
  /// Sent as User-Agent unless the request sets one.
  std::string user_agent = "aiperf-node";
  /// Local IP addresses new connections bind to (round-robin, port chosen
  /// at connect time) before connecting; empty = the kernel picks. Each
  /// (source, destination) pair has its own ~28k ephemeral ports, so
  /// several sources lift that cap. A bad address fails every request with
  /// a `connect` error naming it.
  std::vector<std::string> source_addresses;
  /// With no source_addresses and an IPv4 loopback target: when
  /// max_connections_per_endpoint exceeds this, spread connections over
  /// 127.0.0.1 .. 127.0.0.k, k = ceil(max / this) (at most 254). 0 = never.
  std::size_t loopback_spread_per_address = 8192;
  /// Raise RLIMIT_NOFILE when the client is made (see
  /// raise_open_file_limit) to fit max_connections_per_endpoint sockets.
  bool raise_fd_limit = true;
};

/// The open-file limits after raise_open_file_limit().
struct fd_limit {
  std::uint64_t soft = 0;
  std::uint64_t hard = 0;
};

/// Raises RLIMIT_NOFILE's soft limit to the hard one; when the hard limit
/// is below `wanted`, first tries to raise it to `wanted` (works only with
/// CAP_SYS_RESOURCE). Never lowers a limit; returns the limits in effect.
fd_limit raise_open_file_limit(std::uint64_t wanted) noexcept;

/// Fields in response_head::fields; further fields are parsed but not shown.
inline constexpr std::size_t max_header_fields = 32;

/// Bytes per pooled read buffer (one read per typical response).
inline constexpr std::size_t read_buffer_size = 64 * 1024;

class client_impl;

/// HTTP/1.1 client with keep-alive connection pools per endpoint, bound to
/// one io_context. Idle connections are reused; a request sent on a reused
/// connection that the server had already closed (error before any response
/// byte) is retried once on a fresh connection, transparently.
class client {
public:
  /// `ioc` must outlive the client. Never fails: a bad `tls.ca_file`
  /// surfaces as a `tls` error on every https request, naming the file.
  client(boost::asio::io_context& ioc, client_options opts);
  /// Same with default options.
  explicit client(boost::asio::io_context& ioc);
  /// Calls shutdown().
  ~client();
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  /// Queues `req`; `sink` receives its events on the I/O thread. Thread-safe.
  /// Returns the id to pass to cancel().
  request_id submit(request req, response_sink& sink);

  /// Like submit(), but when called ON this client's I/O thread the request
  /// starts at once (on an idle connection: written before this returns)
  /// instead of queueing behind every handler already posted to the thread,
  /// which at high rates adds that whole backlog to the send lag. Its id is
  /// stored in `id_out` BEFORE the request starts, because on the I/O thread
  /// any sink callback, on_complete included, may run before this returns:
  /// the caller must not touch the sink's state afterwards. Off the I/O
  /// thread it is submit() plus the store. `req` is lent, not copied: like
  /// the sink it must stay alive and unchanged until on_complete has
  /// returned (a caller that sends request after request keeps one and
  /// refills it, so its strings keep their capacity).
  void submit_here(const request& req, response_sink& sink,
                   request_id& id_out);
  void submit_here(request&&, response_sink&, request_id&) = delete;

  /// Completes request `id` with a `cancelled` error and closes its
  /// connection (never reused). No-op if it already completed. Thread-safe.
  void cancel(request_id id);

  /// Completes every pending request with `cancelled` and closes all
  /// connections; waits for that to happen on the I/O thread unless called
  /// from it or the io_context is stopped (then it runs on the caller, so
  /// call it before io_pool::stop() or after stop() has returned, never
  /// concurrently with it). Idempotent.
  void shutdown();

  /// Connections opened so far (diagnostics, tests).
  [[nodiscard]] std::uint64_t connections_opened() const noexcept;

  /// Read buffers ever allocated by this client's pool: the peak number of
  /// reads being parsed at once, not the number of connections
  /// (diagnostics, tests).
  [[nodiscard]] std::uint64_t read_buffers_allocated() const noexcept;

private:
  std::shared_ptr<client_impl> impl_;
};

/// The nice value io_pool threads ask for. They stamp every request and
/// response, so on a busy host (the benchmark's own actor threads, a server
/// on the same machine) a nice-0 thread that holds the core delays every
/// stamp and send by up to a scheduler slice (~3 ms measured at 10k req/s on
/// 2 cores); a raised priority lets the kernel switch to them at wake-up.
inline constexpr int io_thread_nice = -10;

/// Asks the kernel to run the calling thread at `nice` (e.g. io_thread_nice).
/// Needs CAP_SYS_NICE (root, or a pod granted it) to go below 0: without
/// it the thread keeps its priority; returns whether the change applied.
bool raise_thread_priority(int nice) noexcept;

/// N threads, each running its own io_context (no shared queues, no locks on
/// the hot path). stop() lets in-flight handlers finish their current step,
/// stops every context and joins the threads.
class io_pool {
public:
  /// Starts `threads` (>= 1) threads; with `raise_priority` each asks for
  /// io_thread_nice (when allowed). Only runs that keep a send schedule
  /// (rate, trace, user-centric) want it: in a closed loop against a server
  /// on the same host, a raised client starves the server it measures
  /// (measured: 0.89x wrk's req/s at 1.48x its CPU with it, 1.06x / 1.19x
  /// without).
  explicit io_pool(std::size_t threads = 1, bool raise_priority = false);
  /// Calls stop().
  ~io_pool();
  io_pool(const io_pool&) = delete;
  io_pool& operator=(const io_pool&) = delete;

  [[nodiscard]] std::size_t size() const noexcept { return contexts_.size(); }
  /// Returns the io_context of thread `i % size()`.
  [[nodiscard]] boost::asio::io_context& context(std::size_t i) noexcept;
  /// Stops and joins all threads. Idempotent; not callable from a pool thread.
  void stop();

private:
  struct slot;
  std::vector<std::unique_ptr<slot>> contexts_;
  std::vector<std::thread> threads_;
};

} // namespace aiperf::http
