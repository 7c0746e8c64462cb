#include "config/benchmark/openapi.hpp"

#include "config/benchmark/cel_rules.hpp"

#include <cmath>

namespace aiperf::config::benchmark {

namespace {

const char* openapi_type(value_type t) {
  switch (t) {
  case value_type::object:
  case value_type::map:
  case value_type::any:
    return "object";
  case value_type::array:
    return "array";
  case value_type::string:
    return "string";
  case value_type::integer:
    return "integer";
  case value_type::number:
    return "number";
  case value_type::boolean:
    return "boolean";
  case value_type::int_or_string:
    return "";
  }
  return "";
}

json bound(double x, value_type t) {
  if (t == value_type::integer && std::floor(x) == x)
    return static_cast<std::int64_t>(x);
  return x;
}

json opaque_object(const std::string& description) {
  json out = json::object();
  out["type"] = "object";
  if (!description.empty())
    out["description"] = description;
  out["x-kubernetes-preserve-unknown-fields"] = true;
  return out;
}

} // namespace

json openapi_schema(const field& f) {
  if (f.opaque_in_crd)
    return opaque_object("");
  json out = json::object();
  if (f.type == value_type::any) {
    // AIPerf's typeless union escapes keep no type; every other
    // preserve-unknown node is an object.
    if (!f.mixed)
      out["type"] = "object";
    if (!f.description.empty())
      out["description"] = f.description;
    out["x-kubernetes-preserve-unknown-fields"] = true;
    return out;
  }
  if (f.type == value_type::int_or_string) {
    if (!f.description.empty())
      out["description"] = f.description;
    out["x-kubernetes-int-or-string"] = true;
    return out;
  }
  out["type"] = openapi_type(f.type);
  if (!f.description.empty())
    out["description"] = f.description;
  if (!f.enum_values.empty())
    out["enum"] = f.enum_values;
  if (f.default_value)
    out["default"] = *f.default_value;
  if (f.minimum) {
    if (f.exclusive_minimum)
      out["exclusiveMinimum"] = true;
    out["minimum"] = bound(*f.minimum, f.type);
  }
  if (f.maximum) {
    if (f.exclusive_maximum)
      out["exclusiveMaximum"] = true;
    out["maximum"] = bound(*f.maximum, f.type);
  }
  if (f.min_length)
    out["minLength"] = *f.min_length;
  if (f.type == value_type::array) {
    out["items"] = f.items ? openapi_schema(*f.items) : opaque_object("");
    if (f.min_items)
      out["minItems"] = *f.min_items;
    if (f.max_items)
      out["maxItems"] = *f.max_items;
  }
  if (f.type == value_type::map)
    out["additionalProperties"]
        = f.items ? openapi_schema(*f.items) : opaque_object("");
  if (f.type == value_type::object && !f.properties.empty()) {
    json props = json::object();
    json required = json::array();
    for (const auto& p : f.properties) {
      props[p.name] = openapi_schema(p);
      if (p.required)
        required.push_back(p.name);
    }
    out["properties"] = std::move(props);
    if (!required.empty())
      out["required"] = std::move(required);
  }
  if (f.rules != shape::none) {
    json rules = json::array();
    for (const auto& r : cel_rules_for(f.rules))
      rules.push_back(json{{"rule", r.rule}, {"message", r.message}});
    if (!rules.empty())
      out["x-kubernetes-validations"] = std::move(rules);
  }
  return out;
}

json job_spec_openapi() {
  return openapi_schema(job_spec_schema());
}

json benchmark_openapi() {
  return openapi_schema(benchmark_schema());
}

} // namespace aiperf::config::benchmark
