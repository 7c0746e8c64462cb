// The client actor over real sockets against a canned HTTPS server:
// TLS with the cluster CA, server names, client certificates, typed Status
// errors, 429 back-off, exec plugins (a shell script), in-cluster config,
// token rotation, watch streams, and the informer resuming and relisting
// over HTTPS.
#include "k8s/api/json.hpp"
#include "k8s/client/client.hpp"
#include "k8s/client/config.hpp"
#include "k8s/informer/informer.hpp"
#include "tests/k8s/client/canned_server.hpp"
#include "tests/support/skip.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace aiperf::k8s::client {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using test::canned_request;
using test::canned_server;
using test::exchange;

constexpr auto wait_limit = 20s;

struct collected {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<watch_event> events;
  std::vector<caf::error> ends;
  std::vector<std::string> keys;

  template <class Pred> bool wait(Pred pred) {
    std::unique_lock guard{mtx};
    return cv.wait_for(guard, wait_limit, [&] { return pred(*this); });
  }
};

watch_sink_actor::behavior_type collecting_sink(watch_sink_actor::pointer,
                                                std::shared_ptr<collected> c) {
  return {
      [c](events_atom, std::uint64_t, std::vector<watch_event>& evs) {
        std::lock_guard guard{c->mtx};
        c->events.insert(c->events.end(), evs.begin(), evs.end());
        c->cv.notify_all();
      },
      [c](watch_end_atom, std::uint64_t, const caf::error& err) {
        std::lock_guard guard{c->mtx};
        c->ends.push_back(err);
        c->cv.notify_all();
      },
  };
}

informer::owner_actor::behavior_type
collecting_owner(informer::owner_actor::pointer, std::shared_ptr<collected> c) {
  return {
      [c](informer::reconcile_atom, std::string& key) {
        std::lock_guard guard{c->mtx};
        c->keys.push_back(key);
        c->cv.notify_all();
      },
  };
}

caf::actor_system_config& with_errors(caf::actor_system_config& cfg) {
  add_error_category<k8s::errc>(cfg);
  add_error_category<errc>(cfg);
  return cfg;
}

std::string status_body(int code, const std::string& reason,
                        const std::string& message,
                        const std::string& details = "") {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":")"
         + message + R"(","reason":")" + reason + "\""
         + (details.empty() ? "" : R"(,"details":)" + details) + R"(,"code":)"
         + std::to_string(code) + "}\n";
}

request get_cm(const std::string& name) {
  request r;
  r.verb = verb::get;
  r.ref = resource_ref{"", "v1", "configmaps", "bench", name, ""};
  return r;
}

class client_https : public ::testing::Test {
protected:
  void SetUp() override {
    if (std::system("command -v openssl >/dev/null 2>&1") != 0)
      AIPERF_SKIP_OR_FAIL("the openssl CLI is not installed",
                          aiperf::test::bootstrap_hint("openssl"));
    char tmpl[] = "/tmp/aiperf-k8s-client-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ASSERT_TRUE(test::make_pki(dir_.string()))
        << "openssl could not make the test PKI";
    pki_.dir = dir_.string();
  }
  void TearDown() override {
    servers_.clear();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  canned_server& serve(canned_server::handler h,
                       bool require_client_cert = false, bool tls = true) {
    servers_.push_back(std::make_unique<canned_server>(
        canned_server::options{tls, pki_.dir, require_client_cert},
        std::move(h)));
    return *servers_.back();
  }

  client_config config_for(const canned_server& s) {
    client_config cfg;
    cfg.server = s.url();
    cfg.ca_pem = pki_.ca_pem();
    cfg.token = "admin-token";
    cfg.origin = "test";
    return cfg;
  }

  api_actor spawn(client_config cfg, client_options opts = {}) {
    auto c = spawn_client(sys, std::move(cfg), std::move(opts));
    EXPECT_TRUE(c) << error_message(c.error());
    return c ? *c : api_actor{};
  }

  caf::expected<response> call(const api_actor& c, request r) {
    caf::expected<response> out{caf::error{}};
    self->request(c, wait_limit, std::move(r))
        .receive([&](response& x) { out = std::move(x); },
                 [&](caf::error& e) { out = std::move(e); });
    return out;
  }

  caf::expected<std::uint64_t> watch(const api_actor& c, request r,
                                     watch_sink_actor sink) {
    caf::expected<std::uint64_t> out{caf::error{}};
    self->request(c, wait_limit, watch_atom::value, std::move(r), sink)
        .receive([&](std::uint64_t id) { out = id; },
                 [&](caf::error& e) { out = std::move(e); });
    return out;
  }

  /// kube/config with one cluster `sim` at `s` (CA ../ca.pem) and
  /// `users_and_contexts`, the rest of the document.
  std::string write_kubeconfig(const canned_server& s,
                               const std::string& users_and_contexts) {
    return write("kube/config",
                 "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n"
                 "  cluster:\n    server: "
                     + s.url() + "\n    certificate-authority: ../ca.pem\n"
                     + users_and_contexts);
  }

  std::string write(const std::string& name, const std::string& text) {
    auto path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream{path} << text;
    return path.string();
  }

  fs::path dir_;
  test::pki pki_;
  caf::actor_system_config cfg_;
  caf::actor_system sys{with_errors(cfg_)};
  caf::scoped_actor self{sys};
  std::vector<std::unique_ptr<canned_server>> servers_;
};

TEST_F(client_https,
       gets_over_tls_with_the_cluster_ca_and_keeps_the_connection) {
  auto& s = serve([](const canned_request& r, exchange& ex) {
    if (r.headers.count("authorization") == 0
        || r.headers.at("authorization") != "Bearer admin-token")
      return ex.reply(401, status_body(401, "Unauthorized", "Unauthorized"));
    ex.reply(
        200,
        R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c1"}})");
  });
  auto metrics = std::make_shared<request_metrics>();
  client_options opts;
  opts.metrics = metrics;
  auto c = spawn(config_for(s), opts);
  for (int i = 0; i < 2; ++i) {
    auto r = call(c, get_cm("c1"));
    ASSERT_TRUE(r) << error_message(r.error());
    EXPECT_EQ(r->code, 200);
    EXPECT_EQ(json::parse(r->body)["metadata"]["name"], "c1");
  }
  EXPECT_EQ(s.connections(), 1); // keep-alive
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].method, "GET");
  EXPECT_EQ(reqs[0].target, "/api/v1/namespaces/bench/configmaps/c1");
  EXPECT_EQ(reqs[0].headers["accept"], "application/json");
  EXPECT_EQ(reqs[0].headers["user-agent"], "aiperf-node");
  EXPECT_EQ(metrics->value("get", "configmaps", "200"), 2u);
  EXPECT_NE(
      metrics->prometheus_text().find(
          R"(aiperf_k8s_client_requests_total{verb="get",resource="configmaps",code="200"} 2)"),
      std::string::npos);
}

TEST_F(client_https, failures_are_typed_statuses) {
  auto& s = serve([](const canned_request& r, exchange& ex) {
    if (r.target.ends_with("/missing"))
      return ex.reply(404,
                      status_body(404, "NotFound",
                                  R"(configmaps \"missing\" not found)",
                                  R"({"name":"missing","kind":"configmaps"})"));
    if (r.target.ends_with("/nowhere"))
      return ex.reply(404, "404 page not found\n",
                      {{"Content-Type", "text/plain"}});
    ex.reply(422,
             status_body(
                 422, "Invalid", "invalid",
                 R"({"name":"x","kind":"ConfigMap","causes":[{"reason":)"
                 R"("FieldValueInvalid","message":"bad","field":"data"}]})"));
  });
  auto c = spawn(config_for(s));
  auto missing = call(c, get_cm("missing"));
  ASSERT_FALSE(missing);
  EXPECT_TRUE(is_error(missing.error(), k8s::errc::not_found));
  ASSERT_NE(status_of(missing.error()), nullptr);
  EXPECT_EQ(status_of(missing.error())->reason, "NotFound");
  EXPECT_EQ(status_of(missing.error())->details.name, "missing");
  EXPECT_EQ(error_message(missing.error()),
            "get configmaps/missing: configmaps \"missing\" not found");
  auto nowhere = call(c, get_cm("nowhere"));
  ASSERT_FALSE(nowhere);
  EXPECT_TRUE(is_error(nowhere.error(), k8s::errc::not_found));
  EXPECT_EQ(status_of(nowhere.error())->message,
            "the server could not find the requested resource");
  auto invalid = call(c, get_cm("x"));
  ASSERT_FALSE(invalid);
  EXPECT_TRUE(is_error(invalid.error(), k8s::errc::invalid));
  ASSERT_EQ(status_of(invalid.error())->details.causes.size(), 1u);
  EXPECT_EQ(status_of(invalid.error())->details.causes[0].field, "data");
}

TEST_F(client_https, an_untrusted_server_or_wrong_name_fails_naming_the_fix) {
  auto& s
      = serve([](const canned_request&, exchange& ex) { ex.reply(200, "{}"); });
  auto cfg = config_for(s);
  cfg.ca_pem.clear(); // the system store does not know the test CA
  auto untrusted = call(spawn(cfg), get_cm("c1"));
  ASSERT_FALSE(untrusted);
  EXPECT_TRUE(is_error(untrusted.error(), k8s::errc::transport));
  EXPECT_NE(error_message(untrusted.error()).find("certificate verify failed"),
            std::string::npos)
      << error_message(untrusted.error());
  EXPECT_NE(error_message(untrusted.error()).find("certificate-authority"),
            std::string::npos);
  auto named = config_for(s);
  named.tls_server_name = "api.internal"; // in the certificate's SANs
  EXPECT_TRUE(call(spawn(named), get_cm("c1")));
  named.tls_server_name = "other.example";
  auto wrong = call(spawn(named), get_cm("c1"));
  ASSERT_FALSE(wrong);
  EXPECT_NE(error_message(wrong.error()).find("tls-server-name"),
            std::string::npos)
      << error_message(wrong.error());
  auto insecure = config_for(s);
  insecure.ca_pem.clear();
  insecure.insecure_skip_tls_verify = true;
  EXPECT_TRUE(call(spawn(insecure), get_cm("c1")));
}

TEST_F(client_https, client_certificates_authenticate) {
  auto& s = serve(
      [](const canned_request&, exchange& ex) { ex.reply(200, "{}"); }, true);
  auto cfg = config_for(s);
  cfg.token.clear();
  EXPECT_FALSE(
      call(spawn(cfg), get_cm("c1"))); // the server demands a certificate
  cfg.client_cert_pem = pki_.client_cert_pem();
  cfg.client_key_pem = pki_.client_key_pem();
  auto r = call(spawn(cfg), get_cm("c1"));
  EXPECT_TRUE(r) << error_message(r.error());
  cfg.client_key_pem = "not a key";
  auto bad = spawn_client(sys, cfg);
  ASSERT_FALSE(bad);
  EXPECT_TRUE(is_error(bad.error(), errc::credentials));
}

/// An HTTP CONNECT proxy on loopback for one tunnel: records the CONNECT
/// line, then relays bytes both ways until either side closes.
class connect_proxy {
public:
  connect_proxy() {
    listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ::bind(listen_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listen_, 4);
    ::getsockname(listen_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread{[this] { run(); }};
  }
  ~connect_proxy() {
    ::shutdown(listen_, SHUT_RDWR);
    thread_.join();
    ::close(listen_);
  }
  std::uint16_t port() const { return port_; }
  std::string request_line() {
    std::lock_guard guard{mtx_};
    return line_;
  }

private:
  void run() {
    int client = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0)
      return;
    std::string head;
    char c = 0;
    while (head.find("\r\n\r\n") == std::string::npos
           && ::read(client, &c, 1) == 1)
      head += c;
    {
      std::lock_guard guard{mtx_};
      line_ = head.substr(0, head.find("\r\n"));
    }
    auto target
        = head.substr(8, head.find(' ', 8) - 8); // "CONNECT h:p HTTP/1.1"
    auto colon = target.rfind(':');
    int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(
        static_cast<std::uint16_t>(std::stoi(target.substr(colon + 1))));
    ::inet_pton(AF_INET, target.substr(0, colon).c_str(), &addr.sin_addr);
    if (::connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr)
        == 0) {
      std::string ok = "HTTP/1.1 200 Connection established\r\n\r\n";
      (void)!::write(client, ok.data(), ok.size());
      pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      char buf[16384];
      for (bool open = true; open && ::poll(fds, 2, 20000) > 0;) {
        for (int i = 0; i < 2 && open; ++i) {
          if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0)
            continue;
          auto n = ::read(fds[i].fd, buf, sizeof buf);
          open = n > 0
                 && ::write(fds[1 - i].fd, buf, static_cast<std::size_t>(n))
                        == n;
        }
      }
    }
    ::close(server);
    ::close(client);
  }

  int listen_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::mutex mtx_;
  std::string line_;
};

TEST_F(client_https, requests_tunnel_through_an_http_connect_proxy) {
  auto& s = serve([](const canned_request&, exchange& ex) {
    ex.reply(200, R"({"ok":true})");
  });
  connect_proxy proxy;
  auto cfg = config_for(s);
  cfg.proxy_url = "http://127.0.0.1:" + std::to_string(proxy.port());
  auto r = call(spawn(cfg), get_cm("c1"));
  ASSERT_TRUE(r) << error_message(r.error());
  EXPECT_EQ(r->body, R"({"ok":true})");
  EXPECT_EQ(proxy.request_line(),
            "CONNECT 127.0.0.1:" + std::to_string(s.port()) + " HTTP/1.1");
  // TLS ran inside the tunnel, verified against the cluster CA.
  ASSERT_EQ(s.requests().size(), 1u);
  EXPECT_EQ(s.requests()[0].headers["authorization"], "Bearer admin-token");
}

TEST_F(client_https,
       too_many_requests_waits_retry_after_then_succeeds_or_gives_up) {
  std::atomic<int> refusals{2};
  auto& s = serve([&](const canned_request&, exchange& ex) {
    if (refusals-- > 0)
      return ex.reply(429,
                      status_body(429, "TooManyRequests", "rate limited",
                                  R"({"retryAfterSeconds":1})"),
                      {{"Retry-After", "1"}});
    ex.reply(200, "{}");
  });
  auto metrics = std::make_shared<request_metrics>();
  client_options opts;
  opts.metrics = metrics;
  auto r = call(spawn(config_for(s), opts), get_cm("c1"));
  ASSERT_TRUE(r) << error_message(r.error());
  EXPECT_EQ(s.requests().size(), 3u);
  EXPECT_EQ(metrics->value("get", "configmaps", "429"), 2u);
  EXPECT_EQ(metrics->value("get", "configmaps", "200"), 1u);
  refusals = 5;
  opts.max_retries = 0;
  auto given_up = call(spawn(config_for(s), opts), get_cm("c1"));
  ASSERT_FALSE(given_up);
  EXPECT_TRUE(is_error(given_up.error(), k8s::errc::too_many_requests));
  EXPECT_EQ(status_of(given_up.error())->details.retry_after_seconds, 1);
}

TEST_F(client_https,
       a_kubeconfig_exec_plugin_logs_in_and_runs_again_after_a_401) {
  auto& s = serve([](const canned_request& r, exchange& ex) {
    auto auth
        = r.headers.count("authorization") ? r.headers.at("authorization") : "";
    if (auth == "Bearer exec-2")
      return ex.reply(200, "{}");
    ex.reply(401, status_body(401, "Unauthorized", "Unauthorized"));
  });
  auto script = write("bin/get-token", R"sh(#!/bin/sh
dir="$(dirname "$0")"
n=$(cat "$dir/count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$dir/count"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$dir/exec-info"
printf '%s %s' "$1" "$PLUGIN_MODE" > "$dir/args"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"exec-%s"}}' "$n"
)sh");
  ::chmod(script.c_str(), 0755);
  auto kubeconfig = write_kubeconfig(s, R"(users:
- name: eks
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ../bin/get-token
      args: [token]
      env: [{name: PLUGIN_MODE, value: eks}]
      provideClusterInfo: true
      interactiveMode: Never
contexts:
- name: sim
  context: {cluster: sim, user: eks, namespace: bench}
current-context: sim
)");
  auto cfg = load_config({kubeconfig, ""}, process_environment());
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  auto c = spawn(*cfg);
  auto r = call(c, get_cm("c1"));
  ASSERT_TRUE(r) << error_message(r.error());
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].headers["authorization"], "Bearer exec-1");
  EXPECT_EQ(reqs[1].headers["authorization"], "Bearer exec-2");
  std::ifstream count{dir_ / "bin/count"};
  int runs = 0;
  count >> runs;
  EXPECT_EQ(runs, 2);
  std::ifstream args_file{dir_ / "bin/args"};
  std::string args;
  std::getline(args_file, args);
  EXPECT_EQ(args, "token eks");
  std::ifstream info_file{dir_ / "bin/exec-info"};
  auto info = json::parse(info_file, nullptr, false);
  ASSERT_FALSE(info.is_discarded());
  EXPECT_EQ(info["spec"]["cluster"]["server"], s.url());
  // The cached token serves the next request without running the plugin.
  EXPECT_TRUE(call(c, get_cm("c1")));
  std::ifstream count2{dir_ / "bin/count"};
  count2 >> runs;
  EXPECT_EQ(runs, 2);
}

TEST_F(client_https, an_exec_plugin_may_answer_with_a_client_certificate) {
  // The server demands a certificate signed by the CA: only the one the
  // plugin hands over gets the request through.
  auto& s = serve(
      [](const canned_request&, exchange& ex) { ex.reply(200, "{}"); }, true);
  json credential = {
      {"apiVersion", "client.authentication.k8s.io/v1beta1"},
      {"kind", "ExecCredential"},
      {"status",
       {{"clientCertificateData", pki_.client_cert_pem()},
        {"clientKeyData", pki_.client_key_pem()}}}};
  write("bin/credential.json", credential.dump());
  auto script = write("bin/get-cert", R"sh(#!/bin/sh
cat "$(dirname "$0")/credential.json"
)sh");
  ::chmod(script.c_str(), 0755);
  auto kubeconfig = write_kubeconfig(s, R"(users:
- name: aks
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ../bin/get-cert
contexts:
- name: sim
  context: {cluster: sim, user: aks}
current-context: sim
)");
  auto cfg = load_config({kubeconfig, ""}, process_environment());
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  auto r = call(spawn(*cfg), get_cm("c1"));
  ASSERT_TRUE(r) << error_message(r.error());
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].headers.count("authorization"), 0u);
}

TEST_F(client_https, a_missing_exec_plugin_names_its_install_hint) {
  auto& s
      = serve([](const canned_request&, exchange& ex) { ex.reply(200, "{}"); });
  auto cfg = config_for(s);
  cfg.token.clear();
  cfg.exec = exec_config{
      "client.authentication.k8s.io/v1", "aiperf-no-such-plugin", {}, {}, false,
      "brew install no-such-plugin",     "kubeconfig k, user u"};
  auto r = call(spawn(cfg), get_cm("c1"));
  ASSERT_FALSE(r);
  EXPECT_NE(error_message(r.error()).find("brew install no-such-plugin"),
            std::string::npos)
      << error_message(r.error());
  EXPECT_EQ(s.requests().size(), 0u);
}

TEST_F(client_https, in_cluster_config_from_a_service_account_directory) {
  auto& s = serve([](const canned_request& r, exchange& ex) {
    ex.reply(r.headers.count("authorization")
                     && r.headers.at("authorization") == "Bearer sa-token"
                 ? 200
                 : 401,
             "{}");
  });
  write("sa/token", "sa-token\n");
  write("sa/ca.crt", pki_.ca_pem());
  write("sa/namespace", "bench");
  auto cfg = load_in_cluster(
      fixed_environment({{"KUBERNETES_SERVICE_HOST", "127.0.0.1"},
                         {"KUBERNETES_SERVICE_PORT", std::to_string(s.port())}},
                        (dir_ / "sa").string()));
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  EXPECT_EQ(cfg->namespace_name, "bench");
  auto r = call(spawn(*cfg), get_cm("c1"));
  EXPECT_TRUE(r) << error_message(r.error());
}

TEST_F(client_https,
       a_rotated_token_file_is_read_again_after_a_minute_or_a_401) {
  std::atomic<bool> only_second{false};
  auto& s = serve([&](const canned_request& r, exchange& ex) {
    auto auth
        = r.headers.count("authorization") ? r.headers.at("authorization") : "";
    bool ok
        = auth == "Bearer second" || (!only_second && auth == "Bearer first");
    ex.reply(ok ? 200 : 401, "{}");
  });
  auto token = write("token", "first");
  auto cfg = config_for(s);
  cfg.token.clear();
  cfg.token_file = token;
  auto now = std::make_shared<std::atomic<std::int64_t>>(1'000'000'000'000);
  client_options opts;
  opts.wall_clock_ns = [now] { return now->load(); };
  auto c = spawn(cfg, opts);
  ASSERT_TRUE(call(c, get_cm("c1")));
  write("token", "second");
  *now += 30'000'000'000;
  ASSERT_TRUE(call(c, get_cm("c1")));
  *now += 31'000'000'000;
  ASSERT_TRUE(call(c, get_cm("c1")));
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[1].headers["authorization"], "Bearer first");
  EXPECT_EQ(reqs[2].headers["authorization"], "Bearer second");
  // Rotated again and the old token refused: a 401 re-reads the file.
  write("token", "second");
  auto c2 = spawn(cfg, opts);
  write("token", "first");
  ASSERT_TRUE(call(c2, get_cm("c1")));
  write("token", "second");
  only_second = true;
  auto r = call(c2, get_cm("c1"));
  EXPECT_TRUE(r) << error_message(r.error());
}

TEST_F(client_https, watches_stream_events_in_order_until_the_stream_ends) {
  auto& s = serve([](const canned_request& r, exchange& ex) {
    if (r.target.find("watch=true") != std::string::npos)
      return ex.stream();
    ex.reply(200, "{}");
  });
  auto c = spawn(config_for(s));
  auto got = std::make_shared<collected>();
  auto sink = sys.spawn(collecting_sink, got);
  request r;
  r.ref = resource_ref{"", "v1", "configmaps", "bench", "", ""};
  r.resource_version = "10";
  r.allow_watch_bookmarks = true;
  r.timeout_seconds = 350;
  auto id = watch(c, r, sink);
  ASSERT_TRUE(id) << error_message(id.error());
  ASSERT_TRUE(s.wait_stream());
  EXPECT_EQ(s.requests().back().target,
            "/api/v1/namespaces/bench/"
            "configmaps?resourceVersion=10&allowWatchBookmarks=true&"
            "timeoutSeconds=350&watch=true");
  for (int i = 11; i <= 13; ++i)
    s.push_line(
        R"({"type":"MODIFIED","object":{"metadata":{"name":"c","resourceVersion":")"
        + std::to_string(i) + R"("},"data":{"x":"a\"b"}}})");
  // An event split across chunks, then one without its final newline.
  s.push_raw(R"({"type":"BOOKMARK","obj)");
  s.push_raw(R"(ect":{"metadata":{"resourceVersion":"14"}}})"
             "\n");
  s.push_raw(R"({"type":"DELETED","object":{"metadata":{"name":"c"}}})");
  s.end_streams();
  ASSERT_TRUE(got->wait([](collected& c) { return !c.ends.empty(); }));
  ASSERT_EQ(got->events.size(), 5u);
  EXPECT_EQ(got->events[0].type, "MODIFIED");
  EXPECT_EQ(
      got->events[0].object,
      R"({"metadata":{"name":"c","resourceVersion":"11"},"data":{"x":"a\"b"}})");
  EXPECT_EQ(json::parse(got->events[2].object)["metadata"]["resourceVersion"],
            "13");
  EXPECT_EQ(got->events[3].type, "BOOKMARK");
  EXPECT_EQ(got->events[3].object, R"({"metadata":{"resourceVersion":"14"}})");
  EXPECT_EQ(got->events[4].type, "DELETED");
  EXPECT_FALSE(
      got->ends[0]); // a normal end: resume from the last resourceVersion
}

TEST_F(client_https, a_dropped_watch_ends_with_an_error_and_unwatch_ends_it) {
  auto& s = serve([](const canned_request& r, exchange& ex) {
    if (r.target.find("forbidden") != std::string::npos)
      return ex.reply(403, status_body(403, "Forbidden", "nope"));
    ex.stream();
  });
  auto c = spawn(config_for(s));
  auto got = std::make_shared<collected>();
  auto sink = sys.spawn(collecting_sink, got);
  request r;
  r.ref = resource_ref{"", "v1", "configmaps", "bench", "", ""};
  ASSERT_TRUE(watch(c, r, sink));
  ASSERT_TRUE(s.wait_stream());
  s.push_line(R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})");
  s.drop_streams();
  ASSERT_TRUE(got->wait([](collected& c) { return !c.ends.empty(); }));
  EXPECT_EQ(got->events.size(), 1u);
  ASSERT_TRUE(got->ends[0]);
  EXPECT_TRUE(is_error(got->ends[0], k8s::errc::transport));
  // unwatch: watch_end at once, nothing after it.
  auto id = watch(c, r, sink);
  ASSERT_TRUE(id);
  self->send(c, unwatch_atom::value, *id);
  ASSERT_TRUE(got->wait([](collected& c) { return c.ends.size() == 2; }));
  EXPECT_NE(error_message(got->ends[1]).find("unwatched"), std::string::npos);
  s.push_line(R"({"type":"ADDED","object":{"metadata":{"name":"late"}}})");
  // A watch the server refuses is an error reply, not a stream.
  r.label_selector = "forbidden";
  auto refused = watch(c, r, sink);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(is_error(refused.error(), k8s::errc::forbidden))
      << error_message(refused.error());
  EXPECT_EQ(got->events.size(), 1u);
  EXPECT_EQ(got->ends.size(), 2u);
}

TEST_F(client_https, the_informer_resumes_after_a_drop_and_relists_after_410) {
  std::atomic<int> lists{0};
  auto& s = serve([&](const canned_request& r, exchange& ex) {
    if (r.target.find("watch=true") != std::string::npos)
      return ex.stream();
    if (lists++ == 0)
      return ex.reply(
          200, R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":)"
               R"({"resourceVersion":"10"},"items":[{"metadata":{"name":"a",)"
               R"("namespace":"bench","resourceVersion":"3"}}]})");
    ex.reply(200,
             R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":)"
             R"({"resourceVersion":"20"},"items":[{"metadata":{"name":"b",)"
             R"("namespace":"bench","resourceVersion":"19"}}]})");
  });
  auto c = spawn(config_for(s));
  auto got = std::make_shared<collected>();
  auto owner = sys.spawn(collecting_owner, got);
  informer::informer_config icfg;
  icfg.ref = resource_ref{"", "v1", "configmaps", "bench", "", ""};
  icfg.backoff_initial = 20ms;
  icfg.workers = 4;
  auto inf = informer::spawn_informer(sys, c, icfg, owner);
  ASSERT_TRUE(s.wait_stream());
  auto reqs = s.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].target,
            "/api/v1/namespaces/bench/configmaps?limit=500&resourceVersion=0");
  EXPECT_NE(reqs[1].target.find(
                "resourceVersion=10&allowWatchBookmarks=true&timeoutSeconds="),
            std::string::npos);
  s.push_line(
      R"({"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"bench",)"
      R"("resourceVersion":"11"}}})");
  s.drop_streams();
  ASSERT_TRUE(s.wait_requests(3));
  EXPECT_NE(s.requests()[2].target.find("resourceVersion=11&"),
            std::string::npos)
      << s.requests()[2].target;
  ASSERT_TRUE(s.wait_stream());
  s.push_line(
      R"js({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)js"
      R"js("status":"Failure","message":"too old resource version: 11 (15)",)js"
      R"js("reason":"Expired","code":410}})js");
  ASSERT_TRUE(s.wait_requests(5));
  reqs = s.requests();
  EXPECT_EQ(reqs[3].target, "/api/v1/namespaces/bench/configmaps?limit=500");
  EXPECT_NE(reqs[4].target.find("resourceVersion=20&"), std::string::npos)
      << reqs[4].target;
  ASSERT_TRUE(got->wait([](collected& c) {
    return std::find(c.keys.begin(), c.keys.end(), "bench/b") != c.keys.end();
  }));
  caf::expected<std::string> b{caf::error{}};
  self->request(inf, wait_limit, informer::cache_get_atom::value,
                std::string{"bench/b"})
      .receive([&](std::string& x) { b = std::move(x); },
               [&](caf::error& e) { b = std::move(e); });
  ASSERT_TRUE(b) << error_message(b.error());
  EXPECT_EQ(json::parse(*b)["metadata"]["resourceVersion"], "19");
  self->send_exit(inf, caf::exit_reason::user_shutdown);
}

} // namespace
} // namespace aiperf::k8s::client
