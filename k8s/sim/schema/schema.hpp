// The OpenAPI v3 schema of one CRD version, enforced as kube-apiserver's
// apiextensions-apiserver enforces it on custom resources: defaulting,
// pruning of undeclared fields, structural validation (kube-openapi's
// validators with their messages) and the CEL rules of
// `x-kubernetes-validations` (k8s/sim/cel).
//
// Sources: kubernetes/apiextensions-apiserver pkg/apiserver/schema
// (structural.go, validation.go, defaulting/, pruning/, cel/validation.go),
// pkg/apis/apiextensions/validation/validation.go (what a CRD may declare),
// kubernetes/kube-openapi pkg/validation/{validate,errors} (the messages),
// kubernetes/apimachinery pkg/util/validation/field (how a cause reads).
#pragma once

#include "k8s/api/json.hpp"
#include "k8s/errors/errors.hpp"

#include <caf/expected.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::k8s::sim {

/// One CRD version's openAPIV3Schema, compiled once (the CEL rules too).
/// Immutable and shared by every request that admits an object of it.
class compiled_schema;

/// Compiles `openapi_v3` (the value of `openAPIV3Schema`). Refuses what
/// kube-apiserver refuses when the CRD is created or updated: a schema that
/// is not structural (a node without `type` outside int-or-string and
/// preserve-unknown nodes, `items` missing on an array, `additionalProperties`
/// together with `properties` or at the root, metadata constraints beyond
/// name/generateName), bad list-type declarations, an invalid `pattern`, a
/// default that does not validate, and every `x-kubernetes-validations`
/// rule that does not compile — e.g. one that selects an undeclared field,
/// or a field under a preserve-unknown node without `type` (CEL does not see
/// those): `undefined field 'x'`. On refusal the error is k8s::errc::invalid
/// and each problem is appended to `*refusals` (when not null) as a cause
/// whose field is the path under `path_prefix`, e.g.
/// "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
/// (a single-version CRD's schema is validated as `spec.validation`, the
/// internal version; a multi-version one under
/// "spec.versions[i].schema.openAPIV3Schema").
[[nodiscard]] caf::expected<std::shared_ptr<const compiled_schema>>
compile_schema(const json& openapi_v3, std::vector<status_cause>* refusals,
               std::string_view path_prefix
               = "spec.validation.openAPIV3Schema");

/// What admitting one object found.
struct admission {
  /// Validation failures: field "spec.replicas", reason "FieldValueInvalid"
  /// (FieldValueRequired, FieldValueNotSupported, FieldValueTypeInvalid,
  /// FieldValueTooMany, FieldValueForbidden, FieldValueDuplicate, ...),
  /// message as upstream writes it after the field, e.g.
  /// `Invalid value: "string": spec.replicas in body must be of type
  /// integer: "string"`, `Required value`, `Unsupported value: "x":
  /// supported values: "a", "b"`, `Invalid value: "object": spec.image is
  /// immutable after creation; create a new AIPerfJob to change it`.
  /// Empty = the object is valid.
  std::vector<status_cause> causes;
  /// Fields the schema does not declare, pruned from the object, as sorted
  /// paths ("spec.x", "spec.list[0].y"): the store answers
  /// fieldValidation=Strict with 400 `strict decoding error: unknown field
  /// "spec.x"` and Warn with a warning per path.
  std::vector<std::string> unknown_fields;
  /// Failures of unchanged values on an update that upstream's validation
  /// ratcheting reports as warnings instead of errors.
  std::vector<std::string> warnings;
};

/// The decoding half of admit: drops nulls of non-nullable fields, applies
/// defaults and prunes undeclared fields, as the API server does when it
/// decodes a request body. Sets `unknown_fields` (and `causes` only for an
/// internal error).
[[nodiscard]] admission decode(const compiled_schema& schema, json& object);

/// The validating half of admit, on an object decode has seen: structural
/// validation, then the CEL rules. Sets `causes` and `warnings`.
[[nodiscard]] admission validate(const compiled_schema& schema,
                                 const json& object, const json* old_object);

/// Admits `object` (a whole custom resource: apiVersion, kind, metadata,
/// spec, status) for a create (`old_object` null) or an update (the stored
/// object): drops nulls of non-nullable fields, applies defaults, prunes
/// undeclared fields outside x-kubernetes-preserve-unknown-fields (root
/// apiVersion/kind/metadata and the metadata of embedded resources are
/// kept), validates the schema, then runs the CEL rules — transition rules
/// (those using `oldSelf`) only on an update and only where the old object
/// has the node too (a field added or removed does not run them), unless
/// the rule sets optionalOldSelf. `object` is modified in place. The same
/// as decode then validate.
[[nodiscard]] admission admit(const compiled_schema& schema, json& object,
                              const json* old_object);

/// Applies defaults only (and drops nulls of non-nullable fields without a
/// default), as the API server does to an object read from storage.
void apply_defaults(const compiled_schema& schema, json& object);

/// A list's merge semantics as the schema declares them, for server-side
/// apply: `x-kubernetes-list-type` ("" when the list declares none, which
/// structured-merge-diff treats as atomic) and `x-kubernetes-list-map-keys`.
struct list_semantics {
  std::string type;
  std::vector<std::string> map_keys;
};

/// The semantics of the list at `fields`, property names from the root
/// (list items are stepped through, "spec.workers[].ports" is {"spec",
/// "workers", "ports"}); {} when the schema does not declare that node.
[[nodiscard]] list_semantics
list_semantics_at(const compiled_schema& schema,
                  const std::vector<std::string>& fields);

} // namespace aiperf::k8s::sim
