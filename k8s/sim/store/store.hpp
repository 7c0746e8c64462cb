// The simulated API server's store: one actor holding every object of the
// cluster and answering `k8s::api_actor` requests with kube-apiserver's REST
// semantics (resourceVersion, uid, generation, the status subresource,
// finalizers and deletionTimestamp, JSON/merge/strategic patch, server-side
// apply, list/watch with bookmarks and 410 Expired, selectors, CRDs with
// their schemas, admission, RBAC). The HTTP front (k8s/sim/http) is a codec
// over this actor, and deterministic tests talk to it directly.
//
// Time: every timestamp (creationTimestamp, deletionTimestamp, token expiry,
// watch deadlines) comes from the actor system's clock — a wall-clock base
// taken at spawn plus the elapsed time of `self->clock()` — so under the
// test coordinator all of it follows simulated time.
//
// Not emulated here: controllers. Owner-reference garbage collection and
// namespace content deletion are separate actors over `api_actor`; the store
// does the API server's half (the `orphan` / `foregroundDeletion`
// finalizers a DELETE's propagationPolicy asks for, deletion once the last
// finalizer goes, a deleted namespace's phase Terminating; the namespace
// controller ends the deletion with PUT namespaces/<name>/finalize once it
// has emptied spec.finalizers).
//
// Pods (kubernetes/kubernetes pkg/registry/core/pod):
// - `POST pods/<name>/binding` (authorized as `create pods/binding`) with a
//   Binding {metadata.name, target {kind Node, name}} sets spec.nodeName,
//   merges the Binding's annotations and sets PodScheduled=True; 201 with a
//   Success Status. The Binding's uid/resourceVersion are preconditions. A
//   pod already bound, being deleted or with schedulingGates is 409
//   `Operation cannot be fulfilled on pods/binding "p": pod p is already
//   assigned to node "n"`; a Binding without target.name is the 500 upstream
//   answers for its unwrapped validation error.
// - Deletion is graceful (rest.BeforeDelete, CheckGracefulDelete): a DELETE
//   of a bound pod not Succeeded/Failed sets deletionTimestamp = now + grace
//   and deletionGracePeriodSeconds = grace (DeleteOptions.gracePeriodSeconds,
//   else spec.terminationGracePeriodSeconds, else 30; negative counts as 1)
//   and answers 200 with the pod (MODIFIED). A later DELETE may only shorten
//   the period; one with gracePeriodSeconds 0 (the kubelet's last word)
//   removes the pod unless finalizers hold it. An unbound or terminated pod
//   gets grace 0 and is removed by the same request: watches see MODIFIED
//   (with deletionTimestamp) then DELETED, as from the real registry. Updates
//   never delete a pod whose grace period is still running.
//   Namespace deletion and the garbage collector delete pods through the
//   same path, so a namespace with bound pods waits for their kubelet.
// - Admission on create (mutating stage, after defaulting): ServiceAccount
//   — spec.serviceAccountName defaults to `default`; a missing account is
//   403 `pods "p" is forbidden: error looking up service account ns/sa:
//   serviceaccount "sa" not found`; unless automountServiceAccountToken is
//   false (pod first, then account) every container and init container
//   mounts the projected `kube-api-access-<5>` volume (token, expiry 3607
//   s; kube-root-ca.crt's ca.crt; the namespace) read-only at
//   /var/run/secrets/kubernetes.io/serviceaccount. DefaultStorageClass — a
//   PersistentVolumeClaim naming no class gets the newest StorageClass
//   annotated storageclass.kubernetes.io/is-default-class "true".
// - `pods/log`, `pods/proxy` and `services/proxy` are authorized as that
//   subresource with the verb of the HTTP method (GET get, POST create, PUT
//   update, PATCH patch, DELETE delete; log serves get only, else 405) and
//   answered 200 with the pod or service itself: the HTTP front streams the
//   log or forwards the request into the pod network, using the object's
//   address and status, and audits the request as the subresource. A proxy
//   name may be `[scheme:]name[:port]`; the object is found by its name.
//
// Custom resources served at several versions: conversion is the `None`
// strategy — an object read, listed or watched at any served version is the
// stored one with only apiVersion changed (managedFields keep the versions
// their writers used), exactly what kube-apiserver does for a CRD without a
// conversion webhook (apiextensions-apiserver pkg/apiserver/conversion
// nopConverter); each version's schema applies to the writes made at it.
// Webhook conversion is not emulated (a CRD asking for it is served as
// None).
//
// Aggregated ClusterRoles: the store does the clusterrole-aggregation
// controller's work as soon as a ClusterRole changes — a ClusterRole with
// an aggregationRule gets the rules of every other ClusterRole its
// clusterRoleSelectors match (by name, duplicates dropped), written as a
// MODIFIED of its own; rules set on it by hand are replaced.
//
// managedFields: server-side apply keeps Apply entries (apply.hpp); every
// other write records its manager's Update entry (managed_fields.hpp), the
// manager being fieldManager or the User-Agent's product name.
//
// Also not emulated: core/v1 and events.k8s.io/v1 Events sharing one
// storage (each group keeps its own). Lists with an exact or continued
// resourceVersion are served from the watch history (config.watch_history
// events back); older ones are 410 Expired, as after an etcd compaction —
// and so is every resourceVersion from before a restart that lost the
// state (reset_atom with keep_state=false), so that clients relist.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"

#include <caf/expected.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace aiperf::k8s::sim {

using authenticate_atom = caf::atom_constant<caf::atom("k8s_authn")>;
using discovery_atom = caf::atom_constant<caf::atom("k8s_disco")>;
using reset_atom = caf::atom_constant<caf::atom("k8s_reset")>;
using drop_watches_atom = caf::atom_constant<caf::atom("k8s_wdrop")>;

/// `k8s::api_actor` plus what the HTTP front needs:
/// - `(authenticate_atom, std::string bearer_token)` -> user_info: the admin
///   token of the config (the user `admin_user()`), or a service-account
///   token the store signed (TokenRequest) whose service account — and, for
///   a pod-bound token, pod (same uid) — still exists and which has not
///   expired. Refused: errc::forbidden carrying a 401 `Unauthorized` status
///   (message "Unauthorized"), which the front writes as the body.
/// - `(discovery_atom, std::string path)` -> response: `/api`, `/apis`,
///   `/api/v1`, `/apis/<group>`, `/apis/<group>/<version>` (legacy discovery
///   documents, built-ins and every established CRD), `/version`, and
///   `/openapi/v2` (200 with an empty body, which the front serves as
///   `application/octet-stream`: an empty protobuf document kubectl accepts).
///   Any other path (`/openapi/v3`, an unserved group) is the error of
///   answers_plain_not_found(): the front answers plain-text
///   `404 page not found`.
/// - `(reset_atom, bool keep_state)` -> std::string: the API server restart
///   fault. Every watch ends (its sink gets watch_end with a transport
///   error, as for a dropped connection); with keep_state=false every object
///   is also gone and the built-in namespaces are made again. Replies the
///   resourceVersion the store continues from (it never goes backwards, so a
///   client resuming a watch with an older one gets 410 Expired).
/// - `(drop_watches_atom, std::string resource)` -> uint64_t: ends the
///   watches of `resource` (a plural, e.g. "configmaps"; "" = every watch)
///   as for a dropped connection; replies how many ended.
/// Every request is authorized (RBAC) as `request.user`, after impersonation
/// (`impersonate_user`/`impersonate_groups` need the `impersonate` verb).
/// Replies come at once: the store never waits on anything but its disk
/// (with a state_dir, a write is replied to after its log record is synced).
using store_actor = api_actor::extend<
    caf::replies_to<authenticate_atom, std::string>::with<user_info>,
    caf::replies_to<discovery_atom, std::string>::with<response>,
    caf::replies_to<reset_atom, bool>::with<std::string>,
    caf::replies_to<drop_watches_atom, std::string>::with<std::uint64_t>>;

struct store_config {
  /// The bearer token of the administrator; "" = no token is the admin's.
  std::string admin_token;
  /// Folder of the append-only log of acknowledged writes; "" = memory only.
  /// With a folder, spawn replays the log and every write is fsynced before
  /// its reply, so what a client saw acknowledged survives a SIGKILL.
  std::string state_dir;
  /// HMAC-SHA256 key of service-account tokens; "" = a random key per spawn
  /// (tokens then do not survive a restart).
  std::string signing_key;
  /// Unix seconds the store's wall clock starts from at spawn; 0 = the
  /// system clock at spawn. Tests set it to get reproducible timestamps.
  std::int64_t start_unix_seconds = 0;
  /// Watch events kept for watches that start at an exact resourceVersion;
  /// an older resourceVersion is answered 410 Expired (etcd compaction).
  std::size_t watch_history = 10'000;
  /// Seconds a watch lasts when the request sets no timeoutSeconds
  /// (kube-apiserver: minRequestTimeout 1800 s times 1..2; fixed here).
  std::int64_t default_watch_seconds = 1800;
  /// Seconds between BOOKMARK events of watches that allow them
  /// (kube-apiserver's watch cache: one a minute, plus one shortly before
  /// the watch's deadline).
  std::int64_t bookmark_seconds = 60;
  /// PEM of the cluster CA, published as `data["ca.crt"]` of the
  /// `kube-root-ca.crt` ConfigMap of every namespace (kube-controller-manager's
  /// root-ca-cert-publisher); "" = a server without TLS, the key stays empty.
  std::string root_ca_pem;
  /// Mutating admission beyond the built-in plugins, called on every create
  /// and update of any resource after them and before schema validation,
  /// CEL rules and validating admission (where admission webhooks plug
  /// in): it may change `object`; an error (a status error, e.g. from
  /// make_status_error) is the request's answer. Empty = none.
  std::function<caf::expected<void>(const request& req, json& object,
                                    const json* old)>
      mutating_admission;
};

/// True for the error of a path the store does not serve (an unknown
/// resource or group-version, `/openapi/v3`): errc::not_found whose message
/// is "404 page not found". The front answers it with that plain text; the
/// status payload is what client-go makes of it (NotFound, "the server could
/// not find the requested resource"), so in-process callers see the same.
[[nodiscard]] bool answers_plain_not_found(const caf::error& err);

/// Spawns the store with the built-in types and namespaces (`default`,
/// `kube-system`, `kube-public`, each with a `default` ServiceAccount and a
/// `kube-root-ca.crt` ConfigMap; a namespace created later gets both in the
/// same request — standing in for the serviceaccount controller, which
/// upstream's ServiceAccount admission waits for by retrying its lookup of
/// `default` — then replays `cfg.state_dir` if set.
/// Fails (io or k8s errc naming the file and record) when the state folder
/// cannot be created, read or is corrupt.
[[nodiscard]] caf::expected<store_actor> spawn_store(caf::actor_system& sys,
                                                     store_config cfg);

} // namespace aiperf::k8s::sim
