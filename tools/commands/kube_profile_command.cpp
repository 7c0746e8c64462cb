// `kube profile`: creates a direct-mode run (Role, RoleBinding, ConfigMap,
// JobSet, in that order, refusing any same-named object) and, in the
// foreground, follows it (pod phases, the controller's /api/progress)
// until its results are exported, downloads them through the pods proxy,
// prints the summary and exits with the run's exit code.
//
// How the foreground knows the run is over: the controller lingers after
// its final export (it keeps serving its API), so the JobSet does not
// complete on its own. The CLI polls `/api/results/list` until it lists a
// top-level file (it does once `.aiperf_results_ready.json` exists),
// downloads, then POSTs `/api/shutdown`; the controller container then
// exits with the run's exit code, which the pod status reports. A
// controller that dies first reports its exit code the same way, and the
// results sidecar still serves what was exported.
#include "tools/commands/kube_profile.hpp"

#include "actors/benchmark/exporters/exporters.hpp"
#include "k8s/object/wire.hpp"
#include "tools/commands/kube_command.hpp"
#include "tools/commands/kube_deploy_flags.hpp"
#include "tools/commands/kube_generate.hpp"
#include "tools/commands/kube_workflow.hpp"
#include "tools/commands/user_files.hpp"

#include "runtime/system/env.hpp"

#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace aiperf::kube_command {

namespace fs = std::filesystem;

namespace {

std::atomic<bool> interrupted{false};

extern "C" void on_sigint(int) {
  interrupted.store(true);
}

/// kubectl's spelling of an object: `role.rbac.authorization.k8s.io/x`.
std::string kubectl_name(const k8s::resource_ref& ref, const std::string& name) {
  std::string kind = ref.resource;
  if (!kind.empty() && kind.back() == 's')
    kind.pop_back();
  return kind + (ref.group.empty() ? "" : "." + ref.group) + "/" + name;
}

} // namespace

caf::expected<profile_mode> mode_from_discovery(const caf::expected<k8s::response>& answer) {
  if (answer) {
    auto j = k8s::json::parse(answer->body, nullptr, false);
    if (!j.is_discarded() && j.contains("resources") && j["resources"].is_array())
      for (const auto& r : j["resources"])
        if (r.is_object() && r.value("name", "") == "aiperfjobs")
          return profile_mode::operator_mode;
    return make_error(k8s::errc::invalid,
                      "discovery GET /apis/aiperf.nvidia.com/v1alpha1 answered "
                          + std::to_string(answer->code)
                          + " without aiperfjobs: the CRDs look half "
                            "installed; pass --no-operator to run directly");
  }
  if (const auto* st = k8s::status_of(answer.error()); st != nullptr && st->code == 404)
    return profile_mode::direct;
  return make_error(k8s::errc::unavailable,
                    "discovery GET /apis/aiperf.nvidia.com/v1alpha1 failed: "
                        + error_message(answer.error())
                        + "; pass --no-operator (or --operator) to skip it");
}

std::optional<int> exit_code_of_job(const k8s::json& status) {
  auto phase = status.value("phase", std::string{});
  if (phase == "Completed") {
    for (const auto& c : status.value("conditions", k8s::json::array()))
      if (c.value("type", "") == "Degraded" && c.value("status", "") == "True")
        return 5;
    return 0;
  }
  if (phase == "Failed") {
    int code = status.value("exitCode", 1);
    return code == 4 || code == 6 ? code : 1;
  }
  if (phase == "Cancelled")
    return 1;
  return std::nullopt;
}

std::string local_only_refusal(const std::vector<std::string>& given) {
  if (given.empty())
    return {};
  std::string names;
  for (const auto& g : given)
    names += (names.empty() ? "" : ", ") + g;
  return names
         + " only applies to a local run (aiperf-node profile): on a cluster "
           "use --total-workers and --workers-per-pod";
}

std::string first_line(const std::string& job, const std::string& ns,
                       profile_mode mode) {
  if (mode == profile_mode::operator_mode)
    return "aiperfjob.aiperf.nvidia.com/" + job + " created in " + ns
           + " (operator mode)";
  return "jobset.jobset.x-k8s.io/" + jobset_name(job) + " created in " + ns
         + " (direct mode)";
}

bool should_detach(bool detach, bool no_detach, bool stdout_tty, std::string* warning) {
  if (detach)
    return true;
  if (no_detach || stdout_tty)
    return false;
  if (warning != nullptr)
    *warning = "stdout is not a terminal, so kube profile returns once the run "
               "is created (--detach); pass --no-detach to follow it";
  return true;
}

std::optional<std::string> startup_problem(const k8s::json& pod) {
  static const std::set<std::string> fatal{
      "ImagePullBackOff", "ErrImagePull",          "InvalidImageName",
      "ErrImageNeverPull", "CreateContainerConfigError", "CreateContainerError",
      "CrashLoopBackOff"};
  if (!pod.contains("status") || !pod["status"].is_object())
    return std::nullopt;
  const auto& st = pod["status"];
  for (const char* key : {"initContainerStatuses", "containerStatuses"}) {
    if (!st.contains(key) || !st[key].is_array())
      continue;
    for (const auto& cs : st[key]) {
      auto reason = str_at(cs, {"state", "waiting", "reason"});
      if (fatal.contains(reason)) {
        auto msg = str_at(cs, {"state", "waiting", "message"});
        return "pod " + str_at(pod, {"metadata", "name"}) + " container "
               + cs.value("name", "") + ": " + reason
               + (msg.empty() ? "" : " (" + msg + ")");
      }
    }
  }
  if (st.contains("conditions") && st["conditions"].is_array())
    for (const auto& c : st["conditions"])
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False"
          && c.value("reason", "") == "Unschedulable")
        return "pod " + str_at(pod, {"metadata", "name"}) + ": Unschedulable ("
               + c.value("message", "") + ")";
  return std::nullopt;
}

std::optional<int> controller_exit_code(const k8s::json& pod) {
  if (!pod.contains("status") || !pod["status"].contains("containerStatuses"))
    return std::nullopt;
  for (const auto& cs : pod["status"]["containerStatuses"])
    if (cs.value("name", "") == "control-plane" && cs.contains("state")
        && cs["state"].contains("terminated"))
      return cs["state"]["terminated"].value("exitCode", 1);
  return std::nullopt;
}

namespace {

caf::expected<k8s::json> get_pod(cluster& c, const std::string& name) {
  k8s::request r;
  r.verb = k8s::verb::get;
  r.ref = {"", "v1", "pods", c.namespace_name(), name, ""};
  auto got = c.call(std::move(r), std::chrono::seconds{15});
  if (!got)
    return got.error();
  auto j = k8s::json::parse(got->body, nullptr, false);
  if (j.is_discarded())
    return make_error(k8s::errc::invalid, "pod " + name + ": not JSON");
  return j;
}

bool is_worker_pod(const k8s::json& pod) {
  return str_at(pod, {"metadata", "labels", "jobset.sigs.k8s.io/replicatedjob-name"})
         == "workers";
}

/// The controller's /api/progress as one line ("run: running, profiling
/// 40/160 requests, 0 errors"), coarsened to tenths of the planned count so
/// that following a run prints a few lines, not one per poll; sets
/// `started` once the run state left initializing/configuring.
std::optional<std::string> progress_line(cluster& c, const std::string& pod, bool& started) {
  auto got = c.call(pod_proxy(c.namespace_name(), pod, 9090, "/api/progress"),
                    std::chrono::seconds{15});
  if (!got)
    return std::nullopt;
  auto j = k8s::json::parse(got->body, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return std::nullopt;
  auto state = j.value("state", "");
  if (!state.empty() && state != "initializing" && state != "configuring")
    started = true;
  auto total = j.value("requests_total", std::uint64_t{0});
  auto done = j.value("requests_completed", std::uint64_t{0});
  if (total > 0)
    done = done * 10 / total * total / 10;
  auto line = "run: " + state;
  if (auto phase = j.value("phase", ""); !phase.empty())
    line += ", " + phase + " " + std::to_string(done)
            + (total > 0 ? "/" + std::to_string(total) : std::string{}) + " requests, "
            + std::to_string(j.value("request_errors", std::uint64_t{0})) + " errors";
  return line;
}

/// True once the controller lists a top-level result (the marker exists).
bool results_ready(cluster& c, const std::string& pod) {
  auto got = c.call(pod_proxy(c.namespace_name(), pod, 9090, "/api/results/list"),
                    std::chrono::seconds{15});
  if (!got)
    return false;
  auto j = k8s::json::parse(got->body, nullptr, false);
  if (j.is_discarded() || !j.contains("files") || !j["files"].is_array())
    return false;
  for (const auto& f : j["files"])
    if (f.is_object() && !f.value("name", "").starts_with("checkpoints/"))
      return true;
  return false;
}

/// The console table a local `profile` prints, rendered from the
/// downloaded profile_export_aiperf.json (the CLI has no run_summary of
/// its own); a missing or malformed file is a warning, the exit code stays
/// the run's.
void print_summary(const fs::path& dir) {
  auto path = dir / "profile_export_aiperf.json";
  std::ifstream in{path};
  if (!in) {
    std::fprintf(stderr, "warning: no %s to summarize\n", path.string().c_str());
    return;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  auto summary = exporters::read_profile_json(buf.str());
  if (!summary) {
    std::fprintf(stderr, "warning: %s\n", error_message(summary.error()).c_str());
    return;
  }
  std::printf("%s\n", exporters::render_console_table(*summary).c_str());
}

/// Follows the run until its results are downloaded and the controller
/// exited; the run's exit code, 130 on Ctrl+C, 1 when a pod cannot start.
int follow(cluster& c, const std::string& job, const fs::path& out_dir) {
  interrupted.store(false);
  auto previous = std::signal(SIGINT, on_sigint);
  auto restore = [&] { std::signal(SIGINT, previous); };
  std::string last_phase;
  std::string last_progress;
  // Once the benchmark runs, a worker pod's trouble (a restart after a
  // crash, a replacement pod) is the controller's to count as a loss; the
  // CLI only stops for trouble that keeps the run from starting.
  bool run_started = false;
  bool downloaded = false;
  bool shutdown_sent = false;
  auto say = [&](const std::string& phase) {
    if (phase != last_phase)
      std::fprintf(stderr, "%s\n", phase.c_str());
    last_phase = phase;
  };
  while (true) {
    if (interrupted.load()) {
      restore();
      std::fprintf(stderr,
                   "stopped following; the run goes on: aiperf-node kube results %s "
                   "--from-pods -n %s\n",
                   job.c_str(), c.namespace_name().c_str());
      return 130;
    }
    auto pods = list_pods_of(c, job);
    if (pods) {
      for (const auto& p : *pods)
        if (auto problem = startup_problem(p);
            problem && !(run_started && is_worker_pod(p))) {
          restore();
          std::fprintf(stderr,
                       "error: %s; the run cannot start: fix it, then "
                       "aiperf-node kube delete %s -n %s\n",
                       problem->c_str(), job.c_str(), c.namespace_name().c_str());
          return 1;
        }
      std::string phases;
      for (const auto& p : *pods)
        phases += (phases.empty() ? "" : ", ") + str_at(p, {"metadata", "name"}) + " "
                  + str_at(p, {"status", "phase"});
      say("pods: " + (phases.empty() ? std::string{"none yet"} : phases));
    }
    auto ctl = controller_pod(c, job);
    if (ctl) {
      auto pod = get_pod(c, *ctl);
      std::optional<int> code;
      if (pod)
        code = controller_exit_code(*pod);
      bool running = pod && str_at(*pod, {"status", "phase"}) == "Running";
      if (running && !code)
        if (auto line = progress_line(c, *ctl, run_started)) {
          if (*line != last_progress)
            std::fprintf(stderr, "%s\n", line->c_str());
          last_progress = *line;
        }
      if (!downloaded && (code || (running && results_ready(c, *ctl)))) {
        auto sum = download_results(c, job, out_dir);
        if (sum) {
          downloaded = true;
          std::fprintf(stderr, "downloaded %zu result files into %s\n",
                       sum->files.size(), out_dir.string().c_str());
        } else if (code) {
          std::fprintf(stderr, "warning: %s\n", error_message(sum.error()).c_str());
          downloaded = true; // nothing more will come
        }
      }
      if (downloaded && !code && !shutdown_sent) {
        auto posted = post_controller(c, job, "/api/shutdown");
        shutdown_sent = static_cast<bool>(posted);
      }
      if (code && downloaded) {
        restore();
        print_summary(out_dir);
        std::fflush(stdout);
        return *code;
      }
    } else if (downloaded) {
      // The controller pod went away after the download (a TTL, or a
      // delete): its exit code is gone with it.
      restore();
      print_summary(out_dir);
      std::fprintf(stderr, "warning: the controller pod of %s is gone; its exit code "
                           "is unknown\n",
                   job.c_str());
      std::fflush(stdout);
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{500});
  }
}

} // namespace

caf::expected<std::vector<k8s::json>> list_pods_of(cluster& c, const std::string& job) {
  k8s::request r;
  r.verb = k8s::verb::list;
  r.ref = {"", "v1", "pods", c.namespace_name(), "", ""};
  r.label_selector = "jobset.sigs.k8s.io/jobset-name=" + jobset_name(job);
  auto got = c.call(std::move(r), std::chrono::seconds{15});
  if (!got)
    return got.error();
  auto j = k8s::json::parse(got->body, nullptr, false);
  std::vector<k8s::json> out;
  if (!j.is_discarded() && j.contains("items") && j["items"].is_array())
    for (auto& item : j["items"])
      out.push_back(item);
  return out;
}

namespace {

/// Follows an AIPerfJob until the operator ends it: its phase and the
/// controller's progress on stderr, then the summary; the exit code of
/// exit_code_of_job. Ctrl+C stops following (the job goes on): 130.
int follow_job(cluster& c, const std::string& job) {
  interrupted.store(false);
  auto previous = std::signal(SIGINT, on_sigint);
  std::string last;
  while (!interrupted.load()) {
    k8s::request g;
    g.verb = k8s::verb::get;
    g.ref = {"aiperf.nvidia.com", "v1alpha1", "aiperfjobs", c.namespace_name(), job, ""};
    auto got = c.call(std::move(g), std::chrono::seconds{30});
    if (got) {
      auto obj = k8s::json::parse(got->body, nullptr, false);
      auto status = obj.is_object() ? obj.value("status", k8s::json::object())
                                    : k8s::json::object();
      std::string line = "job: " + status.value("phase", std::string{"Pending"});
      if (auto sub = status.value("subPhase", std::string{}); !sub.empty())
        line += " (" + sub + ")";
      if (status.contains("requestsTotal"))
        line += ", " + std::to_string(status.value("requestsCompleted", 0)) + "/"
                + std::to_string(status.value("requestsTotal", 0)) + " requests";
      if (line != last)
        std::fprintf(stderr, "%s\n", line.c_str());
      last = line;
      if (auto code = exit_code_of_job(status)) {
        std::signal(SIGINT, previous);
        if (auto err = status.value("error", std::string{}); !err.empty())
          std::fprintf(stderr, "error: %s\n", err.c_str());
        const auto summary = status.value("summary", k8s::json::object());
        for (const auto& [tag, value] : summary.items())
          if (value.is_object() && value.contains("avg"))
            std::printf("%-28s %12s %s\n", tag.c_str(), value["avg"].dump().c_str(),
                        value.value("unit", std::string{}).c_str());
        if (status.contains("resultsPath"))
          std::printf("results stored by the operator in %s\n",
                      status["resultsPath"].get<std::string>().c_str());
        std::fflush(stdout);
        return *code;
      }
    } else if (const auto* st = k8s::status_of(got.error()); st && st->code == 404) {
      std::signal(SIGINT, previous);
      std::fprintf(stderr, "error: aiperfjob %s was deleted\n", job.c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::seconds{1});
  }
  std::signal(SIGINT, previous);
  std::fprintf(stderr, "stopped following; the job goes on: kubectl get aiperfjob %s -n %s\n",
               job.c_str(), c.namespace_name().c_str());
  return 130;
}

/// The AIPerfJob of `req` (what `kube generate --operator` prints).
caf::expected<k8s::json> job_of(const profile_request& req) {
  auto job = aiperfjob(req.deploy, req.run, req.typed, req.skip_endpoint_check);
  if (!job)
    return make_error(config::errc::invalid, error_message(job.error()));
  return job;
}

/// Operator mode: one AIPerfJob, then (unless detached) follow it.
int run_operator_mode(const profile_request& req, cluster& c) {
  if (!req.deploy.user_files.empty())
    return report(make_error(config::errc::invalid,
                             "a local --input-file or --tokenizer cannot travel in an "
                             "AIPerfJob: mount it into the pods (podTemplate volumes) or run "
                             "with --no-operator"));
  auto job = job_of(req);
  if (!job)
    return report(job.error());
  const auto& ns = req.deploy.ns;
  k8s::request w;
  w.verb = k8s::verb::create;
  w.ref = {"aiperf.nvidia.com", "v1alpha1", "aiperfjobs", ns, "", ""};
  w.body = job->dump();
  w.field_manager = "aiperf-node";
  auto made = c.call(std::move(w), std::chrono::seconds{60});
  if (!made) {
    if (const auto* st = k8s::status_of(made.error()); st && st->code == 409)
      return report(make_error(k8s::errc::already_exists,
                               "aiperfjob.aiperf.nvidia.com/" + req.deploy.name
                                   + " already exists in " + ns
                                   + ": delete it (kubectl delete aiperfjob " + req.deploy.name
                                   + " -n " + ns + ") or pass another --name"));
    return report(made.error());
  }
  std::printf("%s\n", first_line(req.deploy.name, ns, profile_mode::operator_mode).c_str());
  std::fflush(stdout);
  if (auto ok = write_last_benchmark(last_benchmark_path(req.home_env),
                                     {req.deploy.name, ns, "operator"});
      !ok)
    std::fprintf(stderr, "warning: %s\n", error_message(ok.error()).c_str());
  std::string warning;
  if (should_detach(req.detach, req.no_detach, isatty(STDOUT_FILENO) == 1, &warning)) {
    if (!warning.empty())
      std::fprintf(stderr, "warning: %s\n", warning.c_str());
    return 0;
  }
  return follow_job(c, req.deploy.name);
}

} // namespace

int run_profile(const profile_request& req) {
  if (req.operator_flag && req.no_operator_flag)
    return report(make_error(config::errc::conflict,
                             "--operator and --no-operator exclude each other: pass one"));
  if (auto why = local_only_refusal(req.local_only_flags); !why.empty())
    return report(make_error(config::errc::invalid, why));
  if (req.run.urls.empty())
    return report(make_error(config::errc::missing,
                             "--url is required: the pods benchmark a server they "
                             "reach, e.g. --url http://mock.bench.svc.cluster.local:8000"));
  if (auto why = validate_job_name(req.deploy.name); !why.empty())
    return report(make_error(config::errc::invalid, why));
  if (req.operator_flag && req.dry_run) {
    auto job = job_of(req);
    if (!job)
      return report(job.error());
    auto text = to_yaml_documents({*job});
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return 0;
  }
  auto objects = k8s::manifests::direct_mode_objects(req.deploy, req.run, req.env);
  if (!objects)
    return report(error_code(objects.error(), k8s::manifests::errc::too_large)
                          == k8s::manifests::errc::too_large
                      ? objects.error()
                      : make_error(config::errc::invalid, error_message(objects.error())));
  if (req.dry_run) {
    auto text = to_yaml_documents(*objects);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return 0;
  }
  auto c = cluster::connect(req.cluster, k8s::client::process_environment());
  if (!c)
    return report(c.error());
  (*c)->set_namespace(req.deploy.ns);
  if (auto ok = (*c)->check_namespace(); !ok)
    return report(ok.error());
  profile_mode mode = req.operator_flag ? profile_mode::operator_mode : profile_mode::direct;
  if (!req.no_operator_flag && !req.operator_flag) {
    k8s::request d;
    d.verb = k8s::verb::get;
    // The group-version discovery document; path_of adds nothing past it.
    d.ref = {"aiperf.nvidia.com", "v1alpha1", "", "", "", ""};
    auto answer = (*c)->call(d, std::chrono::seconds{30});
    auto m = mode_from_discovery(answer);
    if (!m)
      return report(m.error());
    mode = *m;
  }
  if (mode == profile_mode::operator_mode)
    return run_operator_mode(req, **c);
  const auto& ns = req.deploy.ns;
  // Every name is checked before anything is created: a refusal leaves the
  // namespace as it was.
  for (const auto& obj : *objects) {
    auto ref = k8s::manifests::collection_of(obj);
    ref.name = str_at(obj, {"metadata", "name"});
    k8s::request g;
    g.verb = k8s::verb::get;
    g.ref = ref;
    auto got = (*c)->call(std::move(g), std::chrono::seconds{30});
    if (got)
      return report(make_error(
          k8s::errc::already_exists,
          kubectl_name(ref, ref.name) + " already exists in " + ns
              + ": delete the old run (aiperf-node kube delete " + req.deploy.name
              + " -n " + ns + ") or pass another --name"));
    if (const auto* st = k8s::status_of(got.error()); st == nullptr || st->code != 404)
      return report(got.error());
  }
  for (const auto& obj : *objects) {
    auto collection = k8s::manifests::collection_of(obj);
    k8s::request w;
    w.verb = k8s::verb::create;
    w.ref = collection;
    w.body = obj.dump();
    w.field_manager = "aiperf-node";
    auto made = (*c)->call(std::move(w), std::chrono::seconds{60});
    if (!made) {
      auto name = str_at(obj, {"metadata", "name"});
      return report(make_error(k8s::errc::invalid,
                               "create " + kubectl_name(collection, name) + " in " + ns
                                   + ": " + error_message(made.error())
                                   + " (remove what was created: aiperf-node kube delete "
                                   + req.deploy.name + " -n " + ns + ")"));
    }
  }
  std::printf("%s\n", first_line(req.deploy.name, ns, mode).c_str());
  std::fflush(stdout);
  auto last_path = last_benchmark_path(req.home_env);
  if (auto ok = write_last_benchmark(last_path, {req.deploy.name, ns, "direct"}); !ok)
    std::fprintf(stderr, "warning: %s\n", error_message(ok.error()).c_str());
  std::string warning;
  if (should_detach(req.detach, req.no_detach, isatty(STDOUT_FILENO) == 1, &warning)) {
    if (!warning.empty())
      std::fprintf(stderr, "warning: %s\n", warning.c_str());
    return 0;
  }
  fs::path out = fs::path{"artifacts"} / req.deploy.name;
  return follow(**c, req.deploy.name, out);
}

namespace {

/// A usage error (exit 2) whatever its category: a bad flag value the
/// builders found (k8s::manifests::errc) is the user's to fix too.
int usage(const caf::error& err) {
  std::fprintf(stderr, "error: %s\n", error_message(err).c_str());
  return 2;
}

struct profile_state {
  profile_request req;
  deploy_flags deploy;
  benchmark_flags bench;
};

int run_parsed(CLI::App& cmd, profile_state& st) {
  auto& req = st.req;
  if (req.operator_flag && req.no_operator_flag)
    return usage(make_error(config::errc::conflict,
                            "--operator and --no-operator exclude each other: pass one"));
  auto warnings = resolve_benchmark(cmd, st.bench);
  if (!warnings)
    return usage(warnings.error());
  for (const auto& w : *warnings)
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (st.bench.typed.worker_pods != 1 || cmd.count("--worker-pods") > 0)
    req.local_only_flags.push_back("--worker-pods");
  if (auto why = local_only_refusal(req.local_only_flags); !why.empty())
    return usage(make_error(config::errc::invalid, why));
  auto ns = namespace_of(req.cluster.namespace_name,
                         {req.cluster.kubeconfig, req.cluster.context},
                         k8s::client::process_environment());
  auto d = to_deployment(st.deploy, st.bench.typed, ns);
  if (!d)
    return usage(d.error());
  if (auto why = validate_job_name(d->name); !why.empty())
    return usage(make_error(config::errc::invalid, why));
  if (auto ok = apply_secret_rule(st.bench.run, *d); !ok)
    return usage(ok.error());
  // The local input files travel in run_config.json; too large is a usage
  // error before any cluster is contacted.
  std::vector<std::string> file_warnings;
  auto files = user_files::embed(st.bench.run, file_warnings);
  if (!files)
    return usage(files.error());
  for (const auto& w : file_warnings)
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  d->user_files = std::move(*files);
  req.deploy = std::move(*d);
  req.run = st.bench.run;
  req.typed = st.bench.typed;
  req.skip_endpoint_check = st.deploy.skip_endpoint_check;
  req.env = system::process_env();
  return run_profile(req);
}

} // namespace

void add_profile(CLI::App& kube, int& exit_code) {
  add_normalised_command(
      kube, "profile",
      "Run a benchmark on a cluster: a controller pod and worker pods (direct mode: "
      "Role, RoleBinding, ConfigMap and JobSet; see docs/kubernetes.md)",
      [](CLI::App& cmd) -> command_body {
        auto st = std::make_shared<profile_state>();
        auto& req = st->req;
        const std::string g = "Kubernetes";
        cmd.add_flag("--operator", req.operator_flag,
                     "Run as an AIPerfJob: the operator creates and harvests the run")
            ->group("Mode");
        cmd.add_flag("--no-operator", req.no_operator_flag,
                     "Run directly: create the Role, RoleBinding, ConfigMap and JobSet")
            ->group("Mode");
        cmd.add_flag("-d,--detach", req.detach, "Return once the run is created")
            ->group("Mode");
        cmd.add_flag("--no-detach", req.no_detach,
                     "Follow the run even when stdout is not a terminal")
            ->group("Mode");
        cmd.add_flag("--dry-run", req.dry_run,
                     "Print the objects it would create; contact no cluster")
            ->group("Mode");
        cmd.add_option("-n,--namespace", req.cluster.namespace_name,
                       "Namespace of the run; default the kubeconfig context's, else "
                       "default (never created)")
            ->group(g);
        cmd.add_option("--kubeconfig", req.cluster.kubeconfig,
                       "Kubeconfig file; default $KUBECONFIG or ~/.kube/config")
            ->group(g);
        cmd.add_option("--kube-context", req.cluster.context,
                       "Kubeconfig context; default the current one")
            ->group(g);
        add_deploy_flags(cmd, st->deploy);
        add_benchmark_flags(cmd, st->bench);
        return [st](CLI::App& parsed) { return run_parsed(parsed, *st); };
      },
      exit_code);
}

} // namespace aiperf::kube_command
