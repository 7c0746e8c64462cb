// The api_service over real loopback sockets; the actor runs on CAF's
// deterministic test coordinator, the HTTP server on its own I/O thread.
#include "actors/benchmark/api_service/api_service.hpp"
#include "runtime/http_server/http_server.hpp"
#include "tests/runtime/http_server/test_client.hpp"
#include "tests/support/caf_gtest.hpp"

#include <rapidjson/document.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace {

namespace fs = std::filesystem;
namespace http = boost::beast::http;
using namespace aiperf::api_service;
using aiperf::test::http_fetch;

std::string read_file(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

class api_service_fixture : public caf_gtest::fixture<> {
protected:
  api_service_fixture() {
    std::string tmpl = (fs::temp_directory_path() / "api_svc.XXXXXX").string();
    root_ = ::mkdtemp(tmpl.data());
    fs::create_directories(root_ / "dataset");
    fs::create_directories(root_ / "artifacts" / "run");
  }

  ~api_service_fixture() override {
    if (svc_.actor)
      caf::anon_send(svc_.actor, aiperf::proto::stop_atom::value);
    drain();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  api_config config() const {
    api_config cfg;
    cfg.port = 0;
    cfg.dataset_dir = root_ / "dataset";
    cfg.artifact_dir = root_ / "artifacts" / "run";
    cfg.raw_dir = root_ / "raw";
    return cfg;
  }

  void start(api_config cfg) {
    auto spawned = spawn_api_service(sys, std::move(cfg));
    ASSERT_TRUE(spawned) << aiperf::error_message(spawned.error());
    svc_ = *spawned;
    ASSERT_NE(svc_.port, 0);
    drain(); // the actor's init
  }

  void start() { start(config()); }

  aiperf::test::http_reply get(std::string_view target) {
    return http_fetch(svc_.port, http::verb::get, target);
  }

  aiperf::test::http_reply put(std::string_view target, std::string_view body) {
    return http_fetch(svc_.port, http::verb::put, target, body);
  }

  void write(const fs::path& p, std::string_view contents) {
    std::ofstream{p, std::ios::binary} << contents;
  }

  fs::path root_;
  api_handle svc_;
};

TEST_F(api_service_fixture, healthz_is_always_ok_and_readyz_follows_the_actor) {
  start();
  EXPECT_EQ(get("/healthz").status, 200u);
  EXPECT_EQ(get("/readyz").status, 503u);
  self->send(svc_.actor, ready_atom::value, true);
  drain();
  auto ready = get("/readyz");
  EXPECT_EQ(ready.status, 200u);
  EXPECT_EQ(ready.body, R"({"ready":true})");
  self->send(svc_.actor, ready_atom::value, false);
  drain();
  EXPECT_EQ(get("/readyz").status, 503u);
  EXPECT_EQ(get("/healthz?verbose=1").status, 200u);
}

TEST_F(api_service_fixture, progress_json_reflects_the_last_update) {
  start();
  auto initial = get("/api/progress");
  EXPECT_EQ(initial.status, 200u);
  EXPECT_NE(initial.body.find(R"("state":"initializing")"), std::string::npos);

  self->send(svc_.actor, progress_atom::value,
             progress{"warmup", "running", 1, 0, 1, 0, 5, 0.0});
  self->send(svc_.actor, progress_atom::value,
             progress{"profiling", "running", 40, 30, 10, 2, 100, 15.0});
  drain();
  auto r = get("/api/progress");
  ASSERT_EQ(r.status, 200u);
  EXPECT_EQ(r.content_type, "application/json");
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(r.body.c_str()).HasParseError()) << r.body;
  EXPECT_STREQ(d["phase"].GetString(), "profiling");
  EXPECT_EQ(d["requests_sent"].GetUint64(), 40u);
  EXPECT_EQ(d["requests_completed"].GetUint64(), 30u);
  EXPECT_EQ(d["requests_in_flight"].GetUint64(), 10u);
  EXPECT_EQ(d["request_errors"].GetUint64(), 2u);
  EXPECT_EQ(d["requests_total"].GetUint64(), 100u);
  EXPECT_EQ(d["requests_per_second"].GetDouble(), 15.0);
}

TEST_F(api_service_fixture, pods_json_reflects_the_last_update) {
  start();
  auto initial = get("/api/pods");
  ASSERT_EQ(initial.status, 200u);
  EXPECT_NE(initial.body.find(R"("registration":"not_started")"),
            std::string::npos)
      << initial.body;
  pods_status s;
  s.registration = "complete";
  s.pods_expected = 1;
  s.pods.push_back(pod_status{"pod0", true});
  self->send(svc_.actor, pods_atom::value, s);
  drain();
  auto r = get("/api/pods");
  ASSERT_EQ(r.status, 200u);
  EXPECT_EQ(r.content_type, "application/json");
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(r.body.c_str()).HasParseError()) << r.body;
  EXPECT_STREQ(d["registration"].GetString(), "complete");
  EXPECT_EQ(d["pods_registered"].GetUint(), 1u);
  EXPECT_STREQ(d["pods"][0]["name"].GetString(), "pod0");
  // Readiness is not registration: /readyz still follows ready_atom.
  EXPECT_EQ(get("/readyz").status, 503u);
  EXPECT_EQ(http_fetch(svc_.port, http::verb::put, "/api/pods", "x").status,
            405u);
}

TEST_F(api_service_fixture, metrics_are_prometheus_text) {
  start();
  self->send(svc_.actor, progress_atom::value,
             progress{"profiling", "running", 7, 5, 2, 1, 0, 1.5});
  drain();
  auto r = get("/metrics");
  ASSERT_EQ(r.status, 200u);
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4");
  EXPECT_NE(r.body.find("aiperf_requests_sent_total{phase=\"profiling\"} 7\n"),
            std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("aiperf_ready 0\n"), std::string::npos);
}

TEST_F(api_service_fixture, dataset_files_stream_byte_exact) {
  // 2.5 MiB of random bytes: several 1 MiB blocks plus a partial one.
  std::string data(5 << 19, '\0');
  std::mt19937 rng{42};
  for (auto& c : data)
    c = static_cast<char>(rng());
  write(root_ / "dataset" / "dataset.dat.zst", data);
  write(root_ / "dataset" / "index.dat.zst", "idx");
  start();
  auto r = get("/api/dataset/dataset.dat.zst");
  ASSERT_EQ(r.status, 200u);
  EXPECT_EQ(r.content_type, "application/zstd");
  EXPECT_EQ(r.body.size(), data.size());
  EXPECT_TRUE(r.body == data);
  EXPECT_EQ(get("/api/dataset/index.dat.zst").body, "idx");
  // Only the two dataset files are served, whatever else is in the dir.
  write(root_ / "dataset" / "other.txt", "x");
  EXPECT_EQ(get("/api/dataset/other.txt").status, 404u);
  EXPECT_EQ(get("/api/dataset/../artifacts/run/x").status, 404u);
}

TEST_F(api_service_fixture, missing_dataset_is_404) {
  auto cfg = config();
  cfg.dataset_dir.clear();
  start(cfg);
  auto r = get("/api/dataset/dataset.dat.zst");
  EXPECT_EQ(r.status, 404u);
  EXPECT_NE(r.body.find("serves no dataset"), std::string::npos);
}

TEST_F(api_service_fixture, artifacts_are_listed_and_served_without_traversal) {
  auto run = root_ / "artifacts" / "run";
  write(run / "profile_export_aiperf.json", R"({"ok":true})");
  fs::create_directories(run / "logs");
  write(run / "logs" / "a.log", "log");
  write(root_ / "artifacts" / "secret.txt", "secret");
  fs::create_symlink(root_ / "artifacts" / "secret.txt", run / "escape.txt");
  start();

  auto list = get("/api/artifacts");
  ASSERT_EQ(list.status, 200u);
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(list.body.c_str()).HasParseError()) << list.body;
  ASSERT_TRUE(d["files"].IsArray());
  std::vector<std::string> paths;
  for (const auto& f : d["files"].GetArray())
    paths.emplace_back(f["path"].GetString());
  EXPECT_NE(std::find(paths.begin(), paths.end(), "logs/a.log"), paths.end());
  EXPECT_NE(std::find(paths.begin(), paths.end(), "profile_export_aiperf.json"),
            paths.end());

  auto json = get("/api/artifacts/profile_export_aiperf.json");
  EXPECT_EQ(json.status, 200u);
  EXPECT_EQ(json.content_type, "application/json");
  EXPECT_EQ(json.body, R"({"ok":true})");
  EXPECT_EQ(get("/api/artifacts/logs/a.log").body, "log");

  for (const char* bad :
       {"/api/artifacts/../secret.txt", "/api/artifacts/%2e%2e/secret.txt",
        "/api/artifacts/logs/../../secret.txt", "/api/artifacts/escape.txt",
        "/api/artifacts/logs", "/api/artifacts/nope.json"}) {
    auto r = get(bad);
    EXPECT_EQ(r.status, 404u) << bad;
    EXPECT_EQ(r.body.find("secret"), std::string::npos) << bad;
  }
}

TEST_F(api_service_fixture, shutdown_is_409_while_running_and_202_after) {
  start();
  EXPECT_EQ(http_fetch(svc_.port, http::verb::post, "/api/shutdown").status, 409u);
  EXPECT_EQ(get("/api/shutdown").status, 405u);
  svc_.board->set_finished();
  EXPECT_EQ(http_fetch(svc_.port, http::verb::post, "/api/shutdown").status, 202u);
  EXPECT_TRUE(svc_.board->wait_shutdown(std::chrono::seconds{0}));
}

TEST_F(api_service_fixture, cancel_stops_a_running_run_once_and_is_409_after) {
  start();
  auto post = [&] { return http_fetch(svc_.port, http::verb::post, "/api/cancel"); };
  EXPECT_EQ(post().status, 409u) << "no run hooked up yet";
  std::atomic<int> cancels{0};
  svc_.board->on_cancel([&] { ++cancels; });
  EXPECT_EQ(get("/api/cancel").status, 405u);
  auto r = post();
  EXPECT_EQ(r.status, 202u);
  EXPECT_EQ(r.body, R"({"status":"cancelling"})");
  EXPECT_EQ(cancels.load(), 1);
  svc_.board->set_finished();
  EXPECT_EQ(post().status, 409u);
  EXPECT_EQ(cancels.load(), 1);
}

TEST_F(api_service_fixture, results_routes_serve_the_artifact_dir) {
  auto run = root_ / "artifacts" / "run";
  write(run / "profile_export_aiperf.json", R"({"ok":true})");
  start();
  auto early = get("/api/results/files/profile_export_aiperf.json");
  EXPECT_EQ(early.status, 404u);
  EXPECT_NE(early.body.find("Results not ready"), std::string::npos) << early.body;
  write(run / ".aiperf_results_ready.json", R"({"ready": true, "was_cancelled": false})");
  auto list = get("/api/results/list");
  ASSERT_EQ(list.status, 200u);
  EXPECT_NE(list.body.find(R"({"name":"profile_export_aiperf.json","size":11})"),
            std::string::npos)
    << list.body;
  auto file = get("/api/results/files/profile_export_aiperf.json");
  EXPECT_EQ(file.status, 200u);
  EXPECT_EQ(file.body, R"({"ok":true})");
  EXPECT_EQ(get("/api/results/files/.aiperf_results_ready.json").status, 400u);
  EXPECT_EQ(get("/api/results/files/%2e%2e/x").status, 400u);
  auto metrics = get("/api/metrics");
  EXPECT_EQ(metrics.status, 200u);
  EXPECT_NE(metrics.body.find(R"("summary":{"ok":true})"), std::string::npos) << metrics.body;
}

TEST_F(api_service_fixture, raw_part_upload_is_staged_durably) {
  start();
  auto r = put("/api/raw/3", "{\"a\":1}\n{\"b\":2}\n");
  ASSERT_EQ(r.status, 200u) << r.body;
  rapidjson::Document d;
  ASSERT_FALSE(d.Parse(r.body.c_str()).HasParseError()) << r.body;
  EXPECT_STREQ(d["pod"].GetString(), "3");
  EXPECT_EQ(d["bytes"].GetUint64(), 16u);
  auto staged = root_ / "raw" / "profile_export_raw.pod-3.jsonl";
  EXPECT_EQ(read_file(staged), "{\"a\":1}\n{\"b\":2}\n");
  // Only the staged file is left: the temp file was renamed, not copied.
  EXPECT_EQ(std::distance(fs::directory_iterator{root_ / "raw"},
                          fs::directory_iterator{}),
            1);

  // A retry replaces the part; an empty part is valid (a pod with no
  // records).
  ASSERT_EQ(put("/api/raw/3", "{\"c\":3}\n").status, 200u);
  ASSERT_EQ(put("/api/raw/0", "").status, 200u);
  EXPECT_EQ(read_file(staged), "{\"c\":3}\n");

  auto parts = request<std::vector<raw_part>>(svc_.actor, caf::get_atom::value,
                                              raw_atom::value);
  ASSERT_TRUE(parts) << sys.render(parts.error());
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].pod, "0");
  EXPECT_EQ((*parts)[0].bytes, 0u);
  EXPECT_EQ((*parts)[1].pod, "3");
  EXPECT_EQ((*parts)[1].bytes, 8u);
  EXPECT_EQ((*parts)[1].path, staged.string());
  EXPECT_NE(get("/metrics").body.find("aiperf_raw_parts_staged 2\n"),
            std::string::npos);
}

TEST_F(api_service_fixture, bad_raw_uploads_are_refused) {
  start();
  auto truncated = put("/api/raw/1", "{\"a\":1}\n{\"b\"");
  EXPECT_EQ(truncated.status, 400u);
  EXPECT_NE(truncated.body.find("newline"), std::string::npos);
  auto bad_pod = put("/api/raw/..%2fx", "x\n");
  EXPECT_EQ(bad_pod.status, 400u);
  EXPECT_NE(bad_pod.body.find("pod name"), std::string::npos);
  EXPECT_EQ(get("/api/raw/1").status, 405u);
  EXPECT_FALSE(fs::exists(root_ / "raw" / "profile_export_raw.pod-1.jsonl"));
  auto parts = request<std::vector<raw_part>>(svc_.actor, caf::get_atom::value,
                                              raw_atom::value);
  ASSERT_TRUE(parts);
  EXPECT_TRUE(parts->empty());
}

TEST_F(api_service_fixture, uploads_over_the_limit_are_413) {
  auto cfg = config();
  cfg.upload_limit = 16;
  start(cfg);
  EXPECT_EQ(put("/api/raw/1", std::string(64, 'x') + "\n").status, 413u);
}

TEST_F(api_service_fixture, wrong_method_and_unknown_path) {
  start();
  auto r = put("/healthz", "");
  EXPECT_EQ(r.status, 405u);
  EXPECT_EQ(get("/nope").status, 404u);
}

TEST_F(api_service_fixture, stop_closes_the_port) {
  start();
  auto port = svc_.port;
  ASSERT_EQ(get("/healthz").status, 200u);
  self->send(svc_.actor, aiperf::proto::stop_atom::value);
  drain();
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket s{ioc};
  boost::system::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port}, ec);
  EXPECT_TRUE(ec) << "port " << port << " still accepts after stop";
  svc_.actor = nullptr;
}

TEST_F(api_service_fixture, invalid_host_fails_at_spawn) {
  auto cfg = config();
  cfg.host = "not-an-address";
  auto r = spawn_api_service(sys, cfg);
  ASSERT_FALSE(r);
  EXPECT_TRUE(aiperf::is_error(r.error(), aiperf::http_server::errc::bad_config));
  EXPECT_NE(aiperf::error_message(r.error()).find("not-an-address"), std::string::npos)
      << aiperf::error_message(r.error());
}

TEST_F(api_service_fixture, unwritable_raw_dir_fails_at_spawn) {
  write(root_ / "file", "x");
  auto cfg = config();
  cfg.raw_dir = root_ / "file" / "raw";
  auto r = spawn_api_service(sys, cfg);
  ASSERT_FALSE(r);
  EXPECT_TRUE(aiperf::is_error(r.error(), aiperf::benchmark::errc::invalid_config));
  EXPECT_NE(aiperf::error_message(r.error()).find("raw_dir"), std::string::npos)
      << aiperf::error_message(r.error());
}

} // namespace
