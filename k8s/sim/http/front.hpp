// The simulated API server's HTTP/HTTPS front: a codec between kubectl-style
// HTTP requests and the store actor (k8s/sim/store). It owns nothing of the
// API's semantics; every answer about objects comes from the store, so the
// actor interface and the wire can never disagree.
//
// Per request: authenticate (Authorization: Bearer <token> ->
// (authenticate_atom, token) on the store; over plain HTTP a request without
// a token is the administrator, as on an insecure port; over HTTPS it is
// system:anonymous), read Impersonate-User/Impersonate-Group, parse the
// target (k8s::request_of: a path that names no resource is the plain-text
// `404 page not found` of Go's http.NotFound), take `as=Table` from Accept,
// apply a matching fault (faults.hpp), ask the store, and write the answer:
// the object, list or Table with its code, `Warning: 299 - "..."` headers,
// or the Status body of the error. Every answer carries an `Audit-ID` header
// equal to the auditID of its audit event.
//
// Non-resource paths: /healthz, /readyz, /livez answer "ok"; /api, /apis,
// /api/v1, /apis/<g>[/<v>], /version and /openapi/... go to the store as
// (discovery_atom, path) (/openapi/v2 is served as application/octet-stream,
// an empty protobuf document kubectl accepts).
//
// Watches are streamed chunked as kube-apiserver does (200,
// Content-Type: application/json): one JSON event followed by "\n" per
// event, everything the store delivered in one message flushed in one write.
// A watch the store ends normally gets the terminating chunk; a dropped one
// (drop_watches_atom, the restart fault, a transport error) loses its
// connection without it, as when an API server goes away.
//
// /sim/v1/... (the fault routes, never audited; admin only over HTTPS):
//   POST /sim/v1/faults {fault}          -> 201 {"id":"f1"}
//   DELETE /sim/v1/faults/{id}           -> 200 {} | 404 Status
//   POST /sim/v1/watches:drop {"resource":"configmaps"}? -> 200 {"dropped":N}
//   POST /sim/v1/apiserver:restart {"downSeconds":3,"keepState":true}
//        -> 200; then the listener closes, every connection is reset, the
//        store resets (reset_atom) and the listener reopens on the same
//        port after downSeconds.
#pragma once

#include "k8s/sim/http/faults.hpp"
#include "k8s/sim/http/tls.hpp"
#include "k8s/sim/store/store.hpp"
#include "proto/error.hpp"

#include <caf/fwd.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace aiperf::k8s::sim::http {

struct front_options {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0; // 0 = ephemeral; read it back from start()
  /// Serve HTTPS with this identity; plain HTTP when unset.
  std::optional<tls_identity> tls;
  /// The administrator's bearer token: the only identity allowed on
  /// /sim/v1 over HTTPS (also what the store answers for it).
  std::string admin_token;
  /// Audit log file; "" = none.
  std::string audit_log_path;
  /// io threads (one io_context; a strand per connection).
  unsigned threads = 1;
  /// kube-apiserver's request body limit (MaxRequestBodyBytes, 3 MiB):
  /// larger bodies get 413 RequestEntityTooLarge.
  std::uint64_t body_limit = 3u << 20;
};

/// The running front. start() binds and serves; stop() (also the
/// destructor) closes the listener and every connection, then flushes and
/// closes the audit log. Call start()/stop() from one thread.
class front {
public:
  front(caf::actor_system& sys, store_actor store, front_options opts);
  ~front();
  front(const front&) = delete;
  front& operator=(const front&) = delete;

  /// Binds and starts the io threads; returns the bound port. Errors:
  /// http_server::errc::bind_failed naming the address, io::errc for an
  /// audit log that cannot be opened, http_server::errc::bad_config for a
  /// TLS identity OpenSSL refuses.
  [[nodiscard]] caf::expected<std::uint16_t> start();

  /// Idempotent.
  void stop();

  [[nodiscard]] std::uint16_t port() const noexcept;

  /// The faults in force (tests may also set them directly).
  [[nodiscard]] fault_table& faults() noexcept;

  struct impl;

private:
  std::shared_ptr<impl> impl_;
};

} // namespace aiperf::k8s::sim::http
