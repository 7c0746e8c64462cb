// `aiperf-node kube …`: benchmarks on a Kubernetes cluster. The group is
// assembled here from the files that implement its subcommands, so each
// can grow without touching the others.
#pragma once

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::kube_command {

/// Adds the `kube` group to `app`; the subcommand that runs stores its exit
/// code in `exit_code`.
void add_subcommand(CLI::App& app, int& exit_code);

/// `kube crd` (kube_crd_command.cpp).
void add_crd(CLI::App& kube, int& exit_code);

/// `kube generate` (kube_generate_command.cpp).
void add_generate(CLI::App& kube, int& exit_code);

/// The benchmark workflow against a cluster: `kube profile`, `results`,
/// `logs`, `list`, `cancel`, `delete` (kube_workflow_command.cpp).
void add_workflow(CLI::App& kube, int& exit_code);

} // namespace aiperf::kube_command
