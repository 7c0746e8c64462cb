// Measures the records path of one run: compute_metrics + metrics_aggregator
// + finalize for N streaming records with 64 content responses each (63 ICL
// values), then the jsonl formatting of the same records. Prints wall time
// and peak RSS. Usage: aggregation_bench [records=1000000]
#include "actors/benchmark/exporters/exporters.hpp"
#include "actors/benchmark/metrics/compute_metrics.hpp"
#include "actors/benchmark/metrics/metrics_aggregator.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>

using namespace aiperf;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

// CPU seconds of this process: robust against other load on shared cores.
double cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto tv = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return tv(ru.ru_utime) + tv(ru.ru_stime);
}

long peak_rss_mib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024; // KiB on Linux
}

} // namespace

int main(int argc, char** argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 1'000'000;
  if (n <= 0) {
    std::fprintf(stderr, "records must be a positive number\n");
    return 2;
  }
  constexpr int responses = 64;
  metrics::metric_options opts;
  opts.streaming = true;
  opts.goodput = {{"time_to_first_token", 30}, {"inter_token_latency", 8}};

  // One reused record, re-stamped each iteration like a worker would.
  proto::request_record rec;
  rec.http_status = 200;
  rec.streaming = true;
  rec.worker_id = "worker_0";
  rec.x_request_id = "8c7e5a2e-3f5b-4a51-9d7c-0d6d2f1c9a11";
  rec.x_correlation_id = "0d6d2f1c-9a11-4a51-9d7c-8c7e5a2e3f5b";
  rec.conversation_id = "session_000001";
  rec.input_tokens = 550;
  rec.requested_output_tokens = 128;
  rec.response_ts_ns.resize(responses);
  rec.response_is_reasoning.assign(responses, 0);
  for (int i = 0; i < 2 * responses; ++i)
    rec.output_text += " token";

  metrics::metrics_aggregator agg{opts};
  std::uint64_t lcg = 12345;
  auto jitter = [&lcg] {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::int64_t>((lcg >> 33) % 2'000'000); // 0..2 ms
  };
  auto t0 = std::chrono::steady_clock::now();
  auto cpu0 = cpu_seconds();
  std::int64_t start = 1'000'000'000;
  for (long i = 0; i < n; ++i) {
    start += 50'000 + jitter() / 100;
    rec.request_start_ns = start;
    rec.request_start_wall_ns = 1'764'000'000'000'000'000 + start;
    auto t = start + 20'000'000 + jitter();
    for (int k = 0; k < responses; ++k) {
      rec.response_ts_ns[k] = t;
      t += 4'000'000 + jitter();
    }
    rec.request_end_ns = t;
    agg.add(metrics::compute_metrics(rec, opts, "record_processor_0"));
  }
  auto t_add = seconds_since(t0);
  auto summary = agg.finalize();
  auto t_total = seconds_since(t0);
  auto cpu_total = cpu_seconds() - cpu0;

  // Breakdown: compute_metrics alone, then aggregator.add alone.
  auto tc = std::chrono::steady_clock::now();
  double sink = 0;
  for (long i = 0; i < n; ++i) {
    rec.request_start_ns += 1000;
    auto m = metrics::compute_metrics(rec, opts, "record_processor_0");
    sink += m.values[0];
  }
  auto t_compute = seconds_since(tc);
  metrics::metrics_aggregator agg2{opts};
  auto sample = metrics::compute_metrics(rec, opts, "record_processor_0");
  auto ta = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    sample.inter_chunk_latency[i % 63] += 1.0;
    agg2.add(sample);
  }
  auto t_agg = seconds_since(ta);

  // jsonl formatting of the same shape of record, into a reused buffer.
  auto m = metrics::compute_metrics(rec, opts, "record_processor_0");
  std::string buf;
  std::size_t bytes = 0;
  auto t1 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    m.request_start_ns += 1000;
    exporters::append_jsonl_line(buf, m);
    if (buf.size() > (1u << 20)) {
      bytes += buf.size();
      buf.clear();
    }
  }
  bytes += buf.size();
  auto t_jsonl = seconds_since(t1);

  const auto* icl = summary.find("inter_chunk_latency");
  std::printf("records=%ld icl_values=%llu percentiles=%s\n", n,
              icl ? static_cast<unsigned long long>(icl->stats->count) : 0ull,
              summary.exact_percentiles ? "exact" : "histogram");
  std::printf("compute_metrics+add: %.3f s (%.0f records/s)\n", t_add,
              static_cast<double>(n) / t_add);
  std::printf("finalize: %.3f s\n", t_total - t_add);
  std::printf("breakdown: compute_metrics alone %.3f s, aggregator.add alone "
              "%.3f s (sink %g)\n",
              t_compute, t_agg, sink > 0 ? 1.0 : 0.0);
  std::printf("total compute+aggregate+finalize: %.3f s wall, %.3f s CPU\n",
              t_total, cpu_total);
  std::printf("jsonl: %.3f s for %.1f MiB (%.0f lines/s)\n", t_jsonl,
              static_cast<double>(bytes) / (1 << 20),
              static_cast<double>(n) / t_jsonl);
  std::printf("peak RSS: %ld MiB\n", peak_rss_mib());
  std::printf("ttft p50=%.3f ms p99=%.3f ms, itl avg=%.3f ms\n",
              summary.find("time_to_first_token")->stats->at(stats::pct::p50),
              summary.find("time_to_first_token")->stats->at(stats::pct::p99),
              summary.find("inter_token_latency")->stats->avg);
  return 0;
}
