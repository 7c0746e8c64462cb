#include "k8s/sim/schema/schema.hpp"

#include "k8s/sim/cel/cel.hpp"
#include "k8s/sim/cel/format.hpp"
#include "proto/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace aiperf::k8s::sim {

using cel::go_format_g;
using k8s::go_quote;

namespace {

// ---------------------------------------------------------------------------
// How apimachinery's field.Error reads (v0.32 ErrorBody).

struct field_error {
  std::string reason; // FieldValueInvalid, ...
  std::string field;
  std::string body; // "Invalid value: ...: detail"

  [[nodiscard]] std::string text() const { return field + ": " + body; }
};

/// Go's %#v of an unstructured JSON value (the fallback for maps and lists).
std::string go_sharp_v(const json& j) {
  switch (j.type()) {
  case json::value_t::null:
    return "interface {}(nil)";
  case json::value_t::boolean:
    return j.get<bool>() ? "true" : "false";
  case json::value_t::string:
    return go_quote(j.get<std::string>());
  case json::value_t::number_integer:
    return std::to_string(j.get<std::int64_t>());
  case json::value_t::number_unsigned:
    return std::to_string(j.get<std::uint64_t>());
  case json::value_t::number_float:
    return go_format_g(j.get<double>());
  case json::value_t::array: {
    std::string out = "[]interface {}{";
    bool first = true;
    for (const auto& v : j) {
      if (!first)
        out += ", ";
      first = false;
      out += go_sharp_v(v);
    }
    return out + "}";
  }
  case json::value_t::object: {
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it)
      keys.push_back(it.key());
    std::sort(keys.begin(), keys.end());
    std::string out = "map[string]interface {}{";
    bool first = true;
    for (const auto& k : keys) {
      if (!first)
        out += ", ";
      first = false;
      out += go_quote(k) + ":" + go_sharp_v(j.at(k));
    }
    return out + "}";
  }
  default:
    return "interface {}(nil)";
  }
}

/// The "<Type>: <value>" head of a bad value, as ErrorBody prints it.
std::string bad_value(const json& v) {
  if (v.is_null())
    return go_quote("null");
  if (v.is_string())
    return go_quote(v.get<std::string>());
  if (v.is_boolean() || v.is_number())
    return v.is_number_float() ? go_format_g(v.get<double>()) : v.dump();
  return go_sharp_v(v);
}

field_error invalid(std::string field, const json& value,
                    const std::string& detail,
                    std::string reason = "FieldValueInvalid") {
  std::string body = "Invalid value: " + bad_value(value);
  if (!detail.empty())
    body += ": " + detail;
  return {std::move(reason), std::move(field), std::move(body)};
}

field_error invalid_raw(std::string field, const std::string& printed_value,
                        const std::string& detail) {
  return {"FieldValueInvalid", std::move(field),
          "Invalid value: " + printed_value + ": " + detail};
}

field_error required(std::string field, const std::string& detail = "") {
  std::string body = "Required value";
  if (!detail.empty())
    body += ": " + detail;
  return {"FieldValueRequired", std::move(field), std::move(body)};
}

field_error forbidden(std::string field, const std::string& detail) {
  std::string body = "Forbidden";
  if (!detail.empty())
    body += ": " + detail;
  return {"FieldValueForbidden", std::move(field), std::move(body)};
}

field_error not_supported(std::string field, const json& value,
                          const std::vector<std::string>& supported) {
  std::string body = "Unsupported value: " + bad_value(value);
  if (!supported.empty()) {
    body += ": supported values: ";
    for (std::size_t k = 0; k < supported.size(); ++k) {
      if (k)
        body += ", ";
      body += go_quote(supported[k]);
    }
  }
  return {"FieldValueNotSupported", std::move(field), std::move(body)};
}

field_error duplicate(std::string field, const std::string& printed_value) {
  return {"FieldValueDuplicate", std::move(field),
          "Duplicate value: " + printed_value};
}

// field.Path spelling: a.b, a[0], a[key].
std::string child(const std::string& path, std::string_view name) {
  return path.empty() ? std::string{name} : path + "." + std::string{name};
}

std::string index(const std::string& path, std::size_t i) {
  return (path.empty() ? std::string{"<nil>"} : path) + "[" + std::to_string(i)
         + "]";
}

std::string key(const std::string& path, std::string_view k) {
  return (path.empty() ? std::string{"<nil>"} : path) + "[" + std::string{k}
         + "]";
}

std::string or_nil(const std::string& path) {
  return path.empty() ? "<nil>" : path;
}

// ---------------------------------------------------------------------------
// The compiled schema.

struct rule {
  std::string source;
  std::string message;
  std::string message_expression;
  std::optional<std::string> reason;
  std::string field_path;
  std::optional<bool> optional_old_self;
  std::optional<cel::compiled_expression> compiled;
  std::optional<cel::compiled_expression> message_compiled;
};

struct node {
  std::string type;
  std::string format;
  bool nullable = false;
  bool int_or_string = false;
  bool preserve_unknown = false;
  bool embedded_resource = false;
  std::vector<std::pair<std::string, std::unique_ptr<node>>> properties;
  std::unique_ptr<node> additional; // additionalProperties as a schema
  bool additional_false = false;    // additionalProperties: false
  std::unique_ptr<node> items;
  std::vector<std::string> required_fields;
  std::optional<json> enum_values;
  std::optional<double> minimum, maximum, multiple_of;
  bool exclusive_minimum = false, exclusive_maximum = false;
  std::optional<std::int64_t> min_length, max_length, min_items, max_items,
      min_properties, max_properties;
  std::string pattern;
  std::optional<std::regex> pattern_re;
  std::optional<json> default_value;
  std::string list_type;
  std::vector<std::string> list_map_keys;
  std::string map_type;
  std::vector<rule> rules;
  /// Value validations under junctors: nodes with no type of their own.
  std::vector<std::unique_ptr<node>> all_of, any_of, one_of;
  std::unique_ptr<node> not_of;
  cel::decl_ptr decl; // null: not visible to CEL

  [[nodiscard]] const node* property(std::string_view name) const {
    for (const auto& [n, p] : properties)
      if (n == name)
        return p.get();
    return nullptr;
  }
};

} // namespace

class compiled_schema {
public:
  std::unique_ptr<node> root;
  /// Some node has x-kubernetes-validations (upstream runs no CEL
  /// validator, and adds no "not checked" cause, otherwise).
  bool has_rules = false;
};

namespace {

// ---------------------------------------------------------------------------
// Reading and checking a schema (apiextensions validation.go, structural
// validation.go).

struct reader {
  std::vector<field_error>& errors;
  bool structural_failed = false;

  void fail(field_error e) {
    structural_failed = true;
    errors.push_back(std::move(e));
  }

  static std::optional<std::int64_t> int_of(const json& j, const char* name) {
    auto it = j.find(name);
    if (it == j.end() || !it->is_number())
      return std::nullopt;
    return it->get<std::int64_t>();
  }

  static std::optional<double> double_of(const json& j, const char* name) {
    auto it = j.find(name);
    if (it == j.end() || !it->is_number())
      return std::nullopt;
    return it->get<double>();
  }

  static bool bool_of(const json& j, const char* name) {
    auto it = j.find(name);
    return it != j.end() && it->is_boolean() && it->get<bool>();
  }

  static std::string string_of(const json& j, const char* name) {
    auto it = j.find(name);
    if (it == j.end() || !it->is_string())
      return {};
    return it->get<std::string>();
  }

  enum class level { root, item, field };

  std::unique_ptr<node> read(const json& j, const std::string& path,
                             level lvl) {
    auto n = std::make_unique<node>();
    if (!j.is_object()) {
      fail(invalid(path, j, "must be an object"));
      return n;
    }
    n->type = string_of(j, "type");
    n->format = string_of(j, "format");
    n->nullable = bool_of(j, "nullable");
    n->int_or_string = bool_of(j, "x-kubernetes-int-or-string");
    n->embedded_resource = bool_of(j, "x-kubernetes-embedded-resource");
    if (auto it = j.find("x-kubernetes-preserve-unknown-fields");
        it != j.end()) {
      if (it->is_boolean() && !it->get<bool>())
        fail(invalid(path + ".x-kubernetes-preserve-unknown-fields", false,
                     "must be true or undefined"));
      n->preserve_unknown = it->is_boolean() && it->get<bool>();
    }
    if (auto it = j.find("enum"); it != j.end() && it->is_array())
      n->enum_values = *it;
    n->minimum = double_of(j, "minimum");
    n->maximum = double_of(j, "maximum");
    n->multiple_of = double_of(j, "multipleOf");
    n->exclusive_minimum = bool_of(j, "exclusiveMinimum");
    n->exclusive_maximum = bool_of(j, "exclusiveMaximum");
    n->min_length = int_of(j, "minLength");
    n->max_length = int_of(j, "maxLength");
    n->min_items = int_of(j, "minItems");
    n->max_items = int_of(j, "maxItems");
    n->min_properties = int_of(j, "minProperties");
    n->max_properties = int_of(j, "maxProperties");
    n->pattern = string_of(j, "pattern");
    n->list_type = string_of(j, "x-kubernetes-list-type");
    n->map_type = string_of(j, "x-kubernetes-map-type");
    if (auto it = j.find("x-kubernetes-list-map-keys");
        it != j.end() && it->is_array())
      for (const auto& k : *it)
        if (k.is_string())
          n->list_map_keys.push_back(k.get<std::string>());
    if (auto it = j.find("default"); it != j.end())
      n->default_value = *it;
    if (auto it = j.find("required"); it != j.end() && it->is_array())
      for (const auto& r : *it)
        if (r.is_string())
          n->required_fields.push_back(r.get<std::string>());

    if (lvl == level::root && n->nullable)
      fail(
          forbidden(path + ".nullable", "nullable cannot be true at the root"));
    if (bool_of(j, "uniqueItems"))
      fail(forbidden(path + ".uniqueItems",
                     "uniqueItems cannot be set to true since the runtime "
                     "complexity becomes "
                     "quadratic"));
    if (auto it = j.find("properties"); it != j.end() && it->is_object()) {
      bool at_resource = lvl == level::root || n->embedded_resource;
      for (auto p = it->begin(); p != it->end(); ++p) {
        std::string sub = path + ".properties[" + p.key() + "]";
        if (at_resource && p.key() == "metadata") {
          check_metadata(p.value(), sub, lvl == level::root);
        }
        if (lvl == level::root
            && (p.key() == "metadata" || p.key() == "kind"
                || p.key() == "apiVersion")
            && p.value().is_object() && p.value().contains("default"))
          fail(forbidden(sub + ".default", "must not be set for top-level "
                                               + p.key() + " (not allowed)"));
        n->properties.emplace_back(p.key(), read(p.value(), sub, level::field));
      }
      if (at_resource) {
        for (const char* meta : {"kind", "apiVersion"}) {
          const node* m = n->property(meta);
          if (m && m->type != "string")
            fail(invalid(path + ".properties[" + meta + "].type", m->type,
                         "must be string"));
        }
      }
    }
    if (auto it = j.find("additionalProperties"); it != j.end()) {
      if (lvl == level::root)
        fail(forbidden(path + ".additionalProperties",
                       "must not be used at the root"));
      if (it->is_boolean()) {
        n->additional_false = !it->get<bool>();
        if (!n->properties.empty() && n->additional_false)
          fail(forbidden(
              path + ".additionalProperties",
              "additionalProperties and properties are mutual exclusive"));
      } else if (it->is_object()) {
        if (!n->properties.empty())
          fail(forbidden(
              path + ".additionalProperties",
              "additionalProperties and properties are mutual exclusive"));
        if (n->embedded_resource)
          fail(forbidden(
              path + ".additionalProperties",
              "must not be used if x-kubernetes-embedded-resource is set"));
        n->additional = read(*it, path + ".additionalProperties", level::field);
      }
    }
    if (auto it = j.find("items"); it != j.end()) {
      if (it->is_object())
        n->items = read(*it, path + ".items", level::item);
      else
        fail(invalid(path + ".items", *it, "must only have a single schema"));
    } else if (n->type == "array") {
      fail(required(path + ".items", "must be specified"));
    }
    // Types (structural validation.go).
    if (n->embedded_resource && n->type != "object") {
      if (n->type.empty())
        fail(required(
            path + ".type",
            "must be object if x-kubernetes-embedded-resource is true"));
      else
        fail(invalid(
            path + ".type", n->type,
            "must be object if x-kubernetes-embedded-resource is true"));
    } else if (n->type.empty() && !n->int_or_string && !n->preserve_unknown) {
      switch (lvl) {
      case level::root:
        fail(required(path + ".type", "must not be empty at the root"));
        break;
      case level::item:
        fail(required(path + ".type",
                      "must not be empty for specified array items"));
        break;
      case level::field:
        fail(required(path + ".type",
                      "must not be empty for specified object fields"));
        break;
      }
    }
    if (lvl == level::root && !n->type.empty() && n->type != "object")
      fail(invalid(path + ".type", n->type, "must be object at the root"));
    static const std::set<std::string, std::less<>> types
        = {"", "object", "array", "string", "integer", "number", "boolean"};
    if (!types.count(n->type))
      fail(not_supported(
          path + ".type", n->type,
          {"array", "boolean", "integer", "number", "object", "string"}));
    if (n->int_or_string && n->preserve_unknown)
      fail(invalid(path + ".x-kubernetes-preserve-unknown-fields", true,
                   "must be false if x-kubernetes-int-or-string is true"));
    if (n->int_or_string && n->embedded_resource)
      fail(invalid(path + ".x-kubernetes-embedded-resource", true,
                   "must be false if x-kubernetes-int-or-string is true"));
    if (n->embedded_resource && !n->preserve_unknown && n->properties.empty())
      fail(required(
          path + ".properties",
          "must not be empty if x-kubernetes-embedded-resource is true without "
          "x-kubernetes-preserve-unknown-fields"));
    if (!n->pattern.empty()) {
      try {
        n->pattern_re = cel::go_regex(n->pattern);
      } catch (const std::regex_error& e) {
        fail(invalid(
            path + ".pattern", n->pattern,
            std::string{"must be a valid regular expression, but isn't: "}
                + e.what()));
      }
    }
    check_list_and_map_types(*n, path);
    read_junctors(*n, j, path, n->int_or_string);
    if (auto it = j.find("x-kubernetes-validations");
        it != j.end() && it->is_array())
      read_rules(*n, *it, path + ".x-kubernetes-validations");
    return n;
  }

  /// anyOf: [{type: integer}, {type: string}], the one junctor content an
  /// int-or-string node may type (structural validation.go).
  static bool int_or_string_pattern(const json& any_of) {
    return any_of.is_array() && any_of.size() == 2
           && any_of[0] == json{{"type", "integer"}}
           && any_of[1] == json{{"type", "string"}};
  }

  void read_junctors(node& n, const json& j, const std::string& path,
                     bool int_or_string) {
    for (const char* junctor : {"allOf", "anyOf", "oneOf"}) {
      auto it = j.find(junctor);
      if (it == j.end() || !it->is_array())
        continue;
      bool skip_types = int_or_string && std::string_view{junctor} == "anyOf"
                        && int_or_string_pattern(*it);
      std::string_view which{junctor};
      auto& out = which == "allOf"   ? n.all_of
                  : which == "anyOf" ? n.any_of
                                     : n.one_of;
      for (std::size_t i = 0; i < it->size(); ++i) {
        bool first_all_of
            = int_or_string && std::string_view{junctor} == "allOf" && i == 0
              && (*it)[0].is_object()
              && int_or_string_pattern((*it)[0].value("anyOf", json()));
        out.push_back(read_nested(
            (*it)[i], path + "." + junctor + "[" + std::to_string(i) + "]",
            skip_types, first_all_of));
      }
    }
    if (auto it = j.find("not"); it != j.end())
      n.not_of = read_nested(*it, path + ".not", false, false);
  }

  /// A value validation under a junctor: it may restrict, never declare.
  std::unique_ptr<node> read_nested(const json& j, const std::string& path,
                                    bool type_allowed,
                                    bool nested_int_or_string) {
    auto n = std::make_unique<node>();
    if (!j.is_object()) {
      fail(invalid(path, j, "must be an object"));
      return n;
    }
    auto forbid = [&](const char* key, const char* detail) {
      if (j.contains(key))
        fail(forbidden(path + "." + key, detail));
    };
    if (!type_allowed)
      forbid("type", "must be empty to be structural");
    forbid("default", "must be undefined to be structural");
    forbid("title", "must be empty to be structural");
    forbid("description", "must be empty to be structural");
    if (bool_of(j, "nullable"))
      fail(forbidden(path + ".nullable", "must be false to be structural"));
    if (bool_of(j, "x-kubernetes-preserve-unknown-fields"))
      fail(forbidden(path + ".x-kubernetes-preserve-unknown-fields",
                     "must be false to be structural"));
    if (bool_of(j, "x-kubernetes-embedded-resource"))
      fail(forbidden(path + ".x-kubernetes-embedded-resource",
                     "must be false to be structural"));
    if (bool_of(j, "x-kubernetes-int-or-string"))
      fail(forbidden(path + ".x-kubernetes-int-or-string",
                     "must be false to be structural"));
    forbid("x-kubernetes-list-map-keys", "must be empty to be structural");
    forbid("x-kubernetes-list-type", "must be undefined to be structural");
    forbid("x-kubernetes-map-type", "must be undefined to be structural");
    forbid("x-kubernetes-validations", "must be empty to be structural");
    forbid("additionalProperties", "must be undefined to be structural");
    n->type = type_allowed ? string_of(j, "type") : std::string{};
    if (auto it = j.find("enum"); it != j.end() && it->is_array())
      n->enum_values = *it;
    n->minimum = double_of(j, "minimum");
    n->maximum = double_of(j, "maximum");
    n->multiple_of = double_of(j, "multipleOf");
    n->exclusive_minimum = bool_of(j, "exclusiveMinimum");
    n->exclusive_maximum = bool_of(j, "exclusiveMaximum");
    n->min_length = int_of(j, "minLength");
    n->max_length = int_of(j, "maxLength");
    n->min_items = int_of(j, "minItems");
    n->max_items = int_of(j, "maxItems");
    n->min_properties = int_of(j, "minProperties");
    n->max_properties = int_of(j, "maxProperties");
    n->pattern = string_of(j, "pattern");
    if (!n->pattern.empty()) {
      try {
        n->pattern_re = cel::go_regex(n->pattern);
      } catch (const std::regex_error& e) {
        fail(invalid(
            path + ".pattern", n->pattern,
            std::string{"must be a valid regular expression, but isn't: "}
                + e.what()));
      }
    }
    if (auto it = j.find("required"); it != j.end() && it->is_array())
      for (const auto& r : *it)
        if (r.is_string())
          n->required_fields.push_back(r.get<std::string>());
    if (auto it = j.find("properties"); it != j.end() && it->is_object())
      for (auto p = it->begin(); p != it->end(); ++p) {
        std::string sub = path + ".properties[" + p.key() + "]";
        if (p.key() == "metadata")
          fail(forbidden(sub, "must not be specified in a nested context"));
        n->properties.emplace_back(p.key(),
                                   read_nested(p.value(), sub, false, false));
      }
    if (auto it = j.find("items"); it != j.end())
      n->items = read_nested(*it, path + ".items", false, false);
    read_junctors(*n, j, path, nested_int_or_string);
    return n;
  }

  void check_metadata(const json& meta, const std::string& path, bool root) {
    if (!meta.is_object())
      return;
    if (string_of(meta, "type") != "object" && meta.contains("type"))
      fail(invalid(path + ".type", meta["type"], "must be object"));
    if (!root)
      return;
    // Only name and generateName may be restricted.
    for (auto it = meta.begin(); it != meta.end(); ++it) {
      if (it.key() == "type" || it.key() == "description")
        continue;
      if (it.key() == "properties" && it->is_object()) {
        bool only_names = true;
        for (auto p = it->begin(); p != it->end(); ++p)
          if (p.key() != "name" && p.key() != "generateName")
            only_names = false;
        if (only_names)
          continue;
      }
      fail(forbidden(
          path,
          "must not specify anything other than name and generateName, but "
          "metadata is implicitly specified"));
      return;
    }
  }

  void check_list_and_map_types(const node& n, const std::string& path) {
    if (!n.map_type.empty()) {
      if (n.type != "object") {
        if (n.type.empty())
          fail(
              required(path + ".type",
                       "must be object if x-kubernetes-map-type is specified"));
        else
          fail(invalid(path + ".type", n.type,
                       "must be object if x-kubernetes-map-type is specified"));
      }
      if (n.map_type != "atomic" && n.map_type != "granular")
        fail(not_supported(path + ".x-kubernetes-map-type", n.map_type,
                           {"atomic", "granular"}));
    }
    if (!n.list_type.empty()) {
      if (n.type != "array") {
        if (n.type.empty())
          fail(
              required(path + ".type",
                       "must be array if x-kubernetes-list-type is specified"));
        else
          fail(invalid(path + ".type", n.type,
                       "must be array if x-kubernetes-list-type is specified"));
      }
      if (n.list_type != "atomic" && n.list_type != "set"
          && n.list_type != "map")
        fail(not_supported(path + ".x-kubernetes-list-type", n.list_type,
                           {"atomic", "set", "map"}));
    }
    if (!n.list_map_keys.empty()) {
      if (n.list_type.empty())
        fail(
            required(path + ".x-kubernetes-list-type",
                     "must be map if x-kubernetes-list-map-keys is non-empty"));
      else if (n.list_type != "map")
        fail(invalid(path + ".x-kubernetes-list-type", n.list_type,
                     "must be map if x-kubernetes-list-map-keys is non-empty"));
    }
    if (n.list_type == "map") {
      if (n.list_map_keys.empty())
        fail(required(path + ".x-kubernetes-list-map-keys",
                      "must not be empty if x-kubernetes-list-type is map"));
      if (!n.items) {
        fail(required(path + ".items",
                      "must have a schema if x-kubernetes-list-type is map"));
      } else if (n.items->type != "object") {
        fail(invalid(
            path + ".items.type", n.items->type,
            "must be object if parent array's x-kubernetes-list-type is map"));
      } else {
        json keys = n.list_map_keys;
        std::set<std::string> seen;
        for (const auto& k : n.list_map_keys) {
          const node* p = n.items->property(k);
          if (!p)
            fail(invalid(path + ".x-kubernetes-list-map-keys", keys,
                         "entries must all be names of item properties"));
          else if (p->type == "array" || p->type == "object")
            fail(invalid(path + ".items.properties[" + k + "].type",
                         n.items->type,
                         "must be a scalar type if parent array's "
                         "x-kubernetes-list-type is map"));
          if (!seen.insert(k).second)
            fail(invalid(path + ".x-kubernetes-list-map-keys", keys,
                         "must not contain duplicate entries"));
        }
      }
    }
  }

  /// A rule's fieldPath (".a.b", ".m['k']") must name a field the schema
  /// declares under the rule's node; lists cannot be indexed
  /// (schema/cel/validation.go ValidFieldPath).
  static bool valid_field_path(const node& n, const std::string& path) {
    const node* at = &n;
    std::size_t k = 0;
    if (path.empty())
      return false;
    while (k < path.size()) {
      std::string step;
      if (path[k] == '.') {
        std::size_t end = k + 1;
        while (end < path.size() && path[end] != '.' && path[end] != '[')
          ++end;
        step = path.substr(k + 1, end - k - 1);
        k = end;
      } else if (path.compare(k, 2, "['") == 0) {
        auto end = path.find("']", k + 2);
        if (end == std::string::npos)
          return false;
        step = path.substr(k + 2, end - k - 2);
        k = end + 2;
      } else {
        return false;
      }
      if (step.empty())
        return false;
      if (const node* p = at->property(step))
        at = p;
      else if (at->additional)
        at = at->additional.get();
      else
        return false;
    }
    return true;
  }

  void read_rules(node& n, const json& list, const std::string& path) {
    static const std::vector<std::string> reasons
        = {"FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid",
           "FieldValueRequired"};
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json& r = list[i];
      rule out;
      std::string at = path + "[" + std::to_string(i) + "]";
      if (!r.is_object()) {
        fail(invalid(at, r, "must be an object"));
        continue;
      }
      out.source = string_of(r, "rule");
      out.message = string_of(r, "message");
      out.message_expression = string_of(r, "messageExpression");
      out.field_path = string_of(r, "fieldPath");
      if (auto it = r.find("reason"); it != r.end() && it->is_string())
        out.reason = it->get<std::string>();
      if (auto it = r.find("optionalOldSelf");
          it != r.end() && it->is_boolean())
        out.optional_old_self = it->get<bool>();
      auto trim = [](const std::string& s) {
        auto b = s.find_first_not_of(" \t\n\r\f\v");
        if (b == std::string::npos)
          return std::string{};
        return s.substr(b, s.find_last_not_of(" \t\n\r\f\v") - b + 1);
      };
      std::string rule_text = trim(out.source);
      std::string msg = trim(out.message);
      if (rule_text.empty())
        fail(required(at + ".rule", "rule is not specified"));
      else if (!out.message.empty() && msg.empty())
        fail(invalid(at + ".message", out.message,
                     "must be non-empty if specified"));
      else if (msg.find('\n') != std::string::npos)
        fail(invalid(at + ".message", out.message,
                     "must not contain line breaks"));
      else if (rule_text.find('\n') != std::string::npos && msg.empty())
        fail(
            required(at + ".message",
                     "message must be specified if rule contains line breaks"));
      if (!out.message_expression.empty()
          && trim(out.message_expression).empty())
        fail(required(at + ".messageExpression",
                      "messageExpression must be non-empty if specified"));
      if (out.reason
          && std::find(reasons.begin(), reasons.end(), *out.reason)
                 == reasons.end())
        fail(not_supported(at + ".reason", *out.reason, reasons));
      if (!out.field_path.empty() && trim(out.field_path).empty())
        fail(invalid(at + ".fieldPath", out.field_path,
                     "must be non-empty if specified"));
      else if (out.field_path.find('\n') != std::string::npos)
        fail(invalid(at + ".fieldPath", out.field_path,
                     "must not contain line breaks"));
      else if (!out.field_path.empty() && !valid_field_path(n, out.field_path))
        fail(
            invalid(at + ".fieldPath", out.field_path, "must be a valid path"));
      n.rules.push_back(std::move(out));
    }
  }
};

// ---------------------------------------------------------------------------
// CEL types of schema nodes (apiserver pkg/cel/common/schemas.go).

cel::decl_ptr make_scalar(cel::decl_type::kind k, bool nullable) {
  auto d = std::make_shared<cel::decl_type>();
  d->k = k;
  d->nullable = nullable;
  return d;
}

cel::decl_ptr decl_of(node& n, bool resource_root) {
  using k = cel::decl_type::kind;
  if (n.int_or_string) {
    n.decl = cel::dyn_type();
    return n.decl;
  }
  auto d = std::make_shared<cel::decl_type>();
  d->nullable = n.nullable;
  if (n.type == "array") {
    if (!n.items)
      return nullptr;
    auto item = decl_of(*n.items, n.items->embedded_resource);
    if (!item)
      return nullptr;
    d->k = k::list;
    d->element = std::move(item);
    d->list_type = n.list_type;
    d->list_map_keys = n.list_map_keys;
  } else if (n.type == "object") {
    if (n.additional) {
      auto value = decl_of(*n.additional, n.additional->embedded_resource);
      for (auto& [name, p] : n.properties)
        decl_of(*p, p->embedded_resource);
      if (!value)
        return nullptr;
      d->k = k::map;
      d->element = std::move(value);
    } else {
      d->k = k::object;
      for (auto& [name, p] : n.properties) {
        auto field = decl_of(*p, p->embedded_resource);
        std::string cel_name = cel::escape_property_name(name);
        if (field && !cel_name.empty())
          d->fields.emplace_back(cel_name, std::move(field));
      }
      if (resource_root || n.embedded_resource) {
        // kind, apiVersion and metadata.name/generateName are always there.
        auto set_field = [&](const std::string& name, cel::decl_ptr t) {
          for (auto& f : d->fields)
            if (f.first == name) {
              f.second = std::move(t);
              return;
            }
          d->fields.emplace_back(name, std::move(t));
        };
        set_field("kind", make_scalar(k::string, false));
        set_field("apiVersion", make_scalar(k::string, false));
        auto meta = std::make_shared<cel::decl_type>();
        meta->k = k::object;
        meta->fields = {{"name", make_scalar(k::string, false)},
                        {"generateName", make_scalar(k::string, false)}};
        set_field("metadata", meta);
      }
    }
  } else if (n.type == "string") {
    d->k = k::string;
  } else if (n.type == "integer") {
    d->k = k::integer;
  } else if (n.type == "number") {
    d->k = k::number;
  } else if (n.type == "boolean") {
    d->k = k::boolean;
  } else {
    if (n.items)
      decl_of(*n.items, false);
    if (n.additional)
      decl_of(*n.additional, false);
    for (auto& [name, p] : n.properties)
      decl_of(*p, p->embedded_resource);
    return nullptr; // untyped (preserve-unknown): not visible to CEL
  }
  n.decl = d;
  return n.decl;
}

/// Go's %#v of an apiextensions.ValidationRule, the bad value of a rule
/// that does not compile.
std::string rule_struct(const rule& r) {
  std::string out = "apiextensions.ValidationRule{Rule:" + go_quote(r.source)
                    + ", Message:" + go_quote(r.message)
                    + ", MessageExpression:" + go_quote(r.message_expression)
                    + ", Reason:";
  out += r.reason ? "(*apiextensions.FieldValueErrorReason)(0xc000a1b2c0)"
                  : "(*apiextensions.FieldValueErrorReason)(nil)";
  out += ", FieldPath:" + go_quote(r.field_path) + ", OptionalOldSelf:";
  out += r.optional_old_self ? "(*bool)(0xc000a1b2c8)" : "(*bool)(nil)";
  return out + "}";
}

/// Compiles every rule under `n`; `uncorrelatable` is the path of the
/// nearest list whose items oldSelf cannot follow (atomic and set lists).
void compile_rules(node& n, const std::string& path,
                   const std::string& uncorrelatable,
                   std::vector<field_error>& errors) {
  if (!n.rules.empty() && !n.decl) {
    // Rules on a node CEL cannot type (preserve-unknown without `type`):
    // SchemaDeclType has no declaration for it, which the CRD validation of
    // 1.30+ reports as an internal error of the node's rules.
    errors.push_back(
        {"InternalError", path + ".x-kubernetes-validations",
         "Internal error: internal error: failed to construct type "
         "information for x-kubernetes-validations rules: unable to convert "
         "structural schema to CEL declarations"});
  }
  for (std::size_t i = 0; n.decl && i < n.rules.size(); ++i) {
    rule& r = n.rules[i];
    std::string at
        = path + ".x-kubernetes-validations[" + std::to_string(i) + "]";
    const cel::decl_ptr& self = n.decl;
    cel::compile_options options;
    options.optional_old_self = r.optional_old_self.value_or(false);
    auto compiled = cel::compile(r.source, self, options);
    if (!compiled) {
      errors.push_back(invalid_raw(at + ".rule", rule_struct(r),
                                   "compilation failed: "
                                       + error_message(compiled.error())));
      continue;
    }
    if (compiled->result_type != "bool" && compiled->result_type != "dyn") {
      errors.push_back(invalid_raw(at + ".rule", rule_struct(r),
                                   "cel expression must evaluate to a bool"));
      continue;
    }
    if (!r.message_expression.empty()) {
      auto message = cel::compile(r.message_expression, self, options);
      if (!message) {
        errors.push_back(invalid_raw(at + ".messageExpression", rule_struct(r),
                                     "messageExpression compilation failed: "
                                         + error_message(message.error())));
      } else if (message->result_type != "string"
                 && message->result_type != "dyn") {
        errors.push_back(
            invalid_raw(at + ".messageExpression", rule_struct(r),
                        "messageExpression must evaluate to a string"));
      } else {
        r.message_compiled = std::move(*message);
      }
    }
    if (compiled->uses_old_self && !uncorrelatable.empty()) {
      errors.push_back(
          invalid(at + ".rule", r.source,
                  "oldSelf cannot be used on the uncorrelatable portion of the "
                  "schema within "
                      + uncorrelatable));
    } else if (!compiled->uses_old_self && r.optional_old_self) {
      errors.push_back(
          invalid(at + ".optionalOldSelf", *r.optional_old_self,
                  "may not be set if oldSelf is not used in rule"));
    }
    r.compiled = std::move(*compiled);
  }
  for (auto& [name, p] : n.properties)
    compile_rules(*p, path + ".properties[" + name + "]",
                  n.map_type.empty() || n.map_type == "granular"
                          || n.map_type == "atomic"
                      ? uncorrelatable
                      : path,
                  errors);
  if (n.additional)
    compile_rules(*n.additional, path + ".additionalProperties", uncorrelatable,
                  errors);
  if (n.items)
    compile_rules(*n.items, path + ".items",
                  n.list_type == "map" ? uncorrelatable : path, errors);
}

// ---------------------------------------------------------------------------
// Pruning, nulls and defaults (defaulting/, pruning/).

bool meta_field(std::string_view k) {
  return k == "apiVersion" || k == "kind" || k == "metadata";
}

void record_unknown(std::vector<std::string>& out, const std::string& parent,
                    const std::string& k) {
  out.push_back(parent.empty() ? k : parent + "." + k);
}

void prune(json& x, const node* s, const std::string& path, bool resource,
           std::vector<std::string>& unknown);

void skip_prune(json& x, const node* s, const std::string& path,
                std::vector<std::string>& unknown) {
  if (!s)
    return;
  if (x.is_object()) {
    for (auto it = x.begin(); it != x.end(); ++it) {
      if (s->embedded_resource && meta_field(it.key()))
        continue;
      std::string sub = path.empty() ? it.key() : path + "." + it.key();
      if (const node* p = s->property(it.key()))
        prune(it.value(), p, sub, p->embedded_resource, unknown);
      else if (s->additional)
        prune(it.value(), s->additional.get(), sub,
              s->additional->embedded_resource, unknown);
    }
  } else if (x.is_array()) {
    for (std::size_t i = 0; i < x.size(); ++i)
      skip_prune(x[i], s->items.get(), path + "[" + std::to_string(i) + "]",
                 unknown);
  }
}

void prune(json& x, const node* s, const std::string& path, bool resource,
           std::vector<std::string>& unknown) {
  if (s && s->preserve_unknown) {
    skip_prune(x, s, path, unknown);
    return;
  }
  if (x.is_object()) {
    std::vector<std::string> drop;
    for (auto it = x.begin(); it != x.end(); ++it) {
      if (resource && meta_field(it.key()))
        continue;
      std::string sub = path.empty() ? it.key() : path + "." + it.key();
      const node* p = s ? s->property(it.key()) : nullptr;
      if (p) {
        prune(it.value(), p, sub, p->embedded_resource, unknown);
      } else if (s && s->additional) {
        prune(it.value(), s->additional.get(), sub,
              s->additional->embedded_resource, unknown);
      } else {
        if (!meta_field(it.key()) || !path.empty())
          record_unknown(unknown, path, it.key());
        drop.push_back(it.key());
      }
    }
    for (const auto& k : drop)
      x.erase(k);
  } else if (x.is_array()) {
    for (std::size_t i = 0; i < x.size(); ++i)
      prune(x[i], s ? s->items.get() : nullptr,
            path + "[" + std::to_string(i) + "]", false, unknown);
  }
}

const node* schema_for_field(const node* s, std::string_view k) {
  if (!s)
    return nullptr;
  if (const node* p = s->property(k))
    return p;
  return s->additional.get();
}

void prune_nulls(json& x, const node* s) {
  if (x.is_object()) {
    std::vector<std::string> drop;
    for (auto it = x.begin(); it != x.end(); ++it) {
      const node* sub = schema_for_field(s, it.key());
      if (it->is_null() && sub && !sub->nullable && !sub->default_value)
        drop.push_back(it.key());
      else
        prune_nulls(it.value(), sub);
    }
    for (const auto& k : drop)
      x.erase(k);
  } else if (x.is_array()) {
    for (auto& v : x)
      prune_nulls(v, s ? s->items.get() : nullptr);
  }
}

bool non_nullable_null(const json& v, const node* s) {
  return v.is_null() && s && !s->nullable && s->default_value;
}

void apply_defaults(json& x, const node* s) {
  if (!s)
    return;
  if (x.is_object()) {
    for (const auto& [name, p] : s->properties) {
      if (!p->default_value)
        continue;
      auto it = x.find(name);
      if (it == x.end())
        x[name] = *p->default_value;
      else if (non_nullable_null(*it, p.get()))
        *it = *p->default_value;
    }
    for (auto it = x.begin(); it != x.end(); ++it) {
      if (const node* p = s->property(it.key())) {
        apply_defaults(it.value(), p);
      } else if (s->additional) {
        if (non_nullable_null(it.value(), s->additional.get()))
          it.value() = *s->additional->default_value;
        apply_defaults(it.value(), s->additional.get());
      }
    }
  } else if (x.is_array()) {
    for (auto& v : x) {
      if (non_nullable_null(v, s->items.get()))
        v = *s->items->default_value;
      apply_defaults(v, s->items.get());
    }
  }
}

// ---------------------------------------------------------------------------
// Structural validation with kube-openapi's messages.

std::string json_kind(const json& v) {
  switch (v.type()) {
  case json::value_t::boolean:
    return "boolean";
  case json::value_t::string:
    return "string";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
    return "integer";
  case json::value_t::number_float:
    return "number";
  case json::value_t::array:
    return "array";
  case json::value_t::object:
    return "object";
  default:
    return "null";
  }
}

/// The old value matching `item` of a map-list (same key values), or null.
const json* map_list_match(const json* old, const json& item, const node& s) {
  if (!old || !old->is_array() || !item.is_object())
    return nullptr;
  for (const auto& o : *old) {
    if (!o.is_object())
      continue;
    bool same = true;
    for (const auto& k : s.list_map_keys) {
      auto a = item.find(k);
      auto b = o.find(k);
      bool a_has = a != item.end();
      bool b_has = b != o.end();
      if (a_has != b_has || (a_has && *a != *b)) {
        same = false;
        break;
      }
    }
    if (same)
      return &o;
  }
  return nullptr;
}

const json* old_child(const json* old, const std::string& k) {
  if (!old || !old->is_object())
    return nullptr;
  auto it = old->find(k);
  return it == old->end() ? nullptr : &*it;
}

/// The old element an element of a list ratchets against: by key in a
/// map-list, by value in a set; atomic lists do not correlate elements.
const json* old_item(const json* old, const json& item, const node& s) {
  if (s.list_type == "map")
    return map_list_match(old, item, s);
  if (s.list_type == "set" && old && old->is_array()) {
    for (const auto& o : *old)
      if (o == item)
        return &o;
  }
  return nullptr;
}

/// Whether `v` is valid in string format `format` (kube-openapi strfmt), for
/// the formats the API server keeps (formats.go); others are not checked.
bool valid_format(const std::string& format, const std::string& v) {
  static const std::regex date_time{
      R"(^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$)"};
  static const std::regex date{R"(^\d{4}-\d{2}-\d{2}$)"};
  static const std::regex uuid{
      R"(^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$)"};
  static const std::regex ipv4{
      R"(^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$)"};
  static const std::regex base64{
      R"(^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$)"};
  if (format == "date-time" || format == "datetime")
    return std::regex_match(v, date_time);
  if (format == "date")
    return std::regex_match(v, date);
  if (format == "uuid")
    return std::regex_match(v, uuid);
  if (format == "ipv4")
    return std::regex_match(v, ipv4);
  if (format == "byte")
    return std::regex_match(v, base64);
  return true;
}

struct validator {
  std::vector<field_error>& errors;

  void add(field_error e) { errors.push_back(std::move(e)); }

  // `name` is kube-openapi's path ("spec.replicas"); `old` the correlated
  // old value for ratcheting (null: none).
  void validate(const json& v, const node& s, const std::string& name,
                const json* old) {
    std::size_t mark = errors.size();
    validate_node(v, s, name, old);
    // Ratcheting: an unchanged value keeps its old errors out of the answer.
    if (old && *old == v && errors.size() > mark)
      errors.resize(mark);
  }

  void validate_node(const json& v, const node& s, const std::string& name,
                     const json* old) {
    const std::string field = name.empty() ? "<nil>" : name;
    const std::string subject = name; // "<name> in body ..."
    if (!type_ok(v, s, field, subject))
      return;
    validate_junctors(v, s, name);
    if (v.is_string())
      validate_string(v.get<std::string>(), s, field, subject);
    if (v.is_number())
      validate_number(v, s, field, subject);
    if (v.is_array())
      validate_array(v, s, name, old);
    if (s.enum_values)
      validate_enum(v, s, field);
    if (v.is_object())
      validate_object(v, s, name, old);
  }

  /// allOf, anyOf, oneOf and not, as kube-openapi's schemaPropsValidator:
  /// the composite message names the path, the best failure's errors follow.
  void validate_junctors(const json& v, const node& s,
                         const std::string& name) {
    auto composite = [&](const std::string& message) {
      add(invalid("<nil>", "", message));
    };
    auto try_node = [&](const node& n) {
      std::vector<field_error> found;
      validator nested{found};
      nested.validate_node(v, n, name, nullptr);
      return found;
    };
    if (!s.any_of.empty()) {
      std::optional<std::vector<field_error>> best;
      bool ok = false;
      for (const auto& n : s.any_of) {
        auto found = try_node(*n);
        if (found.empty()) {
          ok = true;
          break;
        }
        if (!best || found.size() < best->size())
          best = std::move(found);
      }
      if (!ok) {
        composite(go_quote(name)
                  + " must validate at least one schema (anyOf)");
        for (auto& e : *best)
          add(std::move(e));
      }
    }
    if (!s.one_of.empty()) {
      std::optional<std::vector<field_error>> best;
      int valid = 0;
      for (const auto& n : s.one_of) {
        auto found = try_node(*n);
        if (found.empty())
          ++valid;
        else if (valid == 0 && (!best || found.size() < best->size()))
          best = std::move(found);
      }
      if (valid != 1) {
        composite(
            go_quote(name) + " must validate one and only one schema (oneOf). "
            + (valid == 0
                   ? std::string{"Found none valid"}
                   : "Found " + std::to_string(valid) + " valid alternatives"));
        if (valid == 0 && best)
          for (auto& e : *best)
            add(std::move(e));
      }
    }
    if (!s.all_of.empty()) {
      std::size_t valid = 0;
      for (const auto& n : s.all_of) {
        auto found = try_node(*n);
        if (found.empty())
          ++valid;
        for (auto& e : found)
          add(std::move(e));
      }
      if (valid != s.all_of.size())
        composite(go_quote(name) + " must validate all the schemas (allOf)"
                  + (valid == 0 ? ". None validated" : ""));
    }
    if (s.not_of && try_node(*s.not_of).empty())
      composite(go_quote(name) + " must not validate the schema (not)");
  }

  bool type_ok(const json& v, const node& s, const std::string& field,
               const std::string& subject) {
    std::string expected = s.int_or_string ? "integer,string" : s.type;
    if (expected.empty())
      return true;
    if (v.is_null()) {
      if (s.nullable)
        return false; // nothing else to check on a null
      add(invalid(field, "null",
                  subject + " in body must be of type " + expected
                      + ": \"null\"",
                  "FieldValueTypeInvalid"));
      return false;
    }
    std::string actual = json_kind(v);
    bool float_int
        = actual == "number" && std::floor(v.get<double>()) == v.get<double>();
    bool ok = expected == actual
              || (actual == "integer" && expected == "number")
              || (float_int && expected == "integer");
    if (s.int_or_string)
      ok = actual == "integer" || actual == "string" || float_int;
    if (!ok) {
      add(invalid(field, actual,
                  subject + " in body must be of type " + expected + ": "
                      + go_quote(actual),
                  "FieldValueTypeInvalid"));
      return false;
    }
    if (v.is_string() && !s.format.empty()
        && !valid_format(s.format, v.get<std::string>())) {
      add(invalid(field, v,
                  subject + " in body must be of type " + s.format + ": "
                      + go_quote(v.get<std::string>())));
    }
    return true;
  }

  void validate_string(const std::string& v, const node& s,
                       const std::string& field, const std::string& subject) {
    std::size_t length = 0;
    for (unsigned char c : v)
      if ((c & 0xC0) != 0x80)
        ++length;
    if (s.max_length && static_cast<std::int64_t>(length) > *s.max_length) {
      add({"FieldValueTooLong", field,
           "Too long: may not be more than " + std::to_string(*s.max_length)
               + " bytes"});
      return;
    }
    if (s.min_length && static_cast<std::int64_t>(length) < *s.min_length) {
      add(invalid(field, v,
                  subject + " in body should be at least "
                      + std::to_string(*s.min_length) + " chars long"));
      return;
    }
    if (s.pattern_re && !std::regex_search(v, *s.pattern_re))
      add(invalid(field, v,
                  subject + " in body should match '" + s.pattern + "'"));
  }

  void validate_number(const json& v, const node& s, const std::string& field,
                       const std::string& subject) {
    bool is_int = v.is_number_integer();
    auto bound = [&](double b) {
      return is_int ? std::to_string(static_cast<std::int64_t>(b))
                    : go_format_g(b);
    };
    double x = v.get<double>();
    if (s.multiple_of && *s.multiple_of > 0) {
      double q = x / *s.multiple_of;
      if (std::floor(q) != q)
        add(invalid(field, v,
                    subject + " in body should be a multiple of "
                        + go_format_g(*s.multiple_of)));
    }
    if (s.minimum) {
      bool fails
          = is_int ? (s.exclusive_minimum
                          ? v.get<std::int64_t>()
                                <= static_cast<std::int64_t>(*s.minimum)
                          : v.get<std::int64_t>()
                                < static_cast<std::int64_t>(*s.minimum))
                   : (s.exclusive_minimum ? x <= *s.minimum : x < *s.minimum);
      if (fails)
        add(invalid(field, v,
                    subject + " in body should be greater than "
                        + (s.exclusive_minimum ? "" : "or equal to ")
                        + bound(*s.minimum)));
    }
    if (s.maximum) {
      bool fails
          = is_int ? (s.exclusive_maximum
                          ? v.get<std::int64_t>()
                                >= static_cast<std::int64_t>(*s.maximum)
                          : v.get<std::int64_t>()
                                > static_cast<std::int64_t>(*s.maximum))
                   : (s.exclusive_maximum ? x >= *s.maximum : x > *s.maximum);
      if (fails)
        add(invalid(field, v,
                    subject + " in body should be less than "
                        + (s.exclusive_maximum ? "" : "or equal to ")
                        + bound(*s.maximum)));
    }
  }

  void validate_array(const json& v, const node& s, const std::string& name,
                      const json* old) {
    if (s.items)
      for (std::size_t i = 0; i < v.size(); ++i)
        validate(v[i], *s.items, name + "[" + std::to_string(i) + "]",
                 old_item(old, v[i], s));
    const std::string field = name.empty() ? "<nil>" : name;
    auto size = static_cast<std::int64_t>(v.size());
    if (s.min_items && size < *s.min_items)
      add(invalid(field, size,
                  name + " in body should have at least "
                      + std::to_string(*s.min_items) + " items"));
    if (s.max_items && size > *s.max_items)
      add({"FieldValueTooMany", field,
           "Too many: " + std::to_string(size) + ": must have at most "
               + std::to_string(*s.max_items) + " items"});
  }

  void validate_enum(const json& v, const node& s, const std::string& field) {
    for (const auto& e : *s.enum_values)
      if (e == v)
        return;
    std::vector<std::string> values;
    for (const auto& e : *s.enum_values)
      values.push_back(e.is_string() ? e.get<std::string>() : e.dump());
    add(not_supported(field, v, values));
  }

  void validate_object(const json& v, const node& s, const std::string& name,
                       const json* old) {
    const std::string field = name.empty() ? "<nil>" : name;
    auto size = static_cast<std::int64_t>(v.size());
    if (s.min_properties && size < *s.min_properties)
      add(invalid(field, size,
                  name + " in body should have at least "
                      + std::to_string(*s.min_properties) + " properties"));
    if (s.max_properties && size > *s.max_properties)
      add({"FieldValueTooMany", field,
           "Too many: " + std::to_string(size) + ": must have at most "
               + std::to_string(*s.max_properties) + " items"});
    bool resource = name.empty() || s.embedded_resource;
    if (s.additional) {
      for (auto it = v.begin(); it != v.end(); ++it)
        if (!s.property(it.key()))
          validate(it.value(), *s.additional, name + "." + it.key(),
                   old_child(old, it.key()));
    }
    for (const auto& [pname, p] : s.properties) {
      if (resource && meta_field(pname)) {
        // The store validates object metadata; a CRD may still restrict
        // metadata.name and generateName.
        auto meta = v.find("metadata");
        if (pname == "metadata" && meta != v.end() && meta->is_object())
          for (const char* f : {"name", "generateName"})
            if (const node* m = p->property(f); m && meta->contains(f))
              validate(meta->at(f), *m, child(child(name, "metadata"), f),
                       nullptr);
        continue;
      }
      auto it = v.find(pname);
      if (it != v.end())
        validate(*it, *p, name.empty() ? pname : name + "." + pname,
                 old_child(old, pname));
    }
    for (const auto& r : s.required_fields)
      if (!v.contains(r))
        add(required(name.empty() ? r : name + "." + r));
  }
};

// x-kubernetes-list-type set and map uniqueness (listtype/validation.go).
void validate_lists(const json& v, const node& s, const std::string& path,
                    std::vector<field_error>& errors) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (const node* p = s.property(it.key()))
        validate_lists(it.value(), *p, child(path, it.key()), errors);
      else if (s.additional)
        validate_lists(it.value(), *s.additional, key(path, it.key()), errors);
    }
    return;
  }
  if (!v.is_array())
    return;
  if (s.list_type == "set") {
    std::vector<const json*> seen;
    std::set<std::size_t> reported;
    for (std::size_t i = 0; i < v.size(); ++i) {
      auto prior = std::find_if(seen.begin(), seen.end(),
                                [&](const json* x) { return *x == v[i]; });
      if (prior == seen.end()) {
        seen.push_back(&v[i]);
      } else {
        auto first = static_cast<std::size_t>(prior - seen.begin());
        if (reported.insert(first).second)
          errors.push_back(duplicate(index(path, i), bad_value(v[i])));
      }
    }
  } else if (s.list_type == "map") {
    std::vector<json> seen;
    std::set<std::size_t> reported;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_object()) {
        errors.push_back(
            invalid(index(path, i), v[i],
                    "must be an object for an array of list-type map"));
        return;
      }
      json keys = json::object();
      for (const auto& k : s.list_map_keys) {
        auto it = v[i].find(k);
        if (it != v[i].end())
          keys[k] = *it;
        else if (s.items) {
          if (const node* p = s.items->property(k); p && p->default_value)
            keys[k] = *p->default_value;
        }
      }
      auto prior = std::find(seen.begin(), seen.end(), keys);
      if (prior == seen.end()) {
        seen.push_back(keys);
      } else if (reported.insert(static_cast<std::size_t>(prior - seen.begin()))
                     .second) {
        errors.push_back(duplicate(index(path, i), go_sharp_v(keys)));
      }
    }
  }
  if (s.items)
    for (std::size_t i = 0; i < v.size(); ++i)
      validate_lists(v[i], *s.items, index(path, i), errors);
}

// ---------------------------------------------------------------------------
// CEL rules (schema/cel/validation.go).

struct rule_runner {
  std::vector<field_error>& errors;
  std::vector<std::string>& warnings;

  void run(const json& v, const node& s, const std::string& path,
           const json* old, bool correlated) {
    if (v.is_null())
      return;
    bool unchanged = correlated && old && *old == v;
    for (const auto& r : s.rules) {
      if (!r.compiled)
        continue;
      bool optional_old = r.optional_old_self.value_or(false);
      if (r.compiled->uses_old_self && !old && !optional_old)
        continue; // a transition rule needs an old value to compare with
      cel::activation a;
      a.self = &v;
      a.self_type = s.decl ? s.decl : cel::dyn_type();
      a.old_self = old;
      a.optional_old_self = optional_old;
      auto result = cel::evaluate(*r.compiled, a);
      // The bad value of a failed rule is the node's schema type ("object").
      const std::string& sts = s.type;
      std::string shown = r.message.empty() ? trim(r.source) : trim(r.message);
      if (!result) {
        std::string text = error_message(result.error());
        if (text.rfind("no such overload", 0) == 0)
          errors.push_back(
              invalid(or_nil(path), sts,
                      "'" + text
                          + "': call arguments did not match a supported "
                            "operator, function or macro signature for rule: "
                          + shown));
        else
          errors.push_back(
              invalid(or_nil(path), sts, text + " evaluating rule: " + shown));
        continue;
      }
      if (result->is_boolean() && result->get<bool>())
        continue;
      std::string at = path;
      if (!r.field_path.empty())
        at = child(path, normalize_field_path(r.field_path));
      std::string message
          = r.message.empty() ? "failed rule: " + shown : trim(r.message);
      if (r.message_compiled) {
        auto m = cel::evaluate(*r.message_compiled, a);
        if (m && m->is_string()) {
          std::string text = trim(m->get<std::string>());
          if (!text.empty() && text.find('\n') == std::string::npos)
            message = text;
        }
      }
      field_error e = for_reason(or_nil(at), sts, message, r.reason);
      if (!r.compiled->uses_old_self && unchanged)
        warnings.push_back(e.text());
      else
        errors.push_back(std::move(e));
    }
    if (v.is_object()) {
      bool correlatable = s.map_type.empty() || s.map_type == "granular"
                          || s.map_type == "atomic";
      if (s.additional)
        for (auto it = v.begin(); it != v.end(); ++it)
          if (!s.property(it.key()))
            run(it.value(), *s.additional, key(path, it.key()),
                correlatable ? old_child(old, it.key()) : nullptr,
                correlated && correlatable);
      for (const auto& [name, p] : s.properties) {
        auto it = v.find(name);
        if (it == v.end())
          continue;
        run(*it, *p, child(path, name),
            correlatable ? old_child(old, name) : nullptr,
            correlated && correlatable);
      }
    } else if (v.is_array() && s.items) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        const json* o
            = s.list_type == "map" ? map_list_match(old, v[i], s) : nullptr;
        run(v[i], *s.items, index(path, i), o, correlated && o);
      }
    }
  }

  static std::string trim(const std::string& s) {
    auto b = s.find_first_not_of(" \t\n\r\f\v");
    if (b == std::string::npos)
      return {};
    return s.substr(b, s.find_last_not_of(" \t\n\r\f\v") - b + 1);
  }

  static std::string normalize_field_path(const std::string& p) {
    std::string out = p;
    if (!out.empty() && out[0] == '.')
      out.erase(0, 1);
    // ['key'] selects a key: field.Path prints it as [key].
    std::string result;
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (out.compare(k, 2, "['") == 0) {
        auto end = out.find("']", k + 2);
        if (end != std::string::npos) {
          result += '[';
          result.append(out, k + 2, end - k - 2);
          result += ']';
          k = end + 1;
          continue;
        }
      }
      result += out[k];
    }
    return result;
  }

  static field_error for_reason(std::string field, const std::string& sts,
                                const std::string& detail,
                                const std::optional<std::string>& reason) {
    if (reason == "FieldValueForbidden")
      return forbidden(std::move(field), detail);
    if (reason == "FieldValueRequired")
      return required(std::move(field), detail);
    if (reason == "FieldValueDuplicate")
      return duplicate(std::move(field), go_quote(sts));
    return invalid(std::move(field), sts, detail);
  }
};

status_cause to_cause(const field_error& e) {
  return {e.reason, e.body, e.field};
}

} // namespace

namespace {

caf::expected<std::shared_ptr<const compiled_schema>>
compile_schema_unguarded(const json& openapi_v3,
                         std::vector<status_cause>* refusals,
                         std::string_view path_prefix) {
  std::vector<field_error> errors;
  reader r{errors};
  auto out = std::make_shared<compiled_schema>();
  std::string root_path{path_prefix};
  out->root = r.read(openapi_v3, root_path, reader::level::root);
  if (!r.structural_failed) {
    // Defaults must validate against their own schema.
    std::vector<std::pair<const node*, std::string>> stack{
        {out->root.get(), root_path}};
    while (!stack.empty()) {
      auto [n, path] = stack.back();
      stack.pop_back();
      if (n->default_value) {
        std::vector<field_error> default_errors;
        validator v{default_errors};
        json value = *n->default_value;
        std::vector<std::string> ignored;
        prune(value, n, "", false, ignored);
        apply_defaults(value, n);
        v.validate(value, *n, path + ".default", nullptr);
        for (auto& e : default_errors) {
          e.field = path + ".default";
          errors.push_back(std::move(e));
        }
      }
      for (const auto& [name, p] : n->properties)
        stack.emplace_back(p.get(), path + ".properties[" + name + "]");
      if (n->additional)
        stack.emplace_back(n->additional.get(), path + ".additionalProperties");
      if (n->items)
        stack.emplace_back(n->items.get(), path + ".items");
    }
  }
  if (errors.empty()) {
    std::vector<const node*> pending{out->root.get()};
    while (!pending.empty()) {
      const node* n = pending.back();
      pending.pop_back();
      if (!n->rules.empty())
        out->has_rules = true;
      for (const auto& [name, p] : n->properties)
        pending.push_back(p.get());
      if (n->additional)
        pending.push_back(n->additional.get());
      if (n->items)
        pending.push_back(n->items.get());
    }
    decl_of(*out->root, true);
    compile_rules(*out->root, root_path, "", errors);
  }
  if (!errors.empty()) {
    std::string first = errors.front().text();
    if (refusals)
      for (const auto& e : errors)
        refusals->push_back(to_cause(e));
    return aiperf::make_error(errc::invalid, "the schema is refused: " + first);
  }
  return std::shared_ptr<const compiled_schema>{std::move(out)};
}

admission decode_unguarded(const compiled_schema& schema, json& object) {
  admission out;
  const node& root = *schema.root;
  prune(object, &root, "", true, out.unknown_fields);
  std::sort(out.unknown_fields.begin(), out.unknown_fields.end());
  prune_nulls(object, &root);
  apply_defaults(object, &root);
  return out;
}

admission validate_unguarded(const compiled_schema& schema, const json& object,
                             const json* old_object) {
  admission out;
  const node& root = *schema.root;
  std::vector<field_error> errors;
  validator v{errors};
  v.validate_node(object, root, "",
                  old_object); // the root itself never ratchets
  if (!old_object) {
    validate_lists(object, root, "", errors);
  } else {
    std::vector<field_error> old_errors;
    validate_lists(*old_object, root, "", old_errors);
    if (old_errors.empty())
      validate_lists(object, root, "", errors);
  }
  bool blocking = false;
  for (const auto& e : errors)
    if (e.reason == "FieldValueNotSupported" || e.reason == "FieldValueRequired"
        || e.reason == "FieldValueTooLong" || e.reason == "FieldValueTooMany"
        || e.reason == "FieldValueTypeInvalid")
      blocking = true;
  if (!schema.has_rules) {
    // no CEL validator
  } else if (blocking) {
    errors.push_back(
        invalid("<nil>", nullptr,
                "some validation rules were not checked because the object was "
                "invalid; correct the existing errors to complete validation"));
  } else {
    rule_runner runner{errors, out.warnings};
    runner.run(object, root, "", old_object, old_object != nullptr);
  }
  for (const auto& e : errors)
    out.causes.push_back(to_cause(e));
  return out;
}

admission internal_error(const std::exception& e) {
  admission out;
  out.causes.push_back(
      {"InternalError", std::string{"Internal error: "} + e.what(), "<nil>"});
  return out;
}

} // namespace

caf::expected<std::shared_ptr<const compiled_schema>>
compile_schema(const json& openapi_v3, std::vector<status_cause>* refusals,
               std::string_view path_prefix) {
  try {
    return compile_schema_unguarded(openapi_v3, refusals, path_prefix);
  } catch (const std::exception& e) {
    return aiperf::make_error(
        errc::invalid, std::string{"the schema cannot be read: "} + e.what());
  }
}

admission decode(const compiled_schema& schema, json& object) {
  try {
    return decode_unguarded(schema, object);
  } catch (const std::exception& e) {
    return internal_error(e);
  }
}

admission validate(const compiled_schema& schema, const json& object,
                   const json* old_object) {
  try {
    return validate_unguarded(schema, object, old_object);
  } catch (const std::exception& e) {
    return internal_error(e);
  }
}

admission admit(const compiled_schema& schema, json& object,
                const json* old_object) {
  auto out = decode(schema, object);
  if (!out.causes.empty())
    return out;
  auto checked = validate(schema, object, old_object);
  out.causes = std::move(checked.causes);
  out.warnings = std::move(checked.warnings);
  return out;
}

void apply_defaults(const compiled_schema& schema, json& object) {
  prune_nulls(object, schema.root.get());
  apply_defaults(object, schema.root.get());
}

list_semantics list_semantics_at(const compiled_schema& schema,
                                 const std::vector<std::string>& fields) {
  const node* n = schema.root.get();
  for (const auto& name : fields) {
    if (n != nullptr && n->type == "array")
      n = n->items.get();
    if (n == nullptr)
      return {};
    const node* next = n->property(name);
    n = next != nullptr ? next : n->additional.get();
  }
  if (n == nullptr || n->type != "array")
    return {};
  return {n->list_type, n->list_map_keys};
}

} // namespace aiperf::k8s::sim
