// `aiperf-node kube crd [--output-dir DIR] [--check]`: writes the AIPerfJob
// and AIPerfSweep CustomResourceDefinitions generated from the spec model.
#pragma once

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::kube_crd {

/// Adds `crd` under the `kube` subcommand; its exit code lands in
/// `exit_code`.
void add_subcommand(CLI::App& kube, int& exit_code);

} // namespace aiperf::kube_crd
