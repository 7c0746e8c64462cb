// The controller follows its worker pods through the Kubernetes API: one
// informer (list once, then watch; never a periodic list) on the pods of
// its JobSet, so the remote group learns which worker pods are Running and
// Ready and which were deleted, failed or had a container restart.
#pragma once

#include "k8s/api/api.hpp"

#include <caf/actor.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aiperf::pod_watch {

/// `(pod_report_atom, pod_report)` to the sink, no reply.
using pod_report_atom = caf::atom_constant<caf::atom("podreport")>;

/// One worker pod as the watch last saw it.
struct pod_report {
  /// The run's name of the pod: "pod<job-index>" (its AIPERF_POD_INDEX).
  std::string pod;
  /// metadata.name of the Kubernetes pod.
  std::string k8s_name;
  /// phase Running and condition Ready True.
  bool ready = false;
  /// The process that registered from this pod is gone: the pod was
  /// deleted (or is being deleted), failed, was replaced by a new pod of
  /// the same index, or a container restarted (restartCount went up).
  bool gone = false;
  /// Why it is gone ("deleted", "failed", "container restarted (restart
  /// count 1)", "replaced by a new pod"); "" unless gone.
  std::string reason;

  friend bool operator==(const pod_report&, const pod_report&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pod_report& x) {
  return f(caf::meta::type_name("aiperf::pod_watch::pod_report"), x.pod,
           x.k8s_name, x.ready, x.gone, x.reason);
}

/// What one pod object says, read from its JSON (pure; tests and the actor).
struct pod_view {
  std::uint32_t index = 0;
  std::string name;
  std::string uid;
  bool ready = false;
  bool failed = false;
  bool deleting = false;
  /// The sum of every container's restartCount.
  std::int64_t restarts = 0;
};

/// The view of a worker pod's JSON text; nullopt for anything else (the
/// controller pod, a pod without a job-index label, text that is no pod).
[[nodiscard]] std::optional<pod_view> view_of(std::string_view pod_json);

/// The label selector of the run `job_id`'s pods:
/// `jobset.sigs.k8s.io/jobset-name=aiperf-<job_id>`.
[[nodiscard]] std::string selector_of(std::string_view job_id);

struct watch_config {
  /// The Kubernetes API (the product client, or the simulator's store).
  k8s::api_actor api;
  /// AIPERF_NAMESPACE.
  std::string namespace_name;
  /// AIPERF_JOB_ID.
  std::string job_id;
  /// Gets every report.
  caf::actor sink;
  /// Seeds the informer's jitter (tests); 0 = random.
  std::uint64_t seed = 0;
};

/// Spawns the watch: one informer on `pods` in `namespace_name` with
/// selector_of(job_id); both are linked, so the watch ends with its
/// informer.
///
/// pod watch protocol:
/// - to `sink`: `(pod_report_atom, pod_report)` whenever a worker pod's
///   readiness changes or it is gone (once per way of going: a pod that
///   restarts twice is reported twice, a deleted pod once). No reply.
/// - from the informer: `(reconcile_atom, key)`; the watch reads the cached
///   pod (not found = deleted) and answers done. API errors are the
///   informer's (it backs off and relists); the watch never fails a run.
[[nodiscard]] caf::actor spawn_pod_watch(caf::actor_system& sys,
                                         watch_config cfg);

/// A controller in a pod watches its worker pods: when
/// KUBERNETES_SERVICE_HOST is set and AIPERF_JOB_ID and AIPERF_NAMESPACE
/// are given, the watch configuration (api = the in-cluster client; sink
/// left for the caller); nullopt otherwise. Fails closed, naming the
/// cause, when the in-cluster configuration does not load (no service
/// account token, say): a controller that cannot see its pods would
/// start without the Ready gate.
[[nodiscard]] caf::expected<std::optional<watch_config>>
in_cluster_watch(caf::actor_system& sys);

} // namespace aiperf::pod_watch
