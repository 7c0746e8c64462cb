#include "tools/commands/endpoint_credentials.hpp"
#include "tools/commands/local_pods.hpp"

#include "config/profile/profile_json.hpp"
#include "k8s/manifests/manifests.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
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

TEST(commands, the_abort_threshold_defaults_to_aiperfs_50_percent) {
  ::unsetenv("AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT");
  local_pods::controller_options opts;
  ASSERT_TRUE(local_pods::apply_env(opts));
  EXPECT_EQ(opts.abort_threshold_percent, 50.0);
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

config::profile_config credentialed() {
  config::profile_config cfg;
  cfg.model_names = {"m"};
  cfg.urls = {"http://127.0.0.1:8000"};
  cfg.api_key = "sk-secret";
  cfg.headers.push_back({"Authorization", "Bearer tok"});
  cfg.headers.push_back({"X-Team", "perf"});
  return cfg;
}

using env_map = std::map<std::string, std::string, std::less<>>;

caf::expected<config::profile_config> load(const std::string& json, env_map env) {
  return endpoint_credentials::load_run(json, system::map_env(std::move(env)),
                                        "--benchmark-run run.json");
}

std::string message_of(const caf::expected<config::profile_config>& r) {
  return r ? std::string{"(loaded)"} : error_message(r.error());
}

TEST(commands, children_get_credentials_in_aiperfs_variables) {
  auto env = local_pods::secret_env(credentialed());
  std::map<std::string, std::string> m(env.begin(), env.end());
  ASSERT_EQ(m.size(), 2u) << "no URL has user-info, so no URL list";
  EXPECT_EQ(m["AIPERF_INJECTED_API_KEY"], "sk-secret");
  EXPECT_EQ(m["AIPERF_INJECTED_HEADERS"],
            R"({"Authorization":"Bearer tok","X-Team":"perf"})");
  auto plain = credentialed();
  plain.api_key.reset();
  plain.headers.clear();
  EXPECT_TRUE(local_pods::secret_env(plain).empty());
}

TEST(commands, a_redacted_run_file_is_restored_from_the_children_env) {
  auto cfg = credentialed();
  auto env = local_pods::secret_env(cfg);
  auto json = config::to_json(cfg, true);
  ASSERT_EQ(json.find("sk-secret"), std::string::npos);
  auto back = load(json, env_map(env.begin(), env.end()));
  ASSERT_TRUE(back) << message_of(back);
  EXPECT_EQ(back->api_key, cfg.api_key);
  EXPECT_EQ(back->headers, cfg.headers);
}

TEST(commands, the_manifests_run_config_loads_in_a_pod) {
  auto cfg = credentialed();
  cfg.api_key.reset();
  cfg.headers.clear();
  ASSERT_TRUE(config::finalize(cfg));
  k8s::manifests::deployment d;
  d.name = "j1";
  d.ns = "bench";
  auto text = k8s::manifests::run_config_json(d, cfg);
  ASSERT_TRUE(text) << error_message(text.error());
  ASSERT_NE(text->find("\"run_meta\""), std::string::npos);
  auto back = load(*text, {});
  ASSERT_TRUE(back) << message_of(back);
  EXPECT_EQ(back->model_names, cfg.model_names);
  auto bad = load(R"({"run_meta": "j1"})", {});
  ASSERT_FALSE(bad);
  EXPECT_NE(message_of(bad).find("run_meta must be an object"), std::string::npos)
      << message_of(bad);
}

TEST(commands, injected_headers_override_by_name_and_add_the_rest) {
  auto json = config::to_json(credentialed(), true);
  auto back = load(json, {{"AIPERF_INJECTED_API_KEY", "k"},
                          {"AIPERF_INJECTED_HEADERS",
                           R"({"authorization":"Bearer x","x-team":"y","X-New":"z"})"}});
  ASSERT_TRUE(back) << message_of(back);
  ASSERT_EQ(back->headers.size(), 3u);
  EXPECT_EQ(back->headers[0].value, "Bearer x");
  EXPECT_EQ(back->headers[1].value, "y");
  EXPECT_EQ(back->headers[2].name, "X-New");
}

TEST(commands, openai_api_key_fills_only_a_redacted_key) {
  auto cfg = credentialed();
  cfg.headers.clear();
  auto back = load(config::to_json(cfg, true), {{"OPENAI_API_KEY", "sk-alias"}});
  ASSERT_TRUE(back) << message_of(back);
  EXPECT_EQ(back->api_key, std::optional<std::string>{"sk-alias"});
  cfg.api_key.reset();
  auto none = load(config::to_json(cfg, true), {{"OPENAI_API_KEY", "sk-alias"}});
  ASSERT_TRUE(none) << message_of(none);
  EXPECT_FALSE(none->api_key) << "an ambient shell key must not become the endpoint's";
  auto priv = load(config::to_json(cfg, true), {{"AIPERF_INJECTED_API_KEY", "sk-private"}});
  ASSERT_TRUE(priv) << message_of(priv);
  EXPECT_EQ(priv->api_key, std::optional<std::string>{"sk-private"});
}

TEST(commands, a_redacted_secret_without_its_variable_fails_closed) {
  auto json = config::to_json(credentialed(), true);
  auto none = load(json, {});
  ASSERT_FALSE(none);
  auto msg = message_of(none);
  EXPECT_NE(msg.find("AIPERF_INJECTED_API_KEY"), std::string::npos) << msg;
  EXPECT_NE(msg.find("OPENAI_API_KEY"), std::string::npos) << msg;
  EXPECT_NE(msg.find("AIPERF_INJECTED_HEADERS"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Authorization, X-Team"), std::string::npos) << msg;
  EXPECT_NE(msg.find("secretKeyRef"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--benchmark-run run.json"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("Bearer tok"), std::string::npos);
  // Empty counts as unset; one header left redacted is still named.
  auto partial = load(json, {{"AIPERF_INJECTED_API_KEY", ""},
                             {"AIPERF_INJECTED_HEADERS", R"({"Authorization":"b"})"}});
  ASSERT_FALSE(partial);
  EXPECT_NE(message_of(partial).find("header(s) X-Team are redacted"), std::string::npos)
    << message_of(partial);
  EXPECT_NE(message_of(partial).find("AIPERF_INJECTED_API_KEY"), std::string::npos);
}

TEST(commands, bad_injected_json_names_the_variable) {
  auto json = config::to_json(credentialed(), true);
  for (const char* bad : {"not json", "[\"a\"]", R"({"A": 1})"}) {
    auto r = load(json, {{"AIPERF_INJECTED_API_KEY", "k"}, {"AIPERF_INJECTED_HEADERS", bad}});
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(message_of(r).find("AIPERF_INJECTED_HEADERS must be a JSON object"),
              std::string::npos)
      << message_of(r);
  }
  for (const char* bad : {"{}", "[]", "[1]", "nope"}) {
    auto r = load(json, {{"AIPERF_INJECTED_API_KEY", "k"},
                         {"AIPERF_INJECTED_HEADERS", R"({"Authorization":"a","X-Team":"b"})"},
                         {"AIPERF_INJECTED_ENDPOINT_URLS", bad}});
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(message_of(r).find("AIPERF_INJECTED_ENDPOINT_URLS must be"), std::string::npos)
      << message_of(r);
  }
}

TEST(commands, injected_urls_replace_the_run_files_list) {
  auto cfg = credentialed();
  cfg.api_key.reset();
  cfg.headers.clear();
  auto json = config::to_json(cfg, true);
  // A redacted URL (as a generator writes one with user-info) would not
  // pass --url validation: the injected list replaces it first.
  auto pos = json.find("http://127.0.0.1:8000");
  ASSERT_NE(pos, std::string::npos);
  auto redacted = json;
  redacted.replace(pos, 21, "http://<redacted>@127.0.0.1:8000");
  auto missing = load(redacted, {});
  ASSERT_FALSE(missing);
  EXPECT_NE(message_of(missing).find("AIPERF_INJECTED_ENDPOINT_URLS is not set"),
            std::string::npos)
    << message_of(missing);
  auto back = load(redacted, {{"AIPERF_INJECTED_ENDPOINT_URLS",
                               R"(["http://10.0.0.1:8000","http://10.0.0.2:8000"])"}});
  ASSERT_TRUE(back) << message_of(back);
  EXPECT_EQ(back->urls,
            (std::vector<std::string>{"http://10.0.0.1:8000", "http://10.0.0.2:8000"}));
}

} // namespace
