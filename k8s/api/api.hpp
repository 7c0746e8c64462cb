// k8s::api — one Kubernetes API with two implementations: the product client
// (k8s/client: HTTP/TLS to a real or simulated API server) and the
// simulator's store actor (k8s/sim: the same semantics in process, for
// deterministic tests). Code written against `api_actor` runs unchanged on
// either, so an operator test on the test coordinator exercises the same
// requests a pod sends over HTTPS.
//
// Objects travel as JSON text, exactly as on the wire: no re-encoding
// between the HTTP front and the store, and a test can compare what two
// implementations answered byte for byte.
#pragma once

#include "k8s/errors/errors.hpp"

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace aiperf::k8s {

/// What a request is about: a group/version/resource and, optionally, a
/// namespace, a name and a subresource. Mirrors the request path:
/// `/api/v1/namespaces/bench/configmaps/c1` is {"", "v1", "configmaps",
/// "bench", "c1", ""}; `/apis/aiperf.nvidia.com/v1alpha1/namespaces/bench/
/// aiperfjobs/j1/status` is {"aiperf.nvidia.com", "v1alpha1", "aiperfjobs",
/// "bench", "j1", "status"}.
struct resource_ref {
  std::string group;    // "" = the core group (`/api/v1`)
  std::string version;  // "v1"
  std::string resource; // the plural, lower case: "configmaps"
  std::string
      namespace_name; // "" = cluster-scoped, or every namespace for list/watch
  std::string name;   // "" = the collection
  std::string subresource; // "" or "status", "token", ...

  bool operator==(const resource_ref&) const = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, resource_ref& x) {
  return f(caf::meta::type_name("aiperf::k8s::resource_ref"), x.group,
           x.version, x.resource, x.namespace_name, x.name, x.subresource);
}

/// The request verbs of Kubernetes authorization and audit (a GET of a
/// collection is `list`, a DELETE of one is `deletecollection`).
enum class verb : std::uint8_t {
  get = 1,
  list,
  watch,
  create,
  update,
  patch,
  remove,           // "delete"
  remove_collection // "deletecollection"
};

/// The spelling Kubernetes uses: "get", ..., "delete", "deletecollection".
[[nodiscard]] const char* to_string(verb v) noexcept;

/// The body of a PATCH, by its Content-Type.
enum class patch_type : std::uint8_t {
  none = 0,
  json,      // application/json-patch+json (RFC 6902)
  merge,     // application/merge-patch+json (RFC 7386)
  strategic, // application/strategic-merge-patch+json (built-in types only)
  apply      // application/apply-patch+yaml (server-side apply)
};

/// Who sends a request. The simulator authorizes and audits with it; the
/// product client ignores it (its identity is its credentials).
struct user_info {
  std::string username; // "system:serviceaccount:bench:default"
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>>
      extra; // pod-bound token claims

  bool operator==(const user_info&) const = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, user_info& x) {
  return f(caf::meta::type_name("aiperf::k8s::user_info"), x.username, x.uid,
           x.groups, x.extra);
}

/// The cluster administrator: what an in-process caller is unless it says
/// otherwise (member of system:masters, allowed everything).
[[nodiscard]] user_info admin_user();

/// One API request: the verb, the target, the body and the query parameters
/// the API server reads. Empty strings and zeros mean "not sent".
struct request {
  k8s::verb verb = verb::get;
  resource_ref ref;
  /// create/update: the object; patch: the patch document; remove and
  /// remove_collection: a DeleteOptions object (propagationPolicy,
  /// preconditions {uid, resourceVersion}, gracePeriodSeconds) or empty.
  std::string body;
  patch_type patch = patch_type::none;

  // list and watch
  std::string label_selector;
  std::string field_selector;
  std::int64_t limit = 0;
  std::string continue_token; // `continue`
  std::string resource_version;
  std::string resource_version_match; // "", "NotOlderThan", "Exact"
  bool allow_watch_bookmarks = false;
  std::int64_t timeout_seconds
      = 0; // watch lifetime on the server; 0 = its default
  /// get/list: answer a `meta.k8s.io/v1` Table (kubectl's
  /// `Accept: application/json;as=Table;...`) instead of the object or list.
  bool as_table = false;

  // writes
  bool dry_run = false;      // dryRun=All: validate, store nothing, no event
  std::string field_manager; // fieldManager
  std::string
      field_validation; // "" (server default), "Strict", "Warn", "Ignore"
  bool force = false;   // server-side apply: take over conflicting fields

  /// The caller; see user_info. Impersonation (kubectl --as) is applied by
  /// the server after checking the `impersonate` permission.
  user_info user = admin_user();
  std::string impersonate_user;
  std::vector<std::string> impersonate_groups;
  std::string user_agent;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, request& x) {
  return f(caf::meta::type_name("aiperf::k8s::request"), x.verb, x.ref, x.body,
           x.patch, x.label_selector, x.field_selector, x.limit,
           x.continue_token, x.resource_version, x.resource_version_match,
           x.allow_watch_bookmarks, x.timeout_seconds, x.as_table, x.dry_run,
           x.field_manager, x.field_validation, x.force, x.user,
           x.impersonate_user, x.impersonate_groups, x.user_agent);
}

/// A successful answer. Failures are errors instead (see below).
struct response {
  /// 200, or 201 for a create (and for an apply that created), 202 for a
  /// delete that left the object pending (orphanDependents=false).
  std::int32_t code = 200;
  /// The object, the list (`…List` with metadata.resourceVersion and
  /// continue), a Table, or — for a delete that removed the object at once
  /// — a `Status` with status "Success".
  std::string body;
  /// `Warning` headers' texts (fieldValidation=Warn, deprecations).
  std::vector<std::string> warnings;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, response& x) {
  return f(caf::meta::type_name("aiperf::k8s::response"), x.code, x.body,
           x.warnings);
}

/// One watch event as the API server streams it:
/// `{"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{…}}`.
/// An ERROR event carries a Status (410 Expired for a too-old
/// resourceVersion) and is the last event of its watch.
struct watch_event {
  std::string type;
  std::string object; // JSON text
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, watch_event& x) {
  return f(caf::meta::type_name("aiperf::k8s::watch_event"), x.type, x.object);
}

using watch_atom = caf::atom_constant<caf::atom("k8s_watch")>;
using unwatch_atom = caf::atom_constant<caf::atom("k8s_unwtch")>;
using events_atom = caf::atom_constant<caf::atom("k8s_events")>;
using watch_end_atom = caf::atom_constant<caf::atom("k8s_wend")>;

/// Receives the events of the watches it started.
/// - `(events_atom, uint64_t watch_id, std::vector<watch_event>)`: events in
///   order (one or more per message). No reply.
/// - `(watch_end_atom, uint64_t watch_id, caf::error)`: the watch is over and
///   sends nothing more: none = ended normally (timeoutSeconds reached, or the
///   server closed the stream: resume from the last resourceVersion seen);
///   otherwise the transport failure or the unwatch that ended it. No reply.
using watch_sink_actor = caf::typed_actor<
    caf::reacts_to<events_atom, std::uint64_t, std::vector<watch_event>>,
    caf::reacts_to<watch_end_atom, std::uint64_t, caf::error>>;

/// The Kubernetes API.
/// - `(request)` with any verb but watch: replies the response, or an error
///   with a k8s::errc and the server's k8s::status (reason, code, message,
///   details.causes) — 404 NotFound, 409 AlreadyExists/Conflict, 422
///   Invalid, 403 Forbidden, 410 Expired, 429 TooManyRequests (with
///   details.retry_after_seconds), .... The requester chooses its timeout;
///   an expired one means the server did not answer in time (the request may
///   still have been carried out).
/// - `(watch_atom, request, watch_sink_actor)`: starts a watch (request.verb
///   is ignored and taken as watch). Replies the watch id once the watch is
///   established; events then go to the sink, ending with one watch_end.
///   A watch the server refuses outright (403, 400 bad selector) is an error
///   reply and sends nothing to the sink.
/// - `(unwatch_atom, uint64_t watch_id)`: ends a watch; its sink gets
///   watch_end. No reply; an unknown id is ignored.
using api_actor = caf::typed_actor<
    caf::replies_to<request>::with<response>,
    caf::replies_to<watch_atom, request, watch_sink_actor>::with<std::uint64_t>,
    caf::reacts_to<unwatch_atom, std::uint64_t>>;

} // namespace aiperf::k8s
