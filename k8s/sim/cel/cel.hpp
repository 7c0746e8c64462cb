// The Common Expression Language as kube-apiserver runs it for a CRD's
// `x-kubernetes-validations`: the subset our CRDs use, checked against the
// types the OpenAPI schema declares and evaluated over k8s::json with
// `self` and `oldSelf` bound (google/cel-spec doc/langdef.md; the Kubernetes
// library in kubernetes/apiserver pkg/cel/library).
//
// Covered: literals (int, uint, double, string, bytes, bool, null, lists,
// maps), `self`/`oldSelf`, field selection, `has()`, indexing, `! && ||`
// (commutative over errors, as CEL's), comparisons (numeric across int, uint
// and double), arithmetic with overflow and division errors, `in` over lists
// and maps, `?:`, `size()`, `startsWith`/`endsWith`/`contains`/`matches`,
// `int()`/`uint()`/`double()`/`string()`/`bool()`/`dyn()`/`type()`, the
// macros `all`/`exists`/`exists_one`/`map`/`filter`, deep equality of lists
// and maps, the optional `oldSelf` of `optionalOldSelf` rules
// (`hasValue()`, `value()`, `orValue()`), and a few Kubernetes string and
// list functions (lowerAscii, upperAscii, trim, split, join, indexOf,
// lastIndexOf, replace, substring, isSorted, sum, min, max).
//
// Errors are values, as in CEL: selecting a missing field evaluates to the
// error `no such key: x` and fails the rule; nothing throws.
#pragma once

#include "k8s/api/json.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aiperf::k8s::cel {

/// The type a schema node has in CEL (apiserver's DeclType): what the
/// checker knows about `self` and everything reachable from it.
struct decl_type {
  enum class kind : std::uint8_t {
    dyn, // x-kubernetes-int-or-string, preserve-unknown objects' contents
    boolean,
    integer,
    number, // CEL double; JSON integers in such a field become doubles
    string,
    list,
    map,    // additionalProperties
    object, // properties: selecting an undeclared one does not compile
  };
  kind k = kind::dyn;
  /// object: the properties exposed to CEL, in schema order, by their CEL
  /// names ("x-y" is `x__dash__y`); preserve-unknown nodes without a type
  /// are not exposed (upstream's SchemaDeclType).
  std::vector<std::pair<std::string, std::shared_ptr<const decl_type>>> fields;
  /// list: the items' type; map: the values' type.
  std::shared_ptr<const decl_type> element;
  /// list: x-kubernetes-list-type (atomic, set, map); map keys for "map".
  std::string list_type;
  std::vector<std::string> list_map_keys;
  /// `nullable: true`: a JSON null is CEL null (otherwise an error value).
  bool nullable = false;

  [[nodiscard]] const decl_type* field(std::string_view name) const;
};

using decl_ptr = std::shared_ptr<const decl_type>;

/// A dynamically typed node (what an untyped value is in CEL).
[[nodiscard]] decl_ptr dyn_type();

/// The CEL name of a property (upstream's escaping: `__dash__`, `__dot__`,
/// `__slash__`, `__underscores__`, reserved words as `__in__` ...), or ""
/// when the property cannot be named in CEL and is not exposed.
[[nodiscard]] std::string escape_property_name(std::string_view name);

/// The property a CEL name stands for ("" when `name` is not an escape).
[[nodiscard]] std::string unescape_property_name(std::string_view name);

struct program; // the checked syntax tree

/// An expression that compiled against its `self` type.
struct compiled_expression {
  std::shared_ptr<const program> code;
  bool uses_old_self = false;
  /// The checked result type as cel-go names it ("bool" for a valid rule,
  /// "string" for a messageExpression; "dyn" when only evaluation knows).
  std::string result_type = "dyn";
};

/// What compile() declares besides `self`.
struct compile_options {
  /// `oldSelf` is declared (every rule may use it; whether it runs is the
  /// validator's business).
  bool declare_old_self = true;
  /// optionalOldSelf: `oldSelf` is an optional of self's type.
  bool optional_old_self = false;
};

/// Parses and type-checks `source`. The error (k8s::errc::invalid) carries
/// cel-go's rendering of the problems, e.g.
/// "ERROR: <input>:1:5: undefined field 'x'\n | self.x == 1\n | ....^".
[[nodiscard]] caf::expected<compiled_expression>
compile(std::string_view source, const decl_ptr& self_type,
        compile_options options = {});

/// The variables of one evaluation. Pointers are borrowed for the call.
struct activation {
  const json* self = nullptr;
  decl_ptr self_type;
  /// Null: no old value (a create, or a field added by an update).
  const json* old_self = nullptr;
  /// The rule declared optionalOldSelf: `oldSelf` is optional.none() when
  /// old_self is null, optional.of(old) otherwise.
  bool optional_old_self = false;
};

/// Evaluates a compiled expression. The value is the result as JSON (a bool
/// for a rule, a string for a messageExpression; lists and maps as arrays
/// and objects). An evaluation error (k8s::errc::invalid) carries CEL's
/// message as its text: "no such key: x", "index out of bounds: 3",
/// "division by zero", "integer overflow", "no such overload: ...".
[[nodiscard]] caf::expected<json> evaluate(const compiled_expression& expr,
                                           const activation& vars);

} // namespace aiperf::k8s::cel
