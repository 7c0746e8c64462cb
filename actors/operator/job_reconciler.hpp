// The AIPerfJob reconciler: one actor that admits AIPerfJobs, creates their
// Role, RoleBinding, ConfigMap and JobSet, follows the JobSet and the
// controller pod's status pushes, harvests the results once the controller
// announces them (harvest.hpp), and ends a job when it completes, fails, is
// cancelled or times out (docs/kubernetes.md, "The operator"). Level-triggered, as
// controller-runtime's reconcilers are: every step starts from the cached
// AIPerfJob and its JobSet, so a restarted operator resumes every job from
// what the API holds (status and annotations) and nothing else.
//
// Informers (k8s/informer) feed it: one on AIPerfJobs, one each on JobSets
// and Pods with the `aiperf.nvidia.com/job-id` label (per watched
// namespace, or one for every namespace), whose keys small mapper actors
// turn into the owning AIPerfJob's key. A job's pods are read from the pod
// cache, never listed: their worst startup blocker goes into
// status.startupIssue (pod_diagnosis.hpp), and a controller container that
// ended with a non-zero code before announcing results fails the job
// naming the pod, the exit code and the reason. Writes that depend on what was read are fenced:
//   - status: JSON patch on the status subresource, `test` of metadata.uid
//     and metadata.resourceVersion, then `add /status`. A failed test is
//     re-read and the same change is applied again to the live status (a
//     rebase), so conditions written by someone else in between survive;
//   - deletes of the JobSet carry its UID as precondition;
//   - an object that already exists is adopted only when its controller
//     ownerReference is this AIPerfJob's name and UID; one of an older
//     AIPerfJob of the same name (or being deleted) is waited for; any other
//     fails the job, naming it.
//   - the completion claim is one JSON patch testing the UID, the
//     resourceVersion and the whole annotation map.
// Per-job state is keyed by namespace/name and holds the UID it belongs to;
// an event for another UID resets it. The UIDs of deleted AIPerfJobs are
// kept (never evicted): nothing is written for them again, and a harvest in
// flight for one stops (the harvest runs without holding the job's key, so
// the deletion is seen while it runs; its answer queues the key again).
//
// Protocol: the reconciler is the informers' owner (informer::owner_actor):
// `(reconcile_atom, key)` from its AIPerfJob informer; it answers each with
// informer `done`, requeueing with back-off after a failed API call. It
// sends the harvester the daily `(sweep_atom)` of the stored results. API
// requests time out after `request_timeout` (treated as a failed call: the
// key is retried). It has no other interface and stops when killed.
#pragma once

#include "actors/operator/endpoint_probe.hpp"
#include "actors/operator/harvest.hpp"
#include "actors/operator/metrics.hpp"
#include "k8s/api/api.hpp"
#include "k8s/informer/informer.hpp"
#include "k8s/manifests/manifests.hpp"

#include <caf/fwd.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aiperf::op {

struct reconciler_config {
  k8s::api_actor api;
  /// `--watch-namespaces`; empty = every namespace.
  std::vector<std::string> namespaces;
  /// AIPERF_JOB_TIMEOUT_SECONDS: the timeout of a job whose
  /// spec.timeoutSeconds is 0; 0 = none.
  double default_timeout_seconds = 0;
  /// The operator's environment, for the pods' resource overrides
  /// (AIPERF_K8S_*_CPU/_MEMORY) the JobSet builder reads.
  k8s::manifests::env_lookup env;
  /// Hardware threads the run's derived defaults assume (tests pin it).
  unsigned cores = 0; // 0 = this machine's
  /// Unix seconds the wall clock starts at when spawned; 0 = the system
  /// clock. Timestamps are this plus the actor clock's elapsed time, so
  /// tests on simulated time write deterministic ones.
  std::int64_t start_unix_seconds = 0;
  caf::timespan request_timeout = std::chrono::seconds{30};
  /// AIPERF_K8S_WATCHDOG_PENDING_THRESHOLD_SECONDS: a startup blocker this
  /// old gets a Warning event.
  std::int64_t pending_threshold_seconds = 30;
  /// AIPERF_K8S_WATCHDOG_PENDING_CRITICAL_THRESHOLD_SECONDS: a blocker of a
  /// failing category (image pull, container config, crash loop, a
  /// scheduling constraint no node meets) unchanged this long fails the
  /// job; capacity, PVC and Kueue waits never do.
  std::int64_t critical_threshold_seconds = 90;
  /// AIPERF_K8S_CONTROLLER_HEARTBEAT_EXPIRY_SECONDS: a controller silent
  /// this long is recovered (salvaged when it exited with an outcome, else
  /// a Warning event).
  std::int64_t heartbeat_expiry_seconds = 30;
  /// AIPERF_POD_RESTART_THRESHOLD: a container restarted this often gets a
  /// Warning event (once per pod and container); 0 = never.
  int pod_restart_threshold = 3;
  /// Checks spec.benchmark.endpoint.urls at admission (endpoint_probe.hpp);
  /// null = not checked.
  prober_actor prober;
  /// AIPERF_ENDPOINT_CHECK_TIMEOUT plus resolution: a probe that has not
  /// answered by then counts as unreachable.
  caf::timespan probe_timeout = std::chrono::seconds{15};
  /// Pulls a finished run's results (harvest.hpp); tests give a fake.
  harvester_actor harvester;
  caf::timespan harvest_timeout = std::chrono::minutes{30};
  /// The TTL sweep of the stored results (the harvester's sweep_atom): first
  /// after `sweep_first`, then every `sweep_every` (AIPerf's timer: 1 h, then
  /// daily); 0 = never.
  caf::timespan sweep_first = std::chrono::hours{1};
  caf::timespan sweep_every = std::chrono::hours{24};
  /// Seeds the informers' jitter (tests); 0 = random.
  std::uint64_t seed = 0;
  /// The `user` of every request (the simulator authorizes it; the product
  /// client's identity is its credentials).
  k8s::user_info user = k8s::admin_user();
  /// Counts passes, their latency and the queue depth; null = not counted.
  std::shared_ptr<operator_metrics> metrics;
};

/// Spawns the reconciler and its informers (which start listing at once).
[[nodiscard]] k8s::informer::owner_actor spawn_job_reconciler(caf::actor_system& sys,
                                                              reconciler_config cfg);

} // namespace aiperf::op
