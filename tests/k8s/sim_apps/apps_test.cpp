// The Deployment and ReplicaSet controllers and the volume provisioner
// against the store actor, on the deterministic test coordinator; the test
// plays the kubelet (pod status Running and Ready).
#include "k8s/sim/apps/apps.hpp"
#include "tests/k8s/sim_apps/fixture.hpp"

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace aiperf::k8s::sim {
namespace {

using testing::store_fixture;

json deployment(const std::string& name, int replicas,
                const std::string& image = "aiperf-node:dev",
                const std::string& strategy = "RollingUpdate") {
  return json{
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata", {{"name", name}, {"namespace", "default"}}},
      {"spec",
       {{"replicas", replicas},
        {"strategy", {{"type", strategy}}},
        {"selector", {{"matchLabels", {{"app", name}}}}},
        {"template",
         {{"metadata", {{"labels", {{"app", name}}}}},
          {"spec",
           {{"containers",
             json::array({json{{"name", "main"}, {"image", image}}})}}}}}}}};
}

json replica_set(const std::string& name, int replicas,
                 int min_ready_seconds = 0) {
  json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata", {{"name", name}, {"namespace", "default"}}},
             {"spec",
              {{"replicas", replicas},
               {"selector", {{"matchLabels", {{"app", name}}}}},
               {"template",
                {{"metadata", {{"labels", {{"app", name}}}}},
                 {"spec",
                  {{"containers",
                    json::array({json{{"name", "main"},
                                      {"image", "busybox:1.36"}}})}}}}}}}};
  if (min_ready_seconds > 0)
    rs["spec"]["minReadySeconds"] = min_ready_seconds;
  return rs;
}

const json* condition(const json& obj, const std::string& type) {
  if (!obj.contains("status") || !obj["status"].contains("conditions"))
    return nullptr;
  for (const auto& c : obj["status"]["conditions"])
    if (c.value("type", "") == type)
      return &c;
  return nullptr;
}

struct apps_test : store_fixture {
  void start_controllers() {
    deployments = spawn_deployment_controller(sys, api());
    replicasets = spawn_replicaset_controller(sys, api());
    drain();
  }

  // Plays the kubelet until nothing changes: every pod becomes Ready.
  void settle() {
    for (int i = 0; i < 20; ++i) {
      bool changed = false;
      for (const auto& pod : items(pods()))
        if (pod["status"].value("phase", "") != "Running") {
          make_ready(pod);
          changed = true;
        }
      drain();
      if (!changed)
        return;
    }
  }

  apps_controller_actor deployments;
  apps_controller_actor replicasets;
};

TEST_F(apps_test, a_deployment_gets_a_replica_set_and_its_pods) {
  start_controllers();
  create(apps("deployments"), deployment("web", 2));
  auto sets = items(apps("replicasets"));
  ASSERT_EQ(sets.size(), 1u);
  const auto& rs = sets[0];
  auto hash = rs["metadata"]["labels"]["pod-template-hash"].get<std::string>();
  auto stored = get(apps("deployments", "default", "web"));
  EXPECT_EQ(hash, pod_template_hash(stored["spec"]["template"]));
  EXPECT_EQ(rs["metadata"]["name"], "web-" + hash);
  EXPECT_EQ(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
            "1");
  EXPECT_EQ(rs["spec"]["selector"]["matchLabels"]["pod-template-hash"], hash);
  EXPECT_EQ(rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"],
            hash);
  EXPECT_EQ(rs["metadata"]["ownerReferences"][0]["kind"], "Deployment");
  EXPECT_EQ(rs["metadata"]["ownerReferences"][0]["controller"], true);

  auto ps = items(pods());
  ASSERT_EQ(ps.size(), 2u);
  for (const auto& pod : ps) {
    auto name = pod["metadata"]["name"].get<std::string>();
    EXPECT_EQ(name.rfind("web-" + hash + "-", 0), 0u) << name;
    EXPECT_EQ(name.size(), ("web-" + hash + "-").size() + 5) << name;
    EXPECT_EQ(pod["metadata"]["labels"]["pod-template-hash"], hash);
    EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet");
    EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"],
              rs["metadata"]["uid"]);
  }
  auto d = get(apps("deployments", "default", "web"));
  EXPECT_EQ(d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
            "1");
  const auto* available = condition(d, "Available");
  ASSERT_NE(available, nullptr);
  EXPECT_EQ((*available)["status"], "False");
  EXPECT_EQ((*available)["reason"], "MinimumReplicasUnavailable");

  settle();
  d = get(apps("deployments", "default", "web"));
  // Writing the revision annotation bumps a Deployment's generation.
  EXPECT_EQ(d["status"]["observedGeneration"], d["metadata"]["generation"]);
  EXPECT_EQ(d["status"]["replicas"], 2);
  EXPECT_EQ(d["status"]["updatedReplicas"], 2);
  EXPECT_EQ(d["status"]["readyReplicas"], 2);
  EXPECT_EQ(d["status"]["availableReplicas"], 2);
  EXPECT_FALSE(d["status"].contains("unavailableReplicas"));
  available = condition(d, "Available");
  ASSERT_NE(available, nullptr);
  EXPECT_EQ((*available)["status"], "True");
  EXPECT_EQ((*available)["reason"], "MinimumReplicasAvailable");
  EXPECT_EQ((*available)["message"], "Deployment has minimum availability.");
  const auto* progressing = condition(d, "Progressing");
  ASSERT_NE(progressing, nullptr);
  EXPECT_EQ((*progressing)["status"], "True");
  EXPECT_EQ((*progressing)["reason"], "NewReplicaSetAvailable");
  EXPECT_EQ((*progressing)["message"],
            "ReplicaSet \"web-" + hash + "\" has successfully progressed.");
  auto r = get(apps("replicasets", "default", "web-" + hash));
  EXPECT_EQ(r["status"]["replicas"], 2);
  EXPECT_EQ(r["status"]["readyReplicas"], 2);
  EXPECT_EQ(r["status"]["availableReplicas"], 2);
  EXPECT_EQ(r["status"]["fullyLabeledReplicas"], 2);
  EXPECT_EQ(r["status"]["observedGeneration"], 1);

  bool scaled = false;
  bool created = false;
  for (const auto& ev : items(core("events", "default"))) {
    if (ev["reason"] == "ScalingReplicaSet"
        && ev["message"]
               == "Scaled up replica set web-" + hash + " from 0 to 2")
      scaled = true;
    if (ev["reason"] == "SuccessfulCreate"
        && ev["involvedObject"]["kind"] == "ReplicaSet")
      created = true;
  }
  EXPECT_TRUE(scaled);
  EXPECT_TRUE(created);
}

TEST_F(apps_test, scaling_changes_the_pod_count) {
  start_controllers();
  create(apps("deployments"), deployment("web", 2));
  settle();
  merge_patch(apps("deployments", "default", "web"),
              json{{"spec", {{"replicas", 4}}}});
  settle();
  EXPECT_EQ(items(pods()).size(), 4u);
  auto d = get(apps("deployments", "default", "web"));
  EXPECT_EQ(d["status"]["observedGeneration"], d["metadata"]["generation"]);
  EXPECT_EQ(d["status"]["availableReplicas"], 4);
  merge_patch(apps("deployments", "default", "web"),
              json{{"spec", {{"replicas", 1}}}});
  settle();
  EXPECT_EQ(items(pods()).size(), 1u);
  d = get(apps("deployments", "default", "web"));
  EXPECT_EQ(d["status"]["replicas"], 1);
  EXPECT_EQ(items(apps("replicasets")).size(), 1u);
}

TEST_F(apps_test, a_template_change_rolls_over_within_max_surge) {
  start_controllers();
  create(apps("deployments"), deployment("web", 4));
  settle();
  auto first = items(apps("replicasets"));
  ASSERT_EQ(first.size(), 1u);
  auto old_name = first[0]["metadata"]["name"].get<std::string>();
  merge_patch(
      apps("deployments", "default", "web"),
      json{{"spec",
            {{"template",
              {{"spec",
                {{"containers",
                  json::array({json{{"name", "main"},
                                    {"image", "aiperf-node:v2"}}})}}}}}}}});
  std::size_t most = 0;
  for (int i = 0; i < 30; ++i) {
    // maxSurge 25% of 4 = 1: never more than 5 pods.
    most = std::max(most, items(pods()).size());
    settle();
  }
  EXPECT_LE(most, 5u);
  auto sets = items(apps("replicasets"));
  ASSERT_EQ(sets.size(), 2u);
  for (const auto& rs : sets) {
    if (rs["metadata"]["name"] == old_name) {
      EXPECT_EQ(rs["spec"]["replicas"], 0);
    } else {
      EXPECT_EQ(rs["spec"]["replicas"], 4);
      EXPECT_EQ(
          rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
          "2");
    }
  }
  auto ps = items(pods());
  ASSERT_EQ(ps.size(), 4u);
  for (const auto& pod : ps)
    EXPECT_EQ(pod["spec"]["containers"][0]["image"], "aiperf-node:v2");
  auto d = get(apps("deployments", "default", "web"));
  EXPECT_EQ(d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
            "2");
  EXPECT_EQ(d["status"]["updatedReplicas"], 4);
  EXPECT_EQ(d["status"]["replicas"], 4);
  EXPECT_EQ(d["status"]["observedGeneration"], d["metadata"]["generation"]);
  EXPECT_EQ((*condition(d, "Progressing"))["reason"], "NewReplicaSetAvailable");
}

TEST_F(apps_test, recreate_removes_the_old_pods_before_creating_new_ones) {
  start_controllers();
  create(apps("deployments"),
         deployment("web", 2, "aiperf-node:dev", "Recreate"));
  settle();
  merge_patch(
      apps("deployments", "default", "web"),
      json{{"spec",
            {{"template",
              {{"spec",
                {{"containers",
                  json::array({json{{"name", "main"},
                                    {"image", "aiperf-node:v2"}}})}}}}}}}});
  settle();
  auto ps = items(pods());
  ASSERT_EQ(ps.size(), 2u);
  for (const auto& pod : ps)
    EXPECT_EQ(pod["spec"]["containers"][0]["image"], "aiperf-node:v2");
  bool down_before_up = false;
  std::string first_scale;
  for (const auto& ev : items(core("events", "default")))
    if (ev["reason"] == "ScalingReplicaSet") {
      auto m = ev["message"].get<std::string>();
      if (m.find(" from 2 to 0") != std::string::npos)
        down_before_up = true;
      if (m.find(" from 0 to 2") != std::string::npos && first_scale.empty()
          && down_before_up)
        first_scale = m;
    }
  EXPECT_TRUE(down_before_up);
  EXPECT_FALSE(first_scale.empty());
  auto d = get(apps("deployments", "default", "web"));
  EXPECT_EQ((*condition(d, "Available"))["status"], "True");
}

TEST_F(apps_test, a_replica_set_replaces_a_deleted_pod) {
  start_controllers();
  create(apps("replicasets"), replica_set("cache", 2));
  auto before = names(items(pods()));
  ASSERT_EQ(before.size(), 2u);
  remove(pods("default", before[0]));
  auto after = names(items(pods()));
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(std::count(after.begin(), after.end(), before[0]), 0);
  EXPECT_EQ(std::count(after.begin(), after.end(), before[1]), 1);
  int creates = 0;
  for (const auto& ev : items(core("events", "default")))
    if (ev["reason"] == "SuccessfulCreate"
        && ev["message"].get<std::string>().rfind("Created pod: cache-", 0)
               == 0)
      ++creates;
  EXPECT_EQ(creates, 3);
}

TEST_F(apps_test, a_lasting_refusal_is_retried_with_back_off) {
  start_controllers();
  // Admission refuses every pod of an account that does not exist.
  auto rs = replica_set("cache", 1);
  rs["spec"]["template"]["spec"]["serviceAccountName"] = "robot";
  create(apps("replicasets"), rs);
  auto failures = [&] {
    int n = 0;
    for (const auto& ev : items(core("events", "default")))
      if (ev["reason"] == "FailedCreate")
        ++n;
    return n;
  };
  // 5 ms doubling: attempts at 0, 5, 15, 35, 75, 155, 315 and 635 ms.
  for (int ms = 0; ms < 1000; ++ms)
    advance_time(std::chrono::milliseconds{1});
  EXPECT_EQ(failures(), 8);
  EXPECT_TRUE(items(pods()).empty());
  // Once admission relents, the next retry (1275 ms) creates the pod.
  create(core("serviceaccounts", "default"),
         json{{"apiVersion", "v1"},
              {"kind", "ServiceAccount"},
              {"metadata", {{"name", "robot"}, {"namespace", "default"}}}});
  for (int ms = 0; ms < 300; ++ms)
    advance_time(std::chrono::milliseconds{1});
  EXPECT_EQ(items(pods()).size(), 1u);
  EXPECT_EQ(failures(), 8);
}

TEST_F(apps_test, available_waits_for_min_ready_seconds) {
  start_controllers();
  create(apps("replicasets"), replica_set("slow", 2, 10));
  for (const auto& pod : items(pods()))
    make_ready(pod);
  drain();
  auto rs = get(apps("replicasets", "default", "slow"));
  EXPECT_EQ(rs["status"]["readyReplicas"], 2);
  EXPECT_EQ(rs["status"]["availableReplicas"], 0);
  advance_time(std::chrono::seconds{10});
  rs = get(apps("replicasets", "default", "slow"));
  EXPECT_EQ(rs["status"]["availableReplicas"], 2);
}

struct volume_test : store_fixture {
  volume_test() {
    char tmpl[] = "/tmp/k8s-sim-pv-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~volume_test() override {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  json claim(const std::string& name) {
    return json{{"apiVersion", "v1"},
                {"kind", "PersistentVolumeClaim"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"spec",
                 {{"accessModes", json::array({"ReadWriteOnce"})},
                  {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  }

  std::string dir;
};

TEST_F(volume_test, a_claim_gets_a_bound_volume_that_goes_with_it) {
  create({"storage.k8s.io", "v1", "storageclasses", "", "", ""},
         default_storage_class());
  auto provisioner = spawn_volume_provisioner(sys, api(), dir + "/pv");
  drain();
  auto pvc = create(core("persistentvolumeclaims", "default"), claim("data"));
  auto uid = pvc["metadata"]["uid"].get<std::string>();
  drain();
  auto pv = get(core("persistentvolumes", "", "pvc-" + uid));
  ASSERT_TRUE(pv.is_object());
  EXPECT_EQ(pv["status"]["phase"], "Bound");
  EXPECT_EQ(pv["spec"]["claimRef"]["uid"], uid);
  EXPECT_EQ(pv["spec"]["claimRef"]["name"], "data");
  EXPECT_EQ(pv["spec"]["persistentVolumeReclaimPolicy"], "Delete");
  EXPECT_EQ(pv["spec"]["storageClassName"], "standard");
  EXPECT_EQ(pv["spec"]["hostPath"]["path"], dir + "/pv/" + uid);
  EXPECT_EQ(pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"],
            provisioner_name);
  pvc = get(core("persistentvolumeclaims", "default", "data"));
  EXPECT_EQ(pvc["spec"]["volumeName"], "pvc-" + uid);
  EXPECT_EQ(pvc["status"]["phase"], "Bound");
  EXPECT_EQ(pvc["status"]["capacity"]["storage"], "1Gi");
  EXPECT_EQ(pvc["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"],
            "yes");
  EXPECT_EQ(
      pvc["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"],
      "yes");
  EXPECT_EQ(pvc["metadata"]["annotations"]
               ["volume.kubernetes.io/storage-provisioner"],
            provisioner_name);
  auto folder = dir + "/pv/" + uid;
  struct stat sb {};
  ASSERT_EQ(::stat(folder.c_str(), &sb), 0);
  EXPECT_EQ(sb.st_mode & 0777, 0777u);
  std::ofstream{folder + "/kept"} << "data";

  remove(core("persistentvolumeclaims", "default", "data"));
  EXPECT_FALSE(exists(core("persistentvolumes", "", "pvc-" + uid)));
  EXPECT_FALSE(std::filesystem::exists(folder));
}

TEST_F(volume_test, a_claim_of_another_class_is_left_alone) {
  create({"storage.k8s.io", "v1", "storageclasses", "", "", ""},
         default_storage_class());
  auto provisioner = spawn_volume_provisioner(sys, api(), dir + "/pv");
  drain();
  auto c = claim("other");
  c["spec"]["storageClassName"] = "fast";
  create(core("persistentvolumeclaims", "default"), c);
  drain();
  EXPECT_TRUE(items(core("persistentvolumes")).empty());
  auto pvc = get(core("persistentvolumeclaims", "default", "other"));
  EXPECT_FALSE(pvc["spec"].contains("volumeName"));
}

TEST(storage_class, the_default_class_is_marked_default) {
  auto sc = default_storage_class();
  EXPECT_EQ(sc["metadata"]["name"], "standard");
  EXPECT_EQ(sc["metadata"]["annotations"]
              ["storageclass.kubernetes.io/is-default-class"],
            "true");
  EXPECT_EQ(sc["provisioner"], provisioner_name);
  EXPECT_EQ(sc["reclaimPolicy"], "Delete");
  EXPECT_EQ(sc["volumeBindingMode"], "Immediate");
}

TEST(pod_template_hash, is_stable_and_changes_with_the_template) {
  json a = {{"metadata", {{"labels", {{"app", "x"}}}}},
            {"spec", {{"containers", json::array({{{"name", "c"}}})}}}};
  json b = a;
  b["spec"]["containers"][0]["image"] = "y";
  auto h = pod_template_hash(a);
  EXPECT_EQ(h, pod_template_hash(a));
  EXPECT_NE(h, pod_template_hash(b));
  EXPECT_NE(h, pod_template_hash(a, 1));
  EXPECT_FALSE(h.empty());
  EXPECT_EQ(h.find_first_not_of("bcdfghjklmnpqrstvwxz2456789"),
            std::string::npos);
}

} // namespace
} // namespace aiperf::k8s::sim
