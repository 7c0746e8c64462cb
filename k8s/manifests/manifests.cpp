#include "k8s/manifests/manifests.hpp"

#include "config/profile/profile_json.hpp"
#include "proto/redact.hpp"

#include <algorithm>
#include <array>
#include <set>

namespace aiperf::k8s::manifests {

namespace {

// -- AIPerf's fixed names and values (github.com/ai-dynamo/aiperf,
//    src/aiperf/kubernetes) ---------------------------------------------------

constexpr std::string_view app_label = "app";
constexpr std::string_view app_value = "aiperf";
constexpr std::string_view queue_label = "kueue.x-k8s.io/queue-name";
constexpr std::string_view priority_label = "kueue.x-k8s.io/priority-class";
constexpr std::string_view model_annotation = "aiperf.nvidia.com/model";
constexpr std::string_view endpoint_annotation = "aiperf.nvidia.com/endpoint";
constexpr std::string_view job_index_label = "jobset.sigs.k8s.io/job-index";
constexpr std::string_view run_config_key = "run_config.json";
constexpr std::string_view run_config_path = "/etc/aiperf/run_config.json";
constexpr std::string_view datasets_path = "/aiperf/datasets";
constexpr std::string_view hf_home_path = "/aiperf/hf_home";
constexpr std::string_view results_path = "/results";
constexpr std::int64_t controller_backoff_limit = 0;
constexpr std::int64_t worker_backoff_limit = 20;
constexpr int max_workers_per_pod = 100;

// Our ports (proto/ports.hpp defaults, the values `service` uses in a pod
// unless AIPERF_K8S_PORT_<NAME> says otherwise).
constexpr int health_port = 8080;
constexpr int api_port = 9090;
constexpr int results_sidecar_port = 9091;
struct named_port {
  std::string_view name;
  int port;
};
constexpr std::array<named_port, 4> zmq_ports{{
    {"control", 5667},
    {"credit", 5668},
    {"credit-return", 5669},
    {"records", 5670},
}};

// Our measured defaults (docs/kubernetes.md, "Resources").
constexpr std::string_view default_controller_cpu = "250m";
constexpr std::string_view default_controller_memory = "512Mi";
constexpr std::string_view default_worker_cpu = "250m";
constexpr std::string_view default_worker_memory = "256Mi";
// The sidecar serves files only; not part of the controller figure.
constexpr std::string_view sidecar_cpu = "10m";
constexpr std::string_view sidecar_memory = "32Mi";

caf::error bad(errc code, std::string message) {
  return make_error(code, std::move(message));
}

bool is_dns_label(std::string_view s, std::size_t max) {
  if (s.empty() || s.size() > max)
    return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back()))
    return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

bool is_dns_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253)
    return false;
  std::size_t start = 0;
  while (true) {
    auto dot = s.find('.', start);
    auto part = s.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (!is_dns_label(part, 63))
      return false;
    if (dot == std::string_view::npos)
      return true;
    start = dot + 1;
  }
}

// Kubernetes accepts env names of [-._a-zA-Z][-._a-zA-Z0-9]*.
bool is_env_name(std::string_view s) {
  if (s.empty())
    return false;
  auto ok = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-' || c == '.'
           || (!first && c >= '0' && c <= '9');
  };
  if (!ok(s.front(), true))
    return false;
  return std::all_of(s.begin() + 1, s.end(), [&](char c) { return ok(c, false); });
}

// A Kubernetes quantity as people write them: digits, an optional
// fraction, an optional suffix (no exponent form).
bool is_quantity(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    auto from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9')
      ++i;
    return i > from;
  };
  if (!digits())
    return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits())
      return false;
  }
  static const std::set<std::string_view> suffixes{"",  "m",  "k",  "M",  "G",  "T",  "P", "E",
                                                   "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  return suffixes.count(s.substr(i)) > 0;
}

bool reserved_env(std::string_view name) {
  static const std::set<std::string_view> names{
      "AIPERF_DATASET_MMAP_BASE_PATH", "AIPERF_JOB_ID", "AIPERF_NAMESPACE",
      "AIPERF_JOB_UID",                "HF_HOME",       "AIPERF_POD_INDEX",
      "AIPERF_K8S_ZMQ_CONTROLLER_HOST"};
  return names.count(name) > 0;
}

json object_labels(const deployment& d) {
  json labels = json::object();
  labels[std::string{app_label}] = app_value;
  labels[std::string{job_id_label}] = d.name;
  return labels;
}

json metadata(const deployment& d, std::string name) {
  json meta = json::object();
  meta["name"] = std::move(name);
  meta["namespace"] = d.ns;
  meta["labels"] = object_labels(d);
  if (d.job_uid)
    meta["ownerReferences"] = json::array({{{"apiVersion", "aiperf.nvidia.com/v1alpha1"},
                                            {"kind", "AIPerfJob"},
                                            {"name", d.name},
                                            {"uid", *d.job_uid},
                                            {"controller", true},
                                            {"blockOwnerDeletion", true}}});
  return meta;
}

json env_value(std::string_view name, std::string_view value) {
  return {{"name", name}, {"value", value}};
}

json http_probe(std::string_view path, std::string_view port, int initial_delay, int period,
                int failure_threshold) {
  return {{"httpGet", {{"path", path}, {"port", port}}},
          {"initialDelaySeconds", initial_delay},
          {"periodSeconds", period},
          {"timeoutSeconds", 5},
          {"failureThreshold", failure_threshold},
          {"successThreshold", 1}};
}

// AIPerf's AIPERF_K8S_HEALTH_* defaults.
void add_probes(json& c, std::string_view port) {
  c["startupProbe"] = http_probe("/healthz", port, 0, 5, 30);
  c["livenessProbe"] = http_probe("/healthz", port, 5, 10, 10);
  c["readinessProbe"] = http_probe("/readyz", port, 5, 10, 10);
}

json container_security_context() {
  return {{"runAsNonRoot", true},
          {"runAsUser", 1000},
          {"runAsGroup", 1000},
          {"allowPrivilegeEscalation", false},
          {"readOnlyRootFilesystem", true},
          {"capabilities", {{"drop", json::array({"ALL"})}}},
          {"seccompProfile", {{"type", "RuntimeDefault"}}}};
}

json pod_security_context() {
  return {{"runAsNonRoot", true},
          {"runAsUser", 1000},
          {"runAsGroup", 1000},
          {"fsGroup", 1000},
          {"seccompProfile", {{"type", "RuntimeDefault"}}}};
}

json resources_of(resource_mode mode, std::string_view cpu, std::string_view memory) {
  json req = {{"cpu", cpu}, {"memory", memory}};
  json out = {{"requests", req}};
  if (mode == resource_mode::guaranteed)
    out["limits"] = req;
  return out;
}

json port(std::string_view name, int number) {
  return {{"name", name}, {"containerPort", number}, {"protocol", "TCP"}};
}

json volumes(const deployment& d) {
  json v = json::array();
  v.push_back({{"name", "config"}, {"configMap", {{"name", config_map_name(d.name)}}}});
  for (auto name : {"ipc", "results", "datasets", "tokenizer-cache", "tmp"})
    v.push_back({{"name", name}, {"emptyDir", json::object()}});
  for (const auto& m : d.secret_mounts)
    v.push_back({{"name", "secret-" + m.name}, {"secret", {{"secretName", m.name}}}});
  return v;
}

json service_mounts(const deployment& d) {
  json v = json::array();
  v.push_back({{"name", "config"}, {"mountPath", "/etc/aiperf"}, {"readOnly", true}});
  v.push_back({{"name", "ipc"}, {"mountPath", "/aiperf/ipc"}});
  v.push_back({{"name", "results"}, {"mountPath", results_path}});
  v.push_back({{"name", "datasets"}, {"mountPath", datasets_path}});
  v.push_back({{"name", "tokenizer-cache"}, {"mountPath", hf_home_path}});
  v.push_back({{"name", "tmp"}, {"mountPath", "/tmp"}});
  for (const auto& m : d.secret_mounts) {
    json mount = {{"name", "secret-" + m.name}, {"mountPath", m.mount_path}, {"readOnly", true}};
    if (m.sub_path)
      mount["subPath"] = *m.sub_path;
    v.push_back(std::move(mount));
  }
  return v;
}

// §3.5 order: ours, then the user's plain env, then the Secret-backed env.
json service_env(const deployment& d, bool controller) {
  json env = json::array();
  env.push_back(env_value("AIPERF_DATASET_MMAP_BASE_PATH", datasets_path));
  env.push_back(env_value("AIPERF_JOB_ID", d.name));
  env.push_back(env_value("AIPERF_NAMESPACE", d.ns));
  if (controller && d.job_uid)
    env.push_back(env_value("AIPERF_JOB_UID", *d.job_uid));
  env.push_back(env_value("HF_HOME", hf_home_path));
  if (!controller) {
    env.push_back(
        {{"name", "AIPERF_POD_INDEX"},
         {"valueFrom",
          {{"fieldRef",
            {{"fieldPath", "metadata.labels['" + std::string{job_index_label} + "']"}}}}}});
    env.push_back(env_value("AIPERF_K8S_ZMQ_CONTROLLER_HOST", controller_host(d.name, d.ns)));
  }
  for (const auto& [name, value] : d.env)
    env.push_back(env_value(name, value));
  for (const auto& [name, ref] : d.env_from_secrets)
    env.push_back({{"name", name},
                   {"valueFrom", {{"secretKeyRef", {{"name", ref.secret}, {"key", ref.key}}}}}});
  return env;
}

json base_container(const deployment& d, std::string_view name) {
  json c = json::object();
  c["name"] = name;
  c["image"] = d.image;
  if (d.image_pull_policy)
    c["imagePullPolicy"] = *d.image_pull_policy;
  return c;
}

json pod_template(const deployment& d, bool controller, json containers) {
  json labels = object_labels(d);
  for (const auto& [k, v] : d.labels)
    labels[k] = v;
  json annotations = json::object();
  if (controller) {
    annotations["prometheus.io/scrape"] = "true";
    annotations["prometheus.io/port"] = std::to_string(api_port);
    annotations["prometheus.io/path"] = "/metrics";
  }
  for (const auto& [k, v] : d.annotations)
    annotations[k] = v;
  json meta = {{"labels", labels}};
  if (!annotations.empty())
    meta["annotations"] = annotations;

  json spec = json::object();
  spec["restartPolicy"] = controller ? "Never" : "OnFailure";
  if (d.service_account_name)
    spec["serviceAccountName"] = *d.service_account_name;
  spec["securityContext"] = pod_security_context();
  if (!d.node_selector.empty()) {
    json sel = json::object();
    for (const auto& [k, v] : d.node_selector)
      sel[k] = v;
    spec["nodeSelector"] = sel;
  }
  if (!d.tolerations.empty())
    spec["tolerations"] = d.tolerations;
  if (!d.affinity.is_null())
    spec["affinity"] = d.affinity;
  if (!d.image_pull_secrets.empty()) {
    json secrets = json::array();
    for (const auto& s : d.image_pull_secrets)
      secrets.push_back({{"name", s}});
    spec["imagePullSecrets"] = secrets;
  }
  spec["containers"] = std::move(containers);
  spec["volumes"] = volumes(d);
  return {{"metadata", meta}, {"spec", spec}};
}

json replicated_job(std::string_view name, int replicas, std::int64_t backoff,
                    std::optional<std::int64_t> ttl, json pod) {
  json job = {{"parallelism", 1},
              {"completions", 1},
              {"completionMode", "Indexed"},
              {"backoffLimit", backoff}};
  if (ttl)
    job["ttlSecondsAfterFinished"] = *ttl;
  job["template"] = std::move(pod);
  return {{"name", name}, {"replicas", replicas}, {"template", {{"spec", job}}}};
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty())
      out += sep;
    out += p;
  }
  return out;
}

caf::expected<void> check_name(const deployment& d) {
  if (!is_dns_label(d.name, max_name_length))
    return bad(errc::invalid_name,
               "--name '" + d.name + "': must be a DNS label of at most "
                   + std::to_string(max_name_length)
                   + " characters (lowercase letters, digits and '-', starting and ending "
                     "with a letter or digit), because pod names append "
                     "'-controller-0-0-xxxxx' to aiperf-<name>");
  if (!is_dns_label(d.ns, 63))
    return bad(errc::invalid_option,
               "--namespace '" + d.ns + "': must be a DNS label (lowercase letters, digits, '-')");
  return {};
}

caf::expected<void> check_env(const deployment& d) {
  std::set<std::string> seen;
  auto check = [&](const std::string& name, std::string_view flag) -> caf::expected<void> {
    if (!is_env_name(name))
      return bad(errc::invalid_option,
                 std::string{flag} + " '" + name
                     + "': not a valid environment variable name (letters, digits, '_', '-', "
                       "'.', not starting with a digit)");
    if (reserved_env(name))
      return bad(errc::invalid_option,
                 std::string{flag} + " '" + name
                     + "': aiperf-node sets this variable in every pod; remove it");
    if (!seen.insert(name).second)
      return bad(errc::invalid_option,
                 std::string{flag} + " '" + name
                     + "': given twice (in --env-vars and --env-from-secrets); keep one");
    return {};
  };
  for (const auto& [name, value] : d.env)
    if (auto ok = check(name, "--env-vars"); !ok)
      return ok;
  for (const auto& [name, ref] : d.env_from_secrets) {
    if (auto ok = check(name, "--env-from-secrets"); !ok)
      return ok;
    if (!is_dns_subdomain(ref.secret) || ref.key.empty())
      return bad(errc::invalid_option,
                 "--env-from-secrets " + name + "=" + ref.secret + "/" + ref.key
                     + ": expected <secret>/<key> with a Secret name (DNS subdomain) and a "
                       "non-empty key, e.g. llm-api-key/api-key");
  }
  return {};
}

caf::expected<void> check_mounts(const deployment& d) {
  std::set<std::string> names;
  std::set<std::string> paths{"/etc/aiperf", "/aiperf/ipc", "/results", "/aiperf/datasets",
                              "/aiperf/hf_home", "/tmp"};
  for (const auto& m : d.secret_mounts) {
    // The volume is `secret-<name>`, a DNS label of at most 63 characters.
    if (!is_dns_label(m.name, 63 - 7))
      return bad(errc::invalid_option,
                 "--secret-mounts name '" + m.name
                     + "': must be a Secret name that is a DNS label of at most 56 characters "
                       "(the volume is secret-<name>)");
    if (!names.insert(m.name).second)
      return bad(errc::invalid_option,
                 "--secret-mounts name '" + m.name + "': mounted twice; give each Secret once");
    if (m.mount_path.empty() || m.mount_path.front() != '/')
      return bad(errc::invalid_option, "--secret-mounts " + m.name + " mount_path '"
                                           + m.mount_path + "': must be an absolute path");
    if (!paths.insert(m.mount_path).second)
      return bad(errc::invalid_option,
                 "--secret-mounts " + m.name + " mount_path '" + m.mount_path
                     + "': already mounted (by aiperf-node or another secret); pick another "
                       "path");
    if (m.sub_path && (m.sub_path->empty() || m.sub_path->front() == '/'
                       || m.sub_path->find("..") != std::string::npos))
      return bad(errc::invalid_option, "--secret-mounts " + m.name + " sub_path '" + *m.sub_path
                                           + "': must be a relative path without '..'");
  }
  return {};
}

caf::expected<void> check_pod_fields(const deployment& d) {
  if (d.image.empty() || d.image.find_first_of(" \t\r\n") != std::string::npos)
    return bad(errc::invalid_option,
               "--image '" + d.image + "': must be a non-empty image reference without spaces");
  if (d.image_pull_policy && *d.image_pull_policy != "Always"
      && *d.image_pull_policy != "IfNotPresent" && *d.image_pull_policy != "Never")
    return bad(errc::invalid_option, "--image-pull-policy '" + *d.image_pull_policy
                                         + "': must be Always, IfNotPresent or Never");
  if (d.ttl_seconds_after_finished && *d.ttl_seconds_after_finished < 0)
    return bad(errc::invalid_option, "--ttl-seconds "
                                         + std::to_string(*d.ttl_seconds_after_finished)
                                         + ": must be 0 or more");
  if (!d.tolerations.is_array()
      || !std::all_of(d.tolerations.begin(), d.tolerations.end(),
                      [](const json& t) { return t.is_object(); }))
    return bad(errc::invalid_option,
               "--tolerations: must be a JSON array of Toleration objects, e.g. "
               "'[{\"key\":\"gpu\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]'");
  if (!d.affinity.is_null() && !d.affinity.is_object())
    return bad(errc::invalid_option, "podTemplate.affinity: must be a JSON object (an Affinity)");
  for (const auto& s : d.image_pull_secrets)
    if (!is_dns_subdomain(s))
      return bad(errc::invalid_option, "--image-pull-secrets '" + s
                                           + "': must be a Secret name (DNS subdomain)");
  if (d.service_account_name && !is_dns_subdomain(*d.service_account_name))
    return bad(errc::invalid_option, "--service-account '" + *d.service_account_name
                                         + "': must be a ServiceAccount name (DNS subdomain)");
  if (d.queue_name && d.queue_name->empty())
    return bad(errc::invalid_option, "--queue-name: must not be empty (omit it for no queue)");
  if (d.priority_class && d.priority_class->empty())
    return bad(errc::invalid_option,
               "--priority-class: must not be empty (omit it for no priority class)");
  for (const auto& [k, v] : d.labels)
    if (k == app_label || k == job_id_label || k.rfind("jobset.sigs.k8s.io/", 0) == 0)
      return bad(errc::invalid_option,
                 "--labels '" + k + "': aiperf-node or the JobSet controller sets this label; "
                                    "remove it");
  for (const auto& [k, v] : d.node_selector)
    if (k.empty())
      return bad(errc::invalid_option, "--node-selector: a key is empty");
  if (d.job_uid && d.job_uid->empty())
    return bad(errc::invalid_option, "AIPerfJob uid: must not be empty when set");
  return {};
}

} // namespace

// -- names --------------------------------------------------------------------

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::invalid_name:
      return "invalid_name";
    case errc::invalid_workers:
      return "invalid_workers";
    case errc::invalid_option:
      return "invalid_option";
    case errc::too_large:
      return "too_large";
  }
  return "unknown";
}

const char* to_string(resource_mode x) noexcept {
  switch (x) {
    case resource_mode::burstable:
      return "burstable";
    case resource_mode::guaranteed:
      return "guaranteed";
    case resource_mode::none:
      return "none";
  }
  return "unknown";
}

std::optional<resource_mode> resource_mode_of(std::string_view text) noexcept {
  for (auto m : {resource_mode::burstable, resource_mode::guaranteed, resource_mode::none})
    if (text == to_string(m))
      return m;
  return std::nullopt;
}

std::string jobset_name(std::string_view name) {
  return "aiperf-" + std::string{name};
}

std::string role_name(std::string_view name) {
  return jobset_name(name) + "-role";
}

std::string role_binding_name(std::string_view name) {
  return jobset_name(name) + "-binding";
}

std::string config_map_name(std::string_view name) {
  return jobset_name(name) + "-config";
}

std::string controller_host(std::string_view name, std::string_view ns) {
  auto js = jobset_name(name);
  return js + "-controller-0-0." + js + "." + std::string{ns} + ".svc.cluster.local";
}

std::string redact_url(std::string_view url) {
  return proto::redact_url(url);
}

// -- checks -------------------------------------------------------------------

caf::expected<worker_layout> worker_math(const deployment& d) {
  if (d.workers_per_pod < 1 || d.workers_per_pod > max_workers_per_pod)
    return bad(errc::invalid_workers, "--workers-per-pod " + std::to_string(d.workers_per_pod)
                                          + ": must be 1 to "
                                          + std::to_string(max_workers_per_pod));
  worker_layout out;
  auto per = d.workers_per_pod;
  if (d.total_workers) {
    auto total = *d.total_workers;
    if (total < 1)
      return bad(errc::invalid_workers,
                 "--total-workers " + std::to_string(total) + ": must be at least 1");
    if (total <= per) {
      out = {total, total, 1};
    } else if (total % per != 0) {
      auto lower = total / per * per;
      return bad(errc::invalid_workers,
                 "--total-workers " + std::to_string(total) + " is not a multiple of "
                     + "--workers-per-pod " + std::to_string(per) + ": use "
                     + std::to_string(lower) + " or " + std::to_string(lower + per)
                     + ", or change --workers-per-pod (every worker pod runs the same number "
                       "of workers)");
    } else {
      out = {total, per, total / per};
    }
    return out;
  }
  // A defaulted total is rounded up to whole pods (AIPerf).
  auto total = default_total_workers;
  if (total <= per)
    return worker_layout{total, total, 1};
  auto pods = (total + per - 1) / per;
  return worker_layout{pods * per, per, pods};
}

caf::expected<void> validate(const deployment& d) {
  if (auto ok = check_name(d); !ok)
    return ok;
  if (auto lay = worker_math(d); !lay)
    return lay.error();
  if (auto ok = check_pod_fields(d); !ok)
    return ok;
  if (auto ok = check_env(d); !ok)
    return ok;
  return check_mounts(d);
}

caf::expected<resource_figures> resources_from(const env_lookup& env) {
  resource_figures out{{std::string{default_controller_cpu},
                        std::string{default_controller_memory}},
                       {std::string{default_worker_cpu}, std::string{default_worker_memory}}};
  struct source {
    std::string_view var;
    std::string* into;
  };
  std::array<source, 4> sources{{
      {"AIPERF_K8S_SYSTEM_CONTROLLER_CPU", &out.controller.cpu},
      {"AIPERF_K8S_SYSTEM_CONTROLLER_MEMORY", &out.controller.memory},
      {"AIPERF_K8S_WORKER_POD_CPU", &out.worker.cpu},
      {"AIPERF_K8S_WORKER_POD_MEMORY", &out.worker.memory},
  }};
  for (auto& s : sources) {
    auto v = env ? env(s.var) : std::nullopt;
    if (!v || v->empty())
      continue;
    if (!is_quantity(*v))
      return bad(errc::invalid_option,
                 std::string{s.var} + "='" + *v
                     + "': not a Kubernetes quantity (e.g. 500m or 2 for CPU, 512Mi or 4Gi "
                       "for memory)");
    *s.into = *v;
  }
  return out;
}

// -- objects ------------------------------------------------------------------

json role_rules() {
  auto rule = [](std::string_view group, std::vector<std::string> resources,
                 std::vector<std::string> verbs) {
    return json{{"apiGroups", json::array({group})},
                {"resources", resources},
                {"verbs", verbs}};
  };
  const std::vector<std::string> read{"get", "list", "watch"};
  const std::vector<std::string> read_patch{"get", "list", "watch", "patch"};
  return json::array({
      rule("aiperf.nvidia.com", {"aiperfjobs", "aiperfjobs/status"}, read_patch),
      rule("", {"configmaps"}, read),
      rule("", {"pods", "pods/log"}, read),
      rule("", {"services", "endpoints"}, read),
      rule("", {"events"}, read),
      rule("batch", {"jobs"}, read),
      rule("jobset.x-k8s.io", {"jobsets"}, read_patch),
      rule("jobset.x-k8s.io", {"jobsets/status"}, read),
  });
}

caf::expected<json> role(const deployment& d) {
  if (auto ok = check_name(d); !ok)
    return ok.error();
  return json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
              {"kind", "Role"},
              {"metadata", metadata(d, role_name(d.name))},
              {"rules", role_rules()}};
}

caf::expected<json> role_binding(const deployment& d) {
  if (auto ok = check_name(d); !ok)
    return ok.error();
  if (auto ok = check_pod_fields(d); !ok)
    return ok.error();
  return json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
              {"kind", "RoleBinding"},
              {"metadata", metadata(d, role_binding_name(d.name))},
              {"roleRef",
               {{"apiGroup", "rbac.authorization.k8s.io"},
                {"kind", "Role"},
                {"name", role_name(d.name)}}},
              {"subjects", json::array({{{"kind", "ServiceAccount"},
                                         {"name", d.service_account_name.value_or("default")},
                                         {"namespace", d.ns}}})}};
}

caf::expected<std::string> run_config_json(const deployment& d,
                                           const config::profile_config& run) {
  if (auto ok = validate(d); !ok)
    return ok.error();
  auto lay = worker_math(d);
  auto cfg = run;
  cfg.workers_max = lay->total_workers;
  cfg.workers_per_pod = lay->workers_per_pod;
  cfg.worker_pods = lay->pods;
  if (!cfg.record_processors || *cfg.record_processors % lay->pods != 0)
    cfg.record_processors = std::max(1, lay->workers_per_pod / 4) * lay->pods;
  // The pod's artifacts go to the results volume the sidecar serves.
  cfg.output_artifact_dir = std::string{results_path};
  json body;
  try {
    body = json::parse(config::to_json(cfg, true));
  } catch (const json::exception& e) {
    return bad(errc::invalid_option, std::string{"the run configuration did not serialize: "}
                                         + e.what());
  }
  // URL user-info is a secret too; the real URLs travel through
  // AIPERF_INJECTED_ENDPOINT_URLS.
  if (auto ep = body.find("endpoint"); ep != body.end()) {
    if (auto urls = ep->find("urls"); urls != ep->end() && urls->is_array())
      for (auto& u : *urls)
        if (u.is_string())
          u = redact_url(u.get<std::string>());
  }
  if (d.user_files.is_array() && !d.user_files.empty())
    body["artifacts"] = {{"user_files", d.user_files}};
  body["run_meta"] = {{"epoch_key", d.epoch_key ? json(*d.epoch_key) : json(nullptr)},
                      {"job_name", d.name},
                      {"namespace", d.ns}};
  return body.dump(2);
}

caf::expected<json> config_map(const deployment& d, const config::profile_config& run) {
  auto text = run_config_json(d, run);
  if (!text)
    return text.error();
  auto size = run_config_key.size() + text->size();
  if (size > max_config_map_bytes)
    return bad(errc::too_large,
               "ConfigMap " + config_map_name(d.name) + ": run_config.json makes it "
                   + std::to_string(size) + " bytes, above the Kubernetes limit of "
                   + std::to_string(max_config_map_bytes)
                   + " bytes (key + value): shrink the configuration, e.g. pass large "
                     "prompts or payloads through --input-file instead of inline flags");
  json data = json::object();
  data[std::string{run_config_key}] = std::move(*text);
  return json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", metadata(d, config_map_name(d.name))},
              {"data", std::move(data)}};
}

caf::expected<json> jobset(const deployment& d, const config::profile_config& run,
                           const env_lookup& env) {
  if (auto ok = validate(d); !ok)
    return ok.error();
  auto figures = resources_from(env);
  if (!figures)
    return figures.error();
  auto lay = worker_math(d);

  // Controller pod: the controller process and the results sidecar.
  json control = base_container(d, "control-plane");
  control["command"] = json::array({"aiperf-node"});
  control["args"] = json::array(
      {"service", "--role", "controller", "--benchmark-run", std::string{run_config_path}});
  json ports = json::array({port("health", health_port), port("api", api_port)});
  for (const auto& p : zmq_ports)
    ports.push_back(port(p.name, p.port));
  control["ports"] = ports;
  control["env"] = service_env(d, true);
  if (d.resources != resource_mode::none)
    control["resources"]
        = resources_of(d.resources, figures->controller.cpu, figures->controller.memory);
  control["volumeMounts"] = service_mounts(d);
  add_probes(control, "health");
  control["securityContext"] = container_security_context();

  json sidecar = base_container(d, "results-sidecar");
  sidecar["command"] = json::array({"aiperf-node"});
  sidecar["args"] = json::array({"results-sidecar"});
  sidecar["ports"] = json::array({port("results", results_sidecar_port)});
  sidecar["env"] = json::array({env_value("AIPERF_RESULTS_DIR", results_path),
                                env_value("AIPERF_RESULTS_SIDECAR_PORT",
                                          std::to_string(results_sidecar_port))});
  if (d.resources != resource_mode::none)
    sidecar["resources"] = resources_of(d.resources, sidecar_cpu, sidecar_memory);
  sidecar["volumeMounts"]
      = json::array({{{"name", "results"}, {"mountPath", results_path}, {"readOnly", true}},
                     {{"name", "tmp"}, {"mountPath", "/tmp"}}});
  add_probes(sidecar, "results");
  sidecar["securityContext"] = container_security_context();

  // Worker pod: one process running workers_per_pod workers (the count is
  // in run_config.json).
  json workers = base_container(d, "workers");
  workers["command"] = json::array({"aiperf-node"});
  workers["args"] = json::array(
      {"service", "--role", "worker", "--benchmark-run", std::string{run_config_path}});
  workers["ports"] = json::array({port("health", health_port)});
  workers["env"] = service_env(d, false);
  if (d.resources != resource_mode::none)
    workers["resources"] = resources_of(d.resources, figures->worker.cpu, figures->worker.memory);
  workers["volumeMounts"] = service_mounts(d);
  add_probes(workers, "health");
  workers["securityContext"] = container_security_context();

  json meta = metadata(d, jobset_name(d.name));
  if (d.queue_name)
    meta["labels"][std::string{queue_label}] = *d.queue_name;
  if (d.priority_class)
    meta["labels"][std::string{priority_label}] = *d.priority_class;
  json annotations = json::object();
  annotations[std::string{model_annotation}] = join(run.model_names, ", ");
  if (!run.urls.empty()) {
    std::vector<std::string> urls;
    for (const auto& u : run.urls)
      urls.push_back(redact_url(u));
    annotations[std::string{endpoint_annotation}] = join(urls, ", ");
  }
  meta["annotations"] = annotations;

  json spec = json::object();
  if (d.queue_name)
    spec["suspend"] = true;
  spec["network"] = {{"enableDNSHostnames", true}};
  spec["successPolicy"]
      = {{"operator", "All"}, {"targetReplicatedJobs", json::array({"controller"})}};
  if (!d.keep_failed_pods)
    spec["ttlSecondsAfterFinished"]
        = d.ttl_seconds_after_finished.value_or(default_direct_ttl_seconds);
  // No Job TTL on the workers, unlike AIPerf's 0: the JobSet controller
  // recreates a child Job that disappears while the JobSet runs, and ours
  // runs on while the controller serves its results (the linger), so a
  // TTL-deleted worker Job would come back and start its pods again. The
  // JobSet's own TTL removes everything once it finished.
  spec["replicatedJobs"] = json::array(
      {replicated_job("controller", 1, controller_backoff_limit, std::nullopt,
                      pod_template(d, true, json::array({control, sidecar}))),
       replicated_job("workers", lay->pods, worker_backoff_limit, std::nullopt,
                      pod_template(d, false, json::array({workers})))});

  return json{{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
              {"kind", "JobSet"},
              {"metadata", std::move(meta)},
              {"spec", std::move(spec)}};
}

caf::expected<std::vector<json>> direct_mode_objects(const deployment& d,
                                                     const config::profile_config& run,
                                                     const env_lookup& env) {
  if (auto ok = validate(d); !ok)
    return ok.error();
  std::vector<json> out;
  for (auto made : {role(d), role_binding(d), config_map(d, run), jobset(d, run, env)}) {
    if (!made)
      return made.error();
    out.push_back(std::move(*made));
  }
  return out;
}

resource_ref collection_of(const json& obj) {
  auto api = obj.value("apiVersion", std::string{});
  auto kind = obj.value("kind", std::string{});
  std::string group;
  std::string version = api;
  if (auto slash = api.find('/'); slash != std::string::npos) {
    group = api.substr(0, slash);
    version = api.substr(slash + 1);
  }
  std::string plural = kind == "Role"          ? "roles"
                       : kind == "RoleBinding" ? "rolebindings"
                       : kind == "ConfigMap"   ? "configmaps"
                       : kind == "JobSet"      ? "jobsets"
                                               : "";
  auto ns = obj.value("metadata", json::object()).value("namespace", std::string{});
  return {group, version, plural, ns, "", ""};
}

} // namespace aiperf::k8s::manifests
