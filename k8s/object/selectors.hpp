// Label and field selectors as kube-apiserver parses and matches them
// (kubernetes/apimachinery pkg/labels/selector.go, pkg/fields/selector.go,
// pkg/apis/meta/v1/helpers.go LabelSelectorAsSelector).
//
// A selector the server cannot parse is a 400 BadRequest whose message is
// the parser's, word for word (`unable to parse requirement: ...`,
// `invalid selector: 'x'; can't understand 'x'`, `field label not supported:
// spec.x`): the errors returned here carry that k8s::status.
#pragma once

#include "k8s/api/json.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::k8s {

/// selection.Operator of a label requirement.
enum class label_op : std::uint8_t {
  equals,         // k=v, k==v, matchLabels
  not_equals,     // k!=v
  in,             // k in (a,b)
  not_in,         // k notin (a,b)
  exists,         // k
  does_not_exist, // !k
  greater_than,   // k>1 (integers; kube-apiserver accepts it)
  less_than,      // k<1
};

struct label_requirement {
  std::string key;
  label_op op = label_op::exists;
  std::vector<std::string> values; // sorted, unique (a Go sets.String)

  bool operator==(const label_requirement&) const = default;
};

/// A parsed label selector: requirements ANDed, sorted by key. Empty matches
/// everything; `nothing` (a null LabelSelector) matches no object.
struct label_selector {
  std::vector<label_requirement> requirements;
  bool nothing = false;

  /// `labels` is metadata.labels: an object of strings, or null.
  [[nodiscard]] bool matches(const json& labels) const;
  [[nodiscard]] bool empty() const noexcept {
    return requirements.empty() && !nothing;
  }
  bool operator==(const label_selector&) const = default;
};

/// Parses the `labelSelector` query parameter. Errors: k8s::errc::invalid
/// with a 400 BadRequest status carrying upstream's message.
[[nodiscard]] caf::expected<label_selector>
parse_label_selector(std::string_view text);

/// A metav1.LabelSelector `{"matchLabels":{…},"matchExpressions":[{"key",
/// "operator":"In|NotIn|Exists|DoesNotExist","values"}]}` (Deployment,
/// Job and Service selectors): null = nothing, {} = everything. Errors: 400
/// as above, or `"Foo" is not a valid label selector operator`.
[[nodiscard]] caf::expected<label_selector>
label_selector_from_json(const json& selector);

/// What labels.Selector's String() prints: the requirements in key order,
/// joined by ",": `app=x,tier in (a,b),!legacy` (In/NotIn values sorted).
/// "" for both the empty and the `nothing` selector. A parsed `k==v` prints
/// as `k=v` (equals keeps no spelling), which LabelSelectors never hold.
[[nodiscard]] std::string to_string(const label_selector& selector);

struct field_requirement {
  std::string field; // "metadata.name"
  bool negated = false;
  std::string value; // unescaped

  bool operator==(const field_requirement&) const = default;
};

/// A parsed field selector: terms ANDed, sorted as upstream sorts them.
struct field_selector {
  std::vector<field_requirement> terms;

  /// Compares each term with the object's field: strings as they are,
  /// booleans "true"/"false", numbers as printed, absent as "".
  [[nodiscard]] bool matches(const json& object) const;
  [[nodiscard]] bool empty() const noexcept { return terms.empty(); }
  bool operator==(const field_selector&) const = default;
};

/// How a type refuses a field it does not support. Types that register
/// field label conversions (Pod, Event, Secret, Namespace, Node, Service,
/// Job, custom resources) answer `field label not supported: <f>`; the rest
/// fall back to runtime.DefaultMetaV1FieldSelectorConversion: `"<f>" is not a
/// known field selector: only "metadata.name", "metadata.namespace"`.
enum class field_label_style : std::uint8_t { registered, default_conversion };

/// Parses the `fieldSelector` query parameter against the fields the type
/// supports (the complete list, metadata.name and metadata.namespace
/// included). Errors: k8s::errc::invalid with a 400 BadRequest status.
[[nodiscard]] caf::expected<field_selector>
parse_field_selector(std::string_view text,
                     const std::vector<std::string>& supported_fields,
                     field_label_style style = field_label_style::registered);

/// The value a field selector compares for `path` ("involvedObject.name").
[[nodiscard]] std::string field_value(const json& object,
                                      std::string_view path);

} // namespace aiperf::k8s
