// The system_controller on the deterministic coordinator: the real
// dataset_manager, timing_manager and records_manager, with a fake worker
// group whose workers answer each credit at once (a record, then the credit
// back) and whose processors have nothing to finalize.
#include "actors/benchmark/system_controller/system_controller.hpp"
#include "actors/benchmark/system_controller/run_plan.hpp"

#include "proto/benchmark_errors.hpp"
#include "tests/support/caf_gtest.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

using namespace aiperf;
using namespace aiperf::proto;
namespace fs = std::filesystem;
namespace sc = aiperf::system_controller;
namespace wgm = aiperf::worker_group_manager;

namespace {

/// What the fake group saw, in order.
struct journal {
  std::vector<std::string> events;
  std::uint64_t credits = 0;
  std::uint64_t returned = 0;
  /// Every n-th record fails (HTTP 500); 0: none.
  std::uint64_t fail_every = 0;
};

credit_sink_actor::behavior_type fake_worker(credit_sink_actor::pointer self, std::uint32_t index,
                                             wgm::group_config cfg,
                                             std::shared_ptr<journal> log) {
  return {
    [=](credit_batch& batch) {
      credit_return_batch back;
      metric_record_batch records;
      for (auto& c : batch) {
        ++log->credits;
        metric_record r;
        r.session_num = c.session_num;
        r.turn_index = c.turn_index;
        r.worker_id = "worker_" + std::to_string(index);
        if (log->fail_every > 0 && log->credits % log->fail_every == 0) {
          r.has_error = true;
          r.error = {500, "Internal Server Error", "boom"};
        }
        records.records.push_back(std::move(r));
        back.push_back({c.id, index, credit_outcome::ok, false});
      }
      log->returned += back.size();
      self->send(cfg.records, std::move(records));
      self->send(cfg.timing, std::move(back));
    },
    [](cancel_atom, std::vector<std::uint64_t>&) {},
  };
}

record_processor_actor::behavior_type fake_processor(record_processor_actor::pointer,
                                                     std::shared_ptr<journal> log) {
  return {
    [](request_record_batch&) {},
    [=](finalize_atom) {
      log->events.push_back("finalize after " + std::to_string(log->returned) + " returns");
      return std::string{};
    },
  };
}

/// A group that answers `get` with its fakes, or (silent) never answers.
wgm::worker_group_manager_actor::behavior_type
fake_group(wgm::worker_group_manager_actor::pointer self, wgm::group_config cfg,
           std::shared_ptr<journal> log, bool silent) {
  return {
    [=](caf::get_atom) -> caf::result<wgm::group_handles> {
      log->events.push_back("get handles");
      if (silent)
        return self->make_response_promise<wgm::group_handles>(); // never delivered
      wgm::group_handles h;
      for (std::uint32_t i = 0; i < cfg.num_workers; ++i)
        h.workers.push_back(self->spawn(fake_worker, i, cfg, log));
      for (std::uint32_t i = 0; i < cfg.num_processors; ++i)
        h.processors.push_back(self->spawn(fake_processor, log));
      return h;
    },
  };
}

struct controller_fixture : caf_gtest::fixture<> {
  fs::path dir = fs::temp_directory_path()
                 / ("aiperf_system_controller_test." + std::to_string(::getpid()) + "."
                    + std::to_string(std::random_device{}()));
  std::shared_ptr<journal> log = std::make_shared<journal>();

  controller_fixture() { fs::create_directories(dir); }
  ~controller_fixture() override {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  sc::run_plan plan() {
    sc::run_plan p;
    p.run_id = "00000000-0000-4000-8000-000000000000";
    p.artifact_dir = dir.string();
    p.dataset.synthetic.num_conversations = 3;
    p.dataset.synthetic.isl_mean = 4;
    p.dataset.synthetic.osl_mean = 2;
    p.dataset.synthetic.random_seed = 1;
    p.dataset.payload.model = std::string{"m"};
    p.dataset.inputs_json_path = (dir / "inputs.json").string();
    p.timing.mode = timing_mode::concurrency;
    p.timing.concurrency = 2;
    p.timing.request_count = 6;
    p.timing.grace_ns = -1;
    p.worker.urls = {"http://127.0.0.1:9"};
    p.num_workers = 2;
    p.num_processors = 1;
    p.records.artifact_dir = dir.string();
    p.records.level = records_manager::export_level::summary;
    p.records.benchmark_id = p.run_id;
    p.records.input_config_json = "{}";
    return p;
  }

  sc::system_controller_actor spawn(sc::run_plan p, bool silent_group = false) {
    auto journal = log;
    p.release_connections = [journal] {
      journal->events.push_back("connections released after "
                                + std::to_string(journal->returned) + " returns");
    };
    return sc::spawn_system_controller(
      sys, std::move(p), {}, [journal, silent_group](caf::actor_system& s, wgm::group_config cfg) {
        return s.spawn(fake_group, std::move(cfg), journal, silent_group);
      });
  }

  /// Starts the run and drives it (messages, then simulated time in steps)
  /// until the controller answers.
  std::optional<sc::run_result> run(sc::system_controller_actor controller,
                                    caf::timespan step = std::chrono::seconds{1},
                                    int max_steps = 100) {
    std::optional<sc::run_result> result;
    auto h = self->request(controller, std::chrono::seconds{3600 * 1000}, start_atom::value);
    for (int i = 0; i < max_steps && self->peek_at_next_mailbox_element() == nullptr; ++i) {
      drain();
      if (self->peek_at_next_mailbox_element() == nullptr)
        advance_time(step);
    }
    if (self->peek_at_next_mailbox_element() == nullptr)
      return result;
    h.receive([&](sc::run_result& r) { result = std::move(r); },
              [&](caf::error& e) { ADD_FAILURE() << error_message(e); });
    return result;
  }
};

TEST_F(controller_fixture, a_run_goes_through_every_step_in_order) {
  auto result = run(spawn(plan()));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_code, sc::exit_ok) << result->message;
  EXPECT_EQ(log->credits, 6u);
  // Registration, then the processors finalize only after every credit is
  // back, then the exports exist when the answer comes.
  ASSERT_EQ(log->events.size(), 3u);
  EXPECT_EQ(log->events[0], "get handles");
  EXPECT_EQ(log->events[1], "connections released after 6 returns");
  EXPECT_EQ(log->events[2], "finalize after 6 returns");
  EXPECT_TRUE(fs::exists(dir / "inputs.json"));
  EXPECT_TRUE(fs::exists(dir / "profile_export_aiperf.json"));
  EXPECT_FALSE(result->files.empty());
}

TEST_F(controller_fixture, a_silent_service_fails_the_run_naming_it) {
  auto p = plan();
  p.timeouts.registration = std::chrono::seconds{20};
  auto result = run(spawn(std::move(p), true), std::chrono::seconds{5});
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_code, sc::exit_internal);
  EXPECT_EQ(result->message,
            "worker_group_manager did not answer registration (get handles) within 20 s");
  EXPECT_EQ(log->credits, 0u);
}

TEST_F(controller_fixture, a_failed_export_fails_the_run_naming_the_file) {
  auto p = plan();
  // A directory where the summary file goes: the export cannot replace it.
  fs::create_directories(dir / "profile_export_aiperf.json");
  auto result = run(spawn(std::move(p)));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_code, sc::exit_internal);
  EXPECT_NE(result->message.find("1 export could not be written"), std::string::npos)
    << result->message;
  EXPECT_NE(result->message.find("profile_export_aiperf.json"), std::string::npos)
    << result->message;
  // The other exports are written and still listed.
  EXPECT_NE(std::find(result->files.begin(), result->files.end(),
                      (dir / "profile_export_aiperf.csv").string()),
            result->files.end());
  EXPECT_TRUE(fs::is_regular_file(dir / "profile_export_aiperf.csv"));
}

TEST_F(controller_fixture, an_earlier_runs_files_are_set_aside_before_the_run) {
  std::ofstream{dir / "inputs.json"} << "earlier";
  std::ofstream{dir / "profile_export.jsonl"} << "earlier";
  std::ofstream{dir / "notes.txt"} << "kept";
  auto result = run(spawn(plan()));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_code, sc::exit_ok) << result->message;
  ASSERT_FALSE(result->warnings.empty());
  EXPECT_NE(result->warnings[0].find("held the files of an earlier run"), std::string::npos)
    << result->warnings[0];
  // Summary level: no JSONL of this run; the earlier one was moved aside.
  EXPECT_FALSE(fs::exists(dir / "profile_export.jsonl"));
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  EXPECT_TRUE(fs::exists(dir / "run_manifest.json"));
  int asides = 0;
  for (auto& e : fs::directory_iterator{dir})
    if (e.path().filename().string().starts_with("previous-")) {
      ++asides;
      EXPECT_TRUE(fs::exists(e.path() / "profile_export.jsonl"));
      EXPECT_TRUE(fs::exists(e.path() / "inputs.json"));
    }
  EXPECT_EQ(asides, 1);
}

TEST_F(controller_fixture, a_folder_that_cannot_be_set_aside_fails_the_run) {
  auto p = plan();
  std::ofstream{dir / "a-file"} << "x";
  p.artifact_dir = (dir / "a-file").string(); // not a folder
  auto result = run(spawn(std::move(p)));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_code, sc::exit_internal);
  EXPECT_NE(result->message.find("a-file"), std::string::npos) << result->message;
  EXPECT_TRUE(log->events.empty()) << "nothing may start";
}

TEST_F(controller_fixture, a_failed_jsonl_stream_stops_the_run_with_its_error) {
  auto p = plan();
  // The records stream goes to a folder that does not exist: its first
  // write fails, and the run stops with that error.
  p.records.level = records_manager::export_level::records;
  p.records.artifact_dir = (dir / "gone").string();
  p.timing.request_count = 1000;
  auto result = run(spawn(std::move(p)));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_code, sc::exit_internal) << result->message;
  EXPECT_NE(result->message.find((dir / "gone" / "profile_export.jsonl").string()),
            std::string::npos)
    << result->message;
  EXPECT_NE(result->message.find("No such file or directory"), std::string::npos)
    << result->message;
  EXPECT_LT(log->credits, 1000u) << "the run stopped early";
}

// --failed-request-threshold 0.5 with every request failing: armed at the
// 10th record (max(concurrency 2, 10)), the run stops there, exports what it
// has (was_cancelled) and exits 4 with the counts.
TEST_F(controller_fixture, a_failed_share_above_the_threshold_aborts_with_exit_4) {
  auto p = plan();
  p.timing.request_count = 100'000;
  p.failed_request_threshold = 0.5;
  p.records.failed_request_threshold = 0.5;
  p.records.failed_request_floor = 10;
  log->fail_every = 1;
  auto result = run(spawn(std::move(p)));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_code, sc::exit_failed_threshold) << result->message;
  EXPECT_EQ(result->message,
            "aborted: 10 of the first 10 profiling requests failed (100.00%), "
            "above --failed-request-threshold 0.5 (50%); check the server's logs");
  EXPECT_LT(log->credits, 100'000u) << "the run stopped early";
  EXPECT_TRUE(fs::is_regular_file(dir / "profile_export_aiperf.json"));
}

// A run of fewer records than the floor is never judged (AIPerf): 6 requests,
// every other one failing, above a 0.1 threshold, still exit 0.
TEST_F(controller_fixture, a_run_below_the_threshold_floor_is_not_judged) {
  auto p = plan();
  p.failed_request_threshold = 0.1;
  p.records.failed_request_threshold = 0.1;
  p.records.failed_request_floor = 10;
  log->fail_every = 2;
  auto result = run(spawn(std::move(p)));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_code, sc::exit_ok) << result->message;
  EXPECT_EQ(log->credits, 6u);
}

TEST_F(controller_fixture, a_bad_dataset_is_a_configuration_error) {
  auto p = plan();
  p.dataset.input_file = (dir / "missing.jsonl").string();
  auto result = run(spawn(std::move(p)));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_code, sc::exit_config);
  EXPECT_NE(result->message.find("missing.jsonl"), std::string::npos) << result->message;
  EXPECT_TRUE(log->events.empty()) << "nothing may start after a bad dataset";
}

TEST(unreachable_timeout, env_value_or_the_default) {
  EXPECT_EQ(sc::unreachable_timeout_ms(nullptr), 10'000);
  EXPECT_EQ(sc::unreachable_timeout_ms(""), 10'000);
  EXPECT_EQ(sc::unreachable_timeout_ms("1000"), 1000);
  EXPECT_EQ(sc::unreachable_timeout_ms("0"), 0) << "off";
  EXPECT_EQ(sc::unreachable_timeout_ms("-5"), 10'000);
  EXPECT_EQ(sc::unreachable_timeout_ms("10s"), 10'000);
}

} // namespace

// plan.on_progress hears every state in order and, while a paced run goes
// on (2 requests/s for 6 requests), the counters of the 500 ms ticks,
// which never go backwards and end at the planned count.
TEST_F(controller_fixture, progress_reports_each_state_and_the_running_counters) {
  auto p = plan();
  p.timing.mode = timing_mode::request_rate;
  p.timing.request_rate = 2;
  p.timing.pattern = arrival_pattern::constant;
  p.timing.concurrency = 0;
  auto seen = std::make_shared<std::vector<sc::run_progress>>();
  p.on_progress = [seen](const sc::run_progress& r) { seen->push_back(r); };
  auto result = run(spawn(std::move(p)), std::chrono::milliseconds{250}, 400);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->exit_code, sc::exit_ok) << result->message;
  std::vector<std::string> states;
  for (const auto& r : *seen)
    if (states.empty() || states.back() != r.state)
      states.push_back(r.state);
  EXPECT_EQ(states,
            (std::vector<std::string>{"configuring", "running", "exporting", "complete"}));
  std::uint64_t ticks = 0, last = 0;
  for (const auto& r : *seen)
    if (r.state == "running") {
      ++ticks;
      EXPECT_GE(r.timing.returned, last);
      last = r.timing.returned;
      EXPECT_EQ(r.timing.target, 6u);
      EXPECT_EQ(r.errors, 0u);
    }
  EXPECT_GT(ticks, 2u) << "a 3 s run is reported every 500 ms";
  EXPECT_EQ(seen->back().timing.returned, 6u);
}

TEST_F(controller_fixture, progress_ends_failed_when_the_run_fails) {
  auto p = plan();
  p.dataset.input_file = (dir / "missing.jsonl").string();
  auto seen = std::make_shared<std::vector<std::string>>();
  p.on_progress = [seen](const sc::run_progress& r) { seen->push_back(r.state); };
  auto result = run(spawn(std::move(p)));
  ASSERT_TRUE(result);
  EXPECT_EQ(*seen, (std::vector<std::string>{"configuring", "failed"}));
}
