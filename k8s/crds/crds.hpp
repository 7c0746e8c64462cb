// The CustomResourceDefinitions of AIPerf's kinds, generated from the spec
// model (config/benchmark) so that the schema the API server enforces and
// the validation aiperf-node runs cannot drift apart: names, printer
// columns, short names and categories as AIPerf's generator writes them
// (ai-dynamo/aiperf tools/generate_crd.py), the spec schema of the model
// with its CEL rules, the status schema the operator and the controller
// write (open where AIPerf's is open).
#pragma once

#include "k8s/api/json.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace aiperf::k8s::crds {

inline constexpr std::string_view group = "aiperf.nvidia.com";
inline constexpr std::string_view version = "v1alpha1";

/// The CRD `aiperfjobs.aiperf.nvidia.com`.
[[nodiscard]] json aiperfjob_crd();

/// The CRD `aiperfsweeps.aiperf.nvidia.com`.
[[nodiscard]] json aiperfsweep_crd();

/// AIPerfSweep spec fields that may change after creation (AIPerfJob's are
/// config::benchmark::job_mutable_fields()).
[[nodiscard]] const std::vector<std::string>& sweep_mutable_fields();

/// `crd` as the YAML file committed under k8s/deploy/crds/: a header
/// comment, then block YAML in the object's own key order (so the bytes
/// depend on the generator only).
[[nodiscard]] std::string to_yaml(const json& crd);

/// One generated file: its name (`<metadata.name>.yaml`) and its text.
struct crd_file {
  std::string name;
  std::string text;
};

/// Both CRDs as files, AIPerfJob first.
[[nodiscard]] std::vector<crd_file> crd_files();

} // namespace aiperf::k8s::crds
