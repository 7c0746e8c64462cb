// The pod watch over the simulator's store: the same list + watch the
// product client serves, on simulated time.
#include "actors/benchmark/pod_watch/pod_watch.hpp"
#include "k8s/api/json.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"
#include "tests/support/skip.hpp"

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

namespace aiperf::pod_watch {
namespace {

using k8s::json;
using namespace std::chrono_literals;

using reports = std::vector<pod_report>;

caf::behavior report_sink(std::shared_ptr<reports> out) {
  return {[out](pod_report_atom, pod_report& r) { out->push_back(std::move(r)); }};
}

json pod_json(const std::string& name, const std::string& job, const std::string& rjob,
              int index) {
  return json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", name},
                {"labels",
                 {{"jobset.sigs.k8s.io/jobset-name", "aiperf-" + job},
                  {"jobset.sigs.k8s.io/replicatedjob-name", rjob},
                  {"jobset.sigs.k8s.io/job-index", std::to_string(index)}}}}},
              {"spec", {{"containers", json::array({{{"name", "worker"}, {"image", "aiperf"}}})}}}};
}

json status_json(bool ready, int restarts, const std::string& phase = "Running") {
  return json{{"phase", phase},
              {"conditions",
               json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})},
              {"containerStatuses",
               json::array({{{"name", "worker"}, {"restartCount", restarts}}})}};
}

class pod_watch_test : public caf_gtest::fixture<> {
protected:
  void SetUp() override {
    k8s::sim::store_config cfg;
    cfg.start_unix_seconds = 1'800'000'000;
    auto s = k8s::sim::spawn_store(sys, cfg);
    ASSERT_TRUE(s) << error_message(s.error());
    store = *s;
    drain();
  }

  void start_watch() {
    watch_config cfg;
    cfg.api = store;
    cfg.namespace_name = "default";
    cfg.job_id = "bench";
    cfg.sink = sys.spawn(report_sink, seen);
    cfg.seed = 3;
    watch = spawn_pod_watch(sys, cfg);
    drain();
  }

  k8s::resource_ref pods(const std::string& name = "", const std::string& sub = "") {
    return k8s::resource_ref{"", "v1", "pods", "default", name, sub};
  }

  void create(const json& pod) {
    k8s::request r;
    r.verb = k8s::verb::create;
    r.ref = pods();
    r.body = pod.dump();
    auto out = request<k8s::response>(store, std::move(r));
    ASSERT_TRUE(out) << error_message(out.error());
    drain();
  }

  void set_status(const std::string& name, const json& status) {
    k8s::request get;
    get.verb = k8s::verb::get;
    get.ref = pods(name);
    auto cur = request<k8s::response>(store, std::move(get));
    ASSERT_TRUE(cur) << error_message(cur.error());
    auto obj = json::parse(cur->body);
    obj["status"] = status;
    k8s::request r;
    r.verb = k8s::verb::update;
    r.ref = pods(name, "status");
    r.body = obj.dump();
    auto out = request<k8s::response>(store, std::move(r));
    ASSERT_TRUE(out) << error_message(out.error());
    drain();
  }

  void remove(const std::string& name) {
    k8s::request r;
    r.verb = k8s::verb::remove;
    r.ref = pods(name);
    r.body = json{{"gracePeriodSeconds", 0}}.dump();
    auto out = request<k8s::response>(store, std::move(r));
    ASSERT_TRUE(out) << error_message(out.error());
    drain();
  }

  std::shared_ptr<reports> seen = std::make_shared<reports>();
  k8s::sim::store_actor store;
  caf::actor watch;
};

TEST(pod_watch_view, reads_index_readiness_and_restarts) {
  auto pod = pod_json("aiperf-bench-workers-0-2-x", "bench", "workers", 2);
  pod["metadata"]["uid"] = "u1";
  pod["status"] = status_json(true, 3);
  auto v = view_of(pod.dump());
  ASSERT_TRUE(v);
  EXPECT_EQ(v->index, 2u);
  EXPECT_TRUE(v->ready);
  EXPECT_EQ(v->restarts, 3);
  EXPECT_FALSE(v->deleting);
  pod["status"] = status_json(true, 0, "Pending");
  EXPECT_FALSE(view_of(pod.dump())->ready) << "Ready means phase Running too";
  pod["status"] = status_json(false, 0, "Failed");
  EXPECT_TRUE(view_of(pod.dump())->failed);
}

TEST(pod_watch_view, ignores_the_controller_pod_and_pods_without_an_index) {
  EXPECT_FALSE(view_of(pod_json("c", "bench", "controller", 0).dump()));
  auto pod = pod_json("w", "bench", "workers", 0);
  pod["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"] = "x1";
  EXPECT_FALSE(view_of(pod.dump()));
  EXPECT_FALSE(view_of("not json"));
  EXPECT_EQ(selector_of("bench"), "jobset.sigs.k8s.io/jobset-name=aiperf-bench");
}

TEST_F(pod_watch_test, reports_ready_only_for_its_own_worker_pods) {
  create(pod_json("w0", "bench", "workers", 0));
  create(pod_json("c0", "bench", "controller", 0));
  create(pod_json("other", "other-run", "workers", 1));
  start_watch();
  ASSERT_EQ(seen->size(), 1u);
  EXPECT_EQ((*seen)[0], (pod_report{"pod0", "w0", false, false, ""}));
  set_status("w0", status_json(true, 0));
  ASSERT_EQ(seen->size(), 2u);
  EXPECT_EQ((*seen)[1], (pod_report{"pod0", "w0", true, false, ""}));
  // A status write that changes nothing we judge says nothing.
  set_status("w0", status_json(true, 0));
  EXPECT_EQ(seen->size(), 2u);
}

TEST_F(pod_watch_test, reports_a_deleted_pod_once) {
  create(pod_json("w0", "bench", "workers", 0));
  start_watch();
  set_status("w0", status_json(true, 0));
  seen->clear();
  remove("w0");
  advance_time(1s);
  ASSERT_EQ(seen->size(), 1u) << "one report, whether the delete shows as a "
                                 "deletionTimestamp first or at once";
  EXPECT_EQ((*seen)[0], (pod_report{"pod0", "w0", false, true, "deleted"}));
}

TEST_F(pod_watch_test, reports_every_container_restart) {
  create(pod_json("w1", "bench", "workers", 1));
  start_watch();
  set_status("w1", status_json(true, 0));
  seen->clear();
  set_status("w1", status_json(false, 1));
  set_status("w1", status_json(true, 1));
  set_status("w1", status_json(true, 2));
  std::vector<std::string> reasons;
  for (auto& r : *seen)
    reasons.push_back(r.gone ? r.reason : r.ready ? "ready" : "not ready");
  EXPECT_EQ(reasons, (std::vector<std::string>{"container restarted (restart count 1)",
                                               "not ready", "ready",
                                               "container restarted (restart count 2)"}));
}

TEST_F(pod_watch_test, reports_a_failed_pod) {
  create(pod_json("w0", "bench", "workers", 0));
  start_watch();
  seen->clear();
  set_status("w0", status_json(false, 0, "Failed"));
  ASSERT_EQ(seen->size(), 1u);
  EXPECT_EQ((*seen)[0], (pod_report{"pod0", "w0", false, true, "failed"}));
}

/// Sets variables for one test and restores them after.
class scoped_env {
public:
  explicit scoped_env(std::vector<std::pair<std::string, std::string>> vars) {
    for (auto& [k, v] : vars) {
      const char* old = std::getenv(k.c_str());
      saved_.emplace_back(k, old ? std::optional<std::string>{old} : std::nullopt);
      ::setenv(k.c_str(), v.c_str(), 1);
    }
  }
  ~scoped_env() {
    for (auto& [k, v] : saved_)
      v ? (void) ::setenv(k.c_str(), v->c_str(), 1) : (void) ::unsetenv(k.c_str());
  }

private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST_F(pod_watch_test, outside_a_cluster_there_is_no_watch) {
  scoped_env env{{{"KUBERNETES_SERVICE_HOST", ""}, {"AIPERF_JOB_ID", "bench"},
                  {"AIPERF_NAMESPACE", "default"}}};
  auto w = in_cluster_watch(sys);
  ASSERT_TRUE(w) << error_message(w.error());
  EXPECT_FALSE(*w);
}

TEST_F(pod_watch_test, a_pod_without_its_run_variables_has_no_watch) {
  scoped_env env{{{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"AIPERF_JOB_ID", ""}}};
  auto w = in_cluster_watch(sys);
  ASSERT_TRUE(w) << error_message(w.error());
  EXPECT_FALSE(*w);
}

TEST_F(pod_watch_test, a_pod_without_its_service_account_fails_closed) {
  if (std::filesystem::exists("/var/run/secrets/kubernetes.io/serviceaccount/token"))
    AIPERF_SKIP_OR_FAIL("this machine is a pod with a service account",
                        "run the test outside a Kubernetes pod");
  scoped_env env{{{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"},
                  {"AIPERF_JOB_ID", "bench"}, {"AIPERF_NAMESPACE", "default"}}};
  auto w = in_cluster_watch(sys);
  ASSERT_FALSE(w);
  EXPECT_NE(error_message(w.error()).find("in-cluster Kubernetes configuration"),
            std::string::npos)
    << error_message(w.error());
}

} // namespace
} // namespace aiperf::pod_watch
