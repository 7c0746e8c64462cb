// The per-run Role as the simulated API server enforces it, for a pod's
// own service-account token: every verb outside AIPerf's rules is
// Forbidden, and patching another run's AIPerfJob in the same namespace,
// which the rules allow, fails on the `test /metadata/uid` fence every
// pod write carries (the value is the pod's AIPERF_JOB_UID).
#include "k8s/manifests/manifests.hpp"

#include "k8s/errors/errors.hpp"
#include "k8s/sim/auth/rbac.hpp"
#include "k8s/sim/auth/tokens.hpp"
#include "k8s/sim/store/patch.hpp"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

using namespace aiperf;
using namespace aiperf::k8s::manifests;
using aiperf::k8s::json;
namespace auth = aiperf::k8s::sim::auth;

namespace {

constexpr std::int64_t now = 1796184000;

deployment run_of(std::string name, std::string uid) {
  deployment d;
  d.name = std::move(name);
  d.ns = "bench";
  d.job_uid = std::move(uid);
  return d;
}

class manifests_sim_rbac : public ::testing::Test {
protected:
  void SetUp() override {
    for (const auto& r : auth::bootstrap_cluster_roles())
      index.upsert("ClusterRole", r);
    for (const auto& b : auth::bootstrap_cluster_role_bindings())
      index.upsert("ClusterRoleBinding", b);
    auto d = run_of("demo", "uid-demo");
    auto r = role(d);
    auto rb = role_binding(d);
    ASSERT_TRUE(r && rb);
    index.upsert("Role", *r);
    index.upsert("RoleBinding", *rb);

    // The token the kubelet projects into a worker pod of the run.
    auth::token_authority authority{"manifests-test-key"};
    auth::token_claims claims;
    claims.namespace_name = "bench";
    claims.service_account = "default";
    claims.service_account_uid = "sa-uid";
    claims.pod_name = "aiperf-demo-workers-0-0-abcde";
    claims.pod_uid = "pod-uid";
    claims.issued_at = now;
    claims.expires_at = now + 3600;
    auto verified = authority.verify(authority.issue(claims), now + 10);
    ASSERT_TRUE(verified) << error_message(verified.error());
    pod = auth::user_of(*verified);
  }

  auth::attributes ask(std::string verb, std::string group, std::string resource,
                       std::string sub = {}, std::string ns = "bench",
                       std::string name = {}) const {
    auth::attributes a;
    a.user = pod;
    a.verb = std::move(verb);
    a.group = std::move(group);
    a.resource = std::move(resource);
    a.subresource = std::move(sub);
    a.namespace_name = std::move(ns);
    a.name = std::move(name);
    return a;
  }

  auth::rbac_index index;
  k8s::user_info pod;
};

} // namespace

TEST_F(manifests_sim_rbac, the_pod_may_do_exactly_what_the_rules_grant) {
  std::set<std::tuple<std::string, std::string, std::string>> granted;
  for (const auto& r : role_rules())
    for (const auto& g : r["apiGroups"])
      for (const auto& res : r["resources"])
        for (const auto& v : r["verbs"])
          granted.emplace(g, res, v);
  struct target {
    std::string group, resource, sub;
  };
  const std::vector<target> targets{
      {"aiperf.nvidia.com", "aiperfjobs", ""},  {"aiperf.nvidia.com", "aiperfjobs", "status"},
      {"aiperf.nvidia.com", "aiperfsweeps", ""}, {"", "configmaps", ""},
      {"", "pods", ""},                          {"", "pods", "log"},
      {"", "pods", "exec"},                      {"", "pods", "status"},
      {"", "services", ""},                      {"", "endpoints", ""},
      {"", "events", ""},                        {"", "secrets", ""},
      {"", "serviceaccounts", ""},               {"", "serviceaccounts", "token"},
      {"", "persistentvolumeclaims", ""},        {"batch", "jobs", ""},
      {"batch", "jobs", "status"},               {"jobset.x-k8s.io", "jobsets", ""},
      {"jobset.x-k8s.io", "jobsets", "status"},  {"apps", "deployments", ""},
      {"discovery.k8s.io", "endpointslices", ""}, {"rbac.authorization.k8s.io", "roles", ""},
      {"rbac.authorization.k8s.io", "rolebindings", ""},
      {"coordination.k8s.io", "leases", ""}};
  std::size_t allowed = 0;
  for (const auto& t : targets)
    for (auto verb : {"get", "list", "watch", "create", "update", "patch", "delete",
                      "deletecollection"}) {
      auto resource = t.sub.empty() ? t.resource : t.resource + "/" + t.sub;
      bool want = granted.count({t.group, resource, verb}) > 0;
      EXPECT_EQ(index.allowed(ask(verb, t.group, t.resource, t.sub)), want)
          << verb << " " << t.group << "/" << resource;
      allowed += want;
      // Nothing at all in another namespace.
      EXPECT_FALSE(index.allowed(ask(verb, t.group, t.resource, t.sub, "other")))
          << verb << " " << resource << " in namespace other";
    }
  EXPECT_EQ(allowed, granted.size()) << "every granted triple is among the targets";
}

TEST_F(manifests_sim_rbac, writes_outside_the_rules_are_forbidden) {
  auto get_secret = ask("get", "", "secrets", "", "bench", "llm-api-key");
  ASSERT_FALSE(index.allowed(get_secret));
  auto st = auth::forbidden_status(get_secret, index.authorize(get_secret).reason);
  EXPECT_EQ(st.code, 403);
  EXPECT_EQ(st.message,
            "secrets \"llm-api-key\" is forbidden: User "
            "\"system:serviceaccount:bench:default\" cannot get resource \"secrets\" in API "
            "group \"\" in the namespace \"bench\"");
  EXPECT_FALSE(index.allowed(ask("patch", "", "pods", "", "bench", "aiperf-demo-workers-0-0")));
  EXPECT_FALSE(index.allowed(ask("create", "jobset.x-k8s.io", "jobsets")));
  EXPECT_FALSE(index.allowed(ask("delete", "jobset.x-k8s.io", "jobsets", "", "bench",
                                 "aiperf-demo")));
  EXPECT_FALSE(index.allowed(ask("create", "", "configmaps")));
  EXPECT_FALSE(index.allowed(ask("update", "", "configmaps", "", "bench", "aiperf-demo-config")));
  EXPECT_FALSE(index.allowed(ask("delete", "", "pods", "", "bench", "aiperf-demo-workers-0-0")));
  EXPECT_FALSE(index.allowed(ask("create", "", "events")));
  EXPECT_FALSE(index.allowed(ask("update", "aiperf.nvidia.com", "aiperfjobs", "status", "bench",
                                 "demo")));
}

TEST_F(manifests_sim_rbac, another_runs_aiperfjob_is_fenced_by_its_uid) {
  // The uid the pod's writes are fenced with is the one the JobSet gives it.
  config::profile_config run;
  run.model_names = {"m"};
  auto js = jobset(run_of("demo", "uid-demo"), run,
                   [](std::string_view) -> std::optional<std::string> { return std::nullopt; });
  ASSERT_TRUE(js);
  std::string fence_uid;
  for (const auto& e : (*js)["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
                            ["containers"][0]["env"])
    if (e["name"] == "AIPERF_JOB_UID")
      fence_uid = e["value"];
  ASSERT_EQ(fence_uid, "uid-demo");

  auto job = [](std::string name, std::string uid) {
    return json{{"apiVersion", "aiperf.nvidia.com/v1alpha1"},
                {"kind", "AIPerfJob"},
                {"metadata", {{"name", name}, {"namespace", "bench"}, {"uid", uid}}},
                {"spec", json::object()}};
  };
  auto own = job("demo", "uid-demo");
  auto other = job("other", "uid-other");
  json patch = json::array(
      {{{"op", "test"}, {"path", "/metadata/uid"}, {"value", fence_uid}},
       {{"op", "add"},
        {"path", "/metadata/annotations"},
        {"value", {{"aiperf.nvidia.com/progress-phase", "profiling"}}}}});

  // RBAC alone lets the pod patch any AIPerfJob of its namespace ...
  EXPECT_TRUE(index.allowed(ask("patch", "aiperf.nvidia.com", "aiperfjobs", "", "bench", "other")));
  // ... the fence does not: the whole patch is refused with the generic 422.
  auto refused = k8s::sim::apply_json_patch(other, patch.dump());
  ASSERT_FALSE(refused);
  const auto* st = k8s::status_of(refused.error());
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->code, 422);
  auto applied = k8s::sim::apply_json_patch(own, patch.dump());
  ASSERT_TRUE(applied) << error_message(applied.error());
  EXPECT_EQ((*applied)["metadata"]["annotations"]["aiperf.nvidia.com/progress-phase"],
            "profiling");
}
