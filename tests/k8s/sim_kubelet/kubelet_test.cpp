// The emulated kubelet against the store actor and a fake container runtime
// (it records every call, answers pids and addresses, and lets the test fire
// exits and choose probe answers), on the deterministic test coordinator:
// every back-off, probe period and grace period follows simulated time.
#include "k8s/api/json.hpp"
#include "k8s/sim/kubelet/detail.hpp"
#include "k8s/sim/kubelet/kubelet.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::kubelet {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using sandbox::container_spec;

struct fake_runtime_state {
  std::vector<sandbox::sandbox_spec> sandboxes;
  std::vector<std::pair<std::string, container_spec>> starts;
  std::vector<std::tuple<std::string, std::string, std::int32_t>> signals;
  std::vector<std::string> removed;
  std::vector<std::pair<std::string, bool>> links;
  std::vector<sandbox::http_probe> probes;
  // "<port><path>" -> status code; absent: connection refused.
  std::map<std::string, std::int32_t> probe_codes;
  bool hold_sandboxes = false;
  std::vector<std::pair<caf::typed_response_promise<sandbox::sandbox_info>,
                        sandbox::sandbox_info>>
      held;
  sandbox::exit_sink_actor sink;
  std::int32_t next_pid = 100;
  int next_ip = 2;
  std::map<std::string, std::int32_t> pids; // "<uid>/<container>" -> pid
};

// The test's own message to the fake: answer the held sandbox creations
// (a promise is delivered from inside its actor).
using release_atom = caf::atom_constant<caf::atom("klt_releas")>;
using fake_runtime_actor
    = sandbox::runtime_actor::extend<caf::reacts_to<release_atom>>;

fake_runtime_actor::behavior_type
fake_runtime(fake_runtime_actor::pointer self,
             std::shared_ptr<fake_runtime_state> st) {
  return {
      [st](release_atom) {
        for (auto& [promise, info] : st->held)
          promise.deliver(info);
        st->held.clear();
      },
      [self, st](sandbox::create_sandbox_atom, sandbox::sandbox_spec& spec)
          -> caf::result<sandbox::sandbox_info> {
        st->sandboxes.push_back(spec);
        sandbox::sandbox_info info{spec.id,
                                   "10.244.0." + std::to_string(st->next_ip++),
                                   st->next_pid++, "net:[4026532712]"};
        if (!st->hold_sandboxes)
          return info;
        auto promise = self->make_response_promise<sandbox::sandbox_info>();
        st->held.emplace_back(promise, info);
        return promise;
      },
      [st](sandbox::start_container_atom, const std::string& id,
           container_spec& spec) -> caf::result<std::int32_t> {
        st->starts.emplace_back(id, spec);
        auto pid = st->next_pid++;
        st->pids[id + "/" + spec.name] = pid;
        return pid;
      },
      [st](sandbox::signal_atom, const std::string& id, const std::string& name,
           std::int32_t sig) { st->signals.emplace_back(id, name, sig); },
      [st](sandbox::remove_sandbox_atom, const std::string& id) {
        st->removed.push_back(id);
      },
      [st](sandbox::probe_atom,
           sandbox::http_probe& p) -> caf::result<std::int32_t> {
        st->probes.push_back(p);
        auto it = st->probe_codes.find(std::to_string(p.port) + p.path);
        if (it == st->probe_codes.end())
          return make_error(
              errc::transport,
              "Get \"http://" + p.ip + ":" + std::to_string(p.port) + p.path
                  + "\": dial tcp " + p.ip + ":" + std::to_string(p.port)
                  + ": connect: connection refused");
        return it->second;
      },
      [st](sandbox::link_atom, const std::string& id, bool up) {
        st->links.emplace_back(id, up);
      },
      [st](sandbox::subscribe_atom, sandbox::exit_sink_actor& sink) {
        st->sink = sink;
      },
  };
}

constexpr std::int64_t start_seconds = 1'795'000'000; // 2026-11-18

struct kubelet_test : caf_gtest::fixture<> {
  store_actor store;
  std::shared_ptr<fake_runtime_state> rt
      = std::make_shared<fake_runtime_state>();
  fake_runtime_actor fake;
  sandbox::runtime_actor runtime;
  kubelet_actor kubelet;
  std::string work;

  kubelet_test() {
    store_config cfg;
    cfg.start_unix_seconds = start_seconds;
    auto s = spawn_store(sys, cfg);
    EXPECT_TRUE(s) << (s ? "" : error_message(s.error()));
    store = *s;
    fake = sys.spawn(fake_runtime, rt);
    runtime = caf::actor_cast<sandbox::runtime_actor>(fake);
    drain();
    work = (fs::temp_directory_path()
            / ("kubelet-test-" + std::to_string(::getpid()) + "-"
               + ::testing::UnitTest::GetInstance()
                     ->current_test_info()
                     ->name()))
               .string();
    fs::remove_all(work);
    fs::create_directories(work);
    // Token volumes need the `default` ServiceAccount (a store that makes
    // it itself answers AlreadyExists).
    (void)call(
        verb::create, ref("serviceaccounts"),
        json{{"apiVersion", "v1"},
             {"kind", "ServiceAccount"},
             {"metadata", {{"name", "default"}, {"namespace", "default"}}}});
    drain();
  }

  ~kubelet_test() override {
    std::error_code ec;
    fs::remove_all(work, ec);
  }

  // A request whose reply is void: none on success, else the error.
  template <class... Ts> caf::expected<void> ask(Ts&&... xs) {
    auto h = self->request(kubelet, caf::infinite, std::forward<Ts>(xs)...);
    drain();
    caf::expected<void> result{caf::make_error(caf::sec::request_timeout)};
    if (self->peek_at_next_mailbox_element() == nullptr)
      return result;
    h.receive([&] { result = caf::expected<void>{}; },
              [&](caf::error& e) { result = std::move(e); });
    return result;
  }

  api_actor api() const { return caf::actor_cast<api_actor>(store); }

  void start(double backoff_scale = 1.0) {
    kubelet_config cfg;
    cfg.work_dir = work;
    cfg.pv_dir = work + "/pv";
    cfg.aiperf_node_path = "/opt/aiperf/aiperf-node";
    cfg.image_map = {{"busybox:1.36", "/bin/busybox"}};
    cfg.dns_server = "10.244.0.1";
    cfg.api_host = "10.244.0.1";
    cfg.api_port = 6443;
    cfg.backoff_scale = backoff_scale;
    cfg.start_unix_seconds = start_seconds;
    kubelet = spawn_kubelet(sys, api(), runtime, cfg);
    drain();
  }

  caf::expected<response> call(verb v, resource_ref ref,
                               const json& body = nullptr, bool table = false) {
    k8s::request r;
    r.verb = v;
    r.ref = std::move(ref);
    r.as_table = table;
    if (!body.is_null())
      r.body = body.dump();
    return request<response>(api(), r);
  }

  static resource_ref ref(const std::string& resource,
                          const std::string& name = {},
                          const std::string& ns = "default") {
    return {"", "v1", resource, ns, name, ""};
  }

  json create(const std::string& resource, const json& obj) {
    auto res = call(verb::create, ref(resource), obj);
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    drain();
    return res ? json::parse(res->body) : json{};
  }

  json get(const std::string& resource, const std::string& name) {
    auto res = call(verb::get, ref(resource, name));
    return res ? json::parse(res->body) : json{};
  }

  json pod(const std::string& name = "p") { return get("pods", name); }

  // STATUS as `kubectl get pods` prints it.
  std::string status_column(const std::string& name = "p") {
    auto res = call(verb::get, ref("pods", name), nullptr, true);
    if (!res)
      return "error: " + error_message(res.error());
    auto table = json::parse(res->body);
    return table["rows"][0]["cells"][2].get<std::string>();
  }

  static json container(const std::string& name = "c",
                        const std::string& image = "busybox:1.36") {
    return json{{"name", name}, {"image", image}};
  }

  json make_pod(const std::string& name, json containers,
                const std::string& restart_policy = "Always") {
    return json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"spec",
                 {{"nodeName", "sim-node-0"},
                  {"restartPolicy", restart_policy},
                  {"containers", std::move(containers)}}}};
  }

  json run(json pod_obj) { return create("pods", pod_obj); }

  json config_map(const std::string& name, json data) {
    return json{{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"data", std::move(data)}};
  }

  json secret(const std::string& name, json string_data) {
    return json{{"apiVersion", "v1"},
                {"kind", "Secret"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"stringData", std::move(string_data)}};
  }

  json container_status(const std::string& name = "p", size_t i = 0) {
    auto p = pod(name);
    return p["status"]["containerStatuses"][i];
  }

  std::string waiting_reason(const std::string& name = "p") {
    auto s = container_status(name);
    return s["state"].contains("waiting")
               ? s["state"]["waiting"].value("reason", "")
               : std::string{};
  }

  std::string waiting_message(const std::string& name = "p") {
    auto s = container_status(name);
    return s["state"].contains("waiting")
               ? s["state"]["waiting"].value("message", "")
               : std::string{};
  }

  std::string condition(const std::string& type,
                        const std::string& name = "p") {
    auto p = pod(name);
    for (const auto& c : p["status"]["conditions"])
      if (c["type"] == type)
        return c["status"];
    return "";
  }

  void exit_container(const std::string& pod_name, const std::string& c,
                      std::int32_t code) {
    auto uid = pod(pod_name)["metadata"]["uid"].get<std::string>();
    ASSERT_TRUE(rt->sink);
    self->send(rt->sink, sandbox::exited_atom::value, uid, c,
               rt->pids[uid + "/" + c], code);
    drain();
  }

  // Events about the pod, as "reason: message".
  std::vector<std::string> events() {
    std::vector<std::string> out;
    auto res = call(verb::list, ref("events"));
    if (!res)
      return out;
    auto doc = json::parse(res->body);
    for (const auto& e : doc["items"])
      out.push_back(e["reason"].get<std::string>() + ": "
                    + e["message"].get<std::string>());
    return out;
  }

  bool has_event(const std::string& text) {
    auto all = events();
    return std::find(all.begin(), all.end(), text) != all.end();
  }

  std::int64_t event_count(const std::string& text) {
    auto res = call(verb::list, ref("events"));
    if (!res)
      return 0;
    auto doc = json::parse(res->body);
    for (const auto& e : doc["items"])
      if (e["reason"].get<std::string>() + ": "
              + e["message"].get<std::string>()
          == text)
        return e.value("count", 0);
    return 0;
  }

  static std::string env_value(const container_spec& spec,
                               const std::string& name) {
    for (const auto& kv : spec.env)
      if (kv.rfind(name + "=", 0) == 0)
        return kv.substr(name.size() + 1);
    return "<unset>";
  }
};

// --- the pure rules ----------------------------------------------------------

TEST(kubelet_detail, expansion_follows_kubernetes) {
  auto lookup = [](const std::string& n) -> std::optional<std::string> {
    if (n == "A")
      return std::string{"x"};
    return std::nullopt;
  };
  EXPECT_EQ(detail::expand("$(A)-$(B)-$$(A)-$", lookup), "x-$(B)-$(A)-$");
}

TEST(kubelet_detail, hosts_and_resolv_conf_as_kubelet_writes_them) {
  auto pod = json::parse(R"({"metadata":{"name":"w-0","namespace":"bench"},
      "spec":{"hostname":"w-0","subdomain":"workers"}})");
  auto hosts = detail::hosts_file(pod, "10.244.0.9", "cluster.local");
  EXPECT_NE(hosts.find("127.0.0.1\tlocalhost\n"), std::string::npos);
  EXPECT_NE(
      hosts.find("10.244.0.9\tw-0.workers.bench.svc.cluster.local\tw-0\n"),
      std::string::npos);
  EXPECT_EQ(detail::resolv_conf(pod, "10.244.0.1", "cluster.local"),
            "search bench.svc.cluster.local svc.cluster.local cluster.local\n"
            "nameserver 10.244.0.1\noptions ndots:5\n");
}

// --- security ----------------------------------------------------------------

TEST_F(kubelet_test, run_as_non_root_with_a_root_image_is_refused) {
  start();
  auto p = make_pod("p", json::array({container()}));
  p["spec"]["securityContext"] = {{"runAsNonRoot", true}};
  auto created = run(p);
  auto uid = created["metadata"]["uid"].get<std::string>();
  EXPECT_EQ(waiting_reason(), "CreateContainerConfigError");
  EXPECT_EQ(waiting_message(),
            "container has runAsNonRoot and image will run as root (pod: "
            "\"p_default("
                + uid + ")\", container: c)");
  EXPECT_TRUE(rt->starts.empty());
  EXPECT_EQ(status_column(), "CreateContainerConfigError");
  EXPECT_TRUE(has_event("Failed: Error: container has runAsNonRoot and image "
                        "will run as root (pod: \"p_default("
                        + uid + ")\", container: c)"));
}

TEST_F(kubelet_test, security_context_reaches_the_runtime) {
  start();
  auto c = container();
  c["securityContext"] = {{"runAsUser", 1234},
                          {"readOnlyRootFilesystem", true},
                          {"allowPrivilegeEscalation", false},
                          {"capabilities", {{"drop", {"ALL"}}}}};
  auto p = make_pod("p", json::array({c}));
  p["spec"]["securityContext"] = {{"runAsUser", 1},
                                  {"runAsGroup", 5},
                                  {"fsGroup", 2000},
                                  {"supplementalGroups", {3000}},
                                  {"runAsNonRoot", true}};
  run(p);
  ASSERT_EQ(rt->starts.size(), 1u);
  const auto& spec = rt->starts[0].second;
  EXPECT_EQ(spec.uid, 1234u); // the container's runAsUser wins
  EXPECT_EQ(spec.gid, 5u);
  EXPECT_EQ(spec.groups, (std::vector<std::uint32_t>{2000, 3000}));
  EXPECT_TRUE(spec.read_only_root);
  EXPECT_TRUE(spec.drop_all_capabilities);
  EXPECT_TRUE(spec.no_new_privileges);
  EXPECT_EQ(spec.argv, (std::vector<std::string>{"/bin/busybox"}));
  // The aiperf-node image runs as 1000 and with its `command` name.
  auto q = make_pod(
      "q", json::array({json{{"name", "m"},
                             {"image", "nvcr.io/x/aiperf-node:dev"},
                             {"command", {"aiperf-node"}},
                             {"args", {"mock-server", "-p", "8000"}}}}));
  run(q);
  ASSERT_EQ(rt->starts.size(), 2u);
  EXPECT_EQ(rt->starts[1].second.uid, 1000u);
  EXPECT_EQ(rt->starts[1].second.argv,
            (std::vector<std::string>{"/opt/aiperf/aiperf-node", "mock-server",
                                      "-p", "8000"}));
}

// --- env ---------------------------------------------------------------------

TEST_F(kubelet_test, missing_secret_and_key_are_kubelet_messages) {
  start();
  auto c = container();
  c["env"] = json::array(
      {json{{"name", "TOKEN"},
            {"valueFrom", {{"secretKeyRef", {{"name", "s"}, {"key", "k"}}}}}}});
  run(make_pod("p", json::array({c})));
  EXPECT_EQ(waiting_reason(), "CreateContainerConfigError");
  EXPECT_EQ(waiting_message(), "secret \"s\" not found");
  create("secrets", secret("s", {{"other", "1"}}));
  EXPECT_EQ(waiting_message(), "couldn't find key k in Secret default/s");
  EXPECT_TRUE(rt->starts.empty());
  // The key appears: the container starts on the next sync.
  auto s = get("secrets", "s");
  s["data"]["k"] = "c2VjcmV0"; // "secret"
  ASSERT_TRUE(call(verb::update, ref("secrets", "s"), s));
  drain();
  ASSERT_EQ(rt->starts.size(), 1u);
  EXPECT_EQ(env_value(rt->starts[0].second, "TOKEN"), "secret");
}

TEST_F(kubelet_test, env_field_refs_secrets_and_expansion) {
  start();
  create("configmaps", config_map("cfg", {{"mode", "fast"}}));
  create("secrets", secret("s", {{"password", "hunter2"}}));
  auto c = container();
  c["env"] = json::parse(R"J([
    {"name":"POD","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},
    {"name":"NS","valueFrom":{"fieldRef":{"fieldPath":"metadata.namespace"}}},
    {"name":"APP","valueFrom":{"fieldRef":{"fieldPath":"metadata.labels['app']"}}},
    {"name":"NODE","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}},
    {"name":"IP","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}},
    {"name":"MODE","valueFrom":{"configMapKeyRef":{"name":"cfg","key":"mode"}}},
    {"name":"PW","valueFrom":{"secretKeyRef":{"name":"s","key":"password"}}},
    {"name":"URL","value":"http://$(IP):8000/$(MODE)/$(NOPE)"}])J");
  c["args"] = {"--pod", "$(POD)", "$$(POD)"};
  auto p = make_pod("p", json::array({c}));
  p["metadata"]["labels"] = {{"app", "bench"}};
  auto created = run(p);
  ASSERT_EQ(rt->starts.size(), 1u);
  const auto& spec = rt->starts[0].second;
  EXPECT_EQ(env_value(spec, "POD"), "p");
  EXPECT_EQ(env_value(spec, "NS"), "default");
  EXPECT_EQ(env_value(spec, "APP"), "bench");
  EXPECT_EQ(env_value(spec, "NODE"), "sim-node-0");
  EXPECT_EQ(env_value(spec, "IP"), "10.244.0.2");
  EXPECT_EQ(env_value(spec, "MODE"), "fast");
  EXPECT_EQ(env_value(spec, "PW"), "hunter2");
  EXPECT_EQ(env_value(spec, "URL"), "http://10.244.0.2:8000/fast/$(NOPE)");
  EXPECT_EQ(env_value(spec, "KUBERNETES_SERVICE_HOST"), "10.244.0.1");
  EXPECT_EQ(env_value(spec, "KUBERNETES_SERVICE_PORT"), "6443");
  EXPECT_EQ(env_value(spec, "KUBERNETES_PORT"), "tcp://10.244.0.1:6443");
  EXPECT_EQ(spec.argv,
            (std::vector<std::string>{"/bin/busybox", "--pod", "p", "$(POD)"}));
  // /etc/hosts carries the pod's address once the sandbox has one.
  ASSERT_FALSE(spec.mounts.empty());
  EXPECT_EQ(spec.mounts.back().target, "/etc/hosts");
  std::ifstream hosts(spec.mounts.back().source);
  std::string text{std::istreambuf_iterator<char>(hosts), {}};
  EXPECT_NE(text.find("10.244.0.2\tp\n"), std::string::npos) << text;
  // The store's ServiceAccount admission mounts kube-api-access-<5>: a
  // bound token, the cluster CA and the namespace.
  auto sa = std::find_if(spec.mounts.begin(), spec.mounts.end(),
                         [](const sandbox::mount& m) {
                           return m.target
                                  == "/var/run/secrets/kubernetes.io/"
                                     "serviceaccount";
                         });
  ASSERT_NE(sa, spec.mounts.end());
  EXPECT_TRUE(sa->read_only);
  std::ifstream ns_file(sa->source + "/namespace");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(ns_file), {}),
            "default");
  EXPECT_TRUE(fs::exists(sa->source + "/token"));
  EXPECT_TRUE(fs::exists(sa->source + "/ca.crt"));
  ASSERT_EQ(rt->sandboxes.size(), 1u);
  EXPECT_EQ(rt->sandboxes[0].resolv_conf,
            "search default.svc.cluster.local svc.cluster.local "
            "cluster.local\nnameserver 10.244.0.1\noptions ndots:5\n");
}

// --- volumes -----------------------------------------------------------------

TEST_F(kubelet_test, config_map_volume_has_the_atomic_writer_layout) {
  start();
  create("configmaps", config_map("cfg", {{"a", "one"}, {"b", "two"}}));
  auto c = container();
  c["volumeMounts"] = {{{"name", "conf"}, {"mountPath", "/etc/conf"}}};
  auto p = make_pod("p", json::array({c}));
  p["spec"]["volumes"] = {{{"name", "conf"}, {"configMap", {{"name", "cfg"}}}}};
  auto uid = run(p)["metadata"]["uid"].get<std::string>();
  auto dir = fs::path(work) / "pods" / uid / "volumes" / "conf";
  ASSERT_TRUE(fs::is_symlink(dir / "..data"));
  auto first = fs::read_symlink(dir / "..data").string();
  EXPECT_TRUE(std::regex_match(
      first, std::regex(R"(\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d{9})")))
      << first;
  EXPECT_EQ(fs::read_symlink(dir / "a").string(), "..data/a");
  std::ifstream a(dir / "a");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}), "one");
  EXPECT_EQ(fs::status(dir / first / "a").permissions() & fs::perms::mask,
            static_cast<fs::perms>(0644));
  ASSERT_EQ(rt->starts.size(), 1u);
  const auto& mounts = rt->starts[0].second.mounts;
  ASSERT_GE(mounts.size(), 1u);
  EXPECT_EQ(mounts[0].source, dir.string());
  EXPECT_EQ(mounts[0].target, "/etc/conf");
  EXPECT_TRUE(mounts[0].read_only);
  // An update: a new folder, `..data` swapped, the old folder gone, and a
  // key no longer present loses its name.
  advance_time(1s);
  auto cm = get("configmaps", "cfg");
  cm["data"] = {{"a", "uno"}};
  ASSERT_TRUE(call(verb::update, ref("configmaps", "cfg"), cm));
  drain();
  auto second = fs::read_symlink(dir / "..data").string();
  EXPECT_NE(second, first);
  EXPECT_FALSE(fs::exists(dir / first));
  EXPECT_FALSE(fs::exists(dir / "..data_tmp"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "b")));
  std::ifstream a2(dir / "a");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a2), {}), "uno");
}

TEST_F(kubelet_test, missing_config_map_volume_is_failed_mount) {
  start();
  auto c = container();
  c["volumeMounts"] = {{{"name", "conf"}, {"mountPath", "/etc/conf"}}};
  auto p = make_pod("p", json::array({c}));
  p["spec"]["volumes"]
      = {{{"name", "conf"}, {"configMap", {{"name", "nope"}}}}};
  run(p);
  EXPECT_TRUE(rt->sandboxes.empty());
  EXPECT_EQ(status_column(), "ContainerCreating");
  EXPECT_TRUE(has_event("FailedMount: MountVolume.SetUp failed for volume "
                        "\"conf\" : configmap \"nope\" not found"));
  create("configmaps", config_map("nope", {{"x", "1"}}));
  EXPECT_EQ(rt->starts.size(), 1u);
}

TEST_F(kubelet_test, projected_token_is_pod_bound_and_rotated) {
  start();
  auto c = container();
  c["volumeMounts"] = {{{"name", "tok"}, {"mountPath", "/var/run/secrets/t"}}};
  auto p = make_pod("p", json::array({c}));
  p["spec"]["volumes"] = json::parse(R"([{"name":"tok","projected":{"sources":[
      {"serviceAccountToken":{"path":"token","expirationSeconds":3600}},
      {"downwardAPI":{"items":[{"path":"name","fieldRef":{"fieldPath":"metadata.name"}}]}}]}}])");
  auto uid = run(p)["metadata"]["uid"].get<std::string>();
  auto dir = fs::path(work) / "pods" / uid / "volumes" / "tok";
  std::ifstream t(dir / "token");
  std::string first{std::istreambuf_iterator<char>(t), {}};
  EXPECT_EQ(std::count(first.begin(), first.end(), '.'), 2) << first;
  std::ifstream n(dir / "name");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(n), {}), "p");
  EXPECT_EQ(rt->starts.size(), 1u);
  // 80 % of 3600 s later the token is fetched again.
  advance_time(2879s);
  std::ifstream t1(dir / "token");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(t1), {}), first);
  advance_time(2s);
  std::ifstream t2(dir / "token");
  EXPECT_NE(std::string(std::istreambuf_iterator<char>(t2), {}), first);
}

TEST_F(kubelet_test, claim_volume_is_the_bound_claims_folder) {
  start();
  auto claim
      = create("persistentvolumeclaims",
               json::parse(R"({"apiVersion":"v1","kind":"PersistentVolumeClaim",
        "metadata":{"name":"data","namespace":"default"},
        "spec":{"accessModes":["ReadWriteOnce"],
                "resources":{"requests":{"storage":"1Gi"}}}})"));
  auto c = container();
  c["volumeMounts"] = {{{"name", "d"}, {"mountPath", "/data"}}};
  auto p = make_pod("p", json::array({c}));
  p["spec"]["volumes"]
      = {{{"name", "d"}, {"persistentVolumeClaim", {{"claimName", "data"}}}}};
  run(p);
  EXPECT_TRUE(rt->sandboxes.empty()); // not bound yet
  claim = get("persistentvolumeclaims", "data");
  claim["status"] = {{"phase", "Bound"}};
  auto bound = call(verb::update,
                    resource_ref{"", "v1", "persistentvolumeclaims", "default",
                                 "data", "status"},
                    claim);
  ASSERT_TRUE(bound) << error_message(bound.error());
  drain();
  ASSERT_EQ(rt->starts.size(), 1u);
  const auto& mounts = rt->starts[0].second.mounts;
  ASSERT_GE(mounts.size(), 1u);
  EXPECT_EQ(mounts[0].source,
            work + "/pv/" + claim["metadata"]["uid"].get<std::string>());
  EXPECT_EQ(mounts[0].target, "/data");
  EXPECT_FALSE(mounts[0].read_only);
  EXPECT_TRUE(fs::is_directory(mounts[0].source));
}

// --- probes ------------------------------------------------------------------

TEST_F(kubelet_test, readiness_probe_drives_ready) {
  start();
  auto c = container();
  c["readinessProbe"] = json::parse(R"({"httpGet":{"path":"/ready","port":8080},
      "initialDelaySeconds":2,"periodSeconds":5,"failureThreshold":1})");
  run(make_pod("p", json::array({c})));
  EXPECT_EQ(condition("Ready"), "False");
  EXPECT_EQ(status_column(), "Running");
  rt->probe_codes["8080/ready"] = 503;
  advance_time(2s);
  ASSERT_EQ(rt->probes.size(), 1u);
  EXPECT_EQ(rt->probes[0].ip, "10.244.0.2");
  EXPECT_EQ(condition("Ready"), "False");
  EXPECT_TRUE(has_event("Unhealthy: Readiness probe failed: HTTP probe failed "
                        "with statuscode: 503"));
  rt->probe_codes["8080/ready"] = 200;
  advance_time(5s);
  EXPECT_EQ(condition("Ready"), "True");
  EXPECT_EQ(condition("ContainersReady"), "True");
  EXPECT_TRUE(container_status()["ready"].get<bool>());
  rt->probe_codes.erase("8080/ready");
  advance_time(5s);
  EXPECT_EQ(condition("Ready"), "False");
}

TEST_F(kubelet_test, liveness_failure_kills_and_restarts) {
  start();
  auto c = container();
  c["livenessProbe"]
      = json::parse(R"({"httpGet":{"path":"/healthz","port":8080},
      "periodSeconds":10,"failureThreshold":2})");
  auto p = make_pod("p", json::array({c}));
  p["spec"]["terminationGracePeriodSeconds"] = 5;
  run(p);
  advance_time(0s); // the first probe: one failure of two
  EXPECT_TRUE(rt->signals.empty());
  advance_time(10s);
  ASSERT_EQ(rt->signals.size(), 1u);
  EXPECT_EQ(std::get<2>(rt->signals[0]), 15);
  EXPECT_TRUE(has_event("Killing: Container c failed liveness probe, will be "
                        "restarted"));
  EXPECT_TRUE(
      has_event("Unhealthy: Liveness probe failed: Get "
                "\"http://10.244.0.2:8080/healthz\": "
                "dial tcp 10.244.0.2:8080: connect: connection refused"));
  // It ignores SIGTERM: SIGKILL when the grace period ends.
  advance_time(5s);
  ASSERT_EQ(rt->signals.size(), 2u);
  EXPECT_EQ(std::get<2>(rt->signals[1]), 9);
  exit_container("p", "c", 137);
  ASSERT_EQ(rt->starts.size(), 2u);
  auto s = container_status();
  EXPECT_EQ(s["restartCount"], 1);
  EXPECT_EQ(s["lastState"]["terminated"]["exitCode"], 137);
  EXPECT_TRUE(s["state"].contains("running"));
}

TEST_F(kubelet_test, startup_probe_holds_the_others_back) {
  start();
  auto c = container();
  c["startupProbe"] = json::parse(R"({"httpGet":{"path":"/start","port":8080},
      "periodSeconds":5,"failureThreshold":3})");
  c["livenessProbe"] = json::parse(R"({"httpGet":{"path":"/live","port":8080},
      "periodSeconds":5})");
  run(make_pod("p", json::array({c})));
  advance_time(0s);
  advance_time(5s); // two startup failures of three
  EXPECT_FALSE(container_status()["started"].get<bool>());
  EXPECT_EQ(condition("Ready"), "False");
  rt->probe_codes["8080/start"] = 204;
  rt->probe_codes["8080/live"] = 200;
  advance_time(5s);
  EXPECT_TRUE(container_status()["started"].get<bool>());
  EXPECT_EQ(condition("Ready"), "True"); // no readiness probe
  EXPECT_EQ(rt->probes.size(), 3u);
  advance_time(0s); // liveness starts now (initialDelaySeconds 0)
  ASSERT_EQ(rt->probes.size(), 4u); // three startup probes, then liveness
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(rt->probes[i].path, "/start");
  EXPECT_EQ(rt->probes[3].path, "/live");
  EXPECT_TRUE(rt->signals.empty());
}

// --- restarts ----------------------------------------------------------------

TEST_F(kubelet_test, crash_loop_back_off_doubles_from_ten_seconds) {
  start();
  auto uid = run(make_pod("p", json::array({container()})))["metadata"]["uid"]
                 .get<std::string>();
  exit_container("p", "c", 1); // the first restart is at once
  ASSERT_EQ(rt->starts.size(), 2u);
  exit_container("p", "c", 1);
  EXPECT_EQ(waiting_reason(), "CrashLoopBackOff");
  EXPECT_EQ(waiting_message(), "back-off 10s restarting failed container=c "
                               "pod=p_default("
                                   + uid + ")");
  EXPECT_EQ(status_column(), "CrashLoopBackOff");
  EXPECT_EQ(pod()["status"]["phase"], "Running");
  advance_time(9s);
  EXPECT_EQ(rt->starts.size(), 2u);
  advance_time(1s);
  ASSERT_EQ(rt->starts.size(), 3u);
  EXPECT_EQ(container_status()["restartCount"], 2);
  exit_container("p", "c", 1);
  EXPECT_EQ(waiting_message(), "back-off 20s restarting failed container=c "
                               "pod=p_default("
                                   + uid + ")");
  advance_time(19s);
  EXPECT_EQ(rt->starts.size(), 3u);
  advance_time(1s);
  EXPECT_EQ(rt->starts.size(), 4u);
  EXPECT_TRUE(has_event("BackOff: Back-off restarting failed container c in "
                        "pod p_default("
                        + uid + ")"));
  // Logs: one file per attempt; `previous` is the attempt before.
  auto log = request<pod_log_source>(kubelet, pod_log_atom::value,
                                     std::string{"default"}, std::string{"p"},
                                     std::string{}, false);
  ASSERT_TRUE(log);
  EXPECT_TRUE(log->running);
  EXPECT_EQ(fs::path(log->path).filename(), "3.log");
  auto prev = request<pod_log_source>(kubelet, pod_log_atom::value,
                                      std::string{"default"}, std::string{"p"},
                                      std::string{"c"}, true);
  ASSERT_TRUE(prev);
  EXPECT_EQ(fs::path(prev->path).filename(), "2.log");
  EXPECT_FALSE(prev->running);
}

TEST_F(kubelet_test, back_off_is_scaled) {
  start(0.1);
  run(make_pod("p", json::array({container()})));
  exit_container("p", "c", 1);
  exit_container("p", "c", 1);
  EXPECT_NE(waiting_message().find("back-off 1s restarting"),
            std::string::npos);
  advance_time(1s);
  EXPECT_EQ(rt->starts.size(), 3u);
}

TEST_F(kubelet_test, on_failure_and_never) {
  start();
  run(make_pod("ok", json::array({container()}), "OnFailure"));
  exit_container("ok", "c", 0);
  EXPECT_EQ(pod("ok")["status"]["phase"], "Succeeded");
  EXPECT_EQ(status_column("ok"), "Completed");
  run(make_pod("bad", json::array({container()}), "Never"));
  exit_container("bad", "c", 2);
  EXPECT_EQ(pod("bad")["status"]["phase"], "Failed");
  EXPECT_EQ(status_column("bad"), "Error");
  EXPECT_EQ(rt->starts.size(), 2u);
}

TEST_F(kubelet_test, a_status_write_fenced_out_is_read_again_and_retried) {
  start();
  auto uid = run(make_pod("p", json::array({container()}),
                          "Never"))["metadata"]["uid"]
                 .get<std::string>();
  auto labelled = pod();
  labelled["metadata"]["labels"] = {{"x", "1"}};
  // The exit reaches the kubelet before the label change reaches the store:
  // its status write carries the older resourceVersion and is refused.
  self->send(rt->sink, sandbox::exited_atom::value, uid, std::string{"c"},
             rt->pids[uid + "/c"], std::int32_t{0});
  k8s::request update;
  update.verb = verb::update;
  update.ref = ref("pods", "p");
  update.body = labelled.dump();
  auto h = self->request(api(), caf::infinite, update);
  drain();
  h.receive([](response&) {},
            [](caf::error& e) { FAIL() << error_message(e); });
  auto now = pod();
  EXPECT_EQ(now["metadata"]["labels"]["x"], "1");
  EXPECT_EQ(now["status"]["phase"], "Succeeded");
  EXPECT_EQ(status_column(), "Completed");
}

// --- STATUS over a pod's life ------------------------------------------------

TEST_F(kubelet_test, status_column_pending_creating_running_completed) {
  rt->hold_sandboxes = true;
  run(make_pod("p", json::array({container()}), "Never"));
  EXPECT_EQ(status_column(), "Pending");
  start();
  EXPECT_EQ(status_column(), "ContainerCreating");
  ASSERT_EQ(rt->held.size(), 1u);
  self->send(fake, release_atom::value);
  drain();
  EXPECT_EQ(status_column(), "Running");
  auto st = pod()["status"];
  EXPECT_EQ(st["podIP"], "10.244.0.2");
  EXPECT_EQ(st["phase"], "Running");
  EXPECT_TRUE(container_status()["started"].get<bool>());
  exit_container("p", "c", 0);
  EXPECT_EQ(status_column(), "Completed");
  auto t = container_status()["state"]["terminated"];
  EXPECT_EQ(t["reason"], "Completed");
  EXPECT_EQ(t["exitCode"], 0);
  EXPECT_EQ(t["containerID"].get<std::string>().rfind("sim://", 0), 0u);
}

TEST_F(kubelet_test, init_containers_run_first) {
  start();
  auto p = make_pod("p", json::array({container("main")}));
  p["spec"]["initContainers"] = json::array({container("setup")});
  run(p);
  ASSERT_EQ(rt->starts.size(), 1u);
  EXPECT_EQ(rt->starts[0].second.name, "setup");
  EXPECT_EQ(status_column(), "Init:0/1");
  exit_container("p", "setup", 0);
  ASSERT_EQ(rt->starts.size(), 2u);
  EXPECT_EQ(rt->starts[1].second.name, "main");
  EXPECT_EQ(status_column(), "Running");
}

TEST_F(kubelet_test, sidecar_init_container_runs_beside_the_main_one) {
  start();
  auto p = make_pod("p", json::array({container("main")}), "Never");
  auto side = container("side");
  side["restartPolicy"] = "Always";
  p["spec"]["initContainers"] = json::array({side});
  run(p);
  ASSERT_EQ(rt->starts.size(), 2u);
  EXPECT_EQ(rt->starts[0].second.name, "side");
  EXPECT_EQ(rt->starts[1].second.name, "main");
  EXPECT_EQ(status_column(), "Running");
  exit_container("p", "side", 1); // a sidecar restarts whatever the policy
  EXPECT_EQ(rt->starts.size(), 3u);
  exit_container("p", "main", 0);
  EXPECT_EQ(pod()["status"]["phase"], "Succeeded");
  ASSERT_EQ(rt->signals.size(), 1u); // the sidecar is stopped
  EXPECT_EQ(std::get<1>(rt->signals[0]), "side");
}

TEST_F(kubelet_test, unpullable_image_backs_off) {
  start();
  run(make_pod("p", json::array({container("c", "nosuch:1")})));
  EXPECT_EQ(waiting_reason(), "ErrImagePull");
  EXPECT_EQ(waiting_message(),
            "rpc error: code = NotFound desc = failed to pull and unpack image "
            "\"docker.io/library/nosuch:1\": failed to resolve reference "
            "\"docker.io/library/nosuch:1\": docker.io/library/nosuch:1: not "
            "found");
  EXPECT_EQ(status_column(), "ErrImagePull");
  advance_time(1s);
  EXPECT_EQ(waiting_reason(), "ImagePullBackOff");
  EXPECT_EQ(waiting_message(), "Back-off pulling image \"nosuch:1\"");
  EXPECT_EQ(status_column(), "ImagePullBackOff");
  EXPECT_TRUE(has_event("Pulling: Pulling image \"nosuch:1\""));
  EXPECT_TRUE(has_event("Failed: Error: ErrImagePull"));
  EXPECT_TRUE(has_event("BackOff: Back-off pulling image \"nosuch:1\""));
  EXPECT_EQ(event_count("Pulling: Pulling image \"nosuch:1\""), 1);
  advance_time(9s); // the second pull, 10 s after the first
  EXPECT_EQ(event_count("Pulling: Pulling image \"nosuch:1\""), 2);
  EXPECT_EQ(waiting_reason(), "ErrImagePull");
  advance_time(19s);
  EXPECT_EQ(event_count("Pulling: Pulling image \"nosuch:1\""), 2);
  advance_time(1s); // then 20 s
  EXPECT_EQ(event_count("Pulling: Pulling image \"nosuch:1\""), 3);
  EXPECT_TRUE(rt->starts.empty());
}

// --- deletion ----------------------------------------------------------------

TEST_F(kubelet_test, graceful_deletion_sigterm_then_sigkill_then_delete) {
  start();
  auto p = make_pod("p", json::array({container()}));
  p["spec"]["terminationGracePeriodSeconds"] = 5;
  // A finalizer holds the pod after the kubelet's final DELETE, so that the
  // test can read what the kubelet wrote last.
  p["metadata"]["finalizers"] = {"example.com/hold"};
  auto uid = run(p)["metadata"]["uid"].get<std::string>();
  ASSERT_TRUE(call(verb::remove, ref("pods", "p")));
  drain();
  EXPECT_EQ(status_column(), "Terminating");
  ASSERT_EQ(rt->signals.size(), 1u);
  EXPECT_EQ(rt->signals[0], std::make_tuple(uid, std::string{"c"}, 15));
  EXPECT_TRUE(has_event("Killing: Stopping container c"));
  advance_time(4s);
  EXPECT_EQ(rt->signals.size(), 1u);
  advance_time(1s);
  ASSERT_EQ(rt->signals.size(), 2u);
  EXPECT_EQ(std::get<2>(rt->signals[1]), 9);
  EXPECT_TRUE(rt->removed.empty());
  exit_container("p", "c", 137);
  auto t = container_status()["state"]["terminated"];
  EXPECT_EQ(t["exitCode"], 137);
  EXPECT_EQ(t["reason"], "Error");
  EXPECT_EQ(pod()["status"]["phase"], "Failed");
  EXPECT_EQ(rt->removed, std::vector<std::string>{uid});
  EXPECT_EQ(rt->starts.size(), 1u); // no restart while terminating
  auto held = pod();
  held["metadata"].erase("finalizers");
  ASSERT_TRUE(call(verb::update, ref("pods", "p"), held));
  drain();
  EXPECT_FALSE(call(verb::get, ref("pods", "p")));
}

TEST_F(kubelet_test, graceful_deletion_through_the_store_grace_period) {
  start();
  auto uid = run(make_pod("p", json::array({container()})))["metadata"]["uid"]
                 .get<std::string>();
  ASSERT_TRUE(
      call(verb::remove, ref("pods", "p"), json{{"gracePeriodSeconds", 3}}));
  drain();
  auto held = pod();
  ASSERT_TRUE(held["metadata"].contains("deletionTimestamp")) << held.dump();
  EXPECT_EQ(held["metadata"]["deletionGracePeriodSeconds"], 3);
  ASSERT_EQ(rt->signals.size(), 1u);
  EXPECT_EQ(std::get<2>(rt->signals[0]), 15);
  advance_time(3s);
  ASSERT_EQ(rt->signals.size(), 2u);
  EXPECT_EQ(std::get<2>(rt->signals[1]), 9);
  exit_container("p", "c", 137);
  // The kubelet's DELETE (grace 0, uid precondition) removed it.
  EXPECT_FALSE(call(verb::get, ref("pods", "p")));
  EXPECT_EQ(rt->removed, std::vector<std::string>{uid});
}

// --- logs --------------------------------------------------------------------

TEST_F(kubelet_test, pod_log_errors_name_the_container) {
  start();
  run(make_pod("two",
               json::array({container("a"), container("b", "nosuch:1")})));
  auto pick = [&](const std::string& c, bool prev) {
    return request<pod_log_source>(kubelet, pod_log_atom::value,
                                   std::string{"default"}, std::string{"two"},
                                   c, prev);
  };
  auto none = pick("", false);
  ASSERT_FALSE(none);
  EXPECT_EQ(error_message(none.error()),
            "a container name must be specified for pod two, choose one of: "
            "[a b]");
  EXPECT_EQ(status_of(none.error())->code, 400);
  auto waiting = pick("b", false);
  ASSERT_FALSE(waiting);
  EXPECT_EQ(error_message(waiting.error()),
            "container \"b\" in pod \"two\" is waiting to start: ErrImagePull");
  auto prev = pick("a", true);
  ASSERT_FALSE(prev);
  EXPECT_EQ(error_message(prev.error()),
            "previous terminated container \"a\" in pod \"two\" not found");
  auto ok = pick("a", false);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->path, rt->starts[0].second.log_path);
  auto unknown = request<pod_log_source>(
      kubelet, pod_log_atom::value, std::string{"default"}, std::string{"nope"},
      std::string{}, false);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(status_of(unknown.error())->code, 404);
}

// --- faults ------------------------------------------------------------------

TEST_F(kubelet_test, pod_faults_apply_to_the_next_matching_pods) {
  start();
  auto fault = [&](const std::string& text) {
    return ask(pod_fault_atom::value, text);
  };
  auto bad = fault(R"({"state":"Sleepy"})");
  ASSERT_FALSE(bad);
  EXPECT_EQ(status_of(bad.error())->code, 400);
  EXPECT_NE(error_message(bad.error()).find("state:"), std::string::npos);
  auto bad_count = fault(R"({"state":"CrashLoop","count":0})");
  ASSERT_FALSE(bad_count);
  EXPECT_NE(error_message(bad_count.error()).find("count:"), std::string::npos);
  ASSERT_TRUE(fault(
      R"({"namespace":"default","labelSelector":"app=x","state":"CrashLoop"})"));
  ASSERT_TRUE(fault(R"({"namespace":"default","state":"ImagePullBackOff"})"));
  ASSERT_TRUE(
      fault(R"({"namespace":"default","state":"CreateContainerConfigError"})"));
  auto p = make_pod("crash", json::array({container()}));
  p["metadata"]["labels"] = {{"app", "x"}};
  run(p);
  ASSERT_EQ(rt->starts.size(), 1u);
  EXPECT_EQ(rt->starts[0].second.argv,
            (std::vector<std::string>{"/bin/sh", "-c", "exit 1"}));
  run(make_pod("pull", json::array({container()})));
  EXPECT_EQ(waiting_reason("pull"), "ErrImagePull");
  run(make_pod("config", json::array({container()})));
  EXPECT_EQ(waiting_reason("config"), "CreateContainerConfigError");
  run(make_pod("fine", json::array({container()})));
  EXPECT_EQ(rt->starts.size(), 2u); // the faults are used up
}

TEST_F(kubelet_test, kill_partition_and_info) {
  start();
  auto uid = run(make_pod("p", json::array({container()})))["metadata"]["uid"]
                 .get<std::string>();
  auto info = request<std::string>(kubelet, pod_info_atom::value,
                                   std::string{"default"}, std::string{"p"});
  ASSERT_TRUE(info);
  auto doc = json::parse(*info);
  EXPECT_EQ(doc["podIP"], "10.244.0.2");
  EXPECT_EQ(doc["netns"], "net:[4026532712]");
  EXPECT_EQ(doc["containers"][0]["name"], "c");
  EXPECT_EQ(doc["containers"][0]["pid"], rt->pids[uid + "/c"]);
  EXPECT_EQ(doc["containers"][0]["restartCount"], 0);
  auto missing
      = request<std::string>(kubelet, pod_info_atom::value,
                             std::string{"default"}, std::string{"nope"});
  ASSERT_FALSE(missing);
  EXPECT_EQ(status_of(missing.error())->code, 404);

  ASSERT_TRUE(ask(kill_atom::value, std::string{"default"}, std::string{"p"},
                  std::string{"KILL"}));
  drain();
  ASSERT_EQ(rt->signals.size(), 1u);
  EXPECT_EQ(std::get<2>(rt->signals[0]), 9);
  auto bad = ask(kill_atom::value, std::string{"default"}, std::string{"p"},
                 std::string{"NAP"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(status_of(bad.error())->code, 400);

  ASSERT_TRUE(ask(partition_atom::value, std::string{"default"},
                  std::string{"p"}, std::int32_t{20}));
  drain();
  ASSERT_EQ(rt->links.size(), 1u);
  EXPECT_EQ(rt->links[0], std::make_pair(uid, false));
  advance_time(19s);
  EXPECT_EQ(rt->links.size(), 1u);
  advance_time(1s);
  ASSERT_EQ(rt->links.size(), 2u);
  EXPECT_EQ(rt->links[1], std::make_pair(uid, true));
}

// --- nodes -------------------------------------------------------------------

TEST_F(kubelet_test, nodes_are_ready) {
  start();
  auto res
      = call(verb::get, resource_ref{"", "v1", "nodes", "", "sim-node-0", ""});
  ASSERT_TRUE(res) << error_message(res.error());
  auto node = json::parse(res->body);
  bool ready = false;
  for (const auto& c : node["status"]["conditions"])
    if (c["type"] == "Ready") {
      ready = c["status"] == "True";
      EXPECT_EQ(c["reason"], "KubeletReady");
      EXPECT_EQ(c["message"], "kubelet is posting ready status");
    }
  EXPECT_TRUE(ready);
  EXPECT_EQ(node["status"]["nodeInfo"]["kubeletVersion"], "v1.32.0");
}

} // namespace
} // namespace aiperf::k8s::sim::kubelet
