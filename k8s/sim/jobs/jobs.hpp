// The batch workloads of the simulated cluster: the JobSet CRD
// (jobset.x-k8s.io/v1alpha2, kubernetes-sigs/jobset) and three controllers
// with the observable behaviour of the real ones, written against
// `k8s::api_actor` alone so they run over the store actor in process or over
// the product client against any API server:
//
// - the Job controller (kubernetes pkg/controller/job, 1.32): pods for
//   Indexed and NonIndexed Jobs within parallelism and completions, the
//   pod failure back-off (10 s doubling, capped at 6 min), backoffLimit
//   (failed pods, plus container restarts under restartPolicy OnFailure),
//   activeDeadlineSeconds, suspend (active pods deleted, condition
//   Suspended, startTime reset on resume), the interim conditions
//   SuccessCriteriaMet / FailureTarget followed by Complete / Failed once
//   no pod is left running, status counts and Events as upstream.
// - the JobSet controller (kubernetes-sigs/jobset pkg/controllers): child
//   Jobs `<jobset>-<rjob>-<index>` with JobSet's labels and annotations,
//   the headless Service and pod subdomain, successPolicy, failurePolicy
//   (FailJobSet / RestartJobSet with maxRestarts, strategy Recreate),
//   deletion of every active child Job once the JobSet finished, suspend
//   and resume, ttlSecondsAfterFinished, dependsOn, and
//   startupPolicy InOrder, and status.replicatedJobsStatus / restarts /
//   terminalState / conditions.
// - the TTL-after-finished controller (pkg/controller/ttlafterfinished):
//   a finished Job with ttlSecondsAfterFinished is deleted (Foreground,
//   uid precondition) that long after its Complete/Failed condition's
//   lastTransitionTime, after a fresh GET confirms it.
//
// Not emulated: the Job controller's pod tracking finalizer and
// status.uncountedTerminatedPods (a pod's end is counted from the pods
// that exist; `failed` never goes down when failed pods are removed),
// podFailurePolicy, backoffLimitPerIndex, successPolicy of Jobs, pod
// replacement policy (a replacement is made once the old pod is gone);
// JobSet's in-place restart, RestartJob actions (feature-gated upstream),
// exclusive placement, volumeClaimPolicies, and of the coordinator only its
// label and annotation are set.
//
// Each controller keeps its own copy of what it lists and watches (relisted
// a second after a watch ends or fails) and a de-duplicating work queue;
// writes are fenced (resourceVersion on updates, uid preconditions on
// deletes) and a conflict re-reads through the watch and retries with
// back-off. Time comes only from the actor clock (timers are delayed
// messages), so under the test coordinator every step follows simulated
// time; wall-clock timestamps are `start_unix_seconds` plus the actor
// clock's elapsed time, as the store computes them.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <string>

namespace aiperf::k8s::sim {

using jobs_relist_atom = caf::atom_constant<caf::atom("jobs_rlst")>;
using jobs_tick_atom = caf::atom_constant<caf::atom("jobs_tick")>;

/// Each of the three controllers. It is the sink of its own watches (see
/// k8s::watch_sink_actor); `(jobs_relist_atom, uint64_t which)` relists the
/// which-th watched resource and `(jobs_tick_atom)` runs its work queue —
/// both are its own timers. Nothing is asked of it and it replies nothing;
/// its API requests time out after `jobs_config::request_timeout` (a
/// timeout counts as a failed write: the key is retried with back-off). It
/// stops when its actor is killed.
using jobs_controller_actor
    = watch_sink_actor::extend<caf::reacts_to<jobs_relist_atom, std::uint64_t>,
                               caf::reacts_to<jobs_tick_atom>>;

struct jobs_config {
  /// Unix seconds the controller's wall clock starts from at spawn; 0 = the
  /// system clock at spawn. Tests give the store's value so that
  /// timestamps written by both agree.
  std::int64_t start_unix_seconds = 0;
  /// Timeout of every API request.
  caf::timespan request_timeout = std::chrono::seconds{30};
};

/// The JobSet CustomResourceDefinition (`jobsets.jobset.x-k8s.io`,
/// v1alpha2 served and stored, status subresource, upstream's printer
/// columns; no short names or categories, as upstream). Its OpenAPI schema
/// carries the spec and status fields with their enums and the mutating
/// webhook's defaults that a schema can express (successPolicy {operator:
/// All}, each Job template's completionMode Indexed and pod restartPolicy
/// OnFailure, network.enableDNSHostnames and publishNotReadyAddresses true,
/// startupPolicy AnyOrder, failurePolicy.restartStrategy Recreate); the
/// controller applies the same defaults to a JobSet that lacks them
/// (failure rule names included). CEL rules at the root stand for the
/// validating webhook's name checks: generated Job names
/// (`<jobset>-<rjob>-<replicas-1>`) and, for Indexed templates with
/// completions, pod names (`<jobset>-<rjob>-<jobIdx>-<podIdx>-abcde`) must be
/// at most 63 characters, refused with upstream's messages ("JobSet name is
/// too long, job names generated for this JobSet will exceed 63
/// characters"), as are dependsOn on the first replicatedJob and a
/// successPolicy target naming no replicatedJob. CEL names the field
/// `spec.replicatedJobs` where the webhook names `spec.replicatedJobs[i].name`
/// with the generated name as the value. Not emulated: the webhook's
/// DNS-1035 format checks of generated names, the subdomain, groupName,
/// managedBy, coordinator and failure-rule checks, and that dependsOn names
/// an earlier replicatedJob (a child Job whose name the API server refuses
/// becomes a JobCreationFailed Event, as upstream's controller emits it).
/// replicatedJobs are immutable unless the JobSet is or becomes suspended (then
/// upstream allows pod template labels, annotations, nodeSelector, tolerations
/// and schedulingGates to change; here any change is allowed).
[[nodiscard]] json jobset_crd();

/// Starts the Job controller over `api`: it lists and watches Jobs and
/// Pods at once.
[[nodiscard]] jobs_controller_actor spawn_job_controller(caf::actor_system& sys,
                                                         api_actor api,
                                                         jobs_config cfg = {});

/// Starts the JobSet controller over `api`: it lists and watches JobSets,
/// Jobs and Services (the JobSet CRD must be Established; until it is, the
/// JobSet list fails and is retried every second).
[[nodiscard]] jobs_controller_actor
spawn_jobset_controller(caf::actor_system& sys, api_actor api,
                        jobs_config cfg = {});

/// Starts the TTL-after-finished controller for Jobs over `api`.
[[nodiscard]] jobs_controller_actor
spawn_ttl_after_finished_controller(caf::actor_system& sys, api_actor api,
                                    jobs_config cfg = {});

} // namespace aiperf::k8s::sim
