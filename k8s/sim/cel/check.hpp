// The checker's view of types (k8s/sim/cel internals).
#pragma once

#include "k8s/sim/cel/ast.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace aiperf::k8s::cel {

enum class static_kind : std::uint8_t {
  dyn,
  null_value,
  boolean,
  integer,
  uint,
  number,
  string,
  bytes,
  list,
  map,
  object,
  type,
  optional,
  error, // already reported
};

struct static_type {
  static_kind kind = static_kind::dyn;
  /// The schema node behind a list, map or object (or an optional's value);
  /// null for literals and dyn.
  const decl_type* decl = nullptr;
};

/// cel-go's spelling of a type in messages: int, double, list(string), ...
std::string type_name(const static_type& t);

struct check_result {
  static_type type;
  bool uses_old_self = false;
};

/// Type-checks `root` with `self` of `self_type`; problems go to `problems`.
check_result check(const node& root, const decl_ptr& self_type,
                   const compile_options& options,
                   std::vector<problem>& problems);

} // namespace aiperf::k8s::cel
