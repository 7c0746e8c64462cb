// The record_processor and the records_manager on the deterministic
// coordinator: what they send, when the export happens, and how a failed
// write is answered.
#include "actors/benchmark/record_processor/record_processor.hpp"
#include "actors/benchmark/records_manager/records_manager.hpp"

#include "proto/benchmark_errors.hpp"
#include "runtime/io/durable_file.hpp"
#include "tests/support/caf_gtest.hpp"

#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <csignal>
#include <random>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

using namespace aiperf;
using namespace aiperf::proto;
namespace fs = std::filesystem;

namespace {

/// A records_manager that keeps what record processors send it.
records_manager_actor::behavior_type fake_records(records_manager_actor::pointer,
                                                  std::shared_ptr<std::vector<metric_record>> got) {
  return {
    [=](metric_record_batch& b) {
      for (auto& r : b.records)
        got->push_back(std::move(r));
    },
    [](section_atom, std::string&, std::string&) {},
    [](process_atom, std::uint64_t, run_info&) { return export_outcome{}; },
    [](progress_atom) { return records_progress{}; },
  };
}

request_record sample_request(std::uint64_t id) {
  request_record r;
  r.credit_id = id;
  r.session_num = static_cast<std::uint32_t>(id);
  r.x_request_id = "req-" + std::to_string(id);
  r.worker_id = "worker_0";
  r.request_start_ns = 1'000'000;
  r.request_start_wall_ns = 1'700'000'000'000'000'000;
  r.request_end_ns = 3'000'000;
  r.http_status = 200;
  return r;
}

metric_record sample_metric(std::uint32_t session) {
  metric_record r;
  r.session_num = session;
  r.x_request_id = "req-" + std::to_string(session);
  r.request_start_ns = 1'700'000'000'000'000'000;
  r.request_end_ns = r.request_start_ns + 2'000'000;
  return r;
}

std::string read_all(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct records_fixture : caf_gtest::fixture<> {
  fs::path dir = fs::temp_directory_path()
                 / ("aiperf_records_path_test." + std::to_string(::getpid()) + "."
                    + std::to_string(std::random_device{}()));

  records_fixture() { fs::create_directories(dir); }
  ~records_fixture() override {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  records_manager_actor spawn_manager(records_manager::export_level level,
                                      caf::actor listener = {}) {
    records_manager::records_config cfg;
    cfg.artifact_dir = dir.string();
    cfg.level = level;
    cfg.benchmark_id = "run-1";
    cfg.input_config_json = "{}";
    cfg.drain_timeout_ms = 2'000;
    return records_manager::spawn_records_manager(sys, cfg, std::move(listener));
  }

  run_info one_phase(std::uint64_t sent) {
    run_info info;
    phase_stats p;
    p.sent = p.returned = sent;
    info.phases.push_back(p);
    return info;
  }
};

TEST_F(records_fixture, processor_forwards_each_batch_with_its_id) {
  auto got = std::make_shared<std::vector<metric_record>>();
  record_processor::processor_config cfg;
  cfg.processor_id = "record_processor_3";
  auto proc = record_processor::spawn_record_processor(sys, cfg, sys.spawn(fake_records, got));
  request_record_batch batch;
  batch.records = {sample_request(1), sample_request(2)};
  self->send(proc, std::move(batch));
  drain();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].x_request_id, "req-1");
  EXPECT_EQ((*got)[1].x_request_id, "req-2");
  EXPECT_EQ((*got)[1].record_processor_id, "record_processor_3");
  // Without a RAW part there is nothing to close.
  auto path = request<std::string>(proc, finalize_atom::value);
  ASSERT_TRUE(path);
  EXPECT_EQ(*path, "");
}

TEST_F(records_fixture, processor_closes_its_raw_part_on_finalize) {
  auto got = std::make_shared<std::vector<metric_record>>();
  record_processor::processor_config cfg;
  cfg.processor_id = "record_processor_0";
  cfg.raw_part_path = (dir / "raw.part0.jsonl").string();
  auto proc = record_processor::spawn_record_processor(sys, cfg, sys.spawn(fake_records, got));
  request_record_batch batch;
  batch.records = {sample_request(7)};
  self->send(proc, std::move(batch));
  drain();
  // Nothing is visible under the final name before finalize.
  EXPECT_FALSE(fs::exists(cfg.raw_part_path));
  auto path = request<std::string>(proc, finalize_atom::value);
  ASSERT_TRUE(path) << error_message(path.error());
  EXPECT_EQ(*path, cfg.raw_part_path);
  auto text = read_all(*path);
  EXPECT_NE(text.find("req-7"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
}

TEST_F(records_fixture, processor_answers_a_failed_raw_part_naming_it) {
  auto got = std::make_shared<std::vector<metric_record>>();
  record_processor::processor_config cfg;
  cfg.raw_part_path = (dir / "no-such-dir" / "raw.part0.jsonl").string();
  auto proc = record_processor::spawn_record_processor(sys, cfg, sys.spawn(fake_records, got));
  auto path = request<std::string>(proc, finalize_atom::value);
  ASSERT_FALSE(path);
  EXPECT_TRUE(is_error(path.error(), benchmark::errc::export_failed));
  EXPECT_NE(error_message(path.error()).find(cfg.raw_part_path), std::string::npos)
    << error_message(path.error());
}

TEST_F(records_fixture, manager_exports_once_every_expected_record_arrived) {
  auto mgr = spawn_manager(records_manager::export_level::records);
  metric_record_batch first;
  first.records = {sample_metric(0)};
  self->send(mgr, std::move(first));
  drain();
  // Asked to process 2 records with 1 in: it waits and writes nothing.
  auto h = self->request(mgr, caf::infinite, process_atom::value, std::uint64_t{2}, one_phase(2));
  drain();
  EXPECT_EQ(self->peek_at_next_mailbox_element(), nullptr);
  EXPECT_FALSE(fs::exists(dir / "profile_export_aiperf.json"));
  metric_record_batch second;
  second.records = {sample_metric(1)};
  self->send(mgr, std::move(second));
  drain();
  std::optional<export_outcome> out;
  h.receive([&](export_outcome& o) { out = std::move(o); },
            [&](caf::error& e) { ADD_FAILURE() << error_message(e); });
  ASSERT_TRUE(out);
  EXPECT_EQ(out->request_count, 2u);
  EXPECT_FALSE(out->error) << error_message(out->error);
  EXPECT_TRUE(out->failed_files.empty());
  ASSERT_EQ(out->files.size(), 4u);
  EXPECT_EQ(out->files[0], (dir / "profile_export_aiperf.json").string());
  EXPECT_EQ(out->files[1], (dir / "profile_export_aiperf.csv").string());
  EXPECT_EQ(out->files[2], (dir / "profile_export.jsonl").string());
  EXPECT_EQ(out->files[3], (dir / "run_manifest.json").string());
  auto jsonl = read_all(dir / "profile_export.jsonl");
  EXPECT_EQ(std::count(jsonl.begin(), jsonl.end(), '\n'), 2);
  // The manifest, written last, names the run and its files.
  auto text = read_all(dir / "run_manifest.json");
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(text.c_str()).HasParseError()) << text;
  EXPECT_STREQ(d["benchmark_id"].GetString(), "run-1");
  ASSERT_EQ(d["files"].Size(), 3u) << text;
  EXPECT_STREQ(d["files"][0].GetString(), "profile_export_aiperf.json");
  EXPECT_STREQ(d["files"][2].GetString(), "profile_export.jsonl");
  EXPECT_EQ(d["failed_files"].Size(), 0u) << text;
}

TEST_F(records_fixture, manager_exports_after_its_drain_timeout_with_a_warning) {
  auto mgr = spawn_manager(records_manager::export_level::summary);
  auto h = self->request(mgr, caf::infinite, process_atom::value, std::uint64_t{3}, one_phase(3));
  drain();
  EXPECT_EQ(self->peek_at_next_mailbox_element(), nullptr);
  advance_time(std::chrono::milliseconds{2'000});
  std::optional<export_outcome> out;
  h.receive([&](export_outcome& o) { out = std::move(o); },
            [&](caf::error& e) { ADD_FAILURE() << error_message(e); });
  ASSERT_TRUE(out);
  EXPECT_EQ(out->request_count, 0u);
  auto missing = std::find_if(out->warnings.begin(), out->warnings.end(), [](auto& w) {
    return w.find("3 records never arrived") != std::string::npos;
  });
  EXPECT_NE(missing, out->warnings.end());
}

TEST_F(records_fixture, manager_adds_sections_to_the_summary_json) {
  auto mgr = spawn_manager(records_manager::export_level::summary);
  self->send(mgr, section_atom::value, std::string{"pods"},
             std::string{R"([{"name":"pod0"}])"});
  self->send(mgr, section_atom::value, std::string{"broken"},
             std::string{R"([{"name":)"});
  self->send(mgr, section_atom::value, std::string{"bad\"name"},
             std::string{"1"});
  // A repeated name replaces.
  self->send(mgr, section_atom::value, std::string{"pods"},
             std::string{R"([{"name":"pod1"}])"});
  auto out = request<export_outcome>(mgr, process_atom::value, std::uint64_t{0}, one_phase(0));
  ASSERT_TRUE(out) << error_message(out.error());
  auto text = read_all(dir / "profile_export_aiperf.json");
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(text.c_str()).HasParseError()) << text;
  ASSERT_TRUE(d.HasMember("pods")) << text;
  ASSERT_EQ(d["pods"].Size(), 1u);
  EXPECT_STREQ(d["pods"][0]["name"].GetString(), "pod1");
  EXPECT_FALSE(d.HasMember("broken")) << text;
  EXPECT_FALSE(d.HasMember("bad\"name")) << text;
}

TEST_F(records_fixture, manager_answers_a_failed_export_naming_the_file) {
  fs::create_directories(dir / "profile_export_aiperf.csv"); // a directory in the way
  auto mgr = spawn_manager(records_manager::export_level::summary);
  auto out = request<export_outcome>(mgr, process_atom::value, std::uint64_t{0}, one_phase(0));
  ASSERT_TRUE(out) << error_message(out.error());
  EXPECT_TRUE(is_error(out->error, benchmark::errc::export_failed));
  EXPECT_NE(error_message(out->error).find("profile_export_aiperf.csv"), std::string::npos)
    << error_message(out->error);
  ASSERT_EQ(out->failed_files.size(), 1u);
  EXPECT_EQ(out->failed_files[0], (dir / "profile_export_aiperf.csv").string());
  EXPECT_TRUE(fs::is_regular_file(dir / "profile_export_aiperf.json"));
}

TEST_F(records_fixture, manager_writes_the_other_exports_when_one_fails) {
  fs::create_directories(dir / "profile_export_aiperf.json"); // a directory in the way
  auto mgr = spawn_manager(records_manager::export_level::records);
  metric_record_batch batch;
  batch.records = {sample_metric(0)};
  self->send(mgr, std::move(batch));
  auto out = request<export_outcome>(mgr, process_atom::value, std::uint64_t{1}, one_phase(1));
  ASSERT_TRUE(out) << error_message(out.error());
  // Exactly the one failure, with its path and errno text.
  ASSERT_EQ(out->failed_files.size(), 1u);
  EXPECT_EQ(out->failed_files[0], (dir / "profile_export_aiperf.json").string());
  ASSERT_TRUE(is_error(out->error, benchmark::errc::export_failed));
  auto msg = error_message(out->error);
  EXPECT_NE(msg.find("1 export could not be written"), std::string::npos) << msg;
  EXPECT_NE(msg.find((dir / "profile_export_aiperf.json").string()), std::string::npos) << msg;
  EXPECT_NE(msg.find("Is a directory"), std::string::npos) << msg;
  // The others are written and listed.
  ASSERT_EQ(out->files.size(), 3u);
  EXPECT_EQ(out->files[0], (dir / "profile_export_aiperf.csv").string());
  EXPECT_EQ(out->files[1], (dir / "profile_export.jsonl").string());
  EXPECT_EQ(out->files[2], (dir / "run_manifest.json").string());
  EXPECT_TRUE(fs::is_regular_file(dir / "profile_export_aiperf.csv"));
  auto jsonl = read_all(dir / "profile_export.jsonl");
  EXPECT_EQ(std::count(jsonl.begin(), jsonl.end(), '\n'), 1);
  auto text = read_all(dir / "run_manifest.json");
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(text.c_str()).HasParseError()) << text;
  ASSERT_EQ(d["failed_files"].Size(), 1u) << text;
  EXPECT_STREQ(d["failed_files"][0].GetString(), "profile_export_aiperf.json");
}

TEST_F(records_fixture, manager_reports_every_failed_export) {
  fs::create_directories(dir / "profile_export_aiperf.csv");
  fs::create_directories(dir / "profile_export_raw.jsonl");
  auto mgr = spawn_manager(records_manager::export_level::raw);
  auto info = one_phase(0);
  info.raw_parts = {(dir / "no-such-part").string()};
  auto out = request<export_outcome>(mgr, process_atom::value, std::uint64_t{0}, info);
  ASSERT_TRUE(out) << error_message(out.error());
  ASSERT_EQ(out->failed_files.size(), 2u);
  EXPECT_EQ(out->failed_files[0], (dir / "profile_export_aiperf.csv").string());
  EXPECT_EQ(out->failed_files[1], (dir / "profile_export_raw.jsonl").string());
  auto msg = error_message(out->error);
  EXPECT_NE(msg.find("2 exports could not be written"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no-such-part"), std::string::npos) << msg;
  EXPECT_TRUE(fs::is_regular_file(dir / "profile_export_aiperf.json"));
  EXPECT_TRUE(fs::is_regular_file(dir / "profile_export.jsonl"));
}

TEST_F(records_fixture, manager_stops_streaming_at_the_first_write_error) {
  auto mgr = spawn_manager(records_manager::export_level::records,
                           caf::actor_cast<caf::actor>(self));
  // A file size limit makes the JSONL stream's first 64 KiB write fail
  // (EFBIG), as a full disk would (ENOSPC).
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit old_limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit small = old_limit;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  metric_record_batch batch;
  for (std::uint32_t i = 0; i < 400; ++i)
    batch.records.push_back(sample_metric(i));
  self->send(mgr, batch);
  drain();
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
  std::signal(SIGXFSZ, old_handler);
  // The listener hears it at once, and only once.
  std::string heard;
  EXPECT_TRUE(receive_now([&](write_failed_atom, caf::error& e) { heard = error_message(e); }));
  EXPECT_NE(heard.find("File too large"), std::string::npos) << heard;
  EXPECT_EQ(self->peek_at_next_mailbox_element(), nullptr);
  // Streaming stopped; later records still count.
  metric_record_batch more;
  more.records = {sample_metric(400)};
  self->send(mgr, std::move(more));
  auto out = request<export_outcome>(mgr, process_atom::value, std::uint64_t{401}, one_phase(401));
  ASSERT_TRUE(out) << error_message(out.error());
  EXPECT_EQ(out->request_count, 401u);
  ASSERT_EQ(out->failed_files.size(), 1u);
  EXPECT_EQ(out->failed_files[0], (dir / "profile_export.jsonl").string());
  auto msg = error_message(out->error);
  EXPECT_NE(msg.find("File too large"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(dir / "profile_export.jsonl"));
  EXPECT_TRUE(fs::is_regular_file(dir / "profile_export_aiperf.json"));
  EXPECT_TRUE(fs::is_regular_file(dir / "profile_export_aiperf.csv"));
  // No temp file is left behind.
  for (auto& e : fs::directory_iterator{dir})
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
}

// --failed-request-threshold is judged at every profiling record, from
// max(concurrency, 10) records on: the listener hears the record that made
// failed/records exceed the ratio, once. Warmup records do not count.
TEST_F(records_fixture, manager_tells_the_listener_when_the_failed_share_crosses) {
  records_manager::records_config cfg;
  cfg.artifact_dir = dir.string();
  cfg.level = records_manager::export_level::summary;
  cfg.benchmark_id = "run-1";
  cfg.input_config_json = "{}";
  cfg.failed_request_threshold = 0.5;
  cfg.failed_request_floor = 10;
  auto mgr = records_manager::spawn_records_manager(sys, cfg, caf::actor_cast<caf::actor>(self));
  auto failed = [](std::uint32_t i, benchmark_phase ph = benchmark_phase::profiling) {
    auto r = sample_metric(i);
    r.phase = ph;
    r.has_error = true;
    r.error = {500, "Internal Server Error", "boom"};
    return r;
  };
  metric_record_batch batch;
  // 20 failed warmup records: not judged.
  for (std::uint32_t i = 0; i < 20; ++i)
    batch.records.push_back(failed(i, benchmark_phase::warmup));
  // 9 failed profiling records: below the floor, not armed.
  for (std::uint32_t i = 0; i < 9; ++i)
    batch.records.push_back(failed(100 + i));
  self->send(mgr, batch);
  drain();
  EXPECT_EQ(self->peek_at_next_mailbox_element(), nullptr);
  // The 10th: 10 of 10 failed, above 0.5.
  self->send(mgr, metric_record_batch{{failed(109)}});
  drain();
  std::uint64_t heard_failed = 0, heard_records = 0;
  EXPECT_TRUE(receive_now([&](records_manager::failed_threshold_atom, std::uint64_t f,
                              std::uint64_t n) {
    heard_failed = f;
    heard_records = n;
  }));
  EXPECT_EQ(heard_failed, 10u);
  EXPECT_EQ(heard_records, 10u);
  // Once only.
  self->send(mgr, metric_record_batch{{failed(110), failed(111)}});
  drain();
  EXPECT_EQ(self->peek_at_next_mailbox_element(), nullptr);
}

TEST(records_manager_threshold, strictly_above_the_ratio_once_armed) {
  using records_manager::crosses_failed_threshold;
  EXPECT_FALSE(crosses_failed_threshold(9, 9, 0.5, 10)); // below the floor
  EXPECT_TRUE(crosses_failed_threshold(6, 10, 0.5, 10));
  EXPECT_FALSE(crosses_failed_threshold(5, 10, 0.5, 10)); // at the ratio
  EXPECT_TRUE(crosses_failed_threshold(1, 64, 0.0, 64));  // 0: any failure
  EXPECT_FALSE(crosses_failed_threshold(0, 64, 0.0, 64));
  EXPECT_FALSE(crosses_failed_threshold(64, 64, 1.0, 10)); // 1: never
  EXPECT_FALSE(crosses_failed_threshold(50, 50, -1, 10));  // off
  EXPECT_FALSE(crosses_failed_threshold(0, 0, 0.0, 0));
}

TEST_F(records_fixture, set_aside_moves_only_an_earlier_runs_files) {
  for (const char* name : {"profile_export_aiperf.json", "profile_export_aiperf.csv",
                           "profile_export.jsonl", "profile_export_raw.jsonl", "inputs.json",
                           "run_manifest.json", "profile_export_raw.part0",
                           "profile_export.jsonl.tmp.12.abcdef", "notes.txt"})
    std::ofstream{dir / name} << name;
  fs::create_directories(dir / "logs");
  auto moved = records_manager::set_aside_previous_run(dir, "20260101T000000Z");
  ASSERT_TRUE(moved) << error_message(moved.error());
  EXPECT_EQ(moved->folder, dir / "previous-20260101T000000Z");
  EXPECT_EQ(moved->names.size(), 8u);
  EXPECT_EQ(read_all(moved->folder / "inputs.json"), "inputs.json");
  EXPECT_TRUE(fs::exists(moved->folder / "profile_export.jsonl.tmp.12.abcdef"));
  // What is not a run's file stays.
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  EXPECT_TRUE(fs::is_directory(dir / "logs"));
  EXPECT_FALSE(fs::exists(dir / "profile_export_aiperf.json"));
  // Nothing left to move: no folder is made.
  auto again = records_manager::set_aside_previous_run(dir, "20260101T000001Z");
  ASSERT_TRUE(again) << error_message(again.error());
  EXPECT_TRUE(again->names.empty());
  EXPECT_FALSE(fs::exists(dir / "previous-20260101T000001Z"));
  // The same second twice: a new folder.
  std::ofstream{dir / "inputs.json"} << "second";
  auto same = records_manager::set_aside_previous_run(dir, "20260101T000000Z");
  ASSERT_TRUE(same) << error_message(same.error());
  EXPECT_EQ(same->folder, dir / "previous-20260101T000000Z-1");
  EXPECT_EQ(read_all(same->folder / "inputs.json"), "second");
}

TEST_F(records_fixture, set_aside_of_a_missing_folder_moves_nothing) {
  auto moved = records_manager::set_aside_previous_run(dir / "new-run", "20260101T000000Z");
  ASSERT_TRUE(moved) << error_message(moved.error());
  EXPECT_TRUE(moved->names.empty());
  EXPECT_FALSE(fs::exists(dir / "new-run"));
}

TEST_F(records_fixture, set_aside_fails_naming_the_folder) {
  std::ofstream{dir / "a-file"} << "x"; // not a folder
  auto moved = records_manager::set_aside_previous_run(dir / "a-file", "20260101T000000Z");
  ASSERT_FALSE(moved);
  EXPECT_TRUE(is_error(moved.error(), io::errc::system));
  EXPECT_EQ(io::error_errno(moved.error()), ENOTDIR);
  EXPECT_NE(error_message(moved.error()).find((dir / "a-file").string()), std::string::npos)
    << error_message(moved.error());
}

TEST(records_manager_stamp, utc_stamp_is_utc) {
  EXPECT_EQ(records_manager::utc_stamp(std::chrono::system_clock::time_point{
              std::chrono::seconds{1'767'225'600}}),
            "20260101T000000Z");
}

} // namespace
