// Registers the flags of `aiperf-node profile` on a CLI11 (sub)command, with
// AIPerf's names, aliases and help texts (its docs/cli_options.md).
#pragma once

#include "config/profile/profile_config.hpp"

#include <CLI/CLI.hpp>

namespace aiperf::config {

/// Adds every profile flag to `cmd`, writing parsed values into `cfg`, which
/// must outlive the parse. Enum values are checked while parsing (a bad one
/// throws CLI::ValidationError naming the flag); everything else is checked
/// by finalize(), which the caller runs after a successful parse:
///
///     config::profile_config cfg;
///     config::add_profile_options(*app.add_subcommand("profile"), cfg);
///     app.parse(argc, argv);                  // CLI::ParseError → exit 2
///     if (auto done = config::finalize(cfg); !done) {
///       ... // print "error: " + error_message(done.error()) → exit 2
///     }
void add_profile_options(CLI::App& cmd, profile_config& cfg);

} // namespace aiperf::config
