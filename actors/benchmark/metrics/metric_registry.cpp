#include "actors/benchmark/metrics/metric_registry.hpp"

#include <array>

namespace aiperf::metrics {

namespace {

using namespace flag;
using proto::record_metric;

constexpr double ns_to_ms = 1e6;
constexpr double ns_to_s = 1e9;
constexpr auto rec = metric_kind::record;
constexpr auto agg = metric_kind::aggregate;
constexpr auto der = metric_kind::derived;
constexpr auto stream = streaming_only | produces_tokens_only;
constexpr auto tokens = produces_tokens_only;

// Indexed by proto::record_metric: keep the order of the enum.
constexpr std::array<metric_info, proto::record_metric_count> record_table{{
    {"time_to_first_token", "Time to First Token", "ms", ns_to_ms, rec, stream},
    {"time_to_second_token", "Time to Second Token", "ms", ns_to_ms, rec,
     stream},
    {"time_to_first_output_token", "Time to First Output Token", "ms", ns_to_ms,
     rec, stream | reasoning},
    {"inter_token_latency", "Inter Token Latency", "ms", ns_to_ms, rec, stream},
    {"request_latency", "Request Latency", "ms", ns_to_ms, rec, none},
    {"output_token_throughput_per_user", "Output Token Throughput Per User",
     "tokens/sec/user", 1, rec, stream | larger_is_better},
    {"prefill_throughput_per_user", "Prefill Throughput Per User",
     "tokens/sec/user", 1, rec, stream | larger_is_better | no_console},
    {"e2e_output_token_throughput", "E2E Output Token Throughput",
     "tokens/sec/user", 1, rec, tokens | larger_is_better | no_console},
    {"output_token_count", "Output Token Count", "tokens", 1, rec,
     tokens | no_console},
    {"reasoning_token_count", "Reasoning Token Count", "tokens", 1, rec,
     tokens | reasoning},
    {"output_sequence_length", "Output Sequence Length", "tokens", 1, rec,
     tokens},
    {"input_sequence_length", "Input Sequence Length", "tokens", 1, rec,
     tokens},
    {"thinking_efficiency", "Thinking Efficiency", "ratio", 1, rec,
     tokens | reasoning | no_console},
    {"usage_prompt_tokens", "Usage Prompt Tokens", "tokens", 1, rec,
     no_console},
    {"usage_completion_tokens", "Usage Completion Tokens", "tokens", 1, rec,
     no_console},
    {"usage_total_tokens", "Usage Total Tokens", "tokens", 1, rec, no_console},
    {"usage_reasoning_tokens", "Usage Reasoning Tokens", "tokens", 1, rec,
     no_console},
    {"usage_prompt_tokens_diff_pct", "Usage Prompt Tokens Diff", "%", 1, rec,
     tokens | usage_diff | no_console},
    {"usage_completion_tokens_diff_pct", "Usage Completion Tokens Diff", "%", 1,
     rec, tokens | usage_diff | no_console},
    {"usage_reasoning_tokens_diff_pct", "Usage Reasoning Tokens Diff", "%", 1,
     rec, tokens | usage_diff | no_console},
    {"osl_mismatch_diff_pct", "OSL Mismatch Diff", "%", 1, rec,
     tokens | no_console},
    {"stream_setup_latency", "Stream Setup Latency", "ms", ns_to_ms, rec,
     streaming_only | experimental | no_console},
    {"stream_prefill_latency", "Stream Prefill Latency", "ms", ns_to_ms, rec,
     stream | experimental | no_console},
    {"credit_drop_latency", "Credit Drop Latency", "ms", ns_to_ms, rec,
     internal | no_console},
    {"send_lag", "Send Lag", "ms", ns_to_ms, rec, rate_only},
    {"time_to_first_token_from_intended", "TTFT From Intended Send", "ms",
     ns_to_ms, rec, stream | rate_only},
    {"request_latency_from_intended", "Request Latency From Intended Send",
     "ms", ns_to_ms, rec, rate_only},
    {"error_isl", "Error Input Sequence Length", "tokens", 1, rec,
     tokens | error_only | no_console},
}};

constexpr metric_info icl_info{
    "inter_chunk_latency", "Inter Chunk Latency", "ms", ns_to_ms, rec, stream};

// Report order: record metrics, then scalars, as AIPerf's console table.
constexpr std::array<metric_info, 47> all_table{{
    record_table[0],
    record_table[1],
    record_table[2],
    record_table[3],
    icl_info,
    record_table[4],
    record_table[5],
    record_table[6],
    record_table[7],
    record_table[8],
    record_table[9],
    record_table[10],
    record_table[11],
    record_table[12],
    record_table[13],
    record_table[14],
    record_table[15],
    record_table[16],
    record_table[17],
    record_table[18],
    record_table[19],
    record_table[20],
    record_table[21],
    record_table[22],
    record_table[23],
    record_table[24],
    record_table[25],
    record_table[26],
    record_table[27],
    {"output_token_throughput", "Output Token Throughput", "tokens/sec", 1, der,
     tokens | larger_is_better},
    {"total_token_throughput", "Total Token Throughput", "tokens/sec", 1, der,
     tokens | larger_is_better | no_console},
    {"request_throughput", "Request Throughput", "requests/sec", 1, der,
     larger_is_better},
    {"request_count", "Request Count", "requests", 1, agg, integer},
    {"error_request_count", "Error Request Count", "requests", 1, agg,
     error_only | integer},
    {"good_request_count", "Good Request Count", "requests", 1, agg,
     goodput_only | integer},
    {"goodput", "Goodput", "requests/sec", 1, der,
     goodput_only | larger_is_better},
    {"benchmark_duration", "Benchmark Duration", "sec", ns_to_s, der,
     no_console},
    {"total_output_tokens", "Total Output Tokens", "tokens", 1, der,
     tokens | no_console | integer},
    {"total_reasoning_tokens", "Total Reasoning Tokens", "tokens", 1, der,
     tokens | reasoning | no_console | integer},
    {"total_osl", "Total Output Sequence Length", "tokens", 1, der,
     tokens | no_console | integer},
    {"total_isl", "Total Input Sequence Length", "tokens", 1, der,
     tokens | no_console | integer},
    {"total_error_isl", "Total Error Input Sequence Length", "tokens", 1, der,
     tokens | error_only | no_console | integer},
    {"overall_thinking_efficiency", "Overall Thinking Efficiency", "ratio", 1,
     der, tokens | reasoning | no_console},
    {"usage_discrepancy_count", "Usage Discrepancy Count", "requests", 1, agg,
     tokens | usage_diff | no_console | integer},
    {"osl_mismatch_count", "OSL Mismatch Count", "requests", 1, agg,
     tokens | no_console | integer},
    {"min_request_timestamp", "Minimum Request Timestamp", "ns", 1, agg,
     internal | no_console | integer},
    {"max_response_timestamp", "Maximum Response Timestamp", "ns", 1, agg,
     internal | no_console | integer},
}};

} // namespace

const metric_info& info(proto::record_metric m) noexcept {
  return record_table[static_cast<std::size_t>(m)];
}

const metric_info& inter_chunk_latency_info() noexcept {
  return icl_info;
}

std::span<const metric_info> all_metrics() noexcept {
  return all_table;
}

const metric_info* find_metric(std::string_view tag) noexcept {
  for (const auto& m : all_table)
    if (m.tag == tag)
      return &m;
  return nullptr;
}

std::optional<proto::record_metric>
find_record_metric(std::string_view tag) noexcept {
  for (std::size_t i = 0; i < record_table.size(); ++i)
    if (record_table[i].tag == tag)
      return static_cast<proto::record_metric>(i);
  return std::nullopt;
}

} // namespace aiperf::metrics
