// `aiperf-node profile`: benchmark an OpenAI-compatible server from one
// process, every service an actor.
#pragma once

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::system_controller {
struct run_result;
} // namespace aiperf::system_controller

namespace aiperf::profile_command {

/// Prints a finished run: the console table and export list to stdout,
/// warnings and the failure (if any) to stderr. Shared by `profile` and the
/// controller role of `service`.
void print_result(const system_controller::run_result& result);

/// Adds the `profile` subcommand; when it runs, its exit code is stored in
/// `exit_code` (0 ok, 1 internal error, 2 bad configuration, 3 unreachable
/// server, 4 failed-request threshold exceeded, 130 interrupted).
void add_subcommand(CLI::App& app, int& exit_code);

} // namespace aiperf::profile_command
