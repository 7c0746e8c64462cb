#include "tests/tools/profile/profile_harness.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <netinet/in.h>
#include <spawn.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace aiperf::itest {

std::string node_bin() {
  const char* bin = std::getenv("AIPERF_NODE_BIN");
  return bin ? bin : "";
}

std::string node_test_bin() {
  auto bin = node_bin();
  if (bin.empty())
    return {};
  // <build>/tools/aiperf-node/aiperf-node -> <build>/tests/support/...
  auto build = fs::path{bin}.parent_path().parent_path().parent_path();
  return (build / "tests" / "support" / "aiperf_node_test" / "aiperf-node-test").string();
}

void sleep_briefly() {
  std::this_thread::sleep_for(std::chrono::milliseconds{5});
}

// --- temp_dir --------------------------------------------------------------

temp_dir::temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string{base && *base ? base : "/tmp"}
                     + "/aiperf-itest-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr)
    ADD_FAILURE() << "mkdtemp(" << tmpl << "): " << std::strerror(errno);
  path_ = tmpl;
}

temp_dir::~temp_dir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

// --- child -----------------------------------------------------------------

child::child(const std::vector<std::string>& argv, const fs::path& log_prefix)
  : out_path_(log_prefix.string() + ".out"),
    err_path_(log_prefix.string() + ".err") {
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO,
                                   out_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO,
                                   err_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // The child starts with default signal dispositions and an empty mask,
  // whatever the test runner did.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  int rc = posix_spawn(&pid_, args[0], &actions, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << argv[0] << ": " << std::strerror(rc);
    pid_ = -1;
    reaped_ = true;
  }
}

child::~child() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
  }
}

void child::signal(int sig) {
  if (!reaped_)
    ::kill(pid_, sig);
}

std::optional<int> child::wait(std::chrono::milliseconds deadline) {
  auto ended = [this] {
    if (reaped_)
      return true;
    if (waitpid(pid_, &status_, WNOHANG) == pid_)
      reaped_ = true;
    return reaped_;
  };
  if (!poll_until(ended, deadline))
    return std::nullopt;
  if (pid_ < 0)
    return -1;
  if (WIFSIGNALED(status_))
    return 128 + WTERMSIG(status_);
  return WEXITSTATUS(status_);
}

std::string child::out() const { return read_file(out_path_); }

std::string child::err() const { return read_file(err_path_); }

std::optional<std::string> child::first_line(std::chrono::milliseconds deadline) {
  std::optional<std::string> line;
  poll_until(
    [&] {
      auto text = out();
      if (auto nl = text.find('\n'); nl != std::string::npos) {
        line = text.substr(0, nl);
        return true;
      }
      // A child that already ended prints nothing more.
      if (!reaped_ && waitpid(pid_, &status_, WNOHANG) == pid_)
        reaped_ = true;
      return reaped_;
    },
    deadline);
  return line;
}

run_result run_node(const std::vector<std::string>& args,
                    const fs::path& log_prefix, const std::string& binary) {
  std::vector<std::string> argv{binary.empty() ? node_bin() : binary};
  argv.insert(argv.end(), args.begin(), args.end());
  child proc{argv, log_prefix};
  run_result r;
  auto code = proc.wait();
  r.exit_code = code.value_or(-1);
  if (!code) {
    proc.signal(SIGKILL);
    (void) proc.wait();
  }
  r.out = proc.out();
  r.err = proc.err();
  return r;
}

// --- mock_process ----------------------------------------------------------

canned_server::canned_server(const std::string& content_type,
                             const std::string& body_python, const fs::path& log) {
  std::string script =
    "import socket\n"
    "s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(64)\n"
    "print(s.getsockname()[1], flush=True)\n"
    "body=" + body_python + "\n"
    "while True:\n"
    "  c,_=s.accept(); buf=b''\n"
    "  try:\n"
    "    while b'\\r\\n\\r\\n' not in buf:\n"
    "      d=c.recv(65536)\n"
    "      if not d: raise EOFError()\n"
    "      buf+=d\n"
    "    h=buf.split(b'\\r\\n\\r\\n')[0].lower()\n"
    "    n=int([l.split(b':')[1] for l in h.split(b'\\r\\n') if l.startswith(b'content-length')][0])\n"
    "    rest=buf.split(b'\\r\\n\\r\\n',1)[1]\n"
    "    while len(rest)<n: rest+=c.recv(65536)\n"
    "    c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Type: " + content_type + "\\r\\n"
    "Connection: close\\r\\nContent-Length: '+str(len(body)).encode()+b'\\r\\n\\r\\n'+body)\n"
    "  except EOFError:\n"
    "    pass\n"
    "  c.close()\n";
  proc_ = std::make_unique<child>(std::vector<std::string>{"/usr/bin/python3", "-c", script}, log);
  if (auto port = proc_->first_line(); port && !port->empty())
    url_ = "http://127.0.0.1:" + *port;
}

mock_process::mock_process(const std::vector<std::string>& args,
                           const fs::path& dir) {
  std::vector<std::string> argv{node_bin(), "mock-server", "-p", "0"};
  argv.insert(argv.end(), args.begin(), args.end());
  proc_ = std::make_unique<child>(argv, dir / "mock");
  auto line = proc_->first_line();
  const std::string prefix = "mock-server listening on ";
  if (!line || line->rfind(prefix, 0) != 0) {
    ADD_FAILURE() << "mock-server did not start; stdout: " << proc_->out()
                  << " stderr: " << proc_->err();
    return;
  }
  url_ = line->substr(prefix.size());
  auto colon = url_.rfind(':');
  port_ = static_cast<std::uint16_t>(std::stoi(url_.substr(colon + 1)));
}

mock_process::~mock_process() {
  proc_->signal(SIGTERM);
  if (!proc_->wait(std::chrono::seconds{10}))
    proc_->signal(SIGKILL);
}

std::optional<double> mock_process::metric(const std::string& series) const {
  auto text = http_get(port_, "/metrics");
  if (!text)
    return std::nullopt;
  return prometheus_value(*text, series);
}

// --- helpers ---------------------------------------------------------------

std::optional<std::string> http_get(std::uint16_t port,
                                    const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return std::nullopt;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::optional<std::string> body;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    // Connection: close, so the body ends at EOF (no chunking to decode).
    std::string req = "GET " + path
                      + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        "Connection: close\r\n\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL)
        == static_cast<ssize_t>(req.size())) {
      std::string resp;
      char buf[4096];
      ssize_t n;
      while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0)
        resp.append(buf, static_cast<std::size_t>(n));
      if (auto sep = resp.find("\r\n\r\n");
          sep != std::string::npos && resp.rfind("HTTP/1.1 200", 0) == 0)
        body = resp.substr(sep + 4);
    }
  }
  ::close(fd);
  return body;
}

std::optional<double> prometheus_value(const std::string& text,
                                       const std::string& series) {
  std::istringstream in{text};
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() && line.rfind(series, 0) == 0
        && line[series.size()] == ' ')
      return std::strtod(line.c_str() + series.size() + 1, nullptr);
  }
  return std::nullopt;
}

namespace {

/// Binds a loopback TCP socket to a port the kernel picks; sets `port`
/// (0 on failure) and returns the socket (-1 on failure).
int bind_loopback(std::uint16_t& port) {
  port = 0;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0
      && ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  return fd;
}

} // namespace

closed_port::closed_port() {
  fd_ = bind_loopback(port_);
}

closed_port::~closed_port() {
  if (fd_ >= 0)
    ::close(fd_);
}

std::string read_file(const fs::path& path) {
  std::ifstream in{path, std::ios::binary};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::vector<std::string> lines;
  std::ifstream in{path};
  std::string line;
  while (std::getline(in, line))
    if (!line.empty())
      lines.push_back(line);
  return lines;
}

rapidjson::Document parse_json(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  return d;
}

fs::path run_dir(const fs::path& artifact_root) {
  std::error_code ec;
  fs::path found;
  int n = 0;
  for (auto& e : fs::directory_iterator{artifact_root, ec})
    if (e.is_directory()) {
      found = e.path();
      ++n;
    }
  return n == 1 ? found : fs::path{};
}

std::vector<std::string> files_under(const fs::path& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto& e : fs::recursive_directory_iterator{root, ec})
    if (e.is_regular_file())
      out.push_back(fs::relative(e.path(), root).string());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace aiperf::itest
