// The two kube-controller-manager loops the simulated cluster needs for the
// API semantics clients rely on, written against `k8s::api_actor` alone
// (list + watch + writes), so they run over the store actor in process or
// over the product client against any API server:
//
// - the garbage collector (kubernetes pkg/controller/garbagecollector):
//   a dependent whose ownerReferences name only owners that are gone is
//   deleted (Background; Foreground/Orphan when it carries that finalizer);
//   references to gone owners are dropped while a live owner remains; an
//   owner deleted with propagationPolicy Orphan (finalizer `orphan`) gets
//   its dependents' references to it removed, then the finalizer; an owner
//   deleted with Foreground (finalizer `foregroundDeletion`) gets its
//   dependents deleted, and loses the finalizer once no dependent with
//   `blockOwnerDeletion: true` remains. An owner missing from the cache is
//   confirmed gone with a GET (uid compared) before anything is deleted.
//   A namespaced dependent's owner is looked up in its own namespace (an
//   owner elsewhere counts as absent); a cluster-scoped dependent with a
//   namespaced owner kind is left alone, as upstream does.
// - the namespace controller (pkg/controller/namespace/deletion): a
//   namespace with a deletionTimestamp and the `kubernetes` finalizer has
//   every namespaced object deleted (Background), is retried every second
//   while some remain (finalizers), then loses the `kubernetes` finalizer
//   through `/finalize`, which lets the API server remove it.
//
// Both list every served type (built-ins, and each Established CRD's
// storage version as CRDs come and go) and watch from the list's
// resourceVersion; a watch that ends is relisted after a second. Time comes
// only from the actor clock (retries are delayed messages), so under the
// test coordinator every step follows simulated time.
#pragma once

#include "k8s/api/api.hpp"

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <string>

namespace aiperf::k8s::sim {

using relist_atom = caf::atom_constant<caf::atom("k8sc_rlst")>;
using purge_atom = caf::atom_constant<caf::atom("k8sc_purge")>;

/// The garbage collector. It is the sink of its own watches (see
/// k8s::watch_sink_actor); `(relist_atom, std::string type)` is its own
/// retry timer (a type is "group/version/resource"). Nothing is asked of it
/// and it replies nothing; it stops when its actor is killed.
using garbage_collector_actor
    = watch_sink_actor::extend<caf::reacts_to<relist_atom, std::string>>;

/// The namespace controller: a watch sink for namespaces, with
/// `(relist_atom, std::string)` and `(purge_atom, std::string namespace)`
/// as its own timers. No requests, no replies.
using namespace_controller_actor
    = watch_sink_actor::extend<caf::reacts_to<relist_atom, std::string>,
                               caf::reacts_to<purge_atom, std::string>>;

/// Starts the garbage collector over `api`: it lists and watches at once.
[[nodiscard]] garbage_collector_actor
spawn_garbage_collector(caf::actor_system& sys, api_actor api);

/// Starts the namespace controller over `api`.
[[nodiscard]] namespace_controller_actor
spawn_namespace_controller(caf::actor_system& sys, api_actor api);

} // namespace aiperf::k8s::sim
