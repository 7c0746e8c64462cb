#include "tools/commands/kube_command.hpp"

#include <CLI/CLI.hpp>

namespace aiperf::kube_command {

void add_subcommand(CLI::App& app, int& exit_code) {
  auto* kube = app.add_subcommand(
      "kube", "run benchmarks on a Kubernetes cluster (see docs/kubernetes.md)");
  kube->require_subcommand(1);
  add_crd(*kube, exit_code);
  add_generate(*kube, exit_code);
  add_workflow(*kube, exit_code);
}

} // namespace aiperf::kube_command
