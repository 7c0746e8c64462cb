// The Job, JobSet and TTL-after-finished controllers against the store
// actor on the deterministic test coordinator. The tests play the kubelet:
// they write pod status (phase, containerStatuses) through pods/status and
// move simulated time.
#include "k8s/api/json.hpp"
#include "k8s/sim/controllers/controllers.hpp"
#include "k8s/sim/jobs/jobs.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace aiperf::k8s::sim {
namespace {

constexpr std::int64_t start_unix = 1'795'000'000;

resource_ref jobs_ref(const std::string& name = {},
                      const std::string& sub = {}) {
  return {"batch", "v1", "jobs", "default", name, sub};
}
resource_ref pods_ref(const std::string& name = {},
                      const std::string& sub = {}) {
  return {"", "v1", "pods", "default", name, sub};
}
resource_ref jobsets_ref(const std::string& name = {},
                         const std::string& sub = {}) {
  return {"jobset.x-k8s.io", "v1alpha2", "jobsets", "default", name, sub};
}
resource_ref services_ref(const std::string& name = {}) {
  return {"", "v1", "services", "default", name, ""};
}
resource_ref crds_ref(const std::string& name = {}) {
  return {
      "apiextensions.k8s.io", "v1", "customresourcedefinitions", "", name, ""};
}

json container() {
  return json{{"name", "main"}, {"image", "test:1"}};
}

json make_job(const std::string& name, json spec_extra,
              const std::string& restart = "Never") {
  json spec = {{"template",
                {{"spec",
                  {{"containers", json::array({container()})},
                   {"restartPolicy", restart}}}}}};
  for (auto it = spec_extra.begin(); it != spec_extra.end(); ++it)
    spec[it.key()] = it.value();
  return json{{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", spec}};
}

json rjob(const std::string& name, int replicas, int completions,
          int backoff = 6) {
  return json{
      {"name", name},
      {"replicas", replicas},
      {"template",
       {{"spec",
         {{"parallelism", completions},
          {"completions", completions},
          {"backoffLimit", backoff},
          {"template",
           {{"spec", {{"containers", json::array({container()})}}}}}}}}}};
}

json make_jobset(const std::string& name, json spec_extra = json::object()) {
  json spec = {{"replicatedJobs",
                json::array({rjob("leader", 1, 1), rjob("workers", 2, 2)})}};
  for (auto it = spec_extra.begin(); it != spec_extra.end(); ++it)
    spec[it.key()] = it.value();
  return json{{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
              {"kind", "JobSet"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", spec}};
}

struct jobs_test : caf_gtest::fixture<> {
  store_actor store;
  std::vector<jobs_controller_actor> controllers;
  garbage_collector_actor gc;

  jobs_test() {
    store_config cfg;
    cfg.start_unix_seconds = start_unix;
    auto s = spawn_store(sys, cfg);
    EXPECT_TRUE(s) << (s ? "" : error_message(s.error()));
    store = *s;
    drain();
  }

  api_actor api() const { return caf::actor_cast<api_actor>(store); }

  static jobs_config config() {
    jobs_config c;
    c.start_unix_seconds = start_unix;
    return c;
  }

  void start_job_controller() {
    controllers.push_back(spawn_job_controller(sys, api(), config()));
    drain();
  }
  void start_jobset_controller() {
    controllers.push_back(spawn_jobset_controller(sys, api(), config()));
    drain();
  }
  void start_ttl_controller() {
    controllers.push_back(
        spawn_ttl_after_finished_controller(sys, api(), config()));
    drain();
  }
  void start_gc() {
    gc = spawn_garbage_collector(sys, api());
    drain();
  }

  caf::expected<response> call(verb v, resource_ref ref,
                               const json& body = nullptr,
                               patch_type pt = patch_type::none) {
    k8s::request r;
    r.verb = v;
    r.ref = std::move(ref);
    r.patch = pt;
    if (!body.is_null())
      r.body = body.dump();
    return request<response>(api(), r);
  }

  json create(resource_ref ref, const json& body) {
    auto res = call(verb::create, std::move(ref), body);
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    drain();
    return res ? json::parse(res->body) : json{};
  }

  json get(const resource_ref& ref) {
    auto res = call(verb::get, ref);
    return res ? json::parse(res->body) : json{};
  }

  bool exists(const resource_ref& ref) {
    return static_cast<bool>(call(verb::get, ref));
  }

  void merge(const resource_ref& ref, const json& patch) {
    auto res = call(verb::patch, ref, patch, patch_type::merge);
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    drain();
  }

  std::vector<json> items(const resource_ref& ref) {
    auto res = call(verb::list, ref);
    std::vector<json> out;
    if (!res)
      return out;
    auto doc = json::parse(res->body);
    for (auto& i : doc["items"])
      out.push_back(i);
    return out;
  }

  // The pods whose controller is the Job `job`, by completion index (or
  // name for NonIndexed Jobs).
  std::vector<json> pods_of(const std::string& job) {
    std::vector<json> out;
    for (auto& p : items(pods_ref())) {
      const auto& owners
          = p["metadata"].value("ownerReferences", json::array());
      if (!owners.empty() && owners[0]["name"] == job)
        out.push_back(p);
    }
    std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
      return a["metadata"]["name"] < b["metadata"]["name"];
    });
    return out;
  }

  std::vector<std::string> names(const std::vector<json>& xs) {
    std::vector<std::string> out;
    for (const auto& x : xs)
      out.push_back(x["metadata"]["name"]);
    std::sort(out.begin(), out.end());
    return out;
  }

  // The kubelet's part: a pod's phase, with one container status.
  void set_pod(const json& pod, const std::string& phase, int restarts = 0,
               int exit_code = 0) {
    json state;
    if (phase == "Running" || phase == "Pending")
      state = {{"running", {{"startedAt", "2026-11-17T00:00:00Z"}}}};
    else
      state = {{"terminated",
                {{"exitCode", exit_code},
                 {"reason", exit_code == 0 ? "Completed" : "Error"},
                 {"finishedAt", now_text()}}}};
    json cs = {{"name", "main"},
               {"ready", phase == "Running"},
               {"restartCount", restarts},
               {"image", "test:1"},
               {"imageID", ""},
               {"state", state}};
    merge(pods_ref(pod["metadata"]["name"], "status"),
          json{{"status",
                {{"phase", phase}, {"containerStatuses", json::array({cs})}}}});
  }

  // What the store's clock reads now, as metav1.Time.
  std::string now_text() {
    // Every object written carries the store's time; a throwaway one
    // reads it.
    auto cm = create({"", "v1", "configmaps", "default", "", ""},
                     json{{"apiVersion", "v1"},
                          {"kind", "ConfigMap"},
                          {"metadata", {{"generateName", "clock-"}}}});
    return cm["metadata"]["creationTimestamp"];
  }

  std::vector<json> events_for(const std::string& name) {
    std::vector<json> out;
    for (auto& e : items({"", "v1", "events", "default", "", ""}))
      if (e["involvedObject"]["name"] == name)
        out.push_back(e);
    return out;
  }

  bool has_event(const std::string& name, const std::string& reason,
                 const std::string& message) {
    for (const auto& e : events_for(name))
      if (e["reason"] == reason && e["message"] == message)
        return true;
    return false;
  }

  static const json* cond(const json& o, const std::string& type) {
    if (!o.contains("status") || !o["status"].contains("conditions"))
      return nullptr;
    for (const auto& c : o["status"]["conditions"])
      if (c["type"] == type)
        return &c;
    return nullptr;
  }

  static bool cond_true(const json& o, const std::string& type) {
    const auto* c = cond(o, type);
    return c != nullptr && (*c)["status"] == "True";
  }

  void install_crd() {
    create(crds_ref(), jobset_crd());
    auto crd = get(crds_ref("jobsets.jobset.x-k8s.io"));
    bool established = false;
    for (const auto& c : crd["status"]["conditions"])
      if (c["type"] == "Established" && c["status"] == "True")
        established = true;
    ASSERT_TRUE(established) << crd.dump();
  }
};

// ---- Job ----------------------------------------------------------------

TEST_F(jobs_test, an_indexed_job_makes_its_pods_and_completes) {
  start_job_controller();
  auto job = create(jobs_ref(), make_job("work", {{"completionMode", "Indexed"},
                                                  {"completions", 2},
                                                  {"parallelism", 2}}));
  auto uid = job["metadata"]["uid"].get<std::string>();
  auto pods = pods_of("work");
  ASSERT_EQ(pods.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const auto& p = pods[static_cast<std::size_t>(i)];
    auto idx = std::to_string(i);
    auto name = p["metadata"]["name"].get<std::string>();
    EXPECT_EQ(name.substr(0, 7), "work-" + idx + "-");
    EXPECT_EQ(name.size(), 12u) << name; // five random characters
    const auto& labels = p["metadata"]["labels"];
    EXPECT_EQ(labels["batch.kubernetes.io/job-completion-index"], idx);
    EXPECT_EQ(labels["batch.kubernetes.io/job-name"], "work");
    EXPECT_EQ(labels["job-name"], "work");
    EXPECT_EQ(labels["batch.kubernetes.io/controller-uid"], uid);
    EXPECT_EQ(labels["controller-uid"], uid);
    EXPECT_EQ(p["metadata"]["annotations"]
               ["batch.kubernetes.io/job-completion-index"],
              idx);
    EXPECT_EQ(p["spec"]["hostname"], "work-" + idx);
    json env = {{"name", "JOB_COMPLETION_INDEX"},
                {"valueFrom",
                 {{"fieldRef",
                   {{"fieldPath", "metadata.annotations['batch.kubernetes.io/"
                                  "job-completion-index']"}}}}}};
    ASSERT_TRUE(p["spec"]["containers"][0].contains("env"));
    EXPECT_EQ(p["spec"]["containers"][0]["env"][0]["name"],
              "JOB_COMPLETION_INDEX");
    EXPECT_EQ(p["spec"]["containers"][0]["env"][0]["valueFrom"]["fieldRef"]
               ["fieldPath"],
              env["valueFrom"]["fieldRef"]["fieldPath"]);
    const auto& owner = p["metadata"]["ownerReferences"][0];
    EXPECT_EQ(owner["kind"], "Job");
    EXPECT_EQ(owner["apiVersion"], "batch/v1");
    EXPECT_EQ(owner["uid"], uid);
    EXPECT_EQ(owner["controller"], true);
    EXPECT_EQ(owner["blockOwnerDeletion"], true);
    EXPECT_TRUE(has_event("work", "SuccessfulCreate", "Created pod: " + name));
  }
  job = get(jobs_ref("work"));
  EXPECT_EQ(job["status"]["active"], 2);
  EXPECT_TRUE(job["status"].contains("startTime"));

  advance_time(std::chrono::seconds{5});
  set_pod(pods[0], "Running");
  EXPECT_EQ(get(jobs_ref("work"))["status"]["ready"], 0); // no Ready condition
  set_pod(pods[0], "Succeeded");
  job = get(jobs_ref("work"));
  EXPECT_EQ(job["status"]["succeeded"], 1);
  EXPECT_EQ(job["status"]["completedIndexes"], "0");
  EXPECT_FALSE(cond_true(job, "Complete"));
  EXPECT_EQ(pods_of("work").size(), 2u); // a succeeded index is not redone

  advance_time(std::chrono::seconds{5});
  set_pod(pods[1], "Succeeded");
  job = get(jobs_ref("work"));
  EXPECT_TRUE(cond_true(job, "SuccessCriteriaMet"));
  ASSERT_TRUE(cond_true(job, "Complete")) << job["status"].dump();
  EXPECT_EQ((*cond(job, "Complete"))["reason"], "CompletionsReached");
  EXPECT_EQ((*cond(job, "Complete"))["message"],
            "Reached expected number of succeeded pods");
  EXPECT_EQ(job["status"]["completionTime"], now_text());
  EXPECT_EQ(job["status"]["succeeded"], 2);
  EXPECT_EQ(job["status"]["active"], 0);
  EXPECT_EQ(job["status"]["completedIndexes"], "0-1");
  EXPECT_TRUE(has_event("work", "Completed", "Job completed"));
}

TEST_F(jobs_test, failed_pods_past_the_backoff_limit_fail_the_job) {
  start_job_controller();
  create(jobs_ref(), make_job("flaky", {{"backoffLimit", 1}}));
  auto pods = pods_of("flaky");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]["metadata"]["generateName"], "flaky-");
  set_pod(pods[0], "Failed", 0, 1);
  auto job = get(jobs_ref("flaky"));
  EXPECT_EQ(job["status"]["failed"], 1);
  EXPECT_FALSE(cond_true(job, "Failed"));
  // The replacement waits for the pod failure back-off (10 s).
  advance_time(std::chrono::seconds{9});
  EXPECT_EQ(pods_of("flaky").size(), 1u);
  advance_time(std::chrono::seconds{2});
  pods = pods_of("flaky");
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& p : pods)
    if (p["status"]["phase"] != "Failed")
      set_pod(p, "Failed", 0, 1);
  job = get(jobs_ref("flaky"));
  EXPECT_EQ(job["status"]["failed"], 2);
  ASSERT_TRUE(cond_true(job, "Failed")) << job["status"].dump();
  EXPECT_TRUE(cond_true(job, "FailureTarget"));
  EXPECT_EQ((*cond(job, "Failed"))["reason"], "BackoffLimitExceeded");
  EXPECT_EQ((*cond(job, "Failed"))["message"],
            "Job has reached the specified backoff limit");
  EXPECT_FALSE(job["status"].contains("completionTime"));
  EXPECT_TRUE(has_event("flaky", "BackoffLimitExceeded",
                        "Job has reached the specified backoff limit"));
  // Nothing more is made for a failed Job.
  advance_time(std::chrono::seconds{60});
  EXPECT_EQ(pods_of("flaky").size(), 2u);
}

TEST_F(jobs_test, the_pod_failure_back_off_doubles) {
  start_job_controller();
  create(jobs_ref(), make_job("again", {{"backoffLimit", 5}}));
  auto fail_running = [this] {
    for (const auto& p : pods_of("again"))
      if (p["status"]["phase"] != "Failed")
        set_pod(p, "Failed", 0, 1);
  };
  fail_running();
  advance_time(std::chrono::seconds{10});
  ASSERT_EQ(pods_of("again").size(), 2u);
  fail_running();
  // The second failure waits 20 s.
  advance_time(std::chrono::seconds{19});
  EXPECT_EQ(pods_of("again").size(), 2u);
  advance_time(std::chrono::seconds{1});
  EXPECT_EQ(pods_of("again").size(), 3u);
  EXPECT_EQ(get(jobs_ref("again"))["status"]["failed"], 2);
}

TEST_F(jobs_test, container_restarts_count_under_on_failure) {
  start_job_controller();
  create(jobs_ref(), make_job("restarty", {{"backoffLimit", 2}}, "OnFailure"));
  auto pods = pods_of("restarty");
  ASSERT_EQ(pods.size(), 1u);
  set_pod(pods[0], "Running", 1);
  EXPECT_FALSE(cond_true(get(jobs_ref("restarty")), "FailureTarget"));
  set_pod(pods[0], "Running", 2);
  auto job = get(jobs_ref("restarty"));
  ASSERT_TRUE(cond_true(job, "Failed")) << job["status"].dump();
  EXPECT_EQ((*cond(job, "FailureTarget"))["reason"], "BackoffLimitExceeded");
  EXPECT_EQ((*cond(job, "Failed"))["reason"], "BackoffLimitExceeded");
  // The running pod was deleted before the Job was marked Failed.
  EXPECT_TRUE(pods_of("restarty").empty());
  EXPECT_TRUE(has_event("restarty", "SuccessfulDelete",
                        "Deleted pod: "
                            + pods[0]["metadata"]["name"].get<std::string>()));
}

TEST_F(jobs_test, a_non_indexed_job_runs_parallelism_pods_up_to_completions) {
  start_job_controller();
  create(jobs_ref(),
         make_job("batch", {{"completions", 3}, {"parallelism", 2}}));
  auto pods = pods_of("batch");
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& p : pods) {
    EXPECT_FALSE(p["spec"].contains("hostname"));
    EXPECT_FALSE(p["metadata"].contains("annotations"));
  }
  set_pod(pods[0], "Succeeded");
  // Two left to do, two running: one more pod.
  EXPECT_EQ(pods_of("batch").size(), 3u);
  set_pod(pods[1], "Succeeded");
  // One left, one running: nothing new.
  pods = pods_of("batch");
  ASSERT_EQ(pods.size(), 3u);
  EXPECT_EQ(get(jobs_ref("batch"))["status"]["active"], 1);
  for (const auto& p : pods)
    if (p["status"]["phase"] != "Succeeded")
      set_pod(p, "Succeeded");
  auto job = get(jobs_ref("batch"));
  EXPECT_TRUE(cond_true(job, "Complete")) << job["status"].dump();
  EXPECT_EQ(job["status"]["succeeded"], 3);
  EXPECT_FALSE(job["status"].contains("completedIndexes"));
}

TEST_F(jobs_test, a_suspended_job_runs_nothing_until_resumed) {
  start_job_controller();
  create(jobs_ref(), make_job("later", {{"suspend", true}}));
  EXPECT_TRUE(pods_of("later").empty());
  auto job = get(jobs_ref("later"));
  ASSERT_TRUE(cond_true(job, "Suspended"));
  EXPECT_EQ((*cond(job, "Suspended"))["reason"], "JobSuspended");
  EXPECT_FALSE(job["status"].contains("startTime"));
  advance_time(std::chrono::seconds{3});
  merge(jobs_ref("later"), json{{"spec", {{"suspend", false}}}});
  EXPECT_EQ(pods_of("later").size(), 1u);
  job = get(jobs_ref("later"));
  ASSERT_NE(cond(job, "Suspended"), nullptr);
  EXPECT_EQ((*cond(job, "Suspended"))["status"], "False");
  EXPECT_EQ((*cond(job, "Suspended"))["reason"], "JobResumed");
  EXPECT_EQ(job["status"]["startTime"], now_text());
  EXPECT_TRUE(has_event("later", "Resumed", "Job resumed"));
  // Suspending again deletes the active pod.
  merge(jobs_ref("later"), json{{"spec", {{"suspend", true}}}});
  EXPECT_TRUE(pods_of("later").empty());
  EXPECT_TRUE(cond_true(get(jobs_ref("later")), "Suspended"));
}

TEST_F(jobs_test, an_active_deadline_fails_the_job) {
  start_job_controller();
  create(jobs_ref(), make_job("slow", {{"activeDeadlineSeconds", 30}}));
  auto pods = pods_of("slow");
  ASSERT_EQ(pods.size(), 1u);
  set_pod(pods[0], "Running");
  advance_time(std::chrono::seconds{29});
  EXPECT_FALSE(cond_true(get(jobs_ref("slow")), "Failed"));
  advance_time(std::chrono::seconds{2});
  auto job = get(jobs_ref("slow"));
  ASSERT_TRUE(cond_true(job, "Failed")) << job["status"].dump();
  EXPECT_EQ((*cond(job, "Failed"))["reason"], "DeadlineExceeded");
  EXPECT_TRUE(pods_of("slow").empty());
}

// ---- TTL after finished -------------------------------------------------

TEST_F(jobs_test, the_ttl_controller_deletes_a_finished_job_after_its_ttl) {
  start_job_controller();
  start_ttl_controller();
  start_gc();
  create(jobs_ref(), make_job("short", {{"ttlSecondsAfterFinished", 100}}));
  create(jobs_ref(), make_job("keep", json::object()));
  for (const char* name : {"short", "keep"}) {
    auto pods = pods_of(name);
    ASSERT_EQ(pods.size(), 1u);
    set_pod(pods[0], "Succeeded");
    ASSERT_TRUE(cond_true(get(jobs_ref(name)), "Complete"));
  }
  advance_time(std::chrono::seconds{99});
  EXPECT_TRUE(exists(jobs_ref("short")));
  advance_time(std::chrono::seconds{2});
  EXPECT_FALSE(exists(jobs_ref("short")));
  EXPECT_TRUE(pods_of("short").empty()); // Foreground: its pods went first
  EXPECT_TRUE(exists(jobs_ref("keep")));
}

// ---- JobSet -------------------------------------------------------------

TEST_F(jobs_test, the_jobset_crd_installs_and_defaults_as_the_webhook) {
  install_crd();
  auto js = create(jobsets_ref(), make_jobset("train"));
  const auto& spec = js["spec"];
  auto crd = get(crds_ref("jobsets.jobset.x-k8s.io"));
  std::vector<std::string> columns;
  for (const auto& c : crd["spec"]["versions"][0]["additionalPrinterColumns"])
    columns.push_back(c["name"]);
  EXPECT_EQ(columns,
            (std::vector<std::string>{"TerminalState", "Restarts", "Completed",
                                      "Suspended", "Age"}));
  EXPECT_TRUE(crd["spec"]["versions"][0]["subresources"].contains("status"));
  EXPECT_FALSE(crd["spec"]["names"].contains("shortNames")); // as upstream
  EXPECT_EQ(spec["successPolicy"]["operator"], "All");
  EXPECT_EQ(spec["startupPolicy"]["startupPolicyOrder"], "AnyOrder");
  EXPECT_EQ(spec["network"]["enableDNSHostnames"], true);
  EXPECT_EQ(spec["network"]["publishNotReadyAddresses"], true);
  for (const auto& r : spec["replicatedJobs"]) {
    EXPECT_EQ(r["groupName"], "default");
    EXPECT_EQ(r["template"]["spec"]["completionMode"], "Indexed");
    EXPECT_EQ(r["template"]["spec"]["template"]["spec"]["restartPolicy"],
              "OnFailure");
    // The pod template is kept whole.
    EXPECT_EQ(r["template"]["spec"]["template"]["spec"]["containers"][0].dump(),
              R"({"image":"test:1","name":"main"})");
  }
}

TEST_F(jobs_test, a_jobset_name_too_long_for_its_children_is_refused) {
  install_crd();
  auto res
      = call(verb::create, jobsets_ref(), make_jobset(std::string(55, 'a')));
  ASSERT_FALSE(res);
  const auto* st = k8s::status_of(res.error());
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->code, 422);
  // The webhook's texts; CEL names the list, not the item the webhook names
  // (spec.replicatedJobs[0].name with the generated name as the value).
  auto name = std::string(55, 'a');
  EXPECT_EQ(st->message,
            "JobSet.jobset.x-k8s.io \"" + name
                + "\" is invalid: [spec.replicatedJobs: Invalid value: "
                  "\"object\": JobSet name is too long, job names generated "
                  "for this JobSet will exceed 63 characters, "
                  "spec.replicatedJobs: Invalid value: \"object\": JobSet "
                  "name is too long, pod names generated for this JobSet "
                  "will exceed 63 characters]");
  // Job names fit (54 + "-w-0"), pod names do not (+ "-0-abcde").
  auto pods_too_long = make_jobset(std::string(54, 'b'));
  pods_too_long["spec"]["replicatedJobs"] = json::array({rjob("w", 1, 2)});
  res = call(verb::create, jobsets_ref(), pods_too_long);
  ASSERT_FALSE(res);
  st = k8s::status_of(res.error());
  ASSERT_NE(st, nullptr);
  EXPECT_NE(st->message.find("JobSet name is too long, pod names generated "
                             "for this JobSet will exceed 63 characters"),
            std::string::npos)
      << st->message;
  // The webhook's other create checks.
  auto first_depends = make_jobset("deps");
  first_depends["spec"]["replicatedJobs"][0]["dependsOn"]
      = json::array({{{"name", "workers"}, {"status", "Ready"}}});
  res = call(verb::create, jobsets_ref(), first_depends);
  ASSERT_FALSE(res);
  EXPECT_NE(
      k8s::status_of(res.error())
          ->message.find("DependsOn can't be set for the first ReplicatedJob"),
      std::string::npos)
      << k8s::status_of(res.error())->message;
  res = call(verb::create, jobsets_ref(),
             make_jobset("targets",
                         {{"successPolicy",
                           {{"operator", "All"},
                            {"targetReplicatedJobs", {"leader", "nobody"}}}}}));
  ASSERT_FALSE(res);
  EXPECT_NE(k8s::status_of(res.error())
                ->message.find("invalid replicatedJob name 'nobody' does not "
                               "appear in .spec.ReplicatedJobs"),
            std::string::npos)
      << k8s::status_of(res.error())->message;
  // Three characters less fit: 51 + "-w-0-1-abcde" is 63.
  auto fits = make_jobset(std::string(51, 'c'));
  fits["spec"]["replicatedJobs"] = json::array({rjob("w", 1, 2)});
  EXPECT_TRUE(call(verb::create, jobsets_ref(), fits));
}

struct jobset_test : jobs_test {
  jobset_test() {
    install_crd();
    start_job_controller();
    start_jobset_controller();
    start_gc();
  }

  json jobset(const std::string& name) { return get(jobsets_ref(name)); }

  void succeed_all(const std::string& job) {
    for (const auto& p : pods_of(job))
      set_pod(p, "Succeeded");
  }
};

TEST_F(jobset_test, child_jobs_service_and_pods_carry_jobsets_names) {
  auto js = create(jobsets_ref(), make_jobset("train"));
  auto uid = js["metadata"]["uid"].get<std::string>();
  EXPECT_EQ(names(items(jobs_ref())),
            (std::vector<std::string>{"train-leader-0", "train-workers-0",
                                      "train-workers-1"}));
  auto job = get(jobs_ref("train-workers-1"));
  json expected = {{"jobset.sigs.k8s.io/jobset-name", "train"},
                   {"jobset.sigs.k8s.io/jobset-uid", uid},
                   {"jobset.sigs.k8s.io/replicatedjob-name", "workers"},
                   {"jobset.sigs.k8s.io/restart-attempt", "0"},
                   {"jobset.sigs.k8s.io/replicatedjob-replicas", "2"},
                   {"jobset.sigs.k8s.io/global-replicas", "3"},
                   {"jobset.sigs.k8s.io/job-index", "1"},
                   {"jobset.sigs.k8s.io/job-key",
                    "f7cd59a344a70b9510e91bf1b6f8a70533d949ef"},
                   {"jobset.sigs.k8s.io/job-global-index", "2"},
                   {"jobset.sigs.k8s.io/group-name", "default"},
                   {"jobset.sigs.k8s.io/group-replicas", "3"},
                   // within group "default", after the leader's one Job
                   {"jobset.sigs.k8s.io/job-group-index", "2"}};
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    EXPECT_EQ(job["metadata"]["labels"][it.key()], it.value()) << it.key();
    EXPECT_EQ(job["metadata"]["annotations"][it.key()], it.value()) << it.key();
    EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"][it.key()],
              it.value())
        << it.key();
    EXPECT_EQ(job["spec"]["template"]["metadata"]["annotations"][it.key()],
              it.value())
        << it.key();
  }
  EXPECT_EQ(get(jobs_ref("train-leader-0"))["metadata"]["labels"]
                                           ["jobset.sigs.k8s.io/job-key"],
            "411a33a42acc21c8fd77535a069d272c8a0c9786");
  const auto& owner = job["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "JobSet");
  EXPECT_EQ(owner["apiVersion"], "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(owner["uid"], uid);
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["suspend"], false);
  EXPECT_EQ(job["spec"]["template"]["spec"]["subdomain"], "train");

  auto svc = get(services_ref("train"));
  ASSERT_FALSE(svc.is_null());
  EXPECT_EQ(svc["spec"]["clusterIP"], "None");
  EXPECT_EQ(svc["spec"]["selector"],
            (json{{"jobset.sigs.k8s.io/jobset-name", "train"}}));
  EXPECT_EQ(svc["spec"]["publishNotReadyAddresses"], true);
  EXPECT_EQ(svc["metadata"]["ownerReferences"][0]["uid"], uid);

  auto pods = pods_of("train-workers-1");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[1]["spec"]["hostname"], "train-workers-1-1");
  EXPECT_EQ(pods[1]["spec"]["subdomain"], "train");
  EXPECT_EQ(pods[1]["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-name"],
            "train");
  EXPECT_EQ(pods[1]["spec"]["restartPolicy"], "OnFailure");

  js = jobset("train");
  json rjs = js["status"]["replicatedJobsStatus"];
  ASSERT_EQ(rjs.size(), 2u);
  // The store answers members sorted: compare as unordered JSON.
  EXPECT_EQ(nlohmann::json::parse(rjs[0].dump()),
            (nlohmann::json{{"name", "leader"},
                            {"ready", 0},
                            {"succeeded", 0},
                            {"failed", 0},
                            {"active", 1},
                            {"suspended", 0}}));
  EXPECT_EQ(rjs[1]["active"], 2);
  EXPECT_EQ(js["status"]["restarts"], 0);
}

TEST_F(jobset_test, all_jobs_succeeding_completes_the_jobset) {
  create(jobsets_ref(), make_jobset("train"));
  succeed_all("train-leader-0");
  succeed_all("train-workers-0");
  auto js = jobset("train");
  EXPECT_FALSE(cond_true(js, "Completed"));
  EXPECT_EQ(js["status"]["replicatedJobsStatus"][1]["succeeded"], 1);
  succeed_all("train-workers-1");
  js = jobset("train");
  ASSERT_TRUE(cond_true(js, "Completed")) << js["status"].dump();
  EXPECT_EQ((*cond(js, "Completed"))["reason"], "AllJobsCompleted");
  EXPECT_EQ((*cond(js, "Completed"))["message"],
            "jobset completed successfully");
  EXPECT_EQ(js["status"]["terminalState"], "Completed");
  EXPECT_EQ(js["status"]["replicatedJobsStatus"][1]["succeeded"], 2);
  EXPECT_TRUE(
      has_event("train", "AllJobsCompleted", "jobset completed successfully"));
}

TEST_F(jobset_test, success_of_the_target_deletes_the_active_jobs) {
  create(jobsets_ref(),
         make_jobset("train", {{"successPolicy",
                                {{"operator", "Any"},
                                 {"targetReplicatedJobs", {"leader"}}}}}));
  ASSERT_EQ(pods_of("train-workers-0").size(), 2u);
  succeed_all("train-leader-0");
  auto js = jobset("train");
  ASSERT_TRUE(cond_true(js, "Completed")) << js["status"].dump();
  // The workers' Jobs were active: deleted, with their pods.
  EXPECT_EQ(names(items(jobs_ref())),
            (std::vector<std::string>{"train-leader-0"}));
  EXPECT_TRUE(pods_of("train-workers-0").empty());
  EXPECT_TRUE(pods_of("train-workers-1").empty());
}

TEST_F(jobset_test, a_failed_child_job_fails_the_jobset) {
  auto spec = make_jobset("train");
  spec["spec"]["replicatedJobs"][1] = rjob("workers", 2, 2, 0);
  create(jobsets_ref(), spec);
  auto pods = pods_of("train-workers-0");
  ASSERT_EQ(pods.size(), 2u);
  set_pod(pods[0], "Failed", 0, 3);
  ASSERT_TRUE(cond_true(get(jobs_ref("train-workers-0")), "Failed"));
  auto js = jobset("train");
  ASSERT_TRUE(cond_true(js, "Failed")) << js["status"].dump();
  EXPECT_EQ((*cond(js, "Failed"))["reason"], "FailedJobs");
  EXPECT_EQ((*cond(js, "Failed"))["message"],
            "jobset failed due to one or more job failures (first failed "
            "job: train-workers-0)");
  EXPECT_EQ(js["status"]["terminalState"], "Failed");
  // Every active child Job went; the failed one stays for inspection.
  EXPECT_EQ(names(items(jobs_ref())),
            (std::vector<std::string>{"train-workers-0"}));
  EXPECT_TRUE(pods_of("train-leader-0").empty());
}

TEST_F(jobset_test, a_failure_policy_restarts_then_gives_up) {
  auto spec = make_jobset("train", {{"failurePolicy", {{"maxRestarts", 1}}}});
  spec["spec"]["replicatedJobs"] = json::array({rjob("w", 1, 1, 0)});
  create(jobsets_ref(), spec);
  auto pods = pods_of("train-w-0");
  ASSERT_EQ(pods.size(), 1u);
  auto first_uid = get(jobs_ref("train-w-0"))["metadata"]["uid"];
  set_pod(pods[0], "Failed", 0, 1);
  auto js = jobset("train");
  EXPECT_EQ(js["status"]["restarts"], 1);
  EXPECT_FALSE(cond_true(js, "Failed"));
  ASSERT_TRUE(cond_true(js, "RestartingJobSet")) << js["status"].dump();
  EXPECT_EQ((*cond(js, "RestartingJobSet"))["reason"], "DefaultFailurePolicy");
  // Recreate: the Job of attempt 0 went, one of attempt 1 took its place.
  auto job = get(jobs_ref("train-w-0"));
  ASSERT_FALSE(job.is_null());
  EXPECT_NE(job["metadata"]["uid"], first_uid);
  EXPECT_EQ(job["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"],
            "1");
  pods = pods_of("train-w-0");
  ASSERT_EQ(pods.size(), 1u);
  set_pod(pods[0], "Failed", 0, 1);
  js = jobset("train");
  ASSERT_TRUE(cond_true(js, "Failed")) << js["status"].dump();
  EXPECT_EQ((*cond(js, "Failed"))["reason"], "ReachedMaxRestarts");
  EXPECT_EQ((*cond(js, "Failed"))["message"],
            "jobset failed due to reaching max number of restarts (first "
            "failed job: train-w-0)");
}

TEST_F(jobset_test, suspend_and_resume) {
  create(jobsets_ref(), make_jobset("train", {{"suspend", true}}));
  auto jobs = items(jobs_ref());
  ASSERT_EQ(jobs.size(), 3u);
  for (const auto& j : jobs)
    EXPECT_EQ(j["spec"]["suspend"], true) << j["metadata"]["name"];
  EXPECT_TRUE(items(pods_ref()).empty());
  auto js = jobset("train");
  ASSERT_TRUE(cond_true(js, "Suspended")) << js["status"].dump();
  EXPECT_EQ((*cond(js, "Suspended"))["reason"], "SuspendedJobs");
  EXPECT_EQ(js["status"]["replicatedJobsStatus"][1]["suspended"], 2);

  // Resume; a label added to the template while suspended reaches the Job.
  auto patched = jobset("train");
  patched["spec"]["suspend"] = false;
  patched["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]
         ["metadata"]["labels"]["queue"]
      = "fast";
  auto res = call(verb::update, jobsets_ref("train"), patched);
  ASSERT_TRUE(res) << error_message(res.error());
  drain();
  for (const auto& j : items(jobs_ref()))
    EXPECT_EQ(j["spec"]["suspend"], false) << j["metadata"]["name"];
  EXPECT_EQ(get(jobs_ref("train-workers-0"))["spec"]["template"]["metadata"]
                                            ["labels"]["queue"],
            "fast");
  EXPECT_EQ(items(pods_ref()).size(), 5u);
  js = jobset("train");
  ASSERT_NE(cond(js, "Suspended"), nullptr);
  EXPECT_EQ((*cond(js, "Suspended"))["status"], "False");
  EXPECT_EQ((*cond(js, "Suspended"))["reason"], "ResumeJobs");

  // A running JobSet's replicatedJobs are immutable.
  auto running = jobset("train");
  running["spec"]["replicatedJobs"][1]["replicas"] = 3;
  auto refused = call(verb::update, jobsets_ref("train"), running);
  ASSERT_FALSE(refused);
  const auto* st = k8s::status_of(refused.error());
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->code, 422);
  EXPECT_NE(st->message.find("spec.replicatedJobs: Invalid value: "
                             "\"object\": field is immutable"),
            std::string::npos)
      << st->message;

  // Suspending a running JobSet suspends its Jobs, which drop their pods.
  merge(jobsets_ref("train"), json{{"spec", {{"suspend", true}}}});
  for (const auto& j : items(jobs_ref()))
    EXPECT_EQ(j["spec"]["suspend"], true) << j["metadata"]["name"];
  EXPECT_TRUE(items(pods_ref()).empty());
  EXPECT_TRUE(cond_true(jobset("train"), "Suspended"));
}

TEST_F(jobset_test, ttl_seconds_after_finished_deletes_the_jobset) {
  auto spec = make_jobset("train", {{"ttlSecondsAfterFinished", 30}});
  spec["spec"]["replicatedJobs"] = json::array({rjob("w", 1, 1)});
  create(jobsets_ref(), spec);
  succeed_all("train-w-0");
  ASSERT_TRUE(cond_true(jobset("train"), "Completed"));
  advance_time(std::chrono::seconds{29});
  EXPECT_TRUE(exists(jobsets_ref("train")));
  advance_time(std::chrono::seconds{2});
  EXPECT_FALSE(exists(jobsets_ref("train")));
  // Foreground: its Jobs, pods and Service went before it.
  EXPECT_TRUE(items(jobs_ref()).empty());
  EXPECT_FALSE(exists(services_ref("train")));
}

TEST_F(jobset_test, depends_on_waits_for_the_previous_replicated_job) {
  auto spec = make_jobset("train");
  spec["spec"]["replicatedJobs"][1]["dependsOn"]
      = json::array({{{"name", "leader"}, {"status", "Complete"}}});
  create(jobsets_ref(), spec);
  EXPECT_EQ(names(items(jobs_ref())),
            (std::vector<std::string>{"train-leader-0"}));
  succeed_all("train-leader-0");
  EXPECT_EQ(names(items(jobs_ref())),
            (std::vector<std::string>{"train-leader-0", "train-workers-0",
                                      "train-workers-1"}));
}

TEST_F(jobset_test, in_order_startup_makes_one_replicated_job_at_a_time) {
  create(jobsets_ref(),
         make_jobset("train",
                     {{"startupPolicy", {{"startupPolicyOrder", "InOrder"}}}}));
  EXPECT_EQ(names(items(jobs_ref())),
            (std::vector<std::string>{"train-leader-0"}));
  ASSERT_TRUE(cond_true(jobset("train"), "StartupPolicyInProgress"));
  // The leader's pod is Ready: its Job is ready, the workers come.
  auto pods = pods_of("train-leader-0");
  ASSERT_EQ(pods.size(), 1u);
  set_pod(pods[0], "Running");
  merge(pods_ref(pods[0]["metadata"]["name"], "status"),
        json{{"status",
              {{"conditions",
                json::array({{{"type", "Ready"}, {"status", "True"}}})}}}});
  EXPECT_EQ(names(items(jobs_ref())),
            (std::vector<std::string>{"train-leader-0", "train-workers-0",
                                      "train-workers-1"}));
  EXPECT_FALSE(cond_true(jobset("train"), "StartupPolicyCompleted"));
  for (const char* job : {"train-workers-0", "train-workers-1"})
    for (const auto& p : pods_of(job))
      set_pod(p, "Succeeded");
  auto js = jobset("train");
  ASSERT_TRUE(cond_true(js, "StartupPolicyCompleted")) << js["status"].dump();
  EXPECT_EQ((*cond(js, "StartupPolicyInProgress"))["status"], "False");
}

TEST_F(jobset_test, a_foreign_job_in_the_way_is_an_event) {
  create(jobs_ref(), make_job("train-leader-0", json::object()));
  create(jobsets_ref(), make_jobset("train"));
  EXPECT_TRUE(has_event("train", "JobCreationFailed",
                        "job \"train-leader-0\" creation failed with error: "
                        "jobs.batch \"train-leader-0\" already exists"));
  // The others were made; the foreign Job is left alone.
  EXPECT_TRUE(exists(jobs_ref("train-workers-1")));
  EXPECT_FALSE(
      get(jobs_ref("train-leader-0"))["metadata"].contains("ownerReferences"));
}

} // namespace
} // namespace aiperf::k8s::sim
