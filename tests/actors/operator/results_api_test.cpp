// The results server's read routes over a results directory laid out as
// the harvest writes it: bodies, newest-first order, latest, and every
// refusal (epoch-less routes, bad keys and names, traversal, symlinks,
// runs not ready).
#include "actors/operator/harvest.hpp"
#include "actors/operator/results_api.hpp"
#include "k8s/api/json.hpp"
#include "runtime/io/zstd_stream.hpp"

#include <boost/crc.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

namespace aiperf::op {
namespace {

namespace fs = std::filesystem;
using k8s::json;

struct results_api : ::testing::Test {
  fs::path base = fs::temp_directory_path() / ("results-api-" + std::to_string(::getpid()));

  void SetUp() override {
    fs::remove_all(base);
    run("bench", "nightly", "1796205600123456", true);
    run("bench", "nightly", "1796205700654321", true);
    run("bench", "nightly", "1796205800000001", false); // still harvesting
    latest("bench", "nightly", "1796205700654321");
    run("other", "one", "1796000000", true);
  }
  void TearDown() override { fs::remove_all(base); }

  void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream{p, std::ios::binary} << text;
  }
  void run(const std::string& ns, const std::string& job, const std::string& epoch, bool ready) {
    auto dir = base / ns / job / epoch;
    write(dir / "profile_export_aiperf.json", R"({"request_count":{"avg":5}})");
    write(dir / "profile_export.jsonl", "{}\n{}\n");
    write(dir / "checkpoints" / "part-1.json", "[1]");
    write(dir / "job_spec.json", "{}");
    if (ready)
      write(dir / ".aiperf_results_ready.json", R"({"ready":true})");
  }
  void latest(const std::string& ns, const std::string& job, const std::string& epoch) {
    write(base / ns / job / "latest.txt", epoch + "\n");
  }
  results_reply get(const std::string& target) { return answer_results(base, target); }
  json body(const std::string& target) {
    auto r = get(target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    return json::parse(r.body, nullptr, false);
  }
  std::string detail(const std::string& target, int status) {
    auto r = get(target);
    EXPECT_EQ(r.status, status) << target << ": " << r.body;
    return json::parse(r.body, nullptr, false).value("detail", std::string{"<no detail>"});
  }
};

TEST_F(results_api, lists_every_job_with_its_latest_run) {
  auto b = body("/api/v1/results");
  EXPECT_EQ(b["results"].dump(),
            json::array({{{"namespace", "bench"},
                          {"job_id", "nightly"},
                          {"latest_epoch", "1796205700654321"},
                          {"run_count", 3}},
                         {{"namespace", "other"},
                          {"job_id", "one"},
                          {"latest_epoch", nullptr},
                          {"run_count", 1}}})
                .dump());
  EXPECT_EQ(get("/api/v1/resultsx").status, 0) << "not a results route";
  EXPECT_EQ(get("/healthz").status, 0);
}

TEST_F(results_api, runs_come_newest_first_and_mark_the_latest) {
  auto b = body("/api/v1/results/bench/nightly/runs");
  EXPECT_EQ(b["latest_epoch"], "1796205700654321");
  ASSERT_EQ(b["runs"].size(), 3u);
  EXPECT_EQ(b["runs"][0]["epoch"], "1796205800000001");
  EXPECT_EQ(b["runs"][1]["epoch"], "1796205700654321");
  EXPECT_EQ(b["runs"][1]["is_latest"], true);
  EXPECT_EQ(b["runs"][0]["is_latest"], false);
  EXPECT_EQ(b["runs"][1]["file_count"], 4); // the marker is not a file of the run
  EXPECT_EQ(b["runs"][1]["total_size_bytes"], 27 + 6 + 3 + 2);
  EXPECT_GT(b["runs"][1]["mtime_epoch"].get<std::int64_t>(), 1'700'000'000);
  EXPECT_EQ(detail("/api/v1/results/bench/missing/runs", 404), "no runs of bench/missing");
  // latest.txt naming a run that is gone: null, never a guess.
  latest("bench", "nightly", "1796205900000000");
  EXPECT_EQ(body("/api/v1/results/bench/nightly/runs")["latest_epoch"], nullptr);
}

TEST_F(results_api, a_run_lists_its_files_and_readiness) {
  auto b = body("/api/v1/results/bench/nightly/runs/1796205600123456");
  EXPECT_EQ(b["ready"], true);
  EXPECT_EQ(b["summary_available"], true);
  EXPECT_EQ(b["per_record_filename"], "profile_export.jsonl");
  EXPECT_EQ(b["server_metrics_filename"], nullptr);
  EXPECT_EQ(b["files"].dump(),
            json::array({{{"name", "checkpoints/part-1.json"}, {"size", 3}},
                         {{"name", "job_spec.json"}, {"size", 2}},
                         {{"name", "profile_export.jsonl"}, {"size", 6}},
                         {{"name", "profile_export_aiperf.json"}, {"size", 27}}})
                .dump());
  EXPECT_EQ(body("/api/v1/results/bench/nightly/runs/1796205800000001")["ready"], false);
}

TEST_F(results_api, files_are_served_once_the_run_is_ready) {
  auto f = get("/api/v1/results/bench/nightly/runs/1796205600123456/profile_export.jsonl");
  EXPECT_EQ(f.status, 200);
  EXPECT_EQ(f.body, "{}\n{}\n");
  EXPECT_EQ(f.filename, "profile_export.jsonl");
  auto nested = get("/api/v1/results/bench/nightly/runs/1796205600123456/checkpoints/part-1.json");
  EXPECT_EQ(nested.body, "[1]");
  EXPECT_EQ(nested.content_type, "application/json");
  auto pe = get("/api/v1/results/bench/nightly/runs/1796205600123456/profile_export?format=json");
  EXPECT_EQ(pe.body, R"({"request_count":{"avg":5}})");
  EXPECT_EQ(detail("/api/v1/results/bench/nightly/runs/1796205800000001/job_spec.json", 404),
            "run bench/nightly/1796205800000001 is not ready: .aiperf_results_ready.json is "
            "missing");
  EXPECT_EQ(detail("/api/v1/results/bench/nightly/runs/1796205600123456/nope.json", 404),
            "no file nope.json in run bench/nightly/1796205600123456");
  detail("/api/v1/results/bench/nightly/runs/1796205600123456/profile_export?format=csv", 400);
}

TEST_F(results_api, files_come_zstd_compressed_to_a_client_that_accepts_it) {
  const std::string route = "/api/v1/results/bench/nightly/runs/1796205600123456/job_spec.json";
  auto packed = answer_results(base, route, "gzip, zstd;q=0.9, identity");
  EXPECT_EQ(packed.content_encoding, "zstd");
  std::string plain;
  io::zstd_decompressor z{[&plain](std::string_view c) {
                            plain.append(c);
                            return true;
                          },
                          "job_spec.json"};
  ASSERT_TRUE(z.write(packed.body));
  ASSERT_TRUE(z.finish());
  EXPECT_EQ(plain, "{}");
  EXPECT_EQ(answer_results(base, route, "gzip, identity").content_encoding, "");
  EXPECT_EQ(answer_results(base, route, "zstd;q=0, *").content_encoding, "");
  EXPECT_EQ(answer_results(base, route, "*").content_encoding, "zstd");
  // JSON answers and archives are never compressed.
  EXPECT_EQ(answer_results(base, "/api/v1/results", "zstd").content_encoding, "");
  EXPECT_EQ(answer_results(base, "/api/v1/results/bench/nightly/runs/1796205600123456.zip", "zstd")
                .content_encoding,
            "");
  EXPECT_TRUE(accepts_zstd("ZSTD")) << "codings are case-insensitive";
  EXPECT_FALSE(accepts_zstd(""));
  EXPECT_FALSE(accepts_zstd("zstd;q=0.000"));
}

TEST_F(results_api, there_is_no_epoch_less_artifact_route) {
  for (const char* t : {"/api/v1/results/bench/nightly", "/api/v1/results/bench/nightly.zip",
                        "/api/v1/results/bench/nightly/profile_export_aiperf.json"})
    EXPECT_EQ(detail(t, 409).rfind("an epoch is required", 0), 0u) << t;
}

TEST_F(results_api, bad_keys_names_and_paths_are_refused) {
  detail("/api/v1/results/bench/nightly/runs/latest", 422);
  detail("/api/v1/results/bench/nightly/runs/12345678", 422);
  detail("/api/v1/results/bench/nightly/runs/17962056001234567", 422);
  detail("/api/v1/results/Bench/nightly/runs", 400);
  detail("/api/v1/results/bench/night_ly/runs", 400);
  for (const char* t : {"/api/v1/results/bench/nightly/runs/1796205600123456/../../other",
                        "/api/v1/results/bench/nightly/runs/1796205600123456/%2e%2e/x",
                        "/api/v1/results/bench/nightly/runs/1796205600123456//etc/passwd",
                        "/api/v1/results/bench/nightly/runs/1796205600123456/a%2fb",
                        "/api/v1/results/bench/nightly/runs/1796205600123456/%zz"})
    detail(t, 400);
  // A symlink placed in the tree is never followed.
  auto run = base / "bench" / "nightly" / "1796205600123456";
  fs::create_symlink("/etc", run / "etc");
  EXPECT_EQ(detail("/api/v1/results/bench/nightly/runs/1796205600123456/etc/hostname", 400),
            "the path leaves the run directory (a symlink)");
  auto b = body("/api/v1/results/bench/nightly/runs/1796205600123456");
  for (const auto& f : b["files"])
    EXPECT_EQ(f["name"].get<std::string>().rfind("etc", 0), std::string::npos);
}

// The archive read back by its central directory, as unzip does: every
// entry's name, its data at the local header's offset, and its CRC-32.
TEST_F(results_api, a_ready_run_comes_as_one_zip_archive) {
  auto r = get("/api/v1/results/bench/nightly/runs/1796205600123456.zip");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/zip");
  EXPECT_EQ(r.filename, "bench__nightly__1796205600123456.zip");
  const auto& z = r.body;
  auto u16 = [&](std::size_t at) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(z[at]))
           | static_cast<std::uint32_t>(static_cast<unsigned char>(z[at + 1])) << 8;
  };
  auto u32 = [&](std::size_t at) { return u16(at) | u16(at + 2) << 16; };
  ASSERT_GE(z.size(), 22u);
  auto eocd = z.size() - 22;
  ASSERT_EQ(u32(eocd), 0x06054b50u);
  ASSERT_EQ(u16(eocd + 10), 4u); // entries
  std::size_t at = u32(eocd + 16);
  std::vector<std::string> names;
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(u32(at), 0x02014b50u);
    auto crc = u32(at + 16);
    auto size = u32(at + 24);
    auto name = z.substr(at + 46, u16(at + 28));
    auto local = u32(at + 42);
    ASSERT_EQ(u32(local), 0x04034b50u);
    auto data = z.substr(local + 30 + u16(local + 26), size);
    boost::crc_32_type check;
    check.process_bytes(data.data(), data.size());
    EXPECT_EQ(check.checksum(), crc) << name;
    std::ifstream in{base / "bench" / "nightly" / "1796205600123456" / name, std::ios::binary};
    std::stringstream stored;
    stored << in.rdbuf();
    EXPECT_EQ(data, stored.str()) << name;
    names.push_back(name);
    at += 46 + name.size();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"checkpoints/part-1.json", "job_spec.json",
                                             "profile_export.jsonl",
                                             "profile_export_aiperf.json"}));
  detail("/api/v1/results/bench/nightly/runs/1796205800000001.zip", 404); // not ready
}

TEST_F(results_api, retention_keeps_the_newest_the_latest_and_runs_still_written) {
  // bench/nightly: ...800 (not ready), ...700 (latest), ...600; add older ones.
  for (const char* e : {"1796205500000000", "1796205400000000", "1795000000000000"})
    run("bench", "nightly", e, true);
  auto job = base / "bench" / "nightly";
  std::int64_t now = 1796205900;
  // The three newest are kept (...800, unready, counts as kept).
  EXPECT_EQ(runs_to_prune(job, 3, 0, now, "1796205800000001"),
            (std::vector<std::string>{"1796205500000000", "1796205400000000",
                                      "1795000000000000"}));
  // The latest survives even when the count says otherwise.
  EXPECT_EQ(runs_to_prune(job, 1, 0, now, "1796205800000001"),
            (std::vector<std::string>{"1796205600123456", "1796205500000000", "1796205400000000",
                                      "1795000000000000"}));
  // TTL: 10 days removes the run from 14 days before.
  EXPECT_EQ(runs_to_prune(job, 0, 10, now, ""), (std::vector<std::string>{"1795000000000000"}));
  EXPECT_TRUE(runs_to_prune(job, 0, 0, now, "").empty());
  // The run just stored is never removed, whatever its age.
  latest("bench", "nightly", "1796205800000001");
  EXPECT_EQ(runs_to_prune(job, 0, 10, now, "1795000000000000"), std::vector<std::string>{});
}

TEST_F(results_api, the_ttl_sweep_removes_old_runs_of_every_job_by_its_own_ttl) {
  // other/one: one run, the latest is unset; its job_spec says 400 days.
  write(base / "other" / "one" / "1796000000" / "job_spec.json", R"({"resultsTtlDays":400})");
  run("other", "one", "1780000000", true);
  run("bench", "nightly", "1780000000000000", true);
  std::int64_t now = 1796205900;
  auto removed = sweep_results(base, 30, now);
  // bench/nightly's old run goes (30 days); other/one's is 187 days old,
  // within its own 400.
  EXPECT_EQ(removed, (std::vector<std::string>{"bench/nightly/1780000000000000"}));
  EXPECT_FALSE(fs::exists(base / "bench" / "nightly" / "1780000000000000"));
  EXPECT_TRUE(fs::exists(base / "other" / "one" / "1780000000"));
  EXPECT_TRUE(sweep_results(base, 0, now).empty()) << "0 = never";
}

TEST(results_epoch, keys_are_seconds_with_an_optional_six_digit_suffix) {
  for (const char* ok : {"179620560", "1796205600", "179620560123456", "1796205600123456"})
    EXPECT_TRUE(is_epoch_key(ok)) << ok;
  for (const char* bad : {"", "17962056", "17962056001", "1796205600x23456", "-796205600",
                          "17962056001234567"})
    EXPECT_FALSE(is_epoch_key(bad)) << bad;
}

} // namespace
} // namespace aiperf::op
