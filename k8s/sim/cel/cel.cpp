#include "k8s/sim/cel/cel.hpp"

#include "k8s/errors/errors.hpp"
#include "k8s/sim/cel/ast.hpp"
#include "k8s/sim/cel/check.hpp"

#include <set>
#include <string>

namespace aiperf::k8s::cel {

namespace {

// kubernetes/apiserver pkg/cel/escaping.go: names CEL reserves.
const std::set<std::string, std::less<>> reserved = {
    "true",     "false",   "null",      "in",       "as",  "break",  "const",
    "continue", "else",    "for",       "function", "if",  "import", "let",
    "loop",     "package", "namespace", "return",   "var", "void",   "while"};

bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9') || c == '_';
}

} // namespace

const decl_type* decl_type::field(std::string_view name) const {
  for (const auto& [n, t] : fields)
    if (n == name)
      return t.get();
  // Since Kubernetes 1.31 a property named like a CEL keyword is selected
  // by its own name too: self.namespace is self.__namespace__
  // (apiserver pkg/cel/types.go, recognizeKeywordAsFieldName).
  if (reserved.count(name)) {
    std::string escaped = "__" + std::string{name} + "__";
    for (const auto& [n, t] : fields)
      if (n == escaped)
        return t.get();
  }
  return nullptr;
}

decl_ptr dyn_type() {
  static const auto dyn = std::make_shared<const decl_type>();
  return dyn;
}

std::string escape_property_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9'))
    return {};
  if (reserved.count(name))
    return "__" + std::string{name} + "__";
  std::string out;
  for (std::size_t k = 0; k < name.size(); ++k) {
    char c = name[k];
    if (c == '_' && k + 1 < name.size() && name[k + 1] == '_') {
      out += "__underscores__";
      ++k;
    } else if (c == '.') {
      out += "__dot__";
    } else if (c == '-') {
      out += "__dash__";
    } else if (c == '/') {
      out += "__slash__";
    } else if (ident_char(c)) {
      out += c;
    } else {
      return {};
    }
  }
  return out;
}

std::string unescape_property_name(std::string_view name) {
  if (name.size() > 4 && name.substr(0, 2) == "__"
      && name.substr(name.size() - 2) == "__") {
    auto inner = name.substr(2, name.size() - 4);
    if (reserved.count(inner))
      return std::string{inner};
  }
  std::string out;
  for (std::size_t k = 0; k < name.size();) {
    auto rest = name.substr(k);
    if (rest.substr(0, 15) == "__underscores__") {
      out += "__";
      k += 15;
    } else if (rest.substr(0, 7) == "__dot__") {
      out += '.';
      k += 7;
    } else if (rest.substr(0, 8) == "__dash__") {
      out += '-';
      k += 8;
    } else if (rest.substr(0, 9) == "__slash__") {
      out += '/';
      k += 9;
    } else {
      out += name[k++];
    }
  }
  return out;
}

caf::expected<compiled_expression> compile(std::string_view source,
                                           const decl_ptr& self_type,
                                           compile_options options) {
  std::vector<problem> problems;
  auto root = parse(source, problems);
  if (!problems.empty() || !root)
    return aiperf::make_error(errc::invalid,
                              display_problems(source, std::move(problems)));
  auto checked
      = check(*root, self_type ? self_type : dyn_type(), options, problems);
  if (!problems.empty())
    return aiperf::make_error(errc::invalid,
                              display_problems(source, std::move(problems)));
  auto code = std::make_shared<program>();
  code->source = std::string{source};
  code->root = std::move(root);
  compiled_expression out;
  out.code = std::move(code);
  out.uses_old_self = checked.uses_old_self;
  out.result_type = type_name(checked.type);
  if (checked.type.kind == static_kind::list
      || checked.type.kind == static_kind::map)
    out.result_type = checked.type.kind == static_kind::list ? "list" : "map";
  return out;
}

} // namespace aiperf::k8s::cel
