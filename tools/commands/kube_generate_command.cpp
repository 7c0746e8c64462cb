// `aiperf-node kube generate (--operator | --no-operator) [deployment flags]
// [benchmark flags | -f FILE]`: prints what a run would submit and contacts
// no API server. --operator: one AIPerfJob. --no-operator: the direct-mode
// objects (Role, RoleBinding, ConfigMap, JobSet) from k8s/manifests, the
// very builders `kube profile --no-operator` creates them with. Never a
// Namespace: the namespace is the user's (-n, else the kubeconfig
// context's, else `default`). The output depends on the arguments only (no
// time, no randomness), so it can be committed and diffed; warnings go to
// stderr. Every refusal is exit 2.
#include "tools/commands/kube_command.hpp"
#include "tools/commands/kube_deploy_flags.hpp"
#include "tools/commands/kube_generate.hpp"
#include "tools/commands/user_files.hpp"

#include "config/benchmark/document.hpp"
#include "config/benchmark/mapping.hpp"
#include "config/benchmark/validate.hpp"
#include "config/profile/profile_json.hpp"
#include "k8s/crds/crds.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace aiperf::kube_command {

namespace mf = k8s::manifests;

namespace {

constexpr int exit_usage = 2;

k8s::json pod_template_of(const mf::deployment& d) {
  k8s::json pt = k8s::json::object();
  k8s::json env = k8s::json::array();
  for (const auto& [name, value] : d.env)
    env.push_back({{"name", name}, {"value", value}});
  for (const auto& [name, ref] : d.env_from_secrets)
    env.push_back({{"name", name},
                   {"valueFrom", {{"secretKeyRef", {{"name", ref.secret}, {"key", ref.key}}}}}});
  if (!env.empty())
    pt["env"] = std::move(env);
  if (!d.secret_mounts.empty()) {
    k8s::json volumes = k8s::json::array();
    k8s::json mounts = k8s::json::array();
    for (const auto& m : d.secret_mounts) {
      volumes.push_back({{"name", "secret-" + m.name}, {"secret", {{"secretName", m.name}}}});
      k8s::json mount
          = {{"name", "secret-" + m.name}, {"mountPath", m.mount_path}, {"readOnly", true}};
      if (m.sub_path)
        mount["subPath"] = *m.sub_path;
      mounts.push_back(std::move(mount));
    }
    pt["volumes"] = std::move(volumes);
    pt["volumeMounts"] = std::move(mounts);
  }
  auto map_of = [](const mf::string_pairs& pairs) {
    k8s::json m = k8s::json::object();
    for (const auto& [k, v] : pairs)
      m[k] = v;
    return m;
  };
  if (!d.node_selector.empty())
    pt["nodeSelector"] = map_of(d.node_selector);
  if (!d.tolerations.empty())
    pt["tolerations"] = d.tolerations;
  if (!d.affinity.is_null())
    pt["affinity"] = d.affinity;
  if (!d.annotations.empty())
    pt["annotations"] = map_of(d.annotations);
  if (!d.labels.empty())
    pt["labels"] = map_of(d.labels);
  if (!d.image_pull_secrets.empty()) {
    k8s::json secrets = k8s::json::array();
    for (const auto& s : d.image_pull_secrets)
      secrets.push_back({{"name", s}});
    pt["imagePullSecrets"] = std::move(secrets);
  }
  if (d.service_account_name)
    pt["serviceAccountName"] = *d.service_account_name;
  return pt;
}

// What the pods restore from their Secret-backed env stays a placeholder.
void redact_endpoint(k8s::json& benchmark) {
  auto ep = benchmark.find("endpoint");
  if (ep == benchmark.end() || !ep->is_object())
    return;
  const std::string redacted{config::redacted};
  if (ep->contains("apiKey"))
    (*ep)["apiKey"] = redacted;
  if (auto h = ep->find("headers"); h != ep->end() && h->is_object())
    for (auto& [name, value] : h->items())
      value = redacted;
  if (auto urls = ep->find("urls"); urls != ep->end() && urls->is_array())
    for (auto& u : *urls)
      if (u.is_string())
        u = mf::redact_url(u.get<std::string>());
}

std::optional<std::string> process_env(std::string_view name) {
  std::string key{name};
  const char* v = std::getenv(key.c_str());
  if (!v)
    return std::nullopt;
  return std::string{v};
}

struct generate_state {
  bool operator_mode = false;
  bool no_operator = false;
  std::string namespace_name;
  k8s::client::config_selection selection;
  deploy_flags deploy;
  benchmark_flags bench;
};

int fail(const caf::error& err) {
  std::fprintf(stderr, "error: %s\n", error_message(err).c_str());
  return exit_usage;
}

int run_generate(CLI::App& cmd, generate_state& st) {
  if (st.operator_mode == st.no_operator) {
    std::fprintf(stderr, "error: pass exactly one of --operator (prints an AIPerfJob) and "
                         "--no-operator (prints the Role, RoleBinding, ConfigMap and JobSet "
                         "of a direct-mode run)\n");
    return exit_usage;
  }
  auto warnings = resolve_benchmark(cmd, st.bench);
  if (!warnings)
    return fail(warnings.error());
  for (const auto& w : *warnings)
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  const auto& run = st.bench.run;
  if (st.bench.typed.worker_pods != 1) {
    std::fprintf(stderr, "error: --worker-pods: local runs only; on Kubernetes the pod count "
                         "comes from --total-workers and --workers-per-pod\n");
    return exit_usage;
  }
  std::string ns_warning;
  auto ns = namespace_of(st.namespace_name, st.selection, k8s::client::process_environment(),
                         &ns_warning);
  if (!ns_warning.empty())
    std::fprintf(stderr, "warning: %s\n", ns_warning.c_str());
  auto d = to_deployment(st.deploy, st.bench.typed, ns);
  if (!d)
    return fail(d.error());
  if (auto ok = apply_secret_rule(run, *d); !ok)
    return fail(ok.error());
  if (st.no_operator) {
    std::vector<std::string> file_warnings;
    auto files = user_files::embed(run, file_warnings);
    if (!files)
      return fail(files.error());
    for (const auto& w : file_warnings)
      std::fprintf(stderr, "warning: %s\n", w.c_str());
    d->user_files = std::move(*files);
  }
  std::vector<k8s::json> objects;
  if (st.operator_mode) {
    auto job = aiperfjob(*d, run, st.bench.typed, st.deploy.skip_endpoint_check);
    if (!job)
      return fail(job.error());
    objects.push_back(std::move(*job));
  } else {
    auto made = mf::direct_mode_objects(*d, run, process_env);
    if (!made)
      return fail(made.error());
    objects = std::move(*made);
  }
  auto text = to_yaml_documents(objects);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return 0;
}

} // namespace

caf::expected<k8s::json> aiperfjob(const mf::deployment& d, const config::profile_config& run,
                                   const config::profile_config& typed,
                                   bool skip_endpoint_check) {
  namespace cb = config::benchmark;
  if (auto ok = mf::validate(d); !ok)
    return ok.error();
  auto doc = cb::from_profile_config(run);
  if (!doc)
    return doc.error();
  auto as_typed = cb::from_profile_config(typed);
  if (!as_typed)
    return as_typed.error();
  auto& benchmark = (*doc)["benchmark"];
  redact_endpoint(benchmark);
  // The runtime as typed: finalize() sizes workers and threads for the
  // machine it runs on, and the pods are not that machine.
  auto typed_runtime = (*as_typed)["benchmark"].find("runtime");
  if (typed_runtime != (*as_typed)["benchmark"].end())
    benchmark["runtime"] = *typed_runtime;
  else
    benchmark.erase("runtime");
  if (d.total_workers)
    benchmark["runtime"]["workers"] = *d.total_workers;
  if (typed.workers_per_pod)
    benchmark["runtime"]["workersPerPod"] = d.workers_per_pod;

  k8s::json spec = k8s::json::object();
  spec["image"] = d.image;
  if (d.image_pull_policy)
    spec["imagePullPolicy"] = *d.image_pull_policy;
  for (auto& [key, value] : doc->items())
    spec[key] = std::move(value);
  if (d.ttl_seconds_after_finished)
    spec["ttlSecondsAfterFinished"] = *d.ttl_seconds_after_finished;
  if (auto pt = pod_template_of(d); !pt.empty())
    spec["podTemplate"] = std::move(pt);
  k8s::json scheduling = k8s::json::object();
  if (d.queue_name)
    scheduling["queueName"] = *d.queue_name;
  if (d.priority_class)
    scheduling["priorityClass"] = *d.priority_class;
  if (!scheduling.empty())
    spec["scheduling"] = std::move(scheduling);
  if (skip_endpoint_check)
    spec["skipEndpointCheck"] = true;

  auto canonical = cb::normalize(spec, cb::document_kind::job_spec);
  if (!canonical)
    return canonical.error();
  if (auto ok = cb::validate(*canonical, cb::document_kind::job_spec); !ok)
    return ok.error();
  k8s::json job = k8s::json::object();
  job["apiVersion"] = std::string{k8s::crds::group} + "/" + std::string{k8s::crds::version};
  job["kind"] = "AIPerfJob";
  job["metadata"] = {{"name", d.name}, {"namespace", d.ns}};
  job["spec"] = std::move(spec);
  return job;
}

std::string to_yaml_documents(const std::vector<k8s::json>& objects) {
  std::string out;
  for (const auto& obj : objects) {
    if (!out.empty())
      out += "---\n";
    auto text = config::benchmark::write_yaml(obj);
    if (!text.empty() && text.back() != '\n')
      text += '\n';
    out += text;
  }
  return out;
}

void add_generate(CLI::App& kube, int& exit_code) {
  add_normalised_command(
      kube, "generate",
      "Print the objects of a run without contacting a cluster: --operator an AIPerfJob, "
      "--no-operator the Role, RoleBinding, ConfigMap and JobSet (YAML, `---` separated)",
      [](CLI::App& cmd) -> command_body {
        auto st = std::make_shared<generate_state>();
        cmd.add_flag("--operator", st->operator_mode, "Print an AIPerfJob (operator mode)")
            ->group("Mode");
        cmd.add_flag("--no-operator", st->no_operator,
                     "Print the direct-mode Role, RoleBinding, ConfigMap and JobSet")
            ->group("Mode");
        const std::string g = "Kubernetes";
        cmd.add_option("-n,--namespace", st->namespace_name,
                       "Namespace of the objects; default the kubeconfig context's, else "
                       "default (never created)")
            ->group(g);
        cmd.add_option("--kubeconfig", st->selection.kubeconfig,
                       "Kubeconfig file (only its context namespace is read); default "
                       "$KUBECONFIG or ~/.kube/config")
            ->group(g);
        cmd.add_option("--kube-context", st->selection.context,
                       "Kubeconfig context; default the current one")
            ->group(g);
        add_deploy_flags(cmd, st->deploy);
        add_benchmark_flags(cmd, st->bench);
        return [st](CLI::App& parsed) { return run_generate(parsed, *st); };
      },
      exit_code);
}

} // namespace aiperf::kube_command
