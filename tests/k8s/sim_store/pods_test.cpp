// The store's pod semantics: pods/binding.
#include "k8s/api/json.hpp"
#include "k8s/object/status_json.hpp"
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

} // namespace
} // namespace aiperf::k8s::sim
