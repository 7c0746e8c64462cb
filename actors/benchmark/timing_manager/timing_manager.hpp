// The timing_manager service: phases, strategy, credits, sticky routing.
// Protocol: proto/timing_manager.hpp.
#pragma once

#include "proto/timing_manager.hpp"

#include <caf/fwd.hpp>

#include <cstdint>
#include <functional>

namespace aiperf::timing_manager {

/// Gaps between first turns in request-rate mode, in ns. Pure and seeded,
/// so a test can replace it; the default draws from the configured arrival
/// pattern.
using gap_source = std::function<std::int64_t()>;

/// Returns the gap source for `cfg` (constant, poisson or gamma, seeded with
/// cfg.random_seed).
[[nodiscard]] gap_source make_gap_source(const proto::timing_config& cfg);

/// Spawns a timing_manager. Time comes only from the actor clock
/// (`self->clock()`), so CAF's test coordinator drives it in tests; the
/// production clock is steady_clock, i.e. the CLOCK_MONOTONIC that workers
/// stamp requests with.
proto::timing_manager_actor spawn_timing_manager(caf::actor_system& sys);

} // namespace aiperf::timing_manager
