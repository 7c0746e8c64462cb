// Runs aiperf-node's main in this process, for tests of whole commands:
// the exit code and what it wrote to stdout and stderr.
#pragma once

#include "tools/commands/commands.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aiperf::test {

struct main_result {
  int code = -1;
  std::string out;
  std::string err;
};

/// `args` without the program name ("kube", "crd", ...).
inline main_result run_main_captured(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"aiperf-node"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> ptrs;
  for (auto& a : argv)
    ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  main_result r;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  r.code = commands::run_main(static_cast<int>(argv.size()), ptrs.data());
  r.out = testing::internal::GetCapturedStdout();
  r.err = testing::internal::GetCapturedStderr();
  return r;
}

} // namespace aiperf::test
