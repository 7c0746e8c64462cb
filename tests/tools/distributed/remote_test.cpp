#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "actors/benchmark/api_service/api_service.hpp"
#include "actors/benchmark/dataset/dataset_file.hpp"
#include "runtime/http_fetch/http_fetch.hpp"
#include "actors/benchmark/remote/layout.hpp"
#include "actors/benchmark/remote/ports_file.hpp"
#include "proto/atoms.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace aiperf::remote {
namespace {

namespace fs = std::filesystem;

TEST(layout, splits_totals_evenly_and_names_services) {
  auto made = make_layout(8, 4, 2);
  ASSERT_TRUE(made) << error_message(made.error());
  const auto& l = *made;
  EXPECT_EQ(l.workers_per_pod, 4u);
  EXPECT_EQ(l.processors_per_pod, 2u);
  EXPECT_EQ(l.worker_index(1, 2), 6u);
  EXPECT_EQ(l.pod_of_worker(6), 1u);
  auto ids = expected_services(l);
  // Per pod: its group, 4 workers, 2 processors.
  ASSERT_EQ(ids.size(), 14u);
  EXPECT_EQ(ids[0], "pod0");
  EXPECT_EQ(ids[1], "pod0/worker_0");
  EXPECT_EQ(ids[5], "pod0/record_processor_0");
  EXPECT_EQ(ids[7], "pod1");
}

TEST(layout, every_pod_gets_a_processor) {
  auto l = make_layout(4, 1, 2);
  ASSERT_TRUE(l) << error_message(l.error());
  EXPECT_EQ(l->processors_per_pod, 1u);
}

TEST(layout, uneven_splits_name_the_flag) {
  auto l = make_layout(5, 2, 2);
  ASSERT_FALSE(l);
  EXPECT_TRUE(is_error(l.error(), errc::bad_layout));
  auto msg = error_message(l.error());
  EXPECT_NE(msg.find("--workers-max 5"), std::string::npos) << msg;
  l = make_layout(4, 3, 2);
  ASSERT_FALSE(l);
  msg = error_message(l.error());
  EXPECT_NE(msg.find("--record-processors 3"), std::string::npos) << msg;
  EXPECT_FALSE(make_layout(4, 2, 0));
}

std::string slurp(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ports_file, names_every_bound_port) {
  zmq_bridge::bound_endpoints bound;
  bound.tcp.control = "tcp://0.0.0.0:40001";
  bound.tcp.credit = "tcp://127.0.0.1:40002";
  bound.tcp.credit_return = "tcp://[::1]:40003";
  bound.tcp.records = "tcp://0.0.0.0:40004";
  bound.ipc.control = "ipc:///tmp/x/control.ipc";
  auto ports = bound_ports(bound, 40000);
  ASSERT_TRUE(ports) << error_message(ports.error());
  EXPECT_EQ(*ports, (controller_ports{40000, 40001, 40002, 40003, 40004}));
  EXPECT_EQ(to_json(*ports), R"({"api":40000,"control":40001,"credit":40002,)"
                             R"("credit_return":40003,"records":40004})");
  std::string tmpl = "/tmp/aiperf-ports-test-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl.data()));
  fs::path file = fs::path{tmpl} / "ports.json";
  ASSERT_TRUE(write_ports_file(file, *ports));
  EXPECT_EQ(slurp(file), to_json(*ports) + "\n");
  // Only the object: no temp file left next to it.
  EXPECT_EQ(std::distance(fs::directory_iterator{tmpl}, fs::directory_iterator{}), 1);
  std::error_code ec;
  fs::remove_all(tmpl, ec);
}

TEST(ports_file, an_unbound_channel_is_named) {
  zmq_bridge::bound_endpoints bound;
  bound.tcp.control = "tcp://0.0.0.0:40001";
  bound.tcp.credit = "tcp://0.0.0.0:40002";
  bound.tcp.credit_return = "tcp://0.0.0.0:0";
  bound.tcp.records = "tcp://0.0.0.0:40004";
  auto ports = bound_ports(bound, 40000);
  ASSERT_FALSE(ports);
  EXPECT_TRUE(is_error(ports.error(), errc::bad_endpoint));
  auto msg = error_message(ports.error());
  EXPECT_NE(msg.find("credit_return"), std::string::npos) << msg;
  bound.tcp.credit_return = "ipc:///tmp/x.ipc";
  EXPECT_FALSE(bound_ports(bound, 40000));
}

dataset::dataset sample_dataset() {
  dataset::dataset ds;
  for (int c = 0; c < 50; ++c) {
    dataset::conversation conv;
    conv.session_id = "session-" + std::to_string(c);
    for (int t = 0; t < 3; ++t) {
      dataset::turn turn;
      turn.text = std::string(100 + c * 7 + t, static_cast<char>('a' + t));
      turn.input_tokens = 10 + c;
      turn.max_output_tokens = 5 + t;
      conv.turns.push_back(std::move(turn));
    }
    ds.conversations.push_back(std::move(conv));
  }
  return ds;
}

// What a pod does: download both .zst files from the controller's API and
// import them. The bytes must match what the controller exported, and the
// imported dataset what it encoded.
TEST(dataset_transfer, download_through_the_api_is_byte_exact) {
  std::string tmpl = "/tmp/aiperf-remote-test-XXXXXX";
  ASSERT_TRUE(mkdtemp(tmpl.data()));
  fs::path root{tmpl};
  auto src = root / "served";
  auto dst = root / "pod";
  fs::create_directories(src);
  fs::create_directories(dst);
  auto ds = sample_dataset();
  ASSERT_TRUE(dataset::export_compressed(ds, src));

  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  api_service::api_config acfg;
  acfg.port = 0;
  acfg.dataset_dir = src;
  auto api = api_service::spawn_api_service(sys, acfg);
  ASSERT_TRUE(api) << error_message(api.error());
  http_fetch::endpoint ep{"127.0.0.1", api->port};
  for (auto name : {dataset::data_zst_file_name, dataset::index_zst_file_name}) {
    auto r = http_fetch::get(ep, "/api/dataset/" + std::string{name},
                      std::chrono::seconds{30});
    ASSERT_EQ(r.status, 200) << r.error << r.body;
    EXPECT_EQ(r.body, slurp(src / std::string{name})) << name;
    std::ofstream{dst / std::string{name}, std::ios::binary} << r.body;
  }
  auto missing = http_fetch::get(ep, "/api/dataset/nope.zst", std::chrono::seconds{30});
  EXPECT_EQ(missing.status, 404);
  auto imported = dataset::import_compressed(dst);
  ASSERT_TRUE(imported) << error_message(imported.error());
  auto a = dataset::encode_dataset(ds);
  auto b = dataset::encode_dataset(*imported);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->data, b->data);
  EXPECT_EQ(a->index, b->index);
  caf::anon_send(api->actor, proto::stop_atom::value);
  std::error_code ec;
  fs::remove_all(root, ec);
}

TEST(http_fetch, connection_refused_is_an_error_naming_the_endpoint) {
  auto r = http_fetch::get({"127.0.0.1", 1}, "/", std::chrono::seconds{5});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.error.find("127.0.0.1:1"), std::string::npos) << r.error;
}

} // namespace
} // namespace aiperf::remote
