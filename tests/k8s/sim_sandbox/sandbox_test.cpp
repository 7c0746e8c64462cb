// The container runtime against the real kernel: a cluster of namespaces,
// pods with their own addresses, containers with the identity, filesystem
// and capabilities their spec gives, probes, partitions, signals, and a
// cluster that vanishes with the process that owns it.
#include "k8s/sim/sandbox/errors.hpp"
#include "k8s/sim/sandbox/sandbox.hpp"
#include "tests/support/skip.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/after.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <optional>
#include <poll.h>
#include <set>
#include <signal.h>
#include <sstream>
#include <string>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace sbx = aiperf::k8s::sim::sandbox;
using namespace std::chrono_literals;

constexpr auto request_timeout = 20s;

std::string read_file(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out{p, std::ios::binary | std::ios::trunc};
  out << text;
}

// The output of a shell command line (the test's own tools: ip, nsenter).
std::string run(const std::string& cmd) {
  std::string out;
  if (FILE* f = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
      out.append(buf, n);
    ::pclose(f);
  }
  return out;
}

std::string netns_link(const std::string& pid) {
  std::error_code ec;
  return fs::read_symlink("/proc/" + pid + "/ns/net", ec).string();
}

// True when `pid` is no process, or a zombie (which holds no namespaces).
bool process_gone(std::int32_t pid) {
  auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty())
    return true;
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size()
         && stat[close + 2] == 'Z';
}

// Connects a non-blocking TCP socket `fd` to ip:port within `timeout`.
bool connect_within(int fd, const std::string& ip, std::uint16_t port,
                    std::chrono::milliseconds timeout) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, ip.c_str(), &addr.sin_addr);
  int fl = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
    return true;
  if (errno != EINPROGRESS)
    return false;
  pollfd pfd{fd, POLLOUT, 0};
  if (::poll(&pfd, 1, static_cast<int>(timeout.count())) != 1)
    return false;
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  return err == 0;
}

// What a GET of ip:8080 `path` over `fd` answers within a second ("" when
// the connect or the answer fails).
std::string http_get(int fd, const std::string& ip, const std::string& path) {
  if (!connect_within(fd, ip, 8080, 1000ms))
    return {};
  auto req = "GET " + path + " HTTP/1.0\r\nHost: " + ip + "\r\n\r\n";
  if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL)
      != static_cast<ssize_t>(req.size()))
    return {};
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + 1s;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 100) != 1)
      continue;
    char buf[4096];
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EAGAIN)
      continue;
    if (n <= 0)
      break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

TEST(sandbox_start, refuses_non_root_and_bad_cidrs_with_the_reason) {
  if (::geteuid() != 0) {
    AIPERF_SKIP_OR_FAIL("starting a cluster as another uid needs root",
                        "run the integration tests as root");
  }
  auto as = [](const std::string& uid, const std::string& cidr) {
    return run(std::string{SIM_POD_INIT_TEST_BIN} + " start-as " + uid + " '"
               + cidr + "'");
  };
  auto out = as("65534", "10.244.0.0/16");
  EXPECT_EQ(out.rfind("not_root: the pod network needs root", 0), 0u) << out;
  for (const char* bad : {"10.244.0.0/30", "10.244.0.0/7", "10.244.0.0",
                          "300.1.2.3/16", "10.244.0.0/1x"}) {
    EXPECT_EQ(as("0", bad),
              std::string{"bad_cidr: pod CIDR \""} + bad
                  + "\" is not an IPv4 prefix of /8 to /28; give one like "
                    "10.244.0.0/16\n");
  }
}

class sandbox_test : public ::testing::Test {
protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      AIPERF_SKIP_OR_FAIL("the container runtime needs root (namespaces, "
                          "bridges, veth pairs)",
                          "run the integration tests as root");
    }
    for (const char* tool : {"ip", "nsenter", "/usr/bin/python3"}) {
      if (run(std::string{"command -v "} + tool).empty()) {
        AIPERF_SKIP_OR_FAIL(
            std::string{"the "} + tool + " command is missing",
            aiperf::test::bootstrap_hint(tool == std::string{"ip"}
                                             ? "iproute2"
                                             : (tool == std::string{"nsenter"}
                                                    ? "util-linux"
                                                    : "python3")));
      }
    }
    char tmpl[] = "/tmp/aiperf-sbx-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    work = tmpl;
    sbx::cluster_options opts;
    opts.pod_cidr = "10.253.0.0/24";
    opts.work_dir = (work / "node").string();
    opts.init_executable = SIM_POD_INIT_TEST_BIN;
    auto c = sbx::cluster::start(opts);
    ASSERT_TRUE(c) << aiperf::error_message(c.error());
    cl = *c;
    rt = sbx::spawn_runtime(sys, cl);
    bool subscribed = false;
    self->request(rt, request_timeout, sbx::subscribe_atom::value,
                  caf::actor_cast<sbx::exit_sink_actor>(self))
        .receive([&] { subscribed = true; },
                 [&](caf::error& err) {
                   ADD_FAILURE() << aiperf::error_message(err);
                 });
    ASSERT_TRUE(subscribed);
  }

  void TearDown() override {
    if (rt) {
      caf::anon_send_exit(rt, caf::exit_reason::user_shutdown);
      self->wait_for(rt);
    }
    rt = nullptr;
    cl.reset();
    // The cluster's last owner may still be clearing its pod folders.
    std::error_code ec;
    for (int attempt = 0; !work.empty() && fs::exists(work) && attempt < 50;
         ++attempt) {
      fs::remove_all(work, ec);
      if (ec)
        std::this_thread::sleep_for(20ms);
    }
  }

  // The pods' resolver is their own loopback: no DNS server runs here, and
  // the gateway's ICMP "port unreachable" answers to a resolver are rate
  // limited per address, so a server that resolves its name at start
  // (python's http.server) could wait seconds for its resolver's timeout.
  sbx::sandbox_info create(const std::string& id) {
    sbx::sandbox_info out;
    sbx::sandbox_spec spec{id, "host-" + id,
                           "127.0.0.1\tlocalhost\n10.253.0.99\tpeer\n",
                           "nameserver 127.0.0.1\nsearch ns.svc.cluster."
                           "local svc.cluster.local cluster.local\noptions "
                           "ndots:5\n"};
    self->request(rt, request_timeout, sbx::create_sandbox_atom::value, spec)
        .receive([&](sbx::sandbox_info& info) { out = std::move(info); },
                 [&](caf::error& err) {
                   ADD_FAILURE()
                       << "create " << id << ": " << aiperf::error_message(err);
                 });
    return out;
  }

  caf::expected<std::int32_t> start(const std::string& id,
                                    const sbx::container_spec& spec) {
    caf::expected<std::int32_t> out{0};
    self->request(rt, request_timeout, sbx::start_container_atom::value, id,
                  spec)
        .receive([&](std::int32_t pid) { out = pid; },
                 [&](caf::error& err) { out = std::move(err); });
    return out;
  }

  sbx::container_spec shell(const std::string& name,
                            const std::string& script) {
    sbx::container_spec spec;
    spec.name = name;
    spec.argv = {"/bin/sh", "-c", script};
    spec.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/"};
    spec.log_path = (work / "logs" / (name + ".log")).string();
    return spec;
  }

  std::string log_of(const sbx::container_spec& spec) {
    return read_file(spec.log_path);
  }

  /// The exit of container `name`: (pid, code); nullopt after `timeout`.
  std::optional<std::pair<std::int32_t, std::int32_t>>
  wait_exit(const std::string& name, std::chrono::seconds timeout = 20s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::optional<std::pair<std::int32_t, std::int32_t>> out;
    while (!out && std::chrono::steady_clock::now() < deadline) {
      self->receive(
          [&](sbx::exited_atom, const std::string&, const std::string& n,
              std::int32_t pid, std::int32_t code) {
            if (n == name)
              out = std::make_pair(pid, code);
          },
          caf::after(std::chrono::milliseconds{200}) >> [] {});
    }
    return out;
  }

  caf::expected<std::int32_t> probe(const std::string& ip, std::uint16_t port,
                                    std::int32_t timeout_ms = 1000) {
    sbx::http_probe p;
    p.ip = ip;
    p.port = port;
    p.path = "/";
    p.timeout_ms = timeout_ms;
    caf::expected<std::int32_t> out{0};
    self->request(rt, request_timeout, sbx::probe_atom::value, p)
        .receive([&](std::int32_t status) { out = status; },
                 [&](caf::error& err) { out = std::move(err); });
    return out;
  }

  /// Polls the probe until it answers 200 (a server starting up).
  bool probe_until_ok(const std::string& ip, std::uint16_t port,
                      std::chrono::seconds timeout = 20s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      auto r = probe(ip, port, 300);
      if (r && *r == 200)
        return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  template <class... Ts> void call_void(Ts&&... xs) {
    self->request(rt, request_timeout, std::forward<Ts>(xs)...)
        .receive([] {},
                 [&](caf::error& err) {
                   ADD_FAILURE() << aiperf::error_message(err);
                 });
  }

  sbx::container_spec http_server(const std::string& name) {
    auto site = work / ("site-" + name);
    fs::create_directories(site);
    write_file(site / "index.html", "hello from " + name + "\n");
    sbx::container_spec spec;
    spec.name = name;
    spec.argv = {"/usr/bin/python3", "-m",     "http.server", "8080",
                 "--bind",           "0.0.0.0"};
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.working_dir = "/srv";
    spec.mounts = {{site.string(), "/srv", true}};
    spec.log_path = (work / "logs" / (name + ".log")).string();
    return spec;
  }

  fs::path work;
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  std::shared_ptr<sbx::cluster> cl;
  sbx::runtime_actor rt;
};

TEST_F(sandbox_test, cluster_has_the_bridge_and_gateway_in_its_own_netns) {
  EXPECT_EQ(cl->gateway(), "10.253.0.1");
  EXPECT_EQ(cl->cidr(), "10.253.0.0/24");
  auto init = std::to_string(cl->init_pid());
  auto addrs = run("nsenter --net=/proc/" + init + "/ns/net ip -o addr");
  EXPECT_NE(addrs.find("aiperf0    inet 10.253.0.1/24"), std::string::npos)
      << addrs;
  EXPECT_NE(netns_link(init), netns_link("self"));
  // Init is PID 1 of its namespace: NSpid lists the host pid, then 1.
  auto status = read_file("/proc/" + init + "/status");
  EXPECT_NE(status.find("NSpid:\t" + init + "\t1\n"), std::string::npos)
      << status;
}

TEST_F(sandbox_test, sandboxes_get_distinct_addresses_and_namespaces) {
  auto a = create("pod-a");
  auto b = create("pod-b");
  EXPECT_EQ(a.ip, "10.253.0.2");
  EXPECT_EQ(b.ip, "10.253.0.3");
  auto host_ns = netns_link("self");
  auto init_ns = netns_link(std::to_string(cl->init_pid()));
  EXPECT_EQ(a.netns, netns_link(std::to_string(a.pid)));
  EXPECT_NE(a.netns, host_ns);
  EXPECT_NE(a.netns, init_ns);
  EXPECT_NE(a.netns, b.netns);
  EXPECT_NE(b.netns, host_ns);
  auto in_a = run("nsenter --net=/proc/" + std::to_string(a.pid)
                  + "/ns/net ip -o addr");
  EXPECT_NE(in_a.find("eth0    inet 10.253.0.2/24"), std::string::npos) << in_a;
  auto routes = run("nsenter --net=/proc/" + std::to_string(a.pid)
                    + "/ns/net ip route");
  EXPECT_NE(routes.find("default via 10.253.0.1 dev eth0"), std::string::npos)
      << routes;
  // The host end is on the bridge in the cluster's namespace, not the host's.
  auto links = run("nsenter --net=/proc/" + std::to_string(cl->init_pid())
                   + "/ns/net ip -o link show master aiperf0");
  EXPECT_NE(links.find("vethpoda"), std::string::npos) << links;
  EXPECT_EQ(run("ip -o link").find("vethpoda"), std::string::npos);
  // A removed sandbox frees its address, its processes and its files, but
  // not the kubelet's files in the same pod folder (logs outlive it).
  auto pod_a = work / "node" / "pods" / "pod-a";
  EXPECT_TRUE(fs::exists(pod_a / "hosts"));
  fs::create_directories(pod_a / "logs");
  write_file(pod_a / "logs" / "0.log", "kept\n");
  call_void(sbx::remove_sandbox_atom::value, std::string{"pod-a"});
  EXPECT_TRUE(process_gone(a.pid));
  EXPECT_FALSE(fs::exists(pod_a / "hosts"));
  EXPECT_FALSE(fs::exists(pod_a / "containers"));
  EXPECT_EQ(read_file(pod_a / "logs" / "0.log"), "kept\n");
  auto c = create("pod-c");
  EXPECT_EQ(c.ip, "10.253.0.2");
  links = run("nsenter --net=/proc/" + std::to_string(cl->init_pid())
              + "/ns/net ip -o link");
  EXPECT_EQ(links.find("vethpoda"), std::string::npos) << links;
}

TEST_F(sandbox_test, container_runs_with_the_identity_files_and_mounts_given) {
  create("pod-a");
  auto config = work / "config.txt";
  write_file(config, "from a config map\n");
  auto scratch = work / "scratch";
  fs::create_directories(scratch);
  ::chown(scratch.c_str(), 1000, 1000);
  auto spec = shell("show", "id -u; id -g; id -G; "
                            "cat /proc/sys/kernel/hostname; cat /etc/hosts; "
                            "cat /etc/resolv.conf; cat /config/data.txt; "
                            "pwd; echo \"$HOSTNAME $HOME $PATH\"; "
                            "echo written > /scratch/out; "
                            "echo ro > /config/data.txt || echo ro-refused");
  spec.uid = 1000;
  spec.gid = 1000;
  spec.groups = {2000, 3000};
  spec.working_dir = "/scratch";
  spec.mounts = {{config.string(), "/config/data.txt", true},
                 {scratch.string(), "/scratch", false}};
  auto pid = start("pod-a", spec);
  ASSERT_TRUE(pid) << aiperf::error_message(pid.error());
  auto exit = wait_exit("show");
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->first, *pid);
  EXPECT_EQ(exit->second, 0) << log_of(spec);
  auto log = log_of(spec);
  auto expected = std::string{"1000\n1000\n1000 2000 3000\nhost-pod-a\n"}
                  + "127.0.0.1\tlocalhost\n10.253.0.99\tpeer\n"
                  + "nameserver 127.0.0.1\nsearch ns.svc.cluster.local "
                    "svc.cluster.local cluster.local\noptions ndots:5\n"
                  + "from a config map\n/scratch\n"
                  + "host-pod-a / /usr/local/bin:/usr/bin:/bin\n";
  EXPECT_EQ(log.substr(0, expected.size()), expected) << log;
  EXPECT_NE(log.find("ro-refused"), std::string::npos) << log;
  EXPECT_EQ(read_file(scratch / "out"), "written\n");
  EXPECT_EQ(read_file(config), "from a config map\n");
}

TEST_F(sandbox_test, read_only_root_leaves_only_declared_mounts_writable) {
  create("pod-a");
  auto scratch = work / "scratch";
  fs::create_directories(scratch);
  const std::string script
      = "for f in /rootfile /usr/probe-file /etc/probe-file /tmp/f "
        "/scratch/f; do echo x 2>/dev/null > $f && echo $f writable; done";
  auto ro = shell("ro", script);
  ro.read_only_root = true;
  ro.mounts = {{scratch.string(), "/scratch", false}};
  ASSERT_TRUE(start("pod-a", ro));
  ASSERT_TRUE(wait_exit("ro"));
  EXPECT_EQ(log_of(ro), "/scratch/f writable\n");
  // The same container without read_only_root writes into its own layer,
  // never into the host's folders.
  auto rw = shell("rw", script);
  rw.mounts = ro.mounts;
  ASSERT_TRUE(start("pod-a", rw));
  ASSERT_TRUE(wait_exit("rw"));
  EXPECT_EQ(log_of(rw), "/rootfile writable\n/usr/probe-file writable\n"
                        "/etc/probe-file writable\n/tmp/f writable\n"
                        "/scratch/f writable\n");
  EXPECT_FALSE(fs::exists("/usr/probe-file"));
  EXPECT_FALSE(fs::exists("/etc/probe-file"));
}

TEST_F(sandbox_test, dropped_capabilities_and_no_new_privs_hold_for_uid_0) {
  create("pod-a");
  const std::string script
      = "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status";
  auto dropped = shell("dropped", script);
  dropped.drop_all_capabilities = true;
  dropped.no_new_privileges = true;
  ASSERT_TRUE(start("pod-a", dropped));
  ASSERT_TRUE(wait_exit("dropped"));
  EXPECT_EQ(log_of(dropped),
            "CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n"
            "CapBnd:\t0000000000000000\nNoNewPrivs:\t1\n");
  auto plain = shell("plain", script);
  ASSERT_TRUE(start("pod-a", plain));
  ASSERT_TRUE(wait_exit("plain"));
  // Without drop: uid 0 has the default set of a container runtime, not
  // all of root's capabilities.
  EXPECT_EQ(log_of(plain),
            "CapPrm:\t00000000a80425fb\nCapEff:\t00000000a80425fb\n"
            "CapBnd:\t00000000a80425fb\nNoNewPrivs:\t0\n");
}

TEST_F(sandbox_test,
       executables_outside_the_system_folders_run_with_their_folder) {
  create("pod-a");
  auto image = work / "image";
  fs::create_directories(image);
  write_file(image / "data.txt", "beside the script\n");
  write_file(image / "app.sh", "#!/bin/sh\ncat \"$(dirname \"$0\")/data.txt\"\n"
                               "echo \"$HOSTNAME $HOME $PATH\"\n");
  fs::permissions(image / "app.sh", fs::perms::owner_all);
  sbx::container_spec script;
  script.name = "script";
  script.argv = {(image / "app.sh").string()};
  script.log_path = (work / "logs" / "script.log").string();
  ASSERT_TRUE(start("pod-a", script));
  auto exit = wait_exit("script");
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->second, 0) << log_of(script);
  // No env in the spec: the runtime's defaults.
  EXPECT_EQ(log_of(script),
            "beside the script\nhost-pod-a /root "
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n");
  // A binary of the build tree (linked against the host's libraries).
  sbx::container_spec binary;
  binary.name = "binary";
  binary.argv = {SIM_POD_INIT_TEST_BIN};
  binary.log_path = (work / "logs" / "binary.log").string();
  ASSERT_TRUE(start("pod-a", binary));
  exit = wait_exit("binary");
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->second, 2) << log_of(binary);
  EXPECT_EQ(log_of(binary).rfind("usage: ", 0), 0u) << log_of(binary);
}

TEST_F(sandbox_test, start_errors_name_the_failing_step) {
  create("pod-a");
  sbx::container_spec missing;
  missing.name = "missing";
  missing.argv = {"/nonexistent/app"};
  missing.log_path = (work / "logs" / "missing.log").string();
  auto r = start("pod-a", missing);
  ASSERT_FALSE(r);
  EXPECT_TRUE(aiperf::is_error(r.error(), sbx::errc::start_failed));
  EXPECT_EQ(aiperf::error_message(r.error()),
            "exec /nonexistent/app: No such file or directory");
  auto no_source = shell("nosrc", "true");
  no_source.mounts = {{(work / "absent").string(), "/data", true}};
  r = start("pod-a", no_source);
  ASSERT_FALSE(r);
  EXPECT_TRUE(aiperf::is_error(r.error(), sbx::errc::mount_source_missing));
  r = start("no-such-pod", shell("x", "true"));
  ASSERT_FALSE(r);
  EXPECT_TRUE(aiperf::is_error(r.error(), sbx::errc::unknown_sandbox));
}

TEST_F(sandbox_test, pods_reach_each_other_and_the_host_only_via_the_cluster) {
  auto a = create("pod-a");
  auto b = create("pod-b");
  ASSERT_TRUE(start("pod-a", http_server("web")));
  ASSERT_TRUE(probe_until_ok(a.ip, 8080));
  auto client = shell("client", "");
  client.argv = {"/usr/bin/python3", "-c",
                 "import urllib.request; print(urllib.request.urlopen("
                 "'http://"
                     + a.ip
                     + ":8080/index.html', timeout=10).read().decode(),"
                       " end='')"};
  ASSERT_TRUE(start("pod-b", client));
  auto exit = wait_exit("client");
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->second, 0) << log_of(client);
  EXPECT_EQ(log_of(client), "hello from web\n");
  // From the host's own namespace the pod network does not exist (a connect
  // may still succeed where the host's own network intercepts every
  // address, so the proof is that the pod's page never comes back)...
  int host_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(host_fd, 0);
  EXPECT_EQ(http_get(host_fd, a.ip, "/index.html").find("hello from web"),
            std::string::npos);
  ::close(host_fd);
  // ...but a socket made in the cluster's namespace reaches the pod.
  auto fd = cl->open_socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC);
  ASSERT_TRUE(fd) << aiperf::error_message(fd.error());
  EXPECT_NE(http_get(*fd, a.ip, "/index.html").find("hello from web"),
            std::string::npos);
  ::close(*fd);
  // A closed port: the probe's error says so, as kubelet's does.
  auto refused = probe(b.ip, 8080);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(aiperf::is_error(refused.error(), sbx::errc::probe_failed));
  EXPECT_NE(aiperf::error_message(refused.error())
                .find("connect: Connection refused"),
            std::string::npos)
      << aiperf::error_message(refused.error());
}

TEST_F(sandbox_test, a_server_on_the_gateway_is_reachable_from_pods) {
  create("pod-a");
  auto listener = cl->open_socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC);
  ASSERT_TRUE(listener) << aiperf::error_message(listener.error());
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(9000);
  inet_pton(AF_INET, cl->gateway().c_str(), &addr.sin_addr);
  ASSERT_EQ(::bind(*listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr),
            0)
      << std::strerror(errno);
  ASSERT_EQ(::listen(*listener, 4), 0);
  auto client = shell("client", "");
  client.argv
      = {"/usr/bin/python3", "-c",
         "import socket; s = socket.create_connection(('" + cl->gateway()
             + "', 9000), 10); s.sendall(b'ping'); "
               "print(s.recv(16).decode())"};
  ASSERT_TRUE(start("pod-a", client));
  pollfd pfd{*listener, POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 20000), 1);
  int conn = ::accept4(*listener, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(conn, 0);
  char buf[16] = {};
  pollfd cfd{conn, POLLIN, 0};
  ASSERT_EQ(::poll(&cfd, 1, 10000), 1);
  EXPECT_EQ(::recv(conn, buf, sizeof buf, 0), 4);
  EXPECT_EQ(std::string(buf, 4), "ping");
  ::send(conn, "pong", 4, MSG_NOSIGNAL);
  ::close(conn);
  ::close(*listener);
  auto exit = wait_exit("client");
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->second, 0) << log_of(client);
  EXPECT_EQ(log_of(client), "pong\n");
}

TEST_F(sandbox_test, a_reused_address_reaches_the_new_pod) {
  auto a = create("pod-a");
  ASSERT_TRUE(start("pod-a", http_server("web")));
  ASSERT_TRUE(probe_until_ok(a.ip, 8080));
  call_void(sbx::remove_sandbox_atom::value, std::string{"pod-a"});
  auto c = create("pod-c");
  ASSERT_EQ(c.ip, a.ip);
  ASSERT_TRUE(start("pod-c", http_server("web2")));
  // The gateway knew the address under the old pod: it reaches the new one
  // (the MAC follows the address, so its neighbour entry stays right).
  EXPECT_TRUE(probe_until_ok(c.ip, 8080))
      << run("nsenter --net=/proc/" + std::to_string(cl->init_pid())
             + "/ns/net ip neigh");
}

TEST_F(sandbox_test, signals_end_containers_with_their_exit_codes) {
  create("pod-a");
  auto scratch = work / "scratch";
  fs::create_directories(scratch);
  auto trapper = shell("trapper", "trap 'exit 42' TERM; touch /scratch/ready; "
                                  "while :; do sleep 0.05; done");
  trapper.mounts = {{scratch.string(), "/scratch", false}};
  ASSERT_TRUE(start("pod-a", trapper));
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!fs::exists(scratch / "ready")
         && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(fs::exists(scratch / "ready"));
  call_void(sbx::signal_atom::value, std::string{"pod-a"},
            std::string{"trapper"}, std::int32_t{SIGTERM});
  auto exit = wait_exit("trapper");
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->second, 42);

  sbx::container_spec sleeper;
  sleeper.name = "sleeper";
  sleeper.argv = {"/usr/bin/sleep", "1000"};
  sleeper.log_path = (work / "logs" / "sleeper.log").string();
  auto pid = start("pod-a", sleeper);
  ASSERT_TRUE(pid) << aiperf::error_message(pid.error());
  // The pid is the host's view: the host's /proc knows it as the sleeper,
  // and it lives in a PID namespace below the host's.
  auto cmdline = read_file("/proc/" + std::to_string(*pid) + "/cmdline");
  const std::string sleeper_cmdline("/usr/bin/sleep\0"
                                    "1000\0",
                                    20);
  EXPECT_EQ(cmdline, sleeper_cmdline);
  auto status = read_file("/proc/" + std::to_string(*pid) + "/status");
  EXPECT_NE(status.find("NSpid:\t" + std::to_string(*pid) + "\t"),
            std::string::npos)
      << status;
  call_void(sbx::signal_atom::value, std::string{"pod-a"},
            std::string{"sleeper"}, std::int32_t{SIGKILL});
  exit = wait_exit("sleeper");
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->first, *pid);
  EXPECT_EQ(exit->second, 137);
  // Signalling a container that no longer runs is not an error.
  call_void(sbx::signal_atom::value, std::string{"pod-a"},
            std::string{"sleeper"}, std::int32_t{SIGTERM});
}

TEST_F(sandbox_test, a_containers_end_takes_its_other_processes_along) {
  create("pod-a");
  auto left = shell("left", "sleep 4321987 & exit 3");
  ASSERT_TRUE(start("pod-a", left));
  auto exit = wait_exit("left");
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->second, 3);
  // The background sleep was the container's: it ends with it, as the
  // processes of a container's PID namespace do on a node.
  const std::string cmdline("sleep\0"
                            "4321987\0",
                            14);
  auto running = [&] {
    for (const auto& entry : fs::directory_iterator{"/proc"}) {
      auto name = entry.path().filename().string();
      if (name.find_first_not_of("0123456789") == std::string::npos
          && read_file(entry.path() / "cmdline") == cmdline
          && !process_gone(std::stoi(name)))
        return true;
    }
    return false;
  };
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(running());
}

TEST_F(sandbox_test, a_partitioned_pod_fails_probes_until_its_link_is_up) {
  auto a = create("pod-a");
  ASSERT_TRUE(start("pod-a", http_server("web")));
  ASSERT_TRUE(probe_until_ok(a.ip, 8080));
  call_void(sbx::link_atom::value, std::string{"pod-a"}, false);
  auto down = probe(a.ip, 8080, 300);
  ASSERT_FALSE(down);
  EXPECT_TRUE(aiperf::is_error(down.error(), sbx::errc::probe_failed));
  call_void(sbx::link_atom::value, std::string{"pod-a"}, true);
  EXPECT_TRUE(probe_until_ok(a.ip, 8080, 10s));
}

TEST_F(sandbox_test, kill_9_of_the_owner_leaves_no_process_link_or_netns) {
  // The owner's init outlives it for a moment; as its subreaper this
  // process reaps it, so a zombie left to a PID 1 that never reaps does
  // not pass for a survivor.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  auto owner_dir = (work / "owner").string();
  auto owner = ::fork();
  ASSERT_GE(owner, 0);
  if (owner == 0) {
    ::dup2(out[1], 1);
    ::execl(SIM_POD_INIT_TEST_BIN, SIM_POD_INIT_TEST_BIN, "own-cluster",
            owner_dir.c_str(), nullptr);
    ::_exit(127);
  }
  ::close(out[1]);
  std::string line;
  char ch;
  while (::read(out[0], &ch, 1) == 1 && ch != '\n')
    line += ch;
  ::close(out[0]);
  ASSERT_EQ(line.rfind("pids ", 0), 0u) << line;
  std::vector<std::int32_t> pids;
  std::istringstream in{line.substr(5)};
  for (std::int32_t p; in >> p;)
    pids.push_back(p);
  ASSERT_EQ(pids.size(), 5u) << line; // init, 2 holders, 2 containers
  std::set<std::string> namespaces;
  for (auto p : pids) {
    EXPECT_FALSE(process_gone(p)) << p;
    namespaces.insert(netns_link(std::to_string(p)));
  }
  ASSERT_EQ(::kill(owner, SIGKILL), 0);
  ::waitpid(owner, nullptr, 0);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  auto all_gone = [&] {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    for (auto p : pids)
      if (!process_gone(p))
        return false;
    return true;
  };
  while (!all_gone() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  for (auto p : pids)
    EXPECT_TRUE(process_gone(p)) << "pid " << p << " outlived its cluster";
  // No host process is in any of the cluster's network namespaces.
  for (const auto& entry : fs::directory_iterator{"/proc"}) {
    auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    auto ns = netns_link(name);
    EXPECT_EQ(namespaces.count(ns), 0u) << "pid " << name << " is in " << ns;
  }
  // Nothing named them either (`ip netns list`: /run/netns), and the host
  // never saw their links. Other tests may add links and named namespaces
  // of their own meanwhile, so only the cluster's are looked for.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator{"/run/netns", ec}) {
    struct stat sb {};
    if (::stat(entry.path().c_str(), &sb) != 0)
      continue;
    EXPECT_EQ(namespaces.count("net:[" + std::to_string(sb.st_ino) + "]"), 0u)
        << entry.path() << " names a cluster namespace";
  }
  auto links = run("ip -o link");
  EXPECT_EQ(links.find("vethowner"), std::string::npos) << links;
}

} // namespace
