// What keeps a benchmark pod from running, read off the Pod alone (no
// list, no other object): AIPerf's startup-blocker categories, and the
// one-line cause of a controller container that ended. Pure functions over
// the Pod's JSON; the reconciler records the result in status.startupIssue
// and in status.error.
#pragma once

#include "k8s/api/json.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

namespace aiperf::op {

using k8s::json;

/// One blocker of a pod (AIPerf's status.startupIssue keys).
struct startup_issue {
  /// ImagePull, ContainerConfig, CrashLoop, SchedulingConstraint,
  /// SchedulingDelay.
  std::string category;
  std::string pod_name;
  std::string container_name; // "" for a scheduling blocker
  std::string reason;         // "ImagePullBackOff", "Unschedulable", ...
  std::string message;
  /// Whether the blocker fails the job once it stayed unchanged for
  /// AIPERF_K8S_WATCHDOG_PENDING_CRITICAL_THRESHOLD_SECONDS: image pull,
  /// container config, crash loop and structural scheduling failures do;
  /// capacity (SchedulingDelay) never does.
  bool terminal_after_threshold = false;
  /// pod/container/reason: the same blocker keeps its first observation.
  std::string fingerprint;

  bool operator==(const startup_issue&) const = default;
};

/// A category's place in that priority: lower is worse (reported first).
[[nodiscard]] int blocker_rank(std::string_view category);

/// The highest-priority blocker of `pod` (regular and init containers,
/// PodScheduled=False), nullopt for a healthy or finished pod. Priority:
/// ImagePull, ContainerConfig, CrashLoop, SchedulingConstraint,
/// SchedulingDelay.
[[nodiscard]] std::optional<startup_issue> diagnose_pod(const json& pod);

/// `issue` as status.startupIssue (camelCase keys, firstObservedTime as
/// given, warningEmitted false).
[[nodiscard]] json startup_issue_json(const startup_issue& issue, const std::string& first_seen);

/// How a controller pod's `control-plane` container ended (now, or before a
/// restart).
struct controller_end {
  int exit_code = 0;
  /// `controller pod <pod>: container exited with code <n> (<reason>)`.
  std::string message;
};

/// The end of the controller container; nullopt while it runs.
[[nodiscard]] std::optional<controller_end> controller_termination(const json& pod);

/// Whether the controller exits with `code` after its results were written:
/// 0, 4 (failed-request threshold), 5 (degraded), 6 (worker pods lost).
[[nodiscard]] bool is_benchmark_outcome(int code) noexcept;

/// A container of a pod that restarted at least `threshold` times.
struct restart_report {
  std::string container;
  int restarts = 0;
};

/// The pod's containers (init ones included) at or past `threshold`
/// restarts; none when threshold <= 0.
[[nodiscard]] std::vector<restart_report> restarts_past(const json& pod, int threshold);

} // namespace aiperf::op
