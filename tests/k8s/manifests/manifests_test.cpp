// The objects of a direct-mode run, field by field: names and labels,
// env order, mounts, probes, security contexts, worker replicas, Kueue,
// secret references, TTLs, resources, redaction and the ConfigMap limit.
#include "k8s/manifests/manifests.hpp"

#include "config/profile/profile_json.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

using namespace aiperf;
using namespace aiperf::k8s::manifests;
using aiperf::k8s::json;

namespace {

constexpr const char* api_key = "sk-secret-api-key-1111";
constexpr const char* header_value = "hdr-secret-2222";
constexpr const char* url_password = "url-secret-3333";

config::profile_config sample_run() {
  config::profile_config cfg;
  cfg.model_names = {"meta-llama/Llama-3.1-8B-Instruct", "second"};
  cfg.urls = {std::string{"http://bench:"} + url_password + "@vllm.llm.svc:8000/v1"};
  cfg.api_key = api_key;
  cfg.headers = {{"X-Auth", header_value}};
  cfg.streaming = true;
  return cfg;
}

deployment sample() {
  deployment d;
  d.name = "demo";
  d.ns = "bench";
  return d;
}

env_lookup no_env() {
  return [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
}

env_lookup env_of(std::map<std::string, std::string, std::less<>> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    if (auto it = vars.find(name); it != vars.end())
      return it->second;
    return std::nullopt;
  };
}

json built_jobset(const deployment& d) {
  auto js = jobset(d, sample_run(), no_env());
  EXPECT_TRUE(js) << (js ? "" : error_message(js.error()));
  return js ? *js : json{};
}

const json& pod_spec(const json& js, std::size_t job) {
  return js["spec"]["replicatedJobs"][job]["template"]["spec"]["template"]["spec"];
}

const json& container(const json& js, std::size_t job, std::size_t i) {
  return pod_spec(js, job)["containers"][i];
}

std::vector<std::string> env_names(const json& c) {
  std::vector<std::string> out;
  for (const auto& e : c["env"])
    out.push_back(e["name"]);
  return out;
}

const json* env_entry(const json& c, std::string_view name) {
  for (const auto& e : c["env"])
    if (e["name"] == name)
      return &e;
  return nullptr;
}

template <class T>
errc code_of(const caf::expected<T>& r) {
  EXPECT_FALSE(r);
  return r ? errc{} : error_code(r.error(), errc{});
}

} // namespace

TEST(manifests_names, follow_aiperf) {
  EXPECT_EQ(jobset_name("demo"), "aiperf-demo");
  EXPECT_EQ(role_name("demo"), "aiperf-demo-role");
  EXPECT_EQ(role_binding_name("demo"), "aiperf-demo-binding");
  EXPECT_EQ(config_map_name("demo"), "aiperf-demo-config");
  EXPECT_EQ(controller_host("demo", "bench"),
            "aiperf-demo-controller-0-0.aiperf-demo.bench.svc.cluster.local");
}

TEST(manifests_names, job_name_is_a_dns_label_of_at_most_35) {
  auto d = sample();
  d.name = std::string(35, 'a');
  EXPECT_TRUE(validate(d));
  for (auto bad : {std::string(36, 'a'), std::string{"Demo"}, std::string{"-demo"},
                   std::string{"demo-"}, std::string{"de_mo"}, std::string{}}) {
    d.name = bad;
    auto r = validate(d);
    ASSERT_FALSE(r) << bad;
    EXPECT_TRUE(is_error(r.error(), errc::invalid_name));
    EXPECT_NE(error_message(r.error()).find("--name"), std::string::npos);
  }
}

TEST(manifests_objects, four_in_creation_order_with_namespace_and_labels) {
  auto objs = direct_mode_objects(sample(), sample_run(), no_env());
  ASSERT_TRUE(objs) << error_message(objs.error());
  ASSERT_EQ(objs->size(), 4u);
  std::vector<std::pair<std::string, std::string>> want{{"Role", "aiperf-demo-role"},
                                                        {"RoleBinding", "aiperf-demo-binding"},
                                                        {"ConfigMap", "aiperf-demo-config"},
                                                        {"JobSet", "aiperf-demo"}};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& o = (*objs)[i];
    EXPECT_EQ(o["kind"], want[i].first);
    EXPECT_EQ(o["metadata"]["name"], want[i].second);
    EXPECT_EQ(o["metadata"]["namespace"], "bench");
    EXPECT_EQ(o["metadata"]["labels"]["app"], "aiperf");
    EXPECT_EQ(o["metadata"]["labels"]["aiperf.nvidia.com/job-id"], "demo");
    EXPECT_FALSE(o["metadata"].contains("ownerReferences"));
  }
}

TEST(manifests_objects, owner_references_with_an_aiperfjob_uid) {
  auto d = sample();
  d.job_uid = "1234-uid";
  auto objs = direct_mode_objects(d, sample_run(), no_env());
  ASSERT_TRUE(objs);
  for (const auto& o : *objs) {
    const auto& refs = o["metadata"]["ownerReferences"];
    ASSERT_EQ(refs.size(), 1u);
    EXPECT_EQ(refs[0],
              json({{"apiVersion", "aiperf.nvidia.com/v1alpha1"},
                    {"kind", "AIPerfJob"},
                    {"name", "demo"},
                    {"uid", "1234-uid"},
                    {"controller", true},
                    {"blockOwnerDeletion", true}}));
  }
  const auto& js = (*objs)[3];
  const auto* uid = env_entry(container(js, 0, 0), "AIPERF_JOB_UID");
  ASSERT_NE(uid, nullptr);
  EXPECT_EQ((*uid)["value"], "1234-uid");
  EXPECT_EQ(env_entry(container(js, 1, 0), "AIPERF_JOB_UID"), nullptr);
}

TEST(manifests_rbac, binding_names_the_role_and_the_service_account) {
  auto d = sample();
  auto rb = role_binding(d);
  ASSERT_TRUE(rb);
  EXPECT_EQ((*rb)["roleRef"], json({{"apiGroup", "rbac.authorization.k8s.io"},
                                    {"kind", "Role"},
                                    {"name", "aiperf-demo-role"}}));
  EXPECT_EQ((*rb)["subjects"], json::array({{{"kind", "ServiceAccount"},
                                             {"name", "default"},
                                             {"namespace", "bench"}}}));
  d.service_account_name = "bench-sa";
  rb = role_binding(d);
  ASSERT_TRUE(rb);
  EXPECT_EQ((*rb)["subjects"][0]["name"], "bench-sa");
  EXPECT_EQ(pod_spec(built_jobset(d), 0)["serviceAccountName"], "bench-sa");
  EXPECT_EQ(pod_spec(built_jobset(d), 1)["serviceAccountName"], "bench-sa");
}

TEST(manifests_jobset, spec_shape) {
  auto js = built_jobset(sample());
  EXPECT_EQ(js["apiVersion"], "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(js["metadata"]["annotations"]["aiperf.nvidia.com/model"],
            "meta-llama/Llama-3.1-8B-Instruct, second");
  EXPECT_EQ(js["metadata"]["annotations"]["aiperf.nvidia.com/endpoint"],
            "http://<redacted>@vllm.llm.svc:8000/v1");
  const auto& spec = js["spec"];
  EXPECT_FALSE(spec.contains("suspend"));
  EXPECT_FALSE(spec.contains("failurePolicy"));
  EXPECT_EQ(spec["network"], json({{"enableDNSHostnames", true}}));
  EXPECT_EQ(spec["successPolicy"],
            json({{"operator", "All"}, {"targetReplicatedJobs", json::array({"controller"})}}));
  EXPECT_EQ(spec["ttlSecondsAfterFinished"], 28800);
  ASSERT_EQ(spec["replicatedJobs"].size(), 2u);
  const auto& ctl = spec["replicatedJobs"][0];
  const auto& wrk = spec["replicatedJobs"][1];
  EXPECT_EQ(ctl["name"], "controller");
  EXPECT_EQ(ctl["replicas"], 1);
  EXPECT_EQ(wrk["name"], "workers");
  EXPECT_EQ(wrk["replicas"], 1);
  const auto& cjob = ctl["template"]["spec"];
  EXPECT_EQ(cjob["parallelism"], 1);
  EXPECT_EQ(cjob["completions"], 1);
  EXPECT_EQ(cjob["completionMode"], "Indexed");
  EXPECT_EQ(cjob["backoffLimit"], 0);
  EXPECT_FALSE(cjob.contains("ttlSecondsAfterFinished"));
  const auto& wjob = wrk["template"]["spec"];
  EXPECT_EQ(wjob["backoffLimit"], 20);
  EXPECT_FALSE(wjob.contains("ttlSecondsAfterFinished"))
      << "a TTL-deleted worker Job is recreated while the JobSet runs";
  EXPECT_EQ(pod_spec(js, 0)["restartPolicy"], "Never");
  EXPECT_EQ(pod_spec(js, 1)["restartPolicy"], "OnFailure");
  const auto& cmeta = cjob["template"]["metadata"];
  EXPECT_EQ(cmeta["labels"], json({{"app", "aiperf"}, {"aiperf.nvidia.com/job-id", "demo"}}));
  EXPECT_EQ(cmeta["annotations"], json({{"prometheus.io/scrape", "true"},
                                        {"prometheus.io/port", "9090"},
                                        {"prometheus.io/path", "/metrics"}}));
  EXPECT_FALSE(wjob["template"]["metadata"].contains("annotations"));
}

TEST(manifests_jobset, ttl_given_and_keep_failed_pods) {
  auto d = sample();
  d.ttl_seconds_after_finished = 60;
  EXPECT_EQ(built_jobset(d)["spec"]["ttlSecondsAfterFinished"], 60);
  d.keep_failed_pods = true;
  auto js = built_jobset(d);
  EXPECT_FALSE(js["spec"].contains("ttlSecondsAfterFinished"));
  EXPECT_FALSE(js["spec"]["replicatedJobs"][1]["template"]["spec"].contains(
      "ttlSecondsAfterFinished"));
  d.keep_failed_pods = false;
  d.ttl_seconds_after_finished = -1;
  EXPECT_EQ(code_of(jobset(d, sample_run(), no_env())), errc::invalid_option);
}

TEST(manifests_jobset, queue_suspends_and_labels) {
  auto d = sample();
  d.queue_name = "team-a";
  d.priority_class = "high";
  auto js = built_jobset(d);
  EXPECT_EQ(js["spec"]["suspend"], true);
  EXPECT_EQ(js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "team-a");
  EXPECT_EQ(js["metadata"]["labels"]["kueue.x-k8s.io/priority-class"], "high");
  d.queue_name = "";
  EXPECT_EQ(code_of(validate(d)), errc::invalid_option);
}

TEST(manifests_jobset, controller_containers) {
  auto js = built_jobset(sample());
  const auto& containers = pod_spec(js, 0)["containers"];
  ASSERT_EQ(containers.size(), 2u);
  const auto& cp = containers[0];
  EXPECT_EQ(cp["name"], "control-plane");
  EXPECT_EQ(cp["image"], "aiperf-node:0.1.0");
  EXPECT_FALSE(cp.contains("imagePullPolicy"));
  EXPECT_EQ(cp["command"], json::array({"aiperf-node"}));
  EXPECT_EQ(cp["args"], json::array({"service", "--role", "controller", "--benchmark-run",
                                     "/etc/aiperf/run_config.json"}));
  std::vector<std::pair<std::string, int>> ports;
  for (const auto& p : cp["ports"])
    ports.emplace_back(p["name"], p["containerPort"]);
  EXPECT_EQ(ports, (std::vector<std::pair<std::string, int>>{{"health", 8080},
                                                            {"api", 9090},
                                                            {"control", 5667},
                                                            {"credit", 5668},
                                                            {"credit-return", 5669},
                                                            {"records", 5670}}));
  EXPECT_EQ(cp["startupProbe"]["httpGet"], json({{"path", "/healthz"}, {"port", "health"}}));
  EXPECT_EQ(cp["startupProbe"]["failureThreshold"], 30);
  EXPECT_EQ(cp["livenessProbe"]["httpGet"]["path"], "/healthz");
  EXPECT_EQ(cp["livenessProbe"]["initialDelaySeconds"], 5);
  EXPECT_EQ(cp["readinessProbe"]["httpGet"], json({{"path", "/readyz"}, {"port", "health"}}));

  const auto& sc = containers[1];
  EXPECT_EQ(sc["name"], "results-sidecar");
  EXPECT_EQ(sc["args"], json::array({"results-sidecar"}));
  EXPECT_EQ(sc["ports"], json::array({{{"name", "results"},
                                       {"containerPort", 9091},
                                       {"protocol", "TCP"}}}));
  EXPECT_EQ(sc["env"], json::array({{{"name", "AIPERF_RESULTS_DIR"}, {"value", "/results"}},
                                    {{"name", "AIPERF_RESULTS_SIDECAR_PORT"},
                                     {"value", "9091"}}}));
  EXPECT_EQ(sc["volumeMounts"],
            json::array({{{"name", "results"}, {"mountPath", "/results"}, {"readOnly", true}},
                         {{"name", "tmp"}, {"mountPath", "/tmp"}}}));
  EXPECT_EQ(sc["readinessProbe"]["httpGet"], json({{"path", "/readyz"}, {"port", "results"}}));
}

TEST(manifests_jobset, worker_container) {
  auto d = sample();
  d.image = "registry.local/aiperf-node:dev";
  d.image_pull_policy = "IfNotPresent";
  auto js = built_jobset(d);
  ASSERT_EQ(pod_spec(js, 1)["containers"].size(), 1u);
  const auto& w = container(js, 1, 0);
  EXPECT_EQ(w["name"], "workers");
  EXPECT_EQ(w["image"], "registry.local/aiperf-node:dev");
  EXPECT_EQ(w["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(container(js, 0, 1)["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(w["args"], json::array({"service", "--role", "worker", "--benchmark-run",
                                    "/etc/aiperf/run_config.json"}));
  EXPECT_EQ(w["ports"], json::array({{{"name", "health"},
                                      {"containerPort", 8080},
                                      {"protocol", "TCP"}}}));
  EXPECT_EQ(w["readinessProbe"]["httpGet"]["path"], "/readyz");
}

TEST(manifests_jobset, env_order_and_values) {
  auto d = sample();
  d.env = {{"LOG_FORMAT", "json"}, {"A_VAR", "1"}};
  d.env_from_secrets = {{"AIPERF_INJECTED_API_KEY", {"llm-api-key", "api-key"}},
                        {"AIPERF_INJECTED_HEADERS", {"llm-headers", "headers"}}};
  auto js = built_jobset(d);
  EXPECT_EQ(env_names(container(js, 0, 0)),
            (std::vector<std::string>{"AIPERF_DATASET_MMAP_BASE_PATH", "AIPERF_JOB_ID",
                                      "AIPERF_NAMESPACE", "HF_HOME", "LOG_FORMAT", "A_VAR",
                                      "AIPERF_INJECTED_API_KEY", "AIPERF_INJECTED_HEADERS"}));
  const auto& w = container(js, 1, 0);
  EXPECT_EQ(env_names(w),
            (std::vector<std::string>{"AIPERF_DATASET_MMAP_BASE_PATH", "AIPERF_JOB_ID",
                                      "AIPERF_NAMESPACE", "HF_HOME", "AIPERF_POD_INDEX",
                                      "AIPERF_K8S_ZMQ_CONTROLLER_HOST", "LOG_FORMAT", "A_VAR",
                                      "AIPERF_INJECTED_API_KEY", "AIPERF_INJECTED_HEADERS"}));
  EXPECT_EQ((*env_entry(w, "AIPERF_DATASET_MMAP_BASE_PATH"))["value"], "/aiperf/datasets");
  EXPECT_EQ((*env_entry(w, "AIPERF_JOB_ID"))["value"], "demo");
  EXPECT_EQ((*env_entry(w, "AIPERF_NAMESPACE"))["value"], "bench");
  EXPECT_EQ((*env_entry(w, "HF_HOME"))["value"], "/aiperf/hf_home");
  EXPECT_EQ((*env_entry(w, "AIPERF_POD_INDEX"))["valueFrom"],
            json({{"fieldRef",
                   {{"fieldPath", "metadata.labels['jobset.sigs.k8s.io/job-index']"}}}}));
  EXPECT_EQ((*env_entry(w, "AIPERF_K8S_ZMQ_CONTROLLER_HOST"))["value"],
            "aiperf-demo-controller-0-0.aiperf-demo.bench.svc.cluster.local");
  EXPECT_EQ((*env_entry(w, "AIPERF_INJECTED_API_KEY"))["valueFrom"],
            json({{"secretKeyRef", {{"name", "llm-api-key"}, {"key", "api-key"}}}}));
  EXPECT_FALSE(env_entry(w, "AIPERF_INJECTED_API_KEY")->contains("value"));
}

TEST(manifests_jobset, env_refusals) {
  auto d = sample();
  d.env = {{"AIPERF_JOB_ID", "x"}};
  auto r = validate(d);
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), errc::invalid_option));
  EXPECT_NE(error_message(r.error()).find("--env-vars 'AIPERF_JOB_ID'"), std::string::npos);
  d.env = {{"1BAD", "x"}};
  EXPECT_EQ(code_of(validate(d)), errc::invalid_option);
  d.env = {{"TOKEN", "x"}};
  d.env_from_secrets = {{"TOKEN", {"s", "k"}}};
  EXPECT_EQ(code_of(validate(d)), errc::invalid_option);
  d.env.clear();
  d.env_from_secrets = {{"TOKEN", {"s", ""}}};
  r = validate(d);
  ASSERT_FALSE(r);
  EXPECT_NE(error_message(r.error()).find("<secret>/<key>"), std::string::npos);
  d.env_from_secrets = {{"TOKEN", {"Not_A_Name", "k"}}};
  EXPECT_EQ(code_of(validate(d)), errc::invalid_option);
}

TEST(manifests_jobset, volumes_and_mounts) {
  auto d = sample();
  d.secret_mounts = {{"tls-ca", "/etc/tls", std::nullopt}, {"hf-token", "/etc/hf/token", "token"}};
  auto js = built_jobset(d);
  for (std::size_t job : {0u, 1u}) {
    const auto& vols = pod_spec(js, job)["volumes"];
    EXPECT_EQ(vols, json::array({{{"name", "config"}, {"configMap", {{"name", "aiperf-demo-config"}}}},
                                 {{"name", "ipc"}, {"emptyDir", json::object()}},
                                 {{"name", "results"}, {"emptyDir", json::object()}},
                                 {{"name", "datasets"}, {"emptyDir", json::object()}},
                                 {{"name", "tokenizer-cache"}, {"emptyDir", json::object()}},
                                 {{"name", "tmp"}, {"emptyDir", json::object()}},
                                 {{"name", "secret-tls-ca"}, {"secret", {{"secretName", "tls-ca"}}}},
                                 {{"name", "secret-hf-token"},
                                  {"secret", {{"secretName", "hf-token"}}}}}));
  }
  json want = json::array({{{"name", "config"}, {"mountPath", "/etc/aiperf"}, {"readOnly", true}},
                           {{"name", "ipc"}, {"mountPath", "/aiperf/ipc"}},
                           {{"name", "results"}, {"mountPath", "/results"}},
                           {{"name", "datasets"}, {"mountPath", "/aiperf/datasets"}},
                           {{"name", "tokenizer-cache"}, {"mountPath", "/aiperf/hf_home"}},
                           {{"name", "tmp"}, {"mountPath", "/tmp"}},
                           {{"name", "secret-tls-ca"}, {"mountPath", "/etc/tls"}, {"readOnly", true}},
                           {{"name", "secret-hf-token"},
                            {"mountPath", "/etc/hf/token"},
                            {"readOnly", true},
                            {"subPath", "token"}}});
  EXPECT_EQ(container(js, 0, 0)["volumeMounts"], want);
  EXPECT_EQ(container(js, 1, 0)["volumeMounts"], want);
}

TEST(manifests_jobset, secret_mount_refusals) {
  auto d = sample();
  d.secret_mounts = {{"a", "relative", std::nullopt}};
  EXPECT_EQ(code_of(validate(d)), errc::invalid_option);
  d.secret_mounts = {{"a", "/etc/a", std::nullopt}, {"a", "/etc/b", std::nullopt}};
  EXPECT_EQ(code_of(validate(d)), errc::invalid_option);
  d.secret_mounts = {{"a", "/results", std::nullopt}};
  EXPECT_EQ(code_of(validate(d)), errc::invalid_option);
  d.secret_mounts = {{"a.b", "/etc/a", std::nullopt}};
  EXPECT_EQ(code_of(validate(d)), errc::invalid_option);
  d.secret_mounts = {{"a", "/etc/a", "../x"}};
  EXPECT_EQ(code_of(validate(d)), errc::invalid_option);
}

TEST(manifests_jobset, security_contexts_are_restricted) {
  auto js = built_jobset(sample());
  json pod_sc = {{"runAsNonRoot", true},
                 {"runAsUser", 1000},
                 {"runAsGroup", 1000},
                 {"fsGroup", 1000},
                 {"seccompProfile", {{"type", "RuntimeDefault"}}}};
  json c_sc = {{"runAsNonRoot", true},
               {"runAsUser", 1000},
               {"runAsGroup", 1000},
               {"allowPrivilegeEscalation", false},
               {"readOnlyRootFilesystem", true},
               {"capabilities", {{"drop", json::array({"ALL"})}}},
               {"seccompProfile", {{"type", "RuntimeDefault"}}}};
  for (std::size_t job : {0u, 1u}) {
    EXPECT_EQ(pod_spec(js, job)["securityContext"], pod_sc);
    for (const auto& c : pod_spec(js, job)["containers"])
      EXPECT_EQ(c["securityContext"], c_sc) << c["name"];
  }
}

TEST(manifests_jobset, pod_template_fields) {
  auto d = sample();
  d.node_selector = {{"pool", "bench"}};
  d.tolerations = json::array({{{"key", "gpu"}, {"operator", "Exists"}}});
  d.affinity = {{"nodeAffinity", json::object()}};
  d.image_pull_secrets = {"regcred"};
  d.labels = {{"team", "perf"}};
  d.annotations = {{"note", "x"}};
  auto js = built_jobset(d);
  for (std::size_t job : {0u, 1u}) {
    const auto& spec = pod_spec(js, job);
    EXPECT_EQ(spec["nodeSelector"], json({{"pool", "bench"}}));
    EXPECT_EQ(spec["tolerations"], d.tolerations);
    EXPECT_EQ(spec["affinity"], d.affinity);
    EXPECT_EQ(spec["imagePullSecrets"], json::array({{{"name", "regcred"}}}));
    const auto& meta = js["spec"]["replicatedJobs"][job]["template"]["spec"]["template"]["metadata"];
    EXPECT_EQ(meta["labels"]["team"], "perf");
    EXPECT_EQ(meta["labels"]["app"], "aiperf");
    EXPECT_EQ(meta["annotations"]["note"], "x");
  }
  d.labels = {{"app", "other"}};
  EXPECT_EQ(code_of(validate(d)), errc::invalid_option);
  d.labels.clear();
  d.tolerations = json::object();
  EXPECT_EQ(code_of(validate(d)), errc::invalid_option);
  d.tolerations = json::array({"not-an-object"});
  EXPECT_EQ(code_of(validate(d)), errc::invalid_option);
  d.tolerations = json::array();
  d.image_pull_policy = "Sometimes";
  EXPECT_EQ(code_of(validate(d)), errc::invalid_option);
}

TEST(manifests_workers, pods_for_several_totals) {
  struct row {
    std::optional<int> total;
    int per;
    worker_layout want;
  };
  for (const auto& r : std::vector<row>{{std::nullopt, 10, {10, 10, 1}},
                                        {std::nullopt, 3, {12, 3, 4}},
                                        {std::nullopt, 20, {10, 10, 1}},
                                        {1, 10, {1, 1, 1}},
                                        {7, 10, {7, 7, 1}},
                                        {10, 10, {10, 10, 1}},
                                        {20, 10, {20, 10, 2}},
                                        {100, 10, {100, 10, 10}},
                                        {2, 1, {2, 1, 2}}}) {
    auto d = sample();
    d.total_workers = r.total;
    d.workers_per_pod = r.per;
    auto lay = worker_math(d);
    ASSERT_TRUE(lay) << error_message(lay.error());
    EXPECT_EQ(*lay, r.want) << r.total.value_or(-1) << "/" << r.per;
    EXPECT_EQ(built_jobset(d)["spec"]["replicatedJobs"][1]["replicas"], r.want.pods);
  }
}

TEST(manifests_workers, explicit_total_must_be_a_multiple) {
  auto d = sample();
  d.total_workers = 25;
  auto r = worker_math(d);
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), errc::invalid_workers));
  EXPECT_EQ(error_message(r.error()).rfind(
                "--total-workers 25 is not a multiple of --workers-per-pod 10: use 20 or 30", 0),
            0u)
      << error_message(r.error());
  EXPECT_EQ(code_of(jobset(d, sample_run(), no_env())), errc::invalid_workers);
  EXPECT_EQ(code_of(direct_mode_objects(d, sample_run(), no_env())), errc::invalid_workers);
  d.total_workers = 0;
  EXPECT_EQ(code_of(worker_math(d)), errc::invalid_workers);
  d.total_workers.reset();
  d.workers_per_pod = 0;
  EXPECT_EQ(code_of(worker_math(d)), errc::invalid_workers);
  d.workers_per_pod = 101;
  EXPECT_EQ(code_of(worker_math(d)), errc::invalid_workers);
}

TEST(manifests_resources, defaults_overrides_and_modes) {
  auto d = sample();
  auto figures = resources_from(no_env());
  ASSERT_TRUE(figures);
  auto js = built_jobset(d);
  const auto& cp = container(js, 0, 0);
  EXPECT_EQ(cp["resources"]["requests"]["cpu"], figures->controller.cpu);
  EXPECT_EQ(cp["resources"]["requests"]["memory"], figures->controller.memory);
  EXPECT_FALSE(cp["resources"].contains("limits"));
  EXPECT_EQ(container(js, 1, 0)["resources"]["requests"]["cpu"], figures->worker.cpu);

  auto env = env_of({{"AIPERF_K8S_WORKER_POD_CPU", "3350m"},
                     {"AIPERF_K8S_WORKER_POD_MEMORY", "6Gi"},
                     {"AIPERF_K8S_SYSTEM_CONTROLLER_CPU", "2"},
                     {"AIPERF_K8S_SYSTEM_CONTROLLER_MEMORY", "1.5Gi"}});
  d.resources = resource_mode::guaranteed;
  auto g = jobset(d, sample_run(), env);
  ASSERT_TRUE(g);
  json want_w = {{"cpu", "3350m"}, {"memory", "6Gi"}};
  EXPECT_EQ(container(*g, 1, 0)["resources"], json({{"requests", want_w}, {"limits", want_w}}));
  json want_c = {{"cpu", "2"}, {"memory", "1.5Gi"}};
  EXPECT_EQ(container(*g, 0, 0)["resources"], json({{"requests", want_c}, {"limits", want_c}}));
  EXPECT_TRUE(container(*g, 0, 1)["resources"].contains("limits"));

  d.resources = resource_mode::none;
  auto n = jobset(d, sample_run(), env);
  ASSERT_TRUE(n);
  for (std::size_t job : {0u, 1u})
    for (const auto& c : pod_spec(*n, job)["containers"])
      EXPECT_FALSE(c.contains("resources")) << c["name"];

  auto bad = jobset(d, sample_run(), env_of({{"AIPERF_K8S_WORKER_POD_MEMORY", "lots"}}));
  ASSERT_FALSE(bad);
  EXPECT_TRUE(is_error(bad.error(), errc::invalid_option));
  EXPECT_NE(error_message(bad.error()).find("AIPERF_K8S_WORKER_POD_MEMORY='lots'"),
            std::string::npos);
}

TEST(manifests_resources, mode_names) {
  for (auto m : {resource_mode::burstable, resource_mode::guaranteed, resource_mode::none})
    EXPECT_EQ(resource_mode_of(to_string(m)), m);
  EXPECT_EQ(resource_mode_of("Guaranteed"), std::nullopt);
  EXPECT_EQ(resource_mode_of(""), std::nullopt);
}

TEST(manifests_config_map, run_config_with_run_meta_and_worker_math) {
  auto d = sample();
  d.total_workers = 20;
  d.epoch_key = "1764633600";
  auto cm = config_map(d, sample_run());
  ASSERT_TRUE(cm) << error_message(cm.error());
  const std::string text = (*cm)["data"]["run_config.json"];
  EXPECT_NE(text.find("\n  \""), std::string::npos) << "2-space indent";
  auto body = json::parse(text);
  EXPECT_EQ(body["run_meta"], json({{"epoch_key", "1764633600"},
                                    {"job_name", "demo"},
                                    {"namespace", "bench"}}));
  EXPECT_EQ(body["runtime"]["worker_pods"], 2);
  EXPECT_EQ(body["runtime"]["workers_per_pod"], 10);
  EXPECT_EQ(body["runtime"]["workers_max"], 20);
  EXPECT_EQ(body["runtime"]["record_processors"], 4);
  EXPECT_EQ(body["output"]["output_artifact_dir"], "/results");
  EXPECT_EQ(body["endpoint"]["urls"], json::array({"http://<redacted>@vllm.llm.svc:8000/v1"}));
  EXPECT_EQ(body["endpoint"]["api_key"], "<redacted>");
  d.epoch_key.reset();
  auto unset = config_map(d, sample_run());
  ASSERT_TRUE(unset);
  EXPECT_TRUE(json::parse(std::string{(*unset)["data"]["run_config.json"]})["run_meta"]["epoch_key"]
                  .is_null());
}

TEST(manifests_config_map, refused_past_one_mebibyte) {
  auto d = sample();
  auto run = sample_run();
  auto base = config_map(d, run);
  ASSERT_TRUE(base);
  auto base_size = std::string{"run_config.json"}.size()
                   + (*base)["data"]["run_config.json"].get<std::string>().size();
  // Grow one model name so that key + value is exactly at the limit, then
  // one byte past it.
  auto grow = max_config_map_bytes - base_size;
  run.model_names[1] += std::string(grow, 'x');
  auto at = config_map(d, run);
  ASSERT_TRUE(at) << error_message(at.error());
  run.model_names[1] += "x";
  auto past = config_map(d, run);
  ASSERT_FALSE(past);
  EXPECT_TRUE(is_error(past.error(), errc::too_large));
  EXPECT_NE(error_message(past.error()).find("ConfigMap aiperf-demo-config"), std::string::npos);
  EXPECT_NE(error_message(past.error()).find("1048577 bytes"), std::string::npos);
  EXPECT_EQ(code_of(direct_mode_objects(d, run, no_env())), errc::too_large);
}

TEST(manifests_redaction, no_secret_value_in_any_object) {
  auto d = sample();
  d.env_from_secrets = {{"AIPERF_INJECTED_API_KEY", {"llm-api-key", "api-key"}}};
  auto objs = direct_mode_objects(d, sample_run(), no_env());
  ASSERT_TRUE(objs);
  std::string all;
  for (const auto& o : *objs)
    all += o.dump() + "\n";
  for (const char* secret : {api_key, header_value, url_password})
    EXPECT_EQ(all.find(secret), std::string::npos) << secret;
  // The ConfigMap's text is a JSON string inside the dump: check it raw too.
  std::string text = (*objs)[2]["data"]["run_config.json"];
  for (const char* secret : {api_key, header_value, url_password})
    EXPECT_EQ(text.find(secret), std::string::npos) << secret;
  EXPECT_NE(text.find("<redacted>"), std::string::npos);
}

TEST(manifests_redaction, url_user_info) {
  EXPECT_EQ(redact_url("http://u:p@h:1/x"), "http://<redacted>@h:1/x");
  EXPECT_EQ(redact_url("https://token@h"), "https://<redacted>@h");
  EXPECT_EQ(redact_url("http://h:1/x@y"), "http://h:1/x@y");
  EXPECT_EQ(redact_url("http://h:1"), "http://h:1");
  EXPECT_EQ(redact_url("u:p@h:1"), "<redacted>@h:1");
}

TEST(manifests_output, identical_input_identical_output) {
  auto a = direct_mode_objects(sample(), sample_run(), no_env());
  auto b = direct_mode_objects(sample(), sample_run(), no_env());
  ASSERT_TRUE(a && b);
  EXPECT_EQ(json(*a).dump(), json(*b).dump());
}

namespace {

// The checks of the `restricted` Pod Security Standard
// (kubernetes.io/docs/concepts/security/pod-security-standards) that a
// pod spec can fail; returns what fails.
std::vector<std::string> restricted_violations(const json& spec) {
  std::vector<std::string> out;
  for (auto host : {"hostNetwork", "hostPID", "hostIPC"})
    if (spec.value(host, false))
      out.push_back(host);
  static const std::set<std::string> allowed_volumes{
      "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
      "projected", "secret"};
  for (const auto& v : spec["volumes"])
    for (const auto& [key, value] : v.items())
      if (key != "name" && !allowed_volumes.count(key))
        out.push_back("volume " + std::string{v["name"]} + " of type " + key);
  const json pod_sc = spec.value("securityContext", json::object());
  auto seccomp_ok = [](const json& sc) {
    auto type = sc.value("seccompProfile", json::object()).value("type", "");
    return type == "RuntimeDefault" || type == "Localhost";
  };
  for (const auto& c : spec["containers"]) {
    std::string name = c["name"];
    const json sc = c.value("securityContext", json::object());
    if (sc.value("privileged", false))
      out.push_back(name + ": privileged");
    if (sc.value("allowPrivilegeEscalation", true))
      out.push_back(name + ": allowPrivilegeEscalation not false");
    if (!sc.value("runAsNonRoot", pod_sc.value("runAsNonRoot", false)))
      out.push_back(name + ": runAsNonRoot not true");
    if (sc.value("runAsUser", pod_sc.value("runAsUser", 1)) == 0)
      out.push_back(name + ": runAsUser 0");
    if (!seccomp_ok(sc) && !seccomp_ok(pod_sc))
      out.push_back(name + ": no RuntimeDefault seccomp profile");
    auto caps = sc.value("capabilities", json::object());
    auto drop = caps.value("drop", json::array());
    if (std::find(drop.begin(), drop.end(), "ALL") == drop.end())
      out.push_back(name + ": capabilities do not drop ALL");
    for (const auto& add : caps.value("add", json::array()))
      if (add != "NET_BIND_SERVICE")
        out.push_back(name + ": adds capability " + std::string{add});
    for (const auto& p : c.value("ports", json::array()))
      if (p.contains("hostPort"))
        out.push_back(name + ": hostPort");
  }
  return out;
}

} // namespace

TEST(manifests_jobset, pods_meet_the_restricted_pod_security_standard) {
  auto d = sample();
  d.secret_mounts = {{"tls-ca", "/etc/tls", std::nullopt}};
  auto js = built_jobset(d);
  for (std::size_t job : {0u, 1u})
    EXPECT_EQ(restricted_violations(pod_spec(js, job)), std::vector<std::string>{}) << job;
  // The checker itself finds a violation.
  auto spec = pod_spec(js, 1);
  spec["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = true;
  spec["volumes"].push_back({{"name", "h"}, {"hostPath", {{"path", "/"}}}});
  EXPECT_EQ(restricted_violations(spec).size(), 2u);
}

TEST(manifests_config_map, run_config_reads_back_as_the_pods_configuration) {
  auto d = sample();
  d.total_workers = 20;
  auto run = sample_run();
  run.urls = {"http://vllm.llm.svc:8000"};
  auto text = run_config_json(d, run);
  ASSERT_TRUE(text) << error_message(text.error());
  auto body = json::parse(*text);
  // run_meta is for the pod runtime's templates, not a profile setting.
  ASSERT_TRUE(body.contains("run_meta"));
  body.erase("run_meta");
  auto back = config::from_json(body.dump());
  ASSERT_TRUE(back) << error_message(back.error());
  EXPECT_EQ(back->model_names, run.model_names);
  EXPECT_EQ(back->urls, run.urls);
  EXPECT_EQ(back->worker_pods, 2);
  EXPECT_EQ(back->workers_per_pod, 10);
  EXPECT_EQ(back->workers_max, 20);
  EXPECT_EQ(back->api_key, std::string{config::redacted});
  ASSERT_EQ(back->headers.size(), 1u);
  EXPECT_EQ(back->headers[0].value, std::string{config::redacted});
}
