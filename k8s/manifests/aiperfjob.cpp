#include "k8s/manifests/aiperfjob.hpp"

#include "config/benchmark/document.hpp"
#include "config/benchmark/mapping.hpp"
#include "config/benchmark/validate.hpp"

#include <set>
#include <string>

namespace aiperf::k8s::manifests {

namespace {

namespace cb = config::benchmark;

caf::error spec_error(const std::string& path, const std::string& message) {
  return config::flag_error(config::errc::invalid, "spec." + path, message);
}

caf::error not_rendered(const std::string& path) {
  return spec_error(path, "not supported by aiperf-node's operator yet; remove it (or run the "
                          "benchmark with `kube profile --no-operator`)");
}

// A spec-model error names its field without the `spec.` the AIPerfJob
// puts in front; say it the way `kubectl explain` does.
caf::error under_spec(const caf::error& err) {
  std::string field{config::error_flag(err)};
  if (field.empty() || field.rfind("--", 0) == 0 || field.rfind("spec.", 0) == 0)
    return err;
  auto text = error_message(err);
  if (text.rfind(field + ": ", 0) == 0)
    text.erase(0, field.size() + 2);
  return config::flag_error(error_code(err, config::errc::invalid), "spec." + field, text);
}

string_pairs pairs_of(const json& map) {
  string_pairs out;
  for (const auto& [k, v] : map.items())
    out.emplace_back(k, v.get<std::string>());
  return out;
}

// podTemplate.env: plain values and secretKeyRefs (the two kinds the pods'
// env is built from); anything else is refused by name.
caf::expected<void> read_env(const json& env, deployment& d) {
  for (std::size_t i = 0; i < env.size(); ++i) {
    const auto& e = env[i];
    auto path = "podTemplate.env[" + std::to_string(i) + "]";
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string())
      return spec_error(path + ".name", "required: an EnvVar needs a name");
    auto name = e["name"].get<std::string>();
    if (auto ref = e.find("valueFrom"); ref != e.end()) {
      auto key_ref = ref->find("secretKeyRef");
      if (key_ref == ref->end() || ref->size() != 1 || !key_ref->is_object()
          || !key_ref->contains("name") || !key_ref->contains("key"))
        return spec_error(path + ".valueFrom",
                          "only secretKeyRef {name, key} is supported by aiperf-node's operator");
      d.env_from_secrets.push_back(
          {name, {(*key_ref)["name"].get<std::string>(), (*key_ref)["key"].get<std::string>()}});
      continue;
    }
    d.env.emplace_back(name, e.value("value", std::string{}));
  }
  return {};
}

// podTemplate.volumes + volumeMounts: Secret volumes and their mounts, the
// shape `kube generate --operator` writes for --secret-mounts.
caf::expected<void> read_secret_mounts(const json& pt, deployment& d) {
  json volumes = pt.value("volumes", json::array());
  json mounts = pt.value("volumeMounts", json::array());
  std::set<std::string> mounted;
  for (std::size_t i = 0; i < mounts.size(); ++i) {
    const auto& m = mounts[i];
    auto path = "podTemplate.volumeMounts[" + std::to_string(i) + "]";
    auto name = m.value("name", std::string{});
    const json* volume = nullptr;
    for (const auto& v : volumes)
      if (v.value("name", std::string{}) == name)
        volume = &v;
    if (volume == nullptr)
      return spec_error(path + ".name", "names no entry of podTemplate.volumes; add the volume");
    auto secret = volume->find("secret");
    if (secret == volume->end() || !secret->contains("secretName"))
      return spec_error(path, "only Secret volumes are supported by aiperf-node's operator");
    secret_mount sm;
    sm.name = (*secret)["secretName"].get<std::string>();
    sm.mount_path = m.value("mountPath", std::string{});
    if (m.contains("subPath"))
      sm.sub_path = m["subPath"].get<std::string>();
    d.secret_mounts.push_back(std::move(sm));
    mounted.insert(name);
  }
  for (std::size_t i = 0; i < volumes.size(); ++i)
    if (mounted.count(volumes[i].value("name", std::string{})) == 0)
      return spec_error("podTemplate.volumes[" + std::to_string(i) + "]",
                        "is mounted by no podTemplate.volumeMounts entry; mount it or remove it");
  return {};
}

caf::expected<void> read_pod_template(const json& pt, deployment& d) {
  static const std::set<std::string> rendered
      = {"env",         "volumes",     "volumeMounts",     "nodeSelector",
         "tolerations", "affinity",    "annotations",      "labels",
         "imagePullSecrets", "serviceAccountName"};
  for (const auto& [key, value] : pt.items()) {
    // The CRD defaults shareProcessNamespace to false, which is what the
    // pods do anyway.
    if (key == "shareProcessNamespace" && value == false)
      continue;
    if (rendered.count(key) == 0)
      return not_rendered("podTemplate." + key);
  }
  if (auto ok = read_env(pt.value("env", json::array()), d); !ok)
    return ok;
  if (auto ok = read_secret_mounts(pt, d); !ok)
    return ok;
  if (pt.contains("nodeSelector"))
    d.node_selector = pairs_of(pt["nodeSelector"]);
  if (pt.contains("tolerations"))
    d.tolerations = pt["tolerations"];
  if (pt.contains("affinity"))
    d.affinity = pt["affinity"];
  if (pt.contains("annotations"))
    d.annotations = pairs_of(pt["annotations"]);
  if (pt.contains("labels"))
    d.labels = pairs_of(pt["labels"]);
  for (const auto& s : pt.value("imagePullSecrets", json::array()))
    d.image_pull_secrets.push_back(s.value("name", std::string{}));
  if (pt.contains("serviceAccountName"))
    d.service_account_name = pt["serviceAccountName"].get<std::string>();
  return {};
}

} // namespace

caf::expected<job_plan> plan_of(const json& aiperfjob, unsigned cores) {
  const json meta = aiperfjob.value("metadata", json::object());
  json spec = aiperfjob.value("spec", json::object());
  auto canonical = cb::normalize(spec, cb::document_kind::job_spec);
  if (!canonical)
    return under_spec(canonical.error());
  spec = std::move(*canonical);
  // The CRD defaults runtime.ui to AIPerf's dashboard; pods have no
  // terminal, so a job's UI is none whatever it says.
  if (auto b = spec.find("benchmark"); b != spec.end() && b->contains("runtime")
                                       && (*b)["runtime"].contains("ui"))
    (*b)["runtime"]["ui"] = "none";
  std::size_t errors = 0;
  const cb::problem* first = nullptr;
  auto problems = cb::check(spec, cb::document_kind::job_spec);
  for (const auto& p : problems)
    if (!p.warning && errors++ == 0)
      first = &p;
  if (first != nullptr)
    return spec_error(first->path,
                      first->message
                          + (errors > 1 ? " (and " + std::to_string(errors - 1) + " more problems)"
                                        : std::string{}));

  job_plan plan;
  auto& d = plan.d;
  d.name = meta.value("name", std::string{});
  d.ns = meta.value("namespace", std::string{"default"});
  d.job_uid = meta.value("uid", std::string{});
  d.image = spec.value("image", std::string{default_image});
  if (spec.contains("imagePullPolicy"))
    d.image_pull_policy = spec["imagePullPolicy"].get<std::string>();
  d.ttl_seconds_after_finished = spec.value("ttlSecondsAfterFinished", std::int64_t{300});
  d.keep_failed_pods = spec.value("keepFailedPods", false);
  if (auto mode = resource_mode_of(spec.value("resourceMode", std::string{"burstable"})))
    d.resources = *mode;
  if (auto pt = spec.find("podTemplate"); pt != spec.end())
    if (auto ok = read_pod_template(*pt, d); !ok)
      return ok.error();
  if (auto s = spec.find("scheduling"); s != spec.end()) {
    if (s->contains("queueName"))
      d.queue_name = (*s)["queueName"].get<std::string>();
    if (s->contains("priorityClass"))
      d.priority_class = (*s)["priorityClass"].get<std::string>();
  }
  plan.timeout_seconds = spec.value("timeoutSeconds", 0.0);
  plan.cancel = spec.value("cancel", false);
  plan.skip_endpoint_check = spec.value("skipEndpointCheck", false);
  plan.results_ttl_days = spec.value("resultsTtlDays", 0);

  auto typed = cb::to_profile_config(spec);
  if (!typed)
    return under_spec(typed.error());
  if (typed->workers_max)
    d.total_workers = *typed->workers_max;
  if (typed->workers_per_pod)
    d.workers_per_pod = *typed->workers_per_pod;
  plan.run = std::move(*typed);
  if (auto ok = validate(d); !ok)
    return ok.error();
  // The run is spread over the JobSet's worker pods: finalize() checks the
  // same worker math the JobSet is built from.
  auto layout = worker_math(d);
  if (!layout)
    return layout.error();
  plan.layout = *layout;
  plan.run.worker_pods = layout->pods;
  plan.run.workers_per_pod = layout->workers_per_pod;
  plan.run.workers_max = layout->total_workers;
  if (auto ok = config::finalize(plan.run, config::file_site{false, false}, cores); !ok)
    return under_spec(ok.error());
  return plan;
}

} // namespace aiperf::k8s::manifests
