// AIPerf's Config-v2 benchmark model as data: every field of the document
// `aiperf profile -f FILE` reads and of an AIPerfJob's spec, with AIPerf's
// names (camelCase, as AIPerf serializes them and its CRD advertises), types,
// defaults, bounds, descriptions, and whether aiperf-node implements it.
//
// One tree feeds everything that must agree: validation (validate.hpp), the
// snake_case → camelCase normalization (document.hpp), the OpenAPI v3 schema
// of the CRD (openapi.hpp) and the docs' list of supported fields. Sources:
// ai-dynamo/aiperf src/aiperf/config/ (the Pydantic models) and the CRD its
// tools/generate_crd.py renders (deploy/helm/aiperf-operator/templates/
// crd-aiperfjob.yaml).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::config::benchmark {

using json = nlohmann::ordered_json;

/// The JSON shape of a field.
enum class value_type : std::uint8_t {
  object, ///< declared properties (unknown keys are refused)
  array,  ///< `items` describes each element
  string,
  integer,
  number, ///< integer or floating point
  boolean,
  int_or_string, ///< x-kubernetes-int-or-string (AIPerf's `workers: auto`)
  map,           ///< object of free keys; `items` describes each value
  any,           ///< x-kubernetes-preserve-unknown-fields: anything goes
};

/// What aiperf-node does with a field.
enum class support : std::uint8_t {
  supported,        ///< read and honoured
  unsupported,      ///< AIPerf has it, aiperf-node does not: refused
  operator_managed, ///< Kubernetes only; the operator sets it, as in AIPerf
  extension,        ///< aiperf-node's own knob (no AIPerf equivalent)
};

/// The shapes the CEL rules of the CRD attach to (AIPerf's generator finds
/// them by a fingerprint of property keys; here the model names them).
enum class shape : std::uint8_t {
  none,
  endpoint,  ///< benchmark.endpoint
  runtime,   ///< benchmark.runtime
  multi_run, ///< multiRun
  job_spec,  ///< the AIPerfJob spec node
  sweep_spec ///< the AIPerfSweep spec node
};

/// One node of the model.
struct field {
  std::string name; ///< camelCase key ("" for array items and map values)
  value_type type = value_type::any;
  std::string description;
  std::optional<json> default_value;
  std::vector<std::string> enum_values;
  /// For a supported field with an enum: the values aiperf-node implements
  /// (empty = all); the others are refused as not supported.
  std::vector<std::string> supported_values;
  /// A number of seconds that may also be written as AIPerf's duration text
  /// ("30s", "5m", "2h"; "inf" where infinity is allowed).
  bool duration = false;
  /// A string's pattern (regular expression), if any.
  std::string pattern;
  std::optional<double> minimum;
  std::optional<double> maximum;
  bool exclusive_minimum = false;
  bool exclusive_maximum = false;
  std::optional<std::int64_t> min_length;
  std::optional<std::int64_t> min_items;
  std::optional<std::int64_t> max_items;
  bool required = false;
  support status = support::supported;
  /// For unsupported fields, values aiperf-node accepts anyway because they
  /// describe what it does regardless (`serverMetrics: {enabled: false}`).
  std::vector<json> accepted_values;
  /// A shorthand that may hold a scalar, a list or an object (AIPerf's
  /// mixed unions: `models`, `endpoint.urls`, `artifacts.summary`). Its CRD
  /// node stays typeless preserve-unknown, because `type: object` would
  /// refuse `models: [name]`; validation still reads it.
  bool mixed = false;
  /// The CRD renders this node as an opaque object
  /// (x-kubernetes-preserve-unknown-fields) although the model declares its
  /// contents: AIPerf's discriminated unions (datasets[], phases[]) and
  /// shorthands. Validation walks the declared contents.
  bool opaque_in_crd = false;
  shape rules = shape::none;
  /// Array items or map values.
  std::shared_ptr<const field> items;
  std::vector<field> properties;

  /// The property named `key` (camelCase), or null.
  [[nodiscard]] const field* find(std::string_view key) const;
};

/// The spelling of `camel` AIPerf's loader also accepts in files
/// ("apiKey" → "api_key").
[[nodiscard]] std::string snake_case(std::string_view camel);

/// BenchmarkConfig: the `benchmark` node (models, endpoint, datasets, ...).
[[nodiscard]] const field& benchmark_schema();

/// AIPerfConfig: what `profile -f FILE` reads (schemaVersion, benchmark,
/// multiRun, randomSeed, ...).
[[nodiscard]] const field& config_schema();

/// AIPerfJob's spec: AIPerfConfig plus the deployment fields (image,
/// podTemplate, scheduling, ...).
[[nodiscard]] const field& job_spec_schema();

/// The dotted paths of the fields the operator sets in an AIPerfJob
/// ("benchmark.runtime.serviceRunType", ...), as AIPerf's operator does.
[[nodiscard]] const std::vector<std::string>& operator_managed_paths();

/// Calls `fn(path, field)` for every node under `root` (depth first, items
/// as "path[]"; map values as "path.*").
template <class Fn>
void for_each_field(const field& root, const std::string& path, Fn&& fn) {
  fn(path, root);
  for (const auto& p : root.properties)
    for_each_field(p, path.empty() ? p.name : path + "." + p.name, fn);
  if (root.items)
    for_each_field(*root.items,
                   path + (root.type == value_type::map ? ".*" : "[]"), fn);
}

} // namespace aiperf::config::benchmark
