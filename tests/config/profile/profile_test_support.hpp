// Helpers shared by the config tests: run the real CLI registration, then
// finalize, as `aiperf-node profile` does.
#pragma once

#include "config/profile/profile_cli.hpp"
#include "config/profile/profile_config.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace aiperf::config::testing {

/// Parses `args` (without the program name) and finalizes with `cores`.
/// CLI11 parse errors propagate as exceptions.
inline caf::expected<profile_config>
parse(const std::vector<std::string>& args, unsigned cores = 8) {
  CLI::App app{"profile"};
  profile_config cfg;
  add_profile_options(app, cfg);
  std::vector<const char*> argv{"profile"};
  for (const auto& a : args)
    argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  if (auto done = finalize(cfg, cores); !done)
    return done.error();
  return cfg;
}

/// A file under the test temp dir, removed on destruction.
class temp_file {
public:
  temp_file(const std::string& name, const std::string& content)
      : path_(
          std::filesystem::temp_directory_path()
          / ("aiperf_config_test_" + std::to_string(::getpid()) + "_" + name)) {
    std::ofstream out{path_};
    out << content;
  }
  ~temp_file() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;

  [[nodiscard]] std::string path() const { return path_.string(); }

private:
  std::filesystem::path path_;
};

} // namespace aiperf::config::testing
