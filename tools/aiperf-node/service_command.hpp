// `aiperf-node service --role controller|worker --run-config FILE`: one
// process of a distributed run (a pod, or a child of `profile
// --worker-pods`).
#pragma once

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::service_command {

/// Adds the `service` subcommand; its exit code lands in `exit_code`.
void add_subcommand(CLI::App& app, int& exit_code);

} // namespace aiperf::service_command
