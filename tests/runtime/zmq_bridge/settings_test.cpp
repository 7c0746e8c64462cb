#include "runtime/zmq_bridge/settings.hpp"

#include <gtest/gtest.h>

namespace aiperf::zmq_bridge {
namespace {

TEST(settings, default_ports_are_the_documented_ones) {
  port_config p;
  EXPECT_EQ(p.api, 9090);
  EXPECT_EQ(p.health, 8080);
  EXPECT_EQ(port_of(p, channel::control), 5667);
  EXPECT_EQ(port_of(p, channel::credit), 5668);
  EXPECT_EQ(port_of(p, channel::credit_return), 5669);
  EXPECT_EQ(port_of(p, channel::records), 5670);
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
  auto ok = ipc_endpoint("/tmp/x/", channel::credit_return);
  ASSERT_TRUE(ok);
  EXPECT_EQ(*ok, "ipc:///tmp/x/credit_return.ipc");
  auto too_long = ipc_endpoint(std::string(100, 'd'), channel::control);
  ASSERT_FALSE(too_long);
  EXPECT_TRUE(is_error(too_long.error(), errc::bad_config));
  EXPECT_NE(error_message(too_long.error()).find("ipc_dir"), std::string::npos);
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
