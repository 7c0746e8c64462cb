// The JobSet controller (kubernetes-sigs/jobset pkg/controllers/
// jobset_controller.go, failure_policy.go, success_policy.go,
// ttl_after_finished.go, depends_on.go). One pass per JobSet, in upstream's
// order: replicatedJobsStatus from the child Jobs; a finished JobSet has its
// active child Jobs deleted and its TTL applied; Jobs of an earlier restart
// attempt are deleted; a failed child Job runs the failure policy, a
// succeeded one the success policy; then the headless Service, the missing
// child Jobs, and suspend or resume. Status is written once at the end when
// it changed; the Events of changed conditions follow a successful write.
//
// The mutating webhook's defaults are in the CRD's schema; a JobSet stored
// without them (another CRD, or one written before the schema had them) is
// read here as if they were set, and failure rules without a name are
// named `failurePolicyRule<i>` as the webhook names them.
#include "k8s/sim/jobs/engine.hpp"
#include "k8s/sim/jobs/jobs.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>

#include <openssl/evp.h>

#include <charconv>
#include <regex>
#include <set>

namespace aiperf::k8s::sim {

namespace {

using namespace jobs_detail;

constexpr std::size_t jobsets_idx = 0;
constexpr std::size_t jobs_idx = 1;
constexpr std::size_t services_idx = 2;

const std::string label_prefix = "jobset.sigs.k8s.io/";
const std::string jobset_name_key = label_prefix + "jobset-name";
const std::string jobset_uid_key = label_prefix + "jobset-uid";
const std::string rjob_name_key = label_prefix + "replicatedjob-name";
const std::string rjob_replicas_key = label_prefix + "replicatedjob-replicas";
const std::string global_replicas_key = label_prefix + "global-replicas";
const std::string job_index_key = label_prefix + "job-index";
const std::string job_global_index_key = label_prefix + "job-global-index";
const std::string job_key_key = label_prefix + "job-key";
const std::string group_name_key = label_prefix + "group-name";
const std::string group_replicas_key = label_prefix + "group-replicas";
const std::string job_group_index_key = label_prefix + "job-group-index";
const std::string restarts_key = label_prefix + "restart-attempt";
const std::string coordinator_key = label_prefix + "coordinator";
const std::string exclusive_key = "alpha.jobset.sigs.k8s.io/exclusive-topology";
const std::string node_selector_strategy_key
    = "alpha.jobset.sigs.k8s.io/node-selector";
const char* const api_version = "jobset.x-k8s.io/v1alpha2";
const char* const controller_name_value
    = "jobset.sigs.k8s.io/jobset-controller";

// pkg/constants/constants.go
const char* const failed_jobs_reason = "FailedJobs";
const char* const failed_jobs_message
    = "jobset failed due to one or more job failures";
const char* const max_restarts_reason = "ReachedMaxRestarts";
const char* const max_restarts_message
    = "jobset failed due to reaching max number of restarts";
const char* const completed_reason = "AllJobsCompleted";
const char* const completed_message = "jobset completed successfully";
const char* const suspended_reason = "SuspendedJobs";
const char* const suspended_message = "jobset is suspended";
const char* const resumed_reason = "ResumeJobs";
const char* const resumed_message = "jobset is resumed";
const char* const restarting_type = "RestartingJobSet";

resource_ref jobsets_ref(const std::string& ns = {},
                         const std::string& name = {}) {
  return {"jobset.x-k8s.io", "v1alpha2", "jobsets", ns, name, ""};
}
resource_ref jobs_ref(const std::string& ns = {},
                      const std::string& name = {}) {
  return {"batch", "v1", "jobs", ns, name, ""};
}
resource_ref services_ref(const std::string& ns = {},
                          const std::string& name = {}) {
  return {"", "v1", "services", ns, name, ""};
}

std::string sha1_hex(const std::string& text) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(text.data(), text.size(), md, &len, EVP_sha1(), nullptr) != 1)
    return {};
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += digits[md[i] >> 4];
    out += digits[md[i] & 0xf];
  }
  return out;
}

json& member(json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_object())
    j[key] = json::object();
  return j[key];
}

void default_to(json& j, const char* key, const json& value) {
  if (!j.contains(key) || j[key].is_null())
    j[key] = value;
}

// The JobSet's spec with the webhook's defaults filled in.
json effective_spec(const json& js) {
  json spec = obj(js, "spec");
  if (!spec.is_object())
    spec = json::object();
  default_to(spec, "successPolicy", json{{"operator", "All"}});
  default_to(spec, "startupPolicy", json{{"startupPolicyOrder", "AnyOrder"}});
  auto& network = member(spec, "network");
  default_to(network, "enableDNSHostnames", true);
  default_to(network, "publishNotReadyAddresses", true);
  if (!spec.contains("replicatedJobs") || !spec["replicatedJobs"].is_array())
    spec["replicatedJobs"] = json::array();
  for (auto& rjob : spec["replicatedJobs"]) {
    if (!rjob.is_object())
      continue;
    default_to(rjob, "groupName", "default");
    default_to(rjob, "replicas", 1);
    auto& tmpl = member(rjob, "template");
    auto& jspec = member(tmpl, "spec");
    default_to(jspec, "completionMode", "Indexed");
    auto& ptmpl = member(jspec, "template");
    auto& pspec = member(ptmpl, "spec");
    if (str(pspec, "restartPolicy").empty())
      pspec["restartPolicy"] = "OnFailure";
  }
  if (spec.contains("failurePolicy") && spec["failurePolicy"].is_object()) {
    auto& fp = spec["failurePolicy"];
    if (fp.contains("rules") && fp["rules"].is_array()) {
      std::size_t i = 0;
      for (auto& rule : fp["rules"]) {
        if (rule.is_object() && str(rule, "name").empty())
          rule["name"] = "failurePolicyRule" + std::to_string(i);
        ++i;
      }
    }
  }
  return spec;
}

std::string label(const json& o, const std::string& key) {
  return str(obj(obj(o, "metadata"), "labels"), key.c_str());
}

// The finished condition type of a Job ("Complete", "Failed" or "").
std::string job_finished(const json& job) {
  for (const char* type : {"Complete", "Failed"})
    if (condition_true(job, type))
      return type;
  return {};
}

struct child_jobs {
  std::vector<json> active;
  std::vector<json> successful;
  std::vector<json> failed;
  std::vector<json> previous;
};

// metav1.Condition handling of jobset_controller.go updateCondition.
bool update_condition(json& status, const std::string& type,
                      const std::string& value, const std::string& reason,
                      const std::string& message, const std::string& now) {
  if (!status.contains("conditions") || !status["conditions"].is_array())
    status["conditions"] = json::array();
  json cond = {{"type", type},
               {"status", value},
               {"lastTransitionTime", now},
               {"reason", reason},
               {"message", message}};
  bool found = false;
  bool changed = false;
  for (auto& c : status["conditions"]) {
    if (str(c, "type") != type)
      continue;
    found = true;
    if (str(c, "status") != value) {
      c = cond;
      changed = true;
    } else if (str(c, "reason") != reason || str(c, "message") != message) {
      cond["lastTransitionTime"] = c.value("lastTransitionTime", now);
      c = cond;
      changed = true;
    }
  }
  // StartupPolicyInProgress and StartupPolicyCompleted exclude each other
  // (exclusiveConditions): the other one, if True, goes False.
  if (value == "True"
      && (type == "StartupPolicyInProgress"
          || type == "StartupPolicyCompleted")) {
    auto other = type == "StartupPolicyInProgress" ? "StartupPolicyCompleted"
                                                   : "StartupPolicyInProgress";
    for (auto& c : status["conditions"])
      if (str(c, "type") == other && str(c, "status") == "True") {
        c["status"] = "False";
        changed = true;
      }
  }
  if (!found && value == "True") {
    status["conditions"].push_back(cond);
    changed = true;
  }
  return changed;
}

struct event_spec {
  std::string type;
  std::string reason;
  std::string message;
};

struct jobset_controller {
  engine* eng = nullptr;

  std::vector<std::string> map(std::size_t which, const json& o) const {
    if (which == jobsets_idx)
      return {key_of(o)};
    auto owner = controller_name(o, "JobSet");
    if (owner.empty())
      return {};
    return {namespace_of(o) + "/" + owner};
  }

  static std::string subdomain(const json& js, const json& spec) {
    auto sub = str(obj(spec, "network"), "subdomain");
    return sub.empty() ? name_of(js) : sub;
  }

  static bool dns_enabled(const json& spec) {
    return flag(obj(spec, "network"), "enableDNSHostnames", true);
  }

  static child_jobs children(const engine& e, const json& js,
                             std::int64_t restarts) {
    child_jobs out;
    auto ns = namespace_of(js);
    auto uid = uid_of(js);
    for (const auto& [k, job] : e.objects(jobs_idx)) {
      if (namespace_of(job) != ns || controller_uid(job, "JobSet") != uid)
        continue;
      auto text = label(job, restarts_key);
      std::int64_t attempt = -1;
      auto [p, ec]
          = std::from_chars(text.data(), text.data() + text.size(), attempt);
      if (ec != std::errc{} || p != text.data() + text.size()
          || attempt < restarts) {
        out.previous.push_back(job);
        continue;
      }
      auto fin = job_finished(job);
      if (fin.empty())
        out.active.push_back(job);
      else if (fin == "Failed")
        out.failed.push_back(job);
      else
        out.successful.push_back(job);
    }
    return out;
  }

  static json rjob_statuses(const json& spec, const child_jobs& jobs) {
    json out = json::array();
    for (const auto& rjob : spec["replicatedJobs"]) {
      auto name = str(rjob, "name");
      std::int64_t ready = 0, succeeded = 0, failed = 0, active = 0,
                   suspended = 0;
      for (const auto& job : jobs.active) {
        if (label(job, rjob_name_key) != name)
          continue;
        const auto& jspec = obj(job, "spec");
        const auto& jstatus = obj(job, "status");
        auto pods = num(jspec, "parallelism", 1);
        if (has(jspec, "completions") && num(jspec, "completions") < pods)
          pods = num(jspec, "completions");
        if (num(jstatus, "succeeded") + num(jstatus, "ready") >= pods)
          ++ready;
        if (num(jstatus, "active") > 0)
          ++active;
        if (flag(jspec, "suspend"))
          ++suspended;
      }
      for (const auto& job : jobs.successful)
        succeeded += label(job, rjob_name_key) == name ? 1 : 0;
      for (const auto& job : jobs.failed)
        failed += label(job, rjob_name_key) == name ? 1 : 0;
      out.push_back({{"name", name},
                     {"ready", ready},
                     {"succeeded", succeeded},
                     {"failed", failed},
                     {"active", active},
                     {"suspended", suspended}});
    }
    return out;
  }

  static const json* rjob_status(const json& statuses,
                                 const std::string& name) {
    for (const auto& s : statuses)
      if (str(s, "name") == name)
        return &s;
    return nullptr;
  }

  // depends_on.go dependencyReachedStatus.
  static bool dependencies_reached(const json& rjob, const json& spec,
                                   const json& statuses) {
    const auto& deps = obj(rjob, "dependsOn");
    if (!deps.is_array() || deps.empty())
      return true;
    for (const auto& dep : deps) {
      auto name = str(dep, "name");
      std::int64_t replicas = -1;
      for (const auto& r : spec["replicatedJobs"])
        if (str(r, "name") == name)
          replicas = num(r, "replicas", 1);
      const json* s = rjob_status(statuses, name);
      if (s == nullptr || replicas < 0)
        return false;
      if (str(dep, "status") == "Complete" && replicas != num(*s, "succeeded"))
        return false;
      if (str(dep, "status") == "Ready"
          && replicas
                 != num(*s, "failed") + num(*s, "ready") + num(*s, "succeeded"))
        return false;
    }
    return true;
  }

  // labelAndAnnotateObject: the same keys as labels and annotations.
  static void label_and_annotate(json& meta, const json& js, const json& spec,
                                 const json& rjob, std::int64_t job_idx,
                                 std::int64_t restarts) {
    auto js_name = name_of(js);
    auto rjob_name = str(rjob, "name");
    auto group = str(rjob, "groupName");
    auto job_name = js_name + "-" + rjob_name + "-" + std::to_string(job_idx);
    std::int64_t global = 0, global_index = -1, group_replicas = 0,
                 group_index = -1, before = 0, group_before = 0;
    for (const auto& r : spec["replicatedJobs"]) {
      auto replicas = num(r, "replicas", 1);
      if (str(r, "name") == rjob_name)
        global_index = before + job_idx;
      before += replicas;
      global += replicas;
      if (str(r, "groupName") == group) {
        if (str(r, "name") == rjob_name)
          group_index = group_before + job_idx;
        group_before += replicas;
        group_replicas += replicas;
      }
    }
    std::vector<std::pair<std::string, std::string>> kv = {
        {jobset_name_key, js_name},
        {jobset_uid_key, uid_of(js)},
        {rjob_name_key, rjob_name},
        {restarts_key, std::to_string(restarts)},
        {rjob_replicas_key, std::to_string(num(rjob, "replicas", 1))},
        {global_replicas_key, std::to_string(global)},
        {job_index_key, std::to_string(job_idx)},
        {job_key_key, sha1_hex(namespace_of(js) + "/" + job_name)},
        {job_global_index_key,
         global_index < 0 ? std::string{} : std::to_string(global_index)},
        {group_name_key, group},
        {group_replicas_key, std::to_string(group_replicas)},
        {job_group_index_key,
         group_index < 0 ? std::string{} : std::to_string(group_index)},
    };
    if (spec.contains("coordinator") && spec["coordinator"].is_object()) {
      const auto& c = spec["coordinator"];
      kv.emplace_back(coordinator_key,
                      js_name + "-" + str(c, "replicatedJob") + "-"
                          + std::to_string(num(c, "jobIndex")) + "-"
                          + std::to_string(num(c, "podIndex")) + "."
                          + subdomain(js, spec));
    }
    // One member at a time: adding a key to an ordered_json object moves
    // its other members.
    for (const char* field : {"labels", "annotations"}) {
      auto& m = member(meta, field);
      for (const auto& [k, v] : kv)
        m[k] = v;
    }
    auto& annotations = meta["annotations"];
    // Exclusive placement is asked for by annotation only.
    for (const json* source :
         {&obj(js, "metadata"), &obj(obj(rjob, "template"), "metadata")}) {
      const auto& ann = obj(*source, "annotations");
      if (ann.contains(exclusive_key)) {
        annotations[exclusive_key] = ann[exclusive_key];
        if (ann.contains(node_selector_strategy_key))
          annotations[node_selector_strategy_key]
              = ann[node_selector_strategy_key];
      }
    }
  }

  static json construct_job(const json& js, const json& spec, const json& rjob,
                            std::int64_t job_idx, std::int64_t restarts) {
    const auto& tmpl = obj(rjob, "template");
    const auto& tmeta = obj(tmpl, "metadata");
    json meta = json::object();
    meta["name"]
        = name_of(js) + "-" + str(rjob, "name") + "-" + std::to_string(job_idx);
    meta["namespace"] = namespace_of(js);
    if (tmeta.contains("labels") && tmeta["labels"].is_object())
      meta["labels"] = tmeta["labels"];
    if (tmeta.contains("annotations") && tmeta["annotations"].is_object())
      meta["annotations"] = tmeta["annotations"];
    label_and_annotate(meta, js, spec, rjob, job_idx, restarts);
    meta["ownerReferences"]
        = json::array({owner_reference(js, api_version, "JobSet")});
    json jspec = obj(tmpl, "spec");
    auto& ptmpl = member(jspec, "template");
    auto& pmeta = member(ptmpl, "metadata");
    label_and_annotate(pmeta, js, spec, rjob, job_idx, restarts);
    if (dns_enabled(spec))
      member(ptmpl, "spec")["subdomain"] = subdomain(js, spec);
    jspec["suspend"] = flag(spec, "suspend");
    return json{{"apiVersion", "batch/v1"},
                {"kind", "Job"},
                {"metadata", std::move(meta)},
                {"spec", std::move(jspec)}};
  }

  void delete_jobs(const pass_ptr& p, const std::vector<json>& jobs) {
    for (const auto& job : jobs) {
      if (being_deleted(job))
        continue;
      eng->write(p,
                 delete_request(jobs_ref(namespace_of(job), name_of(job)),
                                uid_of(job), "Foreground"),
                 jobs_idx);
    }
  }

  static const json* first_failed(const std::vector<const json*>& jobs) {
    const json* best = nullptr;
    std::string best_time;
    for (const auto* job : jobs) {
      const auto* c = condition(*job, "Failed");
      if (c == nullptr)
        continue;
      auto t = str(*c, "lastTransitionTime");
      if (best == nullptr || t < best_time) {
        best = job;
        best_time = t;
      }
    }
    return best;
  }

  static std::string with_first_failed(const std::string& msg,
                                       const json* job) {
    return msg + " (first failed job: "
           + (job != nullptr ? name_of(*job) : std::string{}) + ")";
  }

  static bool rule_applies(const json& rule, const json& job) {
    const auto* c = condition(job, "Failed");
    if (c == nullptr)
      return false;
    const auto& reasons = obj(rule, "onJobFailureReasons");
    if (reasons.is_array() && !reasons.empty()
        && std::find(reasons.begin(), reasons.end(), json(str(*c, "reason")))
               == reasons.end())
      return false;
    const auto& patterns = obj(rule, "onJobFailureMessagePatterns");
    if (patterns.is_array() && !patterns.empty()) {
      bool any = false;
      auto message = str(*c, "message");
      for (const auto& pat : patterns) {
        if (!pat.is_string())
          continue;
        try {
          any = any
                || std::regex_search(
                    message,
                    std::regex(pat.get<std::string>(), std::regex::ECMAScript));
        } catch (const std::regex_error&) {
          // An invalid pattern matches nothing, as upstream logs and skips.
        }
      }
      if (!any)
        return false;
    }
    auto parent = label(job, rjob_name_key);
    if (parent.empty())
      return false;
    const auto& targets = obj(rule, "targetReplicatedJobs");
    return !targets.is_array() || targets.empty()
           || std::find(targets.begin(), targets.end(), json(parent))
                  != targets.end();
  }

  // failure_policy.go executeFailurePolicy.
  void failure_policy(json& status, const json& spec, const child_jobs& jobs,
                      const std::string& now, std::vector<event_spec>& events) {
    std::vector<const json*> failed;
    for (const auto& j : jobs.failed)
      failed.push_back(&j);
    auto fail = [&](const std::string& reason, const std::string& message) {
      if (update_condition(status, "Failed", "True", reason, message, now))
        events.push_back({"Warning", reason, message});
      if (update_condition(status, restarting_type, "False", "JobSetFailed",
                           "jobset failed", now))
        events.push_back({"Normal", "JobSetFailed", "jobset failed"});
      status["terminalState"] = "Failed";
    };
    if (!spec.contains("failurePolicy") || !spec["failurePolicy"].is_object()) {
      fail(failed_jobs_reason,
           with_first_failed(failed_jobs_message, first_failed(failed)));
      return;
    }
    const auto& fp = spec["failurePolicy"];
    const json* rule = nullptr;
    const json* job = nullptr;
    const auto& rules = obj(fp, "rules");
    if (rules.is_array())
      for (const auto& r : rules) {
        std::vector<const json*> matching;
        for (const auto* j : failed)
          if (rule_applies(r, *j))
            matching.push_back(j);
        if (!matching.empty()) {
          rule = &r;
          job = first_failed(matching);
          break;
        }
      }
    std::string action
        = rule != nullptr ? str(*rule, "action") : std::string{"RestartJobSet"};
    if (rule == nullptr)
      job = first_failed(failed);
    if (action == "FailJobSet") {
      fail("FailJobSetFailurePolicyAction",
           with_first_failed("applying FailJobSet failure policy action", job));
      return;
    }
    bool counts = action == "RestartJobSet";
    if (!counts && action != "RestartJobSetAndIgnoreMaxRestarts")
      return; // RestartJob actions: feature-gated upstream, not emulated
    if (counts
        && num(status, "restartsCountTowardsMax") >= num(fp, "maxRestarts")) {
      fail(max_restarts_reason, with_first_failed(max_restarts_message, job));
      return;
    }
    auto message = with_first_failed(
        counts ? "applying RestartJobSet failure policy action"
               : "applying RestartJobSetAndIgnoreMaxRestarts failure policy "
                 "action",
        job);
    auto reason = rule != nullptr ? "FailurePolicy_" + str(*rule, "name")
                                  : std::string{"DefaultFailurePolicy"};
    status["restarts"] = num(status, "restarts") + 1;
    if (counts)
      status["restartsCountTowardsMax"]
          = num(status, "restartsCountTowardsMax") + 1;
    update_condition(status, restarting_type, "True", reason, message, now);
    events.push_back({"Warning",
                      counts ? "RestartJobSetFailurePolicyAction"
                             : "RestartJobSetAndIgnoreMaxRestartsFailurePolicy"
                               "Action",
                      message});
  }

  static bool success_policy_met(const json& spec, const child_jobs& jobs) {
    const auto& sp = obj(spec, "successPolicy");
    const auto& targets = obj(sp, "targetReplicatedJobs");
    auto targeted = [&](const std::string& rjob) {
      return !targets.is_array() || targets.empty()
             || std::find(targets.begin(), targets.end(), json(rjob))
                    != targets.end();
    };
    std::int64_t matching = 0;
    for (const auto& job : jobs.successful)
      matching += targeted(label(job, rjob_name_key)) ? 1 : 0;
    std::int64_t expected = 0;
    if (str(sp, "operator") == "Any") {
      expected = 1;
    } else {
      for (const auto& r : spec["replicatedJobs"])
        if (targeted(str(r, "name")))
          expected += num(r, "replicas", 1);
    }
    return matching >= expected;
  }

  void ensure_service(const pass_ptr& p, const json& js, const json& spec) {
    if (!dns_enabled(spec))
      return;
    auto ns = namespace_of(js);
    auto name = subdomain(js, spec);
    if (eng->find(services_idx, ns + "/" + name) != nullptr)
      return;
    json svc
        = {{"apiVersion", "v1"},
           {"kind", "Service"},
           {"metadata",
            {{"name", name},
             {"namespace", ns},
             {"ownerReferences",
              json::array({owner_reference(js, api_version, "JobSet")})}}},
           {"spec",
            {{"clusterIP", "None"},
             {"selector", {{jobset_name_key, name_of(js)}}},
             {"publishNotReadyAddresses",
              flag(obj(spec, "network"), "publishNotReadyAddresses", true)}}}};
    eng->write(p, make_request(verb::create, services_ref(ns), svc),
               services_idx, nullptr, [this, js](const std::string& message) {
                 eng->event(js, "Warning", "HeadlessServiceCreationFailed",
                            message);
               });
  }

  // reconcileReplicatedJobs. Returns false while an InOrder startup waits
  // for a replicatedJob to start (later ones are not made yet).
  bool create_jobs(const pass_ptr& p, const json& js, const json& spec,
                   const child_jobs& jobs, const json& statuses,
                   std::int64_t restarts, bool in_order) {
    std::set<std::string> existing;
    for (const auto* list :
         {&jobs.active, &jobs.successful, &jobs.failed, &jobs.previous})
      for (const auto& j : *list)
        existing.insert(name_of(j));
    for (const auto& rjob : spec["replicatedJobs"]) {
      if (!dependencies_reached(rjob, spec, statuses))
        continue;
      if (in_order && all_started(rjob, statuses))
        continue;
      auto replicas = num(rjob, "replicas", 1);
      for (std::int64_t i = 0; i < replicas; ++i) {
        auto job = construct_job(js, spec, rjob, i, restarts);
        if (existing.count(name_of(job)))
          continue;
        eng->write(
            p, make_request(verb::create, jobs_ref(namespace_of(js)), job),
            jobs_idx, nullptr,
            [this, js, name = name_of(job)](const std::string& message) {
              eng->event(js, "Warning", "JobCreationFailed",
                         "job \"" + name
                             + "\" creation failed with error: " + message);
            });
      }
      if (in_order)
        return false;
    }
    return true;
  }

  // startup_policy.go allReplicasStarted.
  static bool all_started(const json& rjob, const json& statuses) {
    const json* s = rjob_status(statuses, str(rjob, "name"));
    return s != nullptr
           && num(rjob, "replicas", 1)
                  == num(*s, "failed") + num(*s, "ready")
                         + num(*s, "succeeded");
  }

  void suspend_jobs(const pass_ptr& p, const child_jobs& jobs) {
    for (const auto& job : jobs.active) {
      if (flag(obj(job, "spec"), "suspend"))
        continue;
      json updated = job;
      updated["spec"]["suspend"] = true;
      eng->write(p,
                 make_request(verb::update,
                              jobs_ref(namespace_of(job), name_of(job)),
                              updated),
                 jobs_idx);
    }
  }

  static void merge_map(json& into, const json& from) {
    if (!from.is_object())
      return;
    if (!into.is_object())
      into = json::object();
    for (auto it = from.begin(); it != from.end(); ++it)
      into[it.key()] = it.value();
  }

  static void merge_list(json& into, const json& from) {
    if (!from.is_array())
      return;
    if (!into.is_array())
      into = json::array();
    for (const auto& x : from)
      if (std::find(into.begin(), into.end(), x) == into.end())
        into.push_back(x);
  }

  // resumeJob: the suspended Job gets what may have changed in the
  // replicatedJob's pod template while suspended (labels, annotations,
  // nodeSelector, tolerations, schedulingGates), merged, and suspend false;
  // its startTime is cleared first, as the Job's template may only change
  // then.
  void resume_job(const pass_ptr& p, const json& job, const json& rjob) {
    auto unsuspend = [this, p, rjob](json j) {
      const auto& src = obj(obj(obj(rjob, "template"), "spec"), "template");
      auto& ptmpl = member(member(j, "spec"), "template");
      auto& pmeta = member(ptmpl, "metadata");
      merge_map(pmeta["labels"], obj(obj(src, "metadata"), "labels"));
      merge_map(pmeta["annotations"], obj(obj(src, "metadata"), "annotations"));
      auto& pspec = member(ptmpl, "spec");
      const auto& sspec = obj(src, "spec");
      if (sspec.contains("nodeSelector"))
        merge_map(pspec["nodeSelector"], sspec["nodeSelector"]);
      if (sspec.contains("tolerations"))
        merge_list(pspec["tolerations"], sspec["tolerations"]);
      if (sspec.contains("schedulingGates"))
        merge_list(pspec["schedulingGates"], sspec["schedulingGates"]);
      j["spec"]["suspend"] = false;
      eng->write(
          p,
          make_request(verb::update, jobs_ref(namespace_of(j), name_of(j)), j),
          jobs_idx);
    };
    if (has(obj(job, "status"), "startTime")) {
      json cleared = job;
      cleared["status"].erase("startTime");
      auto req = make_request(
          verb::update, jobs_ref(namespace_of(job), name_of(job)), cleared);
      req.ref.subresource = "status";
      eng->write(p, std::move(req), jobs_idx, unsuspend);
    } else {
      unsuspend(job);
    }
  }

  void reconcile(const std::string& key, const pass_ptr& p) {
    const json* found = eng->find(jobsets_idx, key);
    if (found == nullptr)
      return;
    const json js = *found;
    if (being_deleted(js))
      return;
    const json spec = effective_spec(js);
    auto managed_by = str(spec, "managedBy");
    if (!managed_by.empty() && managed_by != controller_name_value)
      return;

    const auto now = eng->now_text();
    const auto& old_status = obj(js, "status");
    json status = old_status.is_object() ? old_status : json::object();
    default_to(status, "restarts", 0);
    const auto restarts = num(status, "restarts");
    auto jobs = children(*eng, js, restarts);
    auto statuses = rjob_statuses(spec, jobs);
    status["replicatedJobsStatus"] = statuses;
    std::vector<event_spec> events;
    const bool suspended = flag(spec, "suspend");

    auto write_status = [&] {
      if (status.contains("conditions") && status["conditions"].empty())
        status.erase("conditions");
      if (same(status, old_status))
        return;
      json updated = js;
      updated["status"] = status;
      auto req = make_request(
          verb::update, jobsets_ref(namespace_of(js), name_of(js)), updated);
      req.ref.subresource = "status";
      eng->write(p, std::move(req), jobsets_idx,
                 [this, events](const json& written) {
                   for (const auto& e : events)
                     eng->event(written, e.type, e.reason, e.message);
                 });
    };

    if (condition_true(js, "Completed") || condition_true(js, "Failed")) {
      delete_jobs(p, jobs.active);
      if (has(spec, "ttlSecondsAfterFinished")) {
        const json* c = condition_true(js, "Completed")
                            ? condition(js, "Completed")
                            : condition(js, "Failed");
        auto finished = engine::unix_of(str(*c, "lastTransitionTime"));
        if (finished) {
          auto left = *finished + num(spec, "ttlSecondsAfterFinished")
                      - eng->now_unix();
          if (left <= 0) {
            eng->write(
                p,
                delete_request(jobsets_ref(namespace_of(js), name_of(js)),
                               uid_of(js), "Foreground"),
                jobsets_idx);
            return;
          }
          p->again_after(std::chrono::seconds{left});
        }
      }
      write_status();
      return;
    }

    delete_jobs(p, jobs.previous);

    std::int64_t total = 0;
    std::int64_t ready = 0;
    for (const auto& r : spec["replicatedJobs"])
      total += num(r, "replicas", 1);
    for (const auto& s : statuses)
      ready += num(s, "ready") + num(s, "succeeded");
    if (!suspended && total == ready
        && update_condition(status, restarting_type, "False", "JobsReady",
                            "all jobs are ready", now))
      events.push_back({"Normal", "JobsReady", "all jobs are ready"});

    if (!jobs.failed.empty()) {
      failure_policy(status, spec, jobs, now, events);
      write_status();
      return;
    }
    if (!jobs.successful.empty() && success_policy_met(spec, jobs)) {
      if (update_condition(status, "Completed", "True", completed_reason,
                           completed_message, now))
        events.push_back({"Normal", completed_reason, completed_message});
      update_condition(status, restarting_type, "False", "JobSetCompleted",
                       completed_message, now);
      status["terminalState"] = "Completed";
      write_status();
      return;
    }

    ensure_service(p, js, spec);
    const bool in_order
        = str(obj(spec, "startupPolicy"), "startupPolicyOrder") == "InOrder";
    bool started = create_jobs(p, js, spec, jobs, statuses, restarts,
                               in_order && !suspended);
    if (in_order && !suspended) {
      const char* type
          = started ? "StartupPolicyCompleted" : "StartupPolicyInProgress";
      const char* reason = started ? "InOrderStartupPolicyCompleted"
                                   : "InOrderStartupPolicyInProgress";
      const char* message = started ? "in order startup policy has completed"
                                    : "in order startup policy is in progress";
      if (update_condition(status, type, "True", reason, message, now))
        events.push_back({"Normal", reason, message});
    }

    if (suspended) {
      suspend_jobs(p, jobs);
      if (update_condition(status, "Suspended", "True", suspended_reason,
                           suspended_message, now))
        events.push_back({"Normal", suspended_reason, suspended_message});
      update_condition(status, restarting_type, "False", "JobSetSuspended",
                       suspended_message, now);
    } else {
      // resumeJobsIfNecessary: InOrder resumes one replicatedJob at a
      // time and leaves the Suspended condition until the last.
      bool resumed_all = true;
      for (const auto& rjob : spec["replicatedJobs"]) {
        if (!dependencies_reached(rjob, spec, statuses))
          continue;
        if (in_order && all_started(rjob, statuses))
          continue;
        for (const auto& job : jobs.active)
          if (label(job, rjob_name_key) == str(rjob, "name")
              && flag(obj(job, "spec"), "suspend"))
            resume_job(p, job, rjob);
        if (in_order) {
          resumed_all = false;
          break;
        }
      }
      if (resumed_all
          && update_condition(status, "Suspended", "False", resumed_reason,
                              resumed_message, now))
        events.push_back({"Normal", resumed_reason, resumed_message});
    }
    write_status();
  }
};

jobs_controller_actor::behavior_type
jobset_impl(stateful_ptr self, api_actor api, jobs_config cfg) {
  auto ctl = std::make_shared<jobset_controller>();
  self->state.eng = std::make_unique<engine>(
      self, std::move(api), cfg,
      std::vector<resource_ref>{jobsets_ref(), jobs_ref(), services_ref()},
      [ctl](std::size_t which, const json& o) { return ctl->map(which, o); },
      [ctl](const std::string& key, const pass_ptr& p) {
        ctl->reconcile(key, p);
      },
      "jobset");
  ctl->eng = self->state.eng.get();
  self->state.eng->start();
  return self->state.eng->behavior();
}

} // namespace

jobs_controller_actor spawn_jobset_controller(caf::actor_system& sys,
                                              api_actor api, jobs_config cfg) {
  return sys.spawn(jobset_impl, std::move(api), cfg);
}

} // namespace aiperf::k8s::sim
