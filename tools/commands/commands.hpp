// Every subcommand of aiperf-node, for the executables that offer them.
#pragma once

#include "tools/commands/seams.hpp"

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::commands {

/// Adds profile, mock-server, service and sim-cluster to `app`; the one that runs stores
/// its exit code in `exit_code`.
void add_all(CLI::App& app, int& exit_code, const test_seams& seams = {});

/// What main() does: parses argv, runs the subcommand, returns its exit code
/// (2 for a usage error).
[[nodiscard]] int run_main(int argc, char** argv, const test_seams& seams = {});

} // namespace aiperf::commands
