// HTTP/1.1 to one API server over Beast: TLS with the cluster CA (or
// none), client certificates, a server name to verify instead of the host,
// HTTP CONNECT through a proxy, and a keep-alive pool. Not the benchmark's
// engine (runtime/http): that one is built for one hot path, trusts one CA
// file for all endpoints and has no client certificates or proxies, while
// an API client needs per-cluster credentials in memory that an exec plugin
// may replace while it runs.
//
// Threading: a transport runs its own I/O thread; send/open_stream/
// close_stream may be called from any thread and post to it. Callbacks run
// on the I/O thread: they must be cheap and never block (the client actor
// only anon_sends them to itself).
#pragma once

#include "proto/error.hpp"

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aiperf::k8s::client {

struct transport_options {
  /// "https://host:port" or "http://host:port".
  std::string server;
  std::string ca_pem; // empty = the system trust store
  std::string client_cert_pem;
  std::string client_key_pem;
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string proxy_url; // "http://[user:pass@]proxy:port" or empty
  std::size_t max_idle_connections = 8;
};

/// One request. Headers are sent as given (Host is added).
struct http_exchange {
  std::string method = "GET";
  std::string target = "/";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  /// Deadline from the first connect attempt to the whole response (for a
  /// stream: to its headers). 0 = none.
  std::int64_t timeout_ms = 0;
};

/// What came back: a response, or why none did.
struct http_result {
  /// Empty when a response arrived; else the transport failure, naming the
  /// server ("connect to https://h:6443: Connection refused").
  std::string error;
  bool timed_out = false;
  std::int32_t status = 0;
  std::string content_type;
  std::string retry_after;           // the Retry-After header
  std::vector<std::string> warnings; // Warning headers
  std::string body;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, http_result& x) {
  return f(caf::meta::type_name("aiperf::k8s::client::http_result"), x.error,
           x.timed_out, x.status, x.content_type, x.retry_after, x.warnings,
           x.body);
}

/// The callbacks of a streamed response (a watch). Exactly one of
/// on_refused / on_end is the last call.
struct stream_handlers {
  /// Status 200 and its headers arrived; body bytes follow.
  std::function<void()> on_open;
  /// Decoded body bytes (chunked framing removed), in order.
  std::function<void(std::string_view)> on_data;
  /// Any status but 200, with its whole body; or a failure before the
  /// headers (result.error set).
  std::function<void(http_result)> on_refused;
  /// The body is over: "" when the server ended it, else why it broke
  /// ("cancelled" after close_stream).
  std::function<void(std::string)> on_end;
};

class transport_impl;
class io_runner;

class transport {
public:
  /// Builds the TLS context (a CA, certificate or key that does not parse
  /// is errc::credentials naming it) and starts the I/O thread.
  static caf::expected<std::unique_ptr<transport>> make(transport_options opts);

  /// Closes every connection, stops and joins the I/O thread. Callbacks of
  /// requests still in flight are not called.
  ~transport();
  transport(const transport&) = delete;
  transport& operator=(const transport&) = delete;

  /// Sends `ex`; `done` gets the result exactly once. A request on a
  /// reused connection that the server had closed (no response byte) is
  /// sent again once on a new connection.
  void send(http_exchange ex, std::function<void(http_result)> done);

  /// Sends `ex` on a connection of its own and streams the response body.
  /// Returns the id for close_stream.
  std::uint64_t open_stream(http_exchange ex, stream_handlers handlers);

  /// Closes stream `id`'s connection; its on_end gets "cancelled". An
  /// unknown or finished id is ignored.
  void close_stream(std::uint64_t id);

  /// True when called from the transport's I/O thread, which must not
  /// destroy it (the destructor joins that thread).
  [[nodiscard]] bool on_io_thread() const noexcept;

  /// Connections opened so far (tests: keep-alive reuse).
  [[nodiscard]] std::uint64_t connections_opened() const noexcept;

private:
  transport();
  // The I/O thread and its io_context outlive every connection: the
  // destructor joins the thread, then drops the pool, then the context
  // (which destroys the suspended coroutines and their sockets).
  std::unique_ptr<io_runner> runner_;
  std::shared_ptr<transport_impl> impl_;
};

} // namespace aiperf::k8s::client
