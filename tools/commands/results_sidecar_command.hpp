// `aiperf-node results-sidecar`: serves a benchmark's results folder read-only.
#pragma once

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::results_sidecar_command {

/// Adds the subcommand; its exit code lands in `exit_code`.
void add_subcommand(CLI::App& app, int& exit_code);

} // namespace aiperf::results_sidecar_command
