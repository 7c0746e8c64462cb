// `kube profile`, `results`, `logs`, `list`, `cancel`, `delete`: a benchmark
// run on a cluster, from creation to cleanup. In direct mode the run is a
// JobSet `aiperf-<name>` with its Role, RoleBinding and ConfigMap, all
// labelled `aiperf.nvidia.com/job-id=<name>`; in operator mode an AIPerfJob
// `<name>` owns those four. `list`, `cancel` and `delete` tell the two apart
// by whether an AIPerfJob of the name exists; `logs` reads the JobSet's pods
// either way. The CLI reaches pods only through the API server
// (kube_cluster.hpp).
//
// The controller API routes used (port 9090; the results sidecar serves the
// first two on 9091 and is asked when the controller does not answer):
//   GET  /api/results/list         {"files":[{"name","size"}]}
//   GET  /api/results/files/{path} the file's bytes; 404 before the marker
//   POST /api/shutdown             202; 409 while the benchmark runs
//   POST /api/cancel               202: stop now, export partial results
//                                  (marker was_cancelled: true)
#include "tools/commands/kube_command.hpp"
#include "tools/commands/kube_cluster.hpp"
#include "tools/commands/kube_workflow.hpp"

#include "actors/benchmark/api_service/results_files.hpp"

#include "k8s/api/json.hpp"
#include "k8s/object/time.hpp"
#include "k8s/object/wire.hpp"
#include "runtime/io/durable_file.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace aiperf::kube_command {

namespace fs = std::filesystem;

namespace {

const k8s::resource_ref jobsets_ref{"jobset.x-k8s.io", "v1alpha2", "jobsets",
                                    "", "", ""};
const k8s::resource_ref aiperfjobs_ref{"aiperf.nvidia.com", "v1alpha1", "aiperfjobs",
                                       "", "", ""};

k8s::json parse_body(const k8s::response& r) {
  auto j = k8s::json::parse(r.body, nullptr, false);
  return j.is_discarded() ? k8s::json::object() : j;
}

/// Connects for `target` and checks its namespace.
caf::expected<std::unique_ptr<cluster>> connect_to(const cluster_flags& flags,
                                                   const std::string& ns) {
  auto c = cluster::connect(flags, k8s::client::process_environment());
  if (!c)
    return c.error();
  (*c)->set_namespace(ns);
  if (auto ok = (*c)->check_namespace(); !ok)
    return ok.error();
  return c;
}

caf::expected<job_target> target_of(const std::string& positional,
                                     const cluster_flags& flags) {
  return resolve_target(positional, flags, {flags.kubeconfig, flags.context},
                        k8s::client::process_environment());
}

caf::expected<std::vector<k8s::json>>
list_items(cluster& c, k8s::resource_ref ref, const std::string& selector) {
  k8s::request r;
  r.verb = k8s::verb::list;
  r.ref = std::move(ref);
  r.label_selector = selector;
  auto got = c.call(std::move(r));
  if (!got)
    return got.error();
  auto j = parse_body(*got);
  std::vector<k8s::json> out;
  if (j.contains("items") && j["items"].is_array())
    for (auto& item : j["items"])
      out.push_back(item);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return str_at(a, {"metadata", "name"}) < str_at(b, {"metadata", "name"});
  });
  return out;
}

/// The AIPerfJob `name` in the cluster's namespace; null when there is none
/// (or the CRD is not installed: direct mode).
caf::expected<k8s::json> aiperfjob_of(cluster& c, const std::string& name) {
  k8s::request r;
  r.ref = aiperfjobs_ref;
  r.ref.namespace_name = c.namespace_name();
  r.ref.name = name;
  auto got = c.call(std::move(r));
  if (!got) {
    if (const auto* st = k8s::status_of(got.error()); st != nullptr && st->code == 404)
      return k8s::json();
    return got.error();
  }
  return parse_body(*got);
}

/// Pods of the run's JobSet (controller and workers).
caf::expected<std::vector<k8s::json>> pods_of(cluster& c,
                                              const std::string& job) {
  return list_items(c, {"", "v1", "pods", c.namespace_name(), "", ""},
                    "jobset.sigs.k8s.io/jobset-name=" + jobset_name(job));
}

} // namespace

caf::expected<std::string> controller_pod(cluster& c, const std::string& job) {
  auto pods = list_items(
      c, {"", "v1", "pods", c.namespace_name(), "", ""},
      "jobset.sigs.k8s.io/jobset-name=" + jobset_name(job)
          + ",jobset.sigs.k8s.io/replicatedjob-name=controller");
  if (!pods)
    return pods.error();
  std::string any;
  for (const auto& p : *pods) {
    auto name = str_at(p, {"metadata", "name"});
    if (str_at(p, {"status", "phase"}) == "Running")
      return name;
    if (any.empty())
      any = name;
  }
  if (!any.empty())
    return any;
  return make_error(k8s::errc::not_found,
                    "no controller pod of jobset " + jobset_name(job) + " in "
                        + c.namespace_name()
                        + ": check the run exists (aiperf-node kube list -n "
                        + c.namespace_name() + ")");
}

caf::expected<results_summary> download_results(cluster& c,
                                                const std::string& job,
                                                const fs::path& out_dir) {
  auto pod = controller_pod(c, job);
  if (!pod)
    return pod.error();
  const auto& ns = c.namespace_name();
  int port = 9090;
  auto listed = c.call(pod_proxy(ns, *pod, port, "/api/results/list"));
  if (!listed) {
    // The controller container may have died; the sidecar serves the same
    // files read-only.
    port = 9091;
    auto again = c.call(pod_proxy(ns, *pod, port, "/api/results/list"));
    if (!again)
      return make_error(k8s::errc::unavailable,
                        "list the results of pod " + *pod
                            + " (ports 9090 and 9091 through the API server "
                              "proxy): "
                            + error_message(listed.error()) + "; "
                            + error_message(again.error()));
    listed = std::move(again);
  }
  auto j = parse_body(*listed);
  if (!j.contains("files") || !j["files"].is_array())
    return make_error(k8s::errc::invalid,
                      "pod " + *pod + " answered /api/results/list without a "
                                      "files array: "
                          + listed->body.substr(0, 200));
  results_summary sum;
  sum.pod = *pod;
  sum.port = port;
  for (const auto& f : j["files"]) {
    auto name = f.is_object() && f.contains("name") && f["name"].is_string()
                    ? f["name"].get<std::string>()
                    : std::string{};
    if (!api_service::is_safe_result_name(name))
      return make_error(k8s::errc::invalid,
                        "pod " + *pod + " listed an unsafe result path \""
                            + name + "\"; refusing to write it");
    auto got = c.call(
        pod_proxy(ns, *pod, port, api_service::result_file_route(name)));
    if (!got)
      return got.error();
    if (f.contains("size") && f["size"].is_number_integer()
        && f["size"].get<std::int64_t>()
               != static_cast<std::int64_t>(got->body.size()))
      return make_error(k8s::errc::invalid,
                        "result " + name + " of pod " + *pod + ": listed "
                            + std::to_string(f["size"].get<std::int64_t>())
                            + " bytes, received "
                            + std::to_string(got->body.size()));
    auto path = out_dir / name;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec)
      return make_error(io::errc::system, "cannot create "
                                              + path.parent_path().string()
                                              + ": " + ec.message());
    if (auto ok = io::atomic_write_file(path, got->body); !ok)
      return ok.error();
    sum.files.push_back(name);
    sum.bytes += got->body.size();
  }
  return sum;
}

caf::expected<int> post_controller(cluster& c, const std::string& job,
                                   const std::string& route) {
  auto pod = controller_pod(c, job);
  if (!pod)
    return pod.error();
  auto r = pod_proxy(c.namespace_name(), *pod, 9090, route);
  r.verb = k8s::verb::create;
  auto got = c.call(std::move(r));
  if (!got)
    return got.error();
  return got->code;
}

namespace {

// --- kube results -----------------------------------------------------------

struct results_options {
  cluster_flags cluster;
  std::string name;
  bool from_pods = false;
  std::string output;
  bool shutdown = false;
  std::string run;                                // --run EPOCH
  std::string operator_namespace = "aiperf-system"; // where the results server runs
  std::string format = "text";                    // list-runs -o
};

// GET `route` (below /api/v1/results) of the operator's results server,
// through the API server's service proxy.
caf::expected<k8s::response> results_server(cluster& c, const std::string& operator_ns,
                                            const std::string& route) {
  k8s::request r;
  r.verb = k8s::verb::get;
  r.ref = {"", "v1", "services", operator_ns, "aiperf-operator:8081",
           "proxy/api/v1/results" + route};
  return c.call(std::move(r));
}

// The error of a results-server answer, with its {"detail"} when it has one.
caf::error results_error(const caf::error& err, const std::string& what) {
  const auto* st = k8s::status_of(err);
  auto code = st != nullptr && st->code == 404 ? k8s::errc::not_found : k8s::errc::unavailable;
  return make_error(code, what + ": " + error_message(err));
}

// GET .../{ns}/{job}/runs of the operator's results server.
caf::expected<k8s::response> stored_runs_of(cluster& c, const std::string& operator_ns,
                                            const job_target& t) {
  auto runs = results_server(c, operator_ns, "/" + t.namespace_name + "/" + t.name + "/runs");
  if (!runs)
    return results_error(runs.error(), "no stored runs of " + t.namespace_name + "/" + t.name
                                           + " in the operator's results");
  return runs;
}

// The operator's copy of a run: `--run` or the latest epoch, every file
// listed, each written atomically with its size checked.
int results_from_operator(const results_options& o, const job_target& t, cluster& c) {
  auto base = "/" + t.namespace_name + "/" + t.name;
  std::string epoch = o.run;
  if (epoch.empty()) {
    auto runs = stored_runs_of(c, o.operator_namespace, t);
    if (!runs)
      return report(runs.error());
    auto latest = parse_body(*runs).value("latest_epoch", k8s::json());
    if (!latest.is_string())
      return report(make_error(k8s::errc::not_found,
                               t.namespace_name + "/" + t.name
                                   + " has no latest run (pass --run EPOCH; "
                                     "kube results list-runs lists them)"));
    epoch = latest.get<std::string>();
  }
  auto run = results_server(c, o.operator_namespace, base + "/runs/" + epoch);
  if (!run)
    return report(results_error(run.error(), "run " + epoch + " of " + t.namespace_name + "/"
                                                 + t.name));
  auto doc = parse_body(*run);
  if (!doc.value("ready", false))
    return report(make_error(k8s::errc::not_found, "run " + epoch + " of " + t.namespace_name
                                                       + "/" + t.name + " is not stored whole yet"));
  fs::path out = !o.output.empty() ? fs::path{o.output}
                 : o.run.empty()   ? fs::path{"artifacts"} / t.name
                                   : fs::path{"artifacts"}
                                       / (t.namespace_name + "__" + t.name + "__" + epoch);
  std::size_t files = 0;
  std::uint64_t bytes = 0;
  for (const auto& f : doc.value("files", k8s::json::array())) {
    auto name = f.value("name", std::string{});
    if (!api_service::is_safe_result_name(name))
      return report(make_error(k8s::errc::invalid, "the results server listed an unsafe path \""
                                                       + name + "\"; refusing to write it"));
    auto route = api_service::result_file_route(name).substr(
        api_service::results_files_prefix.size());
    auto got = results_server(c, o.operator_namespace, base + "/runs/" + epoch + "/" + route);
    if (!got)
      return report(results_error(got.error(), name + " of run " + epoch));
    if (got->body.size() != f.value("size", std::uint64_t{0}))
      return report(make_error(k8s::errc::invalid,
                               name + ": listed " + std::to_string(f.value("size", 0)) + " bytes, "
                                   + std::to_string(got->body.size()) + " arrived"));
    std::error_code ec;
    fs::create_directories((out / name).parent_path(), ec);
    if (auto ok = io::atomic_write_file(out / name, got->body); !ok)
      return report(ok.error());
    ++files;
    bytes += got->body.size();
  }
  std::printf("downloaded %zu files (%llu bytes) of run %s of %s/%s from the operator into %s\n",
              files, static_cast<unsigned long long>(bytes), epoch.c_str(),
              t.namespace_name.c_str(), t.name.c_str(), out.string().c_str());
  std::fflush(stdout);
  return 0;
}

int run_list_runs(const results_options& o) {
  if (o.format != "text" && o.format != "json")
    return report(make_error(config::errc::invalid, "-o: '" + o.format + "' is not text or json"));
  auto t = target_of(o.name, o.cluster);
  if (!t)
    return report(t.error());
  auto c = connect_to(o.cluster, t->namespace_name);
  if (!c)
    return report(c.error());
  auto runs = stored_runs_of(**c, o.operator_namespace, *t);
  if (!runs)
    return report(runs.error());
  if (o.format == "json") {
    std::fwrite(runs->body.data(), 1, runs->body.size(), stdout);
    std::fputc('\n', stdout);
  } else {
    std::printf("%-18s %-8s %6s %12s\n", "EPOCH", "LATEST", "FILES", "BYTES");
    for (const auto& r : parse_body(*runs).value("runs", k8s::json::array()))
      std::printf("%-18s %-8s %6d %12lld\n", r.value("epoch", std::string{}).c_str(),
                  r.value("is_latest", false) ? "yes" : "", r.value("file_count", 0),
                  static_cast<long long>(r.value("total_size_bytes", std::int64_t{0})));
  }
  std::fflush(stdout);
  return 0;
}

int run_results(const results_options& o) {
  if (!o.from_pods && o.shutdown)
    return report(make_error(config::errc::invalid,
                             "--shutdown goes with --from-pods (it stops the controller pod)"));
  auto t = target_of(o.name, o.cluster);
  if (!t)
    return report(t.error());
  auto c = connect_to(o.cluster, t->namespace_name);
  if (!c)
    return report(c.error());
  if (!o.from_pods)
    return results_from_operator(o, *t, **c);
  fs::path out = o.output.empty() ? fs::path{"artifacts"} / t->name
                                  : fs::path{o.output};
  auto sum = download_results(**c, t->name, out);
  if (!sum)
    return report(sum.error());
  if (sum->files.empty())
    return report(make_error(
        k8s::errc::not_found,
        "pod " + sum->pod + " lists no results yet: the run has not finished "
            "its export (the controller lists files once it wrote "
            ".aiperf_results_ready.json); try again later"));
  std::printf("downloaded %zu files (%llu bytes) from pod %s (port %d) into "
              "%s\n",
              sum->files.size(), static_cast<unsigned long long>(sum->bytes),
              sum->pod.c_str(), sum->port, out.string().c_str());
  if (o.shutdown) {
    auto code = post_controller(**c, t->name, "/api/shutdown");
    if (!code) {
      if (const auto* st = k8s::status_of(code.error());
          st != nullptr && st->code == 409)
        return report(make_error(
            k8s::errc::conflict,
            "--shutdown: the benchmark is still running (409); the "
            "controller shuts down only after its final export"));
      return report(code.error());
    }
    std::printf("controller of %s shutting down\n", t->name.c_str());
  }
  std::fflush(stdout);
  return 0;
}

// --- kube logs --------------------------------------------------------------

struct logs_options {
  cluster_flags cluster;
  std::string name;
  std::string container;
};

int run_logs(const logs_options& o) {
  auto t = target_of(o.name, o.cluster);
  if (!t)
    return report(t.error());
  auto c = connect_to(o.cluster, t->namespace_name);
  if (!c)
    return report(c.error());
  auto pods = pods_of(**c, t->name);
  if (!pods)
    return report(pods.error());
  if (pods->empty())
    return report(make_error(k8s::errc::not_found,
                             "no pods of jobset " + jobset_name(t->name)
                                 + " in " + t->namespace_name));
  int failures = 0;
  for (const auto& p : *pods) {
    auto pod = str_at(p, {"metadata", "name"});
    std::vector<std::string> containers;
    for (const char* kind : {"initContainers", "containers"}) {
      const auto& spec = p.contains("spec") ? p["spec"] : k8s::json::object();
      if (spec.contains(kind) && spec[kind].is_array())
        for (const auto& ct : spec[kind])
          if (ct.contains("name") && ct["name"].is_string())
            containers.push_back(ct["name"].get<std::string>());
    }
    for (const auto& ct : containers) {
      if (!o.container.empty() && ct != o.container)
        continue;
      auto got = (*c)->call(pod_log(t->namespace_name, pod, ct));
      if (!got) {
        ++failures;
        std::fprintf(stderr, "warning: %s/%s: %s\n", pod.c_str(), ct.c_str(),
                     error_message(got.error()).c_str());
        continue;
      }
      std::string prefix = "[" + pod + "/" + ct + "] ";
      std::string out;
      std::size_t from = 0;
      const auto& body = got->body;
      while (from < body.size()) {
        auto nl = body.find('\n', from);
        auto end = nl == std::string::npos ? body.size() : nl;
        out += prefix;
        out.append(body, from, end - from);
        out += '\n';
        from = end + 1;
      }
      std::fwrite(out.data(), 1, out.size(), stdout);
    }
  }
  std::fflush(stdout);
  return 0;
}

// --- kube list --------------------------------------------------------------

struct list_options {
  cluster_flags cluster;
  bool all_namespaces = false;
};

int run_list(const list_options& o) {
  auto c = cluster::connect(o.cluster, k8s::client::process_environment());
  if (!c)
    return report(c.error());
  auto ref = jobsets_ref;
  if (!o.all_namespaces) {
    if (auto ok = (*c)->check_namespace(); !ok)
      return report(ok.error());
    ref.namespace_name = (*c)->namespace_name();
  }
  std::vector<jobset_row> rows;
  auto now = static_cast<std::int64_t>(std::time(nullptr));
  // Operator mode: the AIPerfJobs (none when the CRD is not installed).
  auto jobs_ref = aiperfjobs_ref;
  jobs_ref.namespace_name = ref.namespace_name;
  auto jobs = list_items(**c, jobs_ref, "");
  std::vector<std::string> owned; // "namespace/jobset" of those jobs
  if (jobs) {
    for (const auto& j : *jobs) {
      rows.push_back(row_of_aiperfjob(j, now));
      owned.push_back(rows.back().namespace_name + "/" + jobset_name(rows.back().name));
    }
  } else if (const auto* st = k8s::status_of(jobs.error()); st == nullptr || st->code != 404) {
    return report(jobs.error());
  }
  // Direct mode: JobSets no AIPerfJob owns.
  auto items = list_items(**c, ref, "app=aiperf");
  if (!items) {
    if (const auto* st = k8s::status_of(items.error());
        st != nullptr && st->code == 404)
      return report(make_error(
          k8s::errc::not_found,
          "the cluster serves no JobSets (jobset.x-k8s.io/v1alpha2): install "
          "the JobSet controller (see docs/kubernetes.md)"));
    return report(items.error());
  }
  for (const auto& js : *items) {
    auto key = str_at(js, {"metadata", "namespace"}) + "/" + str_at(js, {"metadata", "name"});
    if (std::find(owned.begin(), owned.end(), key) == owned.end())
      rows.push_back(row_of(js, now));
  }
  std::fputs(format_rows(rows).c_str(), stdout);
  std::fflush(stdout);
  return 0;
}

// --- kube cancel ------------------------------------------------------------

struct cancel_options {
  cluster_flags cluster;
  std::string name;
};

int run_cancel(const cancel_options& o) {
  auto t = target_of(o.name, o.cluster);
  if (!t)
    return report(t.error());
  auto c = connect_to(o.cluster, t->namespace_name);
  if (!c)
    return report(c.error());
  auto job = aiperfjob_of(**c, t->name);
  if (!job)
    return report(job.error());
  if (job->is_object()) {
    // Operator mode: the operator deletes the JobSet and ends it Cancelled.
    k8s::request r;
    r.verb = k8s::verb::patch;
    r.patch = k8s::patch_type::merge;
    r.ref = aiperfjobs_ref;
    r.ref.namespace_name = t->namespace_name;
    r.ref.name = t->name;
    r.body = R"({"spec":{"cancel":true}})";
    if (auto got = (*c)->call(std::move(r)); !got)
      return report(got.error());
    std::printf("aiperfjob.aiperf.nvidia.com/%s cancel requested in %s: the operator deletes "
                "its JobSet and ends it Cancelled (no results are collected)\n",
                t->name.c_str(), t->namespace_name.c_str());
    std::fflush(stdout);
    return 0;
  }
  auto code = post_controller(**c, t->name, "/api/cancel");
  if (!code) {
    if (const auto* st = k8s::status_of(code.error());
        st != nullptr && st->code == 409)
      return report(make_error(k8s::errc::conflict,
                               "the benchmark " + t->name
                                   + " is not running any more (409): fetch "
                                     "its results with kube results "
                                   + t->name + " --from-pods"));
    return report(code.error());
  }
  std::printf("cancel requested for %s in %s: partial results are exported "
              "with was_cancelled true\n",
              t->name.c_str(), t->namespace_name.c_str());
  std::fflush(stdout);
  return 0;
}

// --- kube delete ------------------------------------------------------------

struct delete_options {
  cluster_flags cluster;
  std::string name;
  int timeout_seconds = 120;
};

} // namespace

const std::vector<k8s::resource_ref>& labelled_kinds() {
  static const std::vector<k8s::resource_ref> kinds{
      jobsets_ref,
      {"", "v1", "configmaps", "", "", ""},
      {"rbac.authorization.k8s.io", "v1", "rolebindings", "", "", ""},
      {"rbac.authorization.k8s.io", "v1", "roles", "", "", ""},
  };
  return kinds;
}

namespace {

int run_delete(const delete_options& o) {
  auto t = target_of(o.name, o.cluster);
  if (!t)
    return report(t.error());
  auto c = connect_to(o.cluster, t->namespace_name);
  if (!c)
    return report(c.error());
  auto sel = job_selector(t->name);
  std::size_t deleted = 0;
  auto job = aiperfjob_of(**c, t->name);
  if (!job)
    return report(job.error());
  bool operator_mode = job->is_object();
  if (operator_mode) {
    // The garbage collector removes what the AIPerfJob owns.
    k8s::request r;
    r.verb = k8s::verb::remove;
    r.ref = aiperfjobs_ref;
    r.ref.namespace_name = t->namespace_name;
    r.ref.name = t->name;
    r.body = R"({"propagationPolicy":"Background"})";
    if (auto got = (*c)->call(std::move(r)); !got) {
      if (const auto* st = k8s::status_of(got.error()); st == nullptr || st->code != 404)
        return report(got.error());
    } else {
      ++deleted;
      std::printf("aiperfjobs/%s deleted\n", t->name.c_str());
    }
  }
  for (auto ref : labelled_kinds()) {
    if (operator_mode)
      break; // owned: the garbage collector's
    ref.namespace_name = t->namespace_name;
    auto items = list_items(**c, ref, sel);
    if (!items) {
      // A cluster without the JobSet CRD has no JobSets to delete.
      if (const auto* st = k8s::status_of(items.error());
          st != nullptr && st->code == 404)
        continue;
      return report(items.error());
    }
    for (const auto& item : *items) {
      k8s::request r;
      r.verb = k8s::verb::remove;
      r.ref = ref;
      r.ref.name = str_at(item, {"metadata", "name"});
      r.body = R"({"propagationPolicy":"Background"})";
      auto name = r.ref.name;
      auto got = (*c)->call(std::move(r));
      if (!got) {
        if (const auto* st = k8s::status_of(got.error());
            st != nullptr && st->code == 404)
          continue;
        return report(got.error());
      }
      ++deleted;
      std::printf("%s/%s deleted\n", ref.resource.c_str(), name.c_str());
    }
  }
  // Returns when nothing labelled remains, the JobSet's Jobs and pods too
  // (garbage collection removes them after the JobSet).
  auto deadline = std::chrono::steady_clock::now()
                  + std::chrono::seconds{o.timeout_seconds};
  std::string left;
  while (true) {
    left.clear();
    auto kinds = labelled_kinds();
    for (auto ref : kinds) {
      ref.namespace_name = t->namespace_name;
      auto items = list_items(**c, ref, sel);
      if (items && !items->empty())
        left += (left.empty() ? "" : ", ") + ref.resource;
    }
    auto pods = pods_of(**c, t->name);
    if (pods && !pods->empty())
      left += (left.empty() ? "" : ", ") + std::string{"pods"};
    if (operator_mode) {
      auto still = aiperfjob_of(**c, t->name);
      if (still && still->is_object())
        left += (left.empty() ? "" : ", ") + std::string{"aiperfjobs"};
    }
    if (left.empty())
      break;
    if (std::chrono::steady_clock::now() > deadline)
      return report(make_error(
          k8s::errc::timeout,
          "objects of " + t->name + " still exist after "
              + std::to_string(o.timeout_seconds) + " s: " + left
              + " (kubectl get all,configmaps,roles,rolebindings -l "
              + sel + " -n " + t->namespace_name + ")"));
    std::this_thread::sleep_for(std::chrono::milliseconds{250});
  }
  std::printf("%s: %zu objects deleted, none left in %s\n", t->name.c_str(),
              deleted, t->namespace_name.c_str());
  std::fflush(stdout);
  return 0;
}

} // namespace

jobset_row row_of(const k8s::json& js, std::int64_t now_unix) {
  jobset_row row;
  row.name = str_at(js, {"metadata", "labels", "aiperf.nvidia.com/job-id"});
  if (row.name.empty())
    row.name = str_at(js, {"metadata", "name"});
  row.namespace_name = str_at(js, {"metadata", "namespace"});
  row.phase = "Running";
  if (js.contains("spec") && js["spec"].is_object()
      && js["spec"].value("suspend", false))
    row.phase = "Suspended";
  if (js.contains("status") && js["status"].contains("conditions")
      && js["status"]["conditions"].is_array())
    for (const auto& cond : js["status"]["conditions"])
      if (cond.value("status", "") == "True") {
        auto type = cond.value("type", "");
        if (type == "Completed" || type == "Failed")
          row.phase = type;
      }
  auto progress
      = str_at(js, {"metadata", "annotations", "aiperf.nvidia.com/progress-phase"});
  if (row.phase == "Running" && !progress.empty())
    row.phase = "Running (" + progress + ")";
  auto created = k8s::parse_time(str_at(js, {"metadata", "creationTimestamp"}));
  // parse_time answers nanoseconds.
  row.age = created ? format_age(now_unix - *created / 1'000'000'000) : "<unknown>";
  return row;
}

jobset_row row_of_aiperfjob(const k8s::json& job, std::int64_t now_unix) {
  jobset_row row;
  row.name = str_at(job, {"metadata", "name"});
  row.namespace_name = str_at(job, {"metadata", "namespace"});
  row.phase = str_at(job, {"status", "phase"});
  if (row.phase.empty())
    row.phase = "Pending";
  auto sub = str_at(job, {"status", "subPhase"});
  if ((row.phase == "Running" || row.phase == "Initializing") && !sub.empty())
    row.phase += " (" + sub + ")";
  auto created = k8s::parse_time(str_at(job, {"metadata", "creationTimestamp"}));
  row.age = created ? format_age(now_unix - *created / 1'000'000'000) : "<unknown>";
  return row;
}

std::string format_age(std::int64_t seconds) {
  if (seconds < 0)
    seconds = 0;
  // kubectl's duration.HumanDuration, simplified to two units.
  if (seconds < 120)
    return std::to_string(seconds) + "s";
  auto minutes = seconds / 60;
  if (minutes < 10)
    return std::to_string(minutes) + "m" + std::to_string(seconds % 60) + "s";
  if (minutes < 180)
    return std::to_string(minutes) + "m";
  auto hours = minutes / 60;
  if (hours < 48)
    return std::to_string(hours) + "h" + std::to_string(minutes % 60) + "m";
  return std::to_string(hours / 24) + "d";
}

std::string format_rows(const std::vector<jobset_row>& rows) {
  std::vector<std::vector<std::string>> cells{
      {"NAME", "NAMESPACE", "PHASE", "AGE"}};
  for (const auto& r : rows)
    cells.push_back({r.name, r.namespace_name, r.phase, r.age});
  std::vector<std::size_t> width(4, 0);
  for (const auto& line : cells)
    for (std::size_t i = 0; i < 4; ++i)
      width[i] = std::max(width[i], line[i].size());
  std::string out;
  for (const auto& line : cells) {
    for (std::size_t i = 0; i < 4; ++i) {
      out += line[i];
      if (i + 1 < 4)
        out += std::string(width[i] - line[i].size() + 3, ' ');
    }
    out += '\n';
  }
  return out;
}

void add_workflow(CLI::App& kube, int& exit_code) {
  {
    auto o = std::make_shared<results_options>();
    auto* sub = kube.add_subcommand(
        "results", "Copy a run's exports: from the operator's results server (a run it "
                   "stored), or with --from-pods from the controller pod");
    sub->add_option("name", o->name,
                    "the benchmark (default: the last kube profile)");
    add_cluster_flags(*sub, o->cluster);
    sub->add_option("--run", o->run, "the run's epoch (default: the latest)");
    sub->add_option("--operator-namespace", o->operator_namespace,
                    "where the operator runs (default aiperf-system)");
    sub->add_flag("--from-pods", o->from_pods,
                  "read the controller pod's results API through the API "
                  "server's pods proxy");
    sub->add_option("--output", o->output,
                    "where to write (default: ./artifacts/<name>, with --run "
                    "./artifacts/<ns>__<name>__<epoch>)");
    sub->add_flag("--shutdown", o->shutdown,
                  "then POST /api/shutdown so the controller pod exits (with --from-pods)");
    auto lr = std::make_shared<results_options>();
    auto* list_runs = sub->add_subcommand("list-runs", "The operator's stored runs of a job");
    // CLI11 runs a parent's callback after its subcommand's: `results
    // list-runs` is only the listing.
    sub->callback([o, &exit_code, list_runs] {
      if (!list_runs->parsed())
        exit_code = run_results(*o);
    });
    list_runs->add_option("name", lr->name, "the benchmark (default: the last kube profile)");
    add_cluster_flags(*list_runs, lr->cluster);
    list_runs->add_option("--operator-namespace", lr->operator_namespace,
                          "where the operator runs (default aiperf-system)");
    list_runs->add_option("-o,--output", lr->format, "text or json (the /runs body)");
    list_runs->callback([lr, &exit_code] { exit_code = run_list_runs(*lr); });
  }
  {
    auto o = std::make_shared<logs_options>();
    auto* sub = kube.add_subcommand(
        "logs", "Print the logs of every pod of a run, prefixed pod/container");
    sub->add_option("name", o->name,
                    "the benchmark (default: the last kube profile)");
    add_cluster_flags(*sub, o->cluster);
    sub->add_option("--container", o->container, "only this container");
    sub->callback([o, &exit_code] { exit_code = run_logs(*o); });
  }
  {
    auto o = std::make_shared<list_options>();
    auto* sub = kube.add_subcommand(
        "list", "List benchmark runs: AIPerfJobs, and JobSets labelled app: aiperf that no "
                "AIPerfJob owns");
    add_cluster_flags(*sub, o->cluster);
    sub->add_flag("-A,--all-namespaces", o->all_namespaces,
                  "every namespace instead of one");
    sub->callback([o, &exit_code] { exit_code = run_list(*o); });
  }
  {
    auto o = std::make_shared<cancel_options>();
    auto* sub = kube.add_subcommand(
        "cancel", "Cancel a run: an AIPerfJob gets spec.cancel, a direct-mode run's controller "
                  "stops and exports what it has");
    sub->add_option("name", o->name,
                    "the benchmark (default: the last kube profile)");
    add_cluster_flags(*sub, o->cluster);
    sub->callback([o, &exit_code] { exit_code = run_cancel(*o); });
  }
  {
    auto o = std::make_shared<delete_options>();
    auto* sub = kube.add_subcommand(
        "delete", "Delete every object of a run (the AIPerfJob, or the direct-mode objects) and "
                  "wait until none is left");
    sub->add_option("name", o->name,
                    "the benchmark (default: the last kube profile)");
    add_cluster_flags(*sub, o->cluster);
    sub->add_option("--timeout", o->timeout_seconds,
                    "seconds to wait for the objects to go")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    sub->callback([o, &exit_code] { exit_code = run_delete(*o); });
  }
  add_profile(kube, exit_code);
}

} // namespace aiperf::kube_command
