#include "k8s/object/validation.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace aiperf::k8s {

namespace {

constexpr std::string_view reason_invalid = "FieldValueInvalid";
constexpr std::string_view reason_required = "FieldValueRequired";
constexpr std::string_view reason_forbidden = "FieldValueForbidden";
constexpr std::string_view reason_too_long = "FieldValueTooLong";
constexpr std::string_view reason_not_supported = "FieldValueNotSupported";
constexpr std::string_view reason_duplicate = "FieldValueDuplicate";

// The texts of pkg/util/validation/validation.go.
constexpr std::string_view qualified_name_fmt
    = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view qualified_name_err
    = "must consist of alphanumeric characters, '-', '_' or '.', and must "
      "start "
      "and end with an alphanumeric character";
constexpr std::string_view label_value_fmt
    = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr std::string_view label_value_err
    = "a valid label must be an empty string or consist of alphanumeric "
      "characters, '-', '_' or '.', and must start and end with an "
      "alphanumeric "
      "character";
constexpr std::string_view dns1123_label_fmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr std::string_view dns1123_label_err
    = "a lowercase RFC 1123 label must consist of lower case alphanumeric "
      "characters or '-', and must start and end with an alphanumeric "
      "character";
constexpr std::string_view dns1123_subdomain_fmt
    = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view dns1123_subdomain_err
    = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
      "characters, '-' or '.', and must start and end with an alphanumeric "
      "character";
constexpr std::string_view dns1035_label_fmt = "[a-z]([-a-z0-9]*[a-z0-9])?";
constexpr std::string_view dns1035_label_err
    = "a DNS-1035 label must consist of lower case alphanumeric characters or "
      "'-', start with an alphabetic character, and end with an alphanumeric "
      "character";

std::string regex_error(std::string_view msg, std::string_view fmt,
                        std::initializer_list<std::string_view> examples) {
  std::string out{msg};
  if (examples.size() == 0) {
    out += " (regex used for validation is '";
    out += fmt;
    out += "')";
    return out;
  }
  out += " (e.g. ";
  bool first = true;
  for (auto example : examples) {
    if (!first)
      out += " or ";
    first = false;
    out += "'";
    out += example;
    out += "', ";
  }
  out += "regex used for validation is '";
  out += fmt;
  out += "')";
  return out;
}

std::string max_len_error(int length) {
  return "must be no more than " + std::to_string(length) + " characters";
}

bool is_alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}
bool is_lower_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$
bool matches_qualified_name(std::string_view s) {
  if (s.empty() || !is_alnum(s.front()) || !is_alnum(s.back()))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return is_alnum(c) || c == '-' || c == '_' || c == '.';
  });
}

// ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
bool matches_dns1123_label(std::string_view s) {
  if (s.empty() || !is_lower_alnum(s.front()) || !is_lower_alnum(s.back()))
    return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return is_lower_alnum(c) || c == '-'; });
}

bool matches_dns1123_subdomain(std::string_view s) {
  if (s.empty())
    return false;
  size_t start = 0;
  while (true) {
    auto dot = s.find('.', start);
    auto part
        = s.substr(start, dot == std::string_view::npos ? std::string_view::npos
                                                        : dot - start);
    if (!matches_dns1123_label(part))
      return false;
    if (dot == std::string_view::npos)
      return true;
    start = dot + 1;
  }
}

bool matches_dns1035_label(std::string_view s) {
  return matches_dns1123_label(s) && s.front() >= 'a' && s.front() <= 'z';
}

std::vector<std::string> prefix_each(std::vector<std::string> msgs,
                                     std::string_view prefix) {
  for (auto& m : msgs)
    m.insert(0, prefix);
  return msgs;
}

std::string mask_trailing_dash(std::string_view name) {
  // Upstream replaces the last two characters with "a" (a slice of
  // len-2): kept as is, so the same generateNames pass and fail.
  if (name.size() > 1 && name.back() == '-')
    return std::string{name.substr(0, name.size() - 2)} + "a";
  return std::string{name};
}

status_cause make_cause(std::string_view reason, std::string field,
                        std::string message) {
  return status_cause{std::string{reason}, std::move(message),
                      std::move(field)};
}

void append(std::vector<status_cause>& out, std::vector<status_cause> more) {
  out.insert(out.end(), std::make_move_iterator(more.begin()),
             std::make_move_iterator(more.end()));
}

std::string string_or_empty(const json& obj, const char* key) {
  if (!obj.is_object())
    return {};
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string())
    return {};
  return it->get<std::string>();
}

// Go's `%#v` of a []string.
std::string go_string_slice(const json& list) {
  std::string out = "[]string{";
  bool first = true;
  if (list.is_array()) {
    for (const auto& item : list) {
      if (!first)
        out += ", ";
      first = false;
      out += go_quote(item.is_string() ? item.get<std::string>() : item.dump());
    }
  }
  out += "}";
  return out;
}

// Decoded length of a base64 text (Secret data travels base64-encoded).
std::int64_t base64_decoded_size(std::string_view text) {
  auto n = static_cast<std::int64_t>(text.size());
  std::int64_t padding = 0;
  while (padding < 2 && n - padding > 0 && text[n - 1 - padding] == '=')
    ++padding;
  return n / 4 * 3 - padding;
}

} // namespace

// --- field errors -----------------------------------------------------------

std::string go_quote(std::string_view text) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  size_t i = 0;
  auto put_u = [&](std::uint32_t cp, bool big) {
    out += big ? "\\U" : "\\u";
    for (int shift = big ? 28 : 12; shift >= 0; shift -= 4)
      out += hex[(cp >> shift) & 0xf];
  };
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\v':
        out += "\\v";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\x";
          out += hex[c >> 4];
          out += hex[c & 0xf];
        } else {
          out += static_cast<char>(c);
        }
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: copied when well formed, else each byte as \x...
    size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    std::uint32_t cp = len == 4 ? c & 0x07 : len == 3 ? c & 0x0f : c & 0x1f;
    bool ok = len != 0 && i + len <= text.size() && c <= 0xf4;
    for (size_t k = 1; ok && k < len; ++k) {
      auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xc0) != 0x80)
        ok = false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (ok) {
      bool overlong = (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800)
                      || (len == 4 && cp < 0x10000);
      ok = !overlong && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
    }
    if (!ok) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
      ++i;
      continue;
    }
    // C1 controls and the BOM are not printable in Go; the rest of the
    // code points we meet in names and labels are.
    if (cp < 0xa0 || cp == 0xfeff || cp == 0xad)
      put_u(cp, false);
    else
      out.append(text.substr(i, len));
    i += len;
  }
  out += "\"";
  return out;
}

status_cause field_invalid(std::string field, std::string_view value,
                           std::string_view detail) {
  return field_invalid_rendered(std::move(field), go_quote(value), detail);
}

status_cause field_invalid_rendered(std::string field,
                                    std::string_view rendered,
                                    std::string_view detail) {
  std::string message = "Invalid value: ";
  message += rendered;
  if (!detail.empty()) {
    message += ": ";
    message += detail;
  }
  return make_cause(reason_invalid, std::move(field), std::move(message));
}

status_cause field_required(std::string field, std::string_view detail) {
  std::string message = "Required value";
  if (!detail.empty()) {
    message += ": ";
    message += detail;
  }
  return make_cause(reason_required, std::move(field), std::move(message));
}

status_cause field_forbidden(std::string field, std::string_view detail) {
  std::string message = "Forbidden";
  if (!detail.empty()) {
    message += ": ";
    message += detail;
  }
  return make_cause(reason_forbidden, std::move(field), std::move(message));
}

status_cause field_too_long(std::string field, std::int64_t max_bytes) {
  return make_cause(reason_too_long, std::move(field),
                    "Too long: may not be more than "
                        + std::to_string(max_bytes) + " bytes");
}

status_cause field_not_supported(std::string field, std::string_view value,
                                 const std::vector<std::string>& supported) {
  std::string message = "Unsupported value: " + go_quote(value);
  if (!supported.empty()) {
    message += ": supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i > 0)
        message += ", ";
      message += go_quote(supported[i]);
    }
  }
  return make_cause(reason_not_supported, std::move(field), std::move(message));
}

std::string cause_text(const status_cause& cause) {
  return cause.field + ": " + cause.message;
}

std::string aggregate_text(const std::vector<status_cause>& causes) {
  std::vector<std::string> texts;
  std::set<std::string> seen;
  for (const auto& cause : causes) {
    auto text = cause_text(cause);
    if (seen.insert(text).second)
      texts.push_back(std::move(text));
  }
  if (texts.size() == 1)
    return texts.front();
  std::string out = "[";
  for (size_t i = 0; i < texts.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += texts[i];
  }
  out += "]";
  return out;
}

status invalid_status(std::string_view kind, std::string_view group,
                      std::string_view name, std::vector<status_cause> causes) {
  std::string qualified{kind};
  if (!group.empty()) {
    qualified += '.';
    qualified += group;
  }
  status st;
  st.reason = "Invalid";
  st.code = 422;
  st.message = qualified + " " + go_quote(name) + " is invalid";
  if (!causes.empty())
    st.message += ": " + aggregate_text(causes);
  st.details.name = std::string{name};
  st.details.group = std::string{group};
  st.details.kind = std::string{kind};
  st.details.causes = std::move(causes);
  return st;
}

// --- string formats ---------------------------------------------------------

std::vector<std::string> is_dns1123_label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63)
    errs.push_back(max_len_error(63));
  if (!matches_dns1123_label(value)) {
    if (matches_dns1123_subdomain(value))
      errs.emplace_back("must not contain dots");
    else
      errs.push_back(regex_error(dns1123_label_err, dns1123_label_fmt,
                                 {"my-name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> is_dns1123_subdomain(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 253)
    errs.push_back(max_len_error(253));
  if (!matches_dns1123_subdomain(value))
    errs.push_back(regex_error(dns1123_subdomain_err, dns1123_subdomain_fmt,
                               {"example.com"}));
  return errs;
}

std::vector<std::string> is_dns1035_label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63)
    errs.push_back(max_len_error(63));
  if (!matches_dns1035_label(value))
    errs.push_back(regex_error(dns1035_label_err, dns1035_label_fmt,
                               {"my-name", "abc-123"}));
  return errs;
}

std::vector<std::string> is_qualified_name(std::string_view value) {
  std::vector<std::string> errs;
  std::string_view name = value;
  auto slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      errs.push_back("a qualified name "
                     + regex_error(qualified_name_err, qualified_name_fmt,
                                   {"MyName", "my.name", "123-abc"})
                     + " with an optional DNS subdomain prefix and '/' (e.g. "
                       "'example.com/MyName')");
      return errs;
    }
    auto prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty())
      errs.emplace_back("prefix part must be non-empty");
    else
      for (auto& msg :
           prefix_each(is_dns1123_subdomain(prefix), "prefix part "))
        errs.push_back(std::move(msg));
  }
  if (name.empty())
    errs.emplace_back("name part must be non-empty");
  else if (name.size() > 63)
    errs.push_back("name part " + max_len_error(63));
  if (!matches_qualified_name(name))
    errs.push_back("name part "
                   + regex_error(qualified_name_err, qualified_name_fmt,
                                 {"MyName", "my.name", "123-abc"}));
  return errs;
}

std::vector<std::string> is_valid_label_value(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63)
    errs.push_back(max_len_error(63));
  if (!value.empty() && !matches_qualified_name(value))
    errs.push_back(regex_error(label_value_err, label_value_fmt,
                               {"MyValue", "my_value", "12345"}));
  return errs;
}

// --- names ------------------------------------------------------------------

std::vector<std::string> validate_name(name_rule rule, std::string_view name,
                                       bool prefix) {
  switch (rule) {
  case name_rule::path_segment: {
    std::vector<std::string> errs;
    if (!prefix && (name == "." || name == ".."))
      return {"may not be '" + std::string{name} + "'"};
    if (name.find('/') != std::string_view::npos)
      errs.emplace_back("may not contain '/'");
    if (name.find('%') != std::string_view::npos)
      errs.emplace_back("may not contain '%'");
    return errs;
  }
  case name_rule::dns1123_label:
    return is_dns1123_label(prefix ? mask_trailing_dash(name)
                                   : std::string{name});
  case name_rule::dns1035_label:
    return is_dns1035_label(prefix ? mask_trailing_dash(name)
                                   : std::string{name});
  case name_rule::dns1123_subdomain:
    break;
  }
  return is_dns1123_subdomain(prefix ? mask_trailing_dash(name)
                                     : std::string{name});
}

// --- metadata ---------------------------------------------------------------

std::vector<status_cause> validate_labels(const json& labels,
                                          const std::string& field) {
  std::vector<status_cause> out;
  if (!labels.is_object())
    return out;
  for (const auto& [key, value] : labels.items()) {
    for (const auto& msg : is_qualified_name(key))
      out.push_back(field_invalid(field, key, msg));
    auto text = value.is_string() ? value.get<std::string>() : std::string{};
    for (const auto& msg : is_valid_label_value(text))
      out.push_back(field_invalid(field, text, msg));
  }
  return out;
}

std::vector<status_cause> validate_annotations(const json& annotations,
                                               const std::string& field) {
  std::vector<status_cause> out;
  if (!annotations.is_object())
    return out;
  std::int64_t total = 0;
  for (const auto& [key, value] : annotations.items()) {
    // The rule is QualifiedName except that case does not matter.
    std::string lower = key;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) {
      return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    });
    for (const auto& msg : is_qualified_name(lower))
      out.push_back(field_invalid(field, key, msg));
    total += static_cast<std::int64_t>(key.size());
    if (value.is_string())
      total += static_cast<std::int64_t>(
          value.get_ref<const std::string&>().size());
  }
  if (total > total_annotation_size_limit)
    out.push_back(field_too_long(field, total_annotation_size_limit));
  return out;
}

std::vector<status_cause> validate_owner_references(const json& refs,
                                                    const std::string& field) {
  std::vector<status_cause> out;
  if (!refs.is_array())
    return out;
  std::string first_controller;
  for (const auto& ref : refs) {
    auto api_version = string_or_empty(ref, "apiVersion");
    auto kind = string_or_empty(ref, "kind");
    auto name = string_or_empty(ref, "name");
    auto uid = string_or_empty(ref, "uid");
    // schema.FromAPIVersionAndKind: "group/version" or "version".
    std::string version = api_version;
    std::string group;
    if (auto slash = api_version.find('/'); slash != std::string::npos) {
      group = api_version.substr(0, slash);
      version = api_version.substr(slash + 1);
    }
    if (version.empty())
      out.push_back(field_invalid(field + ".apiVersion", api_version,
                                  "version must not be empty"));
    if (kind.empty())
      out.push_back(
          field_invalid(field + ".kind", kind, "kind must not be empty"));
    if (name.empty())
      out.push_back(
          field_invalid(field + ".name", name, "name must not be empty"));
    if (uid.empty())
      out.push_back(
          field_invalid(field + ".uid", uid, "uid must not be empty"));
    if (group.empty() && version == "v1" && kind == "Event")
      out.push_back(field_invalid_rendered(
          field, ref.dump(),
          "/v1, Kind=Event is disallowed from being an owner"));
    if (ref.is_object() && ref.value("controller", false)) {
      auto current = kind + "/" + name;
      if (first_controller.empty())
        first_controller = current;
      else
        out.push_back(
            field_invalid_rendered(field, refs.dump(),
                                   "Only one reference can have Controller set "
                                   "to true. Found \"true\" "
                                   "in references for "
                                       + first_controller + " and " + current));
    }
  }
  return out;
}

std::vector<status_cause> validate_finalizers(const json& finalizers,
                                              const std::string& field) {
  std::vector<status_cause> out;
  if (!finalizers.is_array())
    return out;
  bool orphan = false;
  bool foreground = false;
  for (const auto& item : finalizers) {
    auto name = item.is_string() ? item.get<std::string>() : std::string{};
    for (const auto& msg : is_qualified_name(name))
      out.push_back(field_invalid(field, name, msg));
    orphan = orphan || name == "orphan";
    foreground = foreground || name == "foregroundDeletion";
  }
  if (orphan && foreground)
    out.push_back(field_invalid_rendered(
        field, go_string_slice(finalizers),
        "finalizer orphan and foregroundDeletion cannot be both set"));
  return out;
}

std::vector<status_cause> validate_label_selector(const json& selector,
                                                  const std::string& field) {
  std::vector<status_cause> out;
  if (!selector.is_object())
    return out;
  append(out, validate_labels(selector.value("matchLabels", json{}),
                              field + ".matchLabels"));
  auto expressions = selector.value("matchExpressions", json{});
  if (!expressions.is_array())
    return out;
  for (size_t i = 0; i < expressions.size(); ++i) {
    const auto& expr = expressions[i];
    auto path = field + ".matchExpressions[" + std::to_string(i) + "]";
    auto op = string_or_empty(expr, "operator");
    auto values = expr.is_object() ? expr.value("values", json::array())
                                   : json::array();
    bool has_values = values.is_array() && !values.empty();
    if (op == "In" || op == "NotIn") {
      if (!has_values)
        out.push_back(field_required(
            path + ".values",
            "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (has_values)
        out.push_back(field_forbidden(path + ".values",
                                      "may not be specified when `operator` "
                                      "is 'Exists' or 'DoesNotExist'"));
    } else {
      out.push_back(field_invalid(path + ".operator", op,
                                  "not a valid selector operator"));
    }
    auto key = string_or_empty(expr, "key");
    for (const auto& msg : is_qualified_name(key))
      out.push_back(field_invalid(path + ".key", key, msg));
    if (values.is_array())
      for (size_t v = 0; v < values.size(); ++v) {
        auto text = values[v].is_string() ? values[v].get<std::string>()
                                          : std::string{};
        for (const auto& msg : is_valid_label_value(text))
          out.push_back(field_invalid(
              path + ".values[" + std::to_string(v) + "]", text, msg));
      }
  }
  return out;
}

std::vector<status_cause>
validate_object_meta(const json& metadata, bool namespaced, name_rule rule) {
  std::vector<status_cause> out;
  auto generate_name = string_or_empty(metadata, "generateName");
  if (!generate_name.empty())
    for (const auto& msg : validate_name(rule, generate_name, true))
      out.push_back(field_invalid("metadata.generateName", generate_name, msg));
  auto name = string_or_empty(metadata, "name");
  if (name.empty())
    out.push_back(
        field_required("metadata.name", "name or generateName is required"));
  else
    for (const auto& msg : validate_name(rule, name, false))
      out.push_back(field_invalid("metadata.name", name, msg));
  auto ns = string_or_empty(metadata, "namespace");
  if (namespaced) {
    if (ns.empty())
      out.push_back(field_required("metadata.namespace"));
    else
      for (const auto& msg : validate_name(name_rule::dns1123_label, ns, false))
        out.push_back(field_invalid("metadata.namespace", ns, msg));
  } else if (!ns.empty()) {
    out.push_back(
        field_forbidden("metadata.namespace", "not allowed on this type"));
  }
  if (metadata.is_object()) {
    auto gen = metadata.find("generation");
    if (gen != metadata.end() && gen->is_number_integer()
        && gen->get<std::int64_t>() < 0)
      out.push_back(field_invalid_rendered(
          "metadata.generation", std::to_string(gen->get<std::int64_t>()),
          "must be greater than or equal to 0"));
    append(out, validate_labels(metadata.value("labels", json{})));
    append(out, validate_annotations(metadata.value("annotations", json{})));
    append(out, validate_owner_references(
                    metadata.value("ownerReferences", json{})));
    append(out, validate_finalizers(metadata.value("finalizers", json{})));
  }
  return out;
}

std::vector<status_cause>
validate_object_meta_update(const json& new_metadata,
                            const json& old_metadata) {
  std::vector<status_cause> out;
  auto get = [](const json& m, const char* key) {
    if (!m.is_object())
      return json{};
    auto it = m.find(key);
    return it == m.end() ? json{} : *it;
  };
  if (!get(old_metadata, "deletionTimestamp").is_null()) {
    std::set<std::string> old_set;
    auto old_finalizers = get(old_metadata, "finalizers");
    if (old_finalizers.is_array())
      for (const auto& f : old_finalizers)
        if (f.is_string())
          old_set.insert(f.get<std::string>());
    std::set<std::string> extra;
    auto new_finalizers = get(new_metadata, "finalizers");
    if (new_finalizers.is_array())
      for (const auto& f : new_finalizers)
        if (f.is_string() && !old_set.count(f.get<std::string>()))
          extra.insert(f.get<std::string>());
    if (!extra.empty()) {
      json list = json::array();
      for (const auto& f : extra)
        list.push_back(f);
      out.push_back(field_forbidden("metadata.finalizers",
                                    "no new finalizers can be added if the "
                                    "object is being deleted, found "
                                    "new finalizers "
                                        + go_string_slice(list)));
    }
  }
  auto rv = string_or_empty(new_metadata, "resourceVersion");
  if (rv.empty())
    out.push_back(field_invalid("metadata.resourceVersion", rv,
                                "must be specified for an update"));
  auto new_gen = get(new_metadata, "generation");
  auto old_gen = get(old_metadata, "generation");
  auto gen_of = [](const json& v) {
    return v.is_number_integer() ? v.get<std::int64_t>() : 0;
  };
  if (gen_of(new_gen) < gen_of(old_gen))
    out.push_back(field_invalid_rendered("metadata.generation",
                                         std::to_string(gen_of(new_gen)),
                                         "must not be decremented"));
  for (const char* key : {"name", "namespace", "uid", "creationTimestamp",
                          "deletionTimestamp", "deletionGracePeriodSeconds"}) {
    auto now = get(new_metadata, key);
    auto before = get(old_metadata, key);
    // An empty string and an absent field are the same Go zero value.
    auto normal = [](const json& v) {
      return v.is_string() && v.get_ref<const std::string&>().empty() ? json{}
                                                                      : v;
    };
    if (normal(now) != normal(before)) {
      auto rendered = now.is_string() ? go_quote(now.get<std::string>())
                      : now.is_null() ? std::string{"null"}
                                      : now.dump();
      out.push_back(field_invalid_rendered(std::string{"metadata."} + key,
                                           rendered, "field is immutable"));
    }
  }
  if (new_metadata.is_object()) {
    append(out, validate_labels(new_metadata.value("labels", json{})));
    append(out,
           validate_annotations(new_metadata.value("annotations", json{})));
    append(out, validate_owner_references(
                    new_metadata.value("ownerReferences", json{})));
  }
  return out;
}

// --- size limits
// --------------------------------------------------------------

status request_entity_too_large_status(std::int64_t limit) {
  return status{"RequestEntityTooLarge",
                413,
                "Request entity too large: limit is " + std::to_string(limit),
                {}};
}

status object_too_large_status() {
  return status{"", 500, "etcdserver: request is too large", {}};
}

// --- built-in types ---------------------------------------------------------

namespace {

// validation.IsConfigMapKey: [-._a-zA-Z0-9]+, <= 253, and no "." / ".." /
// "..x" (hasChDirPrefix).
std::vector<std::string> is_config_map_key(std::string_view key) {
  std::vector<std::string> errs;
  if (key.size() > 253)
    errs.push_back(max_len_error(253));
  bool chars_ok
      = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
          return is_alnum(c) || c == '-' || c == '.' || c == '_';
        });
  if (!chars_ok)
    errs.push_back(regex_error(
        "a valid config key must consist of alphanumeric characters, '-', '_' "
        "or '.'",
        "[-._a-zA-Z0-9]+", {"key.name", "KEY_NAME", "key-name"}));
  if (key == ".")
    errs.emplace_back("must not be '.'");
  else if (key == "..")
    errs.emplace_back("must not be '..'");
  else if (key.substr(0, 2) == "..")
    errs.emplace_back("must not start with '..'");
  return errs;
}

std::int64_t string_size(const json& value) {
  return value.is_string() ? static_cast<std::int64_t>(
             value.get_ref<const std::string&>().size())
                           : 0;
}

} // namespace

std::vector<status_cause> validate_config_map(const json& object) {
  // pkg/apis/core/validation ValidateConfigMap (without the metadata).
  std::vector<status_cause> out;
  std::int64_t total = 0;
  auto data = object.is_object() ? object.value("data", json{}) : json{};
  auto binary
      = object.is_object() ? object.value("binaryData", json{}) : json{};
  if (data.is_object())
    for (const auto& [key, value] : data.items()) {
      for (const auto& msg : is_config_map_key(key))
        out.push_back(field_invalid("data[" + key + "]", key, msg));
      if (binary.is_object() && binary.contains(key))
        out.push_back(field_invalid("data[" + key + "]", key,
                                    "duplicate of key present in binaryData"));
      total += string_size(value);
    }
  if (binary.is_object())
    for (const auto& [key, value] : binary.items()) {
      for (const auto& msg : is_config_map_key(key))
        out.push_back(field_invalid("binaryData[" + key + "]", key, msg));
      if (value.is_string())
        total += base64_decoded_size(value.get_ref<const std::string&>());
    }
  if (total > config_map_max_bytes)
    // field.NewPath("") prints as "[]": the error is about the whole object.
    out.push_back(field_too_long("[]", config_map_max_bytes));
  return out;
}

std::vector<status_cause> validate_secret(const json& object) {
  // ValidateSecret, after stringData was merged into data.
  std::vector<status_cause> out;
  std::int64_t total = 0;
  auto data = object.is_object() ? object.value("data", json{}) : json{};
  auto string_data
      = object.is_object() ? object.value("stringData", json{}) : json{};
  std::set<std::string> keys;
  auto add_key = [&](const std::string& key, std::int64_t size) {
    if (!keys.insert(key).second)
      return;
    for (const auto& msg : is_config_map_key(key))
      out.push_back(field_invalid("data[" + key + "]", key, msg));
    total += size;
  };
  if (string_data.is_object())
    for (const auto& [key, value] : string_data.items())
      add_key(key, string_size(value));
  if (data.is_object())
    for (const auto& [key, value] : data.items())
      add_key(key, value.is_string() ? base64_decoded_size(
                       value.get_ref<const std::string&>())
                                     : 0);
  if (total > config_map_max_bytes)
    out.push_back(field_too_long("data", config_map_max_bytes));
  auto type = string_or_empty(object, "type");
  auto require = [&](const char* key) {
    if (!keys.count(key))
      out.push_back(field_required(std::string{"data["} + key + "]"));
  };
  if (type == "kubernetes.io/service-account-token") {
    auto annotations = object.is_object() && object.contains("metadata")
                           ? object["metadata"].value("annotations", json{})
                           : json{};
    if (!annotations.is_object()
        || string_or_empty(annotations, "kubernetes.io/service-account.name")
               .empty())
      out.push_back(field_required(
          "metadata.annotations[kubernetes.io/service-account.name]"));
  } else if (type == "kubernetes.io/dockercfg") {
    require(".dockercfg");
  } else if (type == "kubernetes.io/dockerconfigjson") {
    require(".dockerconfigjson");
  } else if (type == "kubernetes.io/basic-auth") {
    if (!keys.count("username") && !keys.count("password")) {
      require("username");
      require("password");
    }
  } else if (type == "kubernetes.io/ssh-auth") {
    require("ssh-privatekey");
  } else if (type == "kubernetes.io/tls") {
    require("tls.crt");
    require("tls.key");
  }
  return out;
}

std::vector<status_cause> validate_pod_spec(const json& spec,
                                            const std::string& field) {
  // ValidatePodSpec, on a defaulted spec: the fields defaulting fills in
  // (terminationGracePeriodSeconds, restartPolicy, dnsPolicy, and per
  // container terminationMessagePolicy, imagePullPolicy) are required here.
  std::vector<status_cause> out;
  if (!spec.is_object() || !spec.contains("terminationGracePeriodSeconds")
      || spec["terminationGracePeriodSeconds"].is_null())
    out.push_back(field_required(field + ".terminationGracePeriodSeconds"));
  auto containers
      = spec.is_object() ? spec.value("containers", json{}) : json{};
  if (!containers.is_array() || containers.empty()) {
    out.push_back(field_required(field + ".containers"));
  } else {
    std::set<std::string> names;
    for (size_t i = 0; i < containers.size(); ++i) {
      const auto& ctr = containers[i];
      auto path = field + ".containers[" + std::to_string(i) + "]";
      auto name = string_or_empty(ctr, "name");
      if (name.empty())
        out.push_back(field_required(path + ".name"));
      else
        for (const auto& msg : is_dns1123_label(name))
          out.push_back(field_invalid(path + ".name", name, msg));
      if (string_or_empty(ctr, "image").empty())
        out.push_back(field_required(path + ".image"));
      auto tmp = string_or_empty(ctr, "terminationMessagePolicy");
      if (tmp.empty())
        out.push_back(field_required(path + ".terminationMessagePolicy"));
      else if (tmp != "File" && tmp != "FallbackToLogsOnError")
        out.push_back(field_not_supported(path + ".terminationMessagePolicy",
                                          tmp,
                                          {"File", "FallbackToLogsOnError"}));
      auto pull = string_or_empty(ctr, "imagePullPolicy");
      if (pull.empty())
        out.push_back(field_required(path + ".imagePullPolicy"));
      else if (pull != "Always" && pull != "IfNotPresent" && pull != "Never")
        out.push_back(field_not_supported(path + ".imagePullPolicy", pull,
                                          {"Always", "IfNotPresent", "Never"}));
      if (!names.insert(name).second)
        out.push_back(make_cause(reason_duplicate, path + ".name",
                                 "Duplicate value: " + go_quote(name)));
    }
  }
  auto restart = string_or_empty(spec, "restartPolicy");
  if (restart.empty())
    out.push_back(field_required(field + ".restartPolicy"));
  else if (restart != "Always" && restart != "OnFailure" && restart != "Never")
    out.push_back(field_not_supported(field + ".restartPolicy", restart,
                                      {"Always", "OnFailure", "Never"}));
  auto dns = string_or_empty(spec, "dnsPolicy");
  if (dns.empty())
    out.push_back(field_required(field + ".dnsPolicy"));
  else if (dns != "ClusterFirstWithHostNet" && dns != "ClusterFirst"
           && dns != "Default" && dns != "None")
    out.push_back(field_not_supported(
        field + ".dnsPolicy", dns,
        {"ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"}));
  if (spec.is_object())
    append(out, validate_labels(spec.value("nodeSelector", json{}),
                                field + ".nodeSelector"));
  for (const char* key : {"serviceAccountName", "nodeName"}) {
    auto value = string_or_empty(spec, key);
    if (!value.empty())
      for (const auto& msg : is_dns1123_subdomain(value))
        out.push_back(field_invalid(field + "." + key, value, msg));
  }
  for (const char* key : {"hostname", "subdomain"}) {
    auto value = string_or_empty(spec, key);
    if (!value.empty())
      for (const auto& msg : is_dns1123_label(value))
        out.push_back(field_invalid(field + "." + key, value, msg));
  }
  return out;
}

} // namespace aiperf::k8s
