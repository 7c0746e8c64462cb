// aiperf-node: one binary, one subcommand per entry point.
#include "tools/aiperf-node/profile_command.hpp"
#include "tools/aiperf-node/service_command.hpp"
#include "tools/mock_server/mock_server.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  CLI::App app{"aiperf-node: benchmark OpenAI-compatible inference servers"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "aiperf-node 0.1.0");
  int exit_code = 0; // set by the subcommand that ran
  aiperf::profile_command::add_subcommand(app, exit_code);
  aiperf::mock_server::add_subcommand(app, exit_code);
  aiperf::service_command::add_subcommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exit_code;
}
