// A generic informer: a local, eventually consistent copy of one resource
// (list + watch), and the work queue of the controller that owns it. The
// design is client-go's (tools/cache/reflector.go, util/workqueue) over any
// k8s::api_actor — the product client over HTTPS or the simulator's store
// in process:
//
//   - list: pages of `limit` (500), the first with resourceVersion "0"
//     (any cached state will do); after a 410 Expired, resourceVersion ""
//     (the latest, quorum); the cache is replaced, and every key that
//     changed, appeared or vanished is queued;
//   - watch from the list's resourceVersion with allowWatchBookmarks and
//     timeoutSeconds random in [300, 600]; every event (bookmarks too)
//     advances the last seen resourceVersion; the stream's end resumes
//     from it at once, a broken connection or a refused watch after a
//     capped, jittered back-off; a 410 (an ERROR event or the watch
//     refused) relists;
//   - resync: every resync_period all cached keys are queued again, from
//     the cache, with no API call.
//
// Time comes only from the actor clock, so every back-off, timeout and
// resync follows simulated time under the test coordinator.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/informer/work_queue.hpp"

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/timespan.hpp>
#include <caf/typed_actor.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aiperf::k8s::informer {

using reconcile_atom = caf::atom_constant<caf::atom("k8si_recon")>;
using done_atom = caf::atom_constant<caf::atom("k8si_done")>;
using enqueue_atom = caf::atom_constant<caf::atom("k8si_enq")>;
using cache_get_atom = caf::atom_constant<caf::atom("k8si_get")>;
using cache_list_atom = caf::atom_constant<caf::atom("k8si_list")>;
using synced_atom = caf::atom_constant<caf::atom("k8si_sync")>;

/// The controller that owns an informer.
/// - `(reconcile_atom, std::string key)`: process `key` ("namespace/name",
///   or "name" for a cluster-scoped resource), then send done for it. A key
///   is never handed out again before its done; read the object with
///   cache_get (not found = it was deleted). No reply.
using owner_actor
    = caf::typed_actor<caf::reacts_to<reconcile_atom, std::string>>;

/// An informer, as its owner sees it.
/// - `(done_atom, key, caf::timespan requeue_after, bool failed)`: the
///   processing of `key` is over. failed: queue it again after its
///   exponential back-off (5 ms doubling to 1000 s); otherwise its back-off
///   is reset and, with requeue_after > 0, it is queued again after that.
///   No reply.
/// - `(enqueue_atom, key)`: queue a key (e.g. the owner of a changed
///   child object). No reply.
/// - `(cache_get_atom, key)` -> the cached object's JSON text; error
///   k8s::errc::not_found (Status NotFound) when the cache has none.
/// - `(cache_list_atom)` -> every cached object's JSON text, by key.
/// - `(synced_atom)` -> whether the first list has completed.
/// Requests are answered at once from the actor's state; a timeout means
/// the informer is gone.
using informer_actor = caf::typed_actor<
    caf::reacts_to<done_atom, std::string, caf::timespan, bool>,
    caf::reacts_to<enqueue_atom, std::string>,
    caf::replies_to<cache_get_atom, std::string>::with<std::string>,
    caf::replies_to<cache_list_atom>::with<std::vector<std::string>>,
    caf::replies_to<synced_atom>::with<bool>>;

struct informer_config {
  /// group, version, resource and namespace ("" = every namespace); name
  /// and subresource stay empty.
  resource_ref ref;
  std::string label_selector;
  std::string field_selector;
  std::int64_t page_size = 500;
  /// 0 = never (controller-runtime's default is 10 h).
  caf::timespan resync_period{0};
  /// Keys handed to the owner at once (MaxConcurrentReconciles).
  std::size_t workers = 1;
  /// Timeout of each list page and of a watch's establishment.
  caf::timespan request_timeout = std::chrono::seconds{60};
  /// Reflector back-off: doubles from initial to cap, each wait drawn from
  /// [d/2, d); reset by a successful list or event.
  caf::timespan backoff_initial = std::chrono::milliseconds{800};
  caf::timespan backoff_cap = std::chrono::seconds{30};
  backoff_limits queue_limits;
  /// Seeds the watch timeouts and jitter (tests); 0 = random.
  std::uint64_t seed = 0;
  /// Keeps the number of keys waiting for a worker (client-go's
  /// workqueue_depth) for a /metrics reader on any thread: the informer adds
  /// each change of its own count, so informers sharing one gauge sum up.
  /// Null = not published.
  std::shared_ptr<std::atomic<std::int64_t>> depth;
};

/// The key of an object: "namespace/name", or "name" without a namespace.
[[nodiscard]] std::string key_of(const std::string& namespace_name,
                                 const std::string& name);

/// Spawns an informer that lists and watches through `api` and hands keys
/// to `owner`. It starts listing at once.
[[nodiscard]] informer_actor spawn_informer(caf::actor_system& sys,
                                            api_actor api, informer_config cfg,
                                            owner_actor owner);

} // namespace aiperf::k8s::informer
