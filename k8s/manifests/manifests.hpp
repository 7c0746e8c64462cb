// The Kubernetes objects of one benchmark run, as plain values: the per-run
// Role and RoleBinding, the ConfigMap carrying `run_config.json`, and the
// JobSet of one controller pod and N worker pods. Pure functions (no actor,
// no I/O, no process environment: the resource overrides are read through
// an env_lookup the caller passes), so `kube generate` prints exactly what
// `kube profile --no-operator` creates and tests pin every field.
//
// Names, labels, annotations, env vars, ports and RBAC rules are AIPerf's
// (github.com/ai-dynamo/aiperf, src/aiperf/kubernetes). The pods are not:
// one aiperf-node process per pod runs every service as an actor, so the
// controller pod has two containers (`control-plane`, `results-sidecar`)
// and a worker pod one (`workers`) where AIPerf has one per service
// (docs/kubernetes.md, "Direct mode objects").
#pragma once

#include "config/profile/profile_config.hpp"
#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "proto/error.hpp"

#include <caf/expected.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aiperf::k8s::manifests {

/// Why a deployment cannot be turned into objects. Every error's message
/// names the field (as the `kube` flag spells it) and the fix.
enum class errc : std::uint8_t {
  invalid_name = 1, // job name not a DNS label of at most 35 characters
  invalid_workers,  // worker math refused (AIPerf §1.4); the CLI exits 2
  invalid_option,   // any other deployment field (image, env name, mount, ...)
  too_large,        // the ConfigMap exceeds 1 MiB (key + value bytes)
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::k8s::manifests

AIPERF_ERROR_ENUM(aiperf::k8s::manifests::errc, "k8s_mfst")

namespace aiperf::k8s::manifests {

/// Our own image; never AIPerf's (which runs Python AIPerf).
inline constexpr std::string_view default_image = "aiperf-node:0.1.0";
/// AIPerf's `Environment.WORKER.DEFAULT_WORKERS_PER_POD`.
inline constexpr int default_workers_per_pod = 10;
/// Total workers when none is given (AIPerf's `--total-workers` default).
inline constexpr int default_total_workers = 10;
/// Direct mode's JobSet TTL when none is given (AIPerf: 28800 s).
inline constexpr std::int64_t default_direct_ttl_seconds = 28800;
/// Longest job name: pod names are `aiperf-<name>-controller-0-0-xxxxx`.
inline constexpr std::size_t max_name_length = 35;
/// The ConfigMap limit, counted as AIPerf does (data key + value bytes).
inline constexpr std::size_t max_config_map_bytes = 1024 * 1024;

/// `spec.resourceMode`: burstable = requests only; guaranteed = requests
/// equal limits; none = no `resources` at all.
enum class resource_mode : std::uint8_t { burstable, guaranteed, none };

/// `guaranteed`, `burstable`, `none`.
[[nodiscard]] const char* to_string(resource_mode x) noexcept;

/// The mode named `text` (as `spec.resourceMode` spells it); nullopt for
/// anything else.
[[nodiscard]] std::optional<resource_mode> resource_mode_of(std::string_view text) noexcept;

/// One `--secret-mounts` entry: Secret `name` mounted read-only at
/// `mount_path` (volume `secret-<name>`), optionally one key via `sub_path`.
struct secret_mount {
  std::string name;
  std::string mount_path;
  std::optional<std::string> sub_path;
  bool operator==(const secret_mount&) const = default;
};

/// The `<secret>/<key>` of one `--env-from-secrets` entry.
struct secret_key_ref {
  std::string secret;
  std::string key;
  bool operator==(const secret_key_ref&) const = default;
};

/// Ordered name → value pairs (maps keep the order the user gave, so the
/// output is stable and reads like the command line).
using string_pairs = std::vector<std::pair<std::string, std::string>>;

/// Everything about where and how the run's pods run: what the `kube`
/// deployment flags and the deployment part of an AIPerfJob spec hold.
struct deployment {
  /// The job id (`--name`, AIPerfJob metadata.name): a DNS label of at most
  /// 35 characters. Objects are named `aiperf-<name>[-role|-binding|-config]`.
  std::string name;
  /// `-n/--namespace` (resolved by the caller; never created here).
  std::string ns = "default";
  /// `--image`.
  std::string image = std::string{default_image};
  /// `--image-pull-policy`: Always, IfNotPresent or Never; unset = omitted.
  std::optional<std::string> image_pull_policy;
  /// `--total-workers`; unset = default_total_workers, and then the pod
  /// count is rounded up instead of refused.
  std::optional<int> total_workers;
  /// `--workers-per-pod` (1..100).
  int workers_per_pod = default_workers_per_pod;
  /// `--ttl-seconds`; unset = default_direct_ttl_seconds. Ignored (no TTL
  /// at all) with keep_failed_pods.
  std::optional<std::int64_t> ttl_seconds_after_finished;
  /// `--node-selector`.
  string_pairs node_selector;
  /// `--tolerations`: a JSON array of Toleration objects.
  json tolerations = json::array();
  /// `spec.podTemplate.affinity`: an Affinity object; null = none.
  json affinity;
  /// `--image-pull-secrets` (rendered `[{name: x}]`).
  std::vector<std::string> image_pull_secrets;
  /// `--labels`: added to both pod templates (not to the objects).
  string_pairs labels;
  /// `--annotations`: added to both pod templates.
  string_pairs annotations;
  /// `--env-vars`: appended after our own variables; a name we set is
  /// refused (invalid_option) rather than silently dropped.
  string_pairs env;
  /// `--env-from-secrets ENV=secret/key`: env `valueFrom.secretKeyRef`.
  /// This is how secrets reach pods (e.g. AIPERF_INJECTED_API_KEY or
  /// OPENAI_API_KEY), never through the ConfigMap.
  std::vector<std::pair<std::string, secret_key_ref>> env_from_secrets;
  /// `--secret-mounts`.
  std::vector<secret_mount> secret_mounts;
  /// `--service-account`; unset = the namespace's `default` (also the
  /// RoleBinding's subject).
  std::optional<std::string> service_account_name;
  /// `--queue-name` (Kueue): label `kueue.x-k8s.io/queue-name` and
  /// `suspend: true` on the JobSet.
  std::optional<std::string> queue_name;
  /// `--priority-class`: label `kueue.x-k8s.io/priority-class`.
  std::optional<std::string> priority_class;
  /// `spec.resourceMode`.
  resource_mode resources = resource_mode::burstable;
  /// The owning AIPerfJob's metadata.uid when the operator runs the job:
  /// every object gets its ownerReference and the pods AIPERF_JOB_UID.
  /// Unset in direct mode.
  std::optional<std::string> job_uid;
  /// `spec.keepFailedPods`: no JobSet TTL and no worker-Job TTL, so failed
  /// pods stay for inspection.
  bool keep_failed_pods = false;
  /// `run_meta.epoch_key` frozen into run_config.json: the results
  /// directory key (epoch seconds, optionally a six-digit suffix). Unset =
  /// null (the caller that needs byte-stable output, `kube generate`,
  /// leaves it unset).
  std::optional<std::string> epoch_key;
  /// run_config.json's `artifacts.user_files`: the local input files the
  /// CLI embedded (tools/commands/user_files.hpp); empty = none.
  json user_files = json::array();

  bool operator==(const deployment&) const = default;
};

/// Where the benchmark's workers go: `pods` worker pods of
/// `workers_per_pod` workers each, `total_workers` in all.
struct worker_layout {
  int total_workers = 0;
  int workers_per_pod = 0;
  int pods = 0;
  bool operator==(const worker_layout&) const = default;
};

/// AIPerf's worker math: pods = ceil(total / workersPerPod). An explicit
/// total above one pod that is not a multiple of workersPerPod is
/// invalid_workers (naming --total-workers and --workers-per-pod); a
/// defaulted total is rounded up to whole pods.
[[nodiscard]] caf::expected<worker_layout> worker_math(const deployment& d);

/// Every check of `d` the builders make (name, worker math, image, pull
/// policy, env names and collisions, secret refs, mounts, tolerations,
/// affinity), so a CLI can refuse bad flags before it touches a cluster.
[[nodiscard]] caf::expected<void> validate(const deployment& d);

/// Reads one environment variable; nullopt when unset. Same type as
/// system::env_lookup (runtime/system/env.hpp), so system::process_env()
/// fits; tests pass a map.
using env_lookup = std::function<std::optional<std::string>(std::string_view name)>;

/// A pod's CPU ("250m", "2") and memory ("512Mi") request.
struct pod_resources {
  std::string cpu;
  std::string memory;
  bool operator==(const pod_resources&) const = default;
};

/// The request of the controller pod and of one worker pod: our measured
/// defaults (docs/kubernetes.md), each overridable by
/// AIPERF_K8S_SYSTEM_CONTROLLER_CPU/_MEMORY and AIPERF_K8S_WORKER_POD_CPU/
/// _MEMORY. A value that is not a Kubernetes quantity is invalid_option
/// naming the variable.
struct resource_figures {
  pod_resources controller;
  pod_resources worker;
  bool operator==(const resource_figures&) const = default;
};

[[nodiscard]] caf::expected<resource_figures> resources_from(const env_lookup& env);

/// The rules of the per-run Role: AIPerf's `RBACSpec._RULES`, exactly
/// (read-only but for patching AIPerfJobs and JobSets).
[[nodiscard]] json role_rules();

/// Role `aiperf-<name>-role` in d.ns with role_rules().
[[nodiscard]] caf::expected<json> role(const deployment& d);

/// RoleBinding `aiperf-<name>-binding`: the Role to the pods' service
/// account (d.service_account_name, else `default`).
[[nodiscard]] caf::expected<json> role_binding(const deployment& d);

/// The text of `run_config.json`: the run (config::to_json with secrets
/// redacted, URL user-info too) plus the frozen `run_meta` {epoch_key,
/// job_name, namespace}, 2-space indented. The worker math is written into
/// the run (`runtime.worker_pods`, `runtime.workers_per_pod`,
/// `runtime.workers_max`).
[[nodiscard]] caf::expected<std::string> run_config_json(const deployment& d,
                                                         const config::profile_config& run);

/// ConfigMap `aiperf-<name>-config` with data `run_config.json`; too_large
/// past max_config_map_bytes.
[[nodiscard]] caf::expected<json> config_map(const deployment& d,
                                             const config::profile_config& run);

/// JobSet `aiperf-<name>` (jobset.x-k8s.io/v1alpha2): replicated jobs
/// `controller` (1) and `workers` (worker_math pods), success policy on
/// the controller, DNS hostnames, suspend with a queue.
[[nodiscard]] caf::expected<json> jobset(const deployment& d, const config::profile_config& run,
                                         const env_lookup& env);

/// The four objects of a direct-mode run, in the order they are created:
/// Role, RoleBinding, ConfigMap, JobSet (each with metadata.namespace).
[[nodiscard]] caf::expected<std::vector<json>>
direct_mode_objects(const deployment& d, const config::profile_config& run,
                    const env_lookup& env);

/// The collection one of those objects is created in: group and version
/// from its apiVersion, the plural of its kind (Role, RoleBinding,
/// ConfigMap, JobSet), its metadata.namespace; name left empty.
[[nodiscard]] resource_ref collection_of(const json& obj);

/// `url` with any user-info replaced by `<redacted>`
/// (`http://u:p@h:1/x` → `http://<redacted>@h:1/x`); unchanged without.
[[nodiscard]] std::string redact_url(std::string_view url);

/// Object names and the controller's DNS name, for the CLI and the
/// pod runtime (`aiperf-<name>-controller-0-0.aiperf-<name>.<ns>.svc.
/// cluster.local`).
[[nodiscard]] std::string jobset_name(std::string_view name);
[[nodiscard]] std::string role_name(std::string_view name);
[[nodiscard]] std::string role_binding_name(std::string_view name);
[[nodiscard]] std::string config_map_name(std::string_view name);
[[nodiscard]] std::string controller_host(std::string_view name, std::string_view ns);

/// The label every object of a run carries (`aiperf.nvidia.com/job-id`),
/// for selectors such as `kube delete`'s.
inline constexpr std::string_view job_id_label = "aiperf.nvidia.com/job-id";

} // namespace aiperf::k8s::manifests
