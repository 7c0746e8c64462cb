// aiperf-node-test: aiperf-node with its test seams read from AIPERF_TEST_*
// variables (tools/commands/seams.hpp). Built for process tests only, never
// installed.
#include "runtime/time/skewed_clock.hpp"
#include "tools/commands/commands.hpp"

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  aiperf::commands::test_seams seams;
  if (const char* v = std::getenv("AIPERF_TEST_CLOCK_SKEW_NS")) {
    auto clock = aiperf::time::skewed_clock::parse("AIPERF_TEST_CLOCK_SKEW_NS", v);
    if (!clock) {
      std::fprintf(stderr, "error: %s\n", aiperf::error_message(clock.error()).c_str());
      return 2;
    }
    seams.clock_skew_ns = clock->skew_ns();
  }
  if (const char* v = std::getenv("AIPERF_TEST_RAW_UPLOAD_NAME"))
    seams.raw_upload_name = v;
  return aiperf::commands::run_main(argc, argv, seams);
}
