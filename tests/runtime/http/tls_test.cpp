// https against real Debian nginx with a CA and server certificate made by
// the openssl CLI at test time.
#include "runtime/http/client.hpp"
#include "tests/support/skip.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <gtest/gtest.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

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

std::uint16_t free_port() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a{
    ioc, {boost::asio::ip::make_address("127.0.0.1"), 0}};
  return a.local_endpoint().port();
}

bool port_accepts(std::uint16_t port) {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket s{ioc};
  boost::system::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  return !ec;
}

/// Runs nginx in the foreground over https from a temp dir.
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
    port_ = free_port();
    std::ofstream{dir_ / "nginx.conf"}
      << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
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
    ASSERT_EQ(posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(),
                          environ),
              0);
    auto deadline = std::chrono::steady_clock::now() + wait_limit;
    while (!port_accepts(port_)) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        FAIL() << "nginx exited early; see " << d << "/error.log";
      }
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << "nginx did not start listening";
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
