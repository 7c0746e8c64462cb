// Leader election on a coordination.k8s.io/v1 Lease, as client-go's
// leaderelection package runs it, so that two operator replicas never both
// write: only the leader runs the reconciler and serves results.
//
// The Lease (`aiperf-operator-leader` in the operator's namespace) holds
// holderIdentity (the pod name), leaseDurationSeconds, acquireTime,
// renewTime (MicroTime) and leaseTransitions.
//   - The leader renews with one optimistic PUT per retry period on the
//     resourceVersion it last wrote (no GET). A failed PUT falls back to a
//     GET and a fenced PUT (client-go's slow path).
//   - A standby GETs the Lease every retry period × U[1, 2.2). It takes the
//     Lease over only once the record it observed has not changed for
//     leaseDurationSeconds of its own clock (clocks of different machines are
//     never compared), or at once when holderIdentity is empty (released).
//     Each takeover PUT carries the read resourceVersion, so of two standbys
//     one wins and the other gets 409.
//   - A leader that has not renewed for `renew_deadline` (shorter than the
//     lease) steps down: it tells its listener before the lease can expire
//     for the others, and the listener stops every write. Seeing another
//     holder on a valid lease steps it down at once.
//
// Protocol:
//   - to the listener: `(leading_atom, true)` once leadership is won,
//     `(leading_atom, false)` once it is lost; the elector then quits
//     (client-go's Run returns; the operator exits and restarts as a
//     standby). No reply expected.
//   - an elector that dies (killed, or a failure) also sends
//     `(leading_atom, false)`: it renews no more.
//   - `(release_atom)` → bool: a leader writes an empty holderIdentity with a
//     1 s lease (client-go's ReleaseOnCancel) so a standby takes over without
//     waiting the lease out; true if the write succeeded, false if it was not
//     leading or the write failed. The listener is not told; the elector
//     quits after answering.
// API requests time out after the renew deadline; a timeout is a failed
// attempt like any other.
#pragma once

#include "k8s/api/api.hpp"

#include <caf/fwd.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace aiperf::op {

using leading_atom = caf::atom_constant<caf::atom("opleading")>;
using release_atom = caf::atom_constant<caf::atom("oprelease")>;

using leadership_listener = caf::typed_actor<caf::reacts_to<leading_atom, bool>>;

using elector_actor = caf::typed_actor<caf::replies_to<release_atom>::with<bool>>;

struct election_config {
  k8s::api_actor api;
  std::string namespace_name = "aiperf-system";
  std::string lease_name = "aiperf-operator-leader";
  /// holderIdentity: the pod name (downward API), unique per replica.
  std::string identity;
  // client-go's defaults (and controller-runtime's).
  caf::timespan lease_duration = std::chrono::seconds{15};
  caf::timespan renew_deadline = std::chrono::seconds{10};
  caf::timespan retry_period = std::chrono::seconds{2};
  /// Unix nanoseconds the wall clock starts at; 0 = the system clock (as in
  /// reconciler_config, so tests on simulated time write fixed times).
  std::int64_t start_unix_ns = 0;
  /// Seeds the standby's jitter; 0 = random.
  std::uint64_t seed = 0;
  k8s::user_info user = k8s::admin_user();
  leadership_listener listener;
};

/// Spawns the elector; it starts campaigning at once.
[[nodiscard]] elector_actor spawn_leader_elector(caf::actor_system& sys, election_config cfg);

/// The listener that makes leadership matter: on `(leading_atom, true)` it
/// calls `start` (which spawns the reconciler) and links to what it
/// returned (monitored); on `(leading_atom, false)` — the elector stepped
/// down or died — it kills that actor at once, so the reconciler sends no
/// further writes, and then calls `lost`. A reconciler that ends on its own
/// counts as lost too (fail-closed). A gate that is stopped kills the
/// reconciler and does not call `lost`; the elector is independent of it (and
/// can still release the Lease). `start` and `lost` run on the gate's thread.
[[nodiscard]] leadership_listener spawn_leadership_gate(caf::actor_system& sys,
                                                        std::function<caf::actor()> start,
                                                        std::function<void()> lost);

} // namespace aiperf::op
