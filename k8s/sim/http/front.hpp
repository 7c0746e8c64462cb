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
// The pod network (sim-cluster --workloads, set_pod_network): after the
// store has authorized the caller on the subresource (it answers the object)
// - GET pods/{name}/log streams the container's log file the kubelet names
//   (container, follow, tailLines, previous, limitBytes; `follow` keeps
//   reading while the container runs), text/plain;
// - any method on pods/[http:]{name}[:port]/proxy[/path] and
//   services/[http:]{name}[:port]/proxy[/path] is forwarded as plain HTTP
//   (method, headers but the credentials and hop-by-hop ones, body, query)
//   to the pod's IP, or a ready endpoint of the service (port by number or
//   name, as kube-apiserver resolves it), over a socket of the pod network,
//   and the answer is streamed back; a failed dial is kube-apiserver's 503
//   `error trying to reach service: dial tcp 10.244.0.7:9090: connect:
//   connection refused`. The `https:` scheme is refused with a 503 (pods
//   serve plain HTTP here).
// Without a pod network these answer 503 naming --workloads.
//
// /sim/v1/... (the fault routes, never audited; admin only over HTTPS):
//   POST /sim/v1/faults {fault}          -> 201 {"id":"f1"}
//   DELETE /sim/v1/faults/{id}           -> 200 {} | 404 Status
//   POST /sim/v1/watches:drop {"resource":"configmaps"}? -> 200 {"dropped":N}
//   POST /sim/v1/apiserver:restart {"downSeconds":3,"keepState":true}
//        -> 200; then the listener closes, every connection is reset, the
//        store resets (reset_atom) and the listener reopens on the same
//        port after downSeconds.
// With a pod network (else 404 naming --workloads):
//   POST /sim/v1/podfaults {"namespace","labelSelector","state","count"}
//        -> 201 the fault: Unschedulable goes to the scheduler, the other
//        states (ImagePullBackOff, ErrImagePull, CreateContainerConfigError,
//        CrashLoop) to the kubelet; 400 Status naming a bad field.
//   POST /sim/v1/namespaces/{ns}/pods/{name}:kill {"signal":"KILL"}  -> 200 {}
//   POST /sim/v1/namespaces/{ns}/pods/{name}:partition {"seconds":20}
//        -> 200 {}: the pod's link is down that long.
//   GET  /sim/v1/namespaces/{ns}/pods/{name} -> 200 {"pid","podIP","netns",
//        "containers":[{"name","pid","restartCount"}]} (the kubelet's).
#pragma once

#include "k8s/sim/http/faults.hpp"
#include "k8s/sim/http/tls.hpp"
#include "k8s/sim/kubelet/kubelet.hpp"
#include "k8s/sim/sandbox/sandbox.hpp"
#include "k8s/sim/store/store.hpp"
#include "proto/error.hpp"

#include <caf/fwd.hpp>

#include <cstdint>
#include <functional>
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

/// What the front reaches pods through (sim-cluster --workloads).
struct pod_network {
  /// Sockets into the pod network (proxy dials).
  std::shared_ptr<sandbox::cluster> cluster;
  /// pods/log, pod faults, kill, partition, pod info.
  kubelet::kubelet_actor kubelet;
  /// The scheduler's Unschedulable fault: `(namespace, labelSelector,
  /// count, done)`; `done` gets none or the error (a k8s status). Called on
  /// an io thread; must not block.
  std::function<void(std::string, std::string, std::int32_t,
                     std::function<void(caf::error)>)>
      unschedulable_fault;
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

  /// Serves a second listening socket as well, e.g. one bound on the pod
  /// network's gateway: `open` returns a bound, listening TCP descriptor
  /// (the front owns it); it is called now and again when the restart
  /// fault reopens the listeners. Returns the socket's port. Needs start().
  [[nodiscard]] caf::expected<std::uint16_t>
  add_listener(std::function<caf::expected<int>()> open);

  /// Turns the pod routes on (see the file comment); a network without a
  /// cluster turns them off again (and drops the front's references).
  /// Thread-safe.
  void set_pod_network(pod_network net);

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
