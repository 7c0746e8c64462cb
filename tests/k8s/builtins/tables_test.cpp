// Server-side Table output as kube-apiserver prints it: pod STATUS as
// upstream's printPod computes it, the built-in printers, CRD printer
// columns, the default Name + Created At table, and kubectl's AGE format.
#include "k8s/sim/builtins/registry.hpp"
#include "k8s/sim/builtins/tables.hpp"

#include <gtest/gtest.h>

namespace aiperf::k8s::sim {
namespace {

// 2026-01-01T00:00:00Z and ten minutes later.
constexpr std::int64_t created = 1767225600;
constexpr std::int64_t now = created + 600;

json pod_with(const char* status_json, const char* extra_meta = "") {
  auto text
      = std::
            string{R"({"metadata":{"name":"p","namespace":"b","resourceVersion":"7",)"
                   R"("creationTimestamp":"2026-01-01T00:00:00Z")"}
        + extra_meta
        + R"(},"spec":{"containers":[{"name":"c","image":"i"}]},"status":)"
        + status_json + "}";
  return json::parse(text);
}

class tables_test : public ::testing::Test {
protected:
  json pod_cells(const json& pod) {
    auto table = to_table(*reg.find("", "v1", "pods"), pod, now);
    return table.at("rows").at(0).at("cells");
  }
  std::string pod_status(const char* status_json, const char* extra_meta = "") {
    return pod_cells(pod_with(status_json, extra_meta))
        .at(2)
        .get<std::string>();
  }
  type_registry reg;
};

TEST(human_duration, matches_kubectl_age_format) {
  EXPECT_EQ(human_duration(-5), "<invalid>");
  EXPECT_EQ(human_duration(-1), "0s");
  EXPECT_EQ(human_duration(0), "0s");
  EXPECT_EQ(human_duration(119), "119s");
  EXPECT_EQ(human_duration(125), "2m5s");
  EXPECT_EQ(human_duration(180), "3m");
  EXPECT_EQ(human_duration(12 * 60 + 30), "12m");
  EXPECT_EQ(human_duration(3 * 3600 + 20 * 60), "3h20m");
  EXPECT_EQ(human_duration(5 * 3600), "5h");
  EXPECT_EQ(human_duration(10 * 3600 + 59 * 60), "10h");
  EXPECT_EQ(human_duration((3 * 24 + 4) * 3600), "3d4h");
  EXPECT_EQ(human_duration(40 * 24 * 3600), "40d");
  EXPECT_EQ(human_duration((2 * 365 + 10) * 24 * 3600), "2y10d");
  EXPECT_EQ(human_duration(9 * 365 * 24 * 3600LL), "9y");
}

TEST_F(tables_test, pod_columns_and_a_pending_pod) {
  auto pod = pod_with(R"({"phase":"Pending","qosClass":"BestEffort"})");
  auto table = to_table(*reg.find("", "v1", "pods"), pod, now);
  EXPECT_EQ(table.at("kind"), "Table");
  EXPECT_EQ(table.at("apiVersion"), "meta.k8s.io/v1");
  EXPECT_EQ(table.at("metadata"), json::parse(R"({"resourceVersion":"7"})"));
  std::vector<std::string> names;
  for (const auto& c : table.at("columnDefinitions"))
    names.push_back(c.at("name"));
  EXPECT_EQ(names, (std::vector<std::string>{
                       "Name", "Ready", "Status", "Restarts", "Age", "IP",
                       "Node", "Nominated Node", "Readiness Gates"}));
  EXPECT_EQ(table.at("columnDefinitions").at(5).at("priority"), 1);
  EXPECT_EQ(table.at("columnDefinitions").at(0).at("format"), "name");
  const auto& row = table.at("rows").at(0);
  EXPECT_EQ(row.at("cells"),
            json::parse(R"(["p","0/1","Pending","0","10m","<none>","<none>",)"
                        R"("<none>","<none>"])"));
  EXPECT_EQ(row.at("object").at("kind"), "PartialObjectMetadata");
  EXPECT_EQ(row.at("object").at("apiVersion"), "meta.k8s.io/v1");
  EXPECT_EQ(row.at("object").at("metadata").at("name"), "p");
  EXPECT_FALSE(row.contains("conditions"));
}

TEST_F(tables_test, pod_status_is_computed_as_upstream_printer_does) {
  EXPECT_EQ(
      pod_status(
          R"({"phase":"Pending","containerStatuses":[{"name":"c","ready":false,
    "restartCount":0,"state":{"waiting":{"reason":"ContainerCreating"}}}]})"),
      "ContainerCreating");
  EXPECT_EQ(
      pod_status(
          R"({"phase":"Pending","containerStatuses":[{"name":"c","ready":false,
    "restartCount":0,"state":{"waiting":{"reason":"ImagePullBackOff"}}}]})"),
      "ImagePullBackOff");
  EXPECT_EQ(
      pod_status(
          R"({"phase":"Succeeded","containerStatuses":[{"name":"c","ready":false,
    "restartCount":0,"state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]})"),
      "Completed");
  EXPECT_EQ(
      pod_status(
          R"({"phase":"Failed","containerStatuses":[{"name":"c","ready":false,
    "restartCount":0,"state":{"terminated":{"exitCode":1,"reason":"Error"}}}]})"),
      "Error");
  EXPECT_EQ(
      pod_status(
          R"({"phase":"Failed","containerStatuses":[{"name":"c","ready":false,
    "restartCount":0,"state":{"terminated":{"exitCode":137}}}]})"),
      "ExitCode:137");
  EXPECT_EQ(pod_status(R"({"phase":"Running"})",
                       R"(,"deletionTimestamp":"2026-01-01T00:09:00Z")"),
            "Terminating");
  EXPECT_EQ(
      pod_status(
          R"({"phase":"Pending","initContainerStatuses":[{"name":"init","ready":false,
    "restartCount":0,"state":{"waiting":{"reason":"PodInitializing"}}}]})"),
      "Init:0/0");
  EXPECT_EQ(
      pod_status(
          R"({"phase":"Pending","initContainerStatuses":[{"name":"init","ready":false,
    "restartCount":2,"state":{"terminated":{"exitCode":1,"reason":"Error"}}}]})"),
      "Init:Error");
  EXPECT_EQ(
      pod_status(R"({"phase":"Pending","conditions":[{"type":"PodScheduled",
    "status":"False","reason":"SchedulingGated"}]})"),
      "SchedulingGated");
}

TEST_F(tables_test, a_running_pod_and_a_crash_looping_one) {
  auto running
      = pod_cells(pod_with(R"({"phase":"Running","podIPs":[{"ip":"10.0.0.5"}],
    "conditions":[{"type":"Ready","status":"True"}],
    "containerStatuses":[{"name":"c","ready":true,"restartCount":0,
      "state":{"running":{"startedAt":"2026-01-01T00:00:05Z"}}}]})"));
  EXPECT_EQ(running.at(1), "1/1");
  EXPECT_EQ(running.at(2), "Running");
  EXPECT_EQ(running.at(5), "10.0.0.5");
  auto crashing = pod_cells(
      pod_with(R"({"phase":"Running","containerStatuses":[{"name":"c",
    "ready":false,"restartCount":3,"state":{"waiting":{"reason":"CrashLoopBackOff"}},
    "lastState":{"terminated":{"exitCode":1,"reason":"Error",
      "finishedAt":"2026-01-01T00:08:00Z"}}}]})"));
  EXPECT_EQ(crashing.at(1), "0/1");
  EXPECT_EQ(crashing.at(2), "CrashLoopBackOff");
  EXPECT_EQ(crashing.at(3), "3 (2m ago)");
}

TEST_F(tables_test, a_finished_pod_row_carries_the_completed_condition) {
  auto pod = pod_with(R"({"phase":"Succeeded"})");
  auto table = to_table(*reg.find("", "v1", "pods"), pod, now);
  EXPECT_EQ(table.at("rows").at(0).at("conditions"),
            json::parse(
                R"([{"type":"Completed","status":"True","reason":"Succeeded",)"
                R"("message":"The pod has completed successfully."}])"));
}

TEST_F(tables_test, a_list_gives_one_row_per_item_and_the_list_metadata) {
  json list = json::parse(R"({"kind":"PodList","apiVersion":"v1",
    "metadata":{"resourceVersion":"42","continue":"abc"},"items":[]})");
  list["items"].push_back(pod_with(R"({"phase":"Pending"})"));
  list["items"].push_back(pod_with(R"({"phase":"Running"})"));
  auto table
      = to_table(*reg.find("", "v1", "pods"), list, now, table_include::none);
  EXPECT_EQ(table.at("metadata"),
            json::parse(R"({"resourceVersion":"42","continue":"abc"})"));
  ASSERT_EQ(table.at("rows").size(), 2u);
  EXPECT_FALSE(table.at("rows").at(0).contains("object"));
  auto full
      = to_table(*reg.find("", "v1", "pods"), list, now, table_include::object);
  EXPECT_EQ(full.at("rows").at(1).at("object").at("kind"), "Pod");
  EXPECT_EQ(full.at("rows").at(1).at("object").at("status").at("phase"),
            "Running");
}

TEST_F(tables_test, jobs_deployments_and_services) {
  auto job = json::parse(
      R"({"metadata":{"name":"j","creationTimestamp":"2026-01-01T00:00:00Z"},
    "spec":{"completions":3,"parallelism":1,"selector":{"matchLabels":{"batch.kubernetes.io/controller-uid":"u"}},
      "template":{"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}]}}},
    "status":{"succeeded":1,"startTime":"2026-01-01T00:00:00Z"}})");
  auto jobs = to_table(*reg.find("batch", "v1", "jobs"), job, now);
  EXPECT_EQ(jobs.at("rows").at(0).at("cells"),
            json::parse(R"(["j","Running","1/3","10m","10m","a,b","x,y",)"
                        R"("batch.kubernetes.io/controller-uid=u"])"));
  job["status"]["conditions"]
      = json::parse(R"([{"type":"Complete","status":"True"}])");
  job["status"]["completionTime"] = "2026-01-01T00:01:05Z";
  auto done = to_table(*reg.find("batch", "v1", "jobs"), job, now);
  EXPECT_EQ(done.at("rows").at(0).at("cells").at(1), "Complete");
  EXPECT_EQ(done.at("rows").at(0).at("cells").at(3), "65s");

  auto deploy = json::parse(
      R"({"metadata":{"name":"d","creationTimestamp":"2026-01-01T00:00:00Z"},
    "spec":{"replicas":3,"selector":{"matchLabels":{"app":"x"}},
      "template":{"spec":{"containers":[{"name":"c","image":"nginx"}]}}},
    "status":{"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}})");
  auto deployments
      = to_table(*reg.find("apps", "v1", "deployments"), deploy, now);
  EXPECT_EQ(deployments.at("rows").at(0).at("cells"),
            json::parse(R"(["d","2/3",3,2,"10m","c","nginx","app=x"])"));

  auto svc = json::parse(
      R"({"metadata":{"name":"s","creationTimestamp":"2026-01-01T00:00:00Z"},
    "spec":{"type":"ClusterIP","clusterIP":"10.96.0.10","clusterIPs":["10.96.0.10"],
      "ports":[{"port":80,"protocol":"TCP"},{"port":443,"protocol":"TCP","nodePort":30443}],
      "selector":{"app":"x","tier":"web"}}})");
  auto services = to_table(*reg.find("", "v1", "services"), svc, now);
  EXPECT_EQ(
      services.at("rows").at(0).at("cells"),
      json::parse(
          R"(["s","ClusterIP","10.96.0.10","<none>","80/TCP,443:30443/TCP","10m",)"
          R"("app=x,tier=web"])"));
}

TEST_F(tables_test, events_namespaces_config_maps_and_bindings) {
  auto event = json::parse(
      R"({"metadata":{"name":"p.1","creationTimestamp":"2026-01-01T00:00:00Z"},
    "involvedObject":{"kind":"Pod","name":"p","fieldPath":"spec.containers{c}"},
    "reason":"BackOff","message":" Back-off restarting failed container \n","type":"Warning",
    "source":{"component":"kubelet","host":"node-1"},
    "firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:09:00Z","count":4})");
  auto events = to_table(*reg.find("", "v1", "events"), event, now);
  EXPECT_EQ(
      events.at("rows").at(0).at("cells"),
      json::parse(
          R"(["60s","Warning","BackOff","pod/p","spec.containers{c}","kubelet, node-1",)"
          R"("Back-off restarting failed container","10m",4,"p.1"])"));
  EXPECT_EQ(events.at("columnDefinitions").at(0).at("name"), "Last Seen");

  auto ns = json::parse(
      R"({"metadata":{"name":"bench","creationTimestamp":"2026-01-01T00:00:00Z"},
    "status":{"phase":"Active"}})");
  EXPECT_EQ(to_table(*reg.find("", "v1", "namespaces"), ns, now)
                .at("rows")
                .at(0)
                .at("cells"),
            json::parse(R"(["bench","Active","10m"])"));
  auto cm = json::parse(
      R"({"metadata":{"name":"c","creationTimestamp":"2026-01-01T00:00:00Z"},
    "data":{"a":"1","b":"2"},"binaryData":{"c":"AA=="}})");
  EXPECT_EQ(to_table(*reg.find("", "v1", "configmaps"), cm, now)
                .at("rows")
                .at(0)
                .at("cells"),
            json::parse(R"(["c",3,"10m"])"));
  auto rb = json::parse(
      R"({"metadata":{"name":"rb","creationTimestamp":"2026-01-01T00:00:00Z"},
    "roleRef":{"kind":"Role","name":"r"},
    "subjects":[{"kind":"ServiceAccount","name":"default","namespace":"bench"},
                {"kind":"User","name":"alice"}]})");
  EXPECT_EQ(
      to_table(*reg.find("rbac.authorization.k8s.io", "v1", "rolebindings"), rb,
               now)
          .at("rows")
          .at(0)
          .at("cells"),
      json::parse(R"(["rb","Role/r","10m","alice","","bench/default"])"));
}

TEST_F(tables_test, types_without_a_printer_get_name_and_created_at) {
  auto role = json::parse(
      R"({"metadata":{"name":"r","creationTimestamp":"2026-01-01T00:00:00Z"}})");
  auto table = to_table(*reg.find("rbac.authorization.k8s.io", "v1", "roles"),
                        role, now);
  EXPECT_EQ(table.at("columnDefinitions").at(1).at("name"), "Created At");
  EXPECT_EQ(table.at("columnDefinitions").at(1).at("type"), "date");
  EXPECT_EQ(table.at("rows").at(0).at("cells"),
            json::parse(R"(["r","2026-01-01T00:00:00Z"])"));
}

TEST_F(tables_test, custom_resources_print_their_crd_columns) {
  ASSERT_TRUE(reg.add_crd(json::parse(R"({
    "metadata": {"name": "jobsets.jobset.x-k8s.io"},
    "spec": {"group": "jobset.x-k8s.io", "scope": "Namespaced",
      "names": {"kind": "JobSet", "plural": "jobsets"},
      "versions": [{"name": "v1alpha2", "served": true, "storage": true,
        "additionalPrinterColumns": [
          {"name": "TerminalState", "type": "string", "jsonPath": ".status.terminalState",
           "description": "Final state of JobSet"},
          {"name": "Restarts", "type": "string", "jsonPath": ".status.restarts"},
          {"name": "Completed", "type": "string",
           "jsonPath": ".status.conditions[?(@.type==\"Completed\")].status"},
          {"name": "Suspended", "type": "string", "jsonPath": ".spec.suspend"},
          {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicatedJobs[0].replicas"},
          {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]}})")));
  auto js
      = json::parse(R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet",
    "metadata":{"name":"j1","creationTimestamp":"2026-01-01T00:00:00Z"},
    "spec":{"suspend":false,"replicatedJobs":[{"name":"w","replicas":2}]},
    "status":{"restarts":0,"conditions":[{"type":"Ready","status":"False"},
                                         {"type":"Completed","status":"True"}]}})");
  auto table
      = to_table(*reg.find("jobset.x-k8s.io", "v1alpha2", "jobsets"), js, now);
  EXPECT_EQ(table.at("rows").at(0).at("cells"),
            json::parse(R"(["j1",null,"0","True","false",2,"10m"])"));
  EXPECT_EQ(table.at("columnDefinitions").at(1).at("description"),
            "Final state of JobSet");
  EXPECT_EQ(table.at("columnDefinitions").at(2).at("description"),
            "Custom resource definition column (in JSONPath format): "
            ".status.restarts");

  ASSERT_TRUE(
      reg.add_crd(json::parse(R"({"metadata":{"name":"things.example.com"},
    "spec":{"group":"example.com","scope":"Cluster","names":{"kind":"Thing","plural":"things"},
      "versions":[{"name":"v1","served":true,"storage":true}]}})")));
  auto thing = json::parse(
      R"({"metadata":{"name":"t","creationTimestamp":"2026-01-01T00:00:00Z"}})");
  auto plain = to_table(*reg.find("example.com", "v1", "things"), thing, now);
  EXPECT_EQ(plain.at("columnDefinitions").size(), 2u);
  EXPECT_EQ(plain.at("columnDefinitions").at(1).at("name"), "Age");
  EXPECT_EQ(plain.at("rows").at(0).at("cells"), json::parse(R"(["t","10m"])"));
}

TEST(json_path, the_subset_printer_columns_use) {
  auto obj
      = json::parse(R"({"metadata":{"labels":{"app.kubernetes.io/name":"x"}},
    "status":{"phase":"Running","items":[{"n":1},{"n":2}],
      "conditions":[{"type":"A","status":"False"},{"type":"B","status":"True"}]}})");
  EXPECT_EQ(json_path_first(obj, ".status.phase"), "Running");
  EXPECT_EQ(json_path_first(obj, "{.status.phase}"), "Running");
  EXPECT_EQ(json_path_first(obj, ".status.items[1].n"), 2);
  EXPECT_EQ(json_path_first(obj, ".status.items[-1].n"), 2);
  EXPECT_EQ(json_path_first(obj, ".status.items[*].n"), 1);
  EXPECT_EQ(json_path_first(obj, ".status.conditions[?(@.type==\"B\")].status"),
            "True");
  EXPECT_EQ(json_path_first(obj, ".status.conditions[?(@.type!=\"A\")].type"),
            "B");
  EXPECT_EQ(json_path_first(obj, ".metadata.labels['app.kubernetes.io/name']"),
            "x");
  EXPECT_EQ(json_path_first(obj, ".metadata.labels.app\\.kubernetes\\.io/name"),
            "x");
  EXPECT_TRUE(json_path_first(obj, ".status.missing.deeper").is_null());
}

} // namespace
} // namespace aiperf::k8s::sim
