// The `aiperf-node sim-cluster` command line as outside tests rely on it:
// the one stdout line after the kubeconfig is in place, `ctl` over the
// kubeconfig's credentials, SIGTERM exiting 0, usage errors exiting 2, and
// `--state-dir` keeping every acknowledged write across a SIGKILL.
#include "k8s/api/json.hpp"
#include "tests/k8s/sim_http/sim_http_client.hpp"
#include "tests/support/skip.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace aiperf::k8s {
namespace {

using namespace std::chrono_literals;

struct process {
  pid_t pid = -1;
  int out = -1;
};

process start(const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0)
    return {};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  process p;
  if (posix_spawn(&p.pid, copy[0].c_str(), &fa, nullptr, argv.data(), environ)
      != 0)
    p.pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  p.out = fds[0];
  return p;
}

std::string read_until_eof_or_line(int fd, bool one_line,
                                   std::chrono::milliseconds timeout) {
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0)
      continue;
    char ch;
    if (read(fd, &ch, 1) != 1)
      break;
    if (one_line && ch == '\n')
      break;
    text += ch;
  }
  return text;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// Runs a command to its end: exit code and stdout.
std::pair<int, std::string> run(const std::vector<std::string>& args) {
  auto p = start(args);
  auto out = read_until_eof_or_line(p.out, false, 20s);
  close(p.out);
  return {wait_exit(p.pid), out};
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in{path};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(sim_cluster_cli, kubeconfig_ctl_and_sigterm) {
  const char* bin = std::getenv("AIPERF_NODE_BIN");
  if (bin == nullptr)
    AIPERF_SKIP_OR_FAIL("AIPERF_NODE_BIN is not set",
                        "run the test through ctest, which sets it");
  auto dir = std::filesystem::temp_directory_path()
             / ("sim_cluster_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto kubeconfig = (dir / "kubeconfig").string();
  auto audit = (dir / "audit.log").string();
  auto sim = start({bin, "sim-cluster", "--tls", "--kubeconfig", kubeconfig,
                    "--audit-log", audit});
  ASSERT_GT(sim.pid, 0);
  auto line = read_until_eof_or_line(sim.out, true, 20s);
  const std::string prefix = "listening on https://127.0.0.1:";
  ASSERT_EQ(line.substr(0, prefix.size()), prefix) << line;
  // The file is complete when the line is out: no temp file left beside it.
  auto text = slurp(kubeconfig);
  auto port = line.substr(prefix.size());
  EXPECT_NE(text.find("server: https://127.0.0.1:" + port), std::string::npos)
      << text;
  EXPECT_NE(text.find("certificate-authority-data: "), std::string::npos)
      << text;
  EXPECT_NE(text.find("token: "), std::string::npos) << text;
  EXPECT_NE(text.find("current-context: sim"), std::string::npos) << text;
  EXPECT_EQ(text.find("namespace:"), std::string::npos) << text;
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    files += e.path().filename().string().starts_with("kubeconfig") ? 1 : 0;
  EXPECT_EQ(files, 1u);

  auto added = run({bin, "sim-cluster", "ctl", "--kubeconfig", kubeconfig,
                    "faults", "add", R"({"match":{"verb":"get"},"code":503})"});
  EXPECT_EQ(added.first, 0);
  auto id = json::parse(added.second, nullptr, false);
  ASSERT_TRUE(id.is_object()) << added.second;
  auto fid = id["id"].get<std::string>();
  EXPECT_EQ(run({bin, "sim-cluster", "ctl", "--kubeconfig", kubeconfig,
                 "faults", "delete", fid})
                .first,
            0);
  EXPECT_EQ(run({bin, "sim-cluster", "ctl", "--kubeconfig", kubeconfig,
                 "faults", "delete", fid})
                .first,
            1);
  auto dropped = run({bin, "sim-cluster", "ctl", "--kubeconfig", kubeconfig,
                      "watches", "drop"});
  EXPECT_EQ(dropped.first, 0);
  // The simulator's own controllers watch too; they relist.
  EXPECT_TRUE(json::parse(dropped.second, nullptr, false)["dropped"]
                  .is_number_unsigned())
      << dropped.second;
  EXPECT_EQ(run({bin, "sim-cluster", "ctl", "--kubeconfig", kubeconfig,
                 "faults", "add", "{"})
                .first,
            1);

  kill(sim.pid, SIGTERM);
  EXPECT_EQ(wait_exit(sim.pid), 0);
  close(sim.out);
  // The fault routes are not audited; nothing else was asked.
  EXPECT_EQ(slurp(audit), "");
  std::filesystem::remove_all(dir);
}

/// The port of a started `sim-cluster` without --tls, 0 if it did not start.
std::uint16_t listening_port(const process& sim) {
  auto line = read_until_eof_or_line(sim.out, true, 20s);
  const std::string prefix = "listening on http://127.0.0.1:";
  if (line.substr(0, prefix.size()) != prefix)
    return 0;
  return static_cast<std::uint16_t>(std::stoi(line.substr(prefix.size())));
}

TEST(sim_cluster_cli, acknowledged_writes_survive_a_sigkill) {
  using sim::http::testing::fetch;
  const char* bin = std::getenv("AIPERF_NODE_BIN");
  if (bin == nullptr)
    AIPERF_SKIP_OR_FAIL("AIPERF_NODE_BIN is not set",
                        "run the test through ctest, which sets it");
  auto dir = std::filesystem::temp_directory_path()
             / ("sim_cluster_state_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto state = (dir / "state").string();
  struct killer {
    pid_t pid = -1;
    ~killer() {
      if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    }
  } guard;
  auto first = start({bin, "sim-cluster", "--state-dir", state});
  guard.pid = first.pid;
  auto port = listening_port(first);
  close(first.out);
  ASSERT_NE(port, 0);
  const sim::http::testing::header_list json_body{
      {"Content-Type", "application/json"}};
  const sim::http::testing::header_list merge_body{
      {"Content-Type", "application/merge-patch+json"}};
  auto ns = fetch(port, "POST", "/api/v1/namespaces",
                  R"({"apiVersion":"v1","kind":"Namespace",)"
                  R"("metadata":{"name":"bench"}})",
                  json_body);
  ASSERT_EQ(ns.status, 201u) << ns.body;
  const std::string cms = "/api/v1/namespaces/bench/configmaps";
  for (const char* name : {"kept", "patched", "deleted"}) {
    auto r = fetch(port, "POST", cms,
                   std::string{R"({"metadata":{"name":")"} + name
                       + R"("},"data":{"k":"v1"}})",
                   json_body);
    ASSERT_EQ(r.status, 201u) << r.body;
  }
  auto patched = fetch(port, "PATCH", cms + "/patched",
                       R"({"data":{"k":"v2"}})", merge_body);
  ASSERT_EQ(patched.status, 200u) << patched.body;
  auto deleted = fetch(port, "DELETE", cms + "/deleted");
  ASSERT_EQ(deleted.status, 200u) << deleted.body;
  std::map<std::string, json> before;
  for (const char* name : {"kept", "patched"}) {
    auto r = fetch(port, "GET", cms + "/" + name);
    ASSERT_EQ(r.status, 200u) << r.body;
    before[name] = json::parse(r.body);
  }
  auto ns_before = json::parse(fetch(port, "GET", "/api/v1/namespaces/bench").body);
  auto list_before = json::parse(fetch(port, "GET", cms).body);

  // Killed with no chance to flush anything.
  kill(first.pid, SIGKILL);
  EXPECT_EQ(wait_exit(first.pid), 128 + SIGKILL);
  guard.pid = -1;

  auto second = start({bin, "sim-cluster", "--state-dir", state});
  guard.pid = second.pid;
  port = listening_port(second);
  close(second.out);
  ASSERT_NE(port, 0);
  for (const auto& [name, obj] : before) {
    auto r = fetch(port, "GET", cms + "/" + name);
    ASSERT_EQ(r.status, 200u) << name << ": " << r.body;
    auto after = json::parse(r.body);
    EXPECT_EQ(after["metadata"]["uid"], obj["metadata"]["uid"]) << name;
    EXPECT_EQ(after["metadata"]["resourceVersion"],
              obj["metadata"]["resourceVersion"])
        << name;
    EXPECT_EQ(after, obj) << name;
  }
  EXPECT_EQ(json::parse(fetch(port, "GET", cms + "/patched").body)["data"]["k"],
            "v2");
  EXPECT_EQ(fetch(port, "GET", cms + "/deleted").status, 404u);
  EXPECT_EQ(json::parse(fetch(port, "GET", "/api/v1/namespaces/bench").body),
            ns_before);
  // The global resourceVersion goes on from where it was.
  auto list_after = json::parse(fetch(port, "GET", cms).body);
  EXPECT_EQ(list_after["items"], list_before["items"]);
  auto next = fetch(port, "POST", cms,
                    R"({"metadata":{"name":"later"},"data":{"k":"v"}})",
                    json_body);
  ASSERT_EQ(next.status, 201u) << next.body;
  EXPECT_GT(std::stoll(json::parse(next.body)["metadata"]["resourceVersion"]
                           .get<std::string>()),
            std::stoll(list_before["metadata"]["resourceVersion"]
                           .get<std::string>()));
  kill(second.pid, SIGTERM);
  EXPECT_EQ(wait_exit(second.pid), 0);
  guard.pid = -1;
  std::filesystem::remove_all(dir);
}

TEST(sim_cluster_cli, usage_errors_exit_2) {
  const char* bin = std::getenv("AIPERF_NODE_BIN");
  if (bin == nullptr)
    AIPERF_SKIP_OR_FAIL("AIPERF_NODE_BIN is not set",
                        "run the test through ctest, which sets it");
  for (std::vector<std::string> bad :
       {std::vector<std::string>{"--port", "70000"},
        {"--bogus"},
        {"ctl", "faults"},
        {"ctl", "restart", "--down-seconds", "-1"}}) {
    std::vector<std::string> args{bin, "sim-cluster"};
    args.insert(args.end(), bad.begin(), bad.end());
    EXPECT_EQ(run(args).first, 2) << bad[0];
  }
}

} // namespace
} // namespace aiperf::k8s
