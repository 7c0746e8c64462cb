#include "actors/benchmark/status_push/status_push.hpp"

#include "k8s/errors/errors.hpp"
#include "k8s/informer/informer.hpp"
#include "k8s/object/time.hpp"
#include "proto/error.hpp"
#include "runtime/log/log.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>

namespace aiperf::status_push {

namespace {

double finite(double x) {
  return std::isfinite(x) ? x : 0.0;
}

bool terminal(std::string_view phase) {
  return phase == "Completed" || phase == "Failed" || phase == "Cancelled";
}

} // namespace

std::string sub_phase_of(const progress& p) {
  if (p.state == "configuring")
    return "configuring";
  if (p.state == "running") {
    bool all_back = p.phase == "profiling" && p.total > 0 && p.completed >= p.total
                    && p.in_flight == 0;
    return all_back ? "processing" : "profiling";
  }
  if (p.state == "exporting")
    return "processing";
  if (p.state == "complete" || p.state == "cancelled" || p.state == "failed")
    return "stopping";
  return "initializing";
}

worker_counts worker_counts_of(const api_service::pods_status& pods,
                               std::uint32_t workers_per_pod, std::uint32_t processors_per_pod) {
  worker_counts w;
  w.total = pods.pods_expected * workers_per_pod;
  w.declared_record_processors = pods.pods_expected * processors_per_pod;
  // Per pod, its missing services (ids "pod3", "pod3/worker_0",
  // "pod3/record_processor_1").
  struct missing {
    std::uint32_t group = 0, workers = 0, processors = 0;
  };
  std::map<std::string, missing> by_pod;
  for (const auto& id : pods.missing) {
    auto slash = id.find('/');
    auto& m = by_pod[id.substr(0, slash)];
    if (slash == std::string::npos)
      ++m.group;
    else if (id.compare(slash + 1, 7, "worker_") == 0)
      ++m.workers;
    else
      ++m.processors;
  }
  for (const auto& pod : pods.pods) {
    if (pod.lost) {
      ++w.degraded_pods;
      ++w.total_pods;
      continue;
    }
    auto it = by_pod.find(pod.name);
    missing m = it != by_pod.end() ? it->second : missing{};
    std::uint32_t workers = workers_per_pod - std::min(m.workers, workers_per_pod);
    std::uint32_t processors = processors_per_pod - std::min(m.processors, processors_per_pod);
    bool seen = m.group == 0 || workers > 0 || processors > 0;
    if (!seen)
      continue;
    ++w.total_pods;
    w.router_connected += workers;
    w.ready_record_processors += processors;
    if (m.group == 0 && m.workers == 0 && m.processors == 0)
      ++w.ready_pods;
  }
  w.ready = w.router_connected;
  w.dispatchable = pods.registration == "complete" ? w.ready : 0;
  return w;
}

json workers_json(const worker_counts& w) {
  return {{"ready", w.ready},
          {"total", w.total},
          {"dispatchable", w.dispatchable},
          {"routerConnected", w.router_connected},
          {"readyRecordProcessors", w.ready_record_processors},
          {"declaredRecordProcessors", w.declared_record_processors},
          {"readyPods", w.ready_pods},
          {"totalPods", w.total_pods},
          {"degradedPods", w.degraded_pods}};
}

json status_fields(const progress& p, const final_report* f, const worker_counts* w) {
  json s = json::object();
  s["subPhase"] = sub_phase_of(p);
  bool started = p.state != "initializing" && p.state != "configuring";
  if (started) {
    double percent = p.total > 0 ? finite(100.0 * static_cast<double>(p.completed)
                                          / static_cast<double>(p.total))
                                 : 0.0;
    json entry = {{"phaseName", p.phase},
                  {"phaseKind", p.phase},
                  {"requestsCompleted", p.completed},
                  {"requestsSent", p.sent},
                  {"requestsTotal", p.total},
                  {"requestsErrors", p.errors},
                  {"requestsInFlight", p.in_flight},
                  {"requestsPerSecond", finite(p.requests_per_second)},
                  {"requestsProgressPercent", percent},
                  {"isRequestsComplete", p.total > 0 && p.completed >= p.total}};
    s["currentPhase"] = p.phase;
    s["phases"] = json::object({{p.phase, std::move(entry)}});
    if (p.phase == "profiling") {
      s["requestsCompleted"] = p.completed;
      s["requestsTotal"] = p.total;
      // A printer column (QPS): two decimals, as the summary's figures.
      s["requestsPerSecond"] = std::round(finite(p.requests_per_second) * 100) / 100;
    }
  }
  if (f != nullptr) {
    s["resultsExported"] = f->results_exported;
    s["exitCode"] = f->exit_code;
    s["exitReason"] = f->exit_reason;
    if (!f->controller_failure.empty())
      s["controllerFailure"] = f->controller_failure;
  }
  if (w != nullptr && w->total_pods > 0)
    s["workers"] = workers_json(*w);
  if (s.dump().size() > status_byte_budget)
    s["phases"] = json{{"truncated", true}};
  return s;
}

std::optional<push_request> status_request(const json* cached, std::string_view uid,
                                           const json& fields) {
  std::string phase;
  if (cached != nullptr) {
    if (cached->value("metadata", json::object()).value("uid", std::string{}) != uid)
      return std::nullopt; // another incarnation of the name
    phase = cached->value("status", json::object()).value("phase", std::string{});
    if (terminal(phase))
      return std::nullopt;
  }
  if (phase.empty()) {
    json body = {{"status", fields}};
    // The version read is the fence: the API server refuses (409) a patch
    // naming another resourceVersion, e.g. one of a replaced CR.
    auto rv = cached != nullptr
                  ? cached->value("metadata", json::object()).value("resourceVersion", std::string{})
                  : std::string{};
    if (!rv.empty())
      body = {{"metadata", {{"resourceVersion", rv}}}, {"status", fields}};
    return push_request{k8s::patch_type::merge, std::move(body)};
  }
  json ops = json::array({{{"op", "test"}, {"path", "/metadata/uid"}, {"value", uid}},
                          {{"op", "test"}, {"path", "/status/phase"}, {"value", phase}}});
  for (const auto& [key, value] : fields.items())
    ops.push_back({{"op", "add"}, {"path", "/status/" + k8s::pointer_token(key)}, {"value", value}});
  return push_request{k8s::patch_type::json, std::move(ops)};
}

json progress_annotations(const progress& p) {
  bool started = p.state != "initializing" && p.state != "configuring";
  double percent = p.total > 0 ? finite(100.0 * static_cast<double>(p.completed)
                                        / static_cast<double>(p.total))
                               : 0.0;
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.1f", percent);
  auto sub = sub_phase_of(p);
  return {{"aiperf.nvidia.com/progress-phase", started ? p.phase : sub},
          {"aiperf.nvidia.com/progress-percent", std::string{pct}},
          {"aiperf.nvidia.com/progress-requests",
           std::to_string(p.completed) + (p.total > 0 ? "/" + std::to_string(p.total) : "")},
          {"aiperf.nvidia.com/progress-status", p.state},
          {"aiperf.nvidia.com/system-state", sub}};
}

json jobset_annotation_patch(std::string_view job_uid, std::string_view job_name,
                             const json& annotations) {
  json ops = json::array();
  if (!job_uid.empty())
    ops.push_back({{"op", "test"}, {"path", "/metadata/ownerReferences/0/uid"}, {"value", job_uid}});
  else
    ops.push_back({{"op", "test"},
                   {"path", "/metadata/labels/aiperf.nvidia.com~1job-id"},
                   {"value", job_name}});
  for (const auto& [key, value] : annotations.items())
    ops.push_back({{"op", "add"},
                   {"path", "/metadata/annotations/" + k8s::pointer_token(key)},
                   {"value", value}});
  return ops;
}

json annotation_patch(std::string_view uid, std::string_view key, std::string_view value) {
  // A merge patch that names the UID: the UID is immutable, so a patch of
  // another incarnation is refused (422) instead of applied.
  return json{{"metadata", {{"uid", uid}, {"annotations", {{key, value}}}}}};
}

bool is_fence_refusal(const caf::error& err) {
  const auto* st = k8s::status_of(err);
  if (st == nullptr)
    return false;
  if (st->code == 409 && st->reason == "Conflict")
    return true;
  // The API server answers every JSON-patch apply failure, a failed test
  // included, with the same generic 422 whose details are empty.
  return st->code == 422 && st->details_present && st->details.causes.empty()
         && st->details.name.empty();
}

namespace {

namespace inf = k8s::informer;

struct pusher_state {
  pusher_config cfg;
  inf::informer_actor informer;
  progress last;
  std::optional<worker_counts> workers;
  /// The progress annotations the JobSet holds (as last written).
  json jobset_annotations;
  bool pushed_state = false;
  caf::actor_clock::time_point started;
};

using self_ptr = pusher_actor::stateful_pointer<pusher_state>;

// Owns the informer on the one AIPerfJob: its cache is all the pusher
// reads (no GET per push), so its keys need no processing.
inf::owner_actor::behavior_type cache_owner(inf::owner_actor::pointer self) {
  return {
      [self](inf::reconcile_atom, std::string& key) {
        // The informer that sent this is the sender.
        self->send(caf::actor_cast<inf::informer_actor>(self->current_sender()),
                   inf::done_atom::value, key, caf::timespan{0}, false);
      },
  };
}

std::string now_text(self_ptr self) {
  auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(self->clock().now()
                                                                  - self->state.started);
  return k8s::format_time(self->state.cfg.start_unix_seconds + elapsed.count());
}

k8s::request make_request(self_ptr self, std::string sub, k8s::patch_type type, const json& body) {
  auto& cfg = self->state.cfg;
  k8s::request r;
  r.verb = k8s::verb::patch;
  r.ref = {"aiperf.nvidia.com", "v1alpha1", "aiperfjobs", cfg.namespace_name, cfg.job_name,
           std::move(sub)};
  r.patch = type;
  r.body = body.dump();
  r.user_agent = "aiperf-node/controller";
  r.field_manager = "aiperf-controller";
  return r;
}

void refused(self_ptr self, const char* what, const caf::error& err) {
  auto logger = log::get("status_push");
  if (is_fence_refusal(err)) {
    logger->debug("{} dropped: the AIPerfJob changed (its fence held)", what);
    return;
  }
  auto text = error_message(err);
  logger->warn("{} refused: {}", what, text);
  if (self->state.cfg.on_refused)
    self->state.cfg.on_refused(text);
}

// One push against the CR as read: the status, then the heartbeat
// annotation. `then(bool)` gets whether the status write was accepted.
void push_to(self_ptr self, std::shared_ptr<json> cached, const json& fields,
             std::function<void(bool)> then) {
  auto req = status_request(cached->is_object() ? cached.get() : nullptr,
                            self->state.cfg.job_uid, fields);
  if (!req)
    return then(false);
  self->request(self->state.cfg.api, self->state.cfg.request_timeout,
                make_request(self, "status", req->type, req->body))
      .then(
          [self, then](k8s::response&) {
            auto patch
                = annotation_patch(self->state.cfg.job_uid, heartbeat_annotation, now_text(self));
            patch["metadata"]["annotations"].update(progress_annotations(self->state.last));
            self->request(self->state.cfg.api, self->state.cfg.request_timeout,
                          make_request(self, "", k8s::patch_type::merge, patch))
                .then([](k8s::response&) {},
                      [self](caf::error& err) { refused(self, "heartbeat", err); });
            then(true);
          },
          [self, then](caf::error& err) {
            refused(self, "status push", err);
            then(false);
          });
}

// The JobSet's progress annotations, when one of them changed.
void annotate_jobset(self_ptr self) {
  auto& st = self->state;
  auto annotations = progress_annotations(st.last);
  if (annotations == st.jobset_annotations)
    return;
  k8s::request r;
  r.verb = k8s::verb::patch;
  r.ref = {"jobset.x-k8s.io", "v1alpha2", "jobsets", st.cfg.namespace_name,
           "aiperf-" + st.cfg.job_name, ""};
  r.patch = k8s::patch_type::json;
  r.body = jobset_annotation_patch(st.cfg.job_uid, st.cfg.job_name, annotations).dump();
  r.user_agent = "aiperf-node/controller";
  r.field_manager = "aiperf-controller";
  self->request(st.cfg.api, st.cfg.request_timeout, std::move(r))
      .then([self, annotations](k8s::response&) { self->state.jobset_annotations = annotations; },
            [self](caf::error& err) {
              // A JobSet already gone has nothing to show: as a fence.
              if (error_code(err, k8s::errc::transport) == k8s::errc::not_found)
                return log::get("status_push")->debug("JobSet progress annotations: no JobSet");
              refused(self, "JobSet progress annotations", err);
            });
}

// One push: the CR from the informer's cache, or (not cached yet) one GET.
void push(self_ptr self, const final_report* f, std::function<void(bool)> then) {
  auto& st = self->state;
  annotate_jobset(self);
  if (st.cfg.job_uid.empty())
    return then(false); // direct mode: no AIPerfJob
  auto fields = status_fields(st.last, f, st.workers ? &*st.workers : nullptr);
  self->request(st.informer, caf::infinite, inf::cache_get_atom::value,
                inf::key_of(st.cfg.namespace_name, st.cfg.job_name))
      .then(
          [self, fields, then](std::string& text) {
            push_to(self, std::make_shared<json>(json::parse(text, nullptr, false)), fields,
                    then);
          },
          [self, fields, then](caf::error&) {
            k8s::request get;
            get.ref = {"aiperf.nvidia.com", "v1alpha1", "aiperfjobs",
                       self->state.cfg.namespace_name, self->state.cfg.job_name, ""};
            get.user_agent = "aiperf-node/controller";
            self->request(self->state.cfg.api, self->state.cfg.request_timeout, std::move(get))
                .then(
                    [self, fields, then](k8s::response& r) {
                      push_to(self, std::make_shared<json>(json::parse(r.body, nullptr, false)),
                              fields, then);
                    },
                    [self, then](caf::error& err) {
                      refused(self, "status push (reading the AIPerfJob)", err);
                      then(false);
                    });
          });
}

pusher_actor::behavior_type pusher(self_ptr self, pusher_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.started = self->clock().now();
  if (st.cfg.start_unix_seconds == 0)
    st.cfg.start_unix_seconds = static_cast<std::int64_t>(std::time(nullptr));
  if (!st.cfg.job_uid.empty()) {
    inf::informer_config icfg;
    icfg.ref = {"aiperf.nvidia.com", "v1alpha1", "aiperfjobs", st.cfg.namespace_name, "", ""};
    icfg.field_selector = "metadata.name=" + st.cfg.job_name;
    icfg.seed = st.cfg.seed;
    auto owner = self->spawn(cache_owner);
    self->link_to(owner);
    st.informer = inf::spawn_informer(self->home_system(), st.cfg.api, icfg, owner);
    self->link_to(st.informer);
  }
  self->delayed_send(self, st.cfg.heartbeat_interval, tick_atom::value);
  return {
      [self](progress_atom, progress& p) {
        bool changed = p.state != self->state.last.state || !self->state.pushed_state;
        self->state.last = std::move(p);
        if (changed) {
          self->state.pushed_state = true;
          push(self, nullptr, [](bool) {});
        }
      },
      [self](workers_atom, worker_counts& w) { self->state.workers = w; },
      [self](tick_atom) {
        push(self, nullptr, [](bool) {});
        self->delayed_send(self, self->state.cfg.heartbeat_interval, tick_atom::value);
      },
      [self](final_atom, final_report& f) -> caf::result<bool> {
        auto rp = self->make_response_promise<bool>();
        auto report = std::make_shared<final_report>(std::move(f));
        push(self, report.get(), [self, rp, report](bool written) mutable {
          if (!written || !report->results_exported) {
            rp.deliver(false);
            return;
          }
          auto patch = annotation_patch(self->state.cfg.job_uid, complete_annotation, "true");
          self->request(self->state.cfg.api, self->state.cfg.request_timeout,
                        make_request(self, "", k8s::patch_type::merge, patch))
              .then([rp](k8s::response&) mutable { rp.deliver(true); },
                    [self, rp](caf::error& err) mutable {
                      refused(self, "benchmark-complete", err);
                      rp.deliver(false);
                    });
        });
        return rp;
      },
  };
}

} // namespace

pusher_actor spawn_pusher(caf::actor_system& sys, pusher_config cfg) {
  return sys.spawn(pusher, std::move(cfg));
}

} // namespace aiperf::status_push
