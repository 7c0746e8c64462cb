// The cluster DNS server over real sockets (label integration): a store
// with a headless Service and its pods, the EndpointSlice controller, and
// the server on sockets the test binds itself; queries by a small resolver
// of the test's own over UDP and TCP, and by glibc (`getent hosts`) in a
// network namespace whose /etc/resolv.conf names the server.
#include "k8s/api/json.hpp"
#include "k8s/sim/dns/codec.hpp"
#include "k8s/sim/dns/dns.hpp"
#include "k8s/sim/endpoints/endpoints.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"
#include "tests/support/skip.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace aiperf::k8s::sim {
namespace {

using bytes = std::vector<std::uint8_t>;

const resource_ref pods_ref{"", "v1", "pods", "default", "", ""};
const resource_ref services_ref{"", "v1", "services", "default", "", ""};

int bound_socket(int type, std::uint16_t port) {
  int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0
      || (type == SOCK_STREAM && ::listen(fd, 16) != 0)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::uint16_t port_of(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

// Waits (up to 5 s) for the fd to be readable.
bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 5000) == 1;
}

// One datagram to the server, its answer back ({} on timeout).
bytes udp_exchange(std::uint16_t port, const bytes& out) {
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  auto addr = loopback(port);
  ::sendto(fd, out.data(), out.size(), 0, reinterpret_cast<sockaddr*>(&addr),
           sizeof addr);
  bytes in(65536);
  ssize_t n = -1;
  if (readable(fd))
    n = ::recv(fd, in.data(), in.size(), 0);
  ::close(fd);
  in.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return in;
}

bool read_all(int fd, std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    if (!readable(fd))
      return false;
    auto got = ::recv(fd, p, n, 0);
    if (got <= 0)
      return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

// Queries over one TCP connection, each with its length prefix.
std::vector<bytes> tcp_exchange(std::uint16_t port,
                                const std::vector<bytes>& queries) {
  std::vector<bytes> answers;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto addr = loopback(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return answers;
  }
  for (const auto& q : queries) {
    bytes framed = {static_cast<std::uint8_t>(q.size() >> 8),
                    static_cast<std::uint8_t>(q.size() & 0xFF)};
    framed.insert(framed.end(), q.begin(), q.end());
    ::send(fd, framed.data(), framed.size(), MSG_NOSIGNAL);
    std::uint8_t len[2];
    if (!read_all(fd, len, 2))
      break;
    bytes body((len[0] << 8) | len[1]);
    if (!read_all(fd, body.data(), body.size()))
      break;
    answers.push_back(std::move(body));
  }
  ::close(fd);
  return answers;
}

dns::decoded_message decode(const bytes& b) {
  auto m = dns::decode_message(b.data(), b.size());
  EXPECT_TRUE(m.has_value()) << "an answer of " << b.size() << " octets";
  return m ? *m : dns::decoded_message{};
}

std::vector<std::string> addresses(const dns::decoded_message& m) {
  std::vector<std::string> out;
  for (const auto& r : m.answers)
    if (r.rtype == dns::type::a)
      out.push_back(r.text);
  return out;
}

struct dns_server : caf_gtest::fixture<> {
  store_actor store;
  api_actor api;
  caf::actor slices;
  std::unique_ptr<dns::dns_server> server;

  dns_server() {
    store_config cfg;
    cfg.start_unix_seconds = 1'795'000'000;
    auto s = spawn_store(sys, cfg);
    EXPECT_TRUE(s);
    store = *s;
    api = caf::actor_cast<api_actor>(store);
    slices
        = caf::actor_cast<caf::actor>(spawn_endpointslice_controller(sys, api));
    drain();
  }

  ~dns_server() override {
    if (server)
      server->stop();
    caf::anon_send_exit(slices, caf::exit_reason::user_shutdown);
  }

  void call(verb v, resource_ref ref, const json& body,
            patch_type pt = patch_type::none) {
    k8s::request r;
    r.verb = v;
    r.ref = std::move(ref);
    r.patch = pt;
    r.body = body.dump();
    auto res = request<response>(api, r);
    ASSERT_TRUE(res) << error_message(res.error());
    drain();
  }

  // A headless Service `run` (named port http) and `pods` ready pods
  // `run-w-<i>` with hostname and subdomain, at 10.1.0.(10+i).
  void populate(int pods) {
    call(
        verb::create, services_ref,
        json{{"apiVersion", "v1"},
             {"kind", "Service"},
             {"metadata", {{"name", "run"}, {"namespace", "default"}}},
             {"spec",
              {{"clusterIP", "None"},
               {"selector", {{"app", "run"}}},
               {"ports", json::array({{{"name", "http"}, {"port", 8000}}})}}}});
    for (int i = 0; i < pods; ++i) {
      auto name = "run-w-" + std::to_string(i);
      call(verb::create, pods_ref,
           json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", name},
                  {"namespace", "default"},
                  {"labels", {{"app", "run"}}}}},
                {"spec",
                 {{"nodeName", "sim-node-0"},
                  {"hostname", name},
                  {"subdomain", "run"},
                  {"containers",
                   json::array({{{"name", "c"}, {"image", "x:1"}}})}}}});
      set_ready(name, "10.1.0." + std::to_string(10 + i), true);
    }
  }

  void set_ready(const std::string& name, const std::string& ip, bool ready) {
    json status = {
        {"phase", "Running"},
        {"podIP", ip},
        {"podIPs", json::array({{{"ip", ip}}})},
        {"conditions", json::array({{{"type", "Ready"},
                                     {"status", ready ? "True" : "False"}}})}};
    auto ref = pods_ref;
    ref.name = name;
    ref.subresource = "status";
    call(verb::patch, ref, json{{"status", status}}, patch_type::merge);
  }

  void start(int udp_fd, int tcp_fd) {
    dns::dns_config cfg;
    cfg.udp_fd = udp_fd;
    cfg.tcp_fd = tcp_fd;
    cfg.api_server_address = "10.1.0.1";
    auto s = dns::start_dns(sys, api, cfg);
    ASSERT_TRUE(s) << error_message(s.error());
    server = std::move(*s);
    drain();
    ASSERT_TRUE(server->ready());
  }
};

TEST_F(dns_server, answers_over_udp_and_tcp_from_the_store) {
  populate(2);
  int udp_fd = bound_socket(SOCK_DGRAM, 0);
  int tcp_fd = bound_socket(SOCK_STREAM, 0);
  ASSERT_GE(udp_fd, 0);
  ASSERT_GE(tcp_fd, 0);
  auto udp_port = port_of(udp_fd);
  auto tcp_port = port_of(tcp_fd);
  start(udp_fd, tcp_fd);

  auto m = decode(udp_exchange(
      udp_port,
      dns::encode_query(11, "run.default.svc.cluster.local", dns::type::a)));
  EXPECT_EQ(m.id, 11);
  EXPECT_EQ(m.code(), dns::rcode::noerror);
  EXPECT_EQ(addresses(m), (std::vector<std::string>{"10.1.0.10", "10.1.0.11"}));

  m = decode(udp_exchange(
      udp_port, dns::encode_query(12, "run-w-1.run.default.svc.cluster.local",
                                  dns::type::a)));
  EXPECT_EQ(addresses(m), std::vector<std::string>{"10.1.0.11"});

  // A pod that stops being ready leaves the answers once the slice says so.
  set_ready("run-w-1", "10.1.0.11", false);
  m = decode(udp_exchange(
      udp_port,
      dns::encode_query(14, "run.default.svc.cluster.local", dns::type::a)));
  EXPECT_EQ(addresses(m), std::vector<std::string>{"10.1.0.10"});
  set_ready("run-w-1", "10.1.0.11", true);

  m = decode(udp_exchange(
      udp_port,
      dns::encode_query(13, "nope.default.svc.cluster.local", dns::type::a)));
  EXPECT_EQ(m.code(), dns::rcode::nxdomain);
  ASSERT_EQ(m.authority.size(), 1u);
  EXPECT_EQ(m.authority[0].rtype, dns::type::soa);

  // A datagram that is no DNS message gets FORMERR with its id.
  bytes junk = {0x42, 0x42, 0x01, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0x3F};
  m = decode(udp_exchange(udp_port, junk));
  EXPECT_EQ(m.id, 0x4242);
  EXPECT_EQ(m.code(), dns::rcode::formerr);

  // Two queries on one TCP connection.
  auto answers = tcp_exchange(
      tcp_port,
      {dns::encode_query(21, "run.default.svc.cluster.local", dns::type::a),
       dns::encode_query(22, "_http._tcp.run.default.svc.cluster.local",
                         dns::type::srv)});
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(addresses(decode(answers[0])).size(), 2u);
  auto srv = decode(answers[1]);
  EXPECT_EQ(srv.id, 22);
  ASSERT_EQ(srv.answers.size(), 2u);
  EXPECT_EQ(srv.answers[0].text,
            "0 50 8000 run-w-0.run.default.svc.cluster.local");
  EXPECT_GE(server->stats().queries, 5u);
  EXPECT_GE(server->stats().malformed, 1u);
}

TEST_F(dns_server, a_large_answer_is_truncated_over_udp_and_whole_over_tcp) {
  populate(40); // 40 A records: 30 + 40 * 16 octets > 512
  int udp_fd = bound_socket(SOCK_DGRAM, 0);
  int tcp_fd = bound_socket(SOCK_STREAM, 0);
  auto udp_port = port_of(udp_fd);
  auto tcp_port = port_of(tcp_fd);
  start(udp_fd, tcp_fd);
  auto q = dns::encode_query(5, "run.default.svc.cluster.local", dns::type::a);
  auto m = decode(udp_exchange(udp_port, q));
  EXPECT_TRUE(m.flags & dns::flag::tc);
  EXPECT_TRUE(m.answers.empty());
  EXPECT_EQ(server->stats().truncated, 1u);
  auto answers = tcp_exchange(tcp_port, {q});
  ASSERT_EQ(answers.size(), 1u);
  auto whole = decode(answers[0]);
  EXPECT_FALSE(whole.flags & dns::flag::tc);
  EXPECT_EQ(addresses(whole).size(), 40u);
}

TEST_F(dns_server, a_broken_tcp_message_closes_only_its_connection) {
  populate(1);
  int udp_fd = bound_socket(SOCK_DGRAM, 0);
  int tcp_fd = bound_socket(SOCK_STREAM, 0);
  auto tcp_port = port_of(tcp_fd);
  start(udp_fd, tcp_fd);
  // Five octets that are no header: no answer, the connection closes.
  EXPECT_TRUE(tcp_exchange(tcp_port, {bytes{1, 2, 3, 4, 5}}).empty());
  // A header whose question runs past the message: FORMERR, and the
  // connection carries the next query.
  bytes cut
      = dns::encode_query(31, "run.default.svc.cluster.local", dns::type::a);
  cut.resize(20);
  auto answers = tcp_exchange(
      tcp_port, {cut, dns::encode_query(32, "run.default.svc.cluster.local",
                                        dns::type::a)});
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(decode(answers[0]).code(), dns::rcode::formerr);
  EXPECT_EQ(decode(answers[0]).id, 31);
  EXPECT_EQ(addresses(decode(answers[1])),
            std::vector<std::string>{"10.1.0.10"});
}

TEST_F(dns_server, refuses_fds_that_are_not_its_sockets) {
  dns::dns_config cfg;
  auto none = dns::start_dns(sys, api, cfg);
  ASSERT_FALSE(none);
  EXPECT_TRUE(is_error(none.error(), dns::errc::bad_socket));
  int tcp_fd = bound_socket(SOCK_STREAM, 0);
  cfg.udp_fd = tcp_fd; // a stream socket where a datagram one belongs
  auto wrong = dns::start_dns(sys, api, cfg);
  ASSERT_FALSE(wrong);
  EXPECT_NE(error_message(wrong.error()).find("fd " + std::to_string(tcp_fd)),
            std::string::npos);
  ::close(tcp_fd);
}

// Sockets on 127.0.0.1:53 in a network namespace of their own, made by a
// thread (network namespaces are per thread) that leaves the process's
// other threads where they are.
struct netns_sockets {
  int ns_fd = -1;
  int udp_fd = -1;
  int tcp_fd = -1;
  std::string error;
};

netns_sockets sockets_in_new_netns() {
  netns_sockets out;
  std::thread t([&out] {
    if (::unshare(CLONE_NEWNET) != 0) {
      out.error = std::string{"unshare(CLONE_NEWNET): "} + std::strerror(errno);
      return;
    }
    int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ifreq ifr{};
    std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    if (::ioctl(s, SIOCGIFFLAGS, &ifr) != 0
        || (ifr.ifr_flags |= IFF_UP, ::ioctl(s, SIOCSIFFLAGS, &ifr) != 0))
      out.error = std::string{"bringing lo up: "} + std::strerror(errno);
    ::close(s);
    out.udp_fd = bound_socket(SOCK_DGRAM, 53);
    out.tcp_fd = bound_socket(SOCK_STREAM, 53);
    out.ns_fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (out.udp_fd < 0 || out.tcp_fd < 0 || out.ns_fd < 0)
      out.error = std::string{"binding 127.0.0.1:53: "} + std::strerror(errno);
  });
  t.join();
  return out;
}

// Runs `command` with sh, returns its exit status and stdout.
std::pair<int, std::string> run(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr)
    return {-1, out};
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr)
    out += buf;
  int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_F(dns_server, glibc_resolves_cluster_names_with_the_pods_resolv_conf) {
  if (::geteuid() != 0)
    AIPERF_SKIP_OR_FAIL("root (network and mount namespaces)",
                        "run the integration tests as root");
  if (run("command -v unshare nsenter getent >/dev/null").first != 0)
    AIPERF_SKIP_OR_FAIL("unshare, nsenter or getent",
                        aiperf::test::bootstrap_hint("util-linux"));
  auto ns = sockets_in_new_netns();
  if (!ns.error.empty())
    AIPERF_SKIP_OR_FAIL(ns.error, "run where network namespaces work");
  populate(2);
  start(ns.udp_fd, ns.tcp_fd);

  namespace fs = std::filesystem;
  auto dir
      = fs::path(::testing::TempDir()) / ("dns-" + std::to_string(getpid()));
  fs::create_directories(dir);
  {
    std::ofstream resolv(dir / "resolv.conf");
    resolv << "nameserver 127.0.0.1\n"
              "search default.svc.cluster.local svc.cluster.local "
              "cluster.local\n"
              "options ndots:5 timeout:2 attempts:2\n";
    std::ofstream nss(dir / "nsswitch.conf");
    nss << "hosts: dns\n";
  }
  auto getent = [&](const std::string& name) {
    auto netns = "/proc/" + std::to_string(getpid()) + "/fd/"
                 + std::to_string(ns.ns_fd);
    auto cmd = "timeout 30 nsenter --net=" + netns
               + " unshare --mount sh -c 'mount --bind "
               + (dir / "resolv.conf").string()
               + " /etc/resolv.conf && mount --bind "
               + (dir / "nsswitch.conf").string()
               + " /etc/nsswitch.conf && getent hosts " + name + "' 2>&1";
    return run(cmd);
  };
  auto full = getent("run-w-0.run.default.svc.cluster.local");
  EXPECT_EQ(full.first, 0) << full.second;
  EXPECT_NE(full.second.find("10.1.0.10"), std::string::npos) << full.second;
  // Short names through the search list, as a pod's resolv.conf has it.
  auto short_name = getent("run-w-1.run");
  EXPECT_EQ(short_name.first, 0) << short_name.second;
  EXPECT_NE(short_name.second.find("10.1.0.11"), std::string::npos)
      << short_name.second;
  auto service = getent("run");
  EXPECT_EQ(service.first, 0) << service.second;
  EXPECT_NE(service.second.find("10.1.0.10"), std::string::npos)
      << service.second;
  auto missing = getent("missing.default.svc.cluster.local");
  EXPECT_EQ(missing.first, 2) << missing.second; // getent: not found
  auto api_server = getent("kubernetes.default.svc.cluster.local");
  EXPECT_NE(api_server.second.find("10.1.0.1 "), std::string::npos)
      << api_server.second;
  ::close(ns.ns_fd);
  fs::remove_all(dir);
}

} // namespace
} // namespace aiperf::k8s::sim
