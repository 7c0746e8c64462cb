#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "actors/benchmark/worker_group_manager/worker_group_manager.hpp"

#include "tests/support/caf_gtest.hpp"

#include <boost/asio/io_context.hpp>

using namespace aiperf;
using namespace aiperf::proto;

namespace {

/// What the fakes saw.
struct seen {
  std::vector<std::uint32_t> lost_queries;
  std::vector<metric_record> records;
};

/// A timing_manager that only answers `lost_atom` with two credits.
timing_manager_actor::behavior_type fake_timing(timing_manager_actor::pointer,
                                                std::shared_ptr<seen> log) {
  return {
    [](configure_atom, timing_config&, std::vector<credit_sink_actor>&) {
      return caf::ok_atom::value;
    },
    [](start_atom) { return std::vector<phase_stats>{}; },
    [](credit_return_batch&) {},
    [](first_tok_atom, std::uint64_t) {},
    [](cancel_atom) {},
    [=](lost_atom, std::uint32_t worker) {
      log->lost_queries.push_back(worker);
      credit a;
      a.id = 7;
      a.session_num = 3;
      credit b;
      b.id = 8;
      b.session_num = 4;
      b.turn_index = 1;
      return credit_batch{a, b};
    },
    [](progress_atom) { return timing_progress{}; },
  };
}

/// A records_manager that keeps what it is sent.
records_manager_actor::behavior_type
fake_records(records_manager_actor::pointer, std::shared_ptr<seen> log) {
  return {
    [=](metric_record_batch& batch) {
      for (auto& r : batch.records)
        log->records.push_back(r);
    },
    [](section_atom, std::string&, std::string&) {},
    [](process_atom, std::uint64_t, run_info&) { return export_outcome{}; },
    [](progress_atom) { return records_progress{}; },
  };
}

struct group_fixture : caf_gtest::fixture<> {
  boost::asio::io_context io; // never run: no request is sent here
  std::shared_ptr<seen> log = std::make_shared<seen>();

  worker_group_manager::worker_group_manager_actor spawn_group() {
    auto data = std::make_shared<dataset::dataset>();
    data->conversations.push_back({"conv-0", {dataset::turn{"hi", 1}}});
    worker_group_manager::group_config cfg;
    cfg.worker.urls = {"http://127.0.0.1:9"};
    cfg.worker.endpoint_path = "/v1/chat/completions";
    cfg.worker.run_id = "run";
    cfg.num_workers = 2;
    cfg.num_processors = 1;
    cfg.io = {{&io, nullptr}};
    cfg.data = data;
    cfg.timing = sys.spawn(fake_timing, log);
    cfg.records = sys.spawn(fake_records, log);
    auto group = worker_group_manager::spawn_worker_group_manager(sys, cfg);
    drain();
    return group;
  }
};

} // namespace

// Verifies reaping: a worker that dies abnormally has its in-flight credits
// (as reported by the timing_manager) turned into WorkerLost error records,
// and the group stays up for the other workers.
TEST_F(group_fixture, dead_worker_requests_become_worker_lost_records) {
  auto group = spawn_group();
  auto handles = request<worker_group_manager::group_handles>(
    group, caf::get_atom::value);
  ASSERT_TRUE(handles);
  ASSERT_EQ(handles->workers.size(), 2u);
  ASSERT_EQ(handles->processors.size(), 1u);
  caf::anon_send_exit(handles->workers[1], caf::exit_reason::kill);
  drain();
  ASSERT_EQ(log->lost_queries, std::vector<std::uint32_t>{1});
  ASSERT_EQ(log->records.size(), 2u);
  for (auto& r : log->records) {
    EXPECT_TRUE(r.has_error);
    EXPECT_EQ(r.error.type, "WorkerLost");
    EXPECT_EQ(r.worker_id, "worker_1");
  }
  EXPECT_EQ(log->records[0].session_num, 3u);
  EXPECT_EQ(log->records[1].turn_index, 1u);
  // The group still answers: it was not taken down with the worker.
  EXPECT_TRUE(request<worker_group_manager::group_handles>(
    group, caf::get_atom::value));
}

// Verifies a worker shut down on purpose is not reaped.
TEST_F(group_fixture, normal_worker_shutdown_is_not_a_loss) {
  auto group = spawn_group();
  auto handles = request<worker_group_manager::group_handles>(
    group, caf::get_atom::value);
  ASSERT_TRUE(handles);
  caf::anon_send_exit(handles->workers[0], caf::exit_reason::user_shutdown);
  drain();
  EXPECT_TRUE(log->lost_queries.empty());
  EXPECT_TRUE(log->records.empty());
}
