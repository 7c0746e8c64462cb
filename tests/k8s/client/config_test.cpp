// Configuration loading: kubeconfig merge rules, contexts, file references,
// in-cluster files, proxies, exec plugin documents, the token file cache.
#include "k8s/api/json.hpp"
#include "k8s/client/config.hpp"
#include "k8s/client/credentials.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace aiperf::k8s::client {
namespace {

namespace fs = std::filesystem;

class config_test : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/aiperf-k8s-config-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& text) {
    auto path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream{path} << text;
    return path.string();
  }
  environment env(std::vector<std::pair<std::string, std::string>> vars = {}) {
    return fixed_environment(std::move(vars), (dir_ / "sa").string());
  }
  fs::path dir_;
};

constexpr const char* first_file = R"(apiVersion: v1
kind: Config
current-context: a
clusters:
- name: c1
  cluster:
    server: https://one.example:6443/
    certificate-authority-data: LS0tLS1CRUdJTg==
    tls-server-name: api.internal
- name: shared
  cluster:
    server: https://first.example
contexts:
- name: a
  context: {cluster: c1, user: u1, namespace: bench}
- name: s
  context: {cluster: shared, user: u1}
users:
- name: u1
  user:
    token: tok-1
)";

constexpr const char* second_file = R"(apiVersion: v1
kind: Config
current-context: b
clusters:
- name: shared
  cluster:
    server: https://second.example
- name: c2
  cluster:
    server: https://two.example
    insecure-skip-tls-verify: true
contexts:
- name: b
  context: {cluster: c2, user: u2}
users:
- name: u2
  user:
    tokenFile: tokens/t
- name: u1
  user:
    token: overridden
)";

TEST_F(config_test, first_file_wins_map_keys_and_current_context) {
  auto f1 = write("one/config", first_file);
  auto f2 = write("two/config", second_file);
  auto cfg = load_config(
      {},
      env({{"KUBECONFIG", f1 + ":" + (dir_ / "missing").string() + ":" + f2}}));
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  EXPECT_EQ(cfg->context_name, "a");
  EXPECT_EQ(cfg->server, "https://one.example:6443");
  EXPECT_EQ(cfg->ca_pem, "-----BEGIN");
  EXPECT_EQ(cfg->tls_server_name, "api.internal");
  EXPECT_EQ(cfg->token, "tok-1");
  EXPECT_EQ(cfg->namespace_name, "bench");
  // The cluster both files define comes from the first.
  auto s = load_kubeconfig({f1, f2}, "s", false, env());
  ASSERT_TRUE(s) << error_message(s.error());
  EXPECT_EQ(s->server, "https://first.example");
  EXPECT_EQ(s->namespace_name, "default");
  // A context only the second file has, with paths relative to it.
  auto b = load_kubeconfig({f1, f2}, "b", false, env());
  ASSERT_TRUE(b) << error_message(b.error());
  EXPECT_EQ(b->server, "https://two.example");
  EXPECT_TRUE(b->insecure_skip_tls_verify);
  EXPECT_EQ(b->token_file, (dir_ / "two/tokens/t").string());
}

TEST_F(config_test, current_context_comes_from_the_first_file_that_sets_it) {
  auto f0 = write("zero", "apiVersion: v1\nkind: Config\nclusters: []\n");
  auto f2 = write("two/config", second_file);
  auto cfg = load_kubeconfig({f0, f2}, "", false, env());
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  EXPECT_EQ(cfg->context_name, "b");
}

TEST_F(config_test, errors_name_the_file_the_key_and_the_fix) {
  auto f1 = write("one/config", first_file);
  auto missing = load_kubeconfig({f1}, "nope", false, env());
  ASSERT_FALSE(missing);
  EXPECT_TRUE(is_error(missing.error(), errc::bad_config));
  EXPECT_EQ(error_message(missing.error()),
            "kubeconfig " + f1
                + ": context \"nope\" not found: pick one of [a, s] with "
                  "--kube-context");
  auto no_server
      = load_kubeconfig_text("clusters: [{name: c, cluster: {}}]\ncontexts: "
                             "[{name: x, context: {cluster: c}}]\n"
                             "current-context: x\n",
                             "/k/cfg", "", env());
  ASSERT_FALSE(no_server);
  EXPECT_EQ(error_message(no_server.error()),
            "kubeconfig /k/cfg, cluster c: server is not set: add "
            "clusters[].cluster.server "
            "(https://HOST:PORT)");
  auto explicit_missing = load_config({(dir_ / "absent").string(), ""}, env());
  ASSERT_FALSE(explicit_missing);
  EXPECT_TRUE(is_error(explicit_missing.error(), errc::no_config));
  auto bad_yaml
      = load_kubeconfig_text("clusters: [unclosed", "/k/cfg", "", env());
  ASSERT_FALSE(bad_yaml);
  EXPECT_NE(
      error_message(bad_yaml.error()).find("kubeconfig /k/cfg: not valid YAML"),
      std::string::npos);
  auto no_file = load_kubeconfig_text(
      "clusters: [{name: c, cluster: {server: 'https://x', "
      "certificate-authority: ca.pem}}]\n"
      "contexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n",
      "/k/cfg", "", env());
  ASSERT_FALSE(no_file);
  EXPECT_EQ(error_message(no_file.error()),
            "kubeconfig /k/cfg, cluster c: certificate-authority: cannot read "
            "/k/ca.pem: check "
            "that the file exists and is readable");
}

TEST_F(config_test, files_are_read_relative_to_their_kubeconfig) {
  write("k/pki/ca.pem", "CA PEM");
  write("k/pki/cert.pem", "CERT PEM");
  write("k/pki/key.pem", "KEY PEM");
  auto f = write("k/config", R"(
clusters: [{name: c, cluster: {server: 'https://x', certificate-authority: pki/ca.pem}}]
users: [{name: u, user: {client-certificate: pki/cert.pem, client-key: pki/key.pem}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
)");
  auto cfg = load_kubeconfig({f}, "", true, env());
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  EXPECT_EQ(cfg->ca_pem, "CA PEM");
  EXPECT_EQ(cfg->client_cert_pem, "CERT PEM");
  EXPECT_EQ(cfg->client_key_pem, "KEY PEM");
  auto half = load_kubeconfig_text(R"(
clusters: [{name: c, cluster: {server: 'https://x'}}]
users: [{name: u, user: {client-certificate-data: Q0VSVA==}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
)",
                                   f, "", env());
  ASSERT_FALSE(half);
  EXPECT_NE(error_message(half.error())
                .find("client-certificate is set without client-key"),
            std::string::npos);
}

TEST_F(config_test, exec_plugins_and_legacy_auth_providers) {
  auto f = write("k/config", R"(
clusters: [{name: c, cluster: {server: 'https://eks.example', certificate-authority-data: Q0E=}}]
users:
- name: eks
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./bin/get-token
      args: [eks, get-token, --cluster-name, demo]
      env: [{name: AWS_PROFILE, value: prod}]
      provideClusterInfo: true
      installHint: install the aws CLI
- name: gke
  user:
    auth-provider: {name: gcp, config: {}}
contexts:
- {name: eks, context: {cluster: c, user: eks}}
- {name: gke, context: {cluster: c, user: gke}}
current-context: eks
)");
  auto cfg = load_kubeconfig({f}, "", true, env());
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  ASSERT_TRUE(cfg->exec.has_value());
  EXPECT_EQ(cfg->exec->api_version, "client.authentication.k8s.io/v1beta1");
  EXPECT_EQ(cfg->exec->command, (dir_ / "k/bin/get-token").string());
  EXPECT_EQ(
      cfg->exec->args,
      (std::vector<std::string>{"eks", "get-token", "--cluster-name", "demo"}));
  ASSERT_EQ(cfg->exec->env.size(), 1u);
  EXPECT_EQ(cfg->exec->env[0].second, "prod");
  EXPECT_TRUE(cfg->exec->provide_cluster_info);
  auto info = k8s::json::parse(exec_info(*cfg->exec, *cfg));
  EXPECT_EQ(info["apiVersion"], "client.authentication.k8s.io/v1beta1");
  EXPECT_EQ(info["kind"], "ExecCredential");
  EXPECT_EQ(info["spec"]["interactive"], false);
  EXPECT_EQ(info["spec"]["cluster"]["server"], "https://eks.example");
  EXPECT_EQ(info["spec"]["cluster"]["certificate-authority-data"], "Q0E=");
  auto gke = load_kubeconfig({f}, "gke", true, env());
  ASSERT_FALSE(gke);
  EXPECT_TRUE(is_error(gke.error(), errc::unsupported));
  EXPECT_NE(error_message(gke.error()).find("gke-gcloud-auth-plugin"),
            std::string::npos);
}

TEST_F(config_test, exec_credential_documents) {
  exec_config exec;
  exec.api_version = "client.authentication.k8s.io/v1";
  exec.command = "plugin";
  exec.origin = "kubeconfig k, user u";
  auto tok = parse_exec_credential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
        "status":{"token":"abc","expirationTimestamp":"2026-12-02T04:00:00Z"}})",
      exec);
  ASSERT_TRUE(tok) << error_message(tok.error());
  EXPECT_EQ(tok->token, "abc");
  EXPECT_EQ(tok->expires_unix_ns, 1796184000LL * 1'000'000'000);
  EXPECT_TRUE(usable(*tok, tok->expires_unix_ns - 1));
  EXPECT_FALSE(usable(*tok, tok->expires_unix_ns));
  auto cert = parse_exec_credential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
        "status":{"clientCertificateData":"C","clientKeyData":"K"}})",
      exec);
  ASSERT_TRUE(cert) << error_message(cert.error());
  EXPECT_EQ(cert->client_key_pem, "K");
  EXPECT_EQ(cert->expires_unix_ns, 0);
  auto wrong = parse_exec_credential(
      R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential",
        "status":{"token":"abc"}})",
      exec);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(
      error_message(wrong.error()),
      "kubeconfig k, user u: exec plugin plugin is configured to use API "
      "version "
      "client.authentication.k8s.io/v1, plugin returned version "
      "client.authentication.k8s.io/v1beta1: fix users[].user.exec.apiVersion");
  EXPECT_FALSE(parse_exec_credential("not json", exec));
  EXPECT_FALSE(parse_exec_credential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}})",
      exec));
}

TEST_F(config_test, in_cluster_reads_the_service_account_directory) {
  write("sa/token", "sa-token\n");
  write("sa/ca.crt", "CLUSTER CA");
  write("sa/namespace", "bench");
  auto cfg = load_config({}, env({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                  {"KUBERNETES_SERVICE_PORT", "443"},
                                  {"HOME", dir_.string()}}));
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  EXPECT_EQ(cfg->server, "https://10.96.0.1:443");
  EXPECT_EQ(cfg->ca_pem, "CLUSTER CA");
  EXPECT_EQ(cfg->namespace_name, "bench");
  EXPECT_EQ(cfg->token_file, (dir_ / "sa/token").string());
  auto v6 = load_in_cluster(env({{"KUBERNETES_SERVICE_HOST", "fd00::1"},
                                 {"KUBERNETES_SERVICE_PORT", "6443"}}));
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->server, "https://[fd00::1]:6443");
  auto outside = load_in_cluster(env());
  ASSERT_FALSE(outside);
  EXPECT_TRUE(is_error(outside.error(), errc::no_config));
  fs::remove(dir_ / "sa/token");
  auto no_token = load_in_cluster(env({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                       {"KUBERNETES_SERVICE_PORT", "443"}}));
  ASSERT_FALSE(no_token);
  EXPECT_TRUE(is_error(no_token.error(), errc::credentials));
}

TEST_F(config_test, home_kubeconfig_is_the_last_resort) {
  write("home/.kube/config", first_file);
  auto cfg = load_config({"", "s"}, env({{"HOME", (dir_ / "home").string()}}));
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  EXPECT_EQ(cfg->server, "https://first.example");
  auto none = load_config({}, env({{"HOME", (dir_ / "nohome").string()}}));
  ASSERT_FALSE(none);
  EXPECT_TRUE(is_error(none.error(), errc::no_config));
}

TEST_F(config_test, proxies_from_kubeconfig_and_environment) {
  auto vars = std::vector<std::pair<std::string, std::string>>{
      {"HTTPS_PROXY", "proxy.corp:3128"},
      {"NO_PROXY", "internal.example,.svc,10.0.0.0/8"}};
  EXPECT_EQ(proxy_from_environment("https://api.example:6443", env(vars)),
            "http://proxy.corp:3128");
  EXPECT_EQ(proxy_from_environment("https://a.internal.example", env(vars)),
            "");
  EXPECT_EQ(proxy_from_environment("https://kubernetes.default.svc", env(vars)),
            "");
  EXPECT_EQ(proxy_from_environment("https://10.1.2.3:443", env(vars)), "");
  EXPECT_EQ(proxy_from_environment("https://127.0.0.1:6443", env(vars)), "");
  EXPECT_EQ(proxy_from_environment("http://api.example", env(vars)), "");
  auto cfg = load_kubeconfig_text(
      "clusters: [{name: c, cluster: {server: 'https://x.example', proxy-url: "
      "'socks5://p:1080'}}]\ncontexts: [{name: x, context: {cluster: "
      "c}}]\ncurrent-context: x\n",
      "/k/cfg", "", env());
  ASSERT_FALSE(cfg);
  EXPECT_TRUE(is_error(cfg.error(), errc::unsupported));
}

TEST_F(config_test, base64_round_trip) {
  for (std::string s : {"", "a", "ab", "abc", "abcd", "\x01\xff\x80 binary"}) {
    auto enc = base64_encode(s);
    auto dec = base64_decode(enc);
    ASSERT_TRUE(dec) << enc;
    EXPECT_EQ(*dec, s);
  }
  EXPECT_EQ(base64_encode("hello"), "aGVsbG8=");
  EXPECT_FALSE(base64_decode("a*b"));
}

TEST_F(config_test, token_file_is_read_at_most_once_a_minute) {
  auto path = write("t", "first\n");
  token_file_source src{path};
  auto t0 = src.token(0);
  ASSERT_TRUE(t0);
  EXPECT_EQ(*t0, "first");
  write("t", "second");
  EXPECT_EQ(*src.token(token_file_period_ns - 1), "first");
  EXPECT_EQ(*src.token(token_file_period_ns), "second");
  fs::remove(path);
  // A failed re-read keeps the last good token.
  EXPECT_EQ(*src.token(3 * token_file_period_ns), "second");
  token_file_source none{(dir_ / "absent").string()};
  auto err = none.token(0);
  ASSERT_FALSE(err);
  EXPECT_TRUE(is_error(err.error(), errc::credentials));
}

} // namespace
} // namespace aiperf::k8s::client
