#include "tools/commands/kube_command.hpp"

#include <CLI/CLI.hpp>

namespace aiperf::kube_command {

void add_workflow(CLI::App&, int&) {}

} // namespace aiperf::kube_command
