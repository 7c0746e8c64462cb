// skip.hpp -- the one way a test skips.
//
//   AIPERF_SKIP_OR_FAIL(reason, how_to_fix);
//
// Skips the test (GTEST_SKIP) with `reason` and `how_to_fix`. When the
// environment variable CI is exactly "true" it fails instead (FAIL), so a
// CI machine that lacks a tool reports it rather than passing with fewer
// tests. `reason` names what is missing; `how_to_fix` says how to get it:
// for a Debian package, aiperf::test::bootstrap_hint("package"), which names
// the tools/bootstrap line that installs it.
//
// Like GTEST_SKIP and FAIL it returns from the calling function, so use it
// in the test body or in SetUp() (a failed SetUp() skips the body), not in
// a helper whose caller goes on.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace aiperf::test {

/// True when the environment variable CI is "true" (GitHub Actions, GitLab
/// and most CI services set it).
inline bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view{ci} == "true";
}

/// How to install the Debian package `package` the way tools/bootstrap does
/// (it is in bootstrap's `packages` list).
inline std::string bootstrap_hint(std::string_view package) {
  return "run tools/bootstrap, whose packages list installs it (apt-get "
         "install "
         + std::string{package} + ")";
}

} // namespace aiperf::test

#define AIPERF_SKIP_OR_FAIL(reason, how_to_fix)                                \
  do {                                                                         \
    if (::aiperf::test::in_ci()) {                                             \
      FAIL() << "CI=true, so this test fails instead of skipping: "           \
             << (reason) << "; " << (how_to_fix);                             \
    } else {                                                                   \
      GTEST_SKIP() << (reason) << "; " << (how_to_fix);                        \
    }                                                                          \
  } while (false)
