// `aiperf-node profile`: benchmark an OpenAI-compatible server from one
// process, every service an actor (issue "Local benchmark engine").
#pragma once

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::profile_command {

/// Adds the `profile` subcommand; when it runs, its exit code is stored in
/// `exit_code` (0 ok, 1 internal error, 2 bad configuration, 3 unreachable
/// server, 4 failed-request threshold exceeded, 130 interrupted).
void add_subcommand(CLI::App& app, int& exit_code);

} // namespace aiperf::profile_command
