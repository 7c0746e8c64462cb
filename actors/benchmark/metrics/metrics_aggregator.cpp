#include "actors/benchmark/metrics/metrics_aggregator.hpp"

#include "runtime/tokenizer/resolve.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_map>

namespace aiperf::metrics {

namespace {

using proto::record_metric;

constexpr std::size_t idx(record_metric m) noexcept {
  return static_cast<std::size_t>(m);
}

// Achieved rate below this fraction of the target earns a warning.
constexpr double rate_shortfall_warning = 0.95;
/// A closed-loop run whose server saw fewer than this share of --concurrency
/// in flight on average gets a warning.
constexpr double concurrency_shortfall_warning = 0.90;

stats::summary to_display(stats::summary s, const metric_info& m) {
  auto f = [&](double v) { return m.to_display(v); };
  s.sum = f(s.sum);
  s.avg = f(s.avg);
  s.min = f(s.min);
  s.max = f(s.max);
  s.std = f(s.std);
  for (auto& p : s.pct)
    p = f(p);
  return s;
}

std::string format_count(double v) {
  return std::to_string(static_cast<long long>(std::llround(v)));
}

std::string format_one_decimal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

} // namespace

const metric_result* run_summary::find(std::string_view tag) const noexcept {
  for (const auto& m : metrics)
    if (m.info->tag == tag)
      return &m;
  return nullptr;
}

metrics_aggregator::metrics_aggregator(metric_options options,
                                       std::size_t sample_budget)
    : options_(std::move(options)),
      values_(proto::record_metric_count,
              stats::sample_accumulator{sample_budget}),
      icl_(sample_budget) {
  for (const auto& slo : options_.goodput) {
    // validate() guarantees the tag exists; skip defensively otherwise.
    if (auto m = find_record_metric(slo.tag)) {
      const auto& i = info(*m);
      slos_.push_back(
          {*m, i.to_base(slo.threshold), i.has(flag::larger_is_better)});
    }
  }
}

bool metrics_aggregator::is_good(const proto::metric_record& r) const noexcept {
  for (const auto& slo : slos_) {
    auto v = r.get(slo.metric);
    if (!v)
      return false; // a missing value is not good
    if (slo.larger_is_better ? *v < slo.threshold : *v > slo.threshold)
      return false;
  }
  return true;
}

void metrics_aggregator::add(const proto::metric_record& r) {
  if (r.phase != proto::benchmark_phase::profiling)
    return;
  // A request that never left (cancelled before its due time, no
  // connection) has no start: it is no send.
  sends_.add(r.request_start_ns, r.request_end_ns);
  if (r.has_error) {
    ++error_count_;
    ++errors_[{r.error.code, r.error.type, r.error.message}];
    // Error records only feed error-only metrics.
    if (auto v = r.get(record_metric::error_isl))
      values_[idx(record_metric::error_isl)].add(*v);
    return;
  }
  for (auto mask = r.present; mask != 0; mask &= mask - 1) {
    auto i = static_cast<std::size_t>(__builtin_ctz(mask));
    values_[i].add(r.values[i]);
  }
  icl_.add_all(r.inter_chunk_latency);
  reads_.add_gaps(r.inter_chunk_latency);
  if (r.usage_discrepancy)
    ++usage_discrepancy_count_;
  if (r.osl_mismatch)
    ++osl_mismatch_count_;
  if (!slos_.empty() && is_good(r))
    ++good_count_;
  auto latency = r.get(record_metric::request_latency);
  auto response = r.request_start_ns
                  + static_cast<std::int64_t>(latency ? *latency : 0.0);
  if (request_count_ == 0) {
    min_request_ns_ = r.request_start_ns;
    max_response_ns_ = response;
  } else {
    min_request_ns_ = std::min(min_request_ns_, r.request_start_ns);
    max_response_ns_ = std::max(max_response_ns_, response);
  }
  ++request_count_;
}

void metrics_aggregator::merge(const metrics_aggregator& other) {
  for (std::size_t i = 0; i < values_.size(); ++i)
    values_[i].merge(other.values_[i]);
  icl_.merge(other.icl_);
  if (other.request_count_ > 0) {
    if (request_count_ == 0) {
      min_request_ns_ = other.min_request_ns_;
      max_response_ns_ = other.max_response_ns_;
    } else {
      min_request_ns_ = std::min(min_request_ns_, other.min_request_ns_);
      max_response_ns_ = std::max(max_response_ns_, other.max_response_ns_);
    }
  }
  request_count_ += other.request_count_;
  error_count_ += other.error_count_;
  good_count_ += other.good_count_;
  usage_discrepancy_count_ += other.usage_discrepancy_count_;
  osl_mismatch_count_ += other.osl_mismatch_count_;
  reads_.merge(other.reads_);
  sends_.merge(other.sends_);
  for (const auto& [key, n] : other.errors_)
    errors_[key] += n;
}

bool metrics_aggregator::applicable(const metric_info& m) const noexcept {
  if (m.has(flag::streaming_only) && !options_.streaming)
    return false;
  if (m.has(flag::produces_tokens_only) && !options_.produces_tokens)
    return false;
  if (m.has(flag::usage_diff) && options_.use_server_token_count)
    return false;
  if (m.has(flag::goodput_only) && slos_.empty())
    return false;
  if (m.has(flag::error_only) && error_count_ == 0)
    return false;
  return true;
}

bool concurrency_client_limited(double mean_in_flight, std::uint32_t target,
                                std::uint64_t sent,
                                const std::optional<client_cpu>& cpu) noexcept {
  if (target == 0 || sent < 2ull * target
      || mean_in_flight >= target * concurrency_shortfall_warning)
    return false;
  if (!cpu)
    return false;
  const double threads = std::min(
      static_cast<double>(std::max<std::uint32_t>(cpu->io_threads, 1)),
      std::max(cpu->cores_available, 1.0));
  return cpu->cores_used >= busy_client_core_share * threads;
}

run_summary
metrics_aggregator::finalize(const std::optional<client_cpu>& cpu) const {
  run_summary s;
  s.token_count_source = options_.use_server_token_count
                             ? "server (usage)"
                             : tokenizer::metrics_tokenizer_origin()
                                       == tokenizer::whitespace_model_name
                                 ? "client (built-in tokenizer)"
                                 : "client (" + tokenizer::metrics_tokenizer_origin()
                                     + ")";
  s.target_request_rate = options_.target_request_rate;
  std::vector<std::string> approximate;

  auto sum_of = [&](record_metric m) -> std::optional<double> {
    const auto& acc = values_[idx(m)];
    if (acc.empty())
      return std::nullopt;
    return acc.sum();
  };

  // Scalars, in base units.
  std::unordered_map<std::string_view, double> scalars;
  scalars["request_count"] = static_cast<double>(request_count_);
  scalars["error_request_count"] = static_cast<double>(error_count_);
  if (!slos_.empty())
    scalars["good_request_count"] = static_cast<double>(good_count_);
  auto total_osl = sum_of(record_metric::output_sequence_length);
  auto total_isl = sum_of(record_metric::input_sequence_length);
  auto total_output = sum_of(record_metric::output_token_count);
  auto total_reasoning = sum_of(record_metric::reasoning_token_count);
  if (total_osl)
    scalars["total_osl"] = *total_osl;
  if (total_isl)
    scalars["total_isl"] = *total_isl;
  if (total_output)
    scalars["total_output_tokens"] = *total_output;
  if (total_reasoning) {
    scalars["total_reasoning_tokens"] = *total_reasoning;
    if (total_output && *total_output > 0)
      scalars["overall_thinking_efficiency"] = *total_reasoning / *total_output;
  }
  if (auto e = sum_of(record_metric::error_isl))
    scalars["total_error_isl"] = *e;
  if (!values_[idx(record_metric::usage_prompt_tokens_diff_pct)].empty()
      || !values_[idx(record_metric::usage_completion_tokens_diff_pct)].empty()
      || !values_[idx(record_metric::usage_reasoning_tokens_diff_pct)].empty())
    scalars["usage_discrepancy_count"]
        = static_cast<double>(usage_discrepancy_count_);
  if (!values_[idx(record_metric::osl_mismatch_diff_pct)].empty())
    scalars["osl_mismatch_count"] = static_cast<double>(osl_mismatch_count_);
  if (request_count_ > 0) {
    s.start_ns = min_request_ns_;
    s.end_ns = max_response_ns_;
    scalars["min_request_timestamp"] = static_cast<double>(min_request_ns_);
    scalars["max_response_timestamp"] = static_cast<double>(max_response_ns_);
    auto duration_ns = static_cast<double>(max_response_ns_ - min_request_ns_);
    // A zero or negative duration has no throughput (AIPerf: must be > 0).
    if (duration_ns > 0) {
      auto seconds = duration_ns / 1e9;
      scalars["benchmark_duration"] = duration_ns;
      scalars["request_throughput"]
          = static_cast<double>(request_count_) / seconds;
      if (total_osl)
        scalars["output_token_throughput"] = *total_osl / seconds;
      if (total_osl || total_isl)
        scalars["total_token_throughput"]
            = (total_isl.value_or(0) + total_osl.value_or(0)) / seconds;
      if (!slos_.empty())
        scalars["goodput"] = static_cast<double>(good_count_) / seconds;
    }
  }

  for (const auto& m : all_metrics()) {
    if (!applicable(m))
      continue;
    if (m.kind == metric_kind::record) {
      const stats::sample_accumulator* acc = nullptr;
      if (m.tag == inter_chunk_latency_info().tag)
        acc = &icl_;
      else if (auto rm = find_record_metric(m.tag))
        acc = &values_[idx(*rm)];
      if (acc == nullptr || acc->empty())
        continue;
      auto sum = acc->summarize();
      if (!sum->exact) {
        s.exact_percentiles = false;
        approximate.emplace_back(m.tag);
      }
      s.metrics.push_back({&m, to_display(*sum, m), 0});
    } else if (auto it = scalars.find(m.tag); it != scalars.end()) {
      s.metrics.push_back({&m, std::nullopt, m.to_display(it->second)});
    }
  }

  for (const auto& [key, n] : errors_)
    s.errors.push_back(
        {{std::get<0>(key), std::get<1>(key), std::get<2>(key)}, n});
  std::stable_sort(
      s.errors.begin(), s.errors.end(),
      [](const auto& a, const auto& b) { return a.count > b.count; });

  const auto sent = sends_.count();
  if (sent >= 2 && sends_.last_start_ns() > sends_.first_start_ns())
    s.achieved_request_rate
        = static_cast<double>(sent - 1)
          / (static_cast<double>(sends_.last_start_ns()
                                 - sends_.first_start_ns())
             / 1e9);
  if (const auto* lag = s.find("send_lag"); lag && lag->stats) {
    s.send_lag_p50_ms = lag->stats->at(stats::pct::p50);
    s.send_lag_p99_ms = lag->stats->at(stats::pct::p99);
  }
  s.target_concurrency = options_.target_concurrency;
  s.mean_requests_in_flight = sends_.mean();
  s.sse_reads = reads_;

  // Warnings worth a line in the console and the JSON.
  auto total = request_count_ + error_count_;
  if (error_count_ > 0)
    s.warnings.push_back(format_count(static_cast<double>(error_count_))
                         + " of " + format_count(static_cast<double>(total))
                         + " requests failed; see error_summary");
  if (osl_mismatch_count_ > 0)
    s.warnings.push_back(
        format_count(static_cast<double>(osl_mismatch_count_))
        + " requests produced an output length differing from the requested "
          "max tokens by more than min("
        + format_count(options_.osl_mismatch_threshold_pct) + " %, "
        + format_count(options_.osl_mismatch_max_tokens)
        + " tokens); pass ignore_eos/min_tokens with --extra-inputs for exact "
          "lengths");
  if (usage_discrepancy_count_ > 0)
    s.warnings.push_back(
        format_count(static_cast<double>(usage_discrepancy_count_))
        + " requests have server usage differing from client token counts by "
          "more than 10 %; the tokenizer may not match the model's");
  if (!approximate.empty()) {
    std::string tags;
    for (const auto& t : approximate)
      tags += (tags.empty() ? "" : ", ") + t;
    s.warnings.push_back("percentiles of " + tags
                         + " come from a histogram (<= 0.1 % relative error) "
                           "because they exceeded the exact sample budget");
  }
  if (s.target_request_rate && s.achieved_request_rate
      && *s.achieved_request_rate
             < *s.target_request_rate * rate_shortfall_warning)
    s.warnings.push_back("achieved request rate is below the target: the "
                         "client or the server could not keep up");
  // Where the client's lateness can change a number (selfcheck.hpp): a read
  // that merged two server writes, a scheduled send that left late.
  if (auto w = selfcheck::merged_reads_warning(reads_); !w.empty())
    s.warnings.push_back(std::move(w));
  if (const auto* lag = s.find("send_lag");
      lag && lag->stats && s.target_request_rate)
    if (auto w = selfcheck::send_lag_warning(
            lag->stats->count, lag->stats->at(stats::pct::p99) * 1e6,
            *s.target_request_rate);
        !w.empty())
      s.warnings.push_back(std::move(w));
  // Judged once every slot has been refilled at least once: before that the
  // window is one ramp.
  if (s.target_concurrency && s.mean_requests_in_flight
      && concurrency_client_limited(*s.mean_requests_in_flight,
                                    *s.target_concurrency, sent, cpu))
    s.warnings.push_back(
        "client-limited: the server had "
        + format_one_decimal(*s.mean_requests_in_flight)
        + " requests in flight on average, not the "
        + std::to_string(*s.target_concurrency)
        + " of --concurrency while the client was busy (CPU "
        + format_one_decimal(cpu->cores_used) + " cores for "
        + std::to_string(cpu->io_threads) + " I/O thread"
        + (cpu->io_threads == 1 ? "" : "s")
        + "): each slot waits for the client between a response "
          "and its next request, a large share of this server's response time, "
          "so the results are those of a lighter load");
  return s;
}

} // namespace aiperf::metrics
