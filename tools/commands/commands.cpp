#include "tools/commands/commands.hpp"

#include "k8s/sim/sandbox/sandbox.hpp"
#include "tools/commands/kube_command.hpp"
#include "tools/commands/operator_command.hpp"
#include "tools/commands/profile_command.hpp"
#include "tools/commands/results_sidecar_command.hpp"
#include "tools/commands/service_command.hpp"
#include "tools/commands/sim_cluster_command.hpp"
#include "tools/commands/tokenize_command.hpp"
#include "tools/mock_server/mock_server.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace aiperf::commands {

void add_all(CLI::App& app, int& exit_code, const test_seams& seams) {
  profile_command::add_subcommand(app, exit_code);
  mock_server::add_subcommand(app, exit_code);
  service_command::add_subcommand(app, exit_code, seams);
  sim_cluster_command::add_subcommand(app, exit_code);
  tokenize_command::add_subcommand(app, exit_code);
  kube_command::add_subcommand(app, exit_code);
  results_sidecar_command::add_subcommand(app, exit_code);
  operator_command::add_subcommand(app, exit_code);
}

int run_main(int argc, char** argv, const test_seams& seams) {
  // The simulated pod network's init (sim-cluster --workloads execs this
  // binary as it): hidden, no CLI, no actor system — a single-threaded
  // process that may fork freely.
  if (argc == 3 && std::string_view{argv[1]} == "sim-pod-init")
    return k8s::sim::sandbox::init_main(std::atoi(argv[2]));
  CLI::App app{"aiperf-node: benchmark OpenAI-compatible inference servers"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "aiperf-node 0.1.0");
  int exit_code = 0; // set by the subcommand that ran
  add_all(app, exit_code, seams);
  // Flag errors read like every other refusal: "error: --flag: ...".
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    return "error: " + CLI::FailureMessage::simple(a, e);
  });
  // CLI11 says only "A subcommand is required" for a missing or unknown
  // one: name it and list the subcommands.
  std::string names;
  auto subs = app.get_subcommands([](CLI::App*) { return true; });
  for (const auto* sub : subs)
    names += (names.empty() ? "" : ", ") + sub->get_name();
  if (argc < 2) {
    std::fprintf(stderr,
                 "error: a subcommand is required: %s (see %s --help)\n",
                 names.c_str(), argv[0]);
    return 2;
  }
  std::string first = argv[1];
  bool known = false;
  for (auto* sub : subs)
    known = known || sub->check_name(first);
  if (!first.starts_with("-") && !known) {
    std::fprintf(stderr,
                 "error: unknown subcommand '%s'; the subcommands are: %s "
                 "(see %s --help)\n",
                 first.c_str(), names.c_str(), argv[0]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exit_code;
}

} // namespace aiperf::commands
