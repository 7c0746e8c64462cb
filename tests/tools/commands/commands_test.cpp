#include "tools/commands/local_pods.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

using namespace aiperf;
namespace fs = std::filesystem;

namespace {

std::string read_binary(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

fs::path test_binary(const fs::path& node) {
  return node.parent_path().parent_path().parent_path() / "tests" / "support"
         / "aiperf_node_test" / "aiperf-node-test";
}

// The shipped binary reads no test-only variable: the seams exist only in
// aiperf-node-test, whose strings show the search finds them.
TEST(commands, the_shipped_binary_reads_no_test_only_variable) {
  const char* node = std::getenv("AIPERF_NODE_BIN");
  ASSERT_NE(node, nullptr) << "run through ctest (AIPERF_NODE_BIN)";
  auto shipped = read_binary(node);
  ASSERT_GT(shipped.size(), 1000u);
  EXPECT_EQ(shipped.find("AIPERF_TEST_"), std::string::npos);
  auto with_seams = read_binary(test_binary(node));
  ASSERT_GT(with_seams.size(), 1000u);
  EXPECT_NE(with_seams.find("AIPERF_TEST_CLOCK_SKEW_NS"), std::string::npos);
  EXPECT_NE(with_seams.find("AIPERF_TEST_RAW_UPLOAD_NAME"), std::string::npos);
}

struct scoped_var {
  scoped_var(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~scoped_var() { ::unsetenv(name_); }
  const char* name_;
};

TEST(commands, apply_env_reads_the_abort_threshold) {
  scoped_var v{"AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT", "25"};
  local_pods::controller_options opts;
  ASSERT_TRUE(local_pods::apply_env(opts));
  EXPECT_EQ(opts.abort_threshold_percent, 25.0);
}

TEST(commands, apply_env_names_a_bad_variable) {
  scoped_var v{"AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT", "lots"};
  local_pods::controller_options opts;
  auto applied = local_pods::apply_env(opts);
  ASSERT_FALSE(applied);
  EXPECT_NE(error_message(applied.error()).find("AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT"),
            std::string::npos)
    << error_message(applied.error());
}

TEST(commands, secrets_travel_by_name_not_in_the_run_file) {
  config::profile_config cfg;
  cfg.api_key = "sk-secret";
  cfg.headers.push_back({"X-Team", "perf"});
  auto names = local_pods::declared_secrets(cfg);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "API_KEY");
  EXPECT_EQ(names[1], "HEADER_0");
  auto env = local_pods::secret_env(cfg);
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env[0].first, "AIPERF_INJECTED_API_KEY");
  EXPECT_EQ(env[0].second, "sk-secret");
  EXPECT_EQ(env[1].second, "perf");
}

} // namespace
