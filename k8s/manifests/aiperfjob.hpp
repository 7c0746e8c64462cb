// An AIPerfJob turned into what the operator creates for it: the inverse of
// `kube generate --operator` (tools/commands/kube_generate.hpp). The spec is
// normalized and validated by the shared spec-model code
// (config/benchmark), its benchmark becomes the run, and its deployment
// fields (image, podTemplate, scheduling, resourceMode, TTLs) become the
// k8s::manifests::deployment every builder takes, with the AIPerfJob's
// name, namespace and UID (so every object gets its controller owner
// reference).
#pragma once

#include "config/profile/profile_config.hpp"
#include "k8s/api/json.hpp"
#include "k8s/manifests/manifests.hpp"

#include <caf/expected.hpp>

#include <cstdint>

namespace aiperf::k8s::manifests {

/// What an AIPerfJob asks for.
struct job_plan {
  deployment d;
  /// The benchmark, finalized for pods (input and CA files are paths
  /// inside the pods, never read by the operator).
  config::profile_config run;
  /// The JobSet's worker math (worker_math of `d`).
  worker_layout layout;
  /// `spec.timeoutSeconds` (0 = none).
  double timeout_seconds = 0;
  /// `spec.cancel`.
  bool cancel = false;
  /// `spec.skipEndpointCheck`.
  bool skip_endpoint_check = false;
  /// `spec.resultsTtlDays`; 0 = unset (the operator's default applies).
  int results_ttl_days = 0;
};

/// The plan of `aiperfjob` (the whole object: metadata.name, .namespace and
/// .uid are read too). Errors are config::errc whose message starts with
/// the field path under `spec.` ("spec.benchmark.endpoint.urls: ...") and
/// says the fix, or k8s::manifests::errc from the builders' checks. A
/// podTemplate field the builders cannot render yet is refused by name,
/// never dropped.
[[nodiscard]] caf::expected<job_plan> plan_of(const json& aiperfjob,
                                              unsigned cores = config::detected_cores());

} // namespace aiperf::k8s::manifests
