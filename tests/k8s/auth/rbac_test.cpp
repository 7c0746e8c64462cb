#include "k8s/sim/auth/rbac.hpp"
#include "k8s/sim/auth/tokens.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aiperf::k8s::sim::auth {
namespace {

const std::string bench_sa = "system:serviceaccount:bench:default";
const std::string operator_sa
    = "system:serviceaccount:aiperf-system:aiperf-operator";

user_info sa_user(const std::string& ns, const std::string& name) {
  token_claims c;
  c.namespace_name = ns;
  c.service_account = name;
  return user_of(c);
}

json rule(std::vector<std::string> groups, std::vector<std::string> resources,
          std::vector<std::string> verbs, std::vector<std::string> names = {}) {
  json r = {{"apiGroups", groups}, {"resources", resources}, {"verbs", verbs}};
  if (!names.empty())
    r["resourceNames"] = names;
  return r;
}

json role(const std::string& ns, const std::string& name, json rules) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "Role"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"rules", std::move(rules)}};
}

json cluster_role(const std::string& name, json rules) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRole"},
          {"metadata", {{"name", name}}},
          {"rules", std::move(rules)}};
}

json binding(const std::string& kind, const std::string& ns,
             const std::string& name, const std::string& role_kind,
             const std::string& role_name, json subjects) {
  json b = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
            {"kind", kind},
            {"metadata", {{"name", name}}},
            {"roleRef",
             {{"apiGroup", "rbac.authorization.k8s.io"},
              {"kind", role_kind},
              {"name", role_name}}},
            {"subjects", std::move(subjects)}};
  if (!ns.empty())
    b["metadata"]["namespace"] = ns;
  return b;
}

json sa_subject(const std::string& name, const std::string& ns = {}) {
  json s = {{"kind", "ServiceAccount"}, {"name", name}};
  if (!ns.empty())
    s["namespace"] = ns;
  return s;
}

// The per-job benchmark Role and its RoleBinding, as the operator writes
// them (RBACSpec._RULES).
json benchmark_role() {
  return role(
      "bench", "aiperf-j1-role",
      json::array(
          {rule({"aiperf.nvidia.com"}, {"aiperfjobs", "aiperfjobs/status"},
                {"get", "list", "watch", "patch"}),
           rule({""}, {"configmaps"}, {"get", "list", "watch"}),
           rule({""}, {"pods", "pods/log"}, {"get", "list", "watch"}),
           rule({""}, {"services", "endpoints"}, {"get", "list", "watch"}),
           rule({""}, {"events"}, {"get", "list", "watch"}),
           rule({"batch"}, {"jobs"}, {"get", "list", "watch"}),
           rule({"jobset.x-k8s.io"}, {"jobsets"},
                {"get", "list", "watch", "patch"}),
           rule({"jobset.x-k8s.io"}, {"jobsets/status"},
                {"get", "list", "watch"})}));
}

json benchmark_binding() {
  return binding("RoleBinding", "bench", "aiperf-j1-binding", "Role",
                 "aiperf-j1-role",
                 json::array({sa_subject("default", "bench")}));
}

// The operator's ClusterRole (chart clusterrole.yaml), bound cluster-wide.
json operator_cluster_role() {
  std::vector<std::string> crud
      = {"get", "list", "watch", "create", "update", "patch", "delete"};
  return cluster_role(
      "aiperf-operator",
      json::array(
          {rule({"apiextensions.k8s.io"}, {"customresourcedefinitions"},
                {"get", "list", "watch"}),
           rule({"aiperf.nvidia.com"},
                {"aiperfjobs", "aiperfjobs/status", "aiperfjobs/finalizers"},
                crud),
           rule({"aiperf.nvidia.com"},
                {"aiperfsweeps", "aiperfsweeps/status",
                 "aiperfsweeps/finalizers"},
                crud),
           rule(
               {"jobset.x-k8s.io"}, {"jobsets"},
               {"create", "delete", "get", "list", "patch", "update", "watch"}),
           rule({"jobset.x-k8s.io"}, {"jobsets/status"},
                {"get", "list", "watch"}),
           rule({"batch"}, {"jobs"}, {"get", "list", "watch"}),
           rule({""}, {"serviceaccounts"}, {"get", "list", "watch", "create"}),
           rule(
               {""}, {"configmaps"},
               {"create", "delete", "get", "list", "patch", "update", "watch"}),
           rule({""}, {"services", "endpoints"},
                {"create", "delete", "get", "list", "watch"}),
           rule({"rbac.authorization.k8s.io"}, {"roles", "rolebindings"},
                {"create", "delete", "get", "list", "watch"}),
           rule({""}, {"namespaces"}, {"get", "list", "watch"}),
           rule({""}, {"pods", "pods/log"}, {"get", "list", "watch"}),
           rule({""}, {"events"},
                {"get", "list", "watch", "create", "patch"})}));
}

class k8s_sim_auth_rbac : public ::testing::Test {
protected:
  void SetUp() override {
    for (const auto& r : bootstrap_cluster_roles())
      index.upsert("ClusterRole", r);
    for (const auto& b : bootstrap_cluster_role_bindings())
      index.upsert("ClusterRoleBinding", b);
    index.upsert("Role", benchmark_role());
    index.upsert("RoleBinding", benchmark_binding());
    index.upsert("ClusterRole", operator_cluster_role());
    index.upsert(
        "ClusterRoleBinding",
        binding("ClusterRoleBinding", "", "aiperf-operator", "ClusterRole",
                "aiperf-operator",
                json::array({sa_subject("aiperf-operator", "aiperf-system")})));
  }

  attributes ask(const user_info& u, std::string verb, std::string group,
                 std::string resource, std::string ns, std::string name = {},
                 std::string sub = {}) {
    attributes a;
    a.user = u;
    a.verb = std::move(verb);
    a.group = std::move(group);
    a.resource = std::move(resource);
    a.namespace_name = std::move(ns);
    a.name = std::move(name);
    a.subresource = std::move(sub);
    return a;
  }

  rbac_index index;
  user_info bench = sa_user("bench", "default");
  user_info op = sa_user("aiperf-system", "aiperf-operator");
};

TEST_F(k8s_sim_auth_rbac,
       the_benchmark_role_patches_job_status_but_cannot_delete_jobsets) {
  EXPECT_TRUE(index.allowed(ask(bench, "patch", "aiperf.nvidia.com",
                                "aiperfjobs", "bench", "j1", "status")));
  EXPECT_TRUE(index.allowed(
      ask(bench, "patch", "jobset.x-k8s.io", "jobsets", "bench", "aiperf-j1")));
  EXPECT_TRUE(
      index.allowed(ask(bench, "get", "", "pods", "bench", "p", "log")));
  EXPECT_TRUE(index.allowed(ask(bench, "watch", "batch", "jobs", "bench")));

  auto del = ask(bench, "delete", "jobset.x-k8s.io", "jobsets", "bench",
                 "aiperf-j1");
  EXPECT_FALSE(index.allowed(del));
  auto st = forbidden_status(del, index.authorize(del).reason);
  EXPECT_EQ(st.reason, "Forbidden");
  EXPECT_EQ(st.code, 403);
  EXPECT_EQ(st.message,
            "jobsets.jobset.x-k8s.io \"aiperf-j1\" is forbidden: User "
            "\"system:serviceaccount:bench:default\" cannot delete resource "
            "\"jobsets\" in API "
            "group \"jobset.x-k8s.io\" in the namespace \"bench\"");
  EXPECT_EQ(st.details.name, "aiperf-j1");
  EXPECT_EQ(st.details.group, "jobset.x-k8s.io");
  EXPECT_EQ(st.details.kind, "jobsets");
  auto err = forbidden_error(del);
  EXPECT_TRUE(is_error(err, k8s::errc::forbidden));
  EXPECT_EQ(error_message(err), st.message);
}

TEST_F(k8s_sim_auth_rbac, a_subresource_is_named_with_its_resource) {
  auto update = ask(bench, "update", "aiperf.nvidia.com", "aiperfjobs", "bench",
                    "j1", "status");
  EXPECT_FALSE(index.allowed(update));
  EXPECT_EQ(forbidden_message(update),
            "aiperfjobs.aiperf.nvidia.com \"j1\" is forbidden: User "
            "\"system:serviceaccount:bench:default\" cannot update resource "
            "\"aiperfjobs/status\" "
            "in API group \"aiperf.nvidia.com\" in the namespace \"bench\"");
  EXPECT_EQ(forbidden_status(update).details.kind, "aiperfjobs");
  // jobsets/status is read-only for the benchmark, and pods have no patch.
  EXPECT_FALSE(index.allowed(ask(bench, "patch", "jobset.x-k8s.io", "jobsets",
                                 "bench", "aiperf-j1", "status")));
  EXPECT_FALSE(index.allowed(ask(bench, "patch", "", "pods", "bench", "p")));
}

TEST_F(k8s_sim_auth_rbac,
       collections_and_cluster_scope_read_as_upstream_writes_them) {
  auto create = ask(bench, "create", "", "configmaps", "bench");
  EXPECT_FALSE(index.allowed(create));
  EXPECT_EQ(
      forbidden_message(create),
      "configmaps is forbidden: User \"system:serviceaccount:bench:default\" "
      "cannot create "
      "resource \"configmaps\" in API group \"\" in the namespace \"bench\"");
  auto list = ask(bench, "list", "", "namespaces", "");
  EXPECT_FALSE(index.allowed(list));
  EXPECT_EQ(forbidden_message(list),
            "namespaces is forbidden: User "
            "\"system:serviceaccount:bench:default\" cannot list "
            "resource \"namespaces\" in API group \"\" at the cluster scope");
  auto get_ns = ask(bench, "get", "", "namespaces", "", "bench");
  EXPECT_EQ(forbidden_message(get_ns),
            "namespaces \"bench\" is forbidden: User "
            "\"system:serviceaccount:bench:default\" "
            "cannot get resource \"namespaces\" in API group \"\" at the "
            "cluster scope");
}

TEST_F(k8s_sim_auth_rbac, a_role_binding_grants_nothing_outside_its_namespace) {
  EXPECT_FALSE(index.allowed(ask(bench, "get", "", "pods", "other", "p")));
  EXPECT_FALSE(index.allowed(ask(bench, "get", "", "pods", "", "p")));
  auto other_sa = sa_user("bench", "runner");
  EXPECT_FALSE(index.allowed(ask(other_sa, "get", "", "pods", "bench", "p")));
}

TEST_F(k8s_sim_auth_rbac, discovery_is_open_to_every_authenticated_user) {
  for (const char* path :
       {"/api", "/api/v1", "/apis", "/apis/aiperf.nvidia.com/v1alpha1",
        "/version", "/healthz", "/openapi/v2"})
    EXPECT_TRUE(index.allowed(non_resource_attributes(bench, "get", path)))
        << path;
  EXPECT_TRUE(index.allowed(ask(bench, "create", "authorization.k8s.io",
                                "selfsubjectaccessreviews", "")));
  EXPECT_TRUE(index.allowed(ask(bench, "create", "authorization.k8s.io",
                                "selfsubjectrulesreviews", "")));
  auto metrics = non_resource_attributes(bench, "get", "/metrics");
  EXPECT_FALSE(index.allowed(metrics));
  auto st = forbidden_status(metrics);
  EXPECT_EQ(st.message,
            "forbidden: User \"system:serviceaccount:bench:default\" cannot "
            "get path \"/metrics\"");
  EXPECT_EQ(st.details, status_details{});
  EXPECT_FALSE(index.allowed(non_resource_attributes(bench, "post", "/api")));
  // Unauthenticated callers only see the public endpoints.
  auto anon = anonymous_user();
  EXPECT_TRUE(index.allowed(non_resource_attributes(anon, "get", "/version")));
  EXPECT_FALSE(index.allowed(non_resource_attributes(anon, "get", "/apis")));
}

TEST_F(k8s_sim_auth_rbac, system_masters_may_do_anything_without_a_reason) {
  auto admin = admin_user();
  auto d = index.authorize(
      ask(admin, "deletecollection", "anything.example", "widgets", "x"));
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.reason, "");
  rbac_index empty;
  EXPECT_TRUE(empty.allowed(non_resource_attributes(admin, "get", "/metrics")));
}

TEST_F(k8s_sim_auth_rbac,
       an_allowed_request_names_the_binding_that_allowed_it) {
  EXPECT_EQ(
      index.authorize(ask(bench, "get", "", "configmaps", "bench", "c")).reason,
      "RBAC: allowed by RoleBinding \"aiperf-j1-binding/bench\" of Role "
      "\"aiperf-j1-role\" "
      "to ServiceAccount \"default/bench\"");
  EXPECT_EQ(
      index.authorize(ask(op, "create", "jobset.x-k8s.io", "jobsets", "bench"))
          .reason,
      "RBAC: allowed by ClusterRoleBinding \"aiperf-operator\" of ClusterRole "
      "\"aiperf-operator\" to ServiceAccount "
      "\"aiperf-operator/aiperf-system\"");
  EXPECT_EQ(
      index.authorize(non_resource_attributes(bench, "get", "/apis")).reason,
      "RBAC: allowed by ClusterRoleBinding \"system:discovery\" of ClusterRole "
      "\"system:discovery\" to Group \"system:authenticated\"");
}

TEST_F(k8s_sim_auth_rbac, a_binding_to_a_missing_role_shows_in_the_reason) {
  index.upsert("RoleBinding",
               binding("RoleBinding", "bench", "dangling", "Role", "gone",
                       json::array({sa_subject("default")})));
  auto del = ask(bench, "delete", "", "pods", "bench", "p");
  auto d = index.authorize(del);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.reason,
            "RBAC: role.rbac.authorization.k8s.io \"gone\" not found");
  EXPECT_EQ(
      forbidden_message(del, d.reason),
      "pods \"p\" is forbidden: User \"system:serviceaccount:bench:default\" "
      "cannot delete "
      "resource \"pods\" in API group \"\" in the namespace \"bench\": RBAC: "
      "role.rbac.authorization.k8s.io \"gone\" not found");
  // Still allowed what the other binding grants.
  EXPECT_TRUE(index.allowed(ask(bench, "get", "", "pods", "bench", "p")));
}

TEST_F(k8s_sim_auth_rbac, resource_names_limit_a_rule_to_those_objects) {
  index.upsert("Role",
               role("bench", "sweep",
                    json::array({rule({"aiperf.nvidia.com"},
                                      {"aiperfsweeps", "aiperfsweeps/status"},
                                      {"get", "patch", "update"}, {"s1"})})));
  index.upsert("RoleBinding",
               binding("RoleBinding", "bench", "sweep", "Role", "sweep",
                       json::array({sa_subject("sweeper")})));
  auto sweeper = sa_user("bench", "sweeper");
  EXPECT_TRUE(index.allowed(
      ask(sweeper, "get", "aiperf.nvidia.com", "aiperfsweeps", "bench", "s1")));
  EXPECT_TRUE(index.allowed(ask(sweeper, "update", "aiperf.nvidia.com",
                                "aiperfsweeps", "bench", "s1", "status")));
  EXPECT_FALSE(index.allowed(
      ask(sweeper, "get", "aiperf.nvidia.com", "aiperfsweeps", "bench", "s2")));
  EXPECT_FALSE(index.allowed(
      ask(sweeper, "get", "aiperf.nvidia.com", "aiperfsweeps", "bench")));
}

TEST_F(k8s_sim_auth_rbac, wildcards_match_as_upstream_matches_them) {
  index.upsert(
      "ClusterRole",
      cluster_role("status-writer",
                   json::array({rule({"*"}, {"*/status"}, {"update"})})));
  index.upsert("ClusterRole",
               cluster_role("all-pods",
                            json::array({rule({""}, {"pods"}, {"*"}),
                                         json{{"nonResourceURLs", {"/logs/*"}},
                                              {"verbs", {"get"}}}})));
  // A ClusterRole bound by a RoleBinding grants in that namespace only.
  index.upsert(
      "RoleBinding",
      binding("RoleBinding", "bench", "w", "ClusterRole", "status-writer",
              json::array({json{{"kind", "User"}, {"name", "alice"}}})));
  index.upsert(
      "ClusterRoleBinding",
      binding("ClusterRoleBinding", "", "p", "ClusterRole", "all-pods",
              json::array({json{{"kind", "Group"}, {"name", "pod-people"}}})));
  user_info alice{"alice", "", {"system:authenticated"}, {}};
  EXPECT_TRUE(index.allowed(
      ask(alice, "update", "apps", "deployments", "bench", "d", "status")));
  EXPECT_FALSE(
      index.allowed(ask(alice, "update", "apps", "deployments", "bench", "d")));
  EXPECT_FALSE(index.allowed(
      ask(alice, "update", "apps", "deployments", "other", "d", "status")));
  user_info bob{"bob", "", {"pod-people", "system:authenticated"}, {}};
  EXPECT_TRUE(index.allowed(ask(bob, "deletecollection", "", "pods", "any")));
  EXPECT_FALSE(index.allowed(ask(bob, "get", "", "pods", "any", "p", "log")));
  EXPECT_TRUE(
      index.allowed(non_resource_attributes(bob, "get", "/logs/kube.log")));
  EXPECT_FALSE(index.allowed(non_resource_attributes(bob, "get", "/logs")));
}

TEST_F(k8s_sim_auth_rbac, service_account_subjects_and_groups_of_accounts) {
  // A ServiceAccount subject without a namespace means the binding's; in a
  // ClusterRoleBinding it matches nobody.
  index.upsert("Role",
               role("bench", "cm-writer",
                    json::array({rule({""}, {"configmaps"}, {"create"})})));
  index.upsert("RoleBinding",
               binding("RoleBinding", "bench", "cm", "Role", "cm-writer",
                       json::array({sa_subject("default")})));
  EXPECT_TRUE(index.allowed(ask(bench, "create", "", "configmaps", "bench")));
  index.upsert(
      "ClusterRole",
      cluster_role("nodes", json::array({rule({""}, {"nodes"}, {"list"})})));
  index.upsert("ClusterRoleBinding",
               binding("ClusterRoleBinding", "", "nodes", "ClusterRole",
                       "nodes", json::array({sa_subject("default")})));
  EXPECT_FALSE(index.allowed(ask(bench, "list", "", "nodes", "")));
  index.upsert(
      "ClusterRoleBinding",
      binding("ClusterRoleBinding", "", "nodes", "ClusterRole", "nodes",
              json::array({json{{"kind", "Group"},
                                {"name", "system:serviceaccounts:bench"}}})));
  EXPECT_TRUE(index.allowed(ask(bench, "list", "", "nodes", "")));
  EXPECT_FALSE(index.allowed(ask(op, "list", "", "nodes", "")));
}

TEST_F(k8s_sim_auth_rbac, erased_objects_grant_nothing) {
  EXPECT_TRUE(index.allowed(ask(bench, "get", "", "pods", "bench", "p")));
  index.erase("RoleBinding", "bench", "aiperf-j1-binding");
  EXPECT_FALSE(index.allowed(ask(bench, "get", "", "pods", "bench", "p")));
  index.upsert("RoleBinding", benchmark_binding());
  index.erase("Role", "bench", "aiperf-j1-role");
  auto d = index.authorize(ask(bench, "get", "", "pods", "bench", "p"));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(
      d.reason,
      "RBAC: role.rbac.authorization.k8s.io \"aiperf-j1-role\" not found");
  index.clear();
  EXPECT_FALSE(index.allowed(non_resource_attributes(bench, "get", "/apis")));
  index.upsert("ConfigMap", json{{"metadata", {{"name", "x"}}}}); // ignored
  EXPECT_TRUE(index.rules_for(bench, "bench").empty());
}

TEST_F(k8s_sim_auth_rbac, the_operator_may_create_the_benchmark_role_it_holds) {
  EXPECT_TRUE(index.check_role_write(op, "Role", benchmark_role(), "bench"));
  EXPECT_TRUE(index.check_binding_write(op, "RoleBinding", benchmark_binding(),
                                        "bench"));
}

TEST_F(k8s_sim_auth_rbac,
       granting_what_one_does_not_hold_is_refused_with_upstreams_message) {
  auto r = role(
      "bench", "aiperf-j1-role",
      json::array({rule({""}, {"pods"}, {"get", "delete", "patch"}),
                   rule({""}, {"secrets"}, {"get"}, {"token"}),
                   rule({"aiperf.nvidia.com"}, {"aiperfjobs"}, {"get"})}));
  auto refused = index.check_role_write(op, "Role", r, "bench");
  ASSERT_FALSE(refused);
  EXPECT_TRUE(is_error(refused.error(), k8s::errc::forbidden));
  const auto* st = status_of(refused.error());
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->code, 403);
  EXPECT_EQ(st->details.name, "aiperf-j1-role");
  EXPECT_EQ(st->details.group, "rbac.authorization.k8s.io");
  EXPECT_EQ(st->details.kind, "roles");
  EXPECT_EQ(
      st->message,
      "roles.rbac.authorization.k8s.io \"aiperf-j1-role\" is forbidden: user "
      "\"system:serviceaccount:aiperf-system:aiperf-operator\" "
      "(groups=[\"system:serviceaccounts\" "
      "\"system:serviceaccounts:aiperf-system\" \"system:authenticated\"]) is "
      "attempting to "
      "grant RBAC permissions not currently held:\n"
      "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\" \"patch\"]}\n"
      "{APIGroups:[\"\"], Resources:[\"secrets\"], ResourceNames:[\"token\"], "
      "Verbs:[\"get\"]}");
}

TEST_F(k8s_sim_auth_rbac, escalate_lets_a_holder_grant_more) {
  auto wide = cluster_role("wide", json::array({rule({"*"}, {"*"}, {"*"})}));
  auto refused = index.check_role_write(op, "ClusterRole", wide, "");
  ASSERT_FALSE(refused);
  EXPECT_EQ(status_of(refused.error())->details.kind, "clusterroles");
  EXPECT_EQ(status_of(refused.error())
                ->message.rfind("clusterroles.rbac.authorization.k8s.io "
                                "\"wide\" is forbidden: user ",
                                0),
            0u);
  index.upsert(
      "ClusterRole",
      cluster_role("escalator", json::array({rule({"rbac.authorization.k8s.io"},
                                                  {"clusterroles"},
                                                  {"escalate"}, {"wide"})})));
  index.upsert(
      "ClusterRoleBinding",
      binding("ClusterRoleBinding", "", "escalator", "ClusterRole", "escalator",
              json::array({sa_subject("aiperf-operator", "aiperf-system")})));
  EXPECT_TRUE(index.check_role_write(op, "ClusterRole", wide, ""));
  auto other = cluster_role("other", json::array({rule({"*"}, {"*"}, {"*"})}));
  EXPECT_FALSE(index.check_role_write(op, "ClusterRole", other, ""));
  EXPECT_TRUE(index.check_role_write(admin_user(), "ClusterRole", other, ""));
}

TEST_F(k8s_sim_auth_rbac, an_aggregation_rule_needs_full_authority) {
  auto agg = cluster_role("agg", json::array());
  agg["aggregationRule"] = {
      {"clusterRoleSelectors", json::array({{{"matchLabels", {{"a", "b"}}}}})}};
  auto refused = index.check_role_write(op, "ClusterRole", agg, "");
  ASSERT_FALSE(refused);
  EXPECT_EQ(status_of(refused.error())->message,
            "clusterroles.rbac.authorization.k8s.io \"agg\" is forbidden: must "
            "have cluster-admin "
            "privileges to use the aggregationRule");
  EXPECT_TRUE(index.check_role_write(admin_user(), "ClusterRole", agg, ""));
  // No selectors: not aggregated.
  auto empty_rule = cluster_role("agg", json::array());
  empty_rule["aggregationRule"] = {{"clusterRoleSelectors", json::array()}};
  EXPECT_TRUE(index.check_role_write(op, "ClusterRole", empty_rule, ""));
  // Dropping the rule of an aggregated role needs the same authority.
  auto plain = cluster_role("agg", json::array());
  EXPECT_TRUE(index.check_role_write(op, "ClusterRole", plain, ""));
  EXPECT_FALSE(index.check_role_write(op, "ClusterRole", plain, "", &agg));
}

TEST_F(k8s_sim_auth_rbac, a_role_update_of_gc_fields_only_is_always_allowed) {
  auto old
      = role("bench", "wide", json::array({rule({""}, {"secrets"}, {"*"})}));
  auto updated = old;
  updated["metadata"]["finalizers"] = {"example.com/keep"};
  EXPECT_FALSE(index.check_role_write(op, "Role", updated, "bench"));
  EXPECT_TRUE(index.check_role_write(op, "Role", updated, "bench", &old));
  updated["rules"][0]["verbs"] = {"get"};
  EXPECT_FALSE(index.check_role_write(op, "Role", updated, "bench", &old));
}

TEST_F(k8s_sim_auth_rbac, binding_a_role_one_does_not_hold_needs_bind) {
  index.upsert("Role", role("bench", "pod-killer",
                            json::array({rule({""}, {"pods"}, {"delete"})})));
  auto b = binding("RoleBinding", "bench", "kill", "Role", "pod-killer",
                   json::array({sa_subject("default")}));
  auto refused = index.check_binding_write(op, "RoleBinding", b, "bench");
  ASSERT_FALSE(refused);
  EXPECT_EQ(
      status_of(refused.error())->message,
      "rolebindings.rbac.authorization.k8s.io \"kill\" is forbidden: user "
      "\"system:serviceaccount:aiperf-system:aiperf-operator\" "
      "(groups=[\"system:serviceaccounts\" "
      "\"system:serviceaccounts:aiperf-system\" \"system:authenticated\"]) is "
      "attempting to "
      "grant RBAC permissions not currently held:\n"
      "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"delete\"]}");
  EXPECT_EQ(status_of(refused.error())->details.kind, "rolebindings");

  index.upsert("Role",
               role("bench", "binder",
                    json::array({rule({"rbac.authorization.k8s.io"}, {"roles"},
                                      {"bind"}, {"pod-killer"})})));
  index.upsert(
      "RoleBinding",
      binding("RoleBinding", "bench", "binder", "Role", "binder",
              json::array({sa_subject("aiperf-operator", "aiperf-system")})));
  EXPECT_TRUE(index.check_binding_write(op, "RoleBinding", b, "bench"));
  // The bind grant is namespaced: another namespace is refused.
  auto elsewhere = b;
  elsewhere["metadata"]["namespace"] = "other";
  index.upsert("Role", role("other", "pod-killer",
                            json::array({rule({""}, {"pods"}, {"delete"})})));
  EXPECT_FALSE(
      index.check_binding_write(op, "RoleBinding", elsewhere, "other"));
}

TEST_F(k8s_sim_auth_rbac, binding_a_missing_role_is_not_found) {
  auto b = binding("RoleBinding", "bench", "b", "Role", "nope",
                   json::array({sa_subject("default")}));
  auto r = index.check_binding_write(op, "RoleBinding", b, "bench");
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), k8s::errc::not_found));
  EXPECT_EQ(status_of(r.error())->message,
            "roles.rbac.authorization.k8s.io \"nope\" not found");
  auto crb = binding("ClusterRoleBinding", "", "b", "ClusterRole", "nope",
                     json::array());
  auto c = index.check_binding_write(op, "ClusterRoleBinding", crb, "");
  ASSERT_FALSE(c);
  EXPECT_EQ(status_of(c.error())->message,
            "clusterroles.rbac.authorization.k8s.io \"nope\" not found");
}

TEST_F(k8s_sim_auth_rbac, an_update_of_gc_fields_only_is_always_allowed) {
  index.upsert("Role", role("bench", "pod-killer",
                            json::array({rule({""}, {"pods"}, {"delete"})})));
  auto old = binding("RoleBinding", "bench", "kill", "Role", "pod-killer",
                     json::array({sa_subject("default")}));
  old["metadata"]["resourceVersion"] = "10";
  auto updated = old;
  updated["metadata"]["finalizers"] = {"example.com/keep"};
  updated["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "v1"},
                                                         {"kind", "ConfigMap"},
                                                         {"name", "o"},
                                                         {"uid", "u"}}});
  EXPECT_TRUE(
      index.check_binding_write(op, "RoleBinding", updated, "bench", &old));
  updated["subjects"].push_back(sa_subject("runner"));
  EXPECT_FALSE(
      index.check_binding_write(op, "RoleBinding", updated, "bench", &old));
}

TEST_F(k8s_sim_auth_rbac, impersonation_needs_the_impersonate_verb) {
  auto as_bob = index.impersonate(admin_user(), "bob", {"devs"});
  ASSERT_TRUE(as_bob);
  EXPECT_EQ(as_bob->username, "bob");
  EXPECT_EQ(as_bob->groups,
            (std::vector<std::string>{"devs", "system:authenticated"}));

  auto as_sa = index.impersonate(admin_user(), bench_sa, {});
  ASSERT_TRUE(as_sa);
  EXPECT_EQ(as_sa->groups,
            (std::vector<std::string>{"system:serviceaccounts",
                                      "system:serviceaccounts:bench",
                                      "system:authenticated"}));
  EXPECT_TRUE(index.allowed(ask(*as_sa, "patch", "aiperf.nvidia.com",
                                "aiperfjobs", "bench", "j1", "status")));

  auto refused = index.impersonate(bench, "bob", {});
  ASSERT_FALSE(refused);
  EXPECT_EQ(
      status_of(refused.error())->message,
      "users \"bob\" is forbidden: User "
      "\"system:serviceaccount:bench:default\" cannot "
      "impersonate resource \"users\" in API group \"\" at the cluster scope");
  auto refused_sa = index.impersonate(bench, operator_sa, {});
  ASSERT_FALSE(refused_sa);
  EXPECT_EQ(
      status_of(refused_sa.error())->message,
      "serviceaccounts \"aiperf-operator\" is forbidden: User "
      "\"system:serviceaccount:bench:default\" cannot impersonate resource "
      "\"serviceaccounts\" in API group \"\" in the namespace "
      "\"aiperf-system\"");

  index.upsert(
      "ClusterRole",
      cluster_role("be-bob", json::array({rule({""}, {"users"}, {"impersonate"},
                                               {"bob"})})));
  index.upsert("ClusterRoleBinding",
               binding("ClusterRoleBinding", "", "be-bob", "ClusterRole",
                       "be-bob",
                       json::array({sa_subject("default", "bench")})));
  EXPECT_TRUE(index.impersonate(bench, "bob", {}));
  auto group_refused = index.impersonate(bench, "bob", {"system:masters"});
  ASSERT_FALSE(group_refused);
  EXPECT_EQ(status_of(group_refused.error())->message,
            "groups \"system:masters\" is forbidden: User "
            "\"system:serviceaccount:bench:default\" "
            "cannot impersonate resource \"groups\" in API group \"\" at the "
            "cluster scope");
  auto no_user = index.impersonate(admin_user(), "", {"devs"});
  ASSERT_FALSE(no_user);
  EXPECT_EQ(status_of(no_user.error())->code, 400);
  EXPECT_EQ(status_of(no_user.error())->message,
            "requested [{Group  devs    }] without impersonating a user");
  EXPECT_EQ(*index.impersonate(bench, "", {}), bench);
}

TEST_F(k8s_sim_auth_rbac,
       a_self_subject_access_review_answers_kubectl_auth_can_i) {
  json review = {{"apiVersion", "authorization.k8s.io/v1"},
                 {"kind", "SelfSubjectAccessReview"},
                 {"metadata", {{"creationTimestamp", nullptr}}},
                 {"spec",
                  {{"resourceAttributes",
                    {{"namespace", "bench"},
                     {"verb", "patch"},
                     {"group", "aiperf.nvidia.com"},
                     {"resource", "aiperfjobs"},
                     {"subresource", "status"}}}}}};
  auto yes = index.self_subject_access_review(bench, review);
  ASSERT_TRUE(yes);
  EXPECT_EQ(
      yes->dump(),
      R"({"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1",)"
      R"("metadata":{"creationTimestamp":null},"spec":{"resourceAttributes":{)"
      R"("namespace":"bench","verb":"patch","group":"aiperf.nvidia.com",)"
      R"("resource":"aiperfjobs","subresource":"status"}},)"
      R"("status":{"allowed":true,"reason":"RBAC: allowed by RoleBinding )"
      R"(\"aiperf-j1-binding/bench\" of Role \"aiperf-j1-role\" to ServiceAccount )"
      R"(\"default/bench\""}})");
  review["spec"]["resourceAttributes"]["verb"] = "delete";
  auto no = index.self_subject_access_review(bench, review);
  ASSERT_TRUE(no);
  EXPECT_EQ((*no)["status"].dump(), R"({"allowed":false})");

  json non_resource
      = {{"spec",
          {{"nonResourceAttributes", {{"path", "/apis"}, {"verb", "get"}}}}}};
  auto nr = index.self_subject_access_review(bench, non_resource);
  ASSERT_TRUE(nr);
  EXPECT_EQ((*nr)["status"]["allowed"], true);
  EXPECT_EQ((*nr)["spec"].dump(),
            R"({"nonResourceAttributes":{"path":"/apis","verb":"get"}})");
}

TEST_F(k8s_sim_auth_rbac, a_review_with_neither_or_both_attributes_is_invalid) {
  auto neither
      = index.self_subject_access_review(bench, json{{"spec", json::object()}});
  ASSERT_FALSE(neither);
  EXPECT_TRUE(is_error(neither.error(), k8s::errc::invalid));
  EXPECT_EQ(status_of(neither.error())->code, 422);
  EXPECT_EQ(status_of(neither.error())->message,
            "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: "
            "spec.resourceAttributes: Invalid value: \"null\": exactly one of "
            "nonResourceAttributes or resourceAttributes must be specified");
  json both
      = {{"spec",
          {{"resourceAttributes", {{"verb", "get"}}},
           {"nonResourceAttributes", {{"path", "/api"}, {"verb", "get"}}}}}};
  auto b = index.self_subject_access_review(bench, both);
  ASSERT_FALSE(b);
  EXPECT_EQ(status_of(b.error())->details.causes.at(0).field,
            "spec.nonResourceAttributes");
  EXPECT_EQ(status_of(b.error())->message,
            "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: "
            "spec.nonResourceAttributes: Invalid value: "
            "authorization.NonResourceAttributes{Path:\"/api\", Verb:\"get\"}: "
            "cannot be "
            "specified in combination with resourceAttributes");
  // Several errors come as one bracketed list.
  auto sar = index.subject_access_review(json{{"spec", json::object()}});
  ASSERT_FALSE(sar);
  EXPECT_EQ(
      status_of(sar.error())->message,
      "SubjectAccessReview.authorization.k8s.io \"\" is invalid: "
      "[spec.resourceAttributes: Invalid value: \"null\": exactly one of "
      "nonResourceAttributes or resourceAttributes must be specified, "
      "spec.user: "
      "Invalid value: \"\": at least one of user or group must be specified]");
  EXPECT_EQ(status_of(sar.error())->details.causes.size(), 2u);
}

TEST_F(k8s_sim_auth_rbac, a_subject_access_review_asks_for_someone_else) {
  json review
      = {{"spec",
          {{"resourceAttributes",
            {{"namespace", "bench"}, {"verb", "get"}, {"resource", "pods"}}},
           {"user", bench_sa},
           {"groups", {"system:serviceaccounts"}}}}};
  auto r = index.subject_access_review(review);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["kind"], "SubjectAccessReview");
  EXPECT_EQ((*r)["status"]["allowed"], true);
  review["spec"]["user"] = "mallory";
  EXPECT_EQ((*index.subject_access_review(review))["status"]["allowed"], false);
  review["spec"].erase("user");
  review["spec"].erase("groups");
  EXPECT_FALSE(index.subject_access_review(review));
}

TEST_F(k8s_sim_auth_rbac,
       a_self_subject_rules_review_lists_what_kubectl_auth_can_i_list_shows) {
  rbac_index small;
  for (const auto& r : bootstrap_cluster_roles())
    small.upsert("ClusterRole", r);
  for (const auto& b : bootstrap_cluster_role_bindings())
    small.upsert("ClusterRoleBinding", b);
  small.upsert(
      "Role", role("bench", "cm",
                   json::array({rule({""}, {"configmaps"}, {"get"}, {"c1"})})));
  small.upsert("RoleBinding",
               binding("RoleBinding", "bench", "cm", "Role", "cm",
                       json::array({sa_subject("default")})));
  auto r = small.self_subject_rules_review(
      bench, json{{"apiVersion", "authorization.k8s.io/v1"},
                  {"kind", "SelfSubjectRulesReview"},
                  {"spec", {{"namespace", "bench"}}}});
  ASSERT_TRUE(r);
  EXPECT_EQ(
      r->dump(),
      R"({"kind":"SelfSubjectRulesReview","apiVersion":"authorization.k8s.io/v1",)"
      R"("metadata":{"creationTimestamp":null},"spec":{},"status":{"resourceRules":[)"
      R"({"verbs":["create"],"apiGroups":["authorization.k8s.io"],)"
      R"("resources":["selfsubjectaccessreviews","selfsubjectrulesreviews"]},)"
      R"({"verbs":["create"],"apiGroups":["authentication.k8s.io"],)"
      R"("resources":["selfsubjectreviews"]},)"
      R"({"verbs":["get"],"apiGroups":[""],"resources":["configmaps"],)"
      R"("resourceNames":["c1"]}],"nonResourceRules":[)"
      R"({"verbs":["get"],"nonResourceURLs":["/api","/api/*","/apis","/apis/*",)"
      R"("/healthz","/livez","/openapi","/openapi/*","/readyz","/version","/version/"]},)"
      R"({"verbs":["get"],"nonResourceURLs":["/healthz","/livez","/readyz","/version",)"
      R"("/version/"]}],"incomplete":false}})");

  small.upsert("RoleBinding",
               binding("RoleBinding", "bench", "dangling", "ClusterRole",
                       "gone", json::array({sa_subject("default")})));
  auto with_error = small.self_subject_rules_review(
      bench, json{{"spec", {{"namespace", "bench"}}}});
  ASSERT_TRUE(with_error);
  EXPECT_EQ((*with_error)["status"]["evaluationError"],
            "clusterrole.rbac.authorization.k8s.io \"gone\" not found");
  EXPECT_EQ((*with_error)["status"]["incomplete"], false);

  auto no_ns
      = small.self_subject_rules_review(bench, json{{"spec", json::object()}});
  ASSERT_FALSE(no_ns);
  EXPECT_EQ(status_of(no_ns.error())->code, 400);
  EXPECT_EQ(status_of(no_ns.error())->message, "no namespace on request");
}

TEST_F(k8s_sim_auth_rbac, the_admin_sees_every_rule_through_cluster_admin) {
  auto r = index.self_subject_rules_review(
      admin_user(), json{{"spec", {{"namespace", "default"}}}});
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["status"]["resourceRules"][0].dump(),
            R"({"verbs":["*"],"apiGroups":["*"],"resources":["*"]})");
  EXPECT_EQ((*r)["status"]["nonResourceRules"][0].dump(),
            R"({"verbs":["*"],"nonResourceURLs":["*"]})");
  // Without that binding the admin is still allowed, but lists nothing.
  rbac_index empty;
  auto none = empty.self_subject_rules_review(
      admin_user(), json{{"spec", {{"namespace", "default"}}}});
  ASSERT_TRUE(none);
  EXPECT_EQ((*none)["status"]["resourceRules"], json::array());
}

TEST_F(k8s_sim_auth_rbac,
       the_results_server_may_review_tokens_once_bound_to_auth_delegator) {
  auto review = ask(op, "create", "authentication.k8s.io", "tokenreviews", "");
  EXPECT_FALSE(index.allowed(review));
  index.upsert(
      "ClusterRoleBinding",
      binding("ClusterRoleBinding", "", "aiperf-operator-auth", "ClusterRole",
              "system:auth-delegator",
              json::array({sa_subject("aiperf-operator", "aiperf-system")})));
  EXPECT_TRUE(index.allowed(review));
}

TEST_F(k8s_sim_auth_rbac, check_answers_the_403_to_send) {
  EXPECT_TRUE(index.check(ask(bench, "get", "", "pods", "bench", "p")));
  auto r = index.check(
      ask(bench, "delete", "jobset.x-k8s.io", "jobsets", "bench", "aiperf-j1"));
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), k8s::errc::forbidden));
  EXPECT_EQ(status_of(r.error())->message,
            "jobsets.jobset.x-k8s.io \"aiperf-j1\" is forbidden: User "
            "\"system:serviceaccount:bench:default\" cannot delete resource "
            "\"jobsets\" in API "
            "group \"jobset.x-k8s.io\" in the namespace \"bench\"");
}

TEST_F(k8s_sim_auth_rbac, check_write_dispatches_on_the_resource) {
  EXPECT_EQ(rbac_index::kind_of_resource("clusterrolebindings"),
            "ClusterRoleBinding");
  EXPECT_EQ(rbac_index::kind_of_resource("pods"), "");
  auto greedy = role("bench", "greedy",
                     json::array({rule({""}, {"secrets"}, {"get"})}));
  EXPECT_FALSE(index.check_write(op, "roles", greedy, "bench"));
  EXPECT_TRUE(index.check_write(op, "configmaps", greedy, "bench"));
  index.upsert("Role", greedy);
  auto b = binding("RoleBinding", "bench", "g", "Role", "greedy",
                   json::array({sa_subject("default")}));
  auto refused = index.check_write(op, "rolebindings", b, "bench");
  ASSERT_FALSE(refused);
  EXPECT_EQ(status_of(refused.error())->details.kind, "rolebindings");
}

TEST_F(k8s_sim_auth_rbac,
       a_local_subject_access_review_stays_in_its_namespace) {
  json review
      = {{"metadata", {{"namespace", "bench"}}},
         {"spec",
          {{"resourceAttributes",
            {{"namespace", "bench"}, {"verb", "get"}, {"resource", "pods"}}},
           {"user", bench_sa}}}};
  auto r = index.local_subject_access_review(review, "bench");
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["kind"], "LocalSubjectAccessReview");
  EXPECT_EQ((*r)["status"]["allowed"], true);
  auto other = index.local_subject_access_review(review, "other");
  ASSERT_FALSE(other);
  EXPECT_EQ(status_of(other.error())->message,
            "spec.resourceAttributes.namespace must match namespace: other");
  json non_resource
      = {{"spec",
          {{"nonResourceAttributes", {{"path", "/api"}, {"verb", "get"}}},
           {"user", bench_sa}}}};
  auto nr = index.local_subject_access_review(non_resource, "bench");
  ASSERT_FALSE(nr);
  EXPECT_EQ(status_of(nr.error())->code, 422);
  EXPECT_EQ(status_of(nr.error())->message,
            "LocalSubjectAccessReview.authorization.k8s.io \"\" is invalid: "
            "spec.nonResourceAttributes: Invalid value: "
            "authorization.NonResourceAttributes{Path:\"/api\", Verb:\"get\"}: "
            "disallowed on "
            "this kind of request");
}

TEST(k8s_sim_auth_rbac_rules,
     objects_of_the_wrong_shape_neither_throw_nor_grant) {
  rbac_index index;
  std::vector<json> junk = {
      json(),
      json(7),
      json("x"),
      json::array({1, 2}),
      json{{"metadata", "x"}, {"rules", "y"}, {"subjects", 3}},
      json{{"metadata", {{"name", "r"}, {"namespace", "bench"}}},
           {"rules", json::array({"get", json::array(), json{{"verbs", 5}}})},
           {"roleRef", "Role"},
           {"subjects", json::array({"User", json{{"kind", 1}}})}}};
  auto bench = sa_user("bench", "default");
  for (const auto& j : junk) {
    for (const char* kind :
         {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}) {
      EXPECT_NO_THROW(index.upsert(kind, j));
      EXPECT_NO_THROW((void)index.check_write(
          bench, kind == std::string{"Role"} ? "roles" : "rolebindings", j,
          "bench", &j));
    }
    EXPECT_NO_THROW((void)index.self_subject_access_review(bench, j));
    EXPECT_NO_THROW((void)index.subject_access_review(j));
    EXPECT_NO_THROW((void)index.local_subject_access_review(j, "bench"));
    EXPECT_NO_THROW((void)index.self_subject_rules_review(bench, j));
    token_authority authority{"k"};
    EXPECT_NO_THROW(
        (void)authority.token_request_claims(j, token_request_context{}));
    EXPECT_NO_THROW((void)token_review(
        authority, j, 0,
        [](auto, auto, auto) -> const json* { return nullptr; }));
    EXPECT_NO_THROW((void)token_request_response(j, "t", token_claims{}));
    EXPECT_NO_THROW((void)check_bound_objects(
        token_claims{"", "bench", "default", "u", "p"}, &j, &j, 0));
  }
  EXPECT_FALSE(
      index.allowed(attributes{bench, "get", "", "pods", "", "bench", "p"}));
}

TEST(k8s_sim_auth_rbac_rules, compact_strings_are_gos_quoted_lists) {
  EXPECT_EQ(
      compact_string(policy_rule{{"get", "list"}, {""}, {"pods"}, {}, {}}),
      R"({APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]})");
  EXPECT_EQ(compact_string(policy_rule{{"get"}, {}, {}, {}, {"/apis/*"}}),
            R"({NonResourceURLs:["/apis/*"], Verbs:["get"]})");
  EXPECT_EQ(compact_string(policy_rule{{}, {"a\"b"}, {"x"}, {"n\t"}, {}}),
            R"({APIGroups:["a\"b"], Resources:["x"], ResourceNames:["n\t"]})");
}

TEST(k8s_sim_auth_rbac_rules, rules_round_trip_through_json) {
  json in = {{"verbs", {"get"}},
             {"apiGroups", {""}},
             {"resources", {"pods"}},
             {"resourceNames", {"p"}}};
  auto r = rule_of(in);
  EXPECT_EQ(r, (policy_rule{{"get"}, {""}, {"pods"}, {"p"}, {}}));
  EXPECT_EQ(to_json(r), in);
  EXPECT_EQ(to_json(policy_rule{{"get"}, {}, {}, {}, {"/version"}}).dump(),
            R"({"verbs":["get"],"nonResourceURLs":["/version"]})");
}

TEST(k8s_sim_auth_rbac_rules, the_attributes_of_a_request) {
  request req;
  req.verb = verb::patch;
  req.ref = {
      "aiperf.nvidia.com", "v1alpha1", "aiperfjobs", "bench", "j1", "status"};
  auto user = admin_user();
  auto a = attributes_of(req, user);
  EXPECT_EQ(a.verb, "patch");
  EXPECT_EQ(a.group, "aiperf.nvidia.com");
  EXPECT_EQ(a.resource, "aiperfjobs");
  EXPECT_EQ(a.subresource, "status");
  EXPECT_EQ(a.namespace_name, "bench");
  EXPECT_EQ(a.name, "j1");
  EXPECT_TRUE(a.resource_request);
  EXPECT_EQ(a.user, user);
  req.verb = verb::remove_collection;
  EXPECT_EQ(attributes_of(req, user).verb, "deletecollection");
}

TEST(k8s_sim_auth_rbac_rules, forbidden_texts_escape_what_could_read_as_html) {
  attributes a;
  a.user.username = "<script>&";
  a.verb = "get";
  a.resource_request = false;
  a.path = "/x";
  EXPECT_EQ(forbidden_message(a),
            "forbidden: User \"&lt;script&gt;&amp;\" cannot get path \"/x\"");
}

TEST(k8s_sim_auth_rbac_rules, the_bootstrap_policy_objects) {
  auto roles = bootstrap_cluster_roles();
  auto bindings = bootstrap_cluster_role_bindings();
  std::vector<std::string> names;
  for (const auto& r : roles)
    names.push_back(r["metadata"]["name"]);
  EXPECT_EQ(names,
            (std::vector<std::string>{"cluster-admin", "system:auth-delegator",
                                      "system:basic-user", "system:discovery",
                                      "system:public-info-viewer"}));
  ASSERT_EQ(bindings.size(), 4u);
  EXPECT_EQ(bindings[0]["subjects"][0]["name"], "system:masters");
  EXPECT_EQ(bindings[3]["subjects"][1]["name"], "system:unauthenticated");
  EXPECT_EQ(roles[0]["metadata"]["labels"]["kubernetes.io/bootstrapping"],
            "rbac-defaults");
  EXPECT_TRUE(rbac_index::is_rbac_kind("ClusterRoleBinding"));
  EXPECT_FALSE(rbac_index::is_rbac_kind("ConfigMap"));
}

} // namespace
} // namespace aiperf::k8s::sim::auth
