// Atoms shared by every actor interface. Atoms are types in CAF 0.17
// (`atom_constant`, at most 10 characters) and need no registration.
#pragma once

#include <caf/atom.hpp>

namespace aiperf::proto {

/// Asks a service to stop what it is doing and quit normally.
using stop_atom = caf::atom_constant<caf::atom("stop")>;
/// A child actor of a supervisor terminated (reaping mode report).
using reaped_atom = caf::atom_constant<caf::atom("reaped")>;
/// Completion of work that ran on a foreign (I/O) thread.
using done_atom = caf::atom_constant<caf::atom("done")>;
/// A timer tick an actor sends itself.
using tick_atom = caf::atom_constant<caf::atom("tick")>;

} // namespace aiperf::proto
