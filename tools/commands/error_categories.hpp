// Every component's error enum, registered with an actor system, so that
// CAF's own rendering (logs, system.render) names each code
// ("k8s.conflict: ..."). Every command calls it before it builds its
// actor system.
#pragma once

#include <caf/actor_system_config.hpp>

namespace aiperf::commands {

void add_error_categories(caf::actor_system_config& cfg);

} // namespace aiperf::commands
