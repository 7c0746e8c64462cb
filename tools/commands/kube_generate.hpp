// `kube generate`'s output as functions, so tests pin it without a process
// (kube_generate_command.cpp).
#pragma once

#include "config/profile/profile_config.hpp"
#include "k8s/api/json.hpp"
#include "k8s/manifests/manifests.hpp"

#include <caf/expected.hpp>

#include <string>

namespace aiperf::kube_command {

/// The AIPerfJob (aiperf.nvidia.com/v1alpha1) of a benchmark: metadata
/// {name, namespace} of `d`; spec = the deployment fields (image,
/// imagePullPolicy, ttlSecondsAfterFinished, podTemplate, scheduling,
/// skipEndpointCheck, benchmark.runtime.workers/workersPerPod) and the
/// benchmark document of `run` (finalized: AIPerf's derived defaults such
/// as the request count make the spec valid on its own), except
/// `benchmark.runtime`, which is `typed`'s (the flags as given): finalize()
/// sizes workers and threads for this machine, not for the pods. Secrets are `<redacted>` (API key, header values, URL
/// user-info): the pods read them from the `--env-from-secrets` env in
/// podTemplate.env. The spec is validated as an AIPerfJob spec.
[[nodiscard]] caf::expected<k8s::json> aiperfjob(const k8s::manifests::deployment& d,
                                                 const config::profile_config& run,
                                                 const config::profile_config& typed,
                                                 bool skip_endpoint_check);

/// YAML documents separated by `---`, one per object, keys in the objects'
/// order: the same bytes for the same objects.
[[nodiscard]] std::string to_yaml_documents(const std::vector<k8s::json>& objects);

} // namespace aiperf::kube_command
