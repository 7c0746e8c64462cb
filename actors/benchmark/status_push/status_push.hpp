// The controller pod's side of an operator-run benchmark: it pushes the
// run's state into its AIPerfJob's status and tells the operator, by
// annotation, when the results are final. AIPerf's contract
// (github.com/ai-dynamo/aiperf, src/aiperf/kubernetes: ProgressRouter):
//
//   - at least one push per AIPERF_K8S_CONTROLLER_HEARTBEAT_INTERVAL_SECONDS
//     (10), also while nothing changes, and one at every state change: a
//     JSON patch of the status subresource with a leading `test` of
//     /metadata/uid and, once the CR has one, /status/phase (so a push can
//     never bring back subPhase after the operator's terminal write); a CR
//     with no status.phase yet gets a merge patch naming the
//     resourceVersion read; a CR already terminal, or another incarnation
//     (other UID), gets nothing. The CR is read from an informer on it
//     (one watch; a GET only before the first list arrived);
//   - each push also refreshes the UID-fenced annotation
//     `aiperf.nvidia.com/controller-heartbeat` (RFC 3339 time) and, in the
//     same merge patch, the progress annotations (progress_annotations);
//   - the JobSet `aiperf-<job>` gets the progress annotations too, in a JSON
//     patch only when one of them changed, fenced on its controller owner's
//     UID (operator mode) or its job-id label (direct mode, where no
//     AIPerfJob exists and nothing else is pushed);
//   - status.workers is the controller's once it has seen a pod: the nine
//     keys of the CRD, replaced whole by every push (a snapshot of one
//     moment, never this push's `ready` beside an earlier writer's
//     `total`). Until a pod registered the key is withheld, so the
//     operator's estimate stands; `totalPods` in it tells the operator the
//     controller took over;
//   - the final push carries `resultsExported` (every exporter flushed),
//     `exitCode`/`exitReason` (ours) and, for a run that failed inside the
//     controller, `controllerFailure`; then the UID-fenced annotation
//     `aiperf.nvidia.com/benchmark-complete: "true"` when results exist.
//
// A refused push is classified by its Status: a failed `test` (the
// generic 422) or a stale resourceVersion (409 Conflict) is the fence
// working (logged at debug, dropped); anything else is logged at warning
// with the message and handed to pusher_config::on_refused.
#pragma once

#include "actors/benchmark/api_service/api_service.hpp"
#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"

#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aiperf::status_push {

using k8s::json;

/// What the controller reports of its run (the system controller's
/// run_progress, without depending on it).
struct progress {
  /// "initializing" (nothing reported yet), "configuring", "running",
  /// "exporting", "complete", "cancelled", "failed".
  std::string state = "initializing";
  /// "warmup" or "profiling" (the timing manager's phase).
  std::string phase = "profiling";
  std::uint64_t sent = 0;
  std::uint64_t completed = 0;
  std::uint64_t in_flight = 0;
  std::uint64_t total = 0; // 0 = duration-bounded
  std::uint64_t errors = 0;
  double requests_per_second = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, progress& x) {
  return f(caf::meta::type_name("aiperf::status_push::progress"), x.state, x.phase, x.sent,
           x.completed, x.in_flight, x.total, x.errors, x.requests_per_second);
}

/// status.workers as the controller writes it: the CRD's nine keys.
struct worker_counts {
  /// Workers registered from pods not lost (a worker registers once it can
  /// take credits, so `ready` and `routerConnected` are the same number).
  std::uint32_t ready = 0;
  std::uint32_t total = 0; // the run's workers
  /// `ready` once the start gate opened (credits go out), 0 before.
  std::uint32_t dispatchable = 0;
  std::uint32_t router_connected = 0;
  std::uint32_t ready_record_processors = 0;
  std::uint32_t declared_record_processors = 0;
  /// Pods every service of which registered, not lost.
  std::uint32_t ready_pods = 0;
  /// Pods at least one service of which registered: 0 withholds the key.
  std::uint32_t total_pods = 0;
  std::uint32_t degraded_pods = 0; // lost

  bool operator==(const worker_counts&) const = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_counts& x) {
  return f(caf::meta::type_name("aiperf::status_push::worker_counts"), x.ready, x.total,
           x.dispatchable, x.router_connected, x.ready_record_processors,
           x.declared_record_processors, x.ready_pods, x.total_pods, x.degraded_pods);
}

/// The counts of the controller's registration state (what /api/pods
/// serves), for pods of `workers_per_pod` workers and `processors_per_pod`
/// record processors.
[[nodiscard]] worker_counts worker_counts_of(const api_service::pods_status& pods,
                                             std::uint32_t workers_per_pod,
                                             std::uint32_t processors_per_pod);

/// The nine keys, camelCase as the CRD declares them.
[[nodiscard]] json workers_json(const worker_counts& w);

/// How the run ended, pushed once before the controller lingers or exits.
struct final_report {
  int exit_code = 0;
  std::string exit_reason;
  /// Every exporter flushed and the results-ready marker is written.
  bool results_exported = false;
  /// Set for a failure inside the controller (not of the benchmark).
  std::string controller_failure;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, final_report& x) {
  return f(caf::meta::type_name("aiperf::status_push::final_report"), x.exit_code,
           x.exit_reason, x.results_exported, x.controller_failure);
}

inline constexpr std::string_view heartbeat_annotation = "aiperf.nvidia.com/controller-heartbeat";
inline constexpr std::string_view complete_annotation = "aiperf.nvidia.com/benchmark-complete";
/// The most status bytes one push may carry (ours; the API server refuses
/// objects past 1.5 MB, and a refused push would stop every later one).
inline constexpr std::size_t status_byte_budget = 512 * 1024;

/// AIPerf's SystemState (status.subPhase) of a controller state:
/// configuring → configuring; running → profiling until every credit is
/// back, then processing; exporting → processing; complete, cancelled,
/// failed → stopping; anything earlier → initializing.
[[nodiscard]] std::string sub_phase_of(const progress& p);

/// The status keys one push writes: subPhase, currentPhase, phases
/// (`phases.<currentPhase>` with phaseName, phaseKind and the request
/// counters), requestsCompleted/Total/PerSecond and, with `f`,
/// resultsExported, exitCode, exitReason, controllerFailure, and with `w`
/// of at least one pod, workers. Non-finite numbers become 0; past
/// status_byte_budget `phases` is replaced by {"truncated": true}.
[[nodiscard]] json status_fields(const progress& p, const final_report* f,
                                 const worker_counts* w = nullptr);

/// One request of a push.
struct push_request {
  k8s::patch_type type = k8s::patch_type::json;
  json body;
};

/// The status push against `cached` (the CR as last read; null = unknown):
/// nullopt when it must be skipped (the CR is terminal, or carries another
/// UID than `uid`).
[[nodiscard]] std::optional<push_request> status_request(const json* cached, std::string_view uid,
                                                         const json& fields);

/// AIPerf's runtime annotations of a push: `aiperf.nvidia.com/progress-phase`
/// (the phase, or the subPhase before the load starts), `-percent` (one
/// decimal), `-requests` ("completed/total", or "completed" without a
/// total), `-status` (the controller's state) and `system-state` (the
/// subPhase).
[[nodiscard]] json progress_annotations(const progress& p);

/// The JSON patch that writes `annotations` into the JobSet: a `test` of the
/// fence (`/metadata/ownerReferences/0/uid` = `job_uid`, or without a UID the
/// job-id label = `job_name`), then one `add` per annotation.
[[nodiscard]] json jobset_annotation_patch(std::string_view job_uid, std::string_view job_name,
                                           const json& annotations);

/// The merge patch that sets annotation `key` to `value` on the CR, fenced
/// on `uid` (metadata.uid is immutable: a patch naming another UID is
/// refused with 422).
[[nodiscard]] json annotation_patch(std::string_view uid, std::string_view key,
                                    std::string_view value);

/// Whether a refusal is a fence holding: a failed JSON-patch `test` (422
/// with empty details) or a stale resourceVersion (409 Conflict).
[[nodiscard]] bool is_fence_refusal(const caf::error& err);

using progress_atom = caf::atom_constant<caf::atom("sp_prog")>;
using final_atom = caf::atom_constant<caf::atom("sp_final")>;
using tick_atom = caf::atom_constant<caf::atom("sp_tick")>;
using workers_atom = caf::atom_constant<caf::atom("sp_workers")>;

/// The pusher.
/// - `(progress_atom, progress)` from the controller: remembered; a new
///   state is pushed at once, counters with the next heartbeat. No reply.
/// - `(workers_atom, worker_counts)` from the controller's pod registry:
///   remembered, pushed with the next push. No reply.
/// - `(final_atom, final_report)`: the final push, then (results exported)
///   the benchmark-complete annotation. Replies true when the annotation
///   was written, false otherwise (skipped, refused, or no results); the
///   controller then lingers or exits either way.
/// - `(tick_atom)`: its own heartbeat timer.
/// Requests time out after `request_timeout` (counted as refused).
using pusher_actor = caf::typed_actor<caf::reacts_to<progress_atom, progress>,
                                      caf::reacts_to<workers_atom, worker_counts>,
                                      caf::replies_to<final_atom, final_report>::with<bool>,
                                      caf::reacts_to<tick_atom>>;

struct pusher_config {
  k8s::api_actor api;
  /// AIPERF_NAMESPACE, AIPERF_JOB_ID (the AIPerfJob's name), AIPERF_JOB_UID;
  /// an empty UID is direct mode: only the JobSet's annotations are written.
  std::string namespace_name;
  std::string job_name;
  std::string job_uid;
  /// AIPERF_K8S_CONTROLLER_HEARTBEAT_INTERVAL_SECONDS.
  caf::timespan heartbeat_interval = std::chrono::seconds{10};
  caf::timespan request_timeout = std::chrono::seconds{10};
  /// Unix seconds of the wall clock at spawn; 0 = the system clock (tests
  /// pin it: timestamps are this plus the actor clock's elapsed time).
  std::int64_t start_unix_seconds = 0;
  std::uint64_t seed = 0;
  /// Called with every refusal that was not a failed test (tests count).
  std::function<void(const std::string&)> on_refused;
};

[[nodiscard]] pusher_actor spawn_pusher(caf::actor_system& sys, pusher_config cfg);

} // namespace aiperf::status_push
