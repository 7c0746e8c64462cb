// The remote group's start gate and lost-pod verdicts, on simulated time.
// Its bridge is never started: every send fails at once ("not running"),
// and bridge deliveries are sent to the group as the bridge would.
#include "actors/benchmark/remote/controller.hpp"
#include "actors/benchmark/dataset/dataset.hpp"
#include "proto/records_path.hpp"
#include "proto/timing_manager.hpp"
#include "tests/support/caf_gtest.hpp"

#include <filesystem>
#include <memory>
#include <unistd.h>

namespace aiperf::remote {
namespace {

using namespace std::chrono_literals;
namespace wgm = worker_group_manager;
using zmq_bridge::channel;
using zmq_bridge::origin;

struct seen {
  bool cancelled = false;
  std::optional<api_service::pods_status> status;
  bool handles = false;
  std::optional<caf::error> failed;
};

caf::behavior fake_timing() {
  return {[](proto::lost_atom, std::uint32_t) { return proto::credit_batch{}; }};
}

caf::behavior fake_records() {
  return {
    [](proto::metric_record_batch&) {},
    [](proto::section_atom, std::string&, std::string&) {},
  };
}

caf::behavior fake_api(std::shared_ptr<seen> log) {
  return {[log](api_service::pods_atom, api_service::pods_status& s) { log->status = s; }};
}

caf::behavior fake_controller(std::shared_ptr<seen> log) {
  return {[log](proto::cancel_atom) { log->cancelled = true; }};
}

/// Asks the group for its handles, as the system_controller does before
/// PROFILE_START.
caf::behavior starter(caf::event_based_actor* self, wgm::worker_group_manager_actor group,
                      std::shared_ptr<seen> log) {
  self->request(group, caf::infinite, caf::get_atom::value)
    .then([log](wgm::group_handles&) { log->handles = true; },
          [log](caf::error& e) { log->failed = e; });
  return {};
}

enum class loss { connection_dropped, pod_deleted, heartbeat_expired };

class remote_group_test : public caf_gtest::fixture<> {
protected:
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  /// Two pods of one worker and one processor each.
  void start(double threshold_percent, bool await_ready) {
    zmq_bridge::bridge_config bcfg;
    bcfg.role = zmq_bridge::role::controller;
    remote_group_config cfg;
    cfg.bridge = std::make_shared<zmq_bridge::bridge>(bcfg);
    cfg.layout = pod_layout{2, 1, 1};
    cfg.dataset_dir = dir / "dataset";
    cfg.api = caf::actor_cast<api_service::api_service_actor>(sys.spawn(fake_api, log));
    cfg.registration_timeout = 10s;
    cfg.heartbeat_timeout = 5s;
    cfg.abort_threshold_percent = threshold_percent;
    cfg.await_pods_ready = await_ready;
    cfg.monitor = monitor;
    monitor->set_controller(sys.spawn(fake_controller, log));
    auto data = std::make_shared<dataset::dataset>();
    data->conversations.push_back({"conv-0", {dataset::turn{"hi", 1}}});
    wgm::group_config g;
    g.worker.run_id = "run";
    g.num_workers = 2;
    g.num_processors = 2;
    g.data = data;
    g.timing = caf::actor_cast<proto::timing_manager_actor>(sys.spawn(fake_timing));
    g.records = caf::actor_cast<proto::records_manager_actor>(sys.spawn(fake_records));
    group = make_remote_group_factory(cfg)(sys, g);
    raw = caf::actor_cast<caf::actor>(group);
    drain();
    sys.spawn(starter, group, log);
    drain();
  }

  void register_as(const std::string& id, const std::string& peer = "") {
    auto pod = peer.empty() ? id.substr(0, id.find('/')) : peer;
    caf::anon_send(raw, origin{channel::control, pod, id},
                   proto::register_service{id, "worker", pod, 1});
    drain();
  }

  void register_pod(std::uint32_t p) {
    register_as(group_service_id(p));
    register_as(worker_service_id(p, 0));
    register_as(processor_service_id(p, 0));
  }

  void report(std::uint32_t p, bool ready, std::string gone_reason = "") {
    pod_watch::pod_report r{pod_name(p), "aiperf-bench-workers-0-" + std::to_string(p),
                            ready, !gone_reason.empty(), gone_reason};
    caf::anon_send(raw, pod_watch::pod_report_atom::value, std::move(r));
    drain();
  }

  void heartbeat_from(std::uint32_t p) {
    caf::anon_send(raw, origin{channel::control, pod_name(p), pod_name(p)},
                   proto::heartbeat{pod_name(p), "running", 0});
    drain();
  }

  /// Registers both pods, reports them Ready and checks the gate opened.
  void start_the_run(double threshold_percent) {
    start(threshold_percent, true);
    register_pod(0);
    register_pod(1);
    report(0, true);
    report(1, true);
    ASSERT_TRUE(log->handles);
  }

  void lose_pod1(loss kind) {
    switch (kind) {
      case loss::connection_dropped:
        caf::anon_send(raw, zmq_bridge::delivery_failure{channel::control, "pod1",
                                                         proto::msg_type::heartbeat, 113,
                                                         "Host unreachable"});
        drain();
        break;
      case loss::pod_deleted:
        report(1, false, "deleted");
        break;
      case loss::heartbeat_expired:
        // pod0 keeps beating; pod1 falls silent (its network is cut).
        for (int i = 0; i < 6; ++i) {
          heartbeat_from(0);
          advance_time(1s);
        }
        break;
    }
  }

  std::filesystem::path dir = std::filesystem::temp_directory_path()
                              / ("aiperf-remote-group-test-" + std::to_string(::getpid()));
  std::shared_ptr<seen> log = std::make_shared<seen>();
  std::shared_ptr<run_monitor> monitor = std::make_shared<run_monitor>();
  wgm::worker_group_manager_actor group;
  caf::actor raw;
};

TEST_F(remote_group_test, the_start_waits_until_every_registered_pod_is_ready) {
  start(50, true);
  register_pod(0);
  report(0, true);
  EXPECT_FALSE(log->handles) << "pod1 has not registered";
  register_pod(1);
  EXPECT_FALSE(log->handles) << "pod1 registered but is not Ready";
  report(1, false);
  EXPECT_FALSE(log->handles);
  report(1, true);
  EXPECT_TRUE(log->handles);
  ASSERT_TRUE(log->status);
  EXPECT_EQ(log->status->registration, "complete");
}

TEST_F(remote_group_test, without_the_watch_registration_alone_opens_the_gate) {
  start(50, false);
  register_pod(0);
  register_pod(1);
  EXPECT_TRUE(log->handles);
}

TEST_F(remote_group_test, a_pod_never_ready_fails_the_start_naming_it) {
  start(50, true);
  register_pod(0);
  register_pod(1);
  report(0, true);
  advance_time(11s);
  ASSERT_TRUE(log->failed);
  EXPECT_NE(error_message(*log->failed).find("not Running and Ready: pod1"), std::string::npos)
    << error_message(*log->failed);
}

TEST_F(remote_group_test, a_restart_before_the_start_waits_for_the_new_process) {
  start(50, true);
  register_pod(0);
  register_pod(1);
  report(1, false, "container restarted (restart count 1)");
  // The new process registers every service again and is welcome.
  register_as(group_service_id(1));
  report(0, true);
  report(1, true);
  EXPECT_FALSE(log->handles) << "pod1's worker and processor have not registered again";
  register_as(worker_service_id(1, 0));
  register_as(processor_service_id(1, 0));
  EXPECT_TRUE(log->handles);
  EXPECT_EQ(monitor->pods_lost.load(), 0u);
  EXPECT_EQ(monitor->registrations_refused.load(), 0u);
}

struct verdict_case {
  loss kind;
  double threshold;
  bool aborts;
};

class loss_verdict : public remote_group_test,
                     public ::testing::WithParamInterface<verdict_case> {};

TEST_P(loss_verdict, one_of_two_pods_lost) {
  auto c = GetParam();
  start_the_run(c.threshold);
  lose_pod1(c.kind);
  EXPECT_EQ(monitor->pods_lost.load(), 1u);
  ASSERT_EQ(monitor->lost_pods().size(), 1u);
  EXPECT_EQ(monitor->lost_pods()[0].rfind("pod1 (", 0), 0u) << monitor->lost_pods()[0];
  EXPECT_EQ(monitor->aborted.load(), c.aborts);
  EXPECT_EQ(log->cancelled, c.aborts) << "an abort cancels through the Ctrl+C path";
}

INSTANTIATE_TEST_SUITE_P(
  kinds, loss_verdict,
  ::testing::Values(
    // 1 of 2 is 50%: within the default threshold, above 40%.
    verdict_case{loss::connection_dropped, 50, false},
    verdict_case{loss::connection_dropped, 40, true},
    verdict_case{loss::pod_deleted, 50, false}, verdict_case{loss::pod_deleted, 40, true},
    verdict_case{loss::heartbeat_expired, 50, false},
    verdict_case{loss::heartbeat_expired, 40, true}),
  [](const auto& info) {
    auto& c = info.param;
    std::string kind = c.kind == loss::connection_dropped ? "connection_dropped"
                       : c.kind == loss::pod_deleted      ? "pod_deleted"
                                                          : "heartbeat_expired";
    return kind + (c.aborts ? "_aborts" : "_degrades");
  });

TEST_F(remote_group_test, a_re_registration_mid_run_is_refused_and_loses_the_pod) {
  start_the_run(50);
  // The container restarted in place and its new process registers.
  register_as(group_service_id(1));
  EXPECT_EQ(monitor->registrations_refused.load(), 1u);
  EXPECT_EQ(monitor->pods_lost.load(), 1u);
  ASSERT_EQ(monitor->lost_pods().size(), 1u);
  EXPECT_NE(monitor->lost_pods()[0].find("registered again"), std::string::npos);
  // Its other services are refused too; the pod stays lost once.
  register_as(worker_service_id(1, 0));
  EXPECT_EQ(monitor->registrations_refused.load(), 2u);
  EXPECT_EQ(monitor->pods_lost.load(), 1u);
  EXPECT_FALSE(log->cancelled);
  // The watch's later news of the same restart changes nothing.
  report(1, false, "container restarted (restart count 1)");
  EXPECT_EQ(monitor->pods_lost.load(), 1u);
}

TEST_F(remote_group_test, two_kinds_of_news_of_one_loss_count_once) {
  start_the_run(50);
  lose_pod1(loss::connection_dropped);
  lose_pod1(loss::pod_deleted);
  EXPECT_EQ(monitor->pods_lost.load(), 1u);
  EXPECT_FALSE(log->cancelled);
  ASSERT_TRUE(log->status);
  ASSERT_EQ(log->status->pods.size(), 2u);
  EXPECT_TRUE(log->status->pods[1].lost);
  EXPECT_NE(log->status->pods[1].lost_reason.find("control connection dropped"),
            std::string::npos)
    << log->status->pods[1].lost_reason;
}

} // namespace
} // namespace aiperf::remote
