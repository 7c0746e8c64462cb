// The API machinery's last gaps on the store actor: managedFields of
// non-apply writes, and custom resources served at several versions with
// the None conversion.
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

constexpr std::int64_t start_unix = 1'795'000'000; // 2026-11-18T11:06:40Z
constexpr const char* start_time = "2026-11-18T11:06:40Z";

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

struct machinery_test : caf_gtest::fixture<> {
  store_actor store;

  machinery_test() {
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

  /// A server-side apply of `body` at `ref` by `manager`.
  static k8s::request apply(resource_ref ref, const std::string& manager,
                            const json& body, bool force = false) {
    auto r = make(verb::patch, std::move(ref), body);
    r.patch = patch_type::apply;
    r.field_manager = manager;
    r.force = force;
    return r;
  }

  /// The fieldsV1 of `manager`'s entry in `object`, null if it has none.
  static json fields_of(const json& object, const std::string& manager) {
    for (const auto& e : object["metadata"].value("managedFields", json()))
      if (e["manager"] == manager)
        return e["fieldsV1"];
    return nullptr;
  }
};

json labelled_config_map(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"labels", {{"app", "x"}}}}},
          {"data", {{"a", "1"}}}};
}

json update_entry(const std::string& manager, const json& fields,
                  const std::string& api_version = "v1") {
  return {{"manager", manager},        {"operation", "Update"},
          {"apiVersion", api_version}, {"time", start_time},
          {"fieldsType", "FieldsV1"},  {"fieldsV1", fields}};
}

// --- managedFields of non-apply writes
// --------------------------------------------

TEST_F(machinery_test, a_create_records_its_managers_fields) {
  auto r = make(verb::create, core("configmaps", "default"),
                labelled_config_map("c"));
  r.field_manager = "kubectl-create";
  auto created = ok(r);
  EXPECT_EQ(created["metadata"]["managedFields"],
            json::array({update_entry("kubectl-create", json::parse(R"({
              "f:data":{".":{},"f:a":{}},
              "f:metadata":{"f:labels":{".":{},"f:app":{}}}})"))}));
}

TEST_F(machinery_test, later_writers_take_what_they_change) {
  auto r = make(verb::create, core("configmaps", "default"),
                labelled_config_map("c"));
  r.field_manager = "kubectl-create";
  ok(r);
  // No fieldManager: the User-Agent's product name manages.
  auto add = make(verb::patch, core("configmaps", "default", "c"),
                  json{{"data", {{"b", "2"}}}});
  add.patch = patch_type::merge;
  add.user_agent = "kubectl/v1.32.4 (linux/amd64) kubernetes/59526cd";
  auto patched = ok(add);
  // Sorted as the server sorts them: operation, time, then manager.
  EXPECT_EQ(patched["metadata"]["managedFields"],
            json::array({update_entry("kubectl", json::parse(R"({
                           "f:data":{"f:b":{}}})")),
                         update_entry("kubectl-create", json::parse(R"({
                           "f:data":{".":{},"f:a":{}},
                           "f:metadata":{"f:labels":{".":{},"f:app":{}}}})"))}));
  // Changing a creator's field takes it over; removing a label takes it
  // from everyone.
  auto change = make(verb::patch, core("configmaps", "default", "c"),
                     json{{"data", {{"a", "9"}}},
                          {"metadata", {{"labels", {{"app", nullptr}}}}}});
  change.patch = patch_type::merge;
  change.user_agent = add.user_agent;
  auto changed = ok(change);
  EXPECT_EQ(changed["metadata"]["managedFields"],
            json::array({update_entry("kubectl", json::parse(R"({
                           "f:data":{"f:a":{},"f:b":{}}})")),
                         update_entry("kubectl-create", json::parse(R"({
                           "f:data":{},
                           "f:metadata":{"f:labels":{}}})"))}));
}

TEST_F(machinery_test, an_apply_conflicts_with_a_field_an_update_set) {
  auto r = make(verb::create, core("configmaps", "default"),
                labelled_config_map("c"));
  r.field_manager = "kubectl-create";
  ok(r);
  auto apply = make(verb::patch, core("configmaps", "default", "c"),
                    json{{"apiVersion", "v1"},
                         {"kind", "ConfigMap"},
                         {"metadata", {{"name", "c"}}},
                         {"data", {{"a", "2"}}}});
  apply.patch = patch_type::apply;
  apply.field_manager = "ops";
  auto st = failure(apply);
  EXPECT_EQ(st.code, 409);
  EXPECT_EQ(st.message, "Apply failed with 1 conflict: conflict with "
                        "\"kubectl-create\" using v1 at 2026-11-18T11:06:40Z: "
                        ".data.a");
  // The same value is no conflict: both own it.
  apply.body = json{{"apiVersion", "v1"},
                    {"kind", "ConfigMap"},
                    {"metadata", {{"name", "c"}}},
                    {"data", {{"a", "1"}}}}
                   .dump();
  ok(apply);
}

TEST_F(machinery_test, a_pods_creator_owns_its_defaults_not_its_admission) {
  auto r = make(verb::create, core("pods", "default"),
                json{{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"metadata", {{"name", "p"}}},
                     {"spec",
                      {{"containers",
                        json::array({{{"name", "a"}, {"image", "x:1"}}})}}}});
  r.user_agent = "kubectl/v1.32.4 (linux/amd64) kubernetes/59526cd";
  r.field_manager = "kubectl-run";
  auto created = ok(r);
  ASSERT_EQ(created["metadata"]["managedFields"].size(), 1u);
  EXPECT_EQ(created["metadata"]["managedFields"][0]["fieldsV1"],
            json::parse(R"({"f:spec":{
              "f:containers":{"k:{\"name\":\"a\"}":{".":{},"f:image":{},
                "f:imagePullPolicy":{},"f:name":{},"f:resources":{},
                "f:terminationMessagePath":{},
                "f:terminationMessagePolicy":{}}},
              "f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},
              "f:schedulerName":{},"f:securityContext":{},
              "f:terminationGracePeriodSeconds":{}}})"));
  // The kubelet's status writes are its own, on the status subresource.
  auto st = make(verb::patch, core("pods", "default", "p", "status"),
                 json{{"status", {{"phase", "Running"}}}});
  st.patch = patch_type::merge;
  st.user_agent = "kubelet/v1.32.4 (linux/amd64) kubernetes/59526cd";
  auto running = ok(st);
  ASSERT_EQ(running["metadata"]["managedFields"].size(), 2u);
  auto kubelet = running["metadata"]["managedFields"][1];
  EXPECT_EQ(kubelet["manager"], "kubelet");
  EXPECT_EQ(kubelet["subresource"], "status");
  EXPECT_EQ(kubelet["fieldsV1"], json::parse(R"({"f:status":{"f:phase":{}}})"));
}

TEST_F(machinery_test, an_empty_list_resets_and_no_manager_records_nothing) {
  auto untracked = ok(make(verb::create, core("configmaps", "default"),
                           labelled_config_map("quiet")));
  EXPECT_FALSE(untracked["metadata"].contains("managedFields"));
  auto r = make(verb::create, core("configmaps", "default"),
                labelled_config_map("c"));
  r.field_manager = "kubectl-create";
  auto created = ok(r);
  created["metadata"]["managedFields"] = json::array();
  auto reset
      = ok(make(verb::update, core("configmaps", "default", "c"), created));
  EXPECT_FALSE(reset["metadata"].contains("managedFields"));
}

// --- server-side apply by list type
// ---------------------------------------------

/// Gadgets declare one list of each x-kubernetes-list-type, and one list
/// that declares none (named like a built-in keyed list: still atomic).
json gadget_crd() {
  json schema = json::parse(R"({"type":"object","properties":{
    "spec":{"type":"object","properties":{
      "workers":{"type":"array","x-kubernetes-list-type":"map",
        "x-kubernetes-list-map-keys":["zone","index"],
        "items":{"type":"object","required":["zone","index"],"properties":{
          "zone":{"type":"string"},"index":{"type":"integer"},
          "image":{"type":"string"}}}},
      "args":{"type":"array","x-kubernetes-list-type":"atomic",
        "items":{"type":"string"}},
      "env":{"type":"array","items":{"type":"object","properties":{
        "name":{"type":"string"},"value":{"type":"string"}}}},
      "tags":{"type":"array","x-kubernetes-list-type":"set",
        "items":{"type":"string"}}}},
    "status":{"type":"object","properties":{
      "conditions":{"type":"array","x-kubernetes-list-type":"map",
        "x-kubernetes-list-map-keys":["type"],
        "items":{"type":"object","required":["type","status"],"properties":{
          "type":{"type":"string"},"status":{"type":"string"}}}}}}}})");
  return {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "gadgets.example.com"}}},
      {"spec",
       {{"group", "example.com"},
        {"scope", "Namespaced"},
        {"names",
         {{"plural", "gadgets"}, {"singular", "gadget"}, {"kind", "Gadget"}}},
        {"versions",
         json::array({{{"name", "v1"},
                       {"served", true},
                       {"storage", true},
                       {"subresources", {{"status", json::object()}}},
                       {"schema", {{"openAPIV3Schema", schema}}}}})}}}};
}

resource_ref gadgets(std::string name = {}, std::string sub = {}) {
  return {"example.com",   "v1",          "gadgets", "default",
          std::move(name), std::move(sub)};
}

/// Gadget "g" with `fields` (spec and/or status).
json gadget(json fields) {
  json g = {{"apiVersion", "example.com/v1"},
            {"kind", "Gadget"},
            {"metadata", {{"name", "g"}}}};
  g.update(fields);
  return g;
}

/// Fields in the order the store keeps them (sorted).
json condition(const std::string& type, const std::string& status) {
  return {{"status", status}, {"type", type}};
}

json status_conditions(json conditions) {
  return gadget({{"status", {{"conditions", std::move(conditions)}}}});
}

struct apply_lists_test : machinery_test {
  apply_lists_test() {
    ok(make(
        verb::create,
        {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""},
        gadget_crd()));
  }
};

TEST_F(apply_lists_test,
       a_map_list_merges_by_its_keys_and_conflicts_per_entry) {
  ok(make(verb::create, gadgets(), gadget({{"spec", json::object()}})));
  ok(apply(gadgets("g", "status"), "ready-ctl",
           status_conditions(json::array({condition("Ready", "True")}))));
  auto both = ok(
      apply(gadgets("g", "status"), "sync-ctl",
            status_conditions(json::array({condition("Synced", "False")}))));
  EXPECT_EQ(
      both["status"]["conditions"],
      json::array({condition("Ready", "True"), condition("Synced", "False")}));
  EXPECT_EQ(fields_of(both, "sync-ctl"), json::parse(R"({"f:status":{
    "f:conditions":{"k:{\"type\":\"Synced\"}":{
      ".":{},"f:status":{},"f:type":{}}}}})"));
  // The other manager's entry: its fields conflict, its key alone does not.
  auto takeover = status_conditions(
      json::array({condition("Synced", "False"), condition("Ready", "False")}));
  auto st = failure(apply(gadgets("g", "status"), "sync-ctl", takeover));
  EXPECT_EQ(st.code, 409);
  EXPECT_EQ(
      st.message,
      "Apply failed with 1 conflict: conflict with \"ready-ctl\" with "
      "subresource \"status\": .status.conditions[type=\"Ready\"].status");
  ASSERT_EQ(st.details.causes.size(), 1u);
  EXPECT_EQ(st.details.causes[0].field,
            ".status.conditions[type=\"Ready\"].status");
  // Forced: the field moves, the entry stays shared.
  auto forced = ok(apply(gadgets("g", "status"), "sync-ctl", takeover, true));
  EXPECT_EQ(
      forced["status"]["conditions"],
      json::array({condition("Ready", "False"), condition("Synced", "False")}));
  EXPECT_EQ(fields_of(forced, "ready-ctl"), json::parse(R"({"f:status":{
    "f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:type":{}}}}})"));
}

TEST_F(apply_lists_test, a_map_list_with_two_keys_names_entries_by_both) {
  auto worker
      = [](const std::string& zone, int index, const std::string& image) {
          return json{{"image", image}, {"index", index}, {"zone", zone}};
        };
  auto workers = [](json list) {
    return gadget({{"spec", {{"workers", std::move(list)}}}});
  };
  ok(apply(gadgets("g"), "m1", workers(json::array({worker("a", 0, "x")}))));
  auto both = ok(
      apply(gadgets("g"), "m2", workers(json::array({worker("a", 1, "y")}))));
  EXPECT_EQ(both["spec"]["workers"],
            json::array({worker("a", 0, "x"), worker("a", 1, "y")}));
  EXPECT_EQ(fields_of(both, "m2"), json::parse(R"({"f:spec":{"f:workers":{
    "k:{\"index\":1,\"zone\":\"a\"}":{
      ".":{},"f:image":{},"f:index":{},"f:zone":{}}}}})"));
  auto st = failure(
      apply(gadgets("g"), "m2",
            workers(json::array({worker("a", 0, "z"), worker("a", 1, "y")}))));
  EXPECT_EQ(st.message, "Apply failed with 1 conflict: conflict with \"m1\": "
                        ".spec.workers[index=0,zone=\"a\"].image");
  // An entry left out of its only manager's next apply goes.
  auto left = ok(apply(gadgets("g"), "m1", workers(json::array())));
  EXPECT_EQ(left["spec"]["workers"], json::array({worker("a", 1, "y")}));
}

TEST_F(apply_lists_test, an_atomic_list_is_one_leaf) {
  auto spec = [](json fields) { return gadget({{"spec", std::move(fields)}}); };
  ok(apply(gadgets("g"), "m1",
           spec({{"args", {"a", "b"}},
                 {"env", json::array({{{"name", "A"}, {"value", "1"}}})},
                 {"tags", {"t"}}})));
  auto st
      = failure(apply(gadgets("g"), "m2", spec({{"args", {"a", "b", "c"}}})));
  EXPECT_EQ(st.message,
            "Apply failed with 1 conflict: conflict with \"m1\": .spec.args");
  // A list that declares no type is atomic too, whatever its name.
  st = failure(
      apply(gadgets("g"), "m2",
            spec({{"env", json::array({{{"name", "B"}, {"value", "2"}}})}})));
  EXPECT_EQ(st.message,
            "Apply failed with 1 conflict: conflict with \"m1\": .spec.env");
  // Forced, the whole list is the new manager's, not a merge.
  auto forced = ok(
      apply(gadgets("g"), "m2",
            spec({{"args", {"c"}},
                  {"env", json::array({{{"name", "B"}, {"value", "2"}}})}}),
            true));
  EXPECT_EQ(forced["spec"]["args"], json::array({"c"}));
  EXPECT_EQ(forced["spec"]["env"],
            json::array({{{"name", "B"}, {"value", "2"}}}));
  EXPECT_EQ(fields_of(forced, "m1"),
            json::parse(R"({"f:spec":{"f:tags":{"v:\"t\"":{}}}})"));
  EXPECT_EQ(fields_of(forced, "m2"),
            json::parse(R"({"f:spec":{"f:args":{},"f:env":{}}})"));
}

TEST_F(apply_lists_test, a_built_in_atomic_list_is_one_leaf) {
  auto deployment = [](json container) {
    json d = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
      "metadata":{"name":"d"},
      "spec":{"selector":{"matchLabels":{"app":"d"}},
        "template":{"metadata":{"labels":{"app":"d"}},"spec":{}}}})");
    d["spec"]["template"]["spec"]["containers"]
        = json::array({std::move(container)});
    return d;
  };
  resource_ref deployments{"apps", "v1", "deployments", "default", "d", ""};
  ok(apply(deployments, "m1",
           deployment({{"name", "a"}, {"image", "x:1"}, {"args", {"x"}}})));
  auto other = deployment({{"name", "a"}, {"args", {"y"}}});
  auto st = failure(apply(deployments, "m2", other));
  EXPECT_EQ(st.message, "Apply failed with 1 conflict: conflict with \"m1\": "
                        ".spec.template.spec.containers[name=\"a\"].args");
  auto forced = ok(apply(deployments, "m2", other, true));
  const auto& container = forced["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(container["args"], json::array({"y"}));
  EXPECT_EQ(container["image"], "x:1");
}

TEST_F(apply_lists_test, a_set_list_merges_by_value) {
  auto tags = [](json list) {
    return gadget({{"spec", {{"tags", std::move(list)}}}});
  };
  ok(apply(gadgets("g"), "m1", tags({"a", "b"})));
  // A value both apply is shared: no conflict.
  auto both = ok(apply(gadgets("g"), "m2", tags({"b", "c"})));
  EXPECT_EQ(both["spec"]["tags"], json::array({"a", "b", "c"}));
  EXPECT_EQ(fields_of(both, "m1"), json::parse(R"({"f:spec":{"f:tags":{
    "v:\"a\"":{},"v:\"b\"":{}}}})"));
  // Left out: a value nobody else applies goes, a shared one stays.
  auto less = ok(apply(gadgets("g"), "m1", tags({"c"})));
  EXPECT_EQ(less["spec"]["tags"], json::array({"b", "c"}));
}

// --- custom resources at several versions
// -------------------------------------------

json widget_crd() {
  json schema = json::parse(R"({"openAPIV3Schema":{"type":"object",
    "properties":{"spec":{"type":"object",
      "x-kubernetes-preserve-unknown-fields":true}}}})");
  return {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "widgets.example.com"}}},
      {"spec",
       {{"group", "example.com"},
        {"scope", "Namespaced"},
        {"names",
         {{"plural", "widgets"}, {"singular", "widget"}, {"kind", "Widget"}}},
        {"versions", json::array({{{"name", "v1alpha1"},
                                   {"served", true},
                                   {"storage", false},
                                   {"schema", schema}},
                                  {{"name", "v1"},
                                   {"served", true},
                                   {"storage", true},
                                   {"schema", schema}}})}}}};
}

resource_ref widgets(const std::string& version, std::string name = {}) {
  return {"example.com", version, "widgets", "default", std::move(name), ""};
}

TEST_F(machinery_test, a_custom_resource_converts_as_none_between_versions) {
  auto crd = ok(make(
      verb::create,
      {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""},
      widget_crd()));
  EXPECT_EQ(crd["spec"]["conversion"]["strategy"], "None");
  EXPECT_EQ(crd["status"]["storedVersions"], json::array({"v1"}));
  auto created = ok(make(verb::create, widgets("v1alpha1"),
                         json{{"apiVersion", "example.com/v1alpha1"},
                              {"kind", "Widget"},
                              {"metadata", {{"name", "w"}}},
                              {"spec", {{"size", 3}}}}));
  EXPECT_EQ(created["apiVersion"], "example.com/v1alpha1");
  // At the other version: the same object, only apiVersion differs.
  auto at_v1 = ok(make(verb::get, widgets("v1", "w")));
  EXPECT_EQ(at_v1["apiVersion"], "example.com/v1");
  json same = at_v1;
  same["apiVersion"] = "example.com/v1alpha1";
  EXPECT_EQ(same, created);
  auto listed = ok(make(verb::list, widgets("v1")));
  ASSERT_EQ(listed["items"].size(), 1u);
  EXPECT_EQ(listed["items"][0]["apiVersion"], "example.com/v1");
  // A write at v1 reads back at v1alpha1.
  at_v1["spec"]["size"] = 4;
  ok(make(verb::update, widgets("v1", "w"), at_v1));
  auto back = ok(make(verb::get, widgets("v1alpha1", "w")));
  EXPECT_EQ(back["apiVersion"], "example.com/v1alpha1");
  EXPECT_EQ(back["spec"]["size"], 4);
  EXPECT_EQ(back["metadata"]["generation"], 2);
}

// --- aggregated ClusterRoles
// -----------------------------------------------------

resource_ref cluster_roles(std::string name = {}) {
  return {"rbac.authorization.k8s.io",
          "v1",
          "clusterroles",
          "",
          std::move(name),
          ""};
}

json cluster_role(const std::string& name, const json& labels,
                  const json& rules) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRole"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"rules", rules}};
}

json rule(const std::string& resource) {
  return {{"apiGroups", json::array({""})},
          {"resources", json::array({resource})},
          {"verbs", json::array({"get"})}};
}

TEST_F(machinery_test, an_aggregated_cluster_role_follows_its_selected_roles) {
  json label = {{"rbac.example.com/aggregate-to-monitoring", "true"}};
  json aggregated = cluster_role("monitoring", json::object(),
                                 json::array({rule("secrets")}));
  aggregated["aggregationRule"]
      = {{"clusterRoleSelectors", json::array({{{"matchLabels", label}}})}};
  ok(make(verb::create, cluster_roles(), aggregated));
  // Rules it was created with are the controller's to replace.
  EXPECT_EQ(ok(make(verb::get, cluster_roles("monitoring")))["rules"],
            json::array());
  ok(make(verb::create, cluster_roles(),
          cluster_role("mon-pods", label, json::array({rule("pods")}))));
  ok(make(verb::create, cluster_roles(),
          cluster_role("mon-endpoints", label,
                       json::array({rule("endpoints"), rule("pods")}))));
  ok(make(verb::create, cluster_roles(),
          cluster_role("other", json::object(), json::array({rule("nodes")}))));
  // By name: mon-endpoints, then mon-pods; the repeated rule once.
  EXPECT_EQ(ok(make(verb::get, cluster_roles("monitoring")))["rules"],
            json::array({rule("endpoints"), rule("pods")}));
  // What it aggregates is granted.
  ok(make(
      verb::create,
      {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "", "", ""},
      json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
           {"kind", "ClusterRoleBinding"},
           {"metadata", {{"name", "alice-monitoring"}}},
           {"roleRef",
            {{"apiGroup", "rbac.authorization.k8s.io"},
             {"kind", "ClusterRole"},
             {"name", "monitoring"}}},
           {"subjects", json::array({{{"apiGroup", "rbac.authorization.k8s.io"},
                                      {"kind", "User"},
                                      {"name", "alice"}}})}}));
  auto as_alice = make(verb::get, core("endpoints", "default", "none"));
  as_alice.impersonate_user = "alice";
  EXPECT_EQ(failure(as_alice).code, 404);
  as_alice.ref = core("nodes", "", "none");
  EXPECT_EQ(failure(as_alice).code, 403);
  // It follows changes and deletions of the roles it selects.
  ok(make(verb::remove, cluster_roles("mon-endpoints")));
  auto pods = ok(make(verb::get, cluster_roles("mon-pods")));
  pods["rules"] = json::array({rule("pods"), rule("services")});
  ok(make(verb::update, cluster_roles("mon-pods"), pods));
  EXPECT_EQ(ok(make(verb::get, cluster_roles("monitoring")))["rules"],
            json::array({rule("pods"), rule("services")}));
}

} // namespace
} // namespace aiperf::k8s::sim
