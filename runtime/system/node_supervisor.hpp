// The per-process supervisor that links every service actor.
#pragma once

#include "proto/atoms.hpp"

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <caf/replies_to.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <string>
#include <vector>

namespace aiperf::system {

using adopt_atom = caf::atom_constant<caf::atom("adopt")>;

/// What an abnormal child exit does to the node. Only the verdict differs
/// between modes; the diagnostics (log line, report) are the same.
enum class supervision_mode {
  /// Any abnormal child exit stops the node with that error (pods: the Job
  /// fails and the operator sees it).
  fail_closed,
  /// The child is logged, reported to the reaper and forgotten; the node
  /// goes on (local runs: a dead worker's requests become error records).
  reaping,
};

/// Receives reaping-mode reports: `(proto::reaped_atom, name, reason)`.
using reaper_actor = caf::typed_actor<
  caf::reacts_to<proto::reaped_atom, std::string, caf::error>>;

/// Node supervisor protocol:
/// - `(adopt_atom, caf::actor child, std::string name)` from main or a
///   service: links `child` (a death pact both ways) and remembers its name.
///   No reply. A child that already exited is handled like any exit.
/// - `(caf::get_atom)`: replies with the names of the live children.
/// - `(proto::stop_atom)`: shuts every child down (`user_shutdown`) and quits
///   normally. Sent by main on SIGINT/SIGTERM or when the run is over.
/// Child exits: normal → forgotten. Abnormal → logged; in `fail_closed`
/// mode the supervisor quits with the child's own error (links take the
/// other children down, and main turns the error into a non-zero exit
/// code); in `reaping` mode the reaper (if any) receives
/// `(proto::reaped_atom, std::string name, caf::error reason)`.
/// An exit from anyone else (the supervisor's own parent) is a shutdown
/// request carrying that reason.
using node_supervisor_actor = caf::typed_actor<
  caf::reacts_to<adopt_atom, caf::actor, std::string>,
  caf::replies_to<caf::get_atom>::with<std::vector<std::string>>,
  caf::reacts_to<proto::stop_atom>>;

struct node_supervisor_child {
  caf::actor handle;
  std::string name;
};

struct node_supervisor_state {
  static inline const char* name = "node_supervisor";
  std::vector<node_supervisor_child> children;
  std::size_t reaped = 0;
};

/// Spawn with `sys.spawn(node_supervisor, mode, reaper)`; `reaper` may be
/// a null handle.
node_supervisor_actor::behavior_type node_supervisor(
  node_supervisor_actor::stateful_pointer<node_supervisor_state> self,
  supervision_mode mode, reaper_actor reaper);

/// Maps the supervisor's exit reason to a process exit code: 0 for a normal
/// exit or a requested shutdown, 1 for any error.
[[nodiscard]] int exit_code_for(const caf::error& reason);

} // namespace aiperf::system
