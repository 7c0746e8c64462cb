#include "tools/commands/kube_command.hpp"

#include "tools/commands/kube_crd.hpp"

#include <CLI/CLI.hpp>

namespace aiperf::kube_command {

void add_subcommand(CLI::App& app, int& exit_code) {
  auto* kube = app.add_subcommand("kube", "benchmarks on a Kubernetes cluster");
  kube->require_subcommand(1);
  kube_crd::add_subcommand(*kube, exit_code);
}

} // namespace aiperf::kube_command
