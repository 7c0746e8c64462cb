// Run-level aggregation (AIPerf's records manager math): record metric
// distributions, aggregate counters and derived metrics.
#pragma once

#include "actors/benchmark/metrics/in_flight.hpp"
#include "actors/benchmark/metrics/metric_options.hpp"
#include "actors/benchmark/metrics/metric_registry.hpp"
#include "proto/records.hpp"
#include "runtime/selfcheck/selfcheck.hpp"
#include "runtime/stats/sample_accumulator.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace aiperf::metrics {

/// One reported metric, in display units.
struct metric_result {
  const metric_info* info = nullptr;
  /// Distribution of a record metric.
  std::optional<stats::summary> stats;
  /// Value of an aggregate/derived metric (exported as `avg`).
  double value = 0;

  [[nodiscard]] std::string_view tag() const noexcept { return info->tag; }
  /// The headline number: the mean of a distribution or the scalar.
  [[nodiscard]] double avg() const noexcept {
    return stats ? stats->avg : value;
  }
};

/// One error_summary entry: identical (code, type, message) and their count.
struct error_count {
  proto::error_details error;
  std::uint64_t count = 0;
};

/// Everything the exporters need about a finished run.
struct run_summary {
  /// Applicable metrics with a value, in report order (`all_metrics()`).
  std::vector<metric_result> metrics;
  /// Sorted by descending count.
  std::vector<error_count> errors;
  /// False when some distribution exceeded the sample budget.
  bool exact_percentiles = true;
  /// "client (built-in tokenizer)" or "server (usage)".
  std::string token_count_source;
  std::vector<std::string> warnings;
  /// Epoch ns of the first request start / last response (0 = none).
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::optional<double> target_request_rate;
  /// (requests − 1) / (last start − first start), over all profiling sends.
  std::optional<double> achieved_request_rate;
  /// Send lag (ms) percentiles, when the run had a schedule.
  std::optional<double> send_lag_p50_ms;
  std::optional<double> send_lag_p99_ms;
  std::optional<std::uint32_t> target_concurrency;
  /// Time-weighted mean of the requests in flight (in_flight_meter).
  std::optional<double> mean_requests_in_flight;
  /// The socket reads of the streamed responses with two or more content
  /// events, and how many carried two or more (selfcheck::read_counts).
  selfcheck::read_counts sse_reads;

  /// Returns the metric with `tag`, or nullptr when absent.
  [[nodiscard]] const metric_result* find(std::string_view tag) const noexcept;
};

/// The client's CPU over the run, as the self-check measured it.
struct client_cpu {
  /// CPU time (user + system) of the client's process over the run, divided
  /// by the run's wall time: 1.0 is one core busy throughout.
  double cores_used = 0;
  /// HTTP I/O threads: each can keep at most one core busy.
  std::uint32_t io_threads = 1;
  /// Cores the process may run on (affinity, cgroup quota).
  double cores_available = 1;
};

/// A client counts as busy at this share of a core per I/O thread it could
/// run (at most one per available core): a loop that turns responses into
/// next requests as fast as it can runs near a core (0.91-0.93 against
/// nginx at c=64, docs/benchmarks.md), one waiting on a slow server at 0-4 %.
inline constexpr double busy_client_core_share = 0.75;

/// Whether a closed-loop run's shortfall of requests in flight is the
/// client's: below 90 % of `target` on average, judged once `sent` reached
/// 2 x `target` (before, the window is one ramp), AND the client busy
/// (busy_client_core_share). A slot can also wait while the client sleeps
/// (a connection backoff, a server that closes connections): that is no
/// client limit, and without a measured `cpu` nothing is claimed. Pure.
[[nodiscard]] bool
concurrency_client_limited(double mean_in_flight, std::uint32_t target,
                           std::uint64_t sent,
                           const std::optional<client_cpu>& cpu) noexcept;

/// Accumulates metric records of one run (or one pod: mergeable).
/// Only profiling-phase records count; warmup records are ignored.
/// Not thread-safe: owned by the records_manager actor.
class metrics_aggregator {
public:
  /// `options` must have passed `validate()`. `sample_budget` bounds the
  /// exact samples kept per metric (see stats::sample_accumulator).
  explicit metrics_aggregator(metric_options options,
                              std::size_t sample_budget
                              = stats::sample_accumulator::default_budget);

  void add(const proto::metric_record& record);
  void add(const proto::metric_record_batch& batch) {
    for (const auto& r : batch.records)
      add(r);
  }

  /// Adds everything `other` accumulated (same options assumed).
  void merge(const metrics_aggregator& other);

  /// Computes the run summary; may be called repeatedly (e.g. live).
  /// `cpu`, when measured, lets a shortfall of requests in flight be
  /// called client-limited (concurrency_client_limited).
  [[nodiscard]] run_summary finalize(const std::optional<client_cpu>& cpu
                                     = std::nullopt) const;

  [[nodiscard]] std::uint64_t request_count() const noexcept {
    return request_count_;
  }
  [[nodiscard]] std::uint64_t error_request_count() const noexcept {
    return error_count_;
  }
  [[nodiscard]] std::uint64_t good_request_count() const noexcept {
    return good_count_;
  }
  [[nodiscard]] const metric_options& options() const noexcept {
    return options_;
  }

private:
  struct slo_check {
    proto::record_metric metric;
    double threshold; // base units
    bool larger_is_better;
  };

  [[nodiscard]] bool applicable(const metric_info& m) const noexcept;
  [[nodiscard]] bool is_good(const proto::metric_record& r) const noexcept;

  metric_options options_;
  std::vector<slo_check> slos_;
  std::vector<stats::sample_accumulator> values_; // by record_metric
  stats::sample_accumulator icl_;
  std::uint64_t request_count_ = 0;
  std::uint64_t error_count_ = 0;
  std::uint64_t good_count_ = 0;
  std::uint64_t usage_discrepancy_count_ = 0;
  std::uint64_t osl_mismatch_count_ = 0;
  selfcheck::read_counts reads_;
  std::int64_t min_request_ns_ = 0;
  std::int64_t max_response_ns_ = 0;
  /// Every sent profiling request (valid or not): the achieved rate and
  /// the requests in flight.
  in_flight_meter sends_;
  std::map<std::tuple<std::int32_t, std::string, std::string>, std::uint64_t>
      errors_;
};

} // namespace aiperf::metrics
