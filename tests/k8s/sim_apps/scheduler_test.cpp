// The scheduler against the store actor on the deterministic test
// coordinator: bindings, each filter's refusal with kube-scheduler's exact
// message, ReadWriteOnce pinning, the Unschedulable fault; and the Nodes
// file.
#include "k8s/sim/scheduler/scheduler.hpp"
#include "tests/k8s/sim_apps/fixture.hpp"

#include <cstdio>
#include <fstream>
#include <unistd.h>

namespace aiperf::k8s::sim {
namespace {

using testing::store_fixture;

json node(const std::string& name, json labels = json::object(),
          json extra_resources = json::object(), json taints = nullptr) {
  json resources = {{"cpu", "4"}, {"memory", "16Gi"}, {"pods", "110"}};
  for (const auto& [k, v] : extra_resources.items())
    resources[k] = v;
  labels["kubernetes.io/hostname"] = name;
  json n = {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata", {{"name", name}, {"labels", labels}}},
            {"spec", json::object()},
            {"status", {{"capacity", resources}, {"allocatable", resources}}}};
  if (!taints.is_null())
    n["spec"]["taints"] = taints;
  return n;
}

json pod(const std::string& name, json spec_extra = json::object(),
         json labels = json::object()) {
  json spec
      = {{"containers",
          json::array({json{{"name", "main"}, {"image", "busybox:1.36"}}})}};
  for (const auto& [k, v] : spec_extra.items())
    spec[k] = v;
  return json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name}, {"namespace", "default"}, {"labels", labels}}},
              {"spec", spec}};
}

json requesting(json resources) {
  return json{
      {"containers",
       json::array({json{
           {"name", "main"},
           {"image", "busybox:1.36"},
           {"resources", {{"requests", resources}, {"limits", resources}}}}})}};
}

struct scheduler_test : store_fixture {
  void add_node(const json& n) {
    auto made = create(core("nodes"), n);
    // The status a kubelet would post.
    if (made.is_object()
        && !made.value("status", json::object()).contains("allocatable"))
      merge_patch(
          resource_ref{"", "v1", "nodes", "", n["metadata"]["name"], "status"},
          json{{"status", n["status"]}});
  }

  void start() {
    scheduler = spawn_scheduler(sys, api());
    drain();
  }

  json run(const json& p) {
    create(pods(), p);
    drain();
    return get(pods("default", p["metadata"]["name"]));
  }

  static std::string node_of(const json& p) {
    return p["spec"].value("nodeName", "");
  }

  static std::string unschedulable_message(const json& p) {
    for (const auto& c : p["status"].value("conditions", json::array()))
      if (c["type"] == "PodScheduled" && c["status"] == "False"
          && c["reason"] == "Unschedulable")
        return c["message"];
    return {};
  }

  bool has_event(const std::string& reason, const std::string& message) {
    for (const auto& ev : items(core("events", "default")))
      if (ev["reason"] == reason && ev["message"] == message)
        return true;
    return false;
  }

  void gpu_cluster() {
    add_node(node("gpu-0", {{"pool", "gpu"}}, {{"nvidia.com/gpu", "1"}}));
    add_node(node("cpu-0", {{"pool", "cpu"}}));
    add_node(node("cpu-1", {{"pool", "cpu"}}));
  }

  scheduler_actor scheduler;
};

TEST_F(scheduler_test, binds_a_pod_and_records_the_event) {
  for (const auto& n : default_nodes())
    add_node(n);
  start();
  auto p = run(pod("a"));
  EXPECT_EQ(node_of(p), "sim-node-0");
  bool scheduled = false;
  for (const auto& c : p["status"].value("conditions", json::array()))
    if (c["type"] == "PodScheduled")
      scheduled = c["status"] == "True";
  EXPECT_TRUE(scheduled);
  EXPECT_TRUE(
      has_event("Scheduled", "Successfully assigned default/a to sim-node-0"));
}

TEST_F(scheduler_test, gpu_shortage_and_selector_mismatch_read_as_upstream) {
  gpu_cluster();
  start();
  json spec = requesting({{"nvidia.com/gpu", "2"}});
  spec["nodeSelector"] = {{"pool", "gpu"}};
  auto p = run(pod("big", spec));
  EXPECT_EQ(node_of(p), "");
  const std::string expected
      = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) "
        "didn't match Pod's node affinity/selector. preemption: 0/3 nodes are "
        "available: 1 No preemption victims found for incoming pod, 2 "
        "Preemption is not helpful for scheduling.";
  EXPECT_EQ(unschedulable_message(p), expected);
  EXPECT_TRUE(has_event("FailedScheduling", expected));

  json fits = requesting({{"nvidia.com/gpu", "1"}});
  fits["nodeSelector"] = {{"pool", "gpu"}};
  EXPECT_EQ(node_of(run(pod("small", fits))), "gpu-0");
  // The GPU is taken now.
  auto late = run(pod("late", requesting({{"nvidia.com/gpu", "1"}})));
  EXPECT_EQ(unschedulable_message(late),
            "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. "
            "preemption: 0/3 nodes are available: 3 No preemption victims "
            "found for incoming pod.");
}

TEST_F(scheduler_test, a_pending_pod_is_bound_once_a_node_fits) {
  gpu_cluster();
  start();
  auto p
      = run(pod("wait", requesting({{"nvidia.com/gpu", "1"}, {"cpu", "2"}})));
  auto first = run(pod("first", requesting({{"nvidia.com/gpu", "1"}})));
  // "wait" was created first and took the GPU.
  EXPECT_EQ(node_of(get(pods("default", "wait"))), "gpu-0");
  EXPECT_EQ(node_of(first), "");
  // It ends: a finished pod's requests no longer count.
  merge_patch(resource_ref{"", "v1", "pods", "default", "wait", "status"},
              json{{"status", {{"phase", "Succeeded"}}}});
  EXPECT_EQ(node_of(get(pods("default", "first"))), "gpu-0");
}

TEST_F(scheduler_test, cpu_memory_and_pod_count_are_counted) {
  add_node(node("small", json::object(), {{"pods", "2"}}));
  start();
  EXPECT_EQ(
      node_of(run(pod("a", requesting({{"cpu", "3"}, {"memory", "1Gi"}})))),
      "small");
  auto b = run(pod("b", requesting({{"cpu", "1500m"}, {"memory", "20Gi"}})));
  EXPECT_EQ(unschedulable_message(b),
            "0/1 nodes are available: 1 Insufficient cpu, 1 Insufficient "
            "memory. preemption: 0/1 nodes are available: 1 No preemption "
            "victims found for incoming pod.");
  EXPECT_EQ(node_of(run(pod("c"))), "small");
  auto d = run(pod("d"));
  EXPECT_EQ(unschedulable_message(d),
            "0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes "
            "are available: 1 No preemption victims found for incoming pod.");
}

TEST_F(scheduler_test, init_containers_count_by_the_max_rule) {
  add_node(node("n"));
  start();
  json spec = requesting({{"cpu", "1"}});
  spec["initContainers"]
      = json::array({json{{"name", "init"},
                          {"image", "busybox:1.36"},
                          {"resources", {{"requests", {{"cpu", "5"}}}}}}});
  auto p = run(pod("init", spec));
  EXPECT_EQ(unschedulable_message(p),
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 "
            "nodes are available: 1 No preemption victims found for incoming "
            "pod.");
}

TEST_F(scheduler_test, taints_refuse_pods_that_do_not_tolerate_them) {
  add_node(node("tainted", json::object(), json::object(),
                json::array({json{{"key", "dedicated"},
                                  {"value", "infer"},
                                  {"effect", "NoSchedule"}}})));
  add_node(node("soft", json::object(), json::object(),
                json::array({json{{"key", "spot"},
                                  {"value", "true"},
                                  {"effect", "PreferNoSchedule"}},
                             json{{"key", "gone"}, {"effect", "NoExecute"}}})));
  start();
  auto p = run(pod("plain"));
  EXPECT_EQ(unschedulable_message(p),
            "0/2 nodes are available: 1 node(s) had untolerated taint "
            "{dedicated: infer}, 1 node(s) had untolerated taint {gone: }. "
            "preemption: 0/2 nodes are available: 2 Preemption is not helpful "
            "for scheduling.");
  json spec = {{"tolerations", json::array({json{{"key", "dedicated"},
                                                 {"operator", "Equal"},
                                                 {"value", "infer"},
                                                 {"effect", "NoSchedule"}}})}};
  EXPECT_EQ(node_of(run(pod("tolerant", spec))), "tainted");
  json exists = {{"tolerations",
                  json::array({json{{"key", "gone"}, {"operator", "Exists"}}})},
                 {"nodeName", nullptr}};
  exists.erase("nodeName");
  exists["nodeSelector"] = {{"kubernetes.io/hostname", "soft"}};
  EXPECT_EQ(node_of(run(pod("exists", exists))), "soft");
}

TEST_F(scheduler_test, unschedulable_nodes_are_skipped) {
  auto n = node("cordoned");
  n["spec"]["unschedulable"] = true;
  add_node(n);
  start();
  EXPECT_EQ(unschedulable_message(run(pod("p"))),
            "0/1 nodes are available: 1 node(s) were unschedulable. "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful "
            "for scheduling.");
}

TEST_F(scheduler_test, required_node_affinity_is_honoured) {
  add_node(node("a", {{"zone", "z1"}, {"gen", "3"}}));
  add_node(node("b", {{"zone", "z2"}, {"gen", "5"}}));
  add_node(node("c", {{"zone", "z3"}}));
  start();
  auto affinity = [](json terms) {
    return json{{"affinity",
                 {{"nodeAffinity",
                   {{"requiredDuringSchedulingIgnoredDuringExecution",
                     {{"nodeSelectorTerms", terms}}}}}}}};
  };
  EXPECT_EQ(node_of(run(
                pod("in", affinity(json::array({json{
                              {"matchExpressions",
                               json::array({json{{"key", "zone"},
                                                 {"operator", "In"},
                                                 {"values", {"z2"}}}})}}}))))),
            "b");
  EXPECT_EQ(
      node_of(run(pod("gt", affinity(json::array({json{
                                {"matchExpressions",
                                 json::array({json{{"key", "gen"},
                                                   {"operator", "Gt"},
                                                   {"values", {"4"}}}})}}}))))),
      "b");
  EXPECT_EQ(
      node_of(run(pod(
          "dne", affinity(json::array({json{
                     {"matchExpressions",
                      json::array({json{{"key", "gen"},
                                        {"operator", "DoesNotExist"}}})}}}))))),
      "c");
  EXPECT_EQ(
      node_of(run(pod(
          "field",
          affinity(json::array({json{
              {"matchFields", json::array({json{{"key", "metadata.name"},
                                                {"operator", "In"},
                                                {"values", {"a"}}}})}}}))))),
      "a");
  auto none = run(pod(
      "none", affinity(json::array({json{
                  {"matchExpressions",
                   json::array({json{{"key", "zone"},
                                     {"operator", "NotIn"},
                                     {"values", {"z1", "z2", "z3"}}}})}}}))));
  EXPECT_EQ(unschedulable_message(none),
            "0/3 nodes are available: 3 node(s) didn't match Pod's node "
            "affinity/selector. preemption: 0/3 nodes are available: 3 "
            "Preemption is not helpful for scheduling.");
}

struct volume_scheduling_test : scheduler_test {
  // A claim bound to a volume, as the provisioner leaves them.
  void bound_claim(const std::string& name, const std::string& mode) {
    json pv = {{"apiVersion", "v1"},
               {"kind", "PersistentVolume"},
               {"metadata", {{"name", "pv-" + name}}},
               {"spec",
                {{"capacity", {{"storage", "1Gi"}}},
                 {"accessModes", json::array({mode})},
                 {"hostPath", {{"path", "/tmp/unused-" + name}}}}}};
    create(core("persistentvolumes"), pv);
    json pvc = {{"apiVersion", "v1"},
                {"kind", "PersistentVolumeClaim"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"spec",
                 {{"accessModes", json::array({mode})},
                  {"storageClassName", ""},
                  {"volumeName", "pv-" + name},
                  {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
    create(core("persistentvolumeclaims", "default"), pvc);
    merge_patch(resource_ref{"", "v1", "persistentvolumeclaims", "default",
                             name, "status"},
                json{{"status", {{"phase", "Bound"}}}});
  }

  static json using_claim(const std::string& claim) {
    json spec = requesting({{"cpu", "1"}});
    spec["volumes"] = json::array({json{
        {"name", "data"}, {"persistentVolumeClaim", {{"claimName", claim}}}}});
    return spec;
  }
};

TEST_F(volume_scheduling_test, a_read_write_once_claim_pins_its_node) {
  add_node(node("a"));
  add_node(node("b"));
  bound_claim("shared", "ReadWriteOnce");
  start();
  auto first = node_of(run(pod("one", using_claim("shared"))));
  ASSERT_FALSE(first.empty());
  // Least allocated would pick the other node; the claim keeps it here.
  EXPECT_EQ(node_of(run(pod("two", using_claim("shared")))), first);
  EXPECT_NE(node_of(run(pod("free", requesting({{"cpu", "1"}})))), first);
}

TEST_F(volume_scheduling_test, a_read_write_once_pod_claim_takes_one_pod) {
  add_node(node("a"));
  add_node(node("b"));
  bound_claim("solo", "ReadWriteOncePod");
  start();
  EXPECT_FALSE(node_of(run(pod("one", using_claim("solo")))).empty());
  auto two = run(pod("two", using_claim("solo")));
  EXPECT_EQ(node_of(two), "");
  EXPECT_EQ(unschedulable_message(two),
            "0/2 nodes are available: 2 node has pod using "
            "PersistentVolumeClaim with the same name and ReadWriteOncePod "
            "access mode. preemption: 0/2 nodes are available: 2 No "
            "preemption victims found for incoming pod.");
}

TEST_F(volume_scheduling_test, a_missing_claim_refuses_every_node) {
  add_node(node("a"));
  start();
  auto p = run(pod("p", using_claim("nowhere")));
  EXPECT_EQ(unschedulable_message(p),
            "0/1 nodes are available: persistentvolumeclaim \"nowhere\" not "
            "found. preemption: 0/1 nodes are available: 1 Preemption is not "
            "helpful for scheduling.");
}

TEST_F(scheduler_test, the_fault_holds_the_next_matching_pods) {
  for (const auto& n : default_nodes())
    add_node(n);
  start();
  auto h = self->request(scheduler, caf::infinite, scheduler_fault_atom::value,
                         std::string{"default"}, std::string{"app=x"},
                         std::int32_t{1});
  drain();
  bool accepted = false;
  h.receive([&] { accepted = true; }, [](caf::error&) {});
  ASSERT_TRUE(accepted);
  auto held = run(pod("held", json::object(), {{"app", "x"}}));
  auto other = run(pod("other", json::object(), {{"app", "y"}}));
  auto next = run(pod("next", json::object(), {{"app", "x"}}));
  EXPECT_EQ(node_of(held), "");
  EXPECT_EQ(unschedulable_message(held),
            "0/1 nodes are available: 1 node(s) didn't match Pod's node "
            "affinity/selector. preemption: 0/1 nodes are available: 1 "
            "Preemption is not helpful for scheduling.");
  EXPECT_EQ(node_of(other), "sim-node-0");
  EXPECT_EQ(node_of(next), "sim-node-0");
  advance_time(std::chrono::seconds{30});
  EXPECT_EQ(node_of(get(pods("default", "held"))), "");
}

TEST_F(scheduler_test, a_fault_with_a_bad_selector_is_refused) {
  start();
  auto h = self->request(scheduler, caf::infinite, scheduler_fault_atom::value,
                         std::string{"default"}, std::string{"app in (x"},
                         std::int32_t{1});
  drain();
  bool refused = false;
  h.receive([] {},
            [&](caf::error& err) { refused = is_error(err, errc::invalid); });
  EXPECT_TRUE(refused);
}

TEST(nodes, the_default_node_is_as_documented) {
  auto nodes = default_nodes();
  ASSERT_EQ(nodes.size(), 1u);
  const auto& n = nodes[0];
  EXPECT_EQ(n["metadata"]["name"], "sim-node-0");
  EXPECT_EQ(n["metadata"]["labels"]["kubernetes.io/hostname"], "sim-node-0");
  EXPECT_EQ(n["metadata"]["labels"]["kubernetes.io/os"], "linux");
  EXPECT_TRUE(n["metadata"]["labels"].contains("kubernetes.io/arch"));
  for (const char* list : {"capacity", "allocatable"}) {
    EXPECT_EQ(n["status"][list]["cpu"], "64");
    EXPECT_EQ(n["status"][list]["memory"], "256Gi");
    EXPECT_EQ(n["status"][list]["pods"], "110");
    EXPECT_FALSE(n["status"][list].contains("nvidia.com/gpu"));
  }
  EXPECT_FALSE(n["spec"].contains("taints"));
}

struct nodes_file : ::testing::Test {
  std::string write(const std::string& text, const char* ext) {
    path = "/tmp/k8s-sim-nodes-" + std::to_string(::getpid()) + ext;
    std::ofstream{path} << text;
    return path;
  }
  ~nodes_file() override { std::remove(path.c_str()); }
  std::string path;
};

TEST_F(nodes_file, a_yaml_list_loads_with_defaults_filled) {
  auto file = write(R"(apiVersion: v1
kind: List
items:
- kind: Node
  metadata:
    name: gpu-0
    labels: {pool: gpu}
  spec:
    taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
  status:
    capacity: {cpu: "32", memory: 128Gi, pods: 110, nvidia.com/gpu: 8}
- metadata: {name: cpu-0}
)",
                    ".yaml");
  auto nodes = load_nodes(file);
  ASSERT_TRUE(nodes) << error_message(nodes.error());
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0]["status"]["allocatable"]["nvidia.com/gpu"], 8);
  EXPECT_EQ((*nodes)[0]["metadata"]["labels"]["pool"], "gpu");
  EXPECT_EQ((*nodes)[0]["metadata"]["labels"]["kubernetes.io/hostname"],
            "gpu-0");
  EXPECT_EQ((*nodes)[1]["status"]["allocatable"]["cpu"], "64");
}

TEST_F(nodes_file, a_bad_quantity_names_the_file_and_field) {
  auto file = write(R"([{"metadata":{"name":"a"}},
 {"metadata":{"name":"b"},"status":{"allocatable":{"cpu":"lots"}}}])",
                    ".json");
  auto nodes = load_nodes(file);
  ASSERT_FALSE(nodes);
  EXPECT_TRUE(is_error(nodes.error(), scheduler::errc::invalid));
  EXPECT_NE(error_message(nodes.error())
                .find(file
                      + ": [1].status.allocatable.cpu: \"lots\" is not a "
                        "quantity"),
            std::string::npos)
      << error_message(nodes.error());
}

TEST_F(nodes_file, names_and_taints_are_checked) {
  auto bad_name
      = load_nodes(write(R"([{"metadata":{"name":"Bad_Name"}}])", ".json"));
  ASSERT_FALSE(bad_name);
  EXPECT_NE(error_message(bad_name.error()).find("[0].metadata.name"),
            std::string::npos);
  auto twice = load_nodes(write(
      R"([{"metadata":{"name":"a"}},{"metadata":{"name":"a"}}])", ".json"));
  ASSERT_FALSE(twice);
  EXPECT_NE(error_message(twice.error()).find("appears twice"),
            std::string::npos);
  auto taint = load_nodes(write(
      R"([{"metadata":{"name":"a"},"spec":{"taints":[{"key":"k","effect":"Never"}]}}])",
      ".json"));
  ASSERT_FALSE(taint);
  EXPECT_NE(error_message(taint.error()).find("[0].spec.taints[0].effect"),
            std::string::npos);
  auto missing = load_nodes("/nonexistent/nodes.yaml");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(is_error(missing.error(), scheduler::errc::unreadable));
}

TEST(quantities, parse_as_kubernetes_writes_them) {
  EXPECT_DOUBLE_EQ(*parse_quantity(json("500m")), 0.5);
  EXPECT_DOUBLE_EQ(*parse_quantity(json("2")), 2.0);
  EXPECT_DOUBLE_EQ(*parse_quantity(json("256Gi")), 256.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(*parse_quantity(json("1G")), 1e9);
  EXPECT_DOUBLE_EQ(*parse_quantity(json("1e3")), 1000.0);
  EXPECT_DOUBLE_EQ(*parse_quantity(json(8)), 8.0);
  EXPECT_FALSE(parse_quantity(json("lots")));
  EXPECT_FALSE(parse_quantity(json("1Qi")));
}

} // namespace
} // namespace aiperf::k8s::sim
