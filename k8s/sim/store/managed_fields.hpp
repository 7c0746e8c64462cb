// managedFields of the writes that are not server-side apply: create,
// update and every non-apply patch record an `Update` entry for their field
// manager, as kube-apiserver's field manager does
// (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager and
// sigs.k8s.io/structured-merge-diff Updater.Update): the fields the write
// added or changed become the manager's, fields it removed leave every
// manager, and other managers lose what it changed (an Update always
// forces). The manager is the request's fieldManager, else the part of the
// User-Agent before its first "/" (kubectl sends kubectl-create,
// kubectl-client-side-apply, kubectl-edit, ... itself).
//
// The fields of a create are counted from the object after defaulting and
// before mutating admission (so a pod's defaulted terminationMessagePath is
// its creator's, its injected service-account volume nobody's), against the
// empty object of its kind; a map or list that the write brought into being
// is a member itself (`.` in FieldsV1). Approximated: which struct fields
// the empty object of a built-in kind already holds (spec, status, a pod
// template's metadata and spec, containers, a Deployment's strategy) — the
// nodes a real server lists without `.`.
#pragma once

#include "k8s/api/json.hpp"

#include <string>
#include <string_view>

namespace aiperf::k8s::sim {

struct update_request {
  std::string manager;     // "" = nothing is recorded
  std::string api_version; // the request's group/version
  std::string time;        // metav1.Time of the write
  /// Fields under `status` are ignored (the main resource of a type with a
  /// status subresource) or the only ones counted (/status, whose entry
  /// carries subresource "status").
  bool skip_status = false;
  bool only_status = false;
  /// A custom resource (unstructured: its empty object holds nothing).
  bool custom = false;
};

/// The manager of a request: `field_manager`, else the User-Agent's prefix
/// before "/" (printable characters, at most 128 bytes).
[[nodiscard]] std::string manager_of(std::string_view field_manager,
                                     std::string_view user_agent);

/// The managedFields to store for a write of `next` over `live` (null for a
/// create). The base is live's managedFields, or the request's own when
/// `next` carries a non-empty list that differs (an empty list resets them),
/// as decodeLiveOrNew does. Returns the entries sorted as the server sorts
/// them (operation, time, manager, apiVersion, subresource); empty = none.
[[nodiscard]] json update_managed_fields(const json& live, const json& next,
                                         const update_request& req);

} // namespace aiperf::k8s::sim
