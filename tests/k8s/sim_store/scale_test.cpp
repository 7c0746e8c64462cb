// The scale subresource: the autoscaling/v1 Scale of Deployments,
// ReplicaSets and custom resources whose CRD declares subresources.scale,
// and its writes into the parent's spec.replicas.
#include "k8s/api/json.hpp"
#include "k8s/object/status_json.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace aiperf::k8s::sim {
namespace {

constexpr std::int64_t start_unix = 1'795'000'000;

struct event_log {
  std::vector<watch_event> events;
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

k8s::request make(verb v, resource_ref ref, const json& body = nullptr) {
  k8s::request r;
  r.verb = v;
  r.ref = std::move(ref);
  if (!body.is_null())
    r.body = body.dump();
  return r;
}

k8s::request patch_req(resource_ref ref, patch_type t, const json& body) {
  auto r = make(verb::patch, std::move(ref));
  r.patch = t;
  r.body = body.dump();
  return r;
}

resource_ref apps(std::string resource, std::string name = {},
                  std::string sub = {}) {
  return {"apps",          "v1",          std::move(resource), "default",
          std::move(name), std::move(sub)};
}

resource_ref gadgets(std::string name = {}, std::string sub = {}) {
  return {"example.com",   "v1",          "gadgets", "default",
          std::move(name), std::move(sub)};
}

json deployment(const std::string& name) {
  return json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":")"
                     + name + R"("},
    "spec":{"replicas":2,
      "selector":{"matchLabels":{"app":"web"},
        "matchExpressions":[{"key":"tier","operator":"In",
                             "values":["front","edge"]},
                            {"key":"legacy","operator":"DoesNotExist"}]},
      "template":{"metadata":{"labels":{"app":"web","tier":"front"}},
        "spec":{"containers":[{"name":"c","image":"x:1"}]}}}})");
}

json gadget_crd() {
  return json::parse(R"({
    "apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"gadgets.example.com"},
    "spec":{"group":"example.com","scope":"Namespaced",
      "names":{"plural":"gadgets","singular":"gadget","kind":"Gadget"},
      "versions":[{"name":"v1","served":true,"storage":true,
        "subresources":{"status":{},"scale":{"specReplicasPath":".spec.size",
          "statusReplicasPath":".status.ready",
          "labelSelectorPath":".status.selector"}},
        "schema":{"openAPIV3Schema":{"type":"object",
          "x-kubernetes-preserve-unknown-fields":true}}}]}})");
}

json gadget(const std::string& name, json spec) {
  return json{{"apiVersion", "example.com/v1"},
              {"kind", "Gadget"},
              {"metadata", {{"name", name}}},
              {"spec", std::move(spec)}};
}

struct scale_test : caf_gtest::fixture<> {
  store_actor store;

  scale_test() {
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

  std::shared_ptr<event_log> watch(k8s::request r) {
    auto log = std::make_shared<event_log>();
    auto sink = sys.spawn(log_sink, log);
    auto id
        = request<std::uint64_t>(store, watch_atom::value, std::move(r), sink);
    EXPECT_TRUE(id) << (id ? "" : error_message(id.error()));
    drain();
    return log;
  }
};

TEST_F(scale_test, get_projects_the_deployment_into_a_scale) {
  auto d = ok(make(verb::create, apps("deployments"), deployment("web")));
  auto s = ok(make(verb::get, apps("deployments", "web", "scale")));
  json want
      = {{"kind", "Scale"},
         {"apiVersion", "autoscaling/v1"},
         {"metadata",
          {{"name", "web"},
           {"namespace", "default"},
           {"uid", d["metadata"]["uid"]},
           {"resourceVersion", d["metadata"]["resourceVersion"]},
           {"creationTimestamp", d["metadata"]["creationTimestamp"]}}},
         {"spec", {{"replicas", 2}}},
         // LabelSelectorAsSelector's String(): keys sorted, In values sorted.
         {"status",
          {{"replicas", 0},
           {"selector", "app=web,!legacy,tier in (edge,front)"}}}};
  EXPECT_EQ(s, want);
  EXPECT_EQ(s.dump(), want.dump()); // field order as Go marshals it
  auto st = failure(make(verb::get, apps("deployments", "nope", "scale")));
  EXPECT_EQ(st.code, 404);
  EXPECT_EQ(st.message, "deployments.apps \"nope\" not found");
  st = failure(make(verb::remove, apps("deployments", "web", "scale")));
  EXPECT_EQ(st.code, 405);
}

TEST_F(scale_test, patches_set_spec_replicas_as_a_spec_write) {
  auto d = ok(make(verb::create, apps("deployments"), deployment("web")));
  auto log = watch(make(verb::watch, apps("deployments")));
  log->events.clear();
  // kubectl scale's merge patch.
  auto s = ok(patch_req(apps("deployments", "web", "scale"), patch_type::merge,
                        json{{"spec", {{"replicas", 3}}}}));
  EXPECT_EQ(s["kind"], "Scale");
  EXPECT_EQ(s["spec"]["replicas"], 3);
  EXPECT_NE(s["metadata"]["resourceVersion"], d["metadata"]["resourceVersion"]);
  auto got = ok(make(verb::get, apps("deployments", "web")));
  EXPECT_EQ(got["spec"]["replicas"], 3);
  EXPECT_EQ(got["metadata"]["generation"], 2);
  EXPECT_EQ(got["metadata"]["resourceVersion"],
            s["metadata"]["resourceVersion"]);
  // Only spec.replicas crosses over: the rest of the spec stays.
  EXPECT_EQ(got["spec"]["template"], d["spec"]["template"]);
  drain();
  ASSERT_EQ(log->events.size(), 1u);
  EXPECT_EQ(log->events[0].type, "MODIFIED");
  EXPECT_EQ(json::parse(log->events[0].object)["spec"]["replicas"], 3);
  // JSON patch and strategic merge patch apply to the Scale too.
  s = ok(patch_req(apps("deployments", "web", "scale"), patch_type::json,
                   json::parse(R"([{"op":"replace","path":"/spec/replicas",
                                    "value":5}])")));
  EXPECT_EQ(s["spec"]["replicas"], 5);
  s = ok(patch_req(apps("deployments", "web", "scale"), patch_type::strategic,
                   json{{"spec", {{"replicas", 0}}}}));
  // autoscaling/v1 omits a zero spec.replicas.
  EXPECT_EQ(s["spec"], json::object());
  EXPECT_EQ(ok(make(verb::get, apps("deployments", "web")))["spec"]["replicas"],
            0);
  // The same count again changes nothing.
  auto before = s["metadata"]["resourceVersion"];
  s = ok(patch_req(apps("deployments", "web", "scale"), patch_type::merge,
                   json{{"spec", {{"replicas", 0}}}}));
  EXPECT_EQ(s["metadata"]["resourceVersion"], before);
  // ReplicaSets serve it the same way.
  auto rs = deployment("rs");
  rs["kind"] = "ReplicaSet";
  ok(make(verb::create, apps("replicasets"), rs));
  s = ok(patch_req(apps("replicasets", "rs", "scale"), patch_type::merge,
                   json{{"spec", {{"replicas", 4}}}}));
  EXPECT_EQ(s["spec"]["replicas"], 4);
  EXPECT_EQ(ok(make(verb::get, apps("replicasets", "rs")))["spec"]["replicas"],
            4);
}

TEST_F(scale_test, put_takes_the_resource_version_as_a_precondition) {
  ok(make(verb::create, apps("deployments"), deployment("web")));
  auto s = ok(make(verb::get, apps("deployments", "web", "scale")));
  auto stale = s;
  s["spec"]["replicas"] = 4;
  auto put = ok(make(verb::update, apps("deployments", "web", "scale"), s));
  EXPECT_EQ(put["spec"]["replicas"], 4);
  stale["spec"]["replicas"] = 1;
  auto st
      = failure(make(verb::update, apps("deployments", "web", "scale"), stale));
  EXPECT_EQ(st.code, 409);
  EXPECT_EQ(st.reason, "Conflict");
  EXPECT_EQ(st.message,
            "Operation cannot be fulfilled on deployments.apps \"web\": the "
            "object has been modified; please apply your changes to the latest "
            "version and try again");
  // Without a resourceVersion the update is unconditional.
  stale["metadata"].erase("resourceVersion");
  put = ok(make(verb::update, apps("deployments", "web", "scale"), stale));
  EXPECT_EQ(put["spec"]["replicas"], 1);
  // The uid is a precondition of the Scale's own.
  stale["metadata"]["uid"] = "00000000-0000-4000-8000-000000000000";
  st = failure(make(verb::update, apps("deployments", "web", "scale"), stale));
  EXPECT_EQ(st.code, 409);
  EXPECT_EQ(st.message,
            "Operation cannot be fulfilled on deployments/scale.apps \"web\": "
            "Precondition failed: UID in precondition: "
            "00000000-0000-4000-8000-000000000000, UID in object meta: "
                + put["metadata"]["uid"].get<std::string>());
  EXPECT_EQ(st.details.kind, "deployments/scale");
  // The name must be the URL's.
  stale["metadata"]["name"] = "other";
  st = failure(make(verb::update, apps("deployments", "web", "scale"), stale));
  EXPECT_EQ(st.code, 400);
  EXPECT_EQ(st.message, "the name of the object (other) does not match the "
                        "name on the URL (web)");
}

TEST_F(scale_test, negative_replicas_are_invalid_as_a_scale) {
  ok(make(verb::create, apps("deployments"), deployment("web")));
  auto st = failure(patch_req(apps("deployments", "web", "scale"),
                              patch_type::merge,
                              json{{"spec", {{"replicas", -1}}}}));
  EXPECT_EQ(st.code, 422);
  EXPECT_EQ(st.reason, "Invalid");
  EXPECT_EQ(st.message,
            "Scale.autoscaling \"web\" is invalid: spec.replicas: "
            "Invalid value: -1: must be greater than or equal to 0");
  ASSERT_EQ(st.details.causes.size(), 1u);
  EXPECT_EQ(st.details.causes[0].field, "spec.replicas");
  EXPECT_EQ(st.details.kind, "Scale");
  EXPECT_EQ(st.details.group, "autoscaling");
  EXPECT_EQ(ok(make(verb::get, apps("deployments", "web")))["spec"]["replicas"],
            2);
}

TEST_F(scale_test, the_subresource_is_authorized_on_its_own) {
  ok(make(verb::create, apps("deployments"), deployment("web")));
  ok(make(verb::create,
          {"rbac.authorization.k8s.io", "v1", "roles", "default", "", ""},
          json::parse(R"({"apiVersion":"rbac.authorization.k8s.io/v1",
            "kind":"Role","metadata":{"name":"scaler"},
            "rules":[{"apiGroups":["apps"],"resources":["deployments/scale"],
                      "verbs":["get","patch"]}]})")));
  ok(make(
      verb::create,
      {"rbac.authorization.k8s.io", "v1", "rolebindings", "default", "", ""},
      json::parse(R"({"apiVersion":"rbac.authorization.k8s.io/v1",
            "kind":"RoleBinding","metadata":{"name":"scaler"},
            "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role",
                       "name":"scaler"},
            "subjects":[{"kind":"User","name":"jane"}]})")));
  auto scale = patch_req(apps("deployments", "web", "scale"), patch_type::merge,
                         json{{"spec", {{"replicas", 6}}}});
  scale.impersonate_user = "jane";
  EXPECT_EQ(ok(scale)["spec"]["replicas"], 6);
  auto direct = patch_req(apps("deployments", "web"), patch_type::merge,
                          json{{"spec", {{"replicas", 7}}}});
  direct.impersonate_user = "jane";
  auto st = failure(direct);
  EXPECT_EQ(st.code, 403);
  auto put = make(verb::update, apps("deployments", "web", "scale"),
                  ok(make(verb::get, apps("deployments", "web", "scale"))));
  put.impersonate_user = "jane";
  st = failure(put);
  EXPECT_EQ(st.code, 403);
  EXPECT_EQ(st.message, "deployments.apps \"web\" is forbidden: User \"jane\" "
                        "cannot update resource \"deployments/scale\" in API "
                        "group \"apps\" in the namespace \"default\"");
  // What kubectl auth can-i update deployments/scale asks.
  auto ssar = make(
      verb::create,
      {"authorization.k8s.io", "v1", "selfsubjectaccessreviews", "", "", ""},
      json::parse(R"({"apiVersion":"authorization.k8s.io/v1",
        "kind":"SelfSubjectAccessReview",
        "spec":{"resourceAttributes":{"namespace":"default","verb":"patch",
          "group":"apps","resource":"deployments","subresource":"scale"}}})"));
  ssar.impersonate_user = "jane";
  EXPECT_EQ(ok(ssar)["status"]["allowed"], true);
}

TEST_F(scale_test, custom_resources_scale_through_their_crd_paths) {
  ok(make(
      verb::create,
      {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""},
      gadget_crd()));
  auto g = ok(make(verb::create, gadgets(), gadget("g", {{"size", 2}})));
  ok(patch_req(gadgets("g", "status"), patch_type::merge,
               json{{"status", {{"ready", 1}, {"selector", "app=g"}}}}));
  auto s = ok(make(verb::get, gadgets("g", "scale")));
  EXPECT_EQ(s["apiVersion"], "autoscaling/v1");
  EXPECT_EQ(s["metadata"]["uid"], g["metadata"]["uid"]);
  EXPECT_EQ(s["spec"]["replicas"], 2);
  EXPECT_EQ(s["status"], (json{{"replicas", 1}, {"selector", "app=g"}}));
  s = ok(patch_req(gadgets("g", "scale"), patch_type::merge,
                   json{{"spec", {{"replicas", 5}}}}));
  EXPECT_EQ(s["spec"]["replicas"], 5);
  auto got = ok(make(verb::get, gadgets("g")));
  EXPECT_EQ(got["spec"]["size"], 5);
  EXPECT_EQ(got["metadata"]["generation"], 2);
  // A PUT without a resourceVersion goes to the latest object.
  s["metadata"].erase("resourceVersion");
  s["spec"]["replicas"] = 3;
  EXPECT_EQ(
      ok(make(verb::update, gadgets("g", "scale"), s))["spec"]["replicas"], 3);
  // Negative replicas: the custom resource validator's message, on its
  // path, on any write.
  auto st = failure(patch_req(gadgets("g", "scale"), patch_type::merge,
                              json{{"spec", {{"replicas", -1}}}}));
  EXPECT_EQ(st.code, 422);
  EXPECT_EQ(st.message, "Gadget.example.com \"g\" is invalid: .spec.size: "
                        "Invalid value: -1: should be a non-negative integer");
  st = failure(patch_req(gadgets("g"), patch_type::merge,
                         json{{"spec", {{"size", -2}}}}));
  EXPECT_EQ(st.code, 422);
  EXPECT_EQ(st.details.causes.at(0).field, ".spec.size");
  // Strategic merge is refused as on the resource itself.
  EXPECT_EQ(failure(patch_req(gadgets("g", "scale"), patch_type::strategic,
                              json{{"spec", {{"replicas", 1}}}}))
                .code,
            415);
}

TEST_F(scale_test, a_custom_resource_without_spec_replicas) {
  ok(make(
      verb::create,
      {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""},
      gadget_crd()));
  ok(make(verb::create, gadgets(), gadget("empty", json::object())));
  auto st = failure(make(verb::get, gadgets("empty", "scale")));
  EXPECT_EQ(st.code, 500);
  EXPECT_EQ(st.message, "Internal error occurred: the spec replicas field "
                        "\".spec.size\" does not exist");
  // A write that leaves the replicas unset is refused; one that sets them
  // creates the field.
  st = failure(patch_req(gadgets("empty", "scale"), patch_type::merge,
                         json{{"metadata", {{"labels", {{"a", "b"}}}}}}));
  EXPECT_EQ(st.code, 400);
  EXPECT_EQ(st.message,
            "the spec replicas field \".spec.size\" cannot be empty");
  auto s = ok(patch_req(gadgets("empty", "scale"), patch_type::merge,
                        json{{"spec", {{"replicas", 2}}}}));
  EXPECT_EQ(s["spec"]["replicas"], 2);
  EXPECT_EQ(ok(make(verb::get, gadgets("empty")))["spec"]["size"], 2);
}

} // namespace
} // namespace aiperf::k8s::sim
