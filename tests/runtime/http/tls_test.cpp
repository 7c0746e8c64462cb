// https against real Debian nginx with a CA and server certificate made by
// the openssl CLI at test time.
#include "runtime/http/client.hpp"
#include "tests/support/skip.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace aiperf::http {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto wait_limit = 20s;

class collecting_sink : public response_sink {
public:
  void on_send(std::int64_t) override {
    // nop
  }
  void on_headers(const response_head& head, std::int64_t) override {
    status = head.status;
  }
  void on_body(std::string_view bytes, std::int64_t) override {
    body.append(bytes);
  }
  void on_complete(const error_info& e, std::int64_t) override {
    std::lock_guard<std::mutex> guard{mtx_};
    err = e;
    done = true;
    cv_.notify_all();
  }
  bool wait() {
    std::unique_lock<std::mutex> guard{mtx_};
    return cv_.wait_for(guard, wait_limit, [this] { return done; });
  }
  int status = 0;
  std::string body;
  error_info err;

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  bool done = false;
};

bool run(const std::string& cmd) {
  return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
}

/// A listening loopback socket on a port the kernel picked, without
/// close-on-exec so that a child inherits it; -1 on failure.
int listening_socket(std::uint16_t& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd < 0
      || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0
      || ::listen(fd, 64) != 0
      || ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0)
      ::close(fd);
    return -1;
  }
  port = ntohs(addr.sin_port);
  return fd;
}

/// The name of the effective user ("root" when it has none).
std::string user_name() {
  const passwd* pw = ::getpwuid(::geteuid());
  return pw != nullptr ? pw->pw_name : "root";
}

/// Runs nginx in the foreground over https from a temp dir. nginx cannot
/// bind port 0 and say which port it got, and a port picked here, closed
/// and handed over may be taken in between; so the fixture binds the
/// socket and nginx inherits it (its NGINX variable, the mechanism of its
/// binary upgrade), matched to the `listen` line by address. The master
/// process stays on: nginx 1.22 crashes on inherited sockets without it.
class nginx_tls_fixture : public ::testing::Test {
protected:
  void SetUp() override {
    if (access("/usr/sbin/nginx", X_OK) != 0)
      AIPERF_SKIP_OR_FAIL("/usr/sbin/nginx is not installed",
                          aiperf::test::bootstrap_hint("nginx-light"));
    if (!run("command -v openssl"))
      AIPERF_SKIP_OR_FAIL("the openssl CLI is not installed",
                          aiperf::test::bootstrap_hint("openssl"));
    char tmpl[] = "/tmp/aiperf-http-tls-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto d = dir_.string();
    auto ec_key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    ASSERT_TRUE(run("cd " + d + " && openssl req -x509" + ec_key
                    + " -keyout ca.key -out ca.pem -days 2"
                      " -subj '/CN=aiperf test CA'"));
    ASSERT_TRUE(run("cd " + d + " && openssl req" + ec_key
                    + " -keyout server.key -out server.csr -subj '/CN=localhost'"));
    std::ofstream{dir_ / "ext.cnf"}
      << "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
         "basicConstraints=CA:FALSE\n";
    ASSERT_TRUE(run("cd " + d
                    + " && openssl x509 -req -in server.csr -CA ca.pem"
                      " -CAkey ca.key -CAcreateserial -out server.pem -days 2"
                      " -extfile ext.cnf"));
    content_ = "hello over tls\n";
    fs::create_directories(dir_ / "html");
    std::ofstream{dir_ / "html" / "index.txt"} << content_;
    int listener = listening_socket(port_);
    ASSERT_GE(listener, 0) << "no loopback socket";
    std::ofstream{dir_ / "nginx.conf"}
      << "daemon off;\nmaster_process on;\nworker_processes 1;\n"
      // Its worker runs as this user, who owns the files (when root;
      // otherwise nginx ignores the line).
      << "user " << user_name() << ";\n"
      << "error_log " << d << "/error.log;\npid " << d << "/nginx.pid;\n"
      << "events { worker_connections 64; }\n"
      << "http {\n access_log off;\n"
      << " client_body_temp_path " << d << "/tmp_body;\n"
      << " proxy_temp_path " << d << "/tmp_proxy;\n"
      << " fastcgi_temp_path " << d << "/tmp_fcgi;\n"
      << " uwsgi_temp_path " << d << "/tmp_uwsgi;\n"
      << " scgi_temp_path " << d << "/tmp_scgi;\n"
      << " server {\n  listen 127.0.0.1:" << port_ << " ssl;\n"
      << "  ssl_certificate " << d << "/server.pem;\n"
      << "  ssl_certificate_key " << d << "/server.key;\n"
      << "  root " << d << "/html;\n }\n}\n";
    auto conf = (dir_ / "nginx.conf").string();
    std::vector<std::string> args{"/usr/sbin/nginx", "-p", d, "-c", conf};
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings{"NGINX=" + std::to_string(listener)
                                         + ";"};
    for (char** e = environ; *e != nullptr; ++e)
      if (std::string_view{*e}.substr(0, 6) != "NGINX=")
        env_strings.emplace_back(*e);
    std::vector<char*> env;
    for (auto& e : env_strings)
      env.push_back(e.data());
    env.push_back(nullptr);
    // Its notices before error_log is open ("using inherited sockets").
    auto err_log = (dir_ / "stderr.log").string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, err_log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    auto spawned = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(),
                               env.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(listener); // nginx holds it now; connects queue until it serves
    ASSERT_EQ(spawned, 0);
    // nginx writes its pid file once it is set up.
    auto deadline = std::chrono::steady_clock::now() + wait_limit;
    while (!fs::exists(dir_ / "nginx.pid")) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        FAIL() << "nginx exited early; see " << d << "/error.log and "
               << err_log;
      }
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << "nginx did not start";
      std::this_thread::yield();
    }
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    if (!dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
    }
  }

  struct outcome {
    int status = 0;
    std::string body;
    error_info err;
  };

  outcome get(client_options opts, std::string host = "localhost") {
    io_pool io{1};
    client c{io.context(0), std::move(opts)};
    request req;
    req.ep = endpoint{std::move(host), port_, true};
    req.target = "/index.txt";
    req.timeout_ms = 10000;
    collecting_sink sink;
    c.submit(std::move(req), sink);
    EXPECT_TRUE(sink.wait());
    c.shutdown();
    return outcome{sink.status, sink.body, sink.err};
  }

  fs::path dir_;
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::string content_;
};

TEST_F(nginx_tls_fixture, ca_file_verifies_the_server) {
  client_options opts;
  opts.tls.ca_file = (dir_ / "ca.pem").string();
  for (auto host : {"localhost", "127.0.0.1"}) {
    auto s = get(opts, host);
    EXPECT_TRUE(s.err.ok()) << host << ": " << s.err.message;
    EXPECT_EQ(s.status, 200) << host;
    EXPECT_EQ(s.body, content_) << host;
  }
}

TEST_F(nginx_tls_fixture, unknown_ca_fails_verification) {
  client_options defaults;
  auto s = get(defaults);
  EXPECT_EQ(s.err.category, error_category::tls);
  EXPECT_NE(s.err.message.find("verification"), std::string::npos)
    << s.err.message;
  EXPECT_NE(s.err.message.find("--ca-file"), std::string::npos)
    << s.err.message;
  EXPECT_NE(s.err.message.find("localhost"), std::string::npos)
    << s.err.message;
}

TEST_F(nginx_tls_fixture, insecure_skips_verification) {
  client_options opts;
  opts.tls.insecure = true;
  auto s = get(opts);
  EXPECT_TRUE(s.err.ok()) << s.err.message;
  EXPECT_EQ(s.body, content_);
}

TEST_F(nginx_tls_fixture, missing_ca_file_is_a_clear_tls_error) {
  client_options opts;
  opts.tls.ca_file = (dir_ / "nope.pem").string();
  auto s = get(opts);
  EXPECT_EQ(s.err.category, error_category::tls);
  EXPECT_NE(s.err.message.find("nope.pem"), std::string::npos) << s.err.message;
}

} // namespace
} // namespace aiperf::http
