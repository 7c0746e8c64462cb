#include "tools/commands/kube_crd.hpp"

#include <CLI/CLI.hpp>

namespace aiperf::kube_crd {

void add_subcommand(CLI::App& kube, int& exit_code) {
  auto* crd = kube.add_subcommand(
      "crd",
      "write the AIPerfJob and AIPerfSweep CRDs generated from the spec");
  (void)crd;
  (void)exit_code;
}

} // namespace aiperf::kube_crd
