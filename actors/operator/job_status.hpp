// The AIPerfJob status as values: phases, conditions (AIPerf's types and
// reasons; lastTransitionTime moves only when a condition flips), what the
// operator reads off its JobSet, whom a child object belongs to, and the
// fenced JSON patch every status write is. Pure functions: the reconciler
// applies them to the cached object and again, on a conflict, to the live
// one (a rebase), so a concurrent writer's conditions survive.
#pragma once

#include "k8s/api/json.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aiperf::op {

using k8s::json;

/// `status.phase` values (the CRD's enum).
namespace phase {
inline constexpr std::string_view pending = "Pending";
inline constexpr std::string_view queued = "Queued";
inline constexpr std::string_view initializing = "Initializing";
inline constexpr std::string_view running = "Running";
inline constexpr std::string_view completed = "Completed";
inline constexpr std::string_view failed = "Failed";
inline constexpr std::string_view cancelled = "Cancelled";
} // namespace phase

/// Completed, Failed or Cancelled.
[[nodiscard]] bool is_terminal(std::string_view phase) noexcept;

/// `status.phase` of an AIPerfJob ("" before the operator admitted it).
[[nodiscard]] std::string phase_of(const json& job);

/// The `phase` of a status object.
[[nodiscard]] std::string status_phase(const json& status);

/// Sets condition `type` in `status.conditions` (creating the list):
/// status "True"/"False"/"Unknown", reason, message. lastTransitionTime is
/// `now` when the condition is new or its status flips, else kept.
void set_condition(json& status, std::string_view type, std::string_view value,
                   std::string_view reason, std::string_view message, std::int64_t now_unix);

/// The condition `type` of `status`, or null.
[[nodiscard]] const json* condition_of(const json& status, std::string_view type);

/// Makes `status` terminal: phase, completionTime, `error` (Failed), the
/// derived Complete/Failed conditions of AIPerf's finalize (Completed with
/// ResultsAvailable=True → Complete=True ResultsStored; Failed →
/// Failed=True with `reason`, JobFailed by default; Cancelled → both False
/// JobCancelled), and clears currentPhase and subPhase.
void set_terminal(json& status, std::string_view phase, std::string_view error,
                  std::int64_t now_unix, std::string_view reason = "JobFailed");

/// Whom an object belongs to, judged by its controller ownerReference
/// against the AIPerfJob `job_name`/`job_uid` that wants to create it.
enum class ownership : std::uint8_t {
  ours,          // controller owner is this AIPerfJob (name and UID): adopt
  earlier_owner, // owned by an older AIPerfJob of that name, or being deleted: wait for GC
  foreign,       // ownerless or someone else's: the job cannot use the name
};

[[nodiscard]] ownership ownership_of(const json& obj, std::string_view job_name,
                                     std::string_view job_uid);

/// Whether `obj`'s controller ownerReference is the AIPerfJob (apiVersion,
/// kind, name and UID all match).
[[nodiscard]] bool controlled_by(const json& obj, std::string_view job_name,
                                 std::string_view job_uid);

/// What the operator reads off an AIPerfJob's JobSet.
struct jobset_view {
  bool suspended = false;
  bool queued = false; // suspended and carrying a Kueue queue label
  /// The Failed=True condition's "reason: message", when there is one.
  std::optional<std::string> failure;
  /// status.replicatedJobsStatus[workers].ready (worker pods' Jobs ready).
  int ready_worker_jobs = 0;
};

[[nodiscard]] jobset_view view_of_jobset(const json& jobset);

/// The JSON patch of a fenced status write: `test` of /metadata/uid,
/// /metadata/resourceVersion and (once there is one) /status/phase of
/// `read` (the object the status was computed from), then `add` of the
/// whole /status. A concurrent write fails a test (422) instead of being
/// overwritten; the phase test says in the request which transition it
/// guards.
[[nodiscard]] json fenced_status_patch(const json& read, const json& status);

/// Unix seconds of an RFC 3339 timestamp field, 0 when absent or malformed.
[[nodiscard]] std::int64_t seconds_of(const json& obj, std::string_view json_pointer);

/// AIPerf's results epoch of an AIPerfJob: metadata.creationTimestamp in
/// unix seconds followed by a six-digit suffix derived from metadata.uid
/// (so two jobs created in the same second get different directories);
/// bare seconds without a uid.
[[nodiscard]] std::string epoch_key_of(const json& job);

} // namespace aiperf::op
