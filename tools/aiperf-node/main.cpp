// aiperf-node: one binary, one subcommand per entry point (ARCHITECTURE §1).
#include <CLI/CLI.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  CLI::App app{"aiperf-node: benchmark OpenAI-compatible inference servers"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "aiperf-node 0.1.0");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return 0;
}
