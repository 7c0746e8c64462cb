// The type check cel-go runs when kube-apiserver compiles a CRD's rules:
// identifiers must be declared, a selected field must be declared by the
// schema (`undefined field 'x'`), operators and functions must have an
// overload for the argument types it can see. Types it cannot see (dyn:
// int-or-string values, macro variables over dyn lists) pass, as in cel-go.
#include "k8s/sim/cel/check.hpp"

#include "k8s/sim/cel/ast.hpp"

#include <set>
#include <string>
#include <utility>

namespace aiperf::k8s::cel {
namespace {

using sk = static_kind;

static_type of_decl(const decl_type* d) {
  if (!d)
    return {sk::dyn, nullptr};
  switch (d->k) {
  case decl_type::kind::dyn:
    return {sk::dyn, d};
  case decl_type::kind::boolean:
    return {sk::boolean, d};
  case decl_type::kind::integer:
    return {sk::integer, d};
  case decl_type::kind::number:
    return {sk::number, d};
  case decl_type::kind::string:
    return {sk::string, d};
  case decl_type::kind::list:
    return {sk::list, d};
  case decl_type::kind::map:
    return {sk::map, d};
  case decl_type::kind::object:
    return {sk::object, d};
  }
  return {sk::dyn, nullptr};
}

bool concrete_scalar(sk k) {
  return k == sk::boolean || k == sk::integer || k == sk::uint
         || k == sk::number || k == sk::string || k == sk::bytes;
}

bool numeric(sk k) {
  return k == sk::integer || k == sk::uint || k == sk::number;
}

const std::set<std::string, std::less<>> global_functions
    = {"size", "int",   "uint", "double", "string",
       "bool", "bytes", "dyn",  "type",   "matches"};

const std::set<std::string, std::less<>> member_functions
    = {"size",       "startsWith",  "endsWith", "contains",  "matches",
       "lowerAscii", "upperAscii",  "trim",     "split",     "join",
       "indexOf",    "lastIndexOf", "replace",  "substring", "charAt",
       "isSorted",   "sum",         "min",      "max",       "hasValue",
       "value",      "orValue",     "or",       "reverse"};

const std::set<std::string, std::less<>> type_names
    = {"int",   "uint", "double", "bool",      "string",
       "bytes", "list", "map",    "null_type", "type"};

struct checker {
  std::vector<problem>& problems;
  const compile_options& options;
  static_type self;
  std::vector<std::pair<std::string, static_type>> vars;
  bool uses_old_self = false;

  void fail(std::size_t pos, std::string message) {
    problems.push_back({pos, std::move(message)});
  }

  void no_overload(const node& n, const std::vector<static_type>& args) {
    std::string list;
    for (const auto& a : args) {
      if (!list.empty())
        list += ", ";
      list += type_name(a);
    }
    fail(n.pos, "found no matching overload for '" + n.name + "' applied to '("
                    + list + ")'");
  }

  static_type element_of(const static_type& t) {
    if ((t.kind == sk::list || t.kind == sk::map) && t.decl)
      return of_decl(t.decl->element.get());
    return {sk::dyn, nullptr};
  }

  static_type select(const node& n, const static_type& operand) {
    switch (operand.kind) {
    case sk::object: {
      if (!operand.decl)
        return {sk::dyn, nullptr};
      if (const decl_type* f = operand.decl->field(n.name))
        return of_decl(f);
      fail(n.pos, "undefined field '" + n.name + "'");
      return {sk::error, nullptr};
    }
    case sk::map:
      return element_of(operand);
    case sk::dyn:
    case sk::error:
    case sk::optional:
      return {sk::dyn, nullptr};
    default:
      fail(n.pos, "type '" + type_name(operand)
                      + "' does not support field selection");
      return {sk::error, nullptr};
    }
  }

  static_type check(const node& n) {
    switch (n.kind) {
    case node_kind::literal:
      switch (n.lit) {
      case literal_kind::null_value:
        return {sk::null_value, nullptr};
      case literal_kind::boolean:
        return {sk::boolean, nullptr};
      case literal_kind::integer:
        return {sk::integer, nullptr};
      case literal_kind::uint:
        return {sk::uint, nullptr};
      case literal_kind::number:
        return {sk::number, nullptr};
      case literal_kind::string:
        return {sk::string, nullptr};
      case literal_kind::bytes:
        return {sk::bytes, nullptr};
      }
      return {sk::dyn, nullptr};
    case node_kind::ident: {
      for (auto it = vars.rbegin(); it != vars.rend(); ++it)
        if (it->first == n.name)
          return it->second;
      if (n.name == "self")
        return self;
      if (n.name == "oldSelf" && options.declare_old_self) {
        uses_old_self = true;
        if (options.optional_old_self)
          return {sk::optional, self.decl};
        return self;
      }
      if (type_names.count(n.name))
        return {sk::type, nullptr};
      fail(n.pos, "undeclared reference to '" + n.name + "' (in container '')");
      return {sk::error, nullptr};
    }
    case node_kind::select:
      return select(n, check(*n.args[0]));
    case node_kind::presence: {
      auto operand = check(*n.args[0]);
      if (operand.kind == sk::object && operand.decl
          && !operand.decl->field(n.name)) {
        fail(n.pos, "undefined field '" + n.name + "'");
        return {sk::error, nullptr};
      }
      if (concrete_scalar(operand.kind) || operand.kind == sk::list) {
        fail(n.pos, "invalid argument to has() macro");
        return {sk::error, nullptr};
      }
      return {sk::boolean, nullptr};
    }
    case node_kind::list:
      for (const auto& a : n.args)
        check(*a);
      return {sk::list, nullptr};
    case node_kind::map:
      for (const auto& a : n.args)
        check(*a);
      return {sk::map, nullptr};
    case node_kind::comprehension: {
      auto range = check(*n.args[0]);
      static_type elem{sk::dyn, nullptr};
      if (range.kind == sk::list) {
        elem = element_of(range);
      } else if (range.kind == sk::map) {
        elem = {sk::string, nullptr};
      } else if (range.kind == sk::object) {
        elem = {sk::string, nullptr};
      } else if (range.kind != sk::dyn && range.kind != sk::error) {
        fail(n.pos, "expression of type '" + type_name(range)
                        + "' cannot be range of a comprehension (must be list, "
                          "map, or dynamic)");
      }
      vars.emplace_back(n.var, elem);
      for (std::size_t k = 1; k < n.args.size(); ++k) {
        auto t = check(*n.args[k]);
        bool is_predicate = n.name != "map" || (n.args.size() == 3 && k == 1);
        if (is_predicate && t.kind != sk::boolean && t.kind != sk::dyn
            && t.kind != sk::error)
          fail(n.args[k]->pos,
               "found no matching overload for '_&&_' applied to '(bool, "
                   + type_name(t) + ")'");
      }
      vars.pop_back();
      if (n.name == "map" || n.name == "filter")
        return n.name == "filter" ? range : static_type{sk::list, nullptr};
      return {sk::boolean, nullptr};
    }
    case node_kind::call:
      return check_call(n);
    }
    return {sk::dyn, nullptr};
  }

  static_type check_call(const node& n) {
    // optional.of(x) / optional.none(): `optional` is a namespace, not a value.
    if (n.has_target && n.args[0]->kind == node_kind::ident
        && n.args[0]->name == "optional") {
      for (std::size_t k = 1; k < n.args.size(); ++k)
        check(*n.args[k]);
      if (n.name == "of" || n.name == "none" || n.name == "ofNonZeroValue")
        return {sk::optional, nullptr};
      fail(n.pos, "undeclared reference to 'optional." + n.name
                      + "' (in container '')");
      return {sk::error, nullptr};
    }
    std::vector<static_type> args;
    for (const auto& a : n.args)
      args.push_back(check(*a));
    for (const auto& a : args)
      if (a.kind == sk::error)
        return {sk::dyn, nullptr};
    const std::string& fn = n.name;
    auto known = [](const static_type& t) { return t.kind != sk::dyn; };
    if (fn == "_&&_" || fn == "_||_" || fn == "!_") {
      for (const auto& a : args)
        if (known(a) && a.kind != sk::boolean) {
          no_overload(n, args);
          return {sk::error, nullptr};
        }
      return {sk::boolean, nullptr};
    }
    if (fn == "_==_" || fn == "_!=_") {
      if (concrete_scalar(args[0].kind) && concrete_scalar(args[1].kind)
          && args[0].kind != args[1].kind) {
        no_overload(n, args);
        return {sk::error, nullptr};
      }
      return {sk::boolean, nullptr};
    }
    if (fn == "_<_" || fn == "_<=_" || fn == "_>_" || fn == "_>=_") {
      bool ok
          = !known(args[0]) || !known(args[1])
            || (numeric(args[0].kind) && numeric(args[1].kind))
            || (args[0].kind == args[1].kind && concrete_scalar(args[0].kind));
      if (!ok) {
        no_overload(n, args);
        return {sk::error, nullptr};
      }
      return {sk::boolean, nullptr};
    }
    if (fn == "_+_" || fn == "_-_" || fn == "_*_" || fn == "_/_"
        || fn == "_%_") {
      if (known(args[0]) && known(args[1])) {
        bool same = args[0].kind == args[1].kind;
        bool ok = same
                  && (numeric(args[0].kind)
                      || (fn == "_+_"
                          && (args[0].kind == sk::string
                              || args[0].kind == sk::bytes
                              || args[0].kind == sk::list)));
        if (fn == "_%_" && args[0].kind == sk::number)
          ok = false;
        if (!ok) {
          no_overload(n, args);
          return {sk::error, nullptr};
        }
        return args[0].kind == sk::list ? static_type{sk::list, nullptr}
                                        : args[0];
      }
      return known(args[0]) ? args[0] : args[1];
    }
    if (fn == "-_") {
      if (known(args[0]) && args[0].kind != sk::integer
          && args[0].kind != sk::number) {
        no_overload(n, args);
        return {sk::error, nullptr};
      }
      return args[0];
    }
    if (fn == "@in") {
      if (known(args[1]) && args[1].kind != sk::list
          && args[1].kind != sk::map) {
        no_overload(n, args);
        return {sk::error, nullptr};
      }
      return {sk::boolean, nullptr};
    }
    if (fn == "_[_]") {
      if (args[0].kind == sk::list) {
        if (known(args[1]) && !numeric(args[1].kind)) {
          no_overload(n, args);
          return {sk::error, nullptr};
        }
        return element_of(args[0]);
      }
      if (args[0].kind == sk::map)
        return element_of(args[0]);
      if (args[0].kind == sk::object) {
        fail(n.pos, "found no matching overload for '_[_]' applied to '("
                        + type_name(args[0]) + ", " + type_name(args[1])
                        + ")'");
        return {sk::error, nullptr};
      }
      if (known(args[0])) {
        no_overload(n, args);
        return {sk::error, nullptr};
      }
      return {sk::dyn, nullptr};
    }
    if (fn == "_?_:_") {
      if (known(args[0]) && args[0].kind != sk::boolean) {
        no_overload(n, args);
        return {sk::error, nullptr};
      }
      return args[1].kind == args[2].kind ? args[1]
                                          : static_type{sk::dyn, nullptr};
    }
    if (n.has_target) {
      if (!member_functions.count(fn)) {
        fail(n.pos, "undeclared reference to '" + fn + "' (in container '')");
        return {sk::error, nullptr};
      }
      return member_result(n, args);
    }
    if (!global_functions.count(fn)) {
      fail(n.pos, "undeclared reference to '" + fn + "' (in container '')");
      return {sk::error, nullptr};
    }
    if (args.size() != 1 && fn != "matches") {
      no_overload(n, args);
      return {sk::error, nullptr};
    }
    if (fn == "size") {
      sk k = args[0].kind;
      if (known(args[0]) && k != sk::string && k != sk::bytes && k != sk::list
          && k != sk::map && k != sk::object) {
        no_overload(n, args);
        return {sk::error, nullptr};
      }
      return {sk::integer, nullptr};
    }
    if (fn == "int")
      return {sk::integer, nullptr};
    if (fn == "uint")
      return {sk::uint, nullptr};
    if (fn == "double")
      return {sk::number, nullptr};
    if (fn == "string")
      return {sk::string, nullptr};
    if (fn == "bool")
      return {sk::boolean, nullptr};
    if (fn == "bytes")
      return {sk::bytes, nullptr};
    if (fn == "type")
      return {sk::type, nullptr};
    if (fn == "matches")
      return {sk::boolean, nullptr};
    return args[0]; // dyn(x)
  }

  static_type member_result(const node& n,
                            const std::vector<static_type>& args) {
    const std::string& fn = n.name;
    const static_type& target = args[0];
    auto want_target = [&](std::initializer_list<sk> kinds) {
      if (target.kind == sk::dyn)
        return true;
      for (sk k : kinds)
        if (target.kind == k)
          return true;
      no_overload_member(n, args);
      return false;
    };
    if (fn == "size") {
      if (!want_target({sk::string, sk::bytes, sk::list, sk::map, sk::object}))
        return {sk::error, nullptr};
      return {sk::integer, nullptr};
    }
    if (fn == "startsWith" || fn == "endsWith" || fn == "contains"
        || fn == "matches") {
      if (!want_target({sk::string}))
        return {sk::error, nullptr};
      if (args.size() != 2
          || (args[1].kind != sk::string && args[1].kind != sk::dyn)) {
        no_overload_member(n, args);
        return {sk::error, nullptr};
      }
      return {sk::boolean, nullptr};
    }
    if (fn == "lowerAscii" || fn == "upperAscii" || fn == "trim"
        || fn == "replace" || fn == "substring" || fn == "charAt") {
      if (!want_target({sk::string}))
        return {sk::error, nullptr};
      return {sk::string, nullptr};
    }
    if (fn == "split")
      return want_target({sk::string}) ? static_type{sk::list, nullptr}
                                       : static_type{sk::error, nullptr};
    if (fn == "indexOf" || fn == "lastIndexOf")
      return want_target({sk::string, sk::list})
                 ? static_type{sk::integer, nullptr}
                 : static_type{sk::error, nullptr};
    if (fn == "join")
      return want_target({sk::list}) ? static_type{sk::string, nullptr}
                                     : static_type{sk::error, nullptr};
    if (fn == "isSorted")
      return want_target({sk::list}) ? static_type{sk::boolean, nullptr}
                                     : static_type{sk::error, nullptr};
    if (fn == "sum" || fn == "min" || fn == "max")
      return want_target({sk::list}) ? element_of(target)
                                     : static_type{sk::error, nullptr};
    if (fn == "reverse")
      return want_target({sk::string, sk::list})
                 ? target
                 : static_type{sk::error, nullptr};
    if (fn == "hasValue")
      return want_target({sk::optional}) ? static_type{sk::boolean, nullptr}
                                         : static_type{sk::error, nullptr};
    if (fn == "value" || fn == "orValue")
      return want_target({sk::optional}) ? of_decl(target.decl)
                                         : static_type{sk::error, nullptr};
    if (fn == "or")
      return want_target({sk::optional}) ? target
                                         : static_type{sk::error, nullptr};
    return {sk::dyn, nullptr};
  }

  void no_overload_member(const node& n, const std::vector<static_type>& args) {
    std::string list;
    for (std::size_t k = 1; k < args.size(); ++k) {
      if (!list.empty())
        list += ", ";
      list += type_name(args[k]);
    }
    fail(n.pos, "found no matching overload for '" + n.name + "' applied to '"
                    + type_name(args[0]) + ".(" + list + ")'");
  }
};

} // namespace

std::string type_name(const static_type& t) {
  switch (t.kind) {
  case sk::dyn:
    return "dyn";
  case sk::null_value:
    return "null_type";
  case sk::boolean:
    return "bool";
  case sk::integer:
    return "int";
  case sk::uint:
    return "uint";
  case sk::number:
    return "double";
  case sk::string:
    return "string";
  case sk::bytes:
    return "bytes";
  case sk::list: {
    if (t.decl && t.decl->element)
      return "list(" + type_name(of_decl(t.decl->element.get())) + ")";
    return "list(dyn)";
  }
  case sk::map: {
    if (t.decl && t.decl->element)
      return "map(string, " + type_name(of_decl(t.decl->element.get())) + ")";
    return "map(dyn, dyn)";
  }
  case sk::object:
    return "object";
  case sk::type:
    return "type";
  case sk::optional:
    return "optional_type";
  case sk::error:
    return "*error*";
  }
  return "dyn";
}

check_result check(const node& root, const decl_ptr& self_type,
                   const compile_options& options,
                   std::vector<problem>& problems) {
  checker c{problems, options, of_decl(self_type.get()), {}, false};
  auto t = c.check(root);
  return {t, c.uses_old_self};
}

} // namespace aiperf::k8s::cel
