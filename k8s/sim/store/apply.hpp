// Server-side apply (PATCH application/apply-patch+yaml), scoped: correct
// for one manager and for managers owning disjoint fields.
//
// Emulated (sigs.k8s.io/structured-merge-diff, kubernetes/apiserver
// pkg/endpoints/handlers/fieldmanager): managedFields entries of operation
// Apply in FieldsV1 form; a custom resource's lists as its schema declares
// them (x-kubernetes-list-type map merged by x-kubernetes-list-map-keys,
// set merged by value, atomic or undeclared a leaf); a built-in's lists
// merged by key where the strategic merge keys say so (containers, env,
// ports, volumes, conditions, ...) and set-like metadata.finalizers, every
// other list atomic (a leaf); a field set by the
// manager's previous apply and left out of this one is removed unless
// another manager owns it; conflicts at leaf granularity — a field another
// manager owns whose value this apply changes — are 409 Conflict with
// FieldManagerConflict causes and upstream's message, unless force=true,
// which takes the fields over.
//
// Fields that non-apply writes set belong to their Update entries
// (managed_fields.hpp) and conflict with an apply that changes them.
//
// Not emulated: the element order structured-merge-diff gives a merged list
// (here: the live order, new elements appended), list-map keys defaulted
// from the schema, apply configurations in YAML syntax (the body must be
// JSON, which is valid YAML and what kubectl sends), and version conversion
// of managedFields.
#pragma once

#include "k8s/api/json.hpp"
#include "k8s/errors/errors.hpp"

#include <caf/expected.hpp>

#include <memory>
#include <string>

namespace aiperf::k8s::sim {

class compiled_schema;

struct apply_request {
  std::string manager;     // fieldManager
  std::string api_version; // the request's group/version
  std::string time;        // metav1.Time of this apply
  bool force = false;
  /// Fields under `status` are ignored (applies to the main resource of a
  /// type with a status subresource) or the only ones kept (/status).
  bool skip_status = false;
  bool only_status = false;
  /// A custom resource's schema: its list types decide how lists merge.
  std::shared_ptr<const compiled_schema> schema;
};

/// Applies `config` (the request body) to `live` (the stored object, or an
/// empty object for a create) and returns the object to write, with its
/// metadata.managedFields updated. Conflicts: errc::conflict with the 409
/// status.
[[nodiscard]] caf::expected<json> server_side_apply(const json& live,
                                                    const json& config,
                                                    const apply_request& req);

} // namespace aiperf::k8s::sim
