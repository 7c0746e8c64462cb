// The timing_manager service: phases, strategy, credits, sticky routing.
// Protocol: proto/timing_manager.hpp. The schedule math (gaps, catch-up,
// user-centric staggering) lives in actors/benchmark/timing/; this actor
// only maps its config there and turns due times into credits.
#pragma once

#include "actors/benchmark/timing/errc.hpp"
#include "actors/benchmark/timing/intervals.hpp"
#include "actors/benchmark/timing/user_centric.hpp"
#include "proto/timing_manager.hpp"

#include <caf/fwd.hpp>

namespace aiperf::timing_manager {

/// The gap options request-rate mode draws from (rate, arrival pattern,
/// smoothness, seed). Each phase starts a fresh generator from these, so a
/// test (or a replay) gets the exact due times with
/// timing::interval_generator{interval_options_of(cfg)}.
[[nodiscard]] timing::interval_options
interval_options_of(const proto::timing_config& cfg);

/// The user-centric options of `cfg`: num_users, user_centric_rate, and the
/// session length as the rounded mean of the sessions' turn counts.
[[nodiscard]] timing::user_centric_options
user_centric_options_of(const proto::timing_config& cfg);

/// Returns a timing::errc error naming the setting and the fix when `cfg`
/// cannot be scheduled. The actor runs this on `configure`.
[[nodiscard]] caf::expected<void> validate(const proto::timing_config& cfg);

/// Spawns a timing_manager. Time comes only from the actor clock
/// (`self->clock()`), so CAF's test coordinator drives it in tests; the
/// production clock is steady_clock, i.e. the CLOCK_MONOTONIC that workers
/// stamp requests with.
proto::timing_manager_actor spawn_timing_manager(caf::actor_system& sys);

} // namespace aiperf::timing_manager
