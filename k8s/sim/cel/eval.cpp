// Evaluation of checked CEL over k8s::json, with the value semantics of
// cel-go and of kubernetes/apiserver pkg/cel/common/values.go (how a custom
// resource's JSON appears in CEL): integer fields are ints, number fields
// doubles (also when written as 1), an object's absent or null field is
// absent to has() and `no such key` to selection, sets and map-lists compare
// without regard to order, and fields CEL does not see compare as raw JSON.
#include "k8s/errors/errors.hpp"
#include "k8s/sim/cel/ast.hpp"
#include "k8s/sim/cel/format.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace aiperf::k8s::cel {
namespace {

enum class vk : std::uint8_t {
  null_value,
  boolean,
  integer,
  uint,
  number,
  string,
  bytes,
  list,
  map,
  type,
  optional,
  unknown, // a preserved value CEL does not see: compared as raw JSON
  error,
};

struct value;
using value_list = std::vector<value>;
using value_map = std::vector<std::pair<value, value>>;

struct value {
  vk kind = vk::null_value;
  bool b = false;
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double d = 0;
  std::string s; // string, bytes, type name, error message
  std::shared_ptr<const value_list> items;  // a literal list
  std::shared_ptr<const value_map> entries; // a literal map
  const json* j = nullptr;            // list, map or unknown read from JSON
  const decl_type* decl = nullptr;    // the schema of j
  std::shared_ptr<const value> inner; // optional: null = optional.none()
};

value make_bool(bool b) {
  value v;
  v.kind = vk::boolean;
  v.b = b;
  return v;
}

value make_int(std::int64_t i) {
  value v;
  v.kind = vk::integer;
  v.i = i;
  return v;
}

value make_uint(std::uint64_t u) {
  value v;
  v.kind = vk::uint;
  v.u = u;
  return v;
}

value make_double(double d) {
  value v;
  v.kind = vk::number;
  v.d = d;
  return v;
}

value make_string(std::string s, vk kind = vk::string) {
  value v;
  v.kind = kind;
  v.s = std::move(s);
  return v;
}

value make_type(std::string name) {
  return make_string(std::move(name), vk::type);
}

value make_error(std::string message) {
  return make_string(std::move(message), vk::error);
}

value no_overload() {
  return make_error("no such overload");
}

value make_list(value_list items) {
  value v;
  v.kind = vk::list;
  v.items = std::make_shared<const value_list>(std::move(items));
  return v;
}

value make_opt(std::optional<value> inner) {
  value v;
  v.kind = vk::optional;
  if (inner)
    v.inner = std::make_shared<const value>(std::move(*inner));
  return v;
}

std::string json_type_name(const json& j) {
  switch (j.type()) {
  case json::value_t::string:
    return "string";
  case json::value_t::boolean:
    return "bool";
  case json::value_t::number_integer:
    return "int64";
  case json::value_t::number_unsigned:
    return "int64";
  case json::value_t::number_float:
    return "float64";
  case json::value_t::array:
    return "[]interface {}";
  case json::value_t::object:
    return "map[string]interface {}";
  default:
    return "<nil>";
  }
}

/// A JSON value as CEL sees it under schema `d` (null: not visible to CEL).
value from_json(const json& j, const decl_type* d) {
  if (!d) {
    value v;
    v.kind = vk::unknown;
    v.j = &j;
    return v;
  }
  if (j.is_null()) {
    if (d->nullable)
      return value{};
    return make_error("invalid data, got null for schema with nullable=false");
  }
  switch (d->k) {
  case decl_type::kind::dyn:
    if (j.is_string())
      return make_string(j.get<std::string>());
    if (j.is_number_integer())
      return make_int(j.get<std::int64_t>());
    if (j.is_number_float() && std::floor(j.get<double>()) == j.get<double>())
      return make_int(static_cast<std::int64_t>(j.get<double>()));
    return make_error("invalid data, expected XIntOrString value to be either "
                      "a string or integer");
  case decl_type::kind::boolean:
    if (j.is_boolean())
      return make_bool(j.get<bool>());
    return make_error("invalid data, expected bool, got " + json_type_name(j));
  case decl_type::kind::integer:
    if (j.is_number_integer())
      return make_int(j.get<std::int64_t>());
    if (j.is_number_float() && std::floor(j.get<double>()) == j.get<double>())
      return make_int(static_cast<std::int64_t>(j.get<double>()));
    return make_error("invalid data, expected int, got " + json_type_name(j));
  case decl_type::kind::number:
    if (j.is_number())
      return make_double(j.get<double>());
    return make_error("invalid data, expected float, got " + json_type_name(j));
  case decl_type::kind::string:
    if (j.is_string())
      return make_string(j.get<std::string>());
    return make_error("invalid data, expected string, got "
                      + json_type_name(j));
  case decl_type::kind::list: {
    if (!j.is_array())
      return make_error("invalid data, expected an array for the provided "
                        "schema with type=array");
    value v;
    v.kind = vk::list;
    v.j = &j;
    v.decl = d;
    return v;
  }
  case decl_type::kind::map:
  case decl_type::kind::object: {
    if (!j.is_object())
      return make_error("invalid data, expected a map for the provided schema "
                        "with type=object");
    value v;
    v.kind = vk::map;
    v.j = &j;
    v.decl = d;
    return v;
  }
  }
  return make_error("invalid data");
}

bool is_object(const value& v) {
  return v.kind == vk::map && v.j && v.decl
         && v.decl->k == decl_type::kind::object;
}

std::size_t list_size(const value& v) {
  return v.items ? v.items->size() : v.j->size();
}

value list_at(const value& v, std::size_t k) {
  if (v.items)
    return (*v.items)[k];
  return from_json((*v.j)[k], v.decl->element.get());
}

std::int64_t map_size(const value& v) {
  if (v.entries)
    return static_cast<std::int64_t>(v.entries->size());
  return static_cast<std::int64_t>(v.j->size());
}

/// The keys CEL iterates: a JSON object's declared keys by their CEL names.
std::vector<value> map_keys(const value& v) {
  std::vector<value> out;
  if (v.entries) {
    for (const auto& [k, val] : *v.entries)
      out.push_back(k);
    return out;
  }
  bool object = is_object(v);
  for (auto it = v.j->begin(); it != v.j->end(); ++it) {
    if (object) {
      std::string name = escape_property_name(it.key());
      if (name.empty() || !v.decl->field(name))
        continue;
      out.push_back(make_string(name));
    } else {
      out.push_back(make_string(it.key()));
    }
  }
  return out;
}

value equals(const value& a, const value& b);

/// Looks `key` up; nullopt when absent, an error value for a bad key type.
std::optional<value> map_find(const value& m, const value& key) {
  if (m.entries) {
    for (const auto& [k, v] : *m.entries) {
      value eq = equals(k, key);
      if (eq.kind == vk::boolean && eq.b)
        return v;
    }
    return std::nullopt;
  }
  if (key.kind != vk::string)
    return no_overload();
  if (is_object(m)) {
    const decl_type* field = m.decl->field(key.s);
    if (!field)
      return std::nullopt;
    std::string name = unescape_property_name(key.s);
    auto it = m.j->find(name);
    if (it == m.j->end() || it->is_null())
      return std::nullopt;
    return from_json(*it, field);
  }
  auto it = m.j->find(key.s);
  if (it == m.j->end())
    return std::nullopt;
  return from_json(*it, m.decl->element.get());
}

bool numeric(vk k) {
  return k == vk::integer || k == vk::uint || k == vk::number;
}

/// -1, 0, 1 for two numbers of any numeric kinds.
int compare_numbers(const value& a, const value& b) {
  if (a.kind == vk::number || b.kind == vk::number) {
    double x = a.kind == vk::number
                   ? a.d
                   : (a.kind == vk::integer ? static_cast<double>(a.i)
                                            : static_cast<double>(a.u));
    double y = b.kind == vk::number
                   ? b.d
                   : (b.kind == vk::integer ? static_cast<double>(b.i)
                                            : static_cast<double>(b.u));
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.kind == b.kind) {
    if (a.kind == vk::integer)
      return a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
    return a.u < b.u ? -1 : (a.u > b.u ? 1 : 0);
  }
  if (a.kind == vk::integer) // int vs uint
    return a.i < 0
               ? -1
               : compare_numbers(make_uint(static_cast<std::uint64_t>(a.i)), b);
  return b.i < 0
             ? 1
             : compare_numbers(a, make_uint(static_cast<std::uint64_t>(b.i)));
}

json to_json(const value& v);

value list_equals(const value& a, const value& b) {
  std::size_t n = list_size(a);
  if (n != list_size(b))
    return make_bool(false);
  const std::string& list_type = a.decl ? a.decl->list_type : std::string{};
  if (list_type == "set" || list_type == "map") {
    // Order does not matter: every element of a has its equal in b.
    std::optional<value> error;
    for (std::size_t x = 0; x < n; ++x) {
      bool found = false;
      value ax = list_at(a, x);
      for (std::size_t y = 0; y < n && !found; ++y) {
        value eq = equals(ax, list_at(b, y));
        if (eq.kind == vk::error)
          error = eq;
        else if (eq.b)
          found = true;
      }
      if (!found)
        return error ? *error : make_bool(false);
    }
    return make_bool(true);
  }
  std::optional<value> error;
  for (std::size_t k = 0; k < n; ++k) {
    value eq = equals(list_at(a, k), list_at(b, k));
    if (eq.kind == vk::error)
      error = eq;
    else if (!eq.b)
      return make_bool(false);
  }
  return error ? *error : make_bool(true);
}

value map_equals(const value& a, const value& b) {
  if (map_size(a) != map_size(b))
    return make_bool(false);
  if (is_object(a) && is_object(b)) {
    // Declared fields compare typed, the rest as raw JSON (values.go).
    for (auto it = a.j->begin(); it != a.j->end(); ++it) {
      std::string name = escape_property_name(it.key());
      const decl_type* field = name.empty() ? nullptr : a.decl->field(name);
      auto other = b.j->find(it.key());
      if (field) {
        if (other == b.j->end())
          return make_bool(false);
        value eq = equals(from_json(*it, field),
                          from_json(*other, b.decl->field(name)));
        if (eq.kind != vk::boolean || !eq.b)
          return eq;
      } else if (other != b.j->end() && *other != *it) {
        return make_bool(false);
      }
    }
    return make_bool(true);
  }
  for (const value& key : map_keys(a)) {
    auto x = map_find(a, key);
    auto y = map_find(b, key);
    if (!y)
      return make_bool(false);
    if (y->kind == vk::error)
      return *y;
    value eq = equals(*x, *y);
    if (eq.kind != vk::boolean || !eq.b)
      return eq;
  }
  return make_bool(true);
}

value equals(const value& a, const value& b) {
  if (a.kind == vk::error)
    return a;
  if (b.kind == vk::error)
    return b;
  if (a.kind == vk::unknown || b.kind == vk::unknown) {
    if (a.kind == vk::unknown && b.kind == vk::unknown)
      return make_bool(*a.j == *b.j);
    const value& known = a.kind == vk::unknown ? b : a;
    const value& raw = a.kind == vk::unknown ? a : b;
    return make_bool(to_json(known) == *raw.j);
  }
  if (numeric(a.kind) && numeric(b.kind))
    return make_bool(compare_numbers(a, b) == 0);
  if (a.kind != b.kind)
    return make_bool(false);
  switch (a.kind) {
  case vk::null_value:
    return make_bool(true);
  case vk::boolean:
    return make_bool(a.b == b.b);
  case vk::string:
  case vk::bytes:
  case vk::type:
    return make_bool(a.s == b.s);
  case vk::list:
    return list_equals(a, b);
  case vk::map:
    return map_equals(a, b);
  case vk::optional:
    if (!a.inner || !b.inner)
      return make_bool(!a.inner && !b.inner);
    return equals(*a.inner, *b.inner);
  default:
    return make_bool(false);
  }
}

json to_json(const value& v) {
  switch (v.kind) {
  case vk::null_value:
    return nullptr;
  case vk::boolean:
    return v.b;
  case vk::integer:
    return v.i;
  case vk::uint:
    return v.u;
  case vk::number:
    return v.d;
  case vk::string:
  case vk::bytes:
  case vk::type:
  case vk::error:
    return v.s;
  case vk::unknown:
    return *v.j;
  case vk::optional:
    return v.inner ? to_json(*v.inner) : json(nullptr);
  case vk::list: {
    json out = json::array();
    for (std::size_t k = 0; k < list_size(v); ++k)
      out.push_back(to_json(list_at(v, k)));
    return out;
  }
  case vk::map: {
    if (v.j)
      return *v.j;
    json out = json::object();
    for (const auto& [k, val] : *v.entries)
      out[k.kind == vk::string ? k.s : to_json(k).dump()] = to_json(val);
    return out;
  }
  }
  return nullptr;
}

std::string type_of(const value& v) {
  switch (v.kind) {
  case vk::null_value:
    return "null_type";
  case vk::boolean:
    return "bool";
  case vk::integer:
    return "int";
  case vk::uint:
    return "uint";
  case vk::number:
    return "double";
  case vk::string:
    return "string";
  case vk::bytes:
    return "bytes";
  case vk::list:
    return "list";
  case vk::map:
    return is_object(v) ? "object" : "map";
  case vk::type:
    return "type";
  case vk::optional:
    return "optional_type";
  default:
    return "dyn";
  }
}

std::size_t code_points(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80)
      ++n;
  return n;
}

/// Byte offset of code point `cp` in s (s.size() past the end).
std::size_t byte_offset(std::string_view s, std::int64_t cp) {
  std::size_t k = 0;
  for (std::int64_t seen = 0; k < s.size(); ++k) {
    if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80) {
      if (seen == cp)
        return k;
      ++seen;
    }
  }
  return s.size();
}

bool add_overflows(std::int64_t a, std::int64_t b, std::int64_t& out) {
  return __builtin_add_overflow(a, b, &out);
}

value arithmetic(const std::string& fn, const value& a, const value& b) {
  if (a.kind == vk::error)
    return a;
  if (b.kind == vk::error)
    return b;
  if (a.kind != b.kind)
    return no_overload();
  switch (a.kind) {
  case vk::integer: {
    std::int64_t out = 0;
    if (fn == "_+_") {
      if (add_overflows(a.i, b.i, out))
        return make_error("integer overflow");
    } else if (fn == "_-_") {
      if (__builtin_sub_overflow(a.i, b.i, &out))
        return make_error("integer overflow");
    } else if (fn == "_*_") {
      if (__builtin_mul_overflow(a.i, b.i, &out))
        return make_error("integer overflow");
    } else if (fn == "_/_") {
      if (b.i == 0)
        return make_error("division by zero");
      if (a.i == INT64_MIN && b.i == -1)
        return make_error("integer overflow");
      out = a.i / b.i;
    } else {
      if (b.i == 0)
        return make_error("modulus by zero");
      if (a.i == INT64_MIN && b.i == -1)
        return make_error("integer overflow");
      out = a.i % b.i;
    }
    return make_int(out);
  }
  case vk::uint: {
    std::uint64_t out = 0;
    if (fn == "_+_") {
      if (__builtin_add_overflow(a.u, b.u, &out))
        return make_error("unsigned integer overflow");
    } else if (fn == "_-_") {
      if (__builtin_sub_overflow(a.u, b.u, &out))
        return make_error("unsigned integer overflow");
    } else if (fn == "_*_") {
      if (__builtin_mul_overflow(a.u, b.u, &out))
        return make_error("unsigned integer overflow");
    } else if (fn == "_/_") {
      if (b.u == 0)
        return make_error("division by zero");
      out = a.u / b.u;
    } else {
      if (b.u == 0)
        return make_error("modulus by zero");
      out = a.u % b.u;
    }
    return make_uint(out);
  }
  case vk::number:
    if (fn == "_+_")
      return make_double(a.d + b.d);
    if (fn == "_-_")
      return make_double(a.d - b.d);
    if (fn == "_*_")
      return make_double(a.d * b.d);
    if (fn == "_/_")
      return make_double(a.d / b.d);
    return no_overload();
  case vk::string:
  case vk::bytes:
    if (fn == "_+_")
      return make_string(a.s + b.s, a.kind);
    return no_overload();
  case vk::list: {
    if (fn != "_+_")
      return no_overload();
    value_list out;
    for (std::size_t k = 0; k < list_size(a); ++k)
      out.push_back(list_at(a, k));
    for (std::size_t k = 0; k < list_size(b); ++k)
      out.push_back(list_at(b, k));
    return make_list(std::move(out));
  }
  default:
    return no_overload();
  }
}

value compare(const std::string& fn, const value& a, const value& b) {
  if (a.kind == vk::error)
    return a;
  if (b.kind == vk::error)
    return b;
  int c = 0;
  if (numeric(a.kind) && numeric(b.kind)) {
    if ((a.kind == vk::number && std::isnan(a.d))
        || (b.kind == vk::number && std::isnan(b.d)))
      return make_bool(false);
    c = compare_numbers(a, b);
  } else if (a.kind != b.kind) {
    return no_overload();
  } else if (a.kind == vk::string || a.kind == vk::bytes) {
    c = a.s.compare(b.s);
    c = c < 0 ? -1 : (c > 0 ? 1 : 0);
  } else if (a.kind == vk::boolean) {
    c = a.b == b.b ? 0 : (a.b ? 1 : -1);
  } else {
    return no_overload();
  }
  if (fn == "_<_")
    return make_bool(c < 0);
  if (fn == "_<=_")
    return make_bool(c <= 0);
  if (fn == "_>_")
    return make_bool(c > 0);
  return make_bool(c >= 0);
}

value to_int(const value& v) {
  switch (v.kind) {
  case vk::integer:
    return v;
  case vk::uint:
    if (v.u > static_cast<std::uint64_t>(INT64_MAX))
      return make_error("integer overflow");
    return make_int(static_cast<std::int64_t>(v.u));
  case vk::number:
    if (!std::isfinite(v.d) || v.d <= -9223372036854775808.0
        || v.d >= 9223372036854775807.0)
      return make_error("integer overflow");
    return make_int(static_cast<std::int64_t>(v.d));
  case vk::string: {
    std::int64_t out = 0;
    const char* end = v.s.data() + v.s.size();
    const char* begin = v.s.data();
    if (begin != end && *begin == '+')
      ++begin;
    auto [p, ec] = std::from_chars(begin, end, out);
    if (ec == std::errc::result_out_of_range)
      return make_error("strconv.ParseInt: parsing " + go_quote(v.s)
                        + ": value out of range");
    if (ec != std::errc{} || p != end || v.s.empty())
      return make_error("strconv.ParseInt: parsing " + go_quote(v.s)
                        + ": invalid syntax");
    return make_int(out);
  }
  case vk::error:
    return v;
  default:
    return no_overload();
  }
}

value to_uint(const value& v) {
  switch (v.kind) {
  case vk::uint:
    return v;
  case vk::integer:
    if (v.i < 0)
      return make_error("unsigned integer overflow");
    return make_uint(static_cast<std::uint64_t>(v.i));
  case vk::number:
    if (!std::isfinite(v.d) || v.d < 0 || v.d >= 18446744073709551616.0)
      return make_error("unsigned integer overflow");
    return make_uint(static_cast<std::uint64_t>(v.d));
  case vk::string: {
    std::uint64_t out = 0;
    auto [p, ec] = std::from_chars(v.s.data(), v.s.data() + v.s.size(), out);
    if (ec != std::errc{} || p != v.s.data() + v.s.size() || v.s.empty())
      return make_error("strconv.ParseUint: parsing " + go_quote(v.s)
                        + ": invalid syntax");
    return make_uint(out);
  }
  case vk::error:
    return v;
  default:
    return no_overload();
  }
}

value to_double(const value& v) {
  switch (v.kind) {
  case vk::number:
    return v;
  case vk::integer:
    return make_double(static_cast<double>(v.i));
  case vk::uint:
    return make_double(static_cast<double>(v.u));
  case vk::string: {
    char* end = nullptr;
    double d = std::strtod(v.s.c_str(), &end);
    if (v.s.empty() || end != v.s.c_str() + v.s.size())
      return make_error("strconv.ParseFloat: parsing " + go_quote(v.s)
                        + ": invalid syntax");
    return make_double(d);
  }
  case vk::error:
    return v;
  default:
    return no_overload();
  }
}

value to_string_value(const value& v) {
  switch (v.kind) {
  case vk::string:
    return v;
  case vk::integer:
    return make_string(std::to_string(v.i));
  case vk::uint:
    return make_string(std::to_string(v.u));
  case vk::number:
    return make_string(go_format_g(v.d));
  case vk::boolean:
    return make_string(v.b ? "true" : "false");
  case vk::bytes:
    return make_string(v.s);
  case vk::type:
    return make_string(v.s);
  case vk::error:
    return v;
  default:
    return no_overload();
  }
}

value to_bool(const value& v) {
  if (v.kind == vk::boolean || v.kind == vk::error)
    return v;
  if (v.kind == vk::string) {
    static const char* const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char* const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (const char* s : yes)
      if (v.s == s)
        return make_bool(true);
    for (const char* s : no)
      if (v.s == s)
        return make_bool(false);
    return make_error("strconv.ParseBool: parsing " + go_quote(v.s)
                      + ": invalid syntax");
  }
  return no_overload();
}

value size_of(const value& v) {
  switch (v.kind) {
  case vk::string:
    return make_int(static_cast<std::int64_t>(code_points(v.s)));
  case vk::bytes:
    return make_int(static_cast<std::int64_t>(v.s.size()));
  case vk::list:
    return make_int(static_cast<std::int64_t>(list_size(v)));
  case vk::map:
    return make_int(map_size(v));
  case vk::error:
    return v;
  default:
    return no_overload();
  }
}

value regex_match(const value& target, const value& pattern) {
  if (target.kind == vk::error)
    return target;
  if (pattern.kind == vk::error)
    return pattern;
  if (target.kind != vk::string || pattern.kind != vk::string)
    return no_overload();
  try {
    std::regex re = go_regex(pattern.s);
    return make_bool(std::regex_search(target.s, re));
  } catch (const std::regex_error&) {
    return make_error("error parsing regexp: invalid pattern: `" + pattern.s
                      + "`");
  }
}

struct scope {
  const value* self = nullptr;
  const value* old_self = nullptr;
  std::vector<std::pair<std::string, value>> vars;
};

class evaluator {
public:
  explicit evaluator(scope& s) : scope_(s) {}

  value eval(const node& n) {
    switch (n.kind) {
    case node_kind::literal:
      return literal(n);
    case node_kind::ident:
      return ident(n);
    case node_kind::select: {
      value operand = eval(*n.args[0]);
      if (operand.kind == vk::error)
        return operand;
      if (operand.kind != vk::map)
        return no_overload();
      auto found = map_find(operand, make_string(n.name));
      if (!found)
        return make_error("no such key: " + n.name);
      return *found;
    }
    case node_kind::presence: {
      value operand = eval(*n.args[0]);
      if (operand.kind == vk::error)
        return operand;
      if (operand.kind != vk::map)
        return no_overload();
      auto found = map_find(operand, make_string(n.name));
      if (found && found->kind == vk::error && !operand.j)
        return *found;
      return make_bool(found.has_value());
    }
    case node_kind::list: {
      value_list items;
      for (const auto& a : n.args) {
        value v = eval(*a);
        if (v.kind == vk::error)
          return v;
        items.push_back(std::move(v));
      }
      return make_list(std::move(items));
    }
    case node_kind::map: {
      value_map entries;
      for (std::size_t k = 0; k + 1 < n.args.size(); k += 2) {
        value key = eval(*n.args[k]);
        if (key.kind == vk::error)
          return key;
        value val = eval(*n.args[k + 1]);
        if (val.kind == vk::error)
          return val;
        for (const auto& [existing, ignored] : entries) {
          value eq = equals(existing, key);
          if (eq.kind == vk::boolean && eq.b)
            return make_error("Failed with repeated key");
        }
        entries.emplace_back(std::move(key), std::move(val));
      }
      value v;
      v.kind = vk::map;
      v.entries = std::make_shared<const value_map>(std::move(entries));
      return v;
    }
    case node_kind::comprehension:
      return comprehension(n);
    case node_kind::call:
      return call(n);
    }
    return make_error("unexpected expression");
  }

private:
  static value literal(const node& n) {
    switch (n.lit) {
    case literal_kind::null_value:
      return value{};
    case literal_kind::boolean:
      return make_bool(n.bool_value);
    case literal_kind::integer:
      return make_int(n.int_value);
    case literal_kind::uint:
      return make_uint(n.uint_value);
    case literal_kind::number:
      return make_double(n.double_value);
    case literal_kind::string:
      return make_string(n.string_value);
    case literal_kind::bytes:
      return make_string(n.string_value, vk::bytes);
    }
    return value{};
  }

  value ident(const node& n) {
    for (auto it = scope_.vars.rbegin(); it != scope_.vars.rend(); ++it)
      if (it->first == n.name)
        return it->second;
    if (n.name == "self" && scope_.self)
      return *scope_.self;
    if (n.name == "oldSelf" && scope_.old_self)
      return *scope_.old_self;
    if (n.name == "oldSelf" || n.name == "self")
      return make_error("no such attribute(s): " + n.name);
    return make_type(n.name == "null_type" ? "null_type" : n.name);
  }

  value comprehension(const node& n) {
    value range = eval(*n.args[0]);
    if (range.kind == vk::error)
      return range;
    std::vector<value> elements;
    if (range.kind == vk::list) {
      for (std::size_t k = 0; k < list_size(range); ++k)
        elements.push_back(list_at(range, k));
    } else if (range.kind == vk::map) {
      elements = map_keys(range);
    } else {
      return no_overload();
    }
    const std::string& macro = n.name;
    std::optional<value> error;
    bool any_false = false;
    bool any_true = false;
    std::int64_t count = 0;
    value_list out;
    for (auto& element : elements) {
      scope_.vars.emplace_back(n.var, element);
      value r = eval(*n.args[1]);
      if (macro == "map" && n.args.size() == 3) {
        // map(x, filter, transform)
        if (r.kind == vk::boolean && r.b)
          r = eval(*n.args[2]);
        else if (r.kind == vk::boolean) {
          scope_.vars.pop_back();
          continue;
        }
      }
      scope_.vars.pop_back();
      if (macro == "map") {
        if (r.kind == vk::error)
          return r;
        out.push_back(std::move(r));
        continue;
      }
      if (r.kind == vk::error) {
        if (macro == "exists_one" || macro == "filter")
          return r;
        error = r;
        continue;
      }
      if (r.kind != vk::boolean) {
        if (macro == "exists_one" || macro == "filter")
          return no_overload();
        error = no_overload();
        continue;
      }
      if (macro == "all" && !r.b) {
        any_false = true;
        break;
      }
      if (macro == "exists" && r.b) {
        any_true = true;
        break;
      }
      if (macro == "exists_one" && r.b)
        ++count;
      if (macro == "filter" && r.b)
        out.push_back(element);
    }
    if (macro == "all")
      return any_false ? make_bool(false) : (error ? *error : make_bool(true));
    if (macro == "exists")
      return any_true ? make_bool(true) : (error ? *error : make_bool(false));
    if (macro == "exists_one")
      return make_bool(count == 1);
    return make_list(std::move(out));
  }

  value logical(const node& n) {
    bool is_and = n.name == "_&&_";
    value a = eval(*n.args[0]);
    if (a.kind == vk::boolean && a.b != is_and)
      return a; // false && _, true || _
    value b = eval(*n.args[1]);
    if (b.kind == vk::boolean && b.b != is_and)
      return b;
    if (a.kind == vk::boolean && b.kind == vk::boolean)
      return b;
    if (a.kind == vk::error)
      return a;
    if (b.kind == vk::error)
      return b;
    return no_overload();
  }

  value call(const node& n) {
    const std::string& fn = n.name;
    if (fn == "_&&_" || fn == "_||_")
      return logical(n);
    if (fn == "_?_:_") {
      value c = eval(*n.args[0]);
      if (c.kind == vk::error)
        return c;
      if (c.kind != vk::boolean)
        return no_overload();
      return eval(*n.args[c.b ? 1 : 2]);
    }
    if (n.has_target && n.args[0]->kind == node_kind::ident
        && n.args[0]->name == "optional" && !scope_has("optional")) {
      if (fn == "none")
        return make_opt(std::nullopt);
      value v = eval(*n.args[1]);
      if (v.kind == vk::error)
        return v;
      return make_opt(v);
    }
    std::vector<value> args;
    for (const auto& a : n.args)
      args.push_back(eval(*a));
    if (fn == "!_") {
      if (args[0].kind == vk::error)
        return args[0];
      if (args[0].kind != vk::boolean)
        return no_overload();
      return make_bool(!args[0].b);
    }
    if (fn == "-_") {
      const value& a = args[0];
      if (a.kind == vk::error)
        return a;
      if (a.kind == vk::integer) {
        if (a.i == INT64_MIN)
          return make_error("integer overflow");
        return make_int(-a.i);
      }
      if (a.kind == vk::number)
        return make_double(-a.d);
      return no_overload();
    }
    if (fn == "_==_" || fn == "_!=_") {
      value eq = equals(args[0], args[1]);
      if (eq.kind == vk::boolean && fn == "_!=_")
        eq.b = !eq.b;
      return eq;
    }
    if (fn == "_<_" || fn == "_<=_" || fn == "_>_" || fn == "_>=_")
      return compare(fn, args[0], args[1]);
    if (fn == "_+_" || fn == "_-_" || fn == "_*_" || fn == "_/_" || fn == "_%_")
      return arithmetic(fn, args[0], args[1]);
    for (const auto& a : args)
      if (a.kind == vk::error)
        return a;
    if (fn == "@in")
      return contains(args[1], args[0]);
    if (fn == "_[_]")
      return index(args[0], args[1]);
    if (n.has_target)
      return member(fn, args);
    if (fn == "size")
      return size_of(args[0]);
    if (fn == "int")
      return to_int(args[0]);
    if (fn == "uint")
      return to_uint(args[0]);
    if (fn == "double")
      return to_double(args[0]);
    if (fn == "string")
      return to_string_value(args[0]);
    if (fn == "bool")
      return to_bool(args[0]);
    if (fn == "bytes") {
      if (args[0].kind == vk::string || args[0].kind == vk::bytes)
        return make_string(args[0].s, vk::bytes);
      return no_overload();
    }
    if (fn == "dyn")
      return args[0];
    if (fn == "type")
      return make_type(type_of(args[0]));
    if (fn == "matches" && args.size() == 2)
      return regex_match(args[0], args[1]);
    return no_overload();
  }

  bool scope_has(const std::string& name) const {
    for (const auto& [n, v] : scope_.vars)
      if (n == name)
        return true;
    return false;
  }

  static value contains(const value& container, const value& element) {
    if (container.kind == vk::list) {
      std::optional<value> error;
      for (std::size_t k = 0; k < list_size(container); ++k) {
        value eq = equals(list_at(container, k), element);
        if (eq.kind == vk::error)
          error = eq;
        else if (eq.b)
          return make_bool(true);
      }
      return error ? *error : make_bool(false);
    }
    if (container.kind == vk::map) {
      auto found = map_find(container, element);
      if (found && found->kind == vk::error && !container.j)
        return *found;
      return make_bool(found.has_value());
    }
    return no_overload();
  }

  static value index(const value& container, const value& key) {
    if (container.kind == vk::list) {
      std::int64_t k = 0;
      if (key.kind == vk::integer)
        k = key.i;
      else if (key.kind == vk::uint)
        k = static_cast<std::int64_t>(key.u);
      else if (key.kind == vk::number && std::floor(key.d) == key.d)
        k = static_cast<std::int64_t>(key.d);
      else
        return no_overload();
      auto size = static_cast<std::int64_t>(list_size(container));
      if (k < 0 || k >= size)
        return make_error("index '" + std::to_string(k)
                          + "' out of range in list size '"
                          + std::to_string(size) + "'");
      return list_at(container, static_cast<std::size_t>(k));
    }
    if (container.kind == vk::map) {
      auto found = map_find(container, key);
      if (!found)
        return make_error(
            "no such key: "
            + (key.kind == vk::string ? key.s : to_json(key).dump()));
      return *found;
    }
    return no_overload();
  }

  static value member(const std::string& fn, const std::vector<value>& args) {
    const value& t = args[0];
    auto str_arg = [&](std::size_t k) -> const std::string* {
      if (args.size() <= k || args[k].kind != vk::string)
        return nullptr;
      return &args[k].s;
    };
    if (fn == "size")
      return args.size() == 1 ? size_of(t) : no_overload();
    if (fn == "hasValue" || fn == "value" || fn == "orValue" || fn == "or") {
      if (t.kind != vk::optional)
        return no_overload();
      if (fn == "hasValue")
        return make_bool(t.inner != nullptr);
      if (fn == "value")
        return t.inner ? *t.inner : make_error("optional.none() dereference");
      if (args.size() != 2)
        return no_overload();
      return t.inner ? (fn == "or" ? t : *t.inner) : args[1];
    }
    if (t.kind == vk::string) {
      const std::string& s = t.s;
      if (fn == "matches")
        return args.size() == 2 ? regex_match(t, args[1]) : no_overload();
      if (fn == "startsWith" || fn == "endsWith" || fn == "contains") {
        const std::string* a = str_arg(1);
        if (!a)
          return no_overload();
        if (fn == "startsWith")
          return make_bool(s.compare(0, a->size(), *a) == 0
                           && s.size() >= a->size());
        if (fn == "endsWith")
          return make_bool(s.size() >= a->size()
                           && s.compare(s.size() - a->size(), a->size(), *a)
                                  == 0);
        return make_bool(s.find(*a) != std::string::npos);
      }
      if (fn == "lowerAscii" || fn == "upperAscii") {
        std::string out = s;
        for (char& c : out) {
          if (fn == "lowerAscii" && c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
          if (fn == "upperAscii" && c >= 'a' && c <= 'z')
            c = static_cast<char>(c - 'a' + 'A');
        }
        return make_string(std::move(out));
      }
      if (fn == "trim") {
        auto b = s.find_first_not_of(" \t\n\r\f\v");
        if (b == std::string::npos)
          return make_string("");
        auto e = s.find_last_not_of(" \t\n\r\f\v");
        return make_string(s.substr(b, e - b + 1));
      }
      if (fn == "split") {
        const std::string* sep = str_arg(1);
        if (!sep)
          return no_overload();
        value_list out;
        if (sep->empty()) {
          for (std::size_t k = 0; k < s.size();) {
            std::size_t e = byte_offset(std::string_view{s}.substr(k), 1) + k;
            out.push_back(make_string(s.substr(k, e - k)));
            k = e;
          }
          return make_list(std::move(out));
        }
        std::size_t start = 0;
        for (;;) {
          auto at = s.find(*sep, start);
          if (at == std::string::npos) {
            out.push_back(make_string(s.substr(start)));
            break;
          }
          out.push_back(make_string(s.substr(start, at - start)));
          start = at + sep->size();
        }
        return make_list(std::move(out));
      }
      if (fn == "indexOf" || fn == "lastIndexOf") {
        const std::string* a = str_arg(1);
        if (!a)
          return no_overload();
        auto at = fn == "indexOf" ? s.find(*a) : s.rfind(*a);
        if (at == std::string::npos)
          return make_int(-1);
        return make_int(static_cast<std::int64_t>(
            code_points(std::string_view{s}.substr(0, at))));
      }
      if (fn == "replace") {
        const std::string* from = str_arg(1);
        const std::string* to = str_arg(2);
        if (!from || !to)
          return no_overload();
        std::string out;
        std::size_t start = 0;
        if (from->empty())
          return t;
        for (;;) {
          auto at = s.find(*from, start);
          if (at == std::string::npos)
            break;
          out += s.substr(start, at - start) + *to;
          start = at + from->size();
        }
        out += s.substr(start);
        return make_string(std::move(out));
      }
      if (fn == "substring" || fn == "charAt") {
        if (args.size() < 2 || args[1].kind != vk::integer)
          return no_overload();
        auto n = static_cast<std::int64_t>(code_points(s));
        std::int64_t b = args[1].i;
        std::int64_t e = fn == "charAt" ? std::min(b + 1, n) : n;
        if (fn == "substring" && args.size() == 3) {
          if (args[2].kind != vk::integer)
            return no_overload();
          e = args[2].i;
        }
        if (b < 0 || b > n || e > n || e < b)
          return make_error("index out of range: "
                            + std::to_string(b < 0 || b > n ? b : e));
        std::size_t bb = byte_offset(s, b);
        std::size_t eb = byte_offset(s, e);
        return make_string(s.substr(bb, eb - bb));
      }
      if (fn == "reverse") {
        std::string out(s.rbegin(), s.rend());
        return make_string(std::move(out));
      }
      return no_overload();
    }
    if (t.kind == vk::list) {
      std::size_t n = list_size(t);
      if (fn == "join") {
        std::string sep
            = args.size() > 1 && args[1].kind == vk::string ? args[1].s : "";
        std::string out;
        for (std::size_t k = 0; k < n; ++k) {
          value v = list_at(t, k);
          if (v.kind != vk::string)
            return no_overload();
          if (k)
            out += sep;
          out += v.s;
        }
        return make_string(std::move(out));
      }
      if (fn == "indexOf" || fn == "lastIndexOf") {
        if (args.size() != 2)
          return no_overload();
        for (std::size_t k = 0; k < n; ++k) {
          std::size_t at = fn == "indexOf" ? k : n - 1 - k;
          value eq = equals(list_at(t, at), args[1]);
          if (eq.kind == vk::error)
            return eq;
          if (eq.b)
            return make_int(static_cast<std::int64_t>(at));
        }
        return make_int(-1);
      }
      if (fn == "isSorted" || fn == "min" || fn == "max" || fn == "sum") {
        if (fn == "sum") {
          value acc = make_int(0);
          for (std::size_t k = 0; k < n; ++k) {
            value v = list_at(t, k);
            if (k == 0 && v.kind == vk::number)
              acc = make_double(0);
            if (k == 0 && v.kind == vk::uint)
              acc = make_uint(0);
            acc = arithmetic("_+_", acc, v);
            if (acc.kind == vk::error)
              return acc;
          }
          return acc;
        }
        if (n == 0)
          return fn == "isSorted"
                     ? make_bool(true)
                     : make_error(fn + "(list) argument must not be empty");
        value best = list_at(t, 0);
        for (std::size_t k = 1; k < n; ++k) {
          value v = list_at(t, k);
          if (fn == "isSorted") {
            value less = compare("_<_", v, best);
            if (less.kind == vk::error)
              return less;
            if (less.b)
              return make_bool(false);
            best = v;
            continue;
          }
          value better = compare(fn == "min" ? "_<_" : "_>_", v, best);
          if (better.kind == vk::error)
            return better;
          if (better.b)
            best = v;
        }
        return fn == "isSorted" ? make_bool(true) : best;
      }
      if (fn == "reverse") {
        value_list out;
        for (std::size_t k = n; k > 0; --k)
          out.push_back(list_at(t, k - 1));
        return make_list(std::move(out));
      }
    }
    return no_overload();
  }

  scope& scope_;
};

} // namespace

namespace {

caf::expected<json> evaluate_unguarded(const compiled_expression& expr,
                                       const activation& vars) {
  if (!expr.code || !expr.code->root)
    return aiperf::make_error(errc::invalid, "the expression was not compiled");
  const decl_type* type
      = vars.self_type ? vars.self_type.get() : dyn_type().get();
  value self = vars.self ? from_json(*vars.self, type) : value{};
  std::optional<value> old;
  if (vars.optional_old_self) {
    old = vars.old_self ? make_opt(from_json(*vars.old_self, type))
                        : make_opt(std::nullopt);
  } else if (vars.old_self) {
    old = from_json(*vars.old_self, type);
  }
  scope s;
  s.self = vars.self ? &self : nullptr;
  s.old_self = old ? &*old : nullptr;
  evaluator e{s};
  value result = e.eval(*expr.code->root);
  if (result.kind == vk::error)
    return aiperf::make_error(errc::invalid, result.s);
  return to_json(result);
}

} // namespace

caf::expected<json> evaluate(const compiled_expression& expr,
                             const activation& vars) {
  try {
    return evaluate_unguarded(expr, vars);
  } catch (const std::exception& e) {
    return aiperf::make_error(errc::invalid, e.what());
  }
}

} // namespace aiperf::k8s::cel
