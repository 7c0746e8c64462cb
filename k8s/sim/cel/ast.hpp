// The parsed form of a CEL expression, shared by the parser, the checker and
// the evaluator of k8s/sim/cel (not part of the library's interface).
#pragma once

#include "k8s/sim/cel/cel.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::k8s::cel {

enum class node_kind : std::uint8_t {
  literal,
  ident,
  select,        // args[0].name
  presence,      // has(args[0].name)
  call,          // name(args...) or args[0].name(args[1...]) when has_target
  list,          // [args...]
  map,           // {args[0]: args[1], ...}
  comprehension, // args[0].name(var, args[1] [, args[2]]): all, exists, ...
};

enum class literal_kind : std::uint8_t {
  null_value,
  boolean,
  integer,
  uint,
  number,
  string,
  bytes
};

struct node {
  node_kind kind = node_kind::literal;
  /// Byte offset of the token upstream reports an error at.
  std::size_t pos = 0;
  /// ident: the name; select/presence: the field; call: the function
  /// ("_&&_", "_==_", "@in", "_[_]", "_?_:_", "size", ...); comprehension:
  /// the macro (all, exists, exists_one, map, filter).
  std::string name;
  std::vector<std::unique_ptr<node>> args;
  bool has_target = false;
  /// comprehension: the iteration variable.
  std::string var;

  literal_kind lit = literal_kind::null_value;
  bool bool_value = false;
  std::int64_t int_value = 0;
  std::uint64_t uint_value = 0;
  double double_value = 0;
  std::string string_value; // string and bytes literals
};

using node_ptr = std::unique_ptr<node>;

struct program {
  std::string source;
  node_ptr root;
};

/// One problem found while parsing or checking.
struct problem {
  std::size_t pos = 0;
  std::string message;
};

/// Parses `source`; problems go to `problems` (the tree is null when any).
node_ptr parse(std::string_view source, std::vector<problem>& problems);

/// cel-go's rendering of `problems` (sorted by position):
/// "ERROR: <input>:1:5: message\n | source line\n | ....^".
std::string display_problems(std::string_view source,
                             std::vector<problem> problems);

} // namespace aiperf::k8s::cel
