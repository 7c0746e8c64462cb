// The store's pod semantics: pods/binding, graceful deletion, and the
// log/proxy subresources the HTTP front serves from the pod or service.
#include "k8s/api/json.hpp"
#include "k8s/object/status_json.hpp"
#include "k8s/object/time.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace aiperf::k8s::sim {
namespace {

constexpr std::int64_t start_unix = 1'795'000'000;

struct event_log {
  std::vector<watch_event> events;
  std::vector<std::string> types() const {
    std::vector<std::string> out;
    for (const auto& e : events)
      out.push_back(e.type);
    return out;
  }
};

watch_sink_actor::behavior_type log_sink(watch_sink_actor::pointer,
                                         std::shared_ptr<event_log> log) {
  return {
      [log](events_atom, std::uint64_t, std::vector<watch_event>& evs) {
        for (auto& e : evs)
          log->events.push_back(std::move(e));
      },
      [](watch_end_atom, std::uint64_t, caf::error&) {},
  };
}

resource_ref core(std::string resource, std::string ns = {},
                  std::string name = {}, std::string sub = {}) {
  return {"",
          "v1",
          std::move(resource),
          std::move(ns),
          std::move(name),
          std::move(sub)};
}

k8s::request make(verb v, resource_ref ref, const json& body = nullptr) {
  k8s::request r;
  r.verb = v;
  r.ref = std::move(ref);
  if (!body.is_null())
    r.body = body.dump();
  return r;
}

json pod(const std::string& name, json spec_extra = json::object()) {
  json spec
      = {{"containers", json::array({{{"name", "a"}, {"image", "x:1"}}})}};
  for (auto it = spec_extra.begin(); it != spec_extra.end(); ++it)
    spec[it.key()] = it.value();
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}}},
          {"spec", spec}};
}

json binding(const std::string& name, const std::string& node) {
  return {{"apiVersion", "v1"},
          {"kind", "Binding"},
          {"metadata", {{"name", name}}},
          {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
}

json grace(std::int64_t seconds) {
  return {{"apiVersion", "v1"},
          {"kind", "DeleteOptions"},
          {"gracePeriodSeconds", seconds}};
}

std::int64_t seconds_of(const json& obj, const char* field) {
  auto t = parse_time(obj["metadata"][field].get<std::string>());
  EXPECT_TRUE(t);
  return t ? *t / 1'000'000'000 : 0;
}

struct pods_test : caf_gtest::fixture<> {
  store_actor store;

  pods_test() {
    store_config cfg;
    cfg.admin_token = "admin-token";
    cfg.start_unix_seconds = start_unix;
    auto s = spawn_store(sys, std::move(cfg));
    EXPECT_TRUE(s) << (s ? "" : error_message(s.error()));
    drain();
    if (s)
      store = *s;
  }

  caf::expected<response> call(const k8s::request& r) {
    return request<response>(store, r);
  }

  json ok(const k8s::request& r) {
    auto res = call(r);
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    return res ? json::parse(res->body) : json();
  }

  status failure(const k8s::request& r) {
    auto res = call(r);
    EXPECT_FALSE(res) << (res ? res->body.substr(0, 300) : "");
    if (res)
      return {};
    const auto* st = status_of(res.error());
    EXPECT_NE(st, nullptr) << error_message(res.error());
    return st ? *st : status{};
  }

  std::shared_ptr<event_log> watch_pods() {
    auto log = std::make_shared<event_log>();
    auto sink = sys.spawn(log_sink, log);
    auto r = make(verb::watch, core("pods", "default"));
    r.resource_version = ok(make(
        verb::list, core("pods", "default")))["metadata"]["resourceVersion"];
    auto id = request<std::uint64_t>(store, watch_atom::value, r, sink);
    EXPECT_TRUE(id);
    drain();
    return log;
  }

  json get_pod(const std::string& name) {
    return ok(make(verb::get, core("pods", "default", name)));
  }

  /// A pod the scheduler has placed on sim-node-0.
  json bound_pod(const std::string& name, json spec_extra = json::object()) {
    ok(make(verb::create, core("pods", "default"), pod(name, spec_extra)));
    auto res = call(make(verb::create, core("pods", "default", name, "binding"),
                         binding(name, "sim-node-0")));
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    return get_pod(name);
  }
};

// --- pods/binding
// -------------------------------------------------------------

TEST_F(pods_test, a_binding_sets_the_node_and_the_scheduled_condition) {
  auto created = ok(make(verb::create, core("pods", "default"), pod("p")));
  auto log = watch_pods();
  auto b = binding("p", "sim-node-0");
  b["metadata"]["annotations"] = {{"scheduler.example/score", "7"}};
  auto res
      = call(make(verb::create, core("pods", "default", "p", "binding"), b));
  ASSERT_TRUE(res) << error_message(res.error());
  EXPECT_EQ(res->code, 201);
  EXPECT_EQ(json::parse(res->body),
            json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
                        R"("status":"Success","code":201})"));
  auto got = get_pod("p");
  EXPECT_EQ(got["spec"]["nodeName"], "sim-node-0");
  EXPECT_EQ(got["metadata"]["annotations"]["scheduler.example/score"], "7");
  ASSERT_EQ(got["status"]["conditions"].size(), 1u);
  const auto& cond = got["status"]["conditions"][0];
  EXPECT_EQ(cond["type"], "PodScheduled");
  EXPECT_EQ(cond["status"], "True");
  EXPECT_TRUE(cond["lastProbeTime"].is_null());
  EXPECT_EQ(cond["lastTransitionTime"],
            created["metadata"]["creationTimestamp"]);
  EXPECT_NE(got["metadata"]["resourceVersion"],
            created["metadata"]["resourceVersion"]);
  EXPECT_EQ(log->types(), std::vector<std::string>{"MODIFIED"});
}

TEST_F(pods_test, a_second_binding_is_the_conflict_upstream_writes) {
  bound_pod("p");
  auto st = failure(make(verb::create, core("pods", "default", "p", "binding"),
                         binding("p", "other")));
  EXPECT_EQ(st.code, 409);
  EXPECT_EQ(st.reason, "Conflict");
  EXPECT_EQ(st.message, "Operation cannot be fulfilled on pods/binding \"p\": "
                        "pod p is already assigned to node \"sim-node-0\"");
  EXPECT_EQ(st.details.name, "p");
  EXPECT_EQ(st.details.kind, "pods/binding");
  EXPECT_EQ(get_pod("p")["spec"]["nodeName"], "sim-node-0");
}

TEST_F(pods_test, a_binding_is_refused_as_upstream_refuses_it) {
  ok(make(verb::create, core("pods", "default"), pod("p")));
  auto missing
      = failure(make(verb::create, core("pods", "default", "q", "binding"),
                     binding("q", "n")));
  EXPECT_EQ(missing.code, 404);
  EXPECT_EQ(missing.message, "pods \"q\" not found");
  auto other_name
      = failure(make(verb::create, core("pods", "default", "p", "binding"),
                     binding("q", "n")));
  EXPECT_EQ(other_name.code, 400);
  EXPECT_EQ(other_name.message,
            "name in URL does not match name in Binding object");
  auto no_target = binding("p", "");
  auto invalid = failure(
      make(verb::create, core("pods", "default", "p", "binding"), no_target));
  EXPECT_EQ(invalid.code, 500);
  EXPECT_EQ(invalid.message, "target.name: Required value");
  auto gated = pod("g", {{"schedulingGates", json::array({{{"name", "w"}}})}});
  ok(make(verb::create, core("pods", "default"), gated));
  auto st = failure(make(verb::create, core("pods", "default", "g", "binding"),
                         binding("g", "n")));
  EXPECT_EQ(st.message, "Operation cannot be fulfilled on pods/binding \"g\": "
                        "pod g has non-empty .spec.schedulingGates");
  auto stale = binding("p", "n");
  stale["metadata"]["uid"] = "not-the-uid";
  auto pre = failure(
      make(verb::create, core("pods", "default", "p", "binding"), stale));
  EXPECT_EQ(pre.code, 409);
  EXPECT_EQ(pre.message.rfind("Operation cannot be fulfilled on pods \"p\": "
                              "Precondition failed: UID in precondition: "
                              "not-the-uid, UID in object meta: ",
                              0),
            0u)
      << pre.message;
  EXPECT_FALSE(get_pod("p")["spec"].contains("nodeName"));
}

TEST_F(pods_test, a_binding_needs_create_on_pods_binding) {
  ok(make(verb::create, core("pods", "default"), pod("p")));
  auto r = make(verb::create, core("pods", "default", "p", "binding"),
                binding("p", "n"));
  r.impersonate_user = "system:serviceaccount:default:default";
  auto st = failure(r);
  EXPECT_EQ(st.code, 403);
  EXPECT_NE(st.message.find("cannot create resource \"pods/binding\" in API "
                            "group \"\" in the namespace \"default\""),
            std::string::npos)
      << st.message;
}

// --- graceful deletion
// --------------------------------------------------------

TEST_F(pods_test, deleting_a_bound_pod_starts_its_grace_period) {
  auto bound = bound_pod("p");
  auto log = watch_pods();
  advance_time(std::chrono::seconds(5));
  auto res = call(make(verb::remove, core("pods", "default", "p")));
  ASSERT_TRUE(res) << error_message(res.error());
  EXPECT_EQ(res->code, 200);
  auto answered = json::parse(res->body);
  EXPECT_EQ(answered["kind"], "Pod");
  EXPECT_EQ(answered["metadata"]["deletionGracePeriodSeconds"], 30);
  auto pending = get_pod("p");
  EXPECT_EQ(pending["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_EQ(seconds_of(pending, "deletionTimestamp"),
            seconds_of(bound, "creationTimestamp") + 5 + 30);
  // A longer period, or none, changes nothing; a shorter one moves the
  // deadline back by the difference.
  ok(make(verb::remove, core("pods", "default", "p"), grace(60)));
  ok(make(verb::remove, core("pods", "default", "p")));
  EXPECT_EQ(get_pod("p")["metadata"]["resourceVersion"],
            pending["metadata"]["resourceVersion"]);
  auto shorter
      = ok(make(verb::remove, core("pods", "default", "p"), grace(10)));
  EXPECT_EQ(shorter["metadata"]["deletionGracePeriodSeconds"], 10);
  EXPECT_EQ(seconds_of(shorter, "deletionTimestamp"),
            seconds_of(pending, "deletionTimestamp") - 20);
  // The kubelet reports the containers' end; that keeps the pod.
  auto st = make(verb::patch, core("pods", "default", "p", "status"),
                 json{{"status", {{"phase", "Failed"}}}});
  st.patch = patch_type::merge;
  ok(st);
  EXPECT_EQ(get_pod("p")["status"]["phase"], "Failed");
  // Its final delete, with grace 0, removes it.
  auto last = ok(make(verb::remove, core("pods", "default", "p"), grace(0)));
  EXPECT_EQ(last["metadata"]["deletionGracePeriodSeconds"], 0);
  EXPECT_EQ(failure(make(verb::get, core("pods", "default", "p"))).code, 404);
  EXPECT_EQ(log->types(),
            (std::vector<std::string>{"MODIFIED", "MODIFIED", "MODIFIED",
                                      "MODIFIED", "DELETED"}));
}

TEST_F(pods_test, the_pods_own_grace_period_is_the_default) {
  auto bound = bound_pod("p", {{"terminationGracePeriodSeconds", 7}});
  auto pending = ok(make(verb::remove, core("pods", "default", "p")));
  EXPECT_EQ(pending["metadata"]["deletionGracePeriodSeconds"], 7);
  EXPECT_EQ(seconds_of(pending, "deletionTimestamp"),
            seconds_of(bound, "creationTimestamp") + 7);
  bound_pod("q");
  auto negative
      = ok(make(verb::remove, core("pods", "default", "q"), grace(-5)));
  EXPECT_EQ(negative["metadata"]["deletionGracePeriodSeconds"], 1);
}

TEST_F(pods_test, an_unbound_pod_goes_at_once_with_modified_then_deleted) {
  ok(make(verb::create, core("pods", "default"), pod("p")));
  auto log = watch_pods();
  auto gone = ok(make(verb::remove, core("pods", "default", "p")));
  EXPECT_EQ(gone["kind"], "Pod");
  EXPECT_EQ(gone["metadata"]["deletionGracePeriodSeconds"], 0);
  EXPECT_EQ(failure(make(verb::get, core("pods", "default", "p"))).code, 404);
  EXPECT_EQ(log->types(), (std::vector<std::string>{"MODIFIED", "DELETED"}));
  auto modified = json::parse(log->events[0].object);
  EXPECT_TRUE(modified["metadata"].contains("deletionTimestamp"));
}

TEST_F(pods_test, a_terminated_pod_goes_at_once) {
  bound_pod("p");
  auto st = make(verb::patch, core("pods", "default", "p", "status"),
                 json{{"status", {{"phase", "Succeeded"}}}});
  st.patch = patch_type::merge;
  ok(st);
  ok(make(verb::remove, core("pods", "default", "p")));
  EXPECT_EQ(failure(make(verb::get, core("pods", "default", "p"))).code, 404);
}

TEST_F(pods_test, finalizers_hold_a_pod_after_its_final_delete) {
  auto created = ok(make(verb::create, core("pods", "default"), [] {
    auto p = pod("p");
    p["metadata"]["finalizers"] = json::array({"example.com/hold"});
    return p;
  }()));
  ok(make(verb::create, core("pods", "default", "p", "binding"),
          binding("p", "n")));
  ok(make(verb::remove, core("pods", "default", "p")));
  auto held = ok(make(verb::remove, core("pods", "default", "p"), grace(0)));
  EXPECT_EQ(held["metadata"]["deletionGracePeriodSeconds"], 0);
  EXPECT_EQ(get_pod("p")["metadata"]["finalizers"],
            json::array({"example.com/hold"}));
  auto drop = make(verb::patch, core("pods", "default", "p"),
                   json{{"metadata", {{"finalizers", nullptr}}}});
  drop.patch = patch_type::merge;
  ok(drop);
  EXPECT_EQ(failure(make(verb::get, core("pods", "default", "p"))).code, 404);
  (void)created;
}

TEST_F(pods_test, a_dry_run_delete_of_a_bound_pod_changes_nothing) {
  auto bound = bound_pod("p");
  auto r = make(verb::remove, core("pods", "default", "p"));
  r.dry_run = true;
  auto answered = ok(r);
  EXPECT_EQ(answered["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_EQ(get_pod("p"), bound);
}

// --- log and proxy
// --------------------------------------------------------------

TEST_F(pods_test, log_and_proxy_answer_the_object_itself) {
  auto p = bound_pod("p");
  auto log = ok(make(verb::get, core("pods", "default", "p", "log")));
  EXPECT_EQ(log, p);
  for (verb v :
       {verb::get, verb::create, verb::update, verb::patch, verb::remove}) {
    auto proxied
        = call(make(v, core("pods", "default", "p:8080", "proxy"), json{}));
    ASSERT_TRUE(proxied) << to_string(v) << ": "
                         << error_message(proxied.error());
    EXPECT_EQ(json::parse(proxied->body), p) << to_string(v);
  }
  EXPECT_EQ(ok(make(verb::get, core("pods", "default", "http:p:80", "proxy"))),
            p);
  auto svc = ok(make(verb::create, core("services", "default"),
                     json{{"apiVersion", "v1"},
                          {"kind", "Service"},
                          {"metadata", {{"name", "mock"}}},
                          {"spec",
                           {{"ports", json::array({{{"port", 8000}}})},
                            {"selector", {{"app", "mock"}}}}}}));
  EXPECT_EQ(ok(make(verb::get, core("services", "default", "mock", "proxy"))),
            svc);
  EXPECT_EQ(
      failure(make(verb::create, core("pods", "default", "p", "log"))).code,
      405);
  EXPECT_EQ(
      failure(make(verb::get, core("pods", "default", "q", "log"))).message,
      "pods \"q\" not found");
  EXPECT_EQ(
      failure(make(verb::get, core("pods", "default", "a:b:c:d", "proxy")))
          .code,
      400);
}

TEST_F(pods_test, log_and_proxy_are_authorized_as_the_subresource) {
  bound_pod("p");
  auto r = make(verb::get, core("pods", "default", "p", "log"));
  r.impersonate_user = "system:serviceaccount:default:default";
  auto st = failure(r);
  EXPECT_EQ(st.code, 403);
  EXPECT_NE(st.message.find("cannot get resource \"pods/log\""),
            std::string::npos)
      << st.message;
  auto proxy = make(verb::create, core("pods", "default", "p:80", "proxy"));
  proxy.impersonate_user = "system:serviceaccount:default:default";
  EXPECT_NE(
      failure(proxy).message.find("cannot create resource \"pods/proxy\""),
      std::string::npos);
}

// --- admission
// -------------------------------------------------------------------

const json* token_volume(const json& pod) {
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->contains("volumes"))
    return nullptr;
  for (const auto& v : (*spec)["volumes"])
    if (v.value("name", "").rfind("kube-api-access-", 0) == 0)
      return &v;
  return nullptr;
}

TEST_F(pods_test, service_account_admission_mounts_the_token_volume) {
  auto p = pod("p");
  p["spec"]["initContainers"]
      = json::array({{{"name", "init"}, {"image", "x:1"}}});
  auto created = ok(make(verb::create, core("pods", "default"), p));
  EXPECT_EQ(created["spec"]["serviceAccountName"], "default");
  const json* volume = token_volume(created);
  ASSERT_NE(volume, nullptr) << created["spec"].dump();
  std::string name = (*volume)["name"];
  EXPECT_EQ(name.size(), std::string{"kube-api-access-"}.size() + 5);
  EXPECT_EQ((*volume)["projected"], json::parse(R"({"sources":[
              {"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},
              {"configMap":{"name":"kube-root-ca.crt",
                            "items":[{"key":"ca.crt","path":"ca.crt"}]}},
              {"downwardAPI":{"items":[{"path":"namespace","fieldRef":
                {"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],
              "defaultMode":420})"));
  json mount = {{"name", name},
                {"readOnly", true},
                {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}};
  EXPECT_EQ(created["spec"]["containers"][0]["volumeMounts"],
            json::array({mount}));
  EXPECT_EQ(created["spec"]["initContainers"][0]["volumeMounts"],
            json::array({mount}));
}

TEST_F(pods_test, automount_false_on_the_pod_or_its_account_mounts_nothing) {
  auto off = pod("off", {{"automountServiceAccountToken", false}});
  auto created = ok(make(verb::create, core("pods", "default"), off));
  EXPECT_EQ(token_volume(created), nullptr);
  EXPECT_FALSE(created["spec"]["containers"][0].contains("volumeMounts"));
  ok(make(verb::create, core("serviceaccounts", "default"),
          json{{"apiVersion", "v1"},
               {"kind", "ServiceAccount"},
               {"metadata", {{"name", "quiet"}}},
               {"automountServiceAccountToken", false},
               {"imagePullSecrets", json::array({{{"name", "regcred"}}})}}));
  auto quiet = ok(make(verb::create, core("pods", "default"),
                       pod("q", {{"serviceAccountName", "quiet"}})));
  EXPECT_EQ(token_volume(quiet), nullptr);
  EXPECT_EQ(quiet["spec"]["imagePullSecrets"],
            json::parse(R"([{"name":"regcred"}])"));
  // The pod's own preference wins over its account's.
  auto loud = ok(make(verb::create, core("pods", "default"),
                      pod("l", {{"serviceAccountName", "quiet"},
                                {"automountServiceAccountToken", true}})));
  EXPECT_NE(token_volume(loud), nullptr);
}

TEST_F(pods_test, a_pod_of_a_missing_service_account_is_forbidden) {
  auto st = failure(make(verb::create, core("pods", "default"),
                         pod("p", {{"serviceAccountName", "ghost"}})));
  EXPECT_EQ(st.code, 403);
  EXPECT_EQ(st.reason, "Forbidden");
  EXPECT_EQ(st.message, "pods \"p\" is forbidden: error looking up service "
                        "account default/ghost: serviceaccount \"ghost\" not "
                        "found");
  // A namespace made now has its default account at once.
  ok(make(verb::create, core("namespaces"),
          json{{"apiVersion", "v1"},
               {"kind", "Namespace"},
               {"metadata", {{"name", "bench"}}}}));
  ok(make(verb::get, core("serviceaccounts", "bench", "default")));
  ok(make(verb::create, core("pods", "bench"), pod("p")));
}

// --- Pod Security admission
// ---------------------------------------------------------------

/// A namespace with Pod Security labels.
json labelled_namespace(const std::string& name, json labels) {
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata", {{"name", name}, {"labels", std::move(labels)}}}};
}

/// What the restricted level asks of every pod (our benchmark pods'
/// hardening).
json hardened(const std::string& name) {
  auto p = pod(name, {{"securityContext",
                       {{"runAsNonRoot", true},
                        {"runAsUser", 1000},
                        {"seccompProfile", {{"type", "RuntimeDefault"}}}}}});
  p["spec"]["containers"][0]["securityContext"]
      = {{"allowPrivilegeEscalation", false},
         {"capabilities", {{"drop", {"ALL"}}}}};
  return p;
}

TEST_F(pods_test, a_restricted_namespace_refuses_a_pod_as_pod_security_does) {
  ok(make(verb::create, core("namespaces"),
          labelled_namespace(
              "secure", {{"pod-security.kubernetes.io/enforce", "restricted"}})));
  auto st = failure(make(verb::create, core("pods", "secure"), pod("p")));
  EXPECT_EQ(st.code, 403);
  EXPECT_EQ(st.reason, "Forbidden");
  EXPECT_EQ(st.message,
            "pods \"p\" is forbidden: violates PodSecurity \"restricted:latest\": "
            "allowPrivilegeEscalation != false (container \"a\" must set "
            "securityContext.allowPrivilegeEscalation=false), unrestricted "
            "capabilities (container \"a\" must set "
            "securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true "
            "(pod or container \"a\" must set securityContext.runAsNonRoot=true), "
            "seccompProfile (pod or container \"a\" must set "
            "securityContext.seccompProfile.type to \"RuntimeDefault\" or "
            "\"Localhost\")");
  ok(make(verb::create, core("pods", "secure"), hardened("good")));
  // Baseline checks come first; explicit bad values are named.
  auto bad = hardened("bad");
  bad["spec"]["hostNetwork"] = true;
  bad["spec"]["volumes"] = {{{"name", "host"}, {"hostPath", {{"path", "/"}}}},
                            {{"name", "nfs"}, {"nfs", {{"server", "x"}, {"path", "/"}}}}};
  auto& c = bad["spec"]["containers"][0];
  c["ports"] = {{{"containerPort", 80}, {"hostPort", 8080}}};
  c["securityContext"]["privileged"] = true;
  c["securityContext"]["runAsUser"] = 0;
  c["securityContext"]["capabilities"]["add"] = {"SYS_ADMIN", "NET_BIND_SERVICE"};
  auto refused = failure(make(verb::create, core("pods", "secure"), bad));
  EXPECT_EQ(refused.message,
            "pods \"bad\" is forbidden: violates PodSecurity \"restricted:latest\": "
            "host namespaces (hostNetwork), hostPath volumes (volume \"host\"), "
            "hostPort (container \"a\" uses hostPort 8080), privileged (container "
            "\"a\" must not set securityContext.privileged=true), unrestricted "
            "capabilities (container \"a\" must not include \"SYS_ADMIN\" in "
            "securityContext.capabilities.add), restricted volume types (volumes "
            "[\"host\" \"nfs\"] have restricted types), runAsUser=0 (container "
            "\"a\" must not set runAsUser=0)");
}

TEST_F(pods_test, baseline_enforces_less_and_warn_levels_only_warn) {
  ok(make(verb::create, core("namespaces"),
          labelled_namespace("base",
                             {{"pod-security.kubernetes.io/enforce", "baseline"},
                              {"pod-security.kubernetes.io/warn", "restricted"},
                              {"pod-security.kubernetes.io/warn-version", "v1.32"}})));
  // Baseline lets an unhardened pod in; restricted warns about it.
  auto res = call(make(verb::create, core("pods", "base"), pod("plain")));
  ASSERT_TRUE(res) << error_message(res.error());
  ASSERT_EQ(res->warnings.size(), 1u);
  EXPECT_EQ(res->warnings[0].rfind(
                "would violate PodSecurity \"restricted:v1.32\": "
                "allowPrivilegeEscalation != false",
                0),
            0u)
      << res->warnings[0];
  auto p = pod("caps");
  p["spec"]["containers"][0]["securityContext"]
      = {{"capabilities", {{"add", {"NET_ADMIN", "CHOWN"}}}},
         {"seccompProfile", {{"type", "Unconfined"}}}};
  auto st = failure(make(verb::create, core("pods", "base"), p));
  EXPECT_EQ(st.message,
            "pods \"caps\" is forbidden: violates PodSecurity \"baseline:latest\": "
            "non-default capabilities (container \"a\" must not include "
            "\"NET_ADMIN\" in securityContext.capabilities.add), seccompProfile "
            "(container \"a\" must not set securityContext.seccompProfile.type to "
            "\"Unconfined\")");
  // A hardened pod draws no warning; a privileged namespace checks nothing.
  auto quiet = call(make(verb::create, core("pods", "base"), hardened("h")));
  ASSERT_TRUE(quiet);
  EXPECT_TRUE(quiet->warnings.empty());
  ok(make(verb::create, core("namespaces"),
          labelled_namespace(
              "open", {{"pod-security.kubernetes.io/enforce", "privileged"}})));
  auto any = pod("root");
  any["spec"]["hostPID"] = true;
  ok(make(verb::create, core("pods", "open"), any));
}

TEST_F(pods_test, pod_templates_are_warned_never_refused) {
  ok(make(verb::create, core("namespaces"),
          labelled_namespace(
              "secure", {{"pod-security.kubernetes.io/enforce", "restricted"}})));
  json deployment = {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", "d"}}},
      {"spec",
       {{"selector", {{"matchLabels", {{"app", "d"}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", "d"}}}}},
          {"spec", pod("x")["spec"]}}}}}};
  resource_ref ref;
  ref.group = "apps";
  ref.version = "v1";
  ref.resource = "deployments";
  ref.namespace_name = "secure";
  auto res = call(make(verb::create, ref, deployment));
  ASSERT_TRUE(res) << error_message(res.error());
  ASSERT_EQ(res->warnings.size(), 1u);
  EXPECT_EQ(res->warnings[0].rfind(
                "would violate PodSecurity \"restricted:latest\": ", 0),
            0u)
      << res->warnings[0];
}

TEST_F(pods_test, a_claim_without_a_class_gets_the_default_one) {
  auto storage_class = [](const std::string& name, bool is_default) {
    json sc = {{"apiVersion", "storage.k8s.io/v1"},
               {"kind", "StorageClass"},
               {"metadata", {{"name", name}}},
               {"provisioner", "sim.aiperf/local"}};
    if (is_default)
      sc["metadata"]["annotations"]
          = {{"storageclass.kubernetes.io/is-default-class", "true"}};
    return sc;
  };
  resource_ref classes{"storage.k8s.io", "v1", "storageclasses", "", "", ""};
  auto claim = [](const std::string& name) {
    return json{{"apiVersion", "v1"},
                {"kind", "PersistentVolumeClaim"},
                {"metadata", {{"name", name}}},
                {"spec",
                 {{"accessModes", json::array({"ReadWriteOnce"})},
                  {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  };
  auto none = ok(make(verb::create, core("persistentvolumeclaims", "default"),
                      claim("before")));
  EXPECT_FALSE(none["spec"].contains("storageClassName"));
  EXPECT_EQ(none["spec"]["volumeMode"], "Filesystem");
  EXPECT_EQ(none["status"]["phase"], "Pending");
  auto sc = ok(make(verb::create, classes, storage_class("fast", false)));
  EXPECT_EQ(sc["reclaimPolicy"], "Delete");
  EXPECT_EQ(sc["volumeBindingMode"], "Immediate");
  ok(make(verb::create, classes, storage_class("standard", true)));
  auto got = ok(make(verb::create, core("persistentvolumeclaims", "default"),
                     claim("c")));
  EXPECT_EQ(got["spec"]["storageClassName"], "standard");
  auto explicit_none = claim("static");
  explicit_none["spec"]["storageClassName"] = "";
  auto kept = ok(make(verb::create, core("persistentvolumeclaims", "default"),
                      explicit_none));
  EXPECT_EQ(kept["spec"]["storageClassName"], "");
}

TEST_F(pods_test, a_pod_spec_changes_only_where_upstream_allows) {
  auto created = ok(make(verb::create, core("pods", "default"), pod("p")));
  auto image = created;
  image["spec"]["containers"][0]["image"] = "x:2";
  image["spec"]["activeDeadlineSeconds"] = 60;
  image["spec"]["tolerations"].push_back(
      {{"key", "gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}});
  auto updated = ok(make(verb::update, core("pods", "default", "p"), image));
  EXPECT_EQ(updated["spec"]["containers"][0]["image"], "x:2");
  auto command = updated;
  command["spec"]["containers"][0]["command"] = json::array({"sleep"});
  auto st = failure(make(verb::update, core("pods", "default", "p"), command));
  EXPECT_EQ(st.code, 422);
  EXPECT_EQ(st.message.rfind(
                "Pod \"p\" is invalid: spec: Forbidden: pod updates may not "
                "change fields other than `spec.containers[*].image`,"
                "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                "`spec.tolerations` (only additions to existing tolerations),"
                "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 "
                "if it was previously negative)\n",
                0),
            0u)
      << st.message;
  EXPECT_NE(st.message.find("spec.containers[0].command"), std::string::npos);
  auto longer = updated;
  longer["spec"]["activeDeadlineSeconds"] = 120;
  EXPECT_EQ(
      failure(make(verb::update, core("pods", "default", "p"), longer)).message,
      "Pod \"p\" is invalid: spec.activeDeadlineSeconds: Invalid value: "
      "120: must be less than or equal to previous value");
  auto fewer = updated;
  fewer["spec"]["tolerations"] = json::array();
  EXPECT_NE(failure(make(verb::update, core("pods", "default", "p"), fewer))
                .message.find("spec.tolerations: Forbidden: existing "
                              "toleration can not be modified except its "
                              "tolerationSeconds"),
            std::string::npos);
  // Status and metadata stay writable.
  auto labels = make(verb::patch, core("pods", "default", "p"),
                     json{{"metadata", {{"labels", {{"a", "b"}}}}}});
  labels.patch = patch_type::merge;
  ok(labels);
}

} // namespace
} // namespace aiperf::k8s::sim
