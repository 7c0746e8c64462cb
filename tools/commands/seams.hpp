// Hooks that only the test build sets. The production binary (aiperf-node)
// passes default seams and reads no test-only variable; the test binary
// (aiperf-node-test, tests/support/aiperf_node_test) fills them from its
// AIPERF_TEST_* environment so process tests can reach corners a real
// deployment never takes. Children of `profile --worker-pods` are the same
// executable (/proc/self/exe), so a test binary's pods are test binaries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace aiperf::commands {

struct test_seams {
  /// Shifts a pod's worker clock (AIPERF_TEST_CLOCK_SKEW_NS), so one host
  /// can show that the clock-offset estimate removes a skew.
  std::int64_t clock_skew_ns = 0;
  /// Uploads a pod's RAW part under this name instead of its own
  /// (AIPERF_TEST_RAW_UPLOAD_NAME), to exercise the RAW barrier's failure.
  std::optional<std::string> raw_upload_name;
};

} // namespace aiperf::commands
