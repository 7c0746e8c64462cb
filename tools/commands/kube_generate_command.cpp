#include "tools/commands/kube_command.hpp"

#include <CLI/CLI.hpp>

namespace aiperf::kube_command {

void add_generate(CLI::App&, int&) {}

} // namespace aiperf::kube_command
