// aiperf-node: one binary, one subcommand per entry point (tools/commands).
#include "tools/commands/commands.hpp"

int main(int argc, char** argv) {
  return aiperf::commands::run_main(argc, argv);
}
