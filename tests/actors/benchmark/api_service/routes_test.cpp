#include "actors/benchmark/api_service/routes.hpp"
#include "actors/benchmark/api_service/results_files.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

namespace {

namespace fs = std::filesystem;
using namespace aiperf::api_service;

// A fresh directory under /tmp, removed with the fixture.
class temp_dir_fixture : public ::testing::Test {
protected:
  temp_dir_fixture() {
    std::string tmpl
        = (fs::temp_directory_path() / "api_routes.XXXXXX").string();
    root_ = ::mkdtemp(tmpl.data());
  }
  ~temp_dir_fixture() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void write(const fs::path& rel, std::string_view contents) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream{root_ / rel} << contents;
  }
  fs::path root_;
};

TEST(render_progress_json, has_every_field) {
  progress p{"profiling", "running", 10, 8, 2, 1, 100, 12.5};
  auto text = render_progress_json(p, true);
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(text.c_str()).HasParseError()) << text;
  EXPECT_STREQ(d["phase"].GetString(), "profiling");
  EXPECT_STREQ(d["state"].GetString(), "running");
  EXPECT_EQ(d["requests_sent"].GetUint64(), 10u);
  EXPECT_EQ(d["requests_completed"].GetUint64(), 8u);
  EXPECT_EQ(d["requests_in_flight"].GetUint64(), 2u);
  EXPECT_EQ(d["request_errors"].GetUint64(), 1u);
  EXPECT_EQ(d["requests_total"].GetUint64(), 100u);
  EXPECT_EQ(d["requests_per_second"].GetDouble(), 12.5);
  EXPECT_TRUE(d["ready"].GetBool());
}

TEST(render_progress_json, escapes_strings_and_drops_non_finite_rates) {
  progress p;
  p.state = "fa\"il\n";
  p.requests_per_second = std::numeric_limits<double>::quiet_NaN();
  auto text = render_progress_json(p, false);
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(text.c_str()).HasParseError()) << text;
  EXPECT_STREQ(d["state"].GetString(), "fa\"il\n");
  EXPECT_EQ(d["requests_per_second"].GetDouble(), 0.0);
  EXPECT_FALSE(d["ready"].GetBool());
}

TEST(render_pods_json, counts_pods_and_reports_clocks) {
  pods_status s;
  s.registration = "waiting";
  s.pods_expected = 3;
  s.missing = {"pod1/worker_0"};
  pod_status a;
  a.name = "pod0";
  a.registered = true;
  a.clock_reported = true;
  a.clock_offset_ns = -5'000'000'000;
  a.clock_one_way_samples = 20;
  a.clock_min_rtt_ns = 1234;
  pod_status b;
  b.name = "pod1";
  pod_status c;
  c.name = "pod2";
  c.registered = true;
  c.lost = true;
  c.lost_reason = "no heartbeat for 5000 ms";
  c.clock_reported = true;
  c.clock_local = true;
  s.pods = {a, b, c};
  auto text = render_pods_json(s);
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(text.c_str()).HasParseError()) << text;
  EXPECT_STREQ(d["registration"].GetString(), "waiting");
  EXPECT_EQ(d["pods_expected"].GetUint(), 3u);
  EXPECT_EQ(d["pods_registered"].GetUint(), 2u);
  EXPECT_EQ(d["pods_lost"].GetUint(), 1u);
  ASSERT_EQ(d["missing"].Size(), 1u);
  EXPECT_STREQ(d["missing"][0].GetString(), "pod1/worker_0");
  EXPECT_STREQ(d["error"].GetString(), "");
  auto& pods = d["pods"];
  ASSERT_EQ(pods.Size(), 3u);
  EXPECT_STREQ(pods[0]["name"].GetString(), "pod0");
  EXPECT_TRUE(pods[0]["registered"].GetBool());
  EXPECT_FALSE(pods[0].HasMember("lost_reason"));
  EXPECT_EQ(pods[0]["clock"]["offset_ns"].GetInt64(), -5'000'000'000);
  EXPECT_EQ(pods[0]["clock"]["one_way_samples"].GetUint(), 20u);
  EXPECT_EQ(pods[0]["clock"]["min_rtt_ns"].GetInt64(), 1234);
  EXPECT_FALSE(pods[0]["clock"]["local"].GetBool());
  EXPECT_FALSE(pods[1]["registered"].GetBool());
  EXPECT_TRUE(pods[1]["clock"].IsNull());
  EXPECT_TRUE(pods[2]["lost"].GetBool());
  EXPECT_STREQ(pods[2]["lost_reason"].GetString(), "no heartbeat for 5000 ms");
  EXPECT_TRUE(pods[2]["clock"]["min_rtt_ns"].IsNull());
  EXPECT_TRUE(pods[2]["clock"]["local"].GetBool());
  // The export's `pods` member is the same array.
  rapidjson::Document list;
  auto array = render_pod_list_json(s.pods);
  ASSERT_FALSE(list.Parse(array.c_str()).HasParseError()) << array;
  EXPECT_TRUE(list == pods);
}

TEST(render_pods_json, before_any_remote_group) {
  auto text = render_pods_json(pods_status{});
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(text.c_str()).HasParseError()) << text;
  EXPECT_STREQ(d["registration"].GetString(), "not_started");
  EXPECT_EQ(d["pods_expected"].GetUint(), 0u);
  EXPECT_EQ(d["pods"].Size(), 0u);
}

TEST(render_prometheus, exposes_counters_and_gauges) {
  progress p{"warmup", "running", 10, 8, 2, 1, 0, 2.5};
  auto text = render_prometheus(p, true, 3);
  EXPECT_NE(text.find("# TYPE aiperf_requests_sent_total counter\n"
                      "aiperf_requests_sent_total{phase=\"warmup\"} 10\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("aiperf_requests_completed_total{phase=\"warmup\"} 8\n"),
            std::string::npos);
  EXPECT_NE(text.find("aiperf_request_errors_total{phase=\"warmup\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("aiperf_requests_in_flight{phase=\"warmup\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("aiperf_requests_per_second{phase=\"warmup\"} 2.5\n"),
            std::string::npos);
  EXPECT_NE(text.find("aiperf_run_state{state=\"running\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("aiperf_ready 1\n"), std::string::npos);
  EXPECT_NE(text.find("aiperf_raw_parts_staged 3\n"), std::string::npos);
  // Every sample line has a HELP and a TYPE line before it.
  EXPECT_EQ(text.back(), '\n');
}

TEST(render_prometheus, escapes_label_values) {
  progress p;
  p.phase = "a\"b\\c\nd";
  auto text = render_prometheus(p, false, 0);
  EXPECT_NE(text.find(R"(aiperf_requests_sent_total{phase="a\"b\\c\nd"} 0)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("aiperf_ready 0\n"), std::string::npos);
}

using resolve_under_test = temp_dir_fixture;

TEST_F(resolve_under_test, finds_files_and_nested_files) {
  write("profile_export_aiperf.json", "{}");
  write("sub dir/x.csv", "a,b");
  auto top = resolve_under(root_, "profile_export_aiperf.json");
  ASSERT_TRUE(top);
  EXPECT_EQ(top->filename(), "profile_export_aiperf.json");
  auto nested = resolve_under(root_, "sub%20dir/x.csv");
  ASSERT_TRUE(nested);
  EXPECT_EQ(nested->filename(), "x.csv");
}

TEST_F(resolve_under_test, rejects_traversal_and_odd_paths) {
  write("run/a.json", "{}");
  write("outside.txt", "secret");
  auto run = root_ / "run";
  for (const char* bad :
       {"", "../outside.txt", "%2e%2e/outside.txt", "%2E%2E%2Foutside.txt",
        "./a.json", "a.json/", "/a.json", "x//a.json", "..", "a%00.json", "%zz",
        "a%2", "..\\outside.txt", "missing.json"})
    EXPECT_FALSE(resolve_under(run, bad)) << bad;
  EXPECT_TRUE(resolve_under(run, "a.json"));
}

TEST_F(resolve_under_test, rejects_symlinks_leading_out_and_directories) {
  write("run/a.json", "{}");
  write("outside.txt", "secret");
  fs::create_symlink(root_ / "outside.txt", root_ / "run" / "link.txt");
  fs::create_symlink(root_ / "run" / "a.json", root_ / "run" / "inner.json");
  fs::create_directories(root_ / "run" / "dir");
  auto run = root_ / "run";
  EXPECT_FALSE(resolve_under(run, "link.txt"));
  EXPECT_FALSE(resolve_under(run, "dir"));
  // A symlink that stays inside is fine.
  EXPECT_TRUE(resolve_under(run, "inner.json"));
}

TEST(valid_pod_name, accepts_indexes_and_names_only) {
  EXPECT_TRUE(valid_pod_name("0"));
  EXPECT_TRUE(valid_pod_name("worker-12_a"));
  EXPECT_TRUE(valid_pod_name(std::string(63, 'a')));
  EXPECT_FALSE(valid_pod_name(""));
  EXPECT_FALSE(valid_pod_name(std::string(64, 'a')));
  EXPECT_FALSE(valid_pod_name("../x"));
  EXPECT_FALSE(valid_pod_name("a/b"));
  EXPECT_FALSE(valid_pod_name("a.b"));
  EXPECT_EQ(raw_part_file_name("3"), "profile_export_raw.pod-3.jsonl");
}

} // namespace

namespace {

using results_test = temp_dir_fixture;

std::vector<std::string> names(const std::vector<result_file>& files) {
  std::vector<std::string> out;
  for (const auto& f : files)
    out.push_back(f.name);
  return out;
}

TEST_F(results_test, lists_checkpoints_always_and_top_level_files_once_ready) {
  write("profile_export_aiperf.json", "{}");
  write("nested/deep.json", "x");
  write("checkpoints/a/c.json", "12");
  EXPECT_FALSE(results_ready(root_));
  EXPECT_EQ(names(list_results(root_)), (std::vector<std::string>{"checkpoints/a/c.json"}));
  ASSERT_TRUE(write_ready_marker(root_, false));
  EXPECT_TRUE(results_ready(root_));
  auto files = list_results(root_);
  EXPECT_EQ(names(files), (std::vector<std::string>{"checkpoints/a/c.json",
                                                    "profile_export_aiperf.json"}));
  EXPECT_EQ(files[0].size, 2u);
  auto json = render_results_list(files, true);
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(json.c_str()).HasParseError()) << json;
  EXPECT_EQ(d["files"][1]["name"].GetString(), std::string{"profile_export_aiperf.json"});
  EXPECT_EQ(d["files"][1]["size"].GetUint64(), 2u);
  EXPECT_TRUE(d["ready"].GetBool());
}

TEST_F(results_test, the_marker_is_aiperfs_json) {
  ASSERT_TRUE(write_ready_marker(root_, true));
  std::ifstream in{root_ / ".aiperf_results_ready.json"};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(text.c_str()).HasParseError()) << text;
  EXPECT_TRUE(d["ready"].GetBool());
  EXPECT_TRUE(d["was_cancelled"].GetBool());
}

TEST_F(results_test, judges_paths_before_and_after_the_marker) {
  write("a.json", "{}");
  write("nested/b.json", "{}");
  write("checkpoints/c.json", "{}");
  fs::create_directories(root_.parent_path() / "outside");
  auto lookup = [&](std::string_view p) { return resolve_result(root_, p).status; };
  EXPECT_EQ(lookup("a.json"), result_lookup::not_ready);
  EXPECT_EQ(lookup("checkpoints/c.json"), result_lookup::ok);
  EXPECT_EQ(lookup("checkpoints/missing.json"), result_lookup::not_found);
  for (auto bad : {"", "..", "../a.json", "%2e%2e/a.json", "a/../a.json", "a\\b", "%zz",
                   ".aiperf_results_ready.json", "checkpoints/.aiperf_results_ready.json",
                   "x//y"})
    EXPECT_EQ(lookup(bad), result_lookup::bad_path) << bad;
  ASSERT_TRUE(write_ready_marker(root_, false));
  auto ok = resolve_result(root_, "a.json");
  EXPECT_EQ(ok.status, result_lookup::ok);
  EXPECT_EQ(ok.path.filename(), "a.json");
  EXPECT_EQ(lookup("nested/b.json"), result_lookup::not_found) << "only top-level files";
  EXPECT_EQ(lookup("nested"), result_lookup::not_found) << "a directory";
  EXPECT_EQ(lookup("nope.json"), result_lookup::not_found);
  auto secret = root_.parent_path() / (root_.filename().string() + "-secret.txt");
  std::ofstream{secret} << "s";
  fs::create_symlink(secret, root_ / "escape.txt");
  EXPECT_EQ(lookup("escape.txt"), result_lookup::not_found);
  fs::remove(secret);
}

TEST_F(results_test, a_dir_holding_one_run_directory_serves_that_one) {
  EXPECT_EQ(results_root(root_), root_) << "empty";
  fs::create_directories(root_ / "m-openai-chat-concurrency4");
  fs::create_directories(root_ / "checkpoints");
  EXPECT_EQ(results_root(root_), root_ / "m-openai-chat-concurrency4");
  fs::create_directories(root_ / "second");
  EXPECT_EQ(results_root(root_), root_) << "two runs: ambiguous";
  fs::remove(root_ / "second");
  write("top.json", "{}");
  EXPECT_EQ(results_root(root_), root_) << "a file at the top: served as is";
}

TEST(status_board, shutdown_is_refused_until_the_run_finished) {
  status_board b;
  EXPECT_FALSE(b.finished());
  EXPECT_FALSE(b.request_shutdown());
  EXPECT_FALSE(b.wait_shutdown(std::chrono::seconds{0})) << "a refused request wakes nobody";
  b.set_finished();
  EXPECT_TRUE(b.request_shutdown());
  EXPECT_TRUE(b.wait_shutdown(std::chrono::hours{1})) << "a request before the wait counts";
}

TEST(status_board, a_forced_shutdown_ends_the_wait_before_the_run_finished) {
  status_board b;
  b.force_shutdown();
  EXPECT_TRUE(b.wait_shutdown(std::chrono::hours{1}));
  EXPECT_FALSE(b.finished());
}

TEST(render_metrics_json, embeds_the_summary_once_exported) {
  std::string tmpl = (fs::temp_directory_path() / "api_metrics.XXXXXX").string();
  fs::path dir = ::mkdtemp(tmpl.data());
  progress p{"profiling", "complete", 3, 3, 0, 0, 3, 1.0};
  rapidjson::Document d;
  auto before = render_metrics_json(p, true, dir);
  ASSERT_FALSE(d.Parse(before.c_str()).HasParseError()) << before;
  EXPECT_TRUE(d["summary"].IsNull());
  EXPECT_EQ(d["progress"]["requests_completed"].GetUint64(), 3u);
  std::ofstream{dir / "profile_export_aiperf.json"} << R"({"request_count":{"avg":3}})";
  auto after = render_metrics_json(p, true, dir);
  ASSERT_FALSE(d.Parse(after.c_str()).HasParseError()) << after;
  EXPECT_EQ(d["summary"]["request_count"]["avg"].GetInt(), 3);
  std::ofstream{dir / "profile_export_aiperf.json"} << "{torn";
  auto torn = render_metrics_json(p, true, dir);
  ASSERT_FALSE(d.Parse(torn.c_str()).HasParseError()) << torn;
  EXPECT_TRUE(d["summary"].IsNull());
  fs::remove_all(dir);
}

} // namespace
