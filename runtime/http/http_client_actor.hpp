// A typed CAF actor in front of http::client, for callers off the hot path
// (tests, the Kubernetes API client). The benchmark worker talks to the
// client directly through a response_sink instead.
#pragma once

#include "runtime/http/client.hpp"

#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace aiperf::http {

/// One request for http_client_actor.
struct http_request_msg {
  std::string method = "GET";
  /// Full URL, e.g. "http://127.0.0.1:8000/v1/models" (see parse_url).
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::int64_t timeout_ms = 0; ///< 0 = no deadline
};

/// A complete response (any status; HTTP errors are not CAF errors).
struct http_response_msg {
  int status = 0;
  std::string content_type;
  std::string body;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, http_request_msg& x) {
  return f(caf::meta::type_name("http_request_msg"), x.method, x.url,
           x.headers, x.body, x.timeout_ms);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, http_response_msg& x) {
  return f(caf::meta::type_name("http_response_msg"), x.status,
           x.content_type, x.body);
}

/// A transport failure as a caf::error: code = error_category (http::errc),
/// context = the message, then the errno / asio / OpenSSL code as an int.
[[nodiscard]] caf::error make_http_error(const error_info& err);

/// Protocol:
/// - `http_request_msg` from anyone: parses the URL (a bad URL is answered
///   at once with `errc::invalid_url` naming the URL and the fix), submits the request to the client, and replies with
///   `http_response_msg` once the whole body has arrived. A transport failure
///   (connect, tls, timeout, cancelled, protocol, io) is replied as the error
///   from make_http_error. Exactly one reply per request.
/// - Internally the I/O thread reports completion with
///   `caf::anon_send(self, done_atom, ...)`; the actor then delivers the
///   promise in its own context (never from the I/O thread: a CAF response
///   promise belongs to its actor and is not thread-safe).
/// Requests in flight when the actor exits still run to completion on the
/// client (their sinks keep the actor's handle until then).
using http_client_actor
  = caf::typed_actor<caf::replies_to<http_request_msg>::with<http_response_msg>>;

/// Spawns the adapter. `c` must outlive the actor.
[[nodiscard]] http_client_actor spawn_http_client(caf::actor_system& sys,
                                                  client& c);

} // namespace aiperf::http
