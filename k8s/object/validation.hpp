// Validation of object metadata and of the built-in fields the simulated API
// server checks, with kube-apiserver's messages and field paths to the
// character (kubernetes/apimachinery pkg/util/validation/validation.go,
// pkg/api/validation/objectmeta.go, pkg/util/validation/field/errors.go):
// clients and users read them, and kubectl prints them unchanged.
//
// A failed check is a `status_cause` — reason (the field.ErrorType,
// "FieldValueInvalid"), message (the error body without the field,
// `Invalid value: "Qwen/Qwen3-0.6B": a valid label must be ...`) and field
// ("metadata.labels") — exactly as `details.causes[]` of a 422 carries it.
// `invalid_status` composes the 422 itself.
#pragma once

#include "k8s/api/json.hpp"
#include "k8s/errors/errors.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::k8s {

// --- field errors (pkg/util/validation/field) -------------------------------

/// Go's `%q` of a string: double quotes, `\"`, `\\`, `\n`, `\t`, ... and
/// `\x..` for bytes that are not valid UTF-8 or not printable.
[[nodiscard]] std::string go_quote(std::string_view text);

/// `field.Invalid(path, value, detail)` of a string value.
[[nodiscard]] status_cause field_invalid(std::string field,
                                         std::string_view value,
                                         std::string_view detail);
/// `field.Invalid` of a value already rendered as Go prints it (an integer
/// `-1`, a list `[]string{"a"}`).
[[nodiscard]] status_cause field_invalid_rendered(std::string field,
                                                  std::string_view rendered,
                                                  std::string_view detail);
/// `field.Required(path, detail)`: "Required value[: detail]".
[[nodiscard]] status_cause field_required(std::string field,
                                          std::string_view detail = {});
/// `field.Forbidden(path, detail)`: "Forbidden: detail".
[[nodiscard]] status_cause field_forbidden(std::string field,
                                           std::string_view detail);
/// `field.TooLong(path, _, max)`: "Too long: may not be more than N bytes".
[[nodiscard]] status_cause field_too_long(std::string field,
                                          std::int64_t max_bytes);
/// `field.NotSupported(path, value, valid)`: `Unsupported value: "x":
/// supported values: "a", "b"`.
[[nodiscard]] status_cause
field_not_supported(std::string field, std::string_view value,
                    const std::vector<std::string>& supported);

/// What `field.Error.Error()` prints: "<field>: <message>".
[[nodiscard]] std::string cause_text(const status_cause& cause);

/// What an aggregate of field errors prints (utilerrors.NewAggregate):
/// duplicates dropped; one error as is; several as "[a, b]".
[[nodiscard]] std::string
aggregate_text(const std::vector<status_cause>& causes);

/// The 422 of `apierrors.NewInvalid`: message `<Kind>[.<group>] "<name>" is
/// invalid: <aggregate>`, reason Invalid, details {name, group, kind, causes}.
[[nodiscard]] status invalid_status(std::string_view kind,
                                    std::string_view group,
                                    std::string_view name,
                                    std::vector<status_cause> causes);

// --- string formats (pkg/util/validation) -----------------------------------
// Each returns the problems found, in upstream's order; empty = valid.

[[nodiscard]] std::vector<std::string> is_dns1123_label(std::string_view value);
[[nodiscard]] std::vector<std::string>
is_dns1123_subdomain(std::string_view value);
[[nodiscard]] std::vector<std::string> is_dns1035_label(std::string_view value);
/// A label key, annotation key or finalizer: `[prefix/]name`.
[[nodiscard]] std::vector<std::string>
is_qualified_name(std::string_view value);
[[nodiscard]] std::vector<std::string>
is_valid_label_value(std::string_view value);

// --- object names (pkg/api/validation/generic.go) ---------------------------

/// Which rule a type's `metadata.name` follows.
enum class name_rule : std::uint8_t {
  dns1123_subdomain, // most types: ConfigMap, Secret, Pod, Job, CRs, ...
  dns1123_label,     // Namespace
  dns1035_label,     // Service
  path_segment, // RBAC roles and bindings: anything but ".", "..", "/", "%"
};

/// The problems of `name` under `rule`; `prefix` = it is a generateName (a
/// trailing '-' is then allowed, as upstream's maskTrailingDash does).
[[nodiscard]] std::vector<std::string>
validate_name(name_rule rule, std::string_view name, bool prefix);

// --- metadata (pkg/api/validation/objectmeta.go) ----------------------------

/// The total size limit of metadata.annotations (keys + values).
inline constexpr std::int64_t total_annotation_size_limit = 256 * 1024;

[[nodiscard]] std::vector<status_cause> validate_labels(const json& labels,
                                                        const std::string& field
                                                        = "metadata.labels");
[[nodiscard]] std::vector<status_cause>
validate_annotations(const json& annotations,
                     const std::string& field = "metadata.annotations");
[[nodiscard]] std::vector<status_cause>
validate_owner_references(const json& refs, const std::string& field
                                            = "metadata.ownerReferences");
[[nodiscard]] std::vector<status_cause>
validate_finalizers(const json& finalizers,
                    const std::string& field = "metadata.finalizers");

/// ValidateLabelSelector (meta/v1/validation) of a metav1.LabelSelector at
/// `field` ("spec.selector"): matchLabels as labels, each matchExpression's
/// operator, values and key. Null is valid.
[[nodiscard]] std::vector<status_cause>
validate_label_selector(const json& selector, const std::string& field);

/// ValidateObjectMeta on create (after generateName was resolved): name or
/// generateName, namespace present iff `namespaced`, generation >= 0, labels,
/// annotations, ownerReferences, finalizers.
[[nodiscard]] std::vector<status_cause>
validate_object_meta(const json& metadata, bool namespaced, name_rule rule);

/// ValidateObjectMetaUpdate: resourceVersion present, generation not
/// decremented, immutable name/namespace/uid/creationTimestamp/
/// deletionTimestamp/deletionGracePeriodSeconds, no finalizer added while
/// deleting, then labels, annotations, ownerReferences.
[[nodiscard]] std::vector<status_cause>
validate_object_meta_update(const json& new_metadata, const json& old_metadata);

// --- size limits
// --------------------------------------------------------------

/// kube-apiserver's --max-request-body-bytes default (apiserver
/// pkg/server/config.go): a larger body is refused before decoding.
inline constexpr std::int64_t max_request_body_bytes = 3 * 1024 * 1024;

/// The 413 of a body over `limit` (handlers/rest.go limitedReadBody):
/// reason RequestEntityTooLarge, "Request entity too large: limit is N".
[[nodiscard]] status request_entity_too_large_status(std::int64_t limit
                                                     = max_request_body_bytes);

/// etcd's default --max-request-bytes: an object whose encoding is larger
/// cannot be stored.
inline constexpr std::int64_t max_stored_object_bytes = 1572864;

/// What kube-apiserver answers when etcd refuses such a write: the etcd
/// error passed through as a Status of code 500, reason "" (Unknown),
/// message "etcdserver: request is too large" — kubectl prints `Error from
/// server: etcdserver: request is too large`.
[[nodiscard]] status object_too_large_status();

// --- built-in types ---------------------------------------------------------

/// The size limit of a ConfigMap's data + binaryData (and of a Secret's data).
inline constexpr std::int64_t config_map_max_bytes = 1024 * 1024;

/// ConfigMap (ValidateConfigMap without the metadata): keys of data and
/// binaryData, no key in both, total size <= 1 MiB (the cause of that last
/// one has the field "[]": upstream's path of the whole object).
[[nodiscard]] std::vector<status_cause> validate_config_map(const json& object);
/// Secret: keys of data and stringData (data values counted decoded), total
/// size <= 1 MiB, and the keys each well-known `type` requires.
[[nodiscard]] std::vector<status_cause> validate_secret(const json& object);
/// A defaulted PodSpec at `field` ("spec", "spec.template.spec"), as
/// ValidatePodSpec checks what we model: terminationGracePeriodSeconds,
/// containers non-empty, each with a DNS-1123-label name (unique), an
/// image, terminationMessagePolicy and imagePullPolicy; restartPolicy,
/// dnsPolicy, nodeSelector, serviceAccountName, nodeName, hostname,
/// subdomain. Run it after defaulting, as kube-apiserver does: the fields
/// defaulting fills are required here.
[[nodiscard]] std::vector<status_cause>
validate_pod_spec(const json& spec, const std::string& field = "spec");

} // namespace aiperf::k8s
