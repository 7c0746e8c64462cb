// Strict decoding, defaulting and built-in validation of the types we write,
// as kube-apiserver does them on a create.
#include "k8s/sim/builtins/defaults.hpp"
#include "k8s/sim/builtins/known_fields.hpp"
#include "k8s/sim/builtins/registry.hpp"

#include <gtest/gtest.h>

namespace aiperf::k8s::sim {
namespace {

class builtins_test : public ::testing::Test {
protected:
  const resource_type& type(std::string_view group, std::string_view resource) {
    const auto* t = reg.find(group, "v1", resource);
    EXPECT_NE(t, nullptr) << resource;
    return *t;
  }
  type_registry reg;
};

TEST_F(builtins_test, strict_decoding_names_every_unknown_field_in_order) {
  auto job = json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "j", "bogus": 1, "labels": {"any": "thing"}},
    "spec": {"x": 1, "template": {"spec": {
      "containers": [{"name": "c", "image": "i", "foo": true,
                      "env": [{"name": "A", "vaule": "typo"}],
                      "livenessProbe": {"anything": {"deeper": 1}}}]}}},
    "extra": null})");
  auto unknown = unknown_fields(type("batch", "jobs"), job);
  EXPECT_EQ(
      unknown,
      (std::vector<std::string>{
          "metadata.bogus", "spec.x", "spec.template.spec.containers[0].foo",
          "spec.template.spec.containers[0].env[0].vaule", "extra"}));
  EXPECT_EQ(strict_decoding_message({"spec.x", "spec.y"}),
            "strict decoding error: unknown field \"spec.x\", unknown field "
            "\"spec.y\"");
  EXPECT_EQ(strict_decoding_warnings({"spec.x"}),
            std::vector<std::string>{"unknown field \"spec.x\""});
}

TEST_F(builtins_test, known_documents_have_no_unknown_fields) {
  auto cm = json::parse(R"({"apiVersion":"v1","kind":"ConfigMap",
    "metadata":{"name":"c","namespace":"b","ownerReferences":[{"apiVersion":"v1",
    "kind":"Pod","name":"p","uid":"u","controller":true,"blockOwnerDeletion":true}]},
    "data":{"k":"v"},"immutable":false})");
  EXPECT_TRUE(unknown_fields(type("", "configmaps"), cm).empty());
  auto binding = json::parse(R"({"apiVersion":"rbac.authorization.k8s.io/v1",
    "kind":"RoleBinding","metadata":{"name":"b"},
    "subjects":[{"kind":"ServiceAccount","name":"default","namespace":"x","oops":1}],
    "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"r"}})");
  EXPECT_EQ(unknown_fields(type("rbac.authorization.k8s.io", "rolebindings"),
                           binding),
            std::vector<std::string>{"subjects[0].oops"});
  auto cm_bad
      = json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","spec":{}})");
  EXPECT_EQ(unknown_fields(type("", "configmaps"), cm_bad),
            std::vector<std::string>{"spec"});
}

TEST_F(builtins_test, a_pod_is_defaulted_as_a_real_cluster_stores_it) {
  auto pod = json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"p","namespace":"b"},
    "spec":{"containers":[{"name":"a","image":"nginx","ports":[{"containerPort":80}]},
                          {"name":"b","image":"nginx:1.27"},
                          {"name":"c","image":"reg:5000/x@sha256:abc",
                           "resources":{"limits":{"cpu":"1","memory":"1Gi"}}}]}})");
  default_object(type("", "pods"), pod);
  EXPECT_FALSE(pod["spec"].contains("serviceAccountName"));
  EXPECT_FALSE(pod["spec"].contains("tolerations"));
  default_pod_admission(pod);
  const auto& spec = pod["spec"];
  EXPECT_EQ(spec["restartPolicy"], "Always");
  EXPECT_EQ(spec["dnsPolicy"], "ClusterFirst");
  EXPECT_EQ(spec["terminationGracePeriodSeconds"], 30);
  EXPECT_EQ(spec["schedulerName"], "default-scheduler");
  EXPECT_EQ(spec["serviceAccountName"], "default");
  EXPECT_EQ(spec["serviceAccount"], "default");
  EXPECT_EQ(spec["securityContext"], json::object());
  EXPECT_EQ(spec["tolerations"].size(), 2u);
  EXPECT_EQ(spec["tolerations"][0]["tolerationSeconds"], 300);
  const auto& a = spec["containers"][0];
  EXPECT_EQ(a["imagePullPolicy"], "Always"); // no tag = latest
  EXPECT_EQ(a["terminationMessagePath"], "/dev/termination-log");
  EXPECT_EQ(a["terminationMessagePolicy"], "File");
  EXPECT_EQ(a["resources"], json::object());
  EXPECT_EQ(a["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(spec["containers"][1]["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(spec["containers"][2]["imagePullPolicy"], "IfNotPresent"); // digest
  EXPECT_EQ(pod["status"],
            json::parse(R"({"phase":"Pending","qosClass":"Burstable"})"));
  EXPECT_TRUE(validate_object(type("", "pods"), pod).empty());
}

TEST_F(builtins_test, probes_volumes_and_limits_get_upstreams_defaults) {
  auto pod = json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"p","namespace":"b"},
    "spec":{"containers":[{"name":"a","image":"x:1",
      "readinessProbe":{"httpGet":{"port":8000}},
      "livenessProbe":{"tcpSocket":{"port":8000},"periodSeconds":5},
      "env":[{"name":"N","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
      "resources":{"limits":{"cpu":"1"}}}],
     "volumes":[{"name":"c","configMap":{"name":"c"}},
                {"name":"t","projected":{"sources":[
                  {"serviceAccountToken":{"path":"token"}}]}}]}})");
  default_object(type("", "pods"), pod);
  const auto& c = pod["spec"]["containers"][0];
  EXPECT_EQ(c["readinessProbe"], json::parse(R"({"httpGet":{"port":8000,
    "path":"/","scheme":"HTTP"},"timeoutSeconds":1,"periodSeconds":10,
    "successThreshold":1,"failureThreshold":3})"));
  EXPECT_EQ(c["livenessProbe"]["periodSeconds"], 5);
  EXPECT_EQ(c["livenessProbe"]["timeoutSeconds"], 1);
  EXPECT_EQ(c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
  EXPECT_EQ(c["resources"]["requests"], json::parse(R"({"cpu":"1"})"));
  const auto& volumes = pod["spec"]["volumes"];
  EXPECT_EQ(volumes[0]["configMap"]["defaultMode"], 420);
  EXPECT_EQ(volumes[1]["projected"]["defaultMode"], 420);
  EXPECT_EQ(volumes[1]["projected"]["sources"][0]["serviceAccountToken"]
                   ["expirationSeconds"],
            3600);
}

TEST_F(builtins_test, a_pod_without_containers_is_refused_as_upstream) {
  auto pod
      = json::parse(R"({"metadata":{"name":"p","namespace":"b"},"spec":{}})");
  default_object(type("", "pods"), pod);
  auto causes = validate_object(type("", "pods"), pod);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(cause_text(causes[0]), "spec.containers: Required value");
  auto st = invalid_status("Pod", "", "p", causes);
  EXPECT_EQ(st.message,
            "Pod \"p\" is invalid: spec.containers: Required value");
}

TEST_F(builtins_test, a_job_gets_its_defaults_and_generated_selector) {
  auto job
      = json::parse(R"({"metadata":{"name":"j","namespace":"b","uid":"u-1"},
    "spec":{"template":{"metadata":{"labels":{"app":"x"}},
      "spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"i:1"}]}}}})");
  default_object(type("batch", "jobs"), job);
  const auto& spec = job["spec"];
  EXPECT_EQ(spec["completions"], 1);
  EXPECT_EQ(spec["parallelism"], 1);
  EXPECT_EQ(spec["backoffLimit"], 6);
  EXPECT_EQ(spec["completionMode"], "NonIndexed");
  EXPECT_EQ(spec["suspend"], false);
  EXPECT_EQ(spec["podReplacementPolicy"], "TerminatingOrFailed");
  EXPECT_EQ(job["metadata"]["labels"], json::parse(R"({"app":"x"})"));
  EXPECT_EQ(
      spec["selector"],
      json::parse(
          R"({"matchLabels":{"batch.kubernetes.io/controller-uid":"u-1"}})"));
  const auto& labels = spec["template"]["metadata"]["labels"];
  EXPECT_EQ(labels["batch.kubernetes.io/job-name"], "j");
  EXPECT_EQ(labels["job-name"], "j");
  EXPECT_EQ(labels["controller-uid"], "u-1");
  EXPECT_EQ(spec["template"]["spec"]["dnsPolicy"], "ClusterFirst");
  EXPECT_EQ(job["status"], json::object());
  EXPECT_TRUE(validate_object(type("batch", "jobs"), job).empty());
  // Parallelism alone: completions stays unset.
  auto work_queue = json::parse(R"({"spec":{"parallelism":3}})");
  default_object(type("batch", "jobs"), work_queue);
  EXPECT_FALSE(work_queue["spec"].contains("completions"));
}

TEST_F(builtins_test, a_job_template_must_not_restart_always) {
  auto job = json::parse(R"({"metadata":{"name":"j","namespace":"b","uid":"u"},
    "spec":{"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}})");
  default_object(type("batch", "jobs"), job);
  auto causes = validate_object(type("batch", "jobs"), job);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(cause_text(causes[0]),
            "spec.template.spec.restartPolicy: Unsupported value: "
            "\"Always\": supported values: \"OnFailure\", \"Never\"");
}

TEST_F(builtins_test, a_deployment_selector_must_match_its_template) {
  auto d = json::parse(R"({"metadata":{"name":"d","namespace":"b"},
    "spec":{"selector":{"matchLabels":{"app":"y"}},
      "template":{"metadata":{"labels":{"app":"x","tier":"web"}},
        "spec":{"containers":[{"name":"c","image":"i"}]}}}})");
  default_object(type("apps", "deployments"), d);
  EXPECT_EQ(d["spec"]["replicas"], 1);
  EXPECT_EQ(
      d["spec"]["strategy"],
      json::parse(
          R"({"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}})"));
  EXPECT_EQ(d["spec"]["revisionHistoryLimit"], 10);
  EXPECT_EQ(d["spec"]["progressDeadlineSeconds"], 600);
  auto causes = validate_object(type("apps", "deployments"), d);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(cause_text(causes[0]),
            "spec.template.metadata.labels: Invalid value: "
            "map[string]string{\"app\":\"x\", \"tier\":\"web\"}: `selector` "
            "does not match "
            "template `labels`");
  d.erase("spec");
  auto missing = validate_object(type("apps", "deployments"), d);
  ASSERT_FALSE(missing.empty());
  EXPECT_EQ(cause_text(missing[0]), "spec.selector: Required value");
}

TEST_F(builtins_test, services_namespaces_secrets_and_bindings) {
  auto svc = json::parse(R"({"metadata":{"name":"s","namespace":"b"},
    "spec":{"selector":{"app":"x"},"ports":[{"port":80}]}})");
  default_object(type("", "services"), svc);
  EXPECT_EQ(svc["spec"]["type"], "ClusterIP");
  EXPECT_EQ(svc["spec"]["sessionAffinity"], "None");
  EXPECT_EQ(svc["spec"]["ports"][0]["targetPort"], 80);
  EXPECT_EQ(svc["spec"]["ports"][0]["protocol"], "TCP");
  EXPECT_TRUE(validate_object(type("", "services"), svc).empty());
  auto no_ports
      = json::parse(R"({"metadata":{"name":"s","namespace":"b"},"spec":{}})");
  default_object(type("", "services"), no_ports);
  auto causes = validate_object(type("", "services"), no_ports);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(cause_text(causes[0]), "spec.ports: Required value");

  auto ns = json::parse(R"({"metadata":{"name":"bench"}})");
  default_object(type("", "namespaces"), ns);
  EXPECT_EQ(ns["metadata"]["labels"]["kubernetes.io/metadata.name"], "bench");
  EXPECT_EQ(ns["spec"]["finalizers"], json::array({"kubernetes"}));
  EXPECT_EQ(ns["status"]["phase"], "Active");
  EXPECT_TRUE(validate_object(type("", "namespaces"), ns).empty());

  auto secret = json::parse(R"({"metadata":{"name":"s","namespace":"b"},
                                 "stringData":{"token":"abc"}})");
  default_object(type("", "secrets"), secret);
  EXPECT_EQ(secret["type"], "Opaque");
  EXPECT_EQ(secret["data"]["token"], "YWJj");
  EXPECT_FALSE(secret.contains("stringData"));

  auto binding = json::parse(R"({"metadata":{"name":"b","namespace":"x"},
    "subjects":[{"kind":"ServiceAccount","name":"default"},{"kind":"User","name":"alice"}],
    "roleRef":{"kind":"Role","name":"r"}})");
  default_object(type("rbac.authorization.k8s.io", "rolebindings"), binding);
  EXPECT_EQ(binding["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
  EXPECT_EQ(binding["subjects"][1]["apiGroup"], "rbac.authorization.k8s.io");
  EXPECT_TRUE(validate_object(type("rbac.authorization.k8s.io", "rolebindings"),
                              binding)
                  .empty());
  auto changed = binding;
  changed["roleRef"]["name"] = "other";
  changed["metadata"]["resourceVersion"] = "3";
  auto update = validate_object(
      type("rbac.authorization.k8s.io", "rolebindings"), changed, &binding);
  ASSERT_EQ(update.size(), 1u);
  EXPECT_EQ(update[0].field, "roleRef");
  EXPECT_NE(update[0].message.find("cannot change roleRef"), std::string::npos);
}

TEST_F(builtins_test, role_rules_need_verbs_groups_and_resources) {
  auto role = json::parse(R"({"metadata":{"name":"r","namespace":"x"},
    "rules":[{"resources":["pods"]},{"verbs":["get"],"nonResourceURLs":["/healthz"]}]})");
  auto causes
      = validate_object(type("rbac.authorization.k8s.io", "roles"), role);
  ASSERT_EQ(causes.size(), 3u);
  EXPECT_EQ(
      cause_text(causes[0]),
      "rules[0].verbs: Required value: verbs must contain at least one value");
  EXPECT_EQ(cause_text(causes[1]),
            "rules[0].apiGroups: Required value: resource rules must "
            "supply at least one api group");
  EXPECT_EQ(causes[2].field, "rules[1].nonResourceURLs");
}

TEST_F(builtins_test, an_immutable_config_map_keeps_its_data) {
  auto old_cm = json::parse(
      R"({"metadata":{"name":"c","namespace":"b","resourceVersion":"1"},
                                 "immutable":true,"data":{"k":"v"}})");
  auto new_cm = old_cm;
  new_cm["data"]["k"] = "w";
  auto causes = validate_object(type("", "configmaps"), new_cm, &old_cm);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(cause_text(causes[0]),
            "data: Forbidden: field is immutable when `immutable` is set");
}

TEST_F(builtins_test, a_selector_is_checked_before_it_is_matched) {
  auto d = json::parse(R"({"metadata":{"name":"d","namespace":"b"},
    "spec":{"selector":{"matchLabels":{"model":"Qwen/Qwen3-0.6B"},
      "matchExpressions":[{"key":"tier","operator":"Has"}]},
      "template":{"metadata":{"labels":{"model":"x"}},
        "spec":{"containers":[{"name":"c","image":"i"}]}}}})");
  default_object(type("apps", "deployments"), d);
  auto causes = validate_object(type("apps", "deployments"), d);
  ASSERT_GE(causes.size(), 2u);
  EXPECT_EQ(causes[0].field, "spec.selector.matchLabels");
  EXPECT_EQ(causes[0].message.substr(0, 34),
            "Invalid value: \"Qwen/Qwen3-0.6B\": ");
  EXPECT_EQ(cause_text(causes[1]),
            "spec.selector.matchExpressions[0].operator: Invalid "
            "value: \"Has\": not a valid selector operator");
}

} // namespace
} // namespace aiperf::k8s::sim
