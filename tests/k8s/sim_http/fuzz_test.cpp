// A seeded mutation fuzzer against the `aiperf-node sim-cluster` process:
// 100,000 malformed requests (bodies, content types, paths, query strings,
// framing and chunked encodings). Every request gets an answer, and every
// answer must be a well-formed Status (its code the HTTP status), the
// plain-text `404 page not found`, Go's plain-text `400 Bad Request` for a
// head that cannot be parsed, or for a request that happens to be valid a
// JSON success; the server must stay up and its resident memory grow by less
// than 50 MB. Deterministic: the same seed sends the same bytes.
#include "k8s/api/json.hpp"
#include "tests/support/skip.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <random>
#include <signal.h>
#include <spawn.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace aiperf::k8s {
namespace {

using namespace std::chrono_literals;

struct child {
  pid_t pid = -1;
  int out = -1;
};

child spawn_sim() {
  int pipefd[2];
  if (pipe(pipefd) != 0)
    return {};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  static const std::string log = ::testing::TempDir() + "sim_cluster_fuzz.log";
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addclose(&fa, pipefd[0]);
  std::string bin = std::getenv("AIPERF_NODE_BIN");
  std::vector<std::string> args{bin, "sim-cluster"};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  child c;
  if (posix_spawn(&c.pid, bin.c_str(), &fa, nullptr, argv.data(), environ) != 0)
    c.pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  close(pipefd[1]);
  c.out = pipefd[0];
  return c;
}

std::string read_line(int fd, std::chrono::milliseconds timeout) {
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0)
      continue;
    char ch;
    if (read(fd, &ch, 1) != 1)
      break;
    if (ch == '\n')
      return line;
    line += ch;
  }
  return line;
}

long rss_kb(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stol(line.substr(6));
  return -1;
}

/// A keep-alive connection that reads one Content-Length response at a
/// time and reconnects when the server closed it.
class connection {
public:
  explicit connection(std::uint16_t port) : port_(port) {}
  ~connection() { drop(); }

  /// Sends `bytes` and reads one response; false if the server closed the
  /// connection without one.
  /// `half_close`: end the sending side after the bytes, so a request cut
  /// short is answered (or the connection closed) at once instead of the
  /// server waiting for the rest.
  bool exchange(const std::string& bytes, std::string& head, std::string& body,
                bool half_close = false) {
    if (fd_ < 0 && !open())
      return false;
    std::size_t off = 0;
    while (off < bytes.size()) {
      auto n
          = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0)
        break; // the server may have answered and closed already
      off += static_cast<std::size_t>(n);
    }
    if (half_close)
      ::shutdown(fd_, SHUT_WR);
    bool ok = read_response(head, body);
    if (half_close || !ok
        || head.find("\r\nConnection: close") != std::string::npos)
      drop();
    return ok;
  }

  void drop() {
    if (fd_ >= 0) {
      linger l{1, 0}; // RST: no TIME_WAIT piles up over 100,000 requests
      setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
      ::close(fd_);
      fd_ = -1;
    }
    buf_.clear();
  }

private:
  bool open() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port_);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
      return false;
    }
    return true;
  }

  bool fill() {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 10000) <= 0)
      return false;
    char tmp[65536];
    auto n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0)
      return false;
    buf_.append(tmp, static_cast<std::size_t>(n));
    return true;
  }

  bool read_response(std::string& head, std::string& body) {
    std::size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos)
      if (!fill())
        return false;
    head = buf_.substr(0, end + 2);
    std::size_t length = 0;
    auto cl = head.find("Content-Length: ");
    if (cl != std::string::npos)
      length = std::stoul(head.substr(cl + 16));
    while (buf_.size() < end + 4 + length)
      if (!fill())
        return false;
    body = buf_.substr(end + 4, length);
    buf_.erase(0, end + 4 + length);
    return true;
  }

  std::uint16_t port_;
  int fd_ = -1;
  std::string buf_;
};

/// The seeded generator of malformed requests.
class mutator {
public:
  explicit mutator(std::uint64_t seed) : rng_(seed) {}

  /// One request; `framing_broken` says whether it breaks HTTP framing
  /// (the server may then close after answering 400).
  std::string next(bool& framing_broken) {
    static const std::vector<std::string> paths{
        "/api/v1/namespaces/fuzz/configmaps",
        "/api/v1/namespaces/fuzz/configmaps/c1",
        "/api/v1/namespaces/default/configmaps/fz",
        "/api/v1/configmaps",
        "/api/v1/namespaces/fuzz",
        "/api/v1/namespaces/fuzz/pods/p1/status",
        "/apis/rbac.authorization.k8s.io/v1/namespaces/fuzz/roles/r1",
        "/apis/apps/v1/namespaces/fuzz/deployments",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "/apis/nope.example.com/v1/namespaces/fuzz/things/t1",
        "/api",
        "/apis",
        "/api/v1",
        "/version",
        "/openapi/v2",
        "/healthz",
        "/",
        "/x/y/z"};
    static const std::vector<std::string> methods{
        "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "FROB"};
    static const std::vector<std::string> types{
        "application/json",
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
        "application/vnd.kubernetes.protobuf",
        "application/yaml",
        "text/plain",
        "",
        "application/json; charset=utf-8",
        "\x01\x02"};
    static const std::vector<std::string> keys{"labelSelector",
                                               "fieldSelector",
                                               "limit",
                                               "resourceVersion",
                                               "resourceVersionMatch",
                                               "timeoutSeconds",
                                               "dryRun",
                                               "fieldValidation",
                                               "continue",
                                               "propagationPolicy",
                                               "gracePeriodSeconds",
                                               "fieldManager",
                                               "force",
                                               "pretty"};
    static const std::vector<std::string> values{
        "",        "0",
        "-1",      "99999999999999999999",
        "All",     "Strict",
        "a=b",     "a%3Db%2Cc!%3Dd",
        "in%20(",  "%zz",
        "%",       "true",
        "Exact",   "metadata.name%3Dx",
        "\xff\xfe"};
    static const std::vector<std::string> bodies{
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fz"},"data":{"a":"b"}})",
        R"([{"op":"test","path":"/data/a","value":"x"},{"op":"remove","path":"/nope"}])",
        R"({"metadata":{"labels":{"a":"b"}},"data":null})",
        R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"})",
        R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"r1"},"rules":[{"verbs":["get"]}]})",
        std::string(
            "k8s\0\x0a\x0e\x0a\x02v1\x12\x09ConfigMap\x12\x05\x0a\x03\x0a\x01x",
            30),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n",
        ""};

    std::string method = pick(methods);
    std::string path = pick(paths);
    if (chance(30))
      path = mutate(path, 3);
    std::string query;
    if (chance(60)) {
      int n = static_cast<int>(rng_() % 4) + 1;
      for (int i = 0; i < n; ++i) {
        query += (i == 0 ? "?" : "&") + pick(keys) + "=" + pick(values);
      }
      if (chance(30))
        query = mutate(query, 3);
    }
    std::string body = pick(bodies);
    if (chance(70))
      body = mutate(body, 1 + static_cast<int>(rng_() % 8));
    if (chance(3))
      body = std::string(static_cast<std::size_t>(rng_() % 2000), '[');
    std::string type = pick(types);
    framing_broken = false;
    std::string req
        = method + " " + path + query + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (!type.empty())
      req += "Content-Type: " + type + "\r\n";
    if (chance(20))
      req += "Accept: "
             "application/json;as=Table;v=v1;g=meta.k8s.io,application/"
             "json\r\n";
    if (chance(5))
      req += "Authorization: Bearer " + mutate("not-a-token", 2) + "\r\n";
    if (chance(5))
      req += "Impersonate-User: " + mutate("jane", 2) + "\r\n";
    int framing = static_cast<int>(rng_() % 100);
    if (framing < 4) {
      // A chunked body with a broken size line or terminator.
      framing_broken = true;
      req += "Transfer-Encoding: chunked\r\n\r\n";
      static const std::vector<std::string> bad{
          "zz\r\n", "5\r\nab\r\n0\r\n\r\n", "ffffffffffffffffff\r\n",
          "3\r\nabc", "3;x\r\nabc\r\n1\r\n"};
      req += pick(bad);
      return req;
    }
    if (framing < 6) {
      framing_broken = true;
      req += "Content-Length: 5\r\nContent-Length: 7\r\n\r\n12345";
      return req;
    }
    if (framing < 8) {
      framing_broken = true;
      req += "Bad Header Without Colon\r\n\r\n";
      return req;
    }
    if (framing < 10) {
      framing_broken = true;
      return mutate(req, 4) + "\r\n";
    }
    if (framing < 14 && !body.empty()) {
      // A well-formed chunked body.
      req += "Transfer-Encoding: chunked\r\n\r\n";
      char size[32];
      std::snprintf(size, sizeof size, "%zx\r\n", body.size());
      req += size + body + "\r\n0\r\n\r\n";
      return req;
    }
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    return req;
  }

private:
  template <class T> const T& pick(const std::vector<T>& v) {
    return v[rng_() % v.size()];
  }
  bool chance(int percent) { return static_cast<int>(rng_() % 100) < percent; }

  std::string mutate(std::string s, int edits) {
    static const std::string specials = "%/.\\\"{}[]:,?&=#\x00\xff\r\n \t";
    for (int i = 0; i < edits; ++i) {
      auto pos
          = s.empty() ? 0 : static_cast<std::size_t>(rng_() % (s.size() + 1));
      switch (rng_() % 4) {
      case 0: // insert
        s.insert(pos, 1, specials[rng_() % specials.size()]);
        break;
      case 1: // flip
        if (pos < s.size())
          s[pos] = static_cast<char>(rng_() % 256);
        break;
      case 2: // truncate
        s.resize(pos);
        break;
      default: // duplicate a slice
        if (pos < s.size())
          s.insert(pos, s.substr(pos, static_cast<std::size_t>(rng_() % 16)));
      }
    }
    // Keep request lines one line: a bare CR/LF here would split the
    // request into two, which the framing mutations already cover.
    for (auto& c : s)
      if (c == '\r' || c == '\n')
        c = ' ';
    return s;
  }

  std::mt19937_64 rng_;
};

/// What a well-formed answer is (see the file comment).
::testing::AssertionResult well_formed(const std::string& head,
                                       const std::string& body) {
  if (head.size() < 12 || head.substr(0, 9) != "HTTP/1.1 ")
    return ::testing::AssertionFailure() << "no status line: " << head;
  int code = std::stoi(head.substr(9, 3));
  if (code == 404 && body == "404 page not found\n")
    return ::testing::AssertionSuccess();
  if ((code == 400 || code == 431)
      && head.find("\r\nContent-Type: text/plain; charset=utf-8\r\n")
             != std::string::npos) {
    // Go's answer to an unreadable head: the status line's text is the body.
    auto text = head.substr(9, head.find("\r\n") - 9);
    if (body == text
        && head.find("\r\nConnection: close\r\n") != std::string::npos)
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "plain text " << head << body;
  }
  if (head.find("Content-Type: application/octet-stream") != std::string::npos
      && code == 200)
    return ::testing::AssertionSuccess(); // /openapi/v2
  if (head.find("Content-Type: text/plain") != std::string::npos && code == 200
      && body == "ok")
    return ::testing::AssertionSuccess(); // /healthz
  auto j = json::parse(body, nullptr, false);
  if (j.is_discarded())
    return ::testing::AssertionFailure()
           << code << " with a body that is not JSON: " << body;
  if (code >= 200 && code < 300)
    return ::testing::AssertionSuccess();
  if (!j.is_object() || j.value("kind", "") != "Status"
      || j.value("code", 0) != code || j.value("status", "") != "Failure")
    return ::testing::AssertionFailure()
           << code << " without a matching Status: " << body;
  return ::testing::AssertionSuccess();
}

TEST(sim_cluster_fuzz,
     malformed_requests_get_statuses_and_the_server_stays_up) {
  if (std::getenv("AIPERF_NODE_BIN") == nullptr)
    AIPERF_SKIP_OR_FAIL("AIPERF_NODE_BIN is not set",
                        "run the test through ctest, which sets it");
  auto sim = spawn_sim();
  ASSERT_GT(sim.pid, 0);
  // A failed assertion returns early: the simulator must not outlive it.
  struct reaper {
    child& c;
    ~reaper() {
      if (c.pid > 0) {
        kill(c.pid, SIGKILL);
        waitpid(c.pid, nullptr, 0);
      }
      if (c.out >= 0)
        close(c.out);
    }
  } reap{sim};
  auto line = read_line(sim.out, 20s);
  const std::string prefix = "listening on http://127.0.0.1:";
  ASSERT_EQ(line.substr(0, prefix.size()), prefix) << line;
  auto port = static_cast<std::uint16_t>(std::stoi(line.substr(prefix.size())));

  mutator gen{20261202};
  connection conn{port};
  std::string head, body;
  const int total = 100'000;
  long rss_start = 0;
  int answered = 0, broken = 0;
  auto t0 = std::chrono::steady_clock::now();
  std::string previous;
  for (int i = 0; i < total; ++i) {
    if (i == 1000)
      rss_start = rss_kb(sim.pid); // after the allocator's first growth
    bool framing_broken = false;
    auto req = gen.next(framing_broken);
    // A request with broken framing is followed by a half-close, so one cut
    // short is answered at once instead of the server waiting for the rest;
    // the server must still answer before it closes.
    ASSERT_TRUE(conn.exchange(req, head, body, framing_broken))
        << "request " << i << " got no answer: " << req
        << "\nafter: " << previous << "\nserver log: " << ::testing::TempDir()
        << "sim_cluster_fuzz.log";
    ++answered;
    broken += framing_broken ? 1 : 0;
    previous = req;
    auto ok = well_formed(head, body);
    ASSERT_TRUE(ok) << "request " << i << ": " << req;
  }
  auto elapsed = std::chrono::steady_clock::now() - t0;
  long rss_end = rss_kb(sim.pid);
  // Still serving.
  conn.drop();
  std::string health = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_TRUE(conn.exchange(health, head, body));
  EXPECT_EQ(body, "ok");
  EXPECT_EQ(answered, total);
  EXPECT_LT(rss_end - rss_start, 50 * 1024)
      << "RSS grew from " << rss_start << " kB to " << rss_end << " kB";
  EXPECT_LT(elapsed, 60s);
  std::printf("fuzz: %d answered (%d with broken framing), %.1f s, RSS %ld "
              "-> %ld kB\n",
              answered, broken, std::chrono::duration<double>(elapsed).count(),
              rss_start, rss_end);
  kill(sim.pid, SIGTERM);
  int status = 0;
  waitpid(sim.pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  sim.pid = -1;
}

} // namespace
} // namespace aiperf::k8s
