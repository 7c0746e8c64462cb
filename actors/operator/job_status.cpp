#include "actors/operator/job_status.hpp"

#include "k8s/object/time.hpp"

#include <cstdio>

namespace aiperf::op {

bool is_terminal(std::string_view p) noexcept {
  return p == phase::completed || p == phase::failed || p == phase::cancelled;
}

std::string status_phase(const json& status) {
  if (!status.is_object())
    return {};
  auto p = status.find("phase");
  return p != status.end() && p->is_string() ? p->get<std::string>() : std::string{};
}

std::string phase_of(const json& job) {
  auto s = job.find("status");
  return s != job.end() ? status_phase(*s) : std::string{};
}

void set_condition(json& status, std::string_view type, std::string_view value,
                   std::string_view reason, std::string_view message, std::int64_t now_unix) {
  if (!status.contains("conditions") || !status["conditions"].is_array())
    status["conditions"] = json::array();
  auto& list = status["conditions"];
  json* found = nullptr;
  for (auto& c : list)
    if (c.value("type", std::string{}) == type)
      found = &c;
  if (found == nullptr) {
    list.push_back(json::object());
    found = &list.back();
    (*found)["type"] = type;
  }
  auto& c = *found;
  bool flipped = c.value("status", std::string{}) != value || !c.contains("lastTransitionTime");
  c["status"] = value;
  c["reason"] = reason;
  c["message"] = message;
  if (flipped)
    c["lastTransitionTime"] = k8s::format_time(now_unix);
}

const json* condition_of(const json& status, std::string_view type) {
  auto list = status.find("conditions");
  if (list == status.end() || !list->is_array())
    return nullptr;
  for (const auto& c : *list)
    if (c.value("type", std::string{}) == type)
      return &c;
  return nullptr;
}

void set_terminal(json& status, std::string_view p, std::string_view error,
                  std::int64_t now_unix, std::string_view reason) {
  status["phase"] = p;
  status["completionTime"] = k8s::format_time(now_unix);
  status.erase("currentPhase");
  status.erase("subPhase");
  if (p == phase::failed) {
    status["error"] = error;
    set_condition(status, "Failed", "True", reason, error, now_unix);
    set_condition(status, "Complete", "False", "JobFailed", error, now_unix);
  } else if (p == phase::cancelled) {
    set_condition(status, "Complete", "False", "JobCancelled", "the job was cancelled", now_unix);
    set_condition(status, "Failed", "False", "JobCancelled", "the job was cancelled", now_unix);
  } else {
    const json* results = condition_of(status, "ResultsAvailable");
    bool stored = results != nullptr && results->value("status", std::string{}) == "True";
    set_condition(status, "Complete", stored ? "True" : "False",
                  stored ? "ResultsStored" : "ResultsMissing",
                  stored ? "the benchmark completed and its results are stored"
                         : "the benchmark completed without stored results",
                  now_unix);
    set_condition(status, "Failed", "False", "JobCompleted", "the benchmark completed",
                  now_unix);
  }
}

namespace {

const json& meta_of(const json& obj) {
  static const json none = json::object();
  auto m = obj.find("metadata");
  return m != obj.end() && m->is_object() ? *m : none;
}

const json* controller_ref(const json& obj) {
  const json& meta = meta_of(obj);
  auto refs = meta.find("ownerReferences");
  if (refs == meta.end() || !refs->is_array())
    return nullptr;
  for (const auto& r : *refs)
    if (r.value("controller", false))
      return &r;
  return nullptr;
}

} // namespace

bool controlled_by(const json& obj, std::string_view job_name, std::string_view job_uid) {
  const json* r = controller_ref(obj);
  return r != nullptr && r->value("apiVersion", std::string{}) == "aiperf.nvidia.com/v1alpha1"
         && r->value("kind", std::string{}) == "AIPerfJob"
         && r->value("name", std::string{}) == job_name
         && r->value("uid", std::string{}) == job_uid;
}

ownership ownership_of(const json& obj, std::string_view job_name, std::string_view job_uid) {
  const json* r = controller_ref(obj);
  if (r == nullptr || r->value("kind", std::string{}) != "AIPerfJob"
      || r->value("name", std::string{}) != job_name)
    return ownership::foreign;
  bool deleting = meta_of(obj).contains("deletionTimestamp");
  if (r->value("uid", std::string{}) != job_uid || deleting)
    return ownership::earlier_owner;
  return controlled_by(obj, job_name, job_uid) ? ownership::ours : ownership::foreign;
}

jobset_view view_of_jobset(const json& jobset) {
  jobset_view v;
  const json spec = jobset.value("spec", json::object());
  v.suspended = spec.value("suspend", false);
  const json labels = meta_of(jobset).value("labels", json::object());
  v.queued = v.suspended && labels.contains("kueue.x-k8s.io/queue-name");
  const json status = jobset.value("status", json::object());
  if (const json* failed = condition_of(status, "Failed");
      failed != nullptr && failed->value("status", std::string{}) == "True")
    v.failure = failed->value("reason", std::string{"Failed"}) + ": "
                + failed->value("message", std::string{});
  for (const auto& r : status.value("replicatedJobsStatus", json::array()))
    if (r.value("name", std::string{}) == "workers")
      v.ready_worker_jobs = r.value("ready", 0);
  return v;
}

json fenced_status_patch(const json& read, const json& status) {
  const json& meta = meta_of(read);
  json ops = json::array({
      {{"op", "test"}, {"path", "/metadata/uid"}, {"value", meta.value("uid", std::string{})}},
      {{"op", "test"},
       {"path", "/metadata/resourceVersion"},
       {"value", meta.value("resourceVersion", std::string{})}},
  });
  if (auto p = phase_of(read); !p.empty())
    ops.push_back({{"op", "test"}, {"path", "/status/phase"}, {"value", p}});
  ops.push_back({{"op", "add"}, {"path", "/status"}, {"value", status}});
  return ops;
}

std::int64_t seconds_of(const json& obj, std::string_view json_pointer) {
  json::json_pointer ptr{std::string{json_pointer}};
  if (!obj.contains(ptr) || !obj[ptr].is_string())
    return 0;
  auto t = k8s::parse_time(obj[ptr].get<std::string>());
  return t ? *t / 1'000'000'000 : 0;
}

std::string epoch_key_of(const json& job) {
  auto seconds = std::to_string(seconds_of(job, "/metadata/creationTimestamp"));
  auto uid = meta_of(job).value("uid", std::string{});
  if (uid.empty())
    return seconds;
  // FNV-1a of the uid: stable across operator restarts and replicas.
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : uid) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%06u", static_cast<unsigned>(h % 1000000));
  return seconds + suffix;
}

} // namespace aiperf::op
