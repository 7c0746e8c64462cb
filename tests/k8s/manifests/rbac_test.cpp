// The per-run Role is AIPerf's `RBACSpec._RULES` exactly (pinned here as
// a table, so a change to the builder has to change this file too), and no
// Role under k8s/deploy/ that benchmark pods run with grants more.
#include "k8s/manifests/manifests.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <set>
#include <tuple>

using namespace aiperf;
using namespace aiperf::k8s::manifests;
using aiperf::k8s::json;

namespace {

using triple = std::tuple<std::string, std::string, std::string>; // group, resource, verb

std::set<triple> expand(const json& rules) {
  std::set<triple> out;
  for (const auto& r : rules)
    for (const auto& g : r["apiGroups"])
      for (const auto& res : r["resources"])
        for (const auto& v : r["verbs"])
          out.emplace(g, res, v);
  return out;
}

std::vector<std::string> strings(const YAML::Node& n) {
  std::vector<std::string> out;
  if (n && n.IsSequence())
    for (const auto& x : n)
      out.push_back(x.as<std::string>());
  return out;
}

struct deploy_rbac {
  // "Role/<ns>/<name>" or "ClusterRole/<name>" → rules as triples.
  std::map<std::string, std::set<triple>> roles;
  // Role key → service accounts ("<ns>/<name>") bound to it.
  std::map<std::string, std::set<std::string>> subjects;
  std::size_t files = 0;
};

deploy_rbac read_deploy() {
  deploy_rbac out;
  namespace fs = std::filesystem;
  for (const auto& entry : fs::recursive_directory_iterator(AIPERF_SOURCE_DIR "/k8s/deploy")) {
    auto ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".yaml" && ext != ".yml"))
      continue;
    ++out.files;
    for (const auto& doc : YAML::LoadAllFromFile(entry.path().string())) {
      if (!doc.IsMap() || !doc["kind"])
        continue;
      auto kind = doc["kind"].as<std::string>();
      if (kind != "Role" && kind != "ClusterRole" && kind != "RoleBinding"
          && kind != "ClusterRoleBinding")
        continue;
      auto meta = doc["metadata"];
      auto name = meta["name"].as<std::string>("");
      auto ns = meta["namespace"] ? meta["namespace"].as<std::string>("") : std::string{};
      if (kind == "Role" || kind == "ClusterRole") {
        auto key = kind == "Role" ? "Role/" + ns + "/" + name : "ClusterRole/" + name;
        auto& set = out.roles[key];
        for (const auto& r : doc["rules"])
          for (const auto& g : strings(r["apiGroups"]))
            for (const auto& res : strings(r["resources"]))
              for (const auto& v : strings(r["verbs"]))
                set.emplace(g, res, v);
      } else if (kind == "RoleBinding" || kind == "ClusterRoleBinding") {
        auto ref_kind = doc["roleRef"]["kind"].as<std::string>();
        auto ref = doc["roleRef"]["name"].as<std::string>();
        auto key = ref_kind == "Role" ? "Role/" + ns + "/" + ref : "ClusterRole/" + ref;
        for (const auto& s : doc["subjects"])
          if (s["kind"].as<std::string>("") == "ServiceAccount")
            out.subjects[key].insert(s["namespace"].as<std::string>(ns) + "/"
                                     + s["name"].as<std::string>());
      }
    }
  }
  return out;
}

// Benchmark pods run as their namespace's `default` ServiceAccount unless
// --service-account names another; a Role meant for them is bound to
// `default` or says "benchmark" in its name (AIPerf's chart names it
// aiperf-operator-benchmark).
bool binds_benchmark_pods(const std::string& key, const deploy_rbac& rbac) {
  if (key.find("benchmark") != std::string::npos)
    return true;
  auto it = rbac.subjects.find(key);
  if (it == rbac.subjects.end())
    return false;
  for (const auto& sa : it->second)
    if (sa.size() >= 8 && sa.compare(sa.size() - 8, 8, "/default") == 0)
      return true;
  return false;
}

} // namespace

TEST(manifests_rbac, role_rules_are_aiperfs_rules_exactly) {
  // AIPerf RBACSpec._RULES (ai-dynamo/aiperf src/aiperf/kubernetes), in
  // its order.
  const json pinned = json::parse(R"([
    {"apiGroups": ["aiperf.nvidia.com"], "resources": ["aiperfjobs", "aiperfjobs/status"],
     "verbs": ["get", "list", "watch", "patch"]},
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["services", "endpoints"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"],
     "verbs": ["get", "list", "watch", "patch"]},
    {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets/status"],
     "verbs": ["get", "list", "watch"]}
  ])");
  EXPECT_EQ(role_rules(), pinned);
  deployment d;
  d.name = "demo";
  d.ns = "bench";
  auto r = role(d);
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["apiVersion"], "rbac.authorization.k8s.io/v1");
  EXPECT_EQ((*r)["rules"], pinned);
}

TEST(manifests_rbac, least_privilege) {
  auto granted = expand(role_rules());
  for (const auto& [g, res, v] : granted) {
    EXPECT_TRUE(v == "get" || v == "list" || v == "watch" || v == "patch") << res << " " << v;
    if (v == "patch") {
      EXPECT_TRUE(res == "aiperfjobs" || res == "aiperfjobs/status" || res == "jobsets") << res;
    }
    EXPECT_NE(res, "secrets");
    EXPECT_NE(res, "*");
  }
}

TEST(manifests_rbac, deploy_roles_for_benchmark_pods_are_a_subset) {
  auto rbac = read_deploy();
  // The scan reads something: the operator's ClusterRole is there.
  ASSERT_GT(rbac.files, 0u);
  ASSERT_TRUE(rbac.roles.count("ClusterRole/aiperf-operator"))
      << "k8s/deploy/ no longer has the operator ClusterRole; update this test";
  auto granted = expand(role_rules());
  std::size_t benchmark_roles = 0;
  for (const auto& [key, rules] : rbac.roles) {
    if (!binds_benchmark_pods(key, rbac))
      continue;
    ++benchmark_roles;
    for (const auto& t : rules)
      EXPECT_TRUE(granted.count(t)) << key << " grants " << std::get<2>(t) << " on "
                                    << std::get<0>(t) << "/" << std::get<1>(t)
                                    << ", which the per-run Role does not";
  }
  // No Role in k8s/deploy/ binds benchmark pods yet (they get the per-run
  // Role only); the operator's ClusterRole is bound to its own account.
  EXPECT_EQ(benchmark_roles, 0u) << "a Role for benchmark pods was added: drop this line; "
                                     "the subset check above covers it";
  EXPECT_FALSE(binds_benchmark_pods("ClusterRole/aiperf-operator", rbac));
}
