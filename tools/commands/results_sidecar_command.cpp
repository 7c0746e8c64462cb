#include "tools/commands/results_sidecar_command.hpp"

#include <CLI/CLI.hpp>

namespace aiperf::results_sidecar_command {

void add_subcommand(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "results-sidecar", "serve a benchmark's results folder read-only");
  (void)sub;
  (void)exit_code;
}

} // namespace aiperf::results_sidecar_command
