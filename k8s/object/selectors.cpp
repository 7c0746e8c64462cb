#include "k8s/object/selectors.hpp"

#include "k8s/errors/errors.hpp"
#include "k8s/object/validation.hpp"

#include <algorithm>
#include <charconv>
#include <set>

namespace aiperf::k8s {

namespace {

caf::error bad_request(std::string_view what, std::string message) {
  return make_status_error(what,
                           status{"BadRequest", 400, std::move(message), {}});
}

// --- the label selector lexer and parser (pkg/labels/selector.go) -----------

enum class token : std::uint8_t {
  error,
  end_of_string,
  closed_par,
  comma,
  does_not_exist,
  double_equals,
  equals,
  greater_than,
  identifier,
  in,
  less_than,
  not_equals,
  not_in,
  open_par,
};

struct scanned {
  token tok;
  std::string literal;
};

bool is_whitespace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool is_special_symbol(char c) {
  switch (c) {
  case '=':
  case '!':
  case '(':
  case ')':
  case ',':
  case '>':
  case '<':
    return true;
  default:
    return false;
  }
}

bool keyword_token(std::string_view s, token& out) {
  static const std::pair<std::string_view, token> table[] = {
      {")", token::closed_par},
      {",", token::comma},
      {"!", token::does_not_exist},
      {"==", token::double_equals},
      {"=", token::equals},
      {">", token::greater_than},
      {"in", token::in},
      {"<", token::less_than},
      {"!=", token::not_equals},
      {"notin", token::not_in},
      {"(", token::open_par},
  };
  for (const auto& [text, tok] : table)
    if (text == s) {
      out = tok;
      return true;
    }
  return false;
}

std::vector<scanned> lex(std::string_view s) {
  std::vector<scanned> items;
  size_t pos = 0;
  while (true) {
    while (pos < s.size() && is_whitespace(s[pos]))
      ++pos;
    if (pos >= s.size() || s[pos] == '\0') {
      items.push_back({token::end_of_string, ""});
      return items;
    }
    if (is_special_symbol(s[pos])) {
      std::string buffer;
      scanned last{token::error, ""};
      bool have_last = false;
      while (pos < s.size() && is_special_symbol(s[pos])) {
        buffer += s[pos++];
        token tok;
        if (keyword_token(buffer, tok)) {
          last = {tok, buffer};
          have_last = true;
        } else if (have_last) {
          --pos;
          break;
        }
      }
      if (!have_last)
        items.push_back(
            {token::error, "error expected: keyword found '" + buffer + "'"});
      else
        items.push_back(std::move(last));
      continue;
    }
    std::string buffer;
    while (pos < s.size() && s[pos] != '\0' && !is_special_symbol(s[pos])
           && !is_whitespace(s[pos]))
      buffer += s[pos++];
    token tok;
    if (keyword_token(buffer, tok))
      items.push_back({tok, buffer});
    else
      items.push_back({token::identifier, buffer});
  }
}

// Go's `%#v` of a []string, as field.Invalid prints the values of a
// requirement.
std::string go_string_slice(const std::vector<std::string>& values) {
  std::string out = "[]string{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += go_quote(values[i]);
  }
  return out + "}";
}

bool parse_int64(std::string_view text, std::int64_t& out) {
  if (!text.empty() && text.front() == '+')
    text.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && ptr == text.data() + text.size() && !text.empty();
}

// labels.NewRequirement: the aggregate of its field errors, or "" if valid.
std::string check_requirement(const label_requirement& r) {
  std::vector<status_cause> errs;
  for (const auto& msg : is_qualified_name(r.key))
    errs.push_back(field_invalid("key", r.key, msg));
  const std::string values_path = "values";
  switch (r.op) {
  case label_op::in:
  case label_op::not_in:
    if (r.values.empty())
      errs.push_back(field_invalid_rendered(
          values_path, go_string_slice(r.values),
          "for 'in', 'notin' operators, values set can't be empty"));
    break;
  case label_op::equals:
  case label_op::not_equals:
    if (r.values.size() != 1)
      errs.push_back(
          field_invalid_rendered(values_path, go_string_slice(r.values),
                                 "exact-match compatibility requires one "
                                 "single value"));
    break;
  case label_op::exists:
  case label_op::does_not_exist:
    if (!r.values.empty())
      errs.push_back(field_invalid_rendered(
          values_path, go_string_slice(r.values),
          "values set must be empty for exists and does not exist"));
    break;
  case label_op::greater_than:
  case label_op::less_than:
    if (r.values.size() != 1)
      errs.push_back(field_invalid_rendered(
          values_path, go_string_slice(r.values),
          "for 'Gt', 'Lt' operators, exactly one value is required"));
    for (size_t i = 0; i < r.values.size(); ++i) {
      std::int64_t ignored = 0;
      if (!parse_int64(r.values[i], ignored))
        errs.push_back(field_invalid(
            values_path + "[" + std::to_string(i) + "]", r.values[i],
            "for 'Gt', 'Lt' operators, the value must be an integer"));
    }
    break;
  }
  for (size_t i = 0; i < r.values.size(); ++i) {
    std::string joined;
    for (const auto& msg : is_valid_label_value(r.values[i])) {
      if (!joined.empty())
        joined += "; ";
      joined += msg;
    }
    if (!joined.empty())
      errs.push_back(field_invalid(values_path + "[" + std::to_string(i) + "]["
                                       + r.key + "]",
                                   r.values[i], joined));
  }
  // field.ErrorList.ToAggregate drops duplicates too.
  return errs.empty() ? std::string{} : aggregate_text(errs);
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0)
      out += sep;
    out += parts[i];
  }
  return out;
}

class label_parser {
public:
  explicit label_parser(std::string_view text) : items_(lex(text)) {}

  // Returns "" on success, else the message of the first error.
  std::string parse(std::vector<label_requirement>& out) {
    while (true) {
      auto [tok, lit] = lookahead(true);
      switch (tok) {
      case token::identifier:
      case token::does_not_exist: {
        label_requirement r;
        if (auto err = parse_requirement(r); !err.empty())
          return "unable to parse requirement: " + err;
        out.push_back(std::move(r));
        auto [t, l] = consume(true);
        if (t == token::end_of_string)
          return {};
        if (t == token::comma) {
          auto [t2, l2] = lookahead(true);
          if (t2 != token::identifier && t2 != token::does_not_exist)
            return "found '" + l2 + "', expected: identifier after ','";
          break;
        }
        return "found '" + l + "', expected: ',' or 'end of string'";
      }
      case token::end_of_string:
        return {};
      default:
        return "found '" + lit
               + "', expected: !, identifier, or 'end of string'";
      }
    }
  }

private:
  std::pair<token, std::string> lookahead(bool values) const {
    const auto& item = items_[position_];
    return {adjust(item.tok, values), item.literal};
  }

  std::pair<token, std::string> consume(bool values) {
    const auto& item = items_[position_];
    if (position_ + 1 < items_.size())
      ++position_;
    return {adjust(item.tok, values), item.literal};
  }

  static token adjust(token tok, bool values) {
    if (values && (tok == token::in || tok == token::not_in))
      return token::identifier;
    return tok;
  }

  std::string parse_requirement(label_requirement& r) {
    bool exists_inferred = false;
    if (auto err = parse_key_and_infer_operator(r, exists_inferred);
        !err.empty())
      return err;
    if (exists_inferred || r.op == label_op::does_not_exist)
      return check_requirement(r);
    auto [tok, lit] = consume(false);
    switch (tok) {
    case token::in:
      r.op = label_op::in;
      break;
    case token::equals:
    case token::double_equals:
      r.op = label_op::equals;
      break;
    case token::greater_than:
      r.op = label_op::greater_than;
      break;
    case token::less_than:
      r.op = label_op::less_than;
      break;
    case token::not_in:
      r.op = label_op::not_in;
      break;
    case token::not_equals:
      r.op = label_op::not_equals;
      break;
    default:
      return "found '" + lit + "', expected: in, notin, =, ==, !=, gt, lt";
    }
    std::set<std::string> values;
    std::string err;
    if (r.op == label_op::in || r.op == label_op::not_in)
      err = parse_values(values);
    else
      err = parse_exact_value(values);
    if (!err.empty())
      return err;
    r.values.assign(values.begin(), values.end());
    return check_requirement(r);
  }

  std::string parse_key_and_infer_operator(label_requirement& r,
                                           bool& exists_inferred) {
    auto [tok, lit] = consume(true);
    bool negated = false;
    if (tok == token::does_not_exist) {
      negated = true;
      std::tie(tok, lit) = consume(true);
    }
    if (tok != token::identifier)
      return "found '" + lit + "', expected: identifier";
    auto msgs = is_qualified_name(lit);
    if (!msgs.empty())
      // The parser's own path is nil, which Go prints as "<nil>".
      return cause_text(field_invalid("<nil>", lit, join(msgs, "; ")));
    r.key = lit;
    r.op = negated ? label_op::does_not_exist : label_op::exists;
    // "!k" stays DoesNotExist whatever follows ("!k=v" then fails at "=").
    auto next = lookahead(true).first;
    exists_inferred
        = !negated && (next == token::end_of_string || next == token::comma);
    return {};
  }

  std::string parse_values(std::set<std::string>& out) {
    auto [tok, lit] = consume(true);
    if (tok != token::open_par)
      return "found '" + lit + "' expected: '('";
    std::tie(tok, lit) = lookahead(true);
    switch (tok) {
    case token::identifier:
    case token::comma: {
      if (auto err = parse_identifiers_list(out); !err.empty())
        return err;
      if (consume(true).first != token::closed_par)
        return "found '" + lit + "', expected: ')'";
      return {};
    }
    case token::closed_par:
      consume(true);
      out.insert("");
      return {};
    default:
      return "found '" + lit + "', expected: ',', ')' or identifier";
    }
  }

  std::string parse_identifiers_list(std::set<std::string>& out) {
    while (true) {
      auto [tok, lit] = consume(true);
      switch (tok) {
      case token::identifier: {
        out.insert(lit);
        auto [tok2, lit2] = lookahead(true);
        if (tok2 == token::comma)
          continue;
        if (tok2 == token::closed_par)
          return {};
        return "found '" + lit2 + "', expected: ',' or ')'";
      }
      case token::comma: {
        if (out.empty())
          out.insert("");
        auto tok2 = lookahead(true).first;
        if (tok2 == token::closed_par) {
          out.insert("");
          return {};
        }
        if (tok2 == token::comma) {
          consume(true);
          out.insert("");
        }
        continue;
      }
      default:
        return "found '" + lit + "', expected: ',', or identifier";
      }
    }
  }

  std::string parse_exact_value(std::set<std::string>& out) {
    auto tok = lookahead(true).first;
    if (tok == token::end_of_string || tok == token::comma) {
      out.insert("");
      return {};
    }
    auto [t, lit] = consume(true);
    if (t == token::identifier) {
      out.insert(lit);
      return {};
    }
    return "found '" + lit + "', expected: identifier";
  }

  std::vector<scanned> items_;
  size_t position_ = 0;
};

bool requirement_matches(const label_requirement& r, const json& labels) {
  const json* value = nullptr;
  if (labels.is_object()) {
    auto it = labels.find(r.key);
    if (it != labels.end())
      value = &*it;
  }
  auto text = [&] {
    return value && value->is_string() ? value->get<std::string>()
                                       : std::string{};
  };
  auto has = [&](const std::string& v) {
    return std::find(r.values.begin(), r.values.end(), v) != r.values.end();
  };
  switch (r.op) {
  case label_op::equals:
  case label_op::in:
    return value && has(text());
  case label_op::not_equals:
  case label_op::not_in:
    return !value || !has(text());
  case label_op::exists:
    return value != nullptr;
  case label_op::does_not_exist:
    return value == nullptr;
  case label_op::greater_than:
  case label_op::less_than: {
    std::int64_t have = 0;
    std::int64_t want = 0;
    if (!value || r.values.size() != 1 || !parse_int64(text(), have)
        || !parse_int64(r.values.front(), want))
      return false;
    return r.op == label_op::greater_than ? have > want : have < want;
  }
  }
  return false;
}

void sort_by_key(std::vector<label_requirement>& reqs) {
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const auto& a, const auto& b) { return a.key < b.key; });
}

// --- field selectors (pkg/fields/selector.go) -------------------------------

std::vector<std::string> split_terms(std::string_view s) {
  std::vector<std::string> terms;
  if (s.empty())
    return terms;
  size_t start = 0;
  bool in_slash = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_slash)
      in_slash = false;
    else if (c == '\\')
      in_slash = true;
    else if (c == ',') {
      terms.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  terms.emplace_back(s.substr(start));
  return terms;
}

// Returns "" on success, else the error message.
std::string unescape_value(std::string_view s, std::string& out) {
  out.clear();
  bool in_slash = false;
  for (char c : s) {
    if (in_slash) {
      if (c == '\\' || c == ',' || c == '=') {
        out += c;
      } else {
        return std::string{
                   "invalid field selector: invalid escape sequence: \\"}
               + c;
      }
      in_slash = false;
      continue;
    }
    if (c == '\\')
      in_slash = true;
    else if (c == ',' || c == '=')
      // Go prints the rune with %v: its code point.
      return "invalid field selector: unescaped character in value: "
             + std::to_string(static_cast<int>(c));
    else
      out += c;
  }
  if (in_slash)
    return "invalid field selector: invalid escape sequence: \\";
  return {};
}

} // namespace

bool label_selector::matches(const json& labels) const {
  if (nothing)
    return false;
  return std::all_of(
      requirements.begin(), requirements.end(),
      [&](const auto& r) { return requirement_matches(r, labels); });
}

caf::expected<label_selector> parse_label_selector(std::string_view text) {
  label_selector out;
  label_parser parser{text};
  if (auto err = parser.parse(out.requirements); !err.empty())
    return bad_request("labelSelector", std::move(err));
  sort_by_key(out.requirements);
  return out;
}

caf::expected<label_selector> label_selector_from_json(const json& selector) {
  label_selector out;
  if (selector.is_null()) {
    out.nothing = true;
    return out;
  }
  if (!selector.is_object())
    return bad_request("selector", "a label selector must be an object");
  auto labels = selector.value("matchLabels", json{});
  if (labels.is_object())
    for (const auto& [key, value] : labels.items()) {
      label_requirement r{
          key,
          label_op::equals,
          {value.is_string() ? value.get<std::string>() : std::string{}}};
      if (auto err = check_requirement(r); !err.empty())
        return bad_request("selector", std::move(err));
      out.requirements.push_back(std::move(r));
    }
  auto expressions = selector.value("matchExpressions", json{});
  if (expressions.is_array())
    for (const auto& expr : expressions) {
      if (!expr.is_object())
        return bad_request("selector", "a matchExpression must be an object");
      label_requirement r;
      r.key = expr.value("key", "");
      auto op = expr.value("operator", "");
      if (op == "In")
        r.op = label_op::in;
      else if (op == "NotIn")
        r.op = label_op::not_in;
      else if (op == "Exists")
        r.op = label_op::exists;
      else if (op == "DoesNotExist")
        r.op = label_op::does_not_exist;
      else
        return bad_request("selector", go_quote(op)
                                           + " is not a valid label selector "
                                             "operator");
      auto values = expr.value("values", json{});
      if (values.is_array())
        for (const auto& v : values)
          r.values.push_back(v.is_string() ? v.get<std::string>() : v.dump());
      if (auto err = check_requirement(r); !err.empty())
        return bad_request("selector", std::move(err));
      // NewRequirement keeps values unsorted; matching does not care.
      out.requirements.push_back(std::move(r));
    }
  sort_by_key(out.requirements);
  return out;
}

std::string to_string(const label_selector& selector) {
  std::string out;
  for (const auto& r : selector.requirements) {
    if (!out.empty())
      out += ',';
    if (r.op == label_op::does_not_exist)
      out += '!';
    out += r.key;
    std::string_view op;
    switch (r.op) {
    case label_op::exists:
    case label_op::does_not_exist:
      continue;
    case label_op::equals:
      op = "=";
      break;
    case label_op::not_equals:
      op = "!=";
      break;
    case label_op::in:
      op = " in ";
      break;
    case label_op::not_in:
      op = " notin ";
      break;
    case label_op::greater_than:
      op = ">";
      break;
    case label_op::less_than:
      op = "<";
      break;
    }
    out += op;
    const bool set = r.op == label_op::in || r.op == label_op::not_in;
    auto values = r.values;
    std::sort(values.begin(), values.end());
    if (set)
      out += '(';
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i > 0)
        out += ',';
      out += values[i];
    }
    if (set)
      out += ')';
  }
  return out;
}

std::string field_value(const json& object, std::string_view path) {
  const json* node = &object;
  size_t start = 0;
  while (true) {
    auto dot = path.find('.', start);
    auto part = path.substr(start, dot == std::string_view::npos
                                       ? std::string_view::npos
                                       : dot - start);
    if (!node->is_object())
      return {};
    auto it = node->find(std::string{part});
    if (it == node->end())
      return {};
    node = &*it;
    if (dot == std::string_view::npos)
      break;
    start = dot + 1;
  }
  if (node->is_string())
    return node->get<std::string>();
  if (node->is_null())
    return {};
  if (node->is_boolean())
    return node->get<bool>() ? "true" : "false";
  return node->dump();
}

bool field_selector::matches(const json& object) const {
  return std::all_of(terms.begin(), terms.end(), [&](const auto& term) {
    return (field_value(object, term.field) == term.value) != term.negated;
  });
}

caf::expected<field_selector>
parse_field_selector(std::string_view text,
                     const std::vector<std::string>& supported_fields,
                     field_label_style style) {
  auto parts = split_terms(text);
  std::sort(parts.begin(), parts.end());
  field_selector out;
  for (const auto& part : parts) {
    if (part.empty())
      continue;
    // The first operator found, trying "!=", "==", "=" at each position.
    size_t at = std::string::npos;
    std::string_view op;
    for (size_t i = 0; i < part.size() && at == std::string::npos; ++i)
      for (std::string_view candidate : {"!=", "==", "="})
        if (part.compare(i, candidate.size(), candidate) == 0) {
          at = i;
          op = candidate;
          break;
        }
    if (at == std::string::npos)
      return bad_request("fieldSelector",
                         "invalid selector: '" + std::string{text}
                             + "'; can't understand '" + part + "'");
    field_requirement term;
    term.field = part.substr(0, at);
    term.negated = op == "!=";
    if (auto err = unescape_value(std::string_view{part}.substr(at + op.size()),
                                  term.value);
        !err.empty())
      return bad_request("fieldSelector", std::move(err));
    out.terms.push_back(std::move(term));
  }
  // Then each term goes through the type's field label conversion.
  for (const auto& term : out.terms) {
    if (std::find(supported_fields.begin(), supported_fields.end(), term.field)
        != supported_fields.end())
      continue;
    if (style == field_label_style::default_conversion)
      return bad_request("fieldSelector",
                         go_quote(term.field)
                             + " is not a known field selector: only "
                               "\"metadata.name\", \"metadata.namespace\"");
    return bad_request("fieldSelector",
                       "field label not supported: " + term.field);
  }
  return out;
}

} // namespace aiperf::k8s
