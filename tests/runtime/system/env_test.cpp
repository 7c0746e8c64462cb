#include "runtime/system/env.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace aiperf::system;

// The message of a failed read ("" on success).
template <class T> std::string message_of(const caf::expected<T>& r) {
  return r ? std::string{} : aiperf::error_message(r.error());
}

// The env_errors of a failed read (none on success).
template <class T>
std::vector<env_error> errors_of(const caf::expected<T>& r) {
  if (r)
    return {};
  EXPECT_TRUE(aiperf::is_error(r.error(), errc::bad_env)) << message_of(r);
  if (const auto* errors
      = aiperf::error_payload<std::vector<env_error>>(r.error()))
    return *errors;
  ADD_FAILURE() << "no env_error payload: " << message_of(r);
  return {};
}

// The one error of `r`, for tests of a single failure path.
template <class T> env_error only_error(const caf::expected<T>& r) {
  auto errors = errors_of(r);
  EXPECT_EQ(errors.size(), 1u) << message_of(r);
  if (errors.empty())
    return {};
  return errors.front();
}

TEST(pod_env, defaults_when_nothing_is_set) {
  auto r = read_pod_env(map_env({}));
  ASSERT_TRUE(r) << message_of(r);
  EXPECT_EQ(r->ports, (pod_ports{9090, 8080, 5667, 5668, 5669, 5670}));
  EXPECT_FALSE(r->controller_host);
  EXPECT_FALSE(r->pod_index);
  EXPECT_FALSE(r->job_id);
  EXPECT_EQ(r->pod_failure_abort_threshold_percent, 50.0);
}

TEST(pod_env, reads_every_variable) {
  auto r = read_pod_env(map_env({
      {"AIPERF_K8S_PORT_API", "19090"},
      {"AIPERF_K8S_PORT_HEALTH", "18080"},
      {"AIPERF_K8S_PORT_CONTROL", "0"},
      {"AIPERF_K8S_PORT_CREDIT", "0"},
      {"AIPERF_K8S_PORT_CREDIT_RETURN", "65535"},
      {"AIPERF_K8S_PORT_RECORDS", "1"},
      {"AIPERF_K8S_ZMQ_CONTROLLER_HOST", "job-controller-0-0.job.ns"},
      {"AIPERF_POD_INDEX", "7"},
      {"AIPERF_JOB_ID", "bench-42.a_b"},
      {"AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT", "12.5"},
  }));
  ASSERT_TRUE(r) << message_of(r);
  // Several ports may be 0 (ephemeral) at once: only non-zero ports clash.
  EXPECT_EQ(r->ports, (pod_ports{19090, 18080, 0, 0, 65535, 1}));
  EXPECT_EQ(r->controller_host, "job-controller-0-0.job.ns");
  EXPECT_EQ(r->pod_index, 7u);
  EXPECT_EQ(r->job_id, "bench-42.a_b");
  EXPECT_EQ(r->pod_failure_abort_threshold_percent, 12.5);
}

TEST(pod_env, reads_the_process_environment) {
  ::setenv("AIPERF_K8S_PORT_RECORDS", "15670", 1);
  auto r = read_pod_env(process_env());
  ::unsetenv("AIPERF_K8S_PORT_RECORDS");
  ASSERT_TRUE(r) << message_of(r);
  EXPECT_EQ(r->ports.records, 15670);
}

class bad_port : public ::testing::TestWithParam<const char*> {};

TEST_P(bad_port, is_rejected_naming_the_variable_and_the_fix) {
  auto r = read_pod_env(map_env({{"AIPERF_K8S_PORT_HEALTH", GetParam()}}));
  ASSERT_FALSE(r);
  const auto& e = only_error(r);
  EXPECT_EQ(e.variable, "AIPERF_K8S_PORT_HEALTH");
  EXPECT_EQ(e.message.rfind("AIPERF_K8S_PORT_HEALTH=", 0), 0u) << e.message;
  EXPECT_NE(e.message.find("0..65535"), std::string::npos) << e.message;
}

INSTANTIATE_TEST_SUITE_P(pod_env, bad_port,
                         ::testing::Values("", "abc", "-1", "+80", " 80", "80 ",
                                           "65536", "99999999999", "8080x",
                                           "0x50"));

TEST(pod_env, equal_ports_are_rejected) {
  auto r = read_pod_env(map_env({{"AIPERF_K8S_PORT_RECORDS", "9090"}}));
  const auto& e = only_error(r);
  EXPECT_EQ(e.variable, "AIPERF_K8S_PORT_RECORDS");
  EXPECT_NE(e.message.find("AIPERF_K8S_PORT_API"), std::string::npos)
      << e.message;
  EXPECT_NE(e.message.find("9090"), std::string::npos) << e.message;
}

TEST(pod_env, bad_controller_host_is_rejected) {
  for (const char* host : {"", "http://controller", "a b", "host/path"}) {
    auto r = read_pod_env(map_env({{"AIPERF_K8S_ZMQ_CONTROLLER_HOST", host}}));
    EXPECT_EQ(only_error(r).variable, "AIPERF_K8S_ZMQ_CONTROLLER_HOST") << host;
  }
}

TEST(pod_env, bad_pod_index_is_rejected) {
  for (const char* index : {"", "-1", "one", "4294967296", "1.0"}) {
    auto r = read_pod_env(map_env({{"AIPERF_POD_INDEX", index}}));
    const auto& e = only_error(r);
    EXPECT_EQ(e.variable, "AIPERF_POD_INDEX") << index;
    EXPECT_NE(e.message.find("non-negative integer"), std::string::npos);
  }
}

TEST(pod_env, bad_job_id_is_rejected) {
  const std::vector<std::string> ids{"", "..", "a/b", "job id",
                                     std::string(254, 'a')};
  for (const auto& id : ids) {
    auto r = read_pod_env(map_env({{"AIPERF_JOB_ID", id}}));
    EXPECT_EQ(only_error(r).variable, "AIPERF_JOB_ID") << id;
  }
}

TEST(pod_env, bad_abort_threshold_is_rejected) {
  for (const char* pct : {"", "-0.5", "100.1", "nan", "inf", "10%", "ten"}) {
    auto r = read_pod_env(
        map_env({{"AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT", pct}}));
    const auto& e = only_error(r);
    EXPECT_EQ(e.variable, "AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT") << pct;
    EXPECT_NE(e.message.find("0..100"), std::string::npos) << e.message;
  }
}

TEST(pod_env, every_error_is_reported_at_once) {
  auto r = read_pod_env(map_env({{"AIPERF_K8S_PORT_API", "x"},
                                 {"AIPERF_POD_INDEX", "y"},
                                 {"AIPERF_JOB_ID", "a/b"}}));
  ASSERT_EQ(errors_of(r).size(), 3u) << message_of(r);
  EXPECT_NE(message_of(r).find("AIPERF_K8S_PORT_API"), std::string::npos);
  EXPECT_NE(message_of(r).find("AIPERF_POD_INDEX"), std::string::npos);
  EXPECT_NE(message_of(r).find("AIPERF_JOB_ID"), std::string::npos);
}

TEST(pod_env, port_variable_names) {
  EXPECT_EQ(port_variable("api"), "AIPERF_K8S_PORT_API");
  EXPECT_EQ(port_variable("credit_return"), "AIPERF_K8S_PORT_CREDIT_RETURN");
  EXPECT_FALSE(port_variable("nope"));
}

TEST(parse_port, accepts_the_whole_range) {
  EXPECT_EQ(*parse_port("X", "0"), 0);
  EXPECT_EQ(*parse_port("X", "00080"), 80);
  EXPECT_EQ(*parse_port("X", "65535"), 65535);
}

TEST(secrets, declared_secrets_are_read) {
  std::vector<std::string> declared{"API_KEY", "HEADER_X_TEAM"};
  auto r = read_secrets(declared,
                        map_env({{"AIPERF_INJECTED_API_KEY", "sk-123"},
                                 {"AIPERF_INJECTED_HEADER_X_TEAM", "perf"},
                                 {"AIPERF_INJECTED_UNDECLARED", "x"}}));
  ASSERT_TRUE(r) << message_of(r);
  ASSERT_NE(r->find("API_KEY"), nullptr);
  EXPECT_EQ(*r->find("API_KEY"), "sk-123");
  EXPECT_EQ(*r->find("HEADER_X_TEAM"), "perf");
  // Only declared secrets are picked up.
  EXPECT_EQ(r->find("UNDECLARED"), nullptr);
  EXPECT_EQ(r->values.size(), 2u);
}

TEST(secrets, nothing_declared_needs_nothing) {
  auto r = read_secrets({}, map_env({}));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->values.empty());
}

TEST(secrets, missing_secret_fails_closed_naming_the_variable) {
  std::vector<std::string> declared{"API_KEY"};
  auto r = read_secrets(declared, map_env({}));
  EXPECT_FALSE(r);
  const auto& e = only_error(r);
  EXPECT_EQ(e.variable, "AIPERF_INJECTED_API_KEY");
  EXPECT_NE(e.message.find("AIPERF_INJECTED_API_KEY is not set"),
            std::string::npos)
      << e.message;
  EXPECT_NE(e.message.find("secretKeyRef"), std::string::npos) << e.message;
}

TEST(secrets, empty_secret_fails_closed) {
  std::vector<std::string> declared{"API_KEY"};
  auto r = read_secrets(declared, map_env({{"AIPERF_INJECTED_API_KEY", ""}}));
  EXPECT_FALSE(r);
  EXPECT_NE(only_error(r).message.find("empty"), std::string::npos);
}

TEST(secrets, one_missing_secret_fails_all_without_leaking_values) {
  std::vector<std::string> declared{"API_KEY", "TOKEN"};
  auto r = read_secrets(declared,
                        map_env({{"AIPERF_INJECTED_API_KEY", "sk-secret"}}));
  EXPECT_FALSE(r);
  EXPECT_EQ(only_error(r).variable, "AIPERF_INJECTED_TOKEN");
  EXPECT_EQ(message_of(r).find("sk-secret"), std::string::npos);
}

TEST(secrets, invalid_declared_name_is_rejected) {
  for (const char* name : {"", "api_key", "API-KEY", "A B"}) {
    std::vector<std::string> declared{name};
    auto r = read_secrets(declared, map_env({}));
    const auto& e = only_error(r);
    EXPECT_NE(e.message.find("[A-Z0-9_]+"), std::string::npos) << name;
  }
}

} // namespace
