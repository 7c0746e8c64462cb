#include "actors/operator/job_reconciler.hpp"

#include "actors/operator/endpoint_probe.hpp"
#include "actors/operator/job_status.hpp"
#include "actors/operator/pod_diagnosis.hpp"
#include "actors/operator/results_api.hpp"
#include "k8s/api/json.hpp"
#include "k8s/manifests/aiperfjob.hpp"
#include "k8s/object/time.hpp"
#include "proto/error.hpp"
#include "runtime/log/log.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace aiperf::op {

namespace {

namespace inf = k8s::informer;
namespace mf = k8s::manifests;
using k8s::request;
using k8s::resource_ref;
using k8s::response;
using k8s::verb;

/// `(child_changed_atom, kind, key)` from the mapper that owns the informers
/// of one child kind (JobSets, Pods). No reply.
using child_changed_atom = caf::atom_constant<caf::atom("opchild")>;

/// The children the operator watches, by the job-id label.
enum child_kind : std::uint8_t { jobsets = 0, pods = 1 };

/// `(sweep_atom)`: its own daily timer; forwarded to the harvester.
using reconciler_actor
    = inf::owner_actor::extend<caf::reacts_to<child_changed_atom, std::uint8_t, std::string>,
                               caf::reacts_to<sweep_atom>>;

constexpr std::string_view group = "aiperf.nvidia.com";
constexpr std::string_view component = "aiperf-operator";
constexpr std::string_view user_agent = "aiperf-node/operator";
constexpr std::string_view completion_claimed = "aiperf.nvidia.com/completion-claimed";
constexpr std::string_view benchmark_complete = "aiperf.nvidia.com/benchmark-complete";
constexpr std::string_view startup_failure_claimed = "aiperf.nvidia.com/startup-failure-claimed";
constexpr std::string_view heartbeat_annotation = "aiperf.nvidia.com/controller-heartbeat";
constexpr int max_rebases = 3;

resource_ref jobs_ref(std::string ns, std::string name = {}, std::string sub = {}) {
  return {std::string{group}, "v1alpha1", "aiperfjobs", std::move(ns), std::move(name),
          std::move(sub)};
}

resource_ref jobsets_ref(std::string ns, std::string name = {}) {
  return {"jobset.x-k8s.io", "v1alpha2", "jobsets", std::move(ns), std::move(name), ""};
}

resource_ref pods_ref(std::string ns) {
  return {"", "v1", "pods", std::move(ns), "", ""};
}

std::pair<std::string, std::string> split_key(const std::string& key) {
  auto slash = key.find('/');
  if (slash == std::string::npos)
    return {{}, key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

const json& meta(const json& obj) {
  static const json none = json::object();
  auto m = obj.find("metadata");
  return m != obj.end() && m->is_object() ? *m : none;
}

std::string uid_of(const json& obj) {
  return meta(obj).value("uid", std::string{});
}

std::string annotation(const json& obj, std::string_view key) {
  auto a = meta(obj).find("annotations");
  if (a == meta(obj).end() || !a->is_object())
    return {};
  return a->value(std::string{key}, std::string{});
}

bool has_annotation(const json& obj, std::string_view key) {
  return !annotation(obj, key).empty();
}

// What is kept per AIPerfJob key between passes.
struct job_memory {
  std::string uid;
  std::optional<mf::worker_layout> layout;
  /// Set when the job is deleted or replaced: stops its harvest.
  cancel_flag cancelled = std::make_shared<std::atomic<bool>>(false);
  /// A harvest runs without holding the key (a deletion must be seen while
  /// it runs); its answer is kept here and the key queued again.
  bool harvesting = false;
  std::optional<caf::expected<harvest_result>> harvested;
  /// The heartbeat a Warning was emitted for (once per silence).
  std::string stale_heartbeat;
  /// "<pod uid>/<container>" warned about for its restarts.
  std::set<std::string> restarts_warned;
  /// When an unreachable endpoint is probed again.
  caf::actor_clock::time_point probe_again;
};

struct reconciler_state {
  reconciler_config cfg;
  std::map<std::string, inf::informer_actor> job_informers; // namespace ("" = all)
  /// By child_kind, then namespace ("" = all).
  std::array<std::map<std::string, inf::informer_actor>, 2> child_informers;
  std::map<std::string, job_memory> jobs;   // key -> memory
  std::set<std::string> deleted_uids;       // never evicted

  void forget(job_memory& mem) {
    deleted_uids.insert(mem.uid);
    mem.cancelled->store(true);
  }
  caf::actor_clock::time_point started;
  std::uint64_t events = 0;

  inf::informer_actor informer_for(const std::map<std::string, inf::informer_actor>& m,
                                   const std::string& ns) const {
    auto it = m.find(ns);
    if (it != m.end())
      return it->second;
    it = m.find("");
    return it != m.end() ? it->second : inf::informer_actor{};
  }
};

using self_ptr = reconciler_actor::stateful_pointer<reconciler_state>;

std::int64_t now_unix(self_ptr self) {
  auto& st = self->state;
  auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(self->clock().now() - st.started);
  return st.cfg.start_unix_seconds + elapsed.count();
}

request make_request(self_ptr self, verb v, resource_ref ref, const json& body = nullptr,
                     k8s::patch_type pt = k8s::patch_type::none) {
  request r;
  r.verb = v;
  r.ref = std::move(ref);
  r.patch = pt;
  if (!body.is_null())
    r.body = body.dump();
  r.user = self->state.cfg.user;
  // The product client's own user agent, set here too so that the
  // reconciler's requests are told from its informers' in process.
  r.user_agent = std::string{user_agent};
  if (v == verb::create || v == verb::update || v == verb::patch)
    r.field_manager = std::string{component};
  return r;
}

k8s::errc code_of(const caf::error& err) {
  return error_code(err, k8s::errc::transport);
}

// One pass over one AIPerfJob key: a chain of API calls that ends with the
// informer's `done`. Shared by its continuations.
class pass : public std::enable_shared_from_this<pass> {
public:
  pass(self_ptr self, std::string key)
      : self_(self), key_(std::move(key)), began_(self->clock().now()) {
    std::tie(ns_, name_) = split_key(key_);
    informer_ = self_->state.informer_for(self_->state.job_informers, ns_);
  }

  void start() {
    auto me = shared_from_this();
    self_->request(informer_, caf::infinite, inf::cache_get_atom::value, key_)
        .then([me](std::string& text) { me->on_job(json::parse(text, nullptr, false)); },
              [me](caf::error&) { me->on_gone(); });
  }

private:
  // A change to a status, applied to the status read and, after a refused
  // fence, to the live one.
  using status_change = std::function<void(json& status)>;

  // -- entry ------------------------------------------------------------------

  void on_gone() {
    auto& jobs = self_->state.jobs;
    if (auto it = jobs.find(key_); it != jobs.end()) {
      self_->state.forget(it->second);
      jobs.erase(it);
    }
    finish();
  }

  void on_job(json job) {
    if (!job.is_object())
      return finish();
    job_ = std::move(job);
    uid_ = uid_of(job_);
    auto& mem = self_->state.jobs[key_];
    if (mem.uid != uid_) {
      if (!mem.uid.empty())
        self_->state.forget(mem); // replaced by a new incarnation
      mem = job_memory{uid_, std::nullopt};
    }
    if (meta(job_).contains("deletionTimestamp")) {
      self_->state.forget(mem);
      return finish();
    }
    auto p = phase_of(job_);
    if (is_terminal(p))
      return finish();
    const json spec = job_.value("spec", json::object());
    if (spec.value("cancel", false))
      return cancel();
    if (p.empty())
      return admit();
    follow();
  }

  [[nodiscard]] bool deleted() const {
    return self_->state.deleted_uids.count(uid_) > 0;
  }

  // -- admission --------------------------------------------------------------

  // The spec cannot run: Failed with ConfigValid=False, nothing created.
  void spec_invalid(const caf::error& err) {
    auto msg = error_message(err);
    fail_job(msg, [msg, this](json& s) {
      set_condition(s, "ConfigValid", "False", "SpecInvalid", msg, now());
    }, "SpecInvalid");
  }

  void admit() {
    auto plan = mf::plan_of(job_, self_->state.cfg.cores);
    if (!plan)
      return spec_invalid(plan.error());
    plan_ = std::move(*plan);
    auto epoch = epoch_key_of(job_);
    if (!is_epoch_key(epoch)) {
      auto msg = "metadata.creationTimestamp "
                 + meta(job_).value("creationTimestamp", std::string{"(none)"})
                 + " gives the epoch key '" + epoch
                 + "', under which no results can be stored (9 or 10 digits of seconds since "
                   "1970): check the API server's clock";
      return fail_job(msg, [msg, this](json& s) {
        set_condition(s, "ConfigValid", "False", "SpecInvalid", msg, now());
      }, "SpecInvalid");
    }
    plan_->d.epoch_key = epoch;
    self_->state.jobs[key_].layout = plan_->layout;
    auto env = self_->state.cfg.env ? self_->state.cfg.env : mf::env_lookup{[](std::string_view) {
      return std::optional<std::string>{};
    }};
    auto objects = mf::direct_mode_objects(plan_->d, plan_->run, env);
    if (!objects)
      return spec_invalid(objects.error());
    objects_ = std::move(*objects);
    // Preflight: every Secret the pods need exists (GET only).
    const auto& d = plan_->d;
    for (const auto& [env_name, ref] : d.env_from_secrets)
      secrets_.emplace_back(ref.secret, "podTemplate.env " + env_name);
    for (const auto& m : d.secret_mounts)
      secrets_.emplace_back(m.name, "podTemplate.volumes (mounted at " + m.mount_path + ")");
    for (const auto& s : d.image_pull_secrets)
      secrets_.emplace_back(s, "podTemplate.imagePullSecrets");
    if (plan_->skip_endpoint_check || !self_->state.cfg.prober)
      return preflight(0);
    // An unreachable endpoint is probed again 10 s later, not at every pass
    // (our own status write brings one at once).
    auto& mem = self_->state.jobs[key_];
    if (auto wait = mem.probe_again - self_->clock().now(); wait > caf::timespan{0})
      return finish(wait);
    for (const auto& u : plan_->run.urls)
      if (std::find(urls_.begin(), urls_.end(), u) == urls_.end())
        urls_.push_back(u);
    probe(0);
  }

  // EndpointReachable: every endpoint URL resolves and accepts a TCP
  // connection from here. A name that does not resolve fails the job; a
  // refusal or a timeout is retried (the server may still be starting).
  void probe(std::size_t i) {
    if (i == urls_.size()) {
      endpoint_checked_ = true;
      return preflight(0);
    }
    auto me = shared_from_this();
    self_->request(self_->state.cfg.prober, self_->state.cfg.probe_timeout, probe_atom::value,
                   urls_[i])
        .then([me, i](probe_result& r) { me->probed(i, std::move(r)); },
              [me, i](caf::error& err) {
                me->probed(i, {probe_outcome::unreachable, error_message(err)});
              });
  }

  void probed(std::size_t i, probe_result r) {
    if (r.outcome == probe_outcome::reachable)
      return probe(i + 1);
    auto msg = "endpoint " + urls_[i] + ": " + r.message;
    if (r.outcome == probe_outcome::dns_failed) {
      return fail_job(msg, [msg, this](json& s) {
        set_condition(s, "ConfigValid", "True", "SpecValid", "the spec is valid", now());
        set_condition(s, "EndpointReachable", "False", "EndpointDNSResolutionFailed", msg, now());
      }, "EndpointDNSResolutionFailed");
    }
    bool was_unreachable = false;
    const json status = job_.value("status", json::object());
    if (const json* c = condition_of(status, "EndpointReachable"))
      was_unreachable = c->value("status", std::string{}) == "False";
    write_status(
        [msg, this](json& s) {
          set_condition(s, "ConfigValid", "True", "SpecValid", "the spec is valid", now());
          set_condition(s, "EndpointReachable", "False", "EndpointUnreachable", msg, now());
        },
        [this, msg, was_unreachable] {
          if (!was_unreachable)
            event("Warning", "EndpointUnreachable", msg + "; retried every 10 s");
          self_->state.jobs[key_].probe_again = self_->clock().now() + std::chrono::seconds{10};
          finish(std::chrono::seconds{10});
        });
  }

  void preflight(std::size_t i) {
    if (deleted())
      return finish();
    if (i == secrets_.size())
      return create(0);
    auto me = shared_from_this();
    call(make_request(self_, verb::get, {"", "v1", "secrets", ns_, secrets_[i].first, ""}),
         [me, i](response&) { me->preflight(i + 1); },
         [me, i](const caf::error& err) {
           if (code_of(err) != k8s::errc::not_found)
             return me->finish({}, true);
           const auto& [secret, used_by] = me->secrets_[i];
           auto msg = "Secret \"" + secret + "\" (" + used_by + ") not found in namespace "
                      + me->ns_ + "; create it before the job, e.g. kubectl create secret "
                      + "generic " + secret + " -n " + me->ns_ + " --from-literal=KEY=VALUE";
           me->fail_job(msg, [msg, me](json& s) {
             set_condition(s, "ConfigValid", "True", "SpecValid", "the spec is valid", me->now());
             set_condition(s, "PreflightPassed", "False", "PreflightFailed", msg, me->now());
           }, "PreflightFailed");
         });
  }

  // Role, RoleBinding, ConfigMap, then the JobSet: the JobSet comes last, so
  // its pods never start before the ConfigMap they mount exists.
  void create(std::size_t i) {
    if (deleted())
      return finish();
    if (i == objects_.size())
      return admitted();
    auto me = shared_from_this();
    const auto& obj = objects_[i];
    call(make_request(self_, verb::create, mf::collection_of(obj), obj),
         [me, i](response&) { me->create(i + 1); },
         [me, i](const caf::error& err) {
           if (code_of(err) == k8s::errc::already_exists)
             return me->on_exists(i);
           me->finish({}, true);
         });
  }

  void on_exists(std::size_t i) {
    auto me = shared_from_this();
    auto ref = mf::collection_of(objects_[i]);
    ref.name = meta(objects_[i]).value("name", std::string{});
    call(make_request(self_, verb::get, ref),
         [me, i, ref](response& r) {
           auto existing = json::parse(r.body, nullptr, false);
           switch (ownership_of(existing, me->name_, me->uid_)) {
           case ownership::ours:
             return me->create(i + 1);
           case ownership::earlier_owner:
             // An older AIPerfJob's object, still being collected: retry
             // with back-off until the garbage collector removed it.
             return me->finish({}, true);
           case ownership::foreign:
             break;
           }
           auto kind = me->objects_[i].value("kind", std::string{});
           auto msg = kind + " " + me->ns_ + "/" + ref.name
                      + " already exists and is not owned by this AIPerfJob; delete it or "
                        "give the job another name";
           me->fail_job(msg, [msg, me](json& s) {
             set_condition(s, "ResourcesCreated", "False", "ResourceConflict", msg, me->now());
           }, "ResourceConflict");
         },
         [me, i](const caf::error& err) {
           // Gone between the create and the GET: create it again.
           if (code_of(err) == k8s::errc::not_found)
             return me->create(i);
           me->finish({}, true);
         });
  }

  void admitted() {
    auto total = self_->state.jobs[key_].layout->total_workers;
    auto jobset = mf::jobset_name(name_);
    auto generation = meta(job_).value("generation", std::int64_t{1});
    auto ttl_days = plan_->results_ttl_days;
    write_status(
        [this, total, jobset, generation, ttl_days](json& s) {
          if (!status_phase(s).empty())
            return; // admitted meanwhile (a rebase onto a newer status)
          s["phase"] = phase::pending;
          s["jobId"] = name_;
          s["jobSetName"] = jobset;
          s["startTime"] = k8s::format_time(now());
          s["observedGeneration"] = generation;
          s["workers"] = {{"ready", 0}, {"total", total}};
          if (ttl_days > 0)
            s["resultsTtlDays"] = ttl_days;
          set_condition(s, "ConfigValid", "True", "SpecValid", "the spec is valid", now());
          set_condition(s, "PreflightPassed", "True", "PreflightPassed",
                        "every referenced Secret exists", now());
          set_condition(s, "ResourcesCreated", "True", "ResourcesCreated",
                        "Role, RoleBinding, ConfigMap and JobSet " + jobset + " created", now());
          if (endpoint_checked_)
            set_condition(s, "EndpointReachable", "True", "EndpointReachable",
                          "every endpoint URL accepts connections", now());
        },
        [this] { finish(); });
  }

  // -- an admitted job ---------------------------------------------------------

  void follow() {
    const json status = job_.value("status", json::object());
    if (auto f = status.value("controllerFailure", std::string{}); !f.empty()) {
      auto msg = "Controller reported fatal failure: " + f;
      return fail_job(msg, nullptr, "ControllerFailure");
    }
    if (annotation(job_, benchmark_complete) == "true")
      return complete();
    if (has_annotation(job_, startup_failure_claimed))
      return startup_failed(); // a claim persisted before a restart resumes
    auto me = shared_from_this();
    auto informer = self_->state.informer_for(self_->state.child_informers[jobsets], ns_);
    auto key = inf::key_of(ns_, mf::jobset_name(name_));
    self_->request(informer, caf::infinite, inf::cache_get_atom::value, key)
        .then([me](std::string& text) { me->on_jobset(json::parse(text, nullptr, false)); },
              [me](caf::error&) {
                // A cache miss costs one GET, never a dropped event.
                me->call(make_request(me->self_, verb::get,
                                      jobsets_ref(me->ns_, mf::jobset_name(me->name_))),
                         [me](response& r) { me->on_jobset(json::parse(r.body, nullptr, false)); },
                         [me](const caf::error& err) {
                           if (code_of(err) == k8s::errc::not_found)
                             return me->on_jobset(nullptr);
                           me->finish({}, true);
                         });
              });
  }

  void on_jobset(json jobset) {
    jobset_ = std::move(jobset);
    if (jobset_.is_null()) {
      auto msg = "JobSet " + mf::jobset_name(name_)
                 + " was deleted before the benchmark finished";
      return fail_job(msg, nullptr, "JobSetDeleted");
    }
    if (!controlled_by(jobset_, name_, uid_))
      return finish(); // not this incarnation's: its events are not ours
    // The job's pods, from the pod informer's cache (never a list).
    auto me = shared_from_this();
    auto informer = self_->state.informer_for(self_->state.child_informers[pods], ns_);
    self_->request(informer, caf::infinite, inf::cache_list_atom::value)
        .then(
            [me](std::vector<std::string>& texts) {
              std::vector<json> mine;
              for (const auto& t : texts) {
                auto pod = json::parse(t, nullptr, false);
                if (meta(pod).value("labels", json::object())
                        .value(std::string{mf::job_id_label}, std::string{})
                    == me->name_)
                  mine.push_back(std::move(pod));
              }
              me->judge(mine);
            },
            [me](caf::error&) { me->judge({}); });
  }

  // The JobSet and the pods of an admitted job decide its next status.
  void judge(const std::vector<json>& job_pods) {
    std::optional<controller_end> ended;
    std::optional<startup_issue> issue;
    auto& mem = self_->state.jobs[key_];
    std::vector<std::string> restart_warnings;
    for (const auto& pod : job_pods) {
      auto rjob = meta(pod).value("labels", json::object())
                      .value("jobset.sigs.k8s.io/replicatedjob-name", std::string{});
      if (rjob == "controller" && !ended)
        ended = controller_termination(pod);
      if (auto found = diagnose_pod(pod))
        if (!issue || blocker_rank(found->category) < blocker_rank(issue->category))
          issue = std::move(found);
      auto pod_name = meta(pod).value("name", std::string{});
      for (const auto& r : restarts_past(pod, self_->state.cfg.pod_restart_threshold))
        if (mem.restarts_warned.insert(uid_of(pod) + "/" + r.container).second)
          restart_warnings.push_back("pod " + pod_name + " container " + r.container
                                     + " restarted " + std::to_string(r.restarts) + " times");
    }
    for (const auto& w : restart_warnings)
      event("Warning", "PodRestarting", w);
    // A blocker that fails jobs, persisted with the same fingerprint and
    // unchanged past the critical threshold: judged on the cached status,
    // so a pod event only ever records it.
    const json persisted = job_.value("status", json::object()).value("startupIssue", json::object());
    if (issue && issue->terminal_after_threshold
        && persisted.value("fingerprint", std::string{}) == issue->fingerprint
        && now() - seconds_of(persisted, "/firstObservedTime")
               >= self_->state.cfg.critical_threshold_seconds)
      return claim_startup_failure(persisted);
    auto view = view_of_jobset(jobset_);
    // A controller that died before announcing results: the pod says why.
    if (ended && !is_benchmark_outcome(ended->exit_code))
      return fail_job(ended->message, nullptr, "ControllerTerminated");
    if (heartbeat_watchdog(ended))
      return salvage(*ended);
    if (view.failure) {
      auto msg = "JobSet " + mf::jobset_name(name_) + " failed: " + *view.failure;
      return fail_job(msg, nullptr, "JobSetFailed");
    }
    const json status = job_.value("status", json::object());
    if (auto timeout = timeout_seconds(); timeout > 0) {
      auto deadline = seconds_of(job_, "/status/startTime") + static_cast<std::int64_t>(timeout);
      bool finishing = status.value("resultsExported", false)
                       || has_annotation(job_, completion_claimed);
      if (!finishing && now() >= deadline)
        return time_out(timeout);
      if (!finishing)
        requeue_ = std::chrono::seconds{std::max<std::int64_t>(deadline - now(), 1)};
    }
    // An operator that did not admit the job (a restart) derives it again.
    auto layout = self_->state.jobs[key_].layout;
    if (!layout) {
      if (auto plan = mf::plan_of(job_, self_->state.cfg.cores))
        layout = plan->layout;
      self_->state.jobs[key_].layout = layout;
    }
    int per_pod = layout ? layout->workers_per_pod : 0;
    auto warn = std::make_shared<std::optional<std::string>>();
    // The deadline above is armed from this generation's spec (after
    // admission only spec.timeoutSeconds and spec.cancel may change).
    auto generation = meta(job_).value("generation", std::int64_t{1});
    write_status(
        [view, per_pod, issue, warn, generation, this](json& s) {
          auto p = status_phase(s);
          if (is_terminal(p))
            return;
          s["observedGeneration"] = generation;
          if (p == phase::pending && view.queued)
            s["phase"] = phase::queued;
          else if ((p == phase::pending || p == phase::queued) && !view.suspended)
            s["phase"] = phase::initializing;
          auto sub = s.value("subPhase", std::string{});
          bool profiling = sub == "profiling" || sub == "processing" || sub == "stopping"
                           || sub == "shutdown";
          if (profiling && status_phase(s) == phase::initializing) {
            s["phase"] = phase::running;
            set_condition(s, "BenchmarkRunning", "True", "Profiling",
                          "the controller reports subPhase " + sub, now());
          }
          // status.workers is the operator's estimate until the controller
          // writes totalPods, which hands the key over to the controller;
          // WorkersReady follows whoever owns it.
          auto& w = s["workers"];
          if (!w.is_object())
            w = json::object();
          bool controller_owned = w.contains("totalPods");
          int total = w.value("total", 0);
          int ready = w.value("ready", 0);
          if (!controller_owned) {
            ready = std::min(view.ready_worker_jobs * per_pod, total);
            w["ready"] = ready;
          }
          bool all = total > 0 && ready >= total;
          set_condition(s, "WorkersReady", all ? "True" : "False",
                        all ? "WorkersReady" : "WorkersStarting",
                        std::to_string(ready) + " of " + std::to_string(total) + " workers "
                            + (controller_owned ? "registered with the controller" : "ready"),
                        now());
          record_startup_issue(s, issue, *warn);
        },
        [this, warn] {
          if (*warn)
            event("Warning", "StartupBlocked", **warn);
          finish(requeue_);
        });
  }

  // The heartbeat watchdog. While the controller's heartbeat is fresh a pass
  // reads only caches; once it is older than
  // AIPERF_K8S_CONTROLLER_HEARTBEAT_EXPIRY_SECONDS (from status.startTime
  // when the controller never pushed) the job is recovered: a controller
  // that exited with a benchmark outcome but never announced its results
  // is salvaged (true: the results sidecar still serves them); one that is
  // still running but silent gets a Warning event, once per silence.
  bool heartbeat_watchdog(const std::optional<controller_end>& ended) {
    auto& mem = self_->state.jobs[key_];
    auto beat_text = annotation(job_, heartbeat_annotation);
    std::int64_t beat = 0;
    if (auto parsed = k8s::parse_time(beat_text); parsed && !beat_text.empty())
      beat = *parsed / 1'000'000'000;
    else
      beat = seconds_of(job_, "/status/startTime");
    auto expiry = self_->state.cfg.heartbeat_expiry_seconds;
    auto age = now() - beat;
    if (age < expiry) {
      requeue_at_most(expiry - age);
      return false;
    }
    if (ended)
      return true;
    if (!beat_text.empty() && mem.stale_heartbeat != beat_text) {
      mem.stale_heartbeat = beat_text;
      event("Warning", "ControllerHeartbeatExpired",
            "no status push from the controller for " + std::to_string(age)
                + " s (last heartbeat " + beat_text + ")");
    }
    return false;
  }

  // The controller ended with a benchmark outcome and no benchmark-complete:
  // its exit code goes into the status (unless its final push landed), then
  // the completion path claims and harvests, the harvest falling back to
  // the results sidecar.
  void salvage(const controller_end& ended) {
    if (has_annotation(job_, completion_claimed))
      return complete(); // claimed by an earlier pass: the harvest goes on
    int code = ended.exit_code;
    auto msg = ended.message;
    write_status(
        [this, code, msg](json& s) {
          if (!s.contains("exitCode"))
            s["exitCode"] = code;
          set_condition(s, "ResultsAvailable", "False", "ResultsSalvaging",
                        msg + " without announcing its results; collecting them from the "
                              "results sidecar",
                        now());
        },
        [this, msg] {
          event("Warning", "ResultsSalvaging", msg + " without announcing its results");
          complete();
        });
  }

  // status.startupIssue: the pods' highest-priority blocker, its first
  // observation kept while its fingerprint stays; cleared by a healthy
  // update. Once it stayed AIPERF_K8S_WATCHDOG_PENDING_THRESHOLD_SECONDS,
  // `warn` gets the Warning event's message (once: warningEmitted).
  void record_startup_issue(json& s, const std::optional<startup_issue>& issue,
                            std::optional<std::string>& warn) {
    if (!issue) {
      s.erase("startupIssue");
      return;
    }
    const json before = s.value("startupIssue", json::object());
    bool same = before.value("fingerprint", std::string{}) == issue->fingerprint;
    auto first = same ? before.value("firstObservedTime", k8s::format_time(now()))
                      : k8s::format_time(now());
    json record = startup_issue_json(*issue, first);
    record["warningEmitted"] = same && before.value("warningEmitted", false);
    auto threshold = self_->state.cfg.pending_threshold_seconds;
    auto waited = now() - seconds_of(record, "/firstObservedTime");
    if (!record["warningEmitted"].get<bool>()) {
      if (waited >= threshold) {
        record["warningEmitted"] = true;
        warn = "pod " + issue->pod_name
               + (issue->container_name.empty() ? "" : " container " + issue->container_name)
               + ": " + issue->reason + (issue->message.empty() ? "" : ": " + issue->message);
      } else {
        requeue_at_most(threshold - waited);
      }
    }
    if (issue->terminal_after_threshold)
      requeue_at_most(self_->state.cfg.critical_threshold_seconds - waited);
    s["startupIssue"] = std::move(record);
  }

  // The next pass comes at the latest in `seconds` (at least 1).
  void requeue_at_most(std::int64_t seconds) {
    auto left = caf::timespan{std::chrono::seconds{std::max<std::int64_t>(seconds, 1)}};
    if (requeue_ == caf::timespan{0} || left < requeue_)
      requeue_ = left;
  }

  // The startup-failure claim: one JSON patch whose tests cover the UID,
  // the resourceVersion, spec.cancel, the phase, the whole persisted
  // startupIssue and the whole annotation map (so it and the completion
  // claim exclude each other), then the annotation. Only its winner
  // deletes the JobSet and fails the job.
  void claim_startup_failure(const json& persisted) {
    const json& m = meta(job_);
    // AIPerf's value: the fingerprint of the blocker claimed.
    auto fingerprint = persisted.value("fingerprint", std::string{});
    json ops = json::array(
        {{{"op", "test"}, {"path", "/metadata/uid"}, {"value", uid_}},
         {{"op", "test"},
          {"path", "/metadata/resourceVersion"},
          {"value", m.value("resourceVersion", std::string{})}},
         {{"op", "test"},
          {"path", "/spec/cancel"},
          {"value", job_.value("spec", json::object()).value("cancel", false)}},
         {{"op", "test"}, {"path", "/status/phase"}, {"value", phase_of(job_)}},
         {{"op", "test"}, {"path", "/status/startupIssue"}, {"value", persisted}}});
    if (m.contains("annotations")) {
      ops.push_back({{"op", "test"}, {"path", "/metadata/annotations"}, {"value", m["annotations"]}});
      ops.push_back({{"op", "add"},
                     {"path", "/metadata/annotations/" + k8s::pointer_token(startup_failure_claimed)},
                     {"value", fingerprint}});
    } else {
      ops.push_back({{"op", "add"},
                     {"path", "/metadata/annotations"},
                     {"value", {{std::string{startup_failure_claimed}, fingerprint}}}});
    }
    auto me = shared_from_this();
    call(make_request(self_, verb::patch, jobs_ref(ns_, name_), ops, k8s::patch_type::json),
         [me](response& r) {
           me->job_ = json::parse(r.body, nullptr, false);
           me->startup_failed();
         },
         [me](const caf::error&) { me->finish({}, true); }); // lost the race: re-read
  }

  // The claim is held: the JobSet goes (UID precondition), then the job
  // fails with the blocker that stayed.
  void startup_failed() {
    const json issue = job_.value("status", json::object()).value("startupIssue", json::object());
    auto container = issue.value("containerName", std::string{});
    auto detail = issue.value("message", std::string{});
    auto msg = "pod " + issue.value("podName", std::string{"?"})
               + (container.empty() ? "" : " container " + container) + ": "
               + issue.value("reason", std::string{}) + (detail.empty() ? "" : ": " + detail)
               + " (unchanged for "
               + std::to_string(self_->state.cfg.critical_threshold_seconds) + " s)";
    remove_jobset([this, msg] { fail_job(msg, nullptr, "StartupFailed"); });
  }

  double timeout_seconds() const {
    double t = job_.value("spec", json::object()).value("timeoutSeconds", 0.0);
    return t > 0 ? t : self_->state.cfg.default_timeout_seconds;
  }

  void time_out(double timeout) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", timeout);
    auto msg = std::string{"the job did not finish within its timeout of "} + text + " s";
    delete_jobset([this, msg] { fail_job(msg, nullptr, "Timeout"); });
  }

  // -- completion --------------------------------------------------------------

  // The controller set benchmark-complete: claim the completion (once, fenced
  // on the whole annotation map, so a concurrent startup-failure claim and
  // this one exclude each other), harvest, then end the job by its exit code.
  void complete() {
    if (has_annotation(job_, completion_claimed))
      return harvest();
    const json annotations = meta(job_).value("annotations", json::object());
    json ops = json::array(
        {{{"op", "test"}, {"path", "/metadata/uid"}, {"value", uid_}},
         {{"op", "test"},
          {"path", "/metadata/resourceVersion"},
          {"value", meta(job_).value("resourceVersion", std::string{})}},
         {{"op", "test"}, {"path", "/metadata/annotations"}, {"value", annotations}},
         {{"op", "add"},
          {"path", "/metadata/annotations/" + k8s::pointer_token(completion_claimed)},
          {"value", "true"}}});
    auto me = shared_from_this();
    call(make_request(self_, verb::patch, jobs_ref(ns_, name_), ops, k8s::patch_type::json),
         [me](response& r) {
           me->job_ = json::parse(r.body, nullptr, false);
           me->harvest();
         },
         [me](const caf::error&) {
           // Lost the race (or the API failed): the next pass re-reads.
           me->finish({}, true);
         });
  }

  void harvest() {
    auto& mem = self_->state.jobs[key_];
    if (mem.harvested) {
      auto got = std::move(*mem.harvested);
      mem.harvested.reset();
      if (got)
        return harvested(std::move(*got));
      if (is_error(got.error(), errc::cancelled))
        return finish();
      auto msg = "results could not be collected: " + error_message(got.error());
      return fail_job(msg, [msg, this](json& s) {
        set_condition(s, "ResultsAvailable", "False", "ResultsFetchFailed", msg, now());
      }, "ResultsFetchFailed", "ResultsFetchFailed");
    }
    if (mem.harvesting)
      return finish(); // its answer queues the key again
    auto& cfg = self_->state.cfg;
    if (!cfg.harvester)
      return fail_job("no results harvester is configured", nullptr, "ResultsFetchFailed");
    harvest_request req;
    req.namespace_name = ns_;
    req.job_name = name_;
    req.epoch = epoch_key_of(job_);
    req.controller_host = mf::controller_host(name_, ns_);
    req.spec_json = job_.value("spec", json::object()).dump(2);
    req.cancelled = mem.cancelled;
    mem.harvesting = true;
    auto self = self_;
    auto key = key_;
    auto uid = uid_;
    auto informer = informer_;
    auto keep = [self, key, uid, informer](caf::expected<harvest_result> got) {
      auto it = self->state.jobs.find(key);
      if (it == self->state.jobs.end() || it->second.uid != uid)
        return; // deleted or replaced meanwhile: nothing to apply
      it->second.harvesting = false;
      it->second.harvested = std::move(got);
      self->send(informer, inf::enqueue_atom::value, key);
    };
    self_->request(cfg.harvester, cfg.harvest_timeout, harvest_atom::value, std::move(req))
        .then([keep](harvest_result& r) { keep(std::move(r)); },
              [keep](caf::error& err) { keep(std::move(err)); });
    finish();
  }

  // The run's exit code decides the outcome; results were stored either way.
  void harvested(harvest_result r) {
    auto summary = summary_of(json::parse(r.profile_json, nullptr, false));
    auto epoch = epoch_key_of(job_);
    write_status(
        [this, summary, epoch, r](json& s) {
          if (is_terminal(status_phase(s)))
            return;
          s["summary"] = summary;
          s["resultsPath"] = r.path;
          s["runEpoch"] = std::stoll(epoch);
          s["results"] = {{"files", r.files}};
          set_condition(s, "ResultsAvailable", "True", "ResultsStored",
                        std::to_string(r.files.size()) + " files in " + r.path, now());
          int code = s.value("exitCode", 0);
          auto reason = s.value("exitReason", std::string{});
          switch (code) {
            case 0:
              return set_terminal(s, phase::completed, "", now());
            case 5:
              set_condition(s, "Degraded", "True", "WorkerPodsLost", reason, now());
              return set_terminal(s, phase::completed, "", now());
            case 4:
              return set_terminal(s, phase::failed, reason, now(), "FailedRequestThreshold");
            case 6:
              return set_terminal(s, phase::failed, reason, now(), "WorkerPodsLost");
            default:
              return set_terminal(s, phase::failed,
                                  "the controller exited with code " + std::to_string(code)
                                      + (reason.empty() ? "" : ": " + reason),
                                  now());
          }
        },
        [this] { remove_jobset([this] { finish(); }); });
  }

  // -- cancellation ------------------------------------------------------------

  // spec.cancel: the JobSet goes first, so observedGeneration is only
  // acknowledged once the deletion succeeded.
  void cancel() {
    remove_jobset([this] { cancelled(); });
  }

  void cancelled() {
    auto generation = meta(job_).value("generation", std::int64_t{1});
    write_status(
        [this, generation](json& s) {
          if (is_terminal(status_phase(s)))
            return;
          set_terminal(s, phase::cancelled, "", now());
          s["observedGeneration"] = generation;
        },
        [this] {
          event("Normal", "Cancelled", "spec.cancel is true: the JobSet was deleted");
          finish();
        });
  }

  // Reads this job's JobSet and deletes it when its controller owner is this
  // job (name and UID); gone, or someone else's, counts as removed. A
  // failed read or delete is retried.
  void remove_jobset(std::function<void()> then) {
    auto me = shared_from_this();
    call(make_request(self_, verb::get, jobsets_ref(ns_, mf::jobset_name(name_))),
         [me, then](response& r) {
           me->jobset_ = json::parse(r.body, nullptr, false);
           if (!controlled_by(me->jobset_, me->name_, me->uid_))
             return then();
           me->delete_jobset(then);
         },
         [me, then](const caf::error& err) {
           if (code_of(err) == k8s::errc::not_found)
             return then();
           me->finish({}, true);
         });
  }

  // Deletes this job's JobSet with its UID as precondition (the JobSet read
  // last); a JobSet already gone counts as deleted.
  void delete_jobset(std::function<void()> then) {
    auto me = shared_from_this();
    if (!jobset_.is_object())
      return then();
    json options = {{"kind", "DeleteOptions"},
                    {"apiVersion", "v1"},
                    {"propagationPolicy", "Background"},
                    {"preconditions", {{"uid", uid_of(jobset_)}}}};
    call(make_request(self_, verb::remove, jobsets_ref(ns_, mf::jobset_name(name_)), options),
         [then](response&) { then(); },
         [me, then](const caf::error& err) {
           if (code_of(err) == k8s::errc::not_found)
             return then();
           me->finish({}, true); // retried; observedGeneration not yet acknowledged
         });
  }

  // -- status writes -----------------------------------------------------------

  // Ends the job as Failed with `message` (status.error and the Failed
  // condition), after `extra` (conditions of the cause), and a Warning
  // event with `reason`. The resourceVersion test of the write fences the
  // phase too: a status that turned terminal meanwhile is rebased onto and
  // left alone.
  void fail_job(std::string message, std::function<void(json&)> extra, std::string reason,
                std::string failed_reason = "JobFailed") {
    write_status(
        [this, message, extra, failed_reason](json& s) {
          if (is_terminal(status_phase(s)))
            return;
          if (extra)
            extra(s);
          set_terminal(s, phase::failed, message, now(), failed_reason);
        },
        [this, reason, message] {
          event("Warning", reason, message);
          finish();
        });
  }

  // Applies `change` to the status of the job read and writes it, fenced.
  // On a failed fence the live job is read and the same change applied to
  // its status (at most max_rebases times); an unchanged status is not
  // written.
  void write_status(status_change change, std::function<void()> then, int attempt = 0) {
    if (deleted())
      return finish();
    json status = job_.value("status", json::object());
    json before = status;
    change(status);
    if (status == before)
      return then();
    auto me = shared_from_this();
    call(make_request(self_, verb::patch, jobs_ref(ns_, name_, "status"),
                      fenced_status_patch(job_, status), k8s::patch_type::json),
         [me, then](response& r) {
           me->job_ = json::parse(r.body, nullptr, false);
           then();
         },
         [me, change, then, attempt](const caf::error& err) {
           auto code = code_of(err);
           if ((code != k8s::errc::invalid && code != k8s::errc::conflict)
               || attempt >= max_rebases)
             return me->finish({}, true);
           me->call(make_request(me->self_, verb::get, jobs_ref(me->ns_, me->name_)),
                    [me, change, then, attempt](response& r) {
                      auto live = json::parse(r.body, nullptr, false);
                      if (uid_of(live) != me->uid_)
                        return me->finish(); // replaced: nothing of ours to write
                      me->job_ = std::move(live);
                      me->write_status(change, then, attempt + 1);
                    },
                    [me](const caf::error&) { me->finish({}, true); });
         });
  }

  void event(std::string_view type, std::string_view reason, std::string_view message) {
    auto stamp = k8s::format_time(now());
    char suffix[17];
    std::snprintf(suffix, sizeof suffix, "%016llx",
                  static_cast<unsigned long long>(now()) * 1'000'000'000ULL
                      + ++self_->state.events % 1'000'000'000ULL);
    json ev = {{"apiVersion", "v1"},
               {"kind", "Event"},
               {"metadata", {{"name", name_ + "." + suffix}, {"namespace", ns_}}},
               {"involvedObject",
                {{"kind", "AIPerfJob"},
                 {"namespace", ns_},
                 {"name", name_},
                 {"uid", uid_},
                 {"apiVersion", "aiperf.nvidia.com/v1alpha1"},
                 {"resourceVersion", meta(job_).value("resourceVersion", std::string{})}}},
               {"reason", reason},
               {"message", message},
               {"source", {{"component", component}}},
               {"firstTimestamp", stamp},
               {"lastTimestamp", stamp},
               {"count", 1},
               {"type", type},
               {"reportingComponent", component},
               {"reportingInstance", ""}};
    // Events are best effort, as client-go's recorder.
    self_->request(self_->state.cfg.api, self_->state.cfg.request_timeout,
                   make_request(self_, verb::create, {"", "v1", "events", ns_, "", ""}, ev))
        .then([](response&) {}, [](caf::error&) {});
  }

  // -- plumbing ----------------------------------------------------------------

  void call(request r, std::function<void(response&)> ok,
            std::function<void(const caf::error&)> failed) {
    self_->request(self_->state.cfg.api, self_->state.cfg.request_timeout, std::move(r))
        .then([ok](response& res) { ok(res); }, [failed](caf::error& err) { failed(err); });
  }

  void finish(caf::timespan requeue = {}, bool failed = false) {
    if (failed)
      log::get("operator")->info("{}: an API call failed; retried with back-off", key_);
    if (const auto& m = self_->state.cfg.metrics)
      m->reconciled(failed              ? pass_result::error
                    : requeue.count() > 0 ? pass_result::requeue
                                          : pass_result::success,
                    std::chrono::duration<double>(self_->clock().now() - began_).count());
    self_->send(informer_, inf::done_atom::value, key_, requeue, failed);
  }

  std::int64_t now() const {
    return now_unix(self_);
  }

  self_ptr self_;
  std::string key_;
  caf::actor_clock::time_point began_;
  std::string ns_;
  std::string name_;
  inf::informer_actor informer_;
  json job_;
  std::string uid_;
  json jobset_;
  std::optional<mf::job_plan> plan_;
  std::vector<json> objects_;
  std::vector<std::pair<std::string, std::string>> secrets_; // name, used by
  std::vector<std::string> urls_; // the endpoint URLs to probe, once each
  bool endpoint_checked_ = false;
  caf::timespan requeue_{0};
};

// Owns the informers of one child kind: hands their keys to the reconciler.
inf::owner_actor::behavior_type child_mapper(inf::owner_actor::pointer, reconciler_actor target,
                                             std::uint8_t kind) {
  return {
      [target, kind](inf::reconcile_atom, std::string& key) {
        caf::anon_send(target, child_changed_atom::value, kind, std::move(key));
      },
  };
}

reconciler_actor::behavior_type reconciler(self_ptr self, reconciler_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.started = self->clock().now();
  if (st.cfg.start_unix_seconds == 0)
    st.cfg.start_unix_seconds = static_cast<std::int64_t>(std::time(nullptr));
  auto namespaces = st.cfg.namespaces;
  if (namespaces.empty())
    namespaces.push_back("");
  auto owner = caf::actor_cast<inf::owner_actor>(self);
  std::array<inf::owner_actor, 2> mappers;
  for (std::uint8_t kind : {jobsets, pods}) {
    mappers[kind] = self->spawn(child_mapper, caf::actor_cast<reconciler_actor>(self), kind);
    self->link_to(mappers[kind]);
  }
  std::uint64_t seed = st.cfg.seed;
  for (const auto& ns : namespaces) {
    inf::informer_config jobs;
    jobs.ref = jobs_ref(ns);
    jobs.workers = 8; // a harvest holds its key for minutes; others go on
    jobs.seed = seed ? seed++ : 0;
    if (st.cfg.metrics)
      jobs.depth = st.cfg.metrics->depth;
    auto ji = inf::spawn_informer(self->home_system(), st.cfg.api, jobs, owner);
    self->link_to(ji);
    st.job_informers[ns] = ji;
    for (std::uint8_t kind : {jobsets, pods}) {
      inf::informer_config children;
      children.ref = kind == jobsets ? jobsets_ref(ns) : pods_ref(ns);
      children.label_selector = std::string{mf::job_id_label};
      children.workers = 16; // the mapper only forwards
      children.seed = seed ? seed++ : 0;
      auto ci = inf::spawn_informer(self->home_system(), st.cfg.api, children, mappers[kind]);
      self->link_to(ci);
      st.child_informers[kind][ns] = ci;
    }
  }
  // The daily TTL sweep of the stored results runs where the reconciler
  // does: on the leader only.
  if (st.cfg.harvester && st.cfg.sweep_every.count() > 0)
    self->delayed_send(self, st.cfg.sweep_first, sweep_atom::value);
  return {
      [self](inf::reconcile_atom, std::string& key) {
        std::make_shared<pass>(self, std::move(key))->start();
      },
      [self](sweep_atom) {
        self->send(self->state.cfg.harvester, sweep_atom::value);
        self->delayed_send(self, self->state.cfg.sweep_every, sweep_atom::value);
      },
      [self](child_changed_atom, std::uint8_t kind, std::string& key) {
        auto [ns, name] = split_key(key);
        auto informer = self->state.informer_for(self->state.child_informers[kind], ns);
        auto done = [self, informer, key, ns = ns, name = name](std::string parent) {
          auto target = self->state.informer_for(self->state.job_informers, ns);
          if (!parent.empty())
            self->send(target, inf::enqueue_atom::value, inf::key_of(ns, parent));
          self->send(informer, inf::done_atom::value, key, caf::timespan{0}, false);
        };
        self->request(informer, caf::infinite, inf::cache_get_atom::value, key)
            .then(
                [done](std::string& text) {
                  auto js = json::parse(text, nullptr, false);
                  done(meta(js).value("labels", json::object())
                           .value(std::string{mf::job_id_label}, std::string{}));
                },
                [done, kind, name = name](caf::error&) {
                  // A deleted JobSet's job is its name without `aiperf-`; a
                  // deleted pod's job hears of it through its JobSet.
                  done(kind == jobsets && name.rfind("aiperf-", 0) == 0 ? name.substr(7)
                                                                        : std::string{});
                });
      },
  };
}

} // namespace

inf::owner_actor spawn_job_reconciler(caf::actor_system& sys, reconciler_config cfg) {
  return caf::actor_cast<inf::owner_actor>(sys.spawn(reconciler, std::move(cfg)));
}

} // namespace aiperf::op
