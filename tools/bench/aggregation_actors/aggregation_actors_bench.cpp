// Benchmark 5 — aggregation through the shipped actors: N streaming request
// records (64 content responses each: 63 ICL values, every metric) are sent
// in worker-sized batches of 64 to a record_processor, which forwards metric
// batches to a records_manager; then (process_atom, N, run_info) asks for the
// exports. Measures wall and CPU time from the first batch to the
// export_outcome, and peak RSS. The same actors and messages as a profile
// run; only the worker (HTTP) side is replaced by pre-built records.
//
// Usage: aggregation_actors_bench [records=1000000] [summary|records]
//   (records writes profile_export.jsonl, ~1.5 KB per record, into a temp dir)
#include "actors/benchmark/record_processor/record_processor.hpp"
#include "actors/benchmark/records_manager/records_manager.hpp"
#include "runtime/system/node.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

using namespace aiperf;

namespace {

double cpu_seconds(int who = RUSAGE_SELF) {
  rusage ru{};
  getrusage(who, &ru);
  auto tv = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return tv(ru.ru_utime) + tv(ru.ru_stime);
}

long peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024;
}

} // namespace

int main(int argc, char** argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 1'000'000;
  std::string_view level_arg = argc > 2 ? argv[2] : "summary";
  if (n <= 0 || (level_arg != "summary" && level_arg != "records")) {
    std::fprintf(stderr, "usage: aggregation_actors_bench [records>0] "
                         "[summary|records]\n");
    return 2;
  }
  constexpr int responses = 64;
  constexpr std::size_t batch_size = 64;
  metrics::metric_options opts;
  opts.streaming = true;

  auto dir = std::filesystem::temp_directory_path()
             / ("aggregation_actors_bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);

  caf::actor_system_config sys_cfg;
  system::node_options node;
  node.scheduler_policy = "sharing";
  node.scheduler_threads = 0; // profile's default: one per available core
  if (auto applied = system::apply(sys_cfg, node); !applied) {
    std::fprintf(stderr, "error: %s\n",
                 aiperf::error_message(applied.error()).c_str());
    return 2;
  }
  double wall = 0;
  double cpu = 0;
  double producer_cpu = 0;
  proto::export_outcome outcome;
  {
    caf::actor_system sys{sys_cfg};
    records_manager::records_config rcfg;
    rcfg.artifact_dir = dir.string();
    rcfg.level = level_arg == "records" ? records_manager::export_level::records
                                        : records_manager::export_level::summary;
    rcfg.options = opts;
    rcfg.input_config_json = "{}";
    rcfg.benchmark_id = "aggregation-actors-bench";
    auto manager = records_manager::spawn_records_manager(sys, rcfg);
    record_processor::processor_config pcfg;
    pcfg.processor_id = "record_processor_0";
    pcfg.options = opts;
    auto processor = record_processor::spawn_record_processor(sys, pcfg,
                                                              manager);

    proto::request_record rec;
    rec.http_status = 200;
    rec.streaming = true;
    rec.worker_id = "worker_0";
    rec.x_request_id = "8c7e5a2e-3f5b-4a51-9d7c-0d6d2f1c9a11";
    rec.x_correlation_id = "0d6d2f1c-9a11-4a51-9d7c-8c7e5a2e3f5b";
    rec.conversation_id = "session_000001";
    rec.input_tokens = 64;
    rec.requested_output_tokens = 64;
    rec.response_ts_ns.resize(responses);
    rec.response_is_reasoning.assign(responses, 0);
    for (int i = 0; i < responses; ++i)
      rec.output_text += " token";

    std::uint64_t lcg = 12345;
    auto jitter = [&lcg] {
      lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
      return static_cast<std::int64_t>((lcg >> 33) % 2'000'000);
    };
    std::int64_t start = 1'000'000'000;
    proto::phase_stats phase;
    phase.start_ns = start;

    caf::scoped_actor self{sys};
    auto t0 = std::chrono::steady_clock::now();
    auto cpu0 = cpu_seconds();
    auto producer_cpu0 = cpu_seconds(RUSAGE_THREAD);
    proto::request_record_batch batch;
    batch.records.reserve(batch_size);
    for (long i = 0; i < n; ++i) {
      start += 50'000 + jitter() / 100;
      rec.request_start_ns = start;
      rec.request_start_wall_ns = 1'764'000'000'000'000'000 + start;
      auto t = start + 20'000'000 + jitter();
      for (int k = 0; k < responses; ++k) {
        rec.response_ts_ns[static_cast<std::size_t>(k)] = t;
        t += 4'000'000 + jitter();
      }
      rec.request_end_ns = t;
      phase.end_ns = t;
      batch.records.push_back(rec);
      if (batch.records.size() == batch_size || i + 1 == n) {
        self->send(processor, std::move(batch));
        batch = {};
        batch.records.reserve(batch_size);
      }
    }
    // This thread stands in for the workers: its CPU is not aggregation.
    producer_cpu = cpu_seconds(RUSAGE_THREAD) - producer_cpu0;
    phase.sent = phase.returned = static_cast<std::uint64_t>(n);
    proto::run_info info;
    info.phases.push_back(phase);
    bool ok = true;
    self
      ->request(manager, std::chrono::seconds{1800}, proto::process_atom::value,
                static_cast<std::uint64_t>(n), info)
      .receive([&](proto::export_outcome& out) { outcome = std::move(out); },
               [&](caf::error& err) {
                 std::fprintf(stderr, "error: %s\n", sys.render(err).c_str());
                 ok = false;
               });
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
             .count();
    cpu = cpu_seconds() - cpu0;
    self->send_exit(processor, caf::exit_reason::user_shutdown);
    self->send_exit(manager, caf::exit_reason::user_shutdown);
    if (!ok)
      return 1;
  }
  std::uintmax_t bytes = 0;
  for (auto& f : outcome.files)
    if (std::filesystem::exists(f))
      bytes += std::filesystem::file_size(f);
  std::filesystem::remove_all(dir);
  std::printf("records=%ld export_level=%.*s request_count=%llu files=%zu "
              "(%.1f MiB)\n",
              n, static_cast<int>(level_arg.size()), level_arg.data(),
              static_cast<unsigned long long>(outcome.request_count),
              outcome.files.size(), static_cast<double>(bytes) / (1 << 20));
  std::printf("record_processor -> records_manager -> exports: %.3f s wall, "
              "%.3f s CPU (%.0f records/s)\n",
              wall, cpu, static_cast<double>(n) / wall);
  std::printf("of which the record-building producer (the workers' part): "
              "%.3f s CPU; the actors and exports: %.3f s CPU\n",
              producer_cpu, cpu - producer_cpu);
  std::printf("peak RSS: %ld MiB\n", peak_rss_mib());
  return outcome.request_count == static_cast<std::uint64_t>(n) ? 0 : 1;
}
