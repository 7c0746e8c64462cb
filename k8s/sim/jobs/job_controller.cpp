// The Job controller (kubernetes pkg/controller/job/job_controller.go,
// 1.32): one pass per Job computes the pods it should have from the pods it
// owns, creates or deletes pods, and writes status when it changed.
#include "k8s/sim/jobs/engine.hpp"
#include "k8s/sim/jobs/jobs.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

namespace aiperf::k8s::sim {

namespace {

using namespace jobs_detail;

constexpr std::size_t jobs_idx = 0;
constexpr std::size_t pods_idx = 1;

const char* const index_key = "batch.kubernetes.io/job-completion-index";
const char* const completions_reason = "CompletionsReached";
const char* const completions_message
    = "Reached expected number of succeeded pods";

// pkg/controller/job: DefaultJobPodFailureBackOff, MaxJobPodFailureBackOff.
constexpr std::int64_t pod_backoff_base_seconds = 10;
constexpr std::int64_t pod_backoff_cap_seconds = 360;

resource_ref jobs_ref(const std::string& ns = {},
                      const std::string& name = {}) {
  return {"batch", "v1", "jobs", ns, name, ""};
}
resource_ref pods_ref(const std::string& ns = {},
                      const std::string& name = {}) {
  return {"", "v1", "pods", ns, name, ""};
}

int pod_index(const json& pod) {
  auto text = str(obj(obj(pod, "metadata"), "annotations"), index_key);
  int n = -1;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || p != text.data() + text.size() || n < 0)
    return -1;
  return n;
}

// "1,3-5" <-> {1, 3, 4, 5} (status.completedIndexes).
std::set<std::int64_t> parse_intervals(const std::string& text) {
  std::set<std::int64_t> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find(',', pos);
    if (end == std::string::npos)
      end = text.size();
    auto part = text.substr(pos, end - pos);
    auto dash = part.find('-');
    std::int64_t a = 0;
    std::int64_t b = 0;
    auto first = dash == std::string::npos ? part : part.substr(0, dash);
    auto second = dash == std::string::npos ? part : part.substr(dash + 1);
    auto r1 = std::from_chars(first.data(), first.data() + first.size(), a);
    auto r2 = std::from_chars(second.data(), second.data() + second.size(), b);
    if (r1.ec == std::errc{} && r2.ec == std::errc{} && b - a < 1'000'000)
      for (auto i = a; i <= b; ++i)
        out.insert(i);
    pos = end + 1;
  }
  return out;
}

std::string format_intervals(const std::set<std::int64_t>& xs) {
  std::string out;
  auto it = xs.begin();
  while (it != xs.end()) {
    auto first = *it;
    auto last = first;
    ++it;
    while (it != xs.end() && *it == last + 1)
      last = *it++;
    if (!out.empty())
      out += ',';
    out += std::to_string(first);
    if (last != first)
      out += '-' + std::to_string(last);
  }
  return out;
}

bool pod_ready(const json& pod) {
  const auto& conds = obj(obj(pod, "status"), "conditions");
  if (!conds.is_array())
    return false;
  for (const auto& c : conds)
    if (str(c, "type") == "Ready")
      return str(c, "status") == "True";
  return false;
}

// When a failed pod ended: its containers' latest finishedAt, else its last
// condition change (pkg/controller/job backoff_utils.go getFinishedTime).
std::optional<std::int64_t> finished_at(const json& pod) {
  std::optional<std::int64_t> best;
  auto consider = [&](const std::string& text) {
    if (auto t = engine::unix_of(text); t && (!best || *t > *best))
      best = t;
  };
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    const auto& statuses = obj(obj(pod, "status"), list);
    if (statuses.is_array())
      for (const auto& cs : statuses)
        consider(str(obj(obj(cs, "state"), "terminated"), "finishedAt"));
  }
  if (!best) {
    const auto& conds = obj(obj(pod, "status"), "conditions");
    if (conds.is_array())
      for (const auto& c : conds)
        consider(str(c, "lastTransitionTime"));
  }
  return best;
}

json job_condition(const std::string& type, const std::string& status,
                   const std::string& reason, const std::string& message,
                   const std::string& now) {
  return json{{"type", type},         {"status", status},
              {"lastProbeTime", now}, {"lastTransitionTime", now},
              {"reason", reason},     {"message", message}};
}

// ensureJobConditionStatus: sets `type` to `status`; a condition that is
// absent is only added when True. Returns whether anything changed.
bool ensure_condition(json& status, const std::string& type,
                      const std::string& value, const std::string& reason,
                      const std::string& message, const std::string& now) {
  if (!status.contains("conditions") || !status["conditions"].is_array())
    status["conditions"] = json::array();
  for (auto& c : status["conditions"])
    if (str(c, "type") == type) {
      if (str(c, "status") == value)
        return false;
      c = job_condition(type, value, reason, message, now);
      return true;
    }
  if (value != "True")
    return false;
  status["conditions"].push_back(
      job_condition(type, value, reason, message, now));
  return true;
}

struct job_controller {
  engine* eng = nullptr;

  std::vector<std::string> map(std::size_t which, const json& o) const {
    if (which == jobs_idx)
      return {key_of(o)};
    auto owner = controller_name(o, "Job");
    if (owner.empty())
      return {};
    return {namespace_of(o) + "/" + owner};
  }

  void delete_pod(const pass_ptr& p, const json& job, const json& pod) {
    eng->write(p,
               delete_request(pods_ref(namespace_of(pod), name_of(pod)),
                              uid_of(pod), "Background"),
               pods_idx, [this, job, name = name_of(pod)](const json&) {
                 eng->event(job, "Normal", "SuccessfulDelete",
                            "Deleted pod: " + name);
               });
  }

  // pkg/controller/job: the pod template with the Job's additions
  // (controller/controller_utils.go GetPodFromTemplate, and for Indexed
  // Jobs indexed_job_utils.go).
  json make_pod(const json& job, int index) const {
    const auto& tmpl = obj(obj(job, "spec"), "template");
    json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}};
    json meta = json::object();
    const auto& tmeta = obj(tmpl, "metadata");
    json labels = tmeta.contains("labels") && tmeta["labels"].is_object()
                      ? tmeta["labels"]
                      : json::object();
    json annotations
        = tmeta.contains("annotations") && tmeta["annotations"].is_object()
              ? tmeta["annotations"]
              : json::object();
    json spec = obj(tmpl, "spec");
    auto job_name = name_of(job);
    if (index >= 0) {
      auto idx = std::to_string(index);
      annotations[index_key] = idx;
      labels[index_key] = idx; // the PodIndexLabel gate, on since 1.28
      auto prefix = job_name + "-" + idx + "-";
      // names.MaxGeneratedNameLength: 63 minus the 5 random characters.
      if (prefix.size() > 58)
        prefix = prefix.substr(0, 58 - (idx.size() + 2)) + "-" + idx + "-";
      meta["generateName"] = prefix;
      if (str(spec, "hostname").empty()) {
        auto host = job_name + "-" + idx;
        if (host.size() > 63)
          host = host.substr(0, 63);
        while (!host.empty() && (host.back() == '-' || host.back() == '.'))
          host.pop_back();
        spec["hostname"] = host;
      }
      for (const char* list : {"initContainers", "containers"}) {
        if (!spec.contains(list) || !spec[list].is_array())
          continue;
        for (auto& c : spec[list]) {
          if (!c.contains("env") || !c["env"].is_array())
            c["env"] = json::array();
          bool present = false;
          for (const auto& e : c["env"])
            present = present || str(e, "name") == "JOB_COMPLETION_INDEX";
          if (!present)
            c["env"].push_back(
                {{"name", "JOB_COMPLETION_INDEX"},
                 {"valueFrom",
                  {{"fieldRef",
                    {{"fieldPath", std::string{"metadata.annotations['"}
                                       + index_key + "']"}}}}}});
        }
      }
    } else {
      auto prefix = job_name + "-";
      if (prefix.size() > 58)
        prefix = prefix.substr(0, 58);
      meta["generateName"] = prefix;
    }
    meta["namespace"] = namespace_of(job);
    if (!labels.empty())
      meta["labels"] = labels;
    if (!annotations.empty())
      meta["annotations"] = annotations;
    meta["ownerReferences"]
        = json::array({owner_reference(job, "batch/v1", "Job")});
    pod["metadata"] = std::move(meta);
    pod["spec"] = std::move(spec);
    return pod;
  }

  void create_pod(const pass_ptr& p, const json& job, int index) {
    eng->write(
        p,
        make_request(verb::create, pods_ref(namespace_of(job)),
                     make_pod(job, index)),
        pods_idx,
        [this, job](const json& pod) {
          eng->event(job, "Normal", "SuccessfulCreate",
                     "Created pod: " + name_of(pod));
        },
        [this, job](const std::string& message) {
          eng->event(job, "Warning", "FailedCreate",
                     "Error creating: " + message);
        });
  }

  void reconcile(const std::string& key, const pass_ptr& p) {
    const json* found = eng->find(jobs_idx, key);
    if (found == nullptr)
      return; // its pods go with the garbage collector
    const json job = *found;
    if (being_deleted(job))
      return;
    const auto& spec = obj(job, "spec");
    auto managed_by = str(spec, "managedBy");
    if (!managed_by.empty() && managed_by != "kubernetes.io/job-controller")
      return;
    if (condition_true(job, "Complete") || condition_true(job, "Failed"))
      return;

    const auto ns = namespace_of(job);
    const auto uid = uid_of(job);
    const bool indexed = str(spec, "completionMode") == "Indexed";
    // completions unset: the Job is done once any pod succeeded.
    const bool has_completions = has(spec, "completions");
    const std::int64_t completions = num(spec, "completions");
    const auto parallelism = num(spec, "parallelism", 1);
    const auto backoff_limit = num(spec, "backoffLimit", 6);
    const bool suspend = flag(spec, "suspend");
    const bool on_failure
        = str(obj(obj(spec, "template"), "spec"), "restartPolicy")
          == "OnFailure";

    std::vector<json> active;
    std::vector<json> failed_pods;
    std::int64_t terminating = 0;
    std::int64_t succeeded_pods = 0;
    std::int64_t restarts = 0;
    std::set<std::int64_t> done_indexes;
    std::optional<std::int64_t> last_success;
    for (const auto& [k, pod] : eng->objects(pods_idx)) {
      if (namespace_of(pod) != ns || controller_uid(pod, "Job") != uid)
        continue;
      auto phase = str(obj(pod, "status"), "phase");
      bool terminal = phase == "Succeeded" || phase == "Failed";
      if (phase == "Running" || phase == "Pending")
        for (const char* list : {"initContainerStatuses", "containerStatuses"})
          for (const auto& cs : obj(obj(pod, "status"), list))
            restarts += num(cs, "restartCount");
      if (phase == "Succeeded") {
        ++succeeded_pods;
        if (auto t = finished_at(pod);
            t && (!last_success || *t > *last_success))
          last_success = t;
        auto idx = pod_index(pod);
        if (indexed && idx >= 0 && has_completions && idx < completions)
          done_indexes.insert(idx);
      } else if (phase == "Failed") {
        failed_pods.push_back(pod);
      } else if (being_deleted(pod)) {
        ++terminating;
      } else if (!terminal) {
        active.push_back(pod);
      }
    }

    const auto& old_status = obj(job, "status");
    json status = old_status.is_object() ? old_status : json::object();
    if (indexed)
      for (auto i : parse_intervals(str(old_status, "completedIndexes")))
        done_indexes.insert(i);
    std::int64_t succeeded
        = indexed ? static_cast<std::int64_t>(done_indexes.size())
                  : std::max(succeeded_pods, num(old_status, "succeeded"));
    // Without tracking finalizers a removed failed pod is not seen again:
    // what was counted stays counted.
    std::int64_t failed
        = std::max(static_cast<std::int64_t>(failed_pods.size()),
                   num(old_status, "failed"));

    const auto now = eng->now_text();
    const auto now_unix = eng->now_unix();
    std::vector<std::pair<std::string, std::string>> events; // reason, msg
    std::string event_type = "Normal";
    std::int64_t created = 0;
    std::size_t deleted = 0;
    auto delete_active = [&] {
      for (const auto& pod : active)
        delete_pod(p, job, pod);
      deleted = active.size();
    };
    auto finishing = [&](const char* interim, const char* final_type) {
      // The interim condition is set; the final one follows once no pod
      // of the Job runs any more (delayed terminal condition, 1.31+).
      const auto* c = condition(job, interim);
      delete_active();
      if (active.empty() && terminating == 0) {
        ensure_condition(status, final_type, "True", str(*c, "reason"),
                         str(*c, "message"), now);
        if (std::string{final_type} == "Complete") {
          status["completionTime"] = now;
          events.emplace_back("Completed", "Job completed");
        } else {
          event_type = "Warning";
          events.emplace_back(str(*c, "reason"), str(*c, "message"));
        }
      }
    };

    if (condition_true(job, "FailureTarget")) {
      finishing("FailureTarget", "Failed");
    } else if (condition_true(job, "SuccessCriteriaMet")) {
      finishing("SuccessCriteriaMet", "Complete");
    } else if (suspend) {
      delete_active();
      if (ensure_condition(status, "Suspended", "True", "JobSuspended",
                           "Job suspended", now))
        events.emplace_back("Suspended", "Job suspended");
    } else {
      if (ensure_condition(status, "Suspended", "False", "JobResumed",
                           "Job resumed", now)) {
        events.emplace_back("Resumed", "Job resumed");
        // A resumed Job's activeDeadlineSeconds counts from now.
        status["startTime"] = now;
      }
      if (!has(status, "startTime"))
        status["startTime"] = now;

      std::string fail_reason;
      std::string fail_message;
      bool past_restarts
          = on_failure
            && (backoff_limit == 0 ? restarts > 0 : restarts >= backoff_limit);
      if (failed > backoff_limit || past_restarts) {
        fail_reason = "BackoffLimitExceeded";
        fail_message = "Job has reached the specified backoff limit";
      } else if (has(spec, "activeDeadlineSeconds")) {
        auto start = engine::unix_of(str(status, "startTime"));
        auto deadline = num(spec, "activeDeadlineSeconds");
        if (start && now_unix - *start >= deadline) {
          fail_reason = "DeadlineExceeded";
          fail_message = "Job was active longer than specified deadline";
        } else if (start) {
          p->again_after(std::chrono::seconds{*start + deadline - now_unix});
        }
      }

      bool complete = has_completions ? succeeded >= completions
                                      : succeeded > 0 && active.empty();
      if (!fail_reason.empty()) {
        ensure_condition(status, "FailureTarget", "True", fail_reason,
                         fail_message, now);
        delete_active();
        if (active.empty() && terminating == 0) {
          ensure_condition(status, "Failed", "True", fail_reason, fail_message,
                           now);
          event_type = "Warning";
          events.emplace_back(fail_reason, fail_message);
        }
      } else if (complete) {
        ensure_condition(status, "SuccessCriteriaMet", "True",
                         completions_reason, completions_message, now);
        delete_active();
        if (active.empty() && terminating == 0) {
          ensure_condition(status, "Complete", "True", completions_reason,
                           completions_message, now);
          status["completionTime"] = now;
          events.emplace_back("Completed", "Job completed");
        }
      } else {
        // The pod failure back-off (backoff_utils.go): a replacement waits
        // 10 s doubling per failure since the last success, from the last
        // failure's end.
        std::optional<std::int64_t> wait;
        std::optional<std::int64_t> last;
        std::int64_t n = 0;
        for (const auto& pod : failed_pods) {
          auto t = finished_at(pod).value_or(now_unix);
          if (last_success && t < *last_success)
            continue;
          ++n;
          if (!last || t > *last)
            last = t;
        }
        if (n > 0) {
          std::int64_t delay = pod_backoff_base_seconds;
          for (std::int64_t i = 1; i < n && delay < pod_backoff_cap_seconds;
               ++i)
            delay *= 2;
          delay = std::min(delay, pod_backoff_cap_seconds);
          if (*last + delay > now_unix)
            wait = *last + delay - now_unix;
        }
        if (wait) {
          p->again_after(std::chrono::seconds{*wait});
        } else if (indexed && has_completions) {
          std::set<std::int64_t> running;
          for (const auto& pod : active)
            running.insert(pod_index(pod));
          auto room = parallelism - static_cast<std::int64_t>(active.size());
          for (std::int64_t i = 0; i < completions && room > 0; ++i) {
            if (done_indexes.count(i) || running.count(i))
              continue;
            create_pod(p, job, static_cast<int>(i));
            ++created;
            --room;
          }
        } else if (!indexed) {
          std::int64_t want
              = has_completions ? std::min(parallelism, completions - succeeded)
                                : (succeeded > 0 ? 0 : parallelism);
          auto have = static_cast<std::int64_t>(active.size());
          for (auto i = have; i < want; ++i) {
            create_pod(p, job, -1);
            ++created;
          }
          // Too many: the last ones (by name) go.
          for (auto i = have; i > want && i > 0; --i) {
            delete_pod(p, job, active[static_cast<std::size_t>(i - 1)]);
            ++deleted;
          }
        }
      }
    }

    std::int64_t ready = 0;
    for (const auto& pod : active)
      ready += pod_ready(pod) ? 1 : 0;
    status["active"] = static_cast<std::int64_t>(active.size()) + created
                       - static_cast<std::int64_t>(deleted);
    if (!status["active"].is_number()
        || status["active"].get<std::int64_t>() < 0)
      status["active"] = 0;
    status["ready"] = deleted > 0 ? 0 : ready;
    status["succeeded"] = succeeded;
    status["failed"] = failed;
    status["terminating"] = terminating;
    if (indexed) {
      auto text = format_intervals(done_indexes);
      if (text.empty())
        status.erase("completedIndexes");
      else
        status["completedIndexes"] = text;
    }
    if (status.contains("conditions") && status["conditions"].empty())
      status.erase("conditions");

    if (!same(status, old_status)) {
      json updated = job;
      updated["status"] = status;
      auto req
          = make_request(verb::update, jobs_ref(ns, name_of(job)), updated);
      req.ref.subresource = "status";
      eng->write(p, std::move(req), jobs_idx,
                 [this, events, event_type](const json& written) {
                   for (const auto& [reason, message] : events)
                     eng->event(written,
                                reason == "Completed" || reason == "Suspended"
                                        || reason == "Resumed"
                                    ? "Normal"
                                    : event_type,
                                reason, message);
                 });
    }
  }
};

jobs_controller_actor::behavior_type job_impl(stateful_ptr self, api_actor api,
                                              jobs_config cfg) {
  auto ctl = std::make_shared<job_controller>();
  self->state.eng = std::make_unique<engine>(
      self, std::move(api), cfg,
      std::vector<resource_ref>{jobs_ref(), pods_ref()},
      [ctl](std::size_t which, const json& o) { return ctl->map(which, o); },
      [ctl](const std::string& key, const pass_ptr& p) {
        ctl->reconcile(key, p);
      },
      "job-controller");
  ctl->eng = self->state.eng.get();
  self->state.eng->start();
  return self->state.eng->behavior();
}

} // namespace

jobs_controller_actor spawn_job_controller(caf::actor_system& sys,
                                           api_actor api, jobs_config cfg) {
  return sys.spawn(job_impl, std::move(api), cfg);
}

} // namespace aiperf::k8s::sim
