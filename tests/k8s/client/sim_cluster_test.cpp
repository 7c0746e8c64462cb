// The product client against `aiperf-node sim-cluster --tls`: its
// kubeconfig, an exec credential plugin (run again at its
// expirationTimestamp), in-cluster config and a rotated service-account
// token, typed errors, 429 back-off from /sim/v1/faults,
// and the informer resuming after /sim/v1/watches:drop and an API server
// restart. Service-account tokens are the simulator's own (TokenRequest),
// so each login is checked by the simulator, and SelfSubjectReview says
// which token a request carried (its credential-id is the token's jti).
#include "k8s/api/json.hpp"
#include "k8s/client/client.hpp"
#include "k8s/client/config.hpp"
#include "k8s/client/transport.hpp"
#include "k8s/informer/informer.hpp"
#include "tests/support/skip.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace aiperf::k8s::client {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr auto wait_limit = 20s;

struct keys_seen {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<std::string> keys;

  bool wait_for(const std::string& key) {
    std::unique_lock guard{mtx};
    return cv.wait_for(guard, wait_limit, [&] {
      return std::find(keys.begin(), keys.end(), key) != keys.end();
    });
  }
};

informer::owner_actor::behavior_type
keys_owner(informer::owner_actor::pointer, std::shared_ptr<keys_seen> seen) {
  return {
      [seen](informer::reconcile_atom, std::string& key) {
        std::lock_guard guard{seen->mtx};
        seen->keys.push_back(key);
        seen->cv.notify_all();
      },
  };
}

caf::actor_system_config& with_errors(caf::actor_system_config& cfg) {
  add_error_category<k8s::errc>(cfg);
  add_error_category<errc>(cfg);
  return cfg;
}

class sim_cluster : public ::testing::Test {
protected:
  void SetUp() override {
    const char* bin = std::getenv("AIPERF_NODE_BIN");
    if (bin == nullptr)
      AIPERF_SKIP_OR_FAIL("AIPERF_NODE_BIN is not set",
                          "run the test through ctest, which sets it");
    char tmpl[] = "/tmp/aiperf-k8s-client-sim-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    kubeconfig_ = (dir_ / "kubeconfig").string();
    int out[2];
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    auto log = (dir_ / "sim.log").string();
    posix_spawn_file_actions_addopen(&fa, 2, log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> args{bin, "sim-cluster", "--tls", "--kubeconfig",
                                  kubeconfig_};
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawn(&pid_, bin, &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    // The one stdout line comes once the kubeconfig is written.
    std::string line;
    char c = 0;
    while (::read(out[0], &c, 1) == 1 && c != '\n')
      line += c;
    ::close(out[0]);
    ASSERT_TRUE(line.starts_with("listening on https://127.0.0.1:")) << line;
    auto cfg = load_config({kubeconfig_, ""}, process_environment());
    ASSERT_TRUE(cfg) << error_message(cfg.error());
    cfg_ = *cfg;
  }

  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  api_actor spawn(client_options opts = {}) {
    auto c = spawn_client(sys, cfg_, std::move(opts));
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

  /// A POST to the simulator's /sim/v1 routes as the admin.
  http_result sim_post(const std::string& path, const std::string& body) {
    transport_options t;
    t.server = cfg_.server;
    t.ca_pem = cfg_.ca_pem;
    auto tx = transport::make(t);
    EXPECT_TRUE(tx);
    http_exchange ex;
    ex.method = "POST";
    ex.target = path;
    ex.body = body;
    ex.timeout_ms = 10'000;
    ex.headers = {{"Authorization", "Bearer " + cfg_.token},
                  {"Content-Type", "application/json"}};
    std::promise<http_result> done;
    auto result = done.get_future();
    (*tx)->send(ex, [&done](http_result r) { done.set_value(std::move(r)); });
    return result.get();
  }

  static request configmap(verb v, const std::string& name) {
    request r;
    r.verb = v;
    r.ref = resource_ref{"", "v1", "configmaps", "default", "", ""};
    if (v == verb::create)
      r.body = json{{"apiVersion", "v1"},
                    {"kind", "ConfigMap"},
                    {"metadata", {{"name", name}}},
                    {"data", {{"k", name}}}}
                   .dump();
    else
      r.ref.name = name;
    return r;
  }

  /// Writes `text` to `rel` under the test's folder; its path.
  std::string write(const std::string& rel, const std::string& text) {
    auto path = dir_ / rel;
    fs::create_directories(path.parent_path());
    std::ofstream{path, std::ios::trunc} << text;
    return path.string();
  }

  /// A kubeconfig whose user logs in with the exec plugin `script`
  /// (bin/get-token, named relative to the kubeconfig), loaded.
  client_config exec_config_of(const std::string& script) {
    auto plugin = write("bin/get-token", script);
    ::chmod(plugin.c_str(), 0755);
    auto kubeconfig = write("kube/config", R"(apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster:
    server: )" + cfg_.server + R"(
    certificate-authority-data: )" + base64_encode(cfg_.ca_pem) + R"(
users:
- name: robot
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ../bin/get-token
      interactiveMode: Never
contexts:
- name: sim
  context: {cluster: sim, user: robot}
current-context: sim
)");
    auto cfg = load_config({kubeconfig, ""}, process_environment());
    EXPECT_TRUE(cfg) << error_message(cfg.error());
    if (!cfg)
      return {};
    EXPECT_TRUE(cfg->exec.has_value());
    EXPECT_TRUE(cfg->token.empty());
    return *cfg;
  }

  /// The service account `robot` in `default`, created (again) by the
  /// admin: a re-created account has a new uid, which invalidates every
  /// token the old one was given.
  void create_robot(const api_actor& admin) {
    request r;
    r.verb = verb::create;
    r.ref = resource_ref{"", "v1", "serviceaccounts", "default", "", ""};
    r.body = json{{"apiVersion", "v1"},
                  {"kind", "ServiceAccount"},
                  {"metadata", {{"name", "robot"}}}}
                 .dump();
    auto created = call(admin, r);
    ASSERT_TRUE(created) << error_message(created.error());
  }

  void delete_robot(const api_actor& admin) {
    request r;
    r.verb = verb::remove;
    r.ref = resource_ref{"", "v1", "serviceaccounts", "default", "robot", ""};
    auto deleted = call(admin, r);
    ASSERT_TRUE(deleted) << error_message(deleted.error());
  }

  /// A new token of `robot` (POST .../serviceaccounts/robot/token).
  std::string robot_token(const api_actor& admin) {
    request r;
    r.verb = verb::create;
    r.ref
        = resource_ref{"", "v1", "serviceaccounts", "default", "robot", "token"};
    r.body = json{{"apiVersion", "authentication.k8s.io/v1"},
                  {"kind", "TokenRequest"},
                  {"spec", json::object()}}
                 .dump();
    auto issued = call(admin, r);
    EXPECT_TRUE(issued) << error_message(issued.error());
    if (!issued)
      return {};
    return json::parse(issued->body)["status"]["token"].get<std::string>();
  }

  /// The jti claim of a token: base64url JSON between the two dots.
  static std::string jti_of(const std::string& token) {
    auto first = token.find('.');
    auto second = token.find('.', first + 1);
    auto payload = token.substr(first + 1, second - first - 1);
    for (auto& ch : payload)
      ch = ch == '-' ? '+' : (ch == '_' ? '/' : ch);
    auto decoded = base64_decode(payload);
    EXPECT_TRUE(decoded.has_value()) << token;
    return decoded ? json::parse(*decoded).value("jti", "") : "";
  }

  /// Who the server says `c` is: SelfSubjectReview's status.userInfo.
  json whoami(const api_actor& c) {
    request r;
    r.verb = verb::create;
    r.ref = resource_ref{"authentication.k8s.io", "v1", "selfsubjectreviews",
                         "",  "",   ""};
    r.body = json{{"apiVersion", "authentication.k8s.io/v1"},
                  {"kind", "SelfSubjectReview"}}
                 .dump();
    auto got = call(c, r);
    EXPECT_TRUE(got) << error_message(got.error());
    return got ? json::parse(got->body)["status"]["userInfo"] : json();
  }

  /// The token a request of `c` carried, as the server saw it.
  std::string credential_of(const api_actor& c) {
    auto user = whoami(c);
    EXPECT_EQ(user.value("username", ""), "system:serviceaccount:default:robot")
        << user.dump();
    auto ids = user.value("extra", json::object())
                   .value("authentication.kubernetes.io/credential-id",
                          json::array());
    return ids.size() == 1 ? ids[0].get<std::string>() : "";
  }

  /// The service-account folder of a pod of `robot`: token, ca.crt and
  /// namespace, and the environment that says the client runs in a pod.
  environment in_cluster_environment(const std::string& token) {
    write("sa/token", token);
    write("sa/ca.crt", cfg_.ca_pem);
    write("sa/namespace", "default");
    auto port = cfg_.server.substr(cfg_.server.rfind(':') + 1);
    return fixed_environment({{"KUBERNETES_SERVICE_HOST", "127.0.0.1"},
                              {"KUBERNETES_SERVICE_PORT", port}},
                             (dir_ / "sa").string());
  }

  fs::path dir_;
  std::string kubeconfig_;
  pid_t pid_ = -1;
  client_config cfg_;
  caf::actor_system_config sys_cfg_;
  caf::actor_system sys{with_errors(sys_cfg_)};
  caf::scoped_actor self{sys};
};

TEST_F(sim_cluster, its_kubeconfig_logs_in_and_errors_are_typed) {
  EXPECT_FALSE(cfg_.token.empty());
  EXPECT_FALSE(cfg_.ca_pem.empty());
  auto c = spawn();
  auto created = call(c, configmap(verb::create, "c1"));
  ASSERT_TRUE(created) << error_message(created.error());
  EXPECT_EQ(created->code, 201);
  auto got = call(c, configmap(verb::get, "c1"));
  ASSERT_TRUE(got) << error_message(got.error());
  EXPECT_EQ(json::parse(got->body)["data"]["k"], "c1");
  auto again = call(c, configmap(verb::create, "c1"));
  ASSERT_FALSE(again);
  EXPECT_TRUE(is_error(again.error(), k8s::errc::already_exists));
  ASSERT_NE(status_of(again.error()), nullptr);
  EXPECT_EQ(status_of(again.error())->message,
            "configmaps \"c1\" already exists");
  auto missing = call(c, configmap(verb::get, "nope"));
  ASSERT_FALSE(missing);
  EXPECT_TRUE(is_error(missing.error(), k8s::errc::not_found));
  EXPECT_EQ(status_of(missing.error())->reason, "NotFound");
}

TEST_F(sim_cluster, an_exec_plugin_script_logs_in_with_the_token_it_prints) {
  auto admin = spawn();
  create_robot(admin);
  auto token = robot_token(admin);
  write("bin/token", token);
  auto cfg = exec_config_of(R"sh(#!/bin/sh
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$(cat "$(dirname "$0")/token")"
)sh");
  auto c = spawn_client(sys, cfg);
  ASSERT_TRUE(c) << error_message(c.error());
  EXPECT_EQ(credential_of(*c), "JTI=" + jti_of(token));
  // Logged in, and held to the account's (empty) RBAC.
  auto denied = call(*c, configmap(verb::get, "kube-root-ca.crt"));
  ASSERT_FALSE(denied);
  EXPECT_TRUE(is_error(denied.error(), k8s::errc::forbidden));
  EXPECT_EQ(status_of(denied.error())->code, 403);
}

TEST_F(sim_cluster, an_exec_credential_is_fetched_again_once_it_expires) {
  auto admin = spawn();
  create_robot(admin);
  auto first = robot_token(admin);
  write("bin/token", first);
  write("bin/expiry", "2001-09-09T02:00:00Z");
  // Every run leaves a line in bin/runs.
  auto cfg = exec_config_of(R"sh(#!/bin/sh
dir="$(dirname "$0")"
echo run >> "$dir/runs"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}' "$(cat "$dir/token")" "$(cat "$dir/expiry")"
)sh");
  auto runs = [this] {
    std::ifstream in{dir_ / "bin/runs"};
    int n = 0;
    for (std::string line; std::getline(in, line);)
      ++n;
    return n;
  };
  // 2001-09-09T01:46:40Z: 800 s before the first credential expires.
  auto now
      = std::make_shared<std::atomic<std::int64_t>>(1'000'000'000'000'000'000);
  client_options opts;
  opts.wall_clock_ns = [now] { return now->load(); };
  auto c = spawn_client(sys, cfg, opts);
  ASSERT_TRUE(c) << error_message(c.error());
  EXPECT_EQ(credential_of(*c), "JTI=" + jti_of(first));
  EXPECT_EQ(runs(), 1);
  // What the plugin would print now changes; until the expiry the client
  // keeps sending what it has.
  auto second = robot_token(admin);
  write("bin/token", second);
  write("bin/expiry", "2001-09-09T03:00:00Z");
  *now += 799'000'000'000;
  EXPECT_EQ(credential_of(*c), "JTI=" + jti_of(first));
  EXPECT_EQ(runs(), 1);
  // At the expirationTimestamp the next request runs the plugin first.
  *now += 1'000'000'000;
  EXPECT_EQ(credential_of(*c), "JTI=" + jti_of(second));
  EXPECT_EQ(runs(), 2);
  EXPECT_EQ(credential_of(*c), "JTI=" + jti_of(second));
  EXPECT_EQ(runs(), 2);
}

TEST_F(sim_cluster, in_cluster_config_logs_in_with_the_service_account) {
  auto admin = spawn();
  create_robot(admin);
  auto token = robot_token(admin);
  auto cfg = load_in_cluster(in_cluster_environment(token));
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  EXPECT_EQ(cfg->server, cfg_.server);
  EXPECT_EQ(cfg->namespace_name, "default");
  auto c = spawn_client(sys, *cfg);
  ASSERT_TRUE(c) << error_message(c.error());
  EXPECT_EQ(credential_of(*c), "JTI=" + jti_of(token));
}

TEST_F(sim_cluster, a_rotated_token_is_read_after_a_minute_or_once_revoked) {
  auto admin = spawn();
  create_robot(admin);
  auto first = robot_token(admin);
  auto cfg = load_in_cluster(in_cluster_environment(first));
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  ASSERT_FALSE(cfg->token_file.empty());
  auto now = std::make_shared<std::atomic<std::int64_t>>(1'000'000'000'000);
  auto metrics = std::make_shared<request_metrics>();
  client_options opts;
  opts.wall_clock_ns = [now] { return now->load(); };
  opts.metrics = metrics;
  auto c = spawn_client(sys, *cfg, opts);
  ASSERT_TRUE(c) << error_message(c.error());
  EXPECT_EQ(credential_of(*c), "JTI=" + jti_of(first));
  // Rotated, the old token still valid (as the kubelet rotates projected
  // tokens): the file is read again once a minute has passed, not before.
  auto second = robot_token(admin);
  write("sa/token", second);
  *now += 30'000'000'000;
  EXPECT_EQ(credential_of(*c), "JTI=" + jti_of(first));
  *now += 31'000'000'000;
  EXPECT_EQ(credential_of(*c), "JTI=" + jti_of(second));
  // Rotated and the cached token revoked, within the minute: the 401 makes
  // the client read the file again and retry.
  delete_robot(admin);
  create_robot(admin);
  auto third = robot_token(admin);
  write("sa/token", third);
  client_config revoked = *cfg;
  revoked.token_file.clear();
  revoked.token = second;
  auto old = call(*spawn_client(sys, revoked),
                  configmap(verb::get, "kube-root-ca.crt"));
  ASSERT_FALSE(old);
  EXPECT_EQ(status_of(old.error())->code, 401);
  EXPECT_EQ(credential_of(*c), "JTI=" + jti_of(third));
  EXPECT_EQ(metrics->value("create", "selfsubjectreviews", "401"), 1u);
  EXPECT_EQ(metrics->value("create", "selfsubjectreviews", "201"), 4u);
}

TEST_F(sim_cluster, too_many_requests_from_a_fault_are_waited_out) {
  auto fault
      = sim_post("/sim/v1/faults",
                 R"({"match":{"verb":"get","resource":"configmaps"},"count":2,)"
                 R"("code":429,"retryAfterSeconds":1})");
  ASSERT_EQ(fault.status, 201) << fault.error << fault.body;
  auto metrics = std::make_shared<request_metrics>();
  client_options opts;
  opts.metrics = metrics;
  auto got = call(spawn(opts), configmap(verb::get, "kube-root-ca.crt"));
  ASSERT_TRUE(got) << error_message(got.error());
  EXPECT_EQ(metrics->value("get", "configmaps", "429"), 2u);
  EXPECT_EQ(metrics->value("get", "configmaps", "200"), 1u);
}

TEST_F(sim_cluster,
       the_informer_resumes_after_a_drop_and_an_api_server_restart) {
  auto metrics = std::make_shared<request_metrics>();
  client_options opts;
  opts.metrics = metrics;
  auto c = spawn(opts);
  auto seen = std::make_shared<keys_seen>();
  auto owner = sys.spawn(keys_owner, seen);
  informer::informer_config icfg;
  icfg.ref = resource_ref{"", "v1", "configmaps", "default", "", ""};
  icfg.workers = 1000;
  icfg.backoff_initial = 20ms;
  auto inf = informer::spawn_informer(sys, c, icfg, owner);
  ASSERT_TRUE(seen->wait_for("default/kube-root-ca.crt"));
  ASSERT_TRUE(call(c, configmap(verb::create, "before-drop")));
  ASSERT_TRUE(seen->wait_for("default/before-drop"));
  auto dropped = sim_post("/sim/v1/watches:drop", "{}");
  ASSERT_EQ(dropped.status / 100, 2) << dropped.error << dropped.body;
  ASSERT_TRUE(call(c, configmap(verb::create, "after-drop")));
  ASSERT_TRUE(seen->wait_for("default/after-drop"));
  // Resumed from its resourceVersion: one list so far, two watches.
  EXPECT_EQ(metrics->value("list", "configmaps", "200"), 1u);
  EXPECT_GE(metrics->value("watch", "configmaps", "200"), 2u);
  auto restarted = sim_post("/sim/v1/apiserver:restart",
                            R"({"downSeconds":0,"keepState":true})");
  ASSERT_EQ(restarted.status / 100, 2) << restarted.error << restarted.body;
  // While the simulator restarts its listener refuses connections, as a
  // restarting kube-apiserver does; a caller tries again.
  auto after = call(c, configmap(verb::create, "after-restart"));
  for (int i = 0;
       i < 100 && !after && is_error(after.error(), k8s::errc::transport);
       ++i) {
    std::this_thread::sleep_for(50ms);
    after = call(c, configmap(verb::create, "after-restart"));
  }
  ASSERT_TRUE(after) << error_message(after.error());
  ASSERT_TRUE(seen->wait_for("default/after-restart"));
  // Watched again after the restart (from its resourceVersion, or after a
  // relist if the simulator answered 410).
  EXPECT_GE(metrics->value("watch", "configmaps", "200"), 3u);
  self->send_exit(inf, caf::exit_reason::user_shutdown);
}

} // namespace
} // namespace aiperf::k8s::client
