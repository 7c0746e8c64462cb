// The controller pod's status pushes into its AIPerfJob: the pure builders
// (subPhase mapping, fences, non-finite numbers), and the pusher on
// simulated time over the simulator's store: one push per heartbeat with
// nothing changing, none into a terminal or replaced AIPerfJob, and the
// final push with the benchmark-complete annotation.
#include "actors/benchmark/status_push/status_push.hpp"
#include "config/benchmark/document.hpp"
#include "k8s/crds/crds.hpp"
#include "k8s/sim/jobs/jobs.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace aiperf::status_push {
namespace {

using namespace std::chrono_literals;
using k8s::patch_type;
using k8s::resource_ref;
using k8s::response;
using k8s::verb;

TEST(status_push, every_controller_state_has_its_sub_phase) {
  progress p;
  EXPECT_EQ(sub_phase_of(p), "initializing");
  p.state = "configuring";
  EXPECT_EQ(sub_phase_of(p), "configuring");
  p.state = "running";
  p.phase = "warmup";
  p.total = 10;
  p.completed = 10;
  EXPECT_EQ(sub_phase_of(p), "profiling"); // warmup's credits do not end the run
  p.phase = "profiling";
  p.completed = 9;
  p.in_flight = 1;
  EXPECT_EQ(sub_phase_of(p), "profiling");
  p.completed = 10;
  p.in_flight = 0;
  EXPECT_EQ(sub_phase_of(p), "processing"); // the last credit is back
  p.state = "exporting";
  EXPECT_EQ(sub_phase_of(p), "processing");
  for (const char* end : {"complete", "cancelled", "failed"}) {
    p.state = end;
    EXPECT_EQ(sub_phase_of(p), "stopping") << end;
  }
}

TEST(status_push, fields_carry_the_phase_and_no_non_finite_number) {
  progress p;
  p.state = "running";
  p.sent = 7;
  p.completed = 5;
  p.in_flight = 2;
  p.total = 10;
  p.errors = 1;
  p.requests_per_second = std::numeric_limits<double>::quiet_NaN();
  auto s = status_fields(p, nullptr);
  EXPECT_EQ(s["currentPhase"], "profiling");
  ASSERT_TRUE(s["phases"].contains("profiling"));
  EXPECT_EQ(s["phases"]["profiling"]["phaseKind"], "profiling");
  EXPECT_EQ(s["phases"]["profiling"]["requestsCompleted"], 5);
  EXPECT_EQ(s["phases"]["profiling"]["requestsProgressPercent"], 50.0);
  EXPECT_EQ(s["requestsPerSecond"], 0.0);
  EXPECT_EQ(s["requestsTotal"], 10);
  EXPECT_FALSE(s.contains("resultsExported"));
  final_report f;
  f.exit_code = 5;
  f.exit_reason = "1 of 2 worker pods were lost (pod1)";
  f.results_exported = true;
  auto end = status_fields(p, &f);
  EXPECT_EQ(end["resultsExported"], true);
  EXPECT_EQ(end["exitCode"], 5);
  EXPECT_FALSE(end.contains("controllerFailure"));
  // Before the load starts there is no phase to point at.
  progress early;
  early.state = "configuring";
  EXPECT_FALSE(status_fields(early, nullptr).contains("currentPhase"));
}

TEST(status_push, worker_counts_come_from_the_registration_state) {
  // Three pods of 2 workers and 1 record processor: pod0 registered whole,
  // pod1 only its group and one worker, pod2 nothing yet.
  api_service::pods_status st;
  st.registration = "waiting";
  st.pods_expected = 3;
  st.missing = {"pod1/worker_1", "pod1/record_processor_0", "pod2", "pod2/worker_0",
                "pod2/worker_1", "pod2/record_processor_0"};
  for (const char* name : {"pod0", "pod1", "pod2"}) {
    api_service::pod_status pod;
    pod.name = name;
    st.pods.push_back(pod);
  }
  st.pods[0].registered = true;
  auto w = worker_counts_of(st, 2, 1);
  EXPECT_EQ(w.total, 6u);
  EXPECT_EQ(w.declared_record_processors, 3u);
  EXPECT_EQ(w.router_connected, 3u);
  EXPECT_EQ(w.ready, 3u);
  EXPECT_EQ(w.dispatchable, 0u) << "no credit goes out before the start gate";
  EXPECT_EQ(w.ready_record_processors, 1u);
  EXPECT_EQ(w.ready_pods, 1u);
  EXPECT_EQ(w.total_pods, 2u);
  EXPECT_EQ(w.degraded_pods, 0u);
  // Everything registered, then pod1 is lost.
  st.missing.clear();
  st.registration = "complete";
  st.pods[1].lost = true;
  w = worker_counts_of(st, 2, 1);
  EXPECT_EQ(w.ready, 4u);
  EXPECT_EQ(w.dispatchable, 4u);
  EXPECT_EQ(w.ready_pods, 2u);
  EXPECT_EQ(w.total_pods, 3u);
  EXPECT_EQ(w.degraded_pods, 1u);
  EXPECT_EQ(w.ready_record_processors, 2u);
}

TEST(status_push, workers_are_withheld_until_a_pod_registered_then_all_nine_keys) {
  progress p;
  p.state = "configuring";
  worker_counts none;
  none.total = 6;
  EXPECT_FALSE(status_fields(p, nullptr, &none).contains("workers"));
  worker_counts some = none;
  some.total_pods = 1;
  some.ready = 2;
  auto s = status_fields(p, nullptr, &some);
  ASSERT_TRUE(s.contains("workers"));
  std::vector<std::string> keys;
  for (const auto& [k, v] : s["workers"].items())
    keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"ready", "total", "dispatchable", "routerConnected",
                                            "readyRecordProcessors", "declaredRecordProcessors",
                                            "readyPods", "totalPods", "degradedPods"}));
  EXPECT_EQ(s["workers"]["ready"], 2);
  EXPECT_EQ(s["workers"]["totalPods"], 1);
  // The CRD declares exactly these nine.
  auto crd = k8s::crds::aiperfjob_crd();
  const auto& declared = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
                            ["status"]["properties"]["workers"];
  std::vector<std::string> crd_keys;
  for (const auto& [k, v] : declared["properties"].items())
    crd_keys.push_back(k);
  EXPECT_EQ(crd_keys, keys);
  EXPECT_FALSE(declared.contains("x-kubernetes-preserve-unknown-fields"));
}

TEST(status_push, progress_annotations_carry_aiperfs_keys) {
  progress p;
  p.state = "configuring";
  auto early = progress_annotations(p);
  EXPECT_EQ(early["aiperf.nvidia.com/progress-phase"], "configuring");
  EXPECT_EQ(early["aiperf.nvidia.com/system-state"], "configuring");
  p.state = "running";
  p.completed = 40;
  p.total = 160;
  auto a = progress_annotations(p);
  EXPECT_EQ(a, (json{{"aiperf.nvidia.com/progress-phase", "profiling"},
                     {"aiperf.nvidia.com/progress-percent", "25.0"},
                     {"aiperf.nvidia.com/progress-requests", "40/160"},
                     {"aiperf.nvidia.com/progress-status", "running"},
                     {"aiperf.nvidia.com/system-state", "profiling"}}));
  p.total = 0; // duration-bounded
  EXPECT_EQ(progress_annotations(p)["aiperf.nvidia.com/progress-requests"], "40");
  // The JobSet patch: its owner's UID, or the job-id label without one.
  auto fenced = jobset_annotation_patch("u1", "j1", a);
  EXPECT_EQ(fenced[0], (json{{"op", "test"}, {"path", "/metadata/ownerReferences/0/uid"},
                             {"value", "u1"}}));
  EXPECT_EQ(fenced.size(), 6u);
  EXPECT_EQ(fenced[1]["path"], "/metadata/annotations/aiperf.nvidia.com~1progress-phase");
  auto direct = jobset_annotation_patch("", "j1", a);
  EXPECT_EQ(direct[0]["path"], "/metadata/labels/aiperf.nvidia.com~1job-id");
}

TEST(status_push, requests_are_fenced_and_skipped_as_the_cr_requires) {
  json fields = {{"subPhase", "profiling"}};
  // Not seen yet, or no phase: the merge patch.
  auto first = status_request(nullptr, "u1", fields);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->type, patch_type::merge);
  EXPECT_EQ(first->body, (json{{"status", fields}}));
  json fresh = {{"metadata", {{"uid", "u1"}, {"resourceVersion", "7"}}}};
  EXPECT_EQ(status_request(&fresh, "u1", fields)->body,
            (json{{"metadata", {{"resourceVersion", "7"}}}, {"status", fields}}));
  json cr = {{"metadata", {{"uid", "u1"}}}, {"status", {{"phase", "Running"}}}};
  auto next = status_request(&cr, "u1", fields);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->type, patch_type::json);
  EXPECT_EQ(next->body[0], (json{{"op", "test"}, {"path", "/metadata/uid"}, {"value", "u1"}}));
  EXPECT_EQ(next->body[1], (json{{"op", "test"}, {"path", "/status/phase"}, {"value", "Running"}}));
  EXPECT_EQ(next->body[2],
            (json{{"op", "add"}, {"path", "/status/subPhase"}, {"value", "profiling"}}));
  // Another incarnation, or a terminal CR: nothing.
  EXPECT_FALSE(status_request(&cr, "u0", fields));
  cr["status"]["phase"] = "Completed";
  EXPECT_FALSE(status_request(&cr, "u1", fields));
  EXPECT_EQ(annotation_patch("u1", complete_annotation, "true"),
            (json{{"metadata",
                   {{"uid", "u1"}, {"annotations", {{"aiperf.nvidia.com/benchmark-complete",
                                                     "true"}}}}}}));
}

constexpr std::int64_t start_unix = 1'795'000'000;

resource_ref jobs_ref(std::string name = {}, std::string sub = {}) {
  return {"aiperf.nvidia.com", "v1alpha1", "aiperfjobs", "default", std::move(name),
          std::move(sub)};
}

// Counts the status pushes and annotation patches that reach the store.
struct push_counts {
  int status = 0;
  int heartbeats = 0;
  int complete = 0;
  int jobset = 0;
  int aiperfjob_requests = 0; // any verb
  std::vector<std::string> refused;
};

k8s::api_actor::behavior_type counting_proxy(k8s::api_actor::pointer self, k8s::api_actor store,
                                             std::shared_ptr<push_counts> n) {
  return {
      [=](k8s::request& r) -> caf::result<response> {
        if (r.ref.resource == "aiperfjobs")
          ++n->aiperfjob_requests;
        if (r.verb == verb::patch && r.ref.resource == "jobsets")
          ++n->jobset;
        if (r.verb == verb::patch && r.ref.resource == "aiperfjobs") {
          if (r.ref.subresource == "status")
            ++n->status;
          else if (r.body.find("controller-heartbeat") != std::string::npos)
            ++n->heartbeats;
          else if (r.body.find("benchmark-complete") != std::string::npos)
            ++n->complete;
        }
        return self->delegate(store, std::move(r));
      },
      [=](k8s::watch_atom, k8s::request& r, k8s::watch_sink_actor& sink) {
        return self->delegate(store, k8s::watch_atom::value, std::move(r), std::move(sink));
      },
      [=](k8s::unwatch_atom, std::uint64_t id) { self->send(store, k8s::unwatch_atom::value, id); },
  };
}

struct pusher_test : caf_gtest::fixture<> {
  k8s::sim::store_actor store;
  std::shared_ptr<push_counts> counts = std::make_shared<push_counts>();
  k8s::api_actor api;
  std::string uid;

  pusher_test() {
    k8s::sim::store_config cfg;
    cfg.start_unix_seconds = start_unix;
    store = *k8s::sim::spawn_store(sys, cfg);
    drain();
    call(verb::create, {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""},
         k8s::crds::aiperfjob_crd());
    api = sys.spawn(counting_proxy, caf::actor_cast<k8s::api_actor>(store), counts);
    uid = create_job();
  }

  std::string create_job() {
    json job = {{"apiVersion", "aiperf.nvidia.com/v1alpha1"},
                {"kind", "AIPerfJob"},
                {"metadata", {{"name", "j1"}, {"namespace", "default"}}},
                {"spec",
                 {{"benchmark",
                   {{"models", json::array({"m"})},
                    {"endpoint", {{"urls", json::array({"http://llm:8000"})}}}}}}}};
    return call(verb::create, jobs_ref(), job)["metadata"].value("uid", std::string{});
  }

  json call(verb v, resource_ref ref, const json& body = nullptr,
            patch_type pt = patch_type::none) {
    k8s::request r;
    r.verb = v;
    r.ref = std::move(ref);
    r.patch = pt;
    if (!body.is_null())
      r.body = body.dump();
    auto res = request<response>(caf::actor_cast<k8s::api_actor>(store), r);
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    drain();
    return res ? json::parse(res->body) : json();
  }

  pusher_actor spawn(std::string job_uid) {
    pusher_config cfg;
    cfg.api = api;
    cfg.namespace_name = "default";
    cfg.job_name = "j1";
    cfg.job_uid = std::move(job_uid);
    cfg.start_unix_seconds = start_unix;
    cfg.seed = 3;
    cfg.on_refused = [c = counts](const std::string& why) { c->refused.push_back(why); };
    auto p = spawn_pusher(sys, cfg);
    drain();
    return p;
  }

  json status() {
    return call(verb::get, jobs_ref("j1")).value("status", json::object());
  }

  // The run's JobSet, owned by `owner_uid` (none: direct mode).
  void create_jobset(const std::string& owner_uid) {
    call(verb::create, {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""},
         k8s::sim::jobset_crd());
    json meta = {{"name", "aiperf-j1"},
                 {"namespace", "default"},
                 {"labels", {{"app", "aiperf"}, {"aiperf.nvidia.com/job-id", "j1"}}},
                 {"annotations", {{"aiperf.nvidia.com/model", "m"}}}};
    if (!owner_uid.empty())
      meta["ownerReferences"] = json::array({{{"apiVersion", "aiperf.nvidia.com/v1alpha1"},
                                              {"kind", "AIPerfJob"},
                                              {"name", "j1"},
                                              {"uid", owner_uid},
                                              {"controller", true}}});
    json js = {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
               {"kind", "JobSet"},
               {"metadata", meta},
               {"spec", {{"replicatedJobs", json::array()}}}};
    call(verb::create, {"jobset.x-k8s.io", "v1alpha2", "jobsets", "default", "", ""}, js);
  }

  json jobset() {
    return call(verb::get, {"jobset.x-k8s.io", "v1alpha2", "jobsets", "default", "aiperf-j1", ""});
  }
};

TEST_F(pusher_test, a_quiet_run_is_pushed_once_per_heartbeat_interval) {
  auto p = spawn(uid);
  progress running;
  running.state = "running";
  running.total = 100;
  self->send(p, progress_atom::value, running);
  drain();
  EXPECT_EQ(counts->status, 1); // the state change, at once
  // Nothing changes for 35 s of simulated time: three heartbeats.
  for (int i = 0; i < 35; ++i)
    advance_time(1s);
  EXPECT_EQ(counts->status, 4);
  EXPECT_EQ(counts->heartbeats, 4);
  EXPECT_EQ(status()["subPhase"], "profiling");
  auto annotations = call(verb::get, jobs_ref("j1"))["metadata"]["annotations"];
  EXPECT_TRUE(annotations.contains("aiperf.nvidia.com/controller-heartbeat"));
  EXPECT_TRUE(counts->refused.empty());
}

TEST_F(pusher_test, the_workers_aggregate_replaces_the_key_whole) {
  auto p = spawn(uid);
  call(verb::patch, jobs_ref("j1", "status"),
       {{"status", {{"phase", "Initializing"}, {"workers", {{"ready", 0}, {"total", 4}}}}}},
       patch_type::merge);
  worker_counts w;
  w.total = 4;
  w.ready = w.router_connected = 2;
  w.total_pods = 2;
  w.ready_pods = 1;
  self->send(p, workers_atom::value, w);
  progress running;
  running.state = "running";
  self->send(p, progress_atom::value, running);
  drain();
  auto unordered = [](const json& j) { return nlohmann::json::parse(j.dump()); };
  EXPECT_EQ(unordered(status()["workers"]), unordered(workers_json(w)));
  // The next snapshot replaces the block: nothing of the earlier one stays.
  w.ready = w.router_connected = w.dispatchable = 4;
  w.ready_pods = 2;
  self->send(p, workers_atom::value, w);
  advance_time(10s);
  EXPECT_EQ(unordered(status()["workers"]), unordered(workers_json(w)));
  EXPECT_TRUE(counts->refused.empty());
}

TEST_F(pusher_test, the_jobset_gets_the_progress_only_when_it_changes) {
  create_jobset(uid);
  auto p = spawn(uid);
  progress running;
  running.state = "running";
  running.completed = 5;
  running.total = 10;
  self->send(p, progress_atom::value, running);
  drain();
  EXPECT_EQ(counts->jobset, 1);
  auto annotations = jobset()["metadata"]["annotations"];
  EXPECT_EQ(annotations["aiperf.nvidia.com/progress-requests"], "5/10");
  EXPECT_EQ(annotations["aiperf.nvidia.com/system-state"], "profiling");
  EXPECT_EQ(annotations["aiperf.nvidia.com/model"], "m") << "the builder's annotations stay";
  // The AIPerfJob carries them beside its heartbeat.
  EXPECT_EQ(call(verb::get, jobs_ref("j1"))["metadata"]["annotations"]
                ["aiperf.nvidia.com/progress-requests"],
            "5/10");
  // A heartbeat with nothing new: no JobSet write.
  advance_time(10s);
  EXPECT_EQ(counts->jobset, 1);
  running.completed = 7;
  self->send(p, progress_atom::value, running);
  advance_time(10s);
  EXPECT_EQ(counts->jobset, 2);
  EXPECT_EQ(jobset()["metadata"]["annotations"]["aiperf.nvidia.com/progress-requests"], "7/10");
}

TEST_F(pusher_test, direct_mode_writes_only_the_jobsets_annotations) {
  create_jobset("");
  counts->aiperfjob_requests = 0;
  auto p = spawn("");
  progress running;
  running.state = "running";
  running.completed = 3;
  self->send(p, progress_atom::value, running);
  drain();
  advance_time(30s);
  EXPECT_EQ(counts->aiperfjob_requests, 0);
  EXPECT_EQ(counts->jobset, 1);
  EXPECT_EQ(jobset()["metadata"]["annotations"]["aiperf.nvidia.com/progress-phase"], "profiling");
  EXPECT_TRUE(counts->refused.empty());
}

TEST_F(pusher_test, a_jobset_of_another_job_is_not_annotated) {
  create_jobset("uid-of-an-earlier-j1");
  auto p = spawn(uid);
  progress running;
  running.state = "running";
  self->send(p, progress_atom::value, running);
  drain();
  EXPECT_FALSE(jobset()["metadata"]["annotations"].contains("aiperf.nvidia.com/progress-phase"));
  EXPECT_TRUE(counts->refused.empty()) << "the fence holding is no warning";
}

TEST_F(pusher_test, the_final_push_announces_the_results) {
  auto p = spawn(uid);
  // The operator admitted the job: from now on pushes test the phase.
  call(verb::patch, jobs_ref("j1", "status"), {{"status", {{"phase", "Running"}}}},
       patch_type::merge);
  progress done;
  done.state = "complete";
  self->send(p, progress_atom::value, done);
  drain();
  final_report f;
  f.exit_code = 0;
  f.results_exported = true;
  auto told = request<bool>(p, final_atom::value, f);
  ASSERT_TRUE(told);
  EXPECT_TRUE(*told);
  auto s = status();
  EXPECT_EQ(s["phase"], "Running"); // the operator's, never the controller's
  EXPECT_EQ(s["resultsExported"], true);
  EXPECT_EQ(s["subPhase"], "stopping");
  EXPECT_EQ(call(verb::get, jobs_ref("j1"))["metadata"]["annotations"]
                ["aiperf.nvidia.com/benchmark-complete"],
            "true");
}

TEST_F(pusher_test, nothing_is_pushed_into_a_terminal_job) {
  auto p = spawn(uid);
  call(verb::patch, jobs_ref("j1", "status"), {{"status", {{"phase", "Cancelled"}}}},
       patch_type::merge);
  counts->status = 0;
  progress running;
  running.state = "running";
  self->send(p, progress_atom::value, running);
  advance_time(11s);
  EXPECT_EQ(counts->status, 0);
  EXPECT_FALSE(status().contains("subPhase"));
}

TEST_F(pusher_test, a_stale_controller_cannot_write_into_a_recreated_job) {
  auto p = spawn(uid);
  // The AIPerfJob is deleted and created again under the same name.
  call(verb::remove, jobs_ref("j1"));
  auto new_uid = create_job();
  ASSERT_NE(new_uid, uid);
  counts->status = 0;
  final_report f;
  f.results_exported = true;
  auto told = request<bool>(p, final_atom::value, f);
  ASSERT_TRUE(told);
  EXPECT_FALSE(*told);
  EXPECT_FALSE(status().contains("resultsExported"));
  EXPECT_FALSE(call(verb::get, jobs_ref("j1"))["metadata"].contains("annotations"));
}

TEST_F(pusher_test, a_fence_refusal_is_told_apart_from_other_refusals) {
  call(verb::patch, jobs_ref("j1", "status"), {{"status", {{"phase", "Running"}}}},
       patch_type::merge);
  k8s::request r;
  r.verb = verb::patch;
  r.ref = jobs_ref("j1", "status");
  r.patch = patch_type::json;
  r.body = json::array({{{"op", "test"}, {"path", "/status/phase"}, {"value", "Pending"}}}).dump();
  auto stale = request<response>(caf::actor_cast<k8s::api_actor>(store), r);
  ASSERT_FALSE(stale);
  EXPECT_TRUE(is_fence_refusal(stale.error()));
  // A schema violation is not the fence working.
  r.patch = patch_type::merge;
  r.body = json{{"status", {{"phase", "NotAPhase"}}}}.dump();
  auto invalid = request<response>(caf::actor_cast<k8s::api_actor>(store), r);
  ASSERT_FALSE(invalid);
  EXPECT_FALSE(is_fence_refusal(invalid.error()));
}

} // namespace
} // namespace aiperf::status_push
