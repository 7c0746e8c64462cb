// `aiperf-node service --role controller|worker --run-config FILE`: one
// process of a distributed run (a pod, or a child of `profile
// --worker-pods`).
#pragma once

#include "tools/commands/seams.hpp"

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::service_command {

/// Adds the `service` subcommand; its exit code lands in `exit_code`.
/// `seams` are empty in the shipped binary.
void add_subcommand(CLI::App& app, int& exit_code, const commands::test_seams& seams = {});

} // namespace aiperf::service_command
