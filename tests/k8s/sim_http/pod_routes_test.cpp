// The front's pod-network side over fakes: a store that answers the pod and
// service objects (as the real one does for pods/log, pods/proxy and
// services/proxy once it has authorized the caller), a kubelet actor, and a
// "pod network" whose sockets are the host's, with a backend HTTP server on
// one of the host's own addresses standing in for a pod.
#include "k8s/api/json.hpp"
#include "k8s/object/status_json.hpp"
#include "k8s/sim/http/front.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/k8s/sim_http/sim_http_client.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <ifaddrs.h>
#include <mutex>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace aiperf::k8s::sim::http {
namespace {

using namespace std::chrono_literals;
using testing::fetch;
using testing::reply;

/// A non-loopback IPv4 address of this host ("" if it has none): the pod
/// proxy refuses loopback addresses, as kube-apiserver does.
std::string host_address() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0)
    return {};
  std::string out;
  for (auto* a = list; a != nullptr && out.empty(); a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET)
      continue;
    auto* in = reinterpret_cast<sockaddr_in*>(a->ifa_addr);
    char buf[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    if (std::string_view{buf}.starts_with("127."))
      continue;
    out = buf;
  }
  ::freeifaddrs(list);
  return out;
}

/// A pod's HTTP server: answers every request with 201 and a body echoing
/// the request line, its headers and body (one request per connection).
class backend {
public:
  backend() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
    ::listen(fd_, 16);
    socklen_t len = sizeof sa;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&sa), &len);
    port_ = ntohs(sa.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~backend() {
    stopping_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::uint16_t port() const { return port_; }

private:
  void run() {
    while (!stopping_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0)
        return;
      std::string in;
      char buf[4096];
      std::size_t need = std::string::npos;
      while (need == std::string::npos || in.size() < need) {
        auto n = ::read(c, buf, sizeof buf);
        if (n <= 0)
          break;
        in.append(buf, static_cast<std::size_t>(n));
        auto end = in.find("\r\n\r\n");
        if (end != std::string::npos && need == std::string::npos) {
          std::size_t length = 0;
          auto cl = in.find("Content-Length: ");
          if (cl != std::string::npos && cl < end)
            length = std::stoul(in.substr(cl + 16));
          need = end + 4 + length;
        }
      }
      std::string body = "echo\n" + in;
      std::string out = "HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\n"
                        "Connection: keep-alive\r\nX-Pod: yes\r\n"
                        "Content-Length: "
                        + std::to_string(body.size()) + "\r\n\r\n" + body;
      ::write(c, out.data(), out.size());
      ::close(c);
    }
  }

  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

/// The host's network as the "pod network".
class host_cluster : public sandbox::cluster {
public:
  const std::string& gateway() const override { return gateway_; }
  const std::string& cidr() const override { return cidr_; }
  std::int32_t init_pid() const override { return 0; }
  caf::expected<int> open_socket(int domain, int type,
                                 int protocol) const override {
    int fd = ::socket(domain, type, protocol);
    if (fd < 0)
      return make_error(errc::transport, "socket failed");
    return fd;
  }

private:
  std::string gateway_ = "10.244.0.1";
  std::string cidr_ = "10.244.0.0/16";
};

struct world {
  std::mutex mutex;
  std::string pod_ip;         // status.podIP of pod "p"
  std::uint16_t pod_port = 0; // its container port
  std::string log_path;
  bool running = true;
  std::vector<std::string> kubelet_calls;
  std::vector<request> store_calls;
};

store_actor::behavior_type fake_store(store_actor::pointer,
                                      std::shared_ptr<world> w) {
  return {
      [w](request& r) -> caf::result<response> {
        std::lock_guard guard{w->mutex};
        w->store_calls.push_back(r);
        if (r.ref.resource == "pods" && r.ref.name == "p") {
          json pod = {
              {"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "ns"}}},
              {"spec",
               {{"containers",
                 json::array({{{"name", "c"},
                               {"ports", json::array({{{"containerPort",
                                                        w->pod_port}}})}}})}}},
              {"status", {{"podIP", w->pod_ip}}}};
          return response{200, pod.dump(), {}};
        }
        if (r.ref.resource == "pods" && r.ref.name == "pending")
          return response{
              200, R"({"kind":"Pod","status":{"phase":"Pending"}})", {}};
        if (r.ref.resource == "services" && r.ref.name == "svc")
          return response{
              200,
              json{{"kind", "Service"},
                   {"spec",
                    {{"ports", json::array({{{"name", "web"},
                                             {"port", 80},
                                             {"targetPort", "http"}}})}}}}
                  .dump(),
              {}};
        if (r.ref.resource == "endpoints" && r.ref.name == "svc")
          return response{
              200,
              json{{"kind", "Endpoints"},
                   {"subsets",
                    json::array(
                        {{{"addresses", json::array({{{"ip", w->pod_ip}}})},
                          {"ports", json::array({{{"name", "web"},
                                                  {"port", w->pod_port}}})}}})}}
                  .dump(),
              {}};
        status st{"NotFound",
                  404,
                  r.ref.resource + " \"" + r.ref.name + "\" not found",
                  {}};
        return make_status_error("fake", st);
      },
      [](watch_atom, request&,
         watch_sink_actor&) -> caf::result<std::uint64_t> {
        return make_status_error("fake",
                                 status{"BadRequest", 400, "no watches", {}});
      },
      [](unwatch_atom, std::uint64_t) {},
      [](authenticate_atom, std::string& token) -> caf::result<user_info> {
        if (token == "secret")
          return user_info{"alice", "u1", {"system:authenticated"}, {}};
        return make_status_error(
            "authenticate", status{"Unauthorized", 401, "Unauthorized", {}});
      },
      [](discovery_atom, std::string&) -> caf::result<response> {
        return make_error(errc::not_found, "no discovery here");
      },
      [](reset_atom, bool) -> std::string { return "1"; },
      [](drop_watches_atom, std::string&) -> std::uint64_t { return 0; },
  };
}

kubelet::kubelet_actor::behavior_type
fake_kubelet(kubelet::kubelet_actor::pointer, std::shared_ptr<world> w) {
  auto record = [w](std::string call) {
    std::lock_guard guard{w->mutex};
    w->kubelet_calls.push_back(std::move(call));
  };
  return {
      [record](kubelet::pod_info_atom, std::string& ns,
               std::string& name) -> caf::result<std::string> {
        record("info " + ns + "/" + name);
        if (name != "p")
          return make_status_error("fake",
                                   status{"NotFound", 404, "pod not here", {}});
        return std::string{
            R"({"pid":42,"podIP":"10.244.0.7","netns":"net:[1]",)"
            R"("containers":[{"name":"c","pid":43,"restartCount":0}]})"};
      },
      [w, record](kubelet::pod_log_atom, std::string& ns, std::string& name,
                  std::string& container,
                  bool previous) -> caf::result<kubelet::pod_log_source> {
        record("log " + ns + "/" + name + " " + container + " "
               + (previous ? "previous" : "current"));
        if (container == "nope")
          return make_status_error(
              "fake", status{"BadRequest",
                             400,
                             "container nope is not valid for pod p",
                             {}});
        std::lock_guard guard{w->mutex};
        return kubelet::pod_log_source{w->log_path, w->running};
      },
      [record](kubelet::kill_atom, std::string& ns, std::string& name,
               std::string& sig) {
        record("kill " + ns + "/" + name + " " + sig);
      },
      [record](kubelet::partition_atom, std::string& ns, std::string& name,
               std::int32_t seconds) {
        record("partition " + ns + "/" + name + " " + std::to_string(seconds));
      },
      [record](kubelet::pod_fault_atom, std::string& doc) {
        record("fault " + doc);
      },
  };
}

class pod_routes_test : public ::testing::Test {
protected:
  void SetUp() override {
    w = std::make_shared<world>();
    w->pod_ip = host_address();
    w->pod_port = pod.port();
    log_path = std::filesystem::temp_directory_path()
               / ("pod_routes_log_" + std::to_string(::getpid()));
    w->log_path = log_path.string();
    std::ofstream{log_path} << "one\ntwo\nthree\n";
    store = sys.spawn(fake_store, w);
    kubelet = sys.spawn(fake_kubelet, w);
    srv = std::make_unique<front>(sys, store, front_options{});
    auto p = srv->start();
    ASSERT_TRUE(p) << error_message(p.error());
    port = *p;
  }
  void TearDown() override {
    srv->stop();
    caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(kubelet, caf::exit_reason::user_shutdown);
    std::filesystem::remove(log_path);
  }
  void with_pods() {
    pod_network net;
    net.cluster = std::make_shared<host_cluster>();
    net.kubelet = kubelet;
    net.unschedulable_fault
        = [this](std::string ns, std::string sel, std::int32_t count,
                 std::function<void(caf::error)> done) {
            {
              std::lock_guard guard{w->mutex};
              w->kubelet_calls.push_back("unschedulable " + ns + " " + sel + " "
                                         + std::to_string(count));
            }
            done(caf::error{});
          };
    srv->set_pod_network(std::move(net));
  }
  std::vector<std::string> kubelet_calls() {
    std::lock_guard guard{w->mutex};
    return w->kubelet_calls;
  }
  std::string message_of(const reply& r) {
    auto st = parse_status(r.body);
    return st ? st->message : "not a Status: " + r.body;
  }

  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  backend pod;
  std::shared_ptr<world> w;
  std::filesystem::path log_path;
  store_actor store;
  kubelet::kubelet_actor kubelet;
  std::unique_ptr<front> srv;
  std::uint16_t port = 0;
};

TEST_F(pod_routes_test, without_a_pod_network_the_routes_name_workloads) {
  auto log = fetch(port, "GET", "/api/v1/namespaces/ns/pods/p/log");
  EXPECT_EQ(log.status, 503u);
  EXPECT_NE(message_of(log).find("--workloads"), std::string::npos);
  auto proxy = fetch(port, "GET", "/api/v1/namespaces/ns/pods/p/proxy/x");
  EXPECT_EQ(proxy.status, 503u);
  auto faults
      = fetch(port, "POST", "/sim/v1/podfaults", R"({"state":"CrashLoop"})");
  EXPECT_EQ(faults.status, 404u);
  EXPECT_NE(message_of(faults).find("--workloads"), std::string::npos);
  // The store still decides first: an unknown pod is its 404.
  auto missing = fetch(port, "GET", "/api/v1/namespaces/ns/pods/q/log");
  EXPECT_EQ(missing.status, 404u);
}

TEST_F(pod_routes_test, pod_proxy_forwards_the_request_and_streams_the_answer) {
  if (w->pod_ip.empty())
    GTEST_SKIP() << "this host has no non-loopback IPv4 address";
  with_pods();
  auto r = fetch(port, "POST",
                 "/api/v1/namespaces/ns/pods/p/proxy/v1/x?a=1&b=2", "hello",
                 {{"Content-Type", "text/plain"},
                  {"Authorization", "Bearer secret"},
                  {"Impersonate-User", "someone"},
                  {"X-Custom", "kept"}});
  ASSERT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(r.headers["x-pod"], "yes");
  EXPECT_EQ(r.headers["connection"], "close");
  EXPECT_EQ(r.headers["audit-id"].size(), 36u);
  EXPECT_TRUE(r.body.starts_with("echo\nPOST /v1/x?a=1&b=2 HTTP/1.1\r\n"))
      << r.body;
  EXPECT_NE(
      r.body.find("Host: " + w->pod_ip + ":" + std::to_string(pod.port())),
      std::string::npos);
  EXPECT_NE(r.body.find("X-Custom: kept"), std::string::npos);
  EXPECT_NE(r.body.find("X-Forwarded-For: 127.0.0.1"), std::string::npos);
  EXPECT_EQ(r.body.find("secret"), std::string::npos);
  EXPECT_EQ(r.body.find("Impersonate"), std::string::npos);
  EXPECT_TRUE(r.body.ends_with("\r\n\r\nhello")) << r.body;
  // The store authorized it as `create pods/proxy` of the impersonated user.
  std::lock_guard guard{w->mutex};
  ASSERT_FALSE(w->store_calls.empty());
  const auto& asked = w->store_calls.back();
  EXPECT_EQ(asked.verb, verb::create);
  EXPECT_EQ(asked.ref.subresource, "proxy");
  EXPECT_EQ(asked.ref.name, "p");
  EXPECT_EQ(asked.impersonate_user, "someone");
}

TEST_F(pod_routes_test, service_proxy_resolves_the_port_as_kube_apiserver) {
  if (w->pod_ip.empty())
    GTEST_SKIP() << "this host has no non-loopback IPv4 address";
  with_pods();
  auto by_number
      = fetch(port, "GET", "/api/v1/namespaces/ns/services/svc:80/proxy/m");
  EXPECT_EQ(by_number.status, 201u) << by_number.body;
  EXPECT_TRUE(by_number.body.starts_with("echo\nGET /m HTTP/1.1"));
  auto by_name = fetch(port, "GET",
                       "/api/v1/namespaces/ns/services/http:svc:web/proxy/n");
  EXPECT_EQ(by_name.status, 201u) << by_name.body;
  auto unknown
      = fetch(port, "GET", "/api/v1/namespaces/ns/services/svc:81/proxy/");
  EXPECT_EQ(unknown.status, 503u);
  EXPECT_EQ(message_of(unknown),
            "no service port 81 found for service \"svc\"");
  auto no_such_name
      = fetch(port, "GET", "/api/v1/namespaces/ns/services/svc:grpc/proxy/");
  EXPECT_EQ(no_such_name.status, 503u);
  EXPECT_EQ(message_of(no_such_name),
            "no endpoints available for service \"svc:grpc\"");
  auto bad
      = fetch(port, "GET", "/api/v1/namespaces/ns/services/a:b:c:d/proxy/");
  EXPECT_EQ(bad.status, 400u);
  EXPECT_EQ(message_of(bad), "invalid service request \"a:b:c:d\"");
}

TEST_F(pod_routes_test, dial_failures_and_addresses_as_kube_apiserver) {
  if (w->pod_ip.empty())
    GTEST_SKIP() << "this host has no non-loopback IPv4 address";
  with_pods();
  // A port nobody listens on.
  int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  ::bind(probe, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
  socklen_t len = sizeof sa;
  ::getsockname(probe, reinterpret_cast<sockaddr*>(&sa), &len);
  const auto closed = std::to_string(ntohs(sa.sin_port));
  ::close(probe);
  auto refused = fetch(port, "GET",
                       "/api/v1/namespaces/ns/pods/p:" + closed + "/proxy/");
  EXPECT_EQ(refused.status, 503u);
  EXPECT_EQ(message_of(refused), "error trying to reach service: dial tcp "
                                     + w->pod_ip + ":" + closed
                                     + ": connect: connection refused");
  auto pending
      = fetch(port, "GET", "/api/v1/namespaces/ns/pods/pending/proxy/");
  EXPECT_EQ(pending.status, 400u);
  EXPECT_EQ(message_of(pending), "address not allowed");
  auto tls
      = fetch(port, "GET", "/api/v1/namespaces/ns/pods/https:p:443/proxy/");
  EXPECT_EQ(tls.status, 503u);
  auto redirect = fetch(port, "GET", "/api/v1/namespaces/ns/pods/p/proxy?q=1");
  EXPECT_EQ(redirect.status, 301u);
  EXPECT_EQ(redirect.headers["location"],
            "/api/v1/namespaces/ns/pods/p/proxy/?q=1");
}

TEST_F(pod_routes_test, logs_tail_limit_and_follow) {
  with_pods();
  {
    std::lock_guard guard{w->mutex};
    w->running = false;
  }
  auto all = fetch(port, "GET", "/api/v1/namespaces/ns/pods/p/log");
  EXPECT_EQ(all.status, 200u);
  EXPECT_EQ(all.headers["content-type"], "text/plain");
  EXPECT_EQ(all.body, "one\ntwo\nthree\n");
  auto tail = fetch(port, "GET",
                    "/api/v1/namespaces/ns/pods/p/log?tailLines=2&container=c");
  EXPECT_EQ(tail.body, "two\nthree\n");
  auto limited
      = fetch(port, "GET", "/api/v1/namespaces/ns/pods/p/log?limitBytes=5");
  EXPECT_EQ(limited.body, "one\nt");
  auto previous
      = fetch(port, "GET", "/api/v1/namespaces/ns/pods/p/log?previous=true");
  EXPECT_EQ(previous.status, 200u);
  EXPECT_EQ(kubelet_calls().back(), "log ns/p  previous");
  auto bad_tail
      = fetch(port, "GET", "/api/v1/namespaces/ns/pods/p/log?tailLines=-1");
  EXPECT_EQ(bad_tail.status, 422u);
  EXPECT_EQ(
      message_of(bad_tail),
      "PodLogOptions \"p\" is invalid: tailLines: Invalid value: -1: must "
      "be greater than or equal to 0");
  auto refused
      = fetch(port, "GET", "/api/v1/namespaces/ns/pods/p/log?container=nope");
  EXPECT_EQ(refused.status, 400u);
  EXPECT_EQ(message_of(refused), "container nope is not valid for pod p");
  auto post = fetch(port, "POST", "/api/v1/namespaces/ns/pods/p/log", "{}");
  EXPECT_EQ(post.status, 405u);

  // follow: what is appended while the container runs, then the end.
  {
    std::lock_guard guard{w->mutex};
    w->running = true;
  }
  testing::stream_reader follow{port,
                                "/api/v1/namespaces/ns/pods/p/log?follow=true"};
  EXPECT_EQ(follow.wait_lines(3, 5s).size(), 3u);
  std::ofstream{log_path, std::ios::app} << "four\n";
  auto lines = follow.wait_lines(4, 5s);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[3], "four");
  {
    std::lock_guard guard{w->mutex};
    w->running = false;
  }
  // The front asks the kubelet about once a second whether it still runs.
  for (int i = 0; i < 50 && !follow.clean_end(); ++i)
    std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(follow.clean_end());
}

TEST_F(pod_routes_test, sim_pod_routes_reach_the_kubelet_and_the_scheduler) {
  with_pods();
  auto fault = fetch(
      port, "POST", "/sim/v1/podfaults",
      R"({"namespace":"bench","labelSelector":"app=w","state":"CrashLoop","count":2})");
  EXPECT_EQ(fault.status, 201u) << fault.body;
  EXPECT_EQ(json::parse(fault.body)["count"], 2);
  auto unsched = fetch(port, "POST", "/sim/v1/podfaults",
                       R"({"namespace":"bench","state":"Unschedulable"})");
  EXPECT_EQ(unsched.status, 201u) << unsched.body;
  auto bad = fetch(port, "POST", "/sim/v1/podfaults", R"({"state":"Sleepy"})");
  EXPECT_EQ(bad.status, 400u);
  EXPECT_NE(message_of(bad).find("Sleepy"), std::string::npos);
  auto kill = fetch(port, "POST", "/sim/v1/namespaces/ns/pods/p:kill",
                    R"({"signal":"TERM"})");
  EXPECT_EQ(kill.status, 200u);
  auto part = fetch(port, "POST", "/sim/v1/namespaces/ns/pods/p:partition",
                    R"({"seconds":20})");
  EXPECT_EQ(part.status, 200u);
  auto no_seconds
      = fetch(port, "POST", "/sim/v1/namespaces/ns/pods/p:partition", "{}");
  EXPECT_EQ(no_seconds.status, 400u);
  auto info = fetch(port, "GET", "/sim/v1/namespaces/ns/pods/p");
  EXPECT_EQ(info.status, 200u);
  EXPECT_EQ(json::parse(info.body)["pid"], 42);
  auto gone = fetch(port, "GET", "/sim/v1/namespaces/ns/pods/q");
  EXPECT_EQ(gone.status, 404u);
  const std::vector<std::string> expected = {
      R"(fault {"namespace":"bench","labelSelector":"app=w","state":"CrashLoop","count":2})",
      "unschedulable bench  1",
      "kill ns/p TERM",
      "partition ns/p 20",
      "info ns/p",
      "info ns/q"};
  EXPECT_EQ(kubelet_calls(), expected);
}

} // namespace
} // namespace aiperf::k8s::sim::http
