// `aiperf-node kube`: benchmarks on a Kubernetes cluster (generate, crd, ...).
#pragma once

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::kube_command {

/// Adds the subcommand; its exit code lands in `exit_code`.
void add_subcommand(CLI::App& app, int& exit_code);

} // namespace aiperf::kube_command
