#include "runtime/zmq_bridge/settings.hpp"

#include <gtest/gtest.h>

#include <map>

namespace aiperf::zmq_bridge {
namespace {

env_lookup fake_env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto i = vars.find(name);
    return i == vars.end() ? nullptr : i->second.c_str();
  };
}

TEST(settings, default_ports_are_the_documented_ones) {
  port_config p;
  EXPECT_EQ(p.api, 9090);
  EXPECT_EQ(p.health, 8080);
  EXPECT_EQ(p.of(channel::control), 5667);
  EXPECT_EQ(p.of(channel::credit), 5668);
  EXPECT_EQ(p.of(channel::credit_return), 5669);
  EXPECT_EQ(p.of(channel::records), 5670);
}

TEST(settings, port_env_overrides_each_port) {
  port_config p;
  auto err = apply_port_env(
    p, fake_env({{"AIPERF_K8S_PORT_API", "1"}, {"AIPERF_K8S_PORT_HEALTH", "2"},
                 {"AIPERF_K8S_PORT_CONTROL", "0"},
                 {"AIPERF_K8S_PORT_CREDIT", "4"},
                 {"AIPERF_K8S_PORT_CREDIT_RETURN", "5"},
                 {"AIPERF_K8S_PORT_RECORDS", "65535"}}));
  ASSERT_FALSE(err) << *err;
  EXPECT_EQ(p.api, 1);
  EXPECT_EQ(p.health, 2);
  EXPECT_EQ(p.control, 0);
  EXPECT_EQ(p.credit, 4);
  EXPECT_EQ(p.credit_return, 5);
  EXPECT_EQ(p.records, 65535);
}

TEST(settings, bad_port_env_names_the_variable_and_changes_nothing) {
  for (const char* bad : {"", "70000", "-1", "12ab", " 5"}) {
    port_config p;
    auto err = apply_port_env(p, fake_env({{"AIPERF_K8S_PORT_API", "1"},
                                           {"AIPERF_K8S_PORT_RECORDS", bad}}));
    ASSERT_TRUE(err) << bad;
    EXPECT_NE(err->find("AIPERF_K8S_PORT_RECORDS"), std::string::npos);
    EXPECT_NE(err->find("0-65535"), std::string::npos);
    EXPECT_EQ(p.api, 9090) << "partial update applied";
  }
}

TEST(settings, controller_host_uses_only_the_zmq_spelling) {
  EXPECT_FALSE(controller_host_from_env(
    fake_env({{"AIPERF_K8S_CONTROLLER_HOST", "ctl"}})));
  EXPECT_FALSE(controller_host_from_env(
    fake_env({{"AIPERF_K8S_ZMQ_CONTROLLER_HOST", ""}})));
  EXPECT_EQ(controller_host_from_env(
              fake_env({{"AIPERF_K8S_ZMQ_CONTROLLER_HOST", "ctl.svc"}})),
            "ctl.svc");
}

TEST(settings, worker_endpoints_tcp_with_host_else_ipc_else_tcp) {
  bound_endpoints bound;
  bound.tcp = {"tcp://0.0.0.0:1", "tcp://0.0.0.0:2", "tcp://0.0.0.0:3",
               "tcp://0.0.0.0:4"};
  port_config ports;
  ports.credit = 7000;
  auto k8s = select_worker_endpoints(std::string{"ctl"}, ports, bound);
  EXPECT_EQ(k8s.control, "tcp://ctl:5667");
  EXPECT_EQ(k8s.credit, "tcp://ctl:7000");
  EXPECT_EQ(k8s.records, "tcp://ctl:5670");
  EXPECT_EQ(select_worker_endpoints(std::string{"::1"}, ports, bound).control,
            "tcp://[::1]:5667");
  EXPECT_EQ(select_worker_endpoints(std::nullopt, ports, bound).credit,
            "tcp://0.0.0.0:2");
  bound.ipc = {"ipc:///d/control.ipc", "ipc:///d/credit.ipc",
               "ipc:///d/credit_return.ipc", "ipc:///d/records.ipc"};
  auto local = select_worker_endpoints(std::nullopt, ports, bound);
  EXPECT_EQ(local.control, "ipc:///d/control.ipc");
  EXPECT_EQ(local.credit_return, "ipc:///d/credit_return.ipc");
}

TEST(settings, ipc_endpoint_names_the_channel_and_checks_the_length) {
  std::string err;
  EXPECT_EQ(ipc_endpoint("/tmp/x/", channel::credit_return, &err),
            "ipc:///tmp/x/credit_return.ipc");
  EXPECT_FALSE(ipc_endpoint(std::string(100, 'd'), channel::control, &err));
  EXPECT_NE(err.find("ipc_dir"), std::string::npos);
}

TEST(settings, probe_schedule_spends_its_budget_then_degrades) {
  using namespace std::chrono_literals;
  probe_schedule::time_point t0{};
  probe_schedule s{{3, 10ms}, t0};
  EXPECT_TRUE(s.due(t0));
  EXPECT_FALSE(s.failed_attempt(t0));
  EXPECT_FALSE(s.due(t0 + 9ms));
  EXPECT_TRUE(s.due(t0 + 10ms));
  EXPECT_FALSE(s.failed_attempt(t0 + 10ms));
  EXPECT_TRUE(s.failed_attempt(t0 + 20ms));
  EXPECT_EQ(s.attempts(), 3u);
  EXPECT_EQ(s.next_attempt(), t0 + 30ms);
}

} // namespace
} // namespace aiperf::zmq_bridge
