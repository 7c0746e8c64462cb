// Record contracts of the benchmark data path:
//   worker --request_record_batch--> record_processor
//   record_processor --metric_record_batch--> records_manager
// Plain copyable structs with 0.17-style inspect(). Optional values use
// sentinels (−1 for counts) or a presence bit mask (metric values; NaN does
// not survive CAF 0.17's float packing) because CAF 0.17 cannot inspect
// std::optional; the accessors below turn them back into optionals.
#pragma once

#include "proto/credits.hpp"

#include <caf/meta/type_name.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aiperf::proto {

/// The credit phase a record belongs to; only profiling records are
/// reported (one enum for credits and records: proto/credits.hpp).
using benchmark_phase = phase;

/// Why a request failed (jsonl `error`, error_summary key).
struct error_details {
  /// HTTP status or our code (499 cancelled, 502 SSE `event: error`).
  std::int32_t code = 0;
  std::string type;
  std::string message;
  friend bool operator==(const error_details&, const error_details&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, error_details& x) {
  return f(caf::meta::type_name("aiperf::proto::error_details"), x.code, x.type,
           x.message);
}

/// Server-reported `usage` (last non-null value across responses).
/// Every field is −1 when the server did not send it.
struct usage_counts {
  std::int64_t prompt_tokens = -1;
  std::int64_t completion_tokens = -1;
  std::int64_t total_tokens = -1;
  std::int64_t reasoning_tokens = -1;
  [[nodiscard]] bool present() const noexcept {
    return prompt_tokens >= 0 || completion_tokens >= 0 || total_tokens >= 0;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, usage_counts& x) {
  return f(caf::meta::type_name("aiperf::proto::usage_counts"), x.prompt_tokens,
           x.completion_tokens, x.total_tokens, x.reasoning_tokens);
}

/// One received message of the raw export (an SSE event or a whole body).
struct raw_response {
  /// Monotonic ns of the socket read that completed the message.
  std::int64_t perf_ns = 0;
  std::string text;
  /// The last SSE comment line of the event ("" if none): the mock's
  /// `--stamp-events` puts the server's write time there (`t=<ns>`).
  std::string comment;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, raw_response& x) {
  return f(caf::meta::type_name("aiperf::proto::raw_response"), x.perf_ns,
           x.text, x.comment);
}

/// Everything a worker observed about one request. All `*_ns` without
/// "wall" are monotonic (steady clock, same clock as the worker's other
/// stamps, including `intended_send_ns`); `request_start_wall_ns` is epoch.
struct request_record {
  std::uint64_t credit_id = 0;
  std::uint32_t session_num = 0;
  std::uint32_t turn_index = 0;
  benchmark_phase phase = benchmark_phase::profiling;
  std::string conversation_id;
  std::string x_request_id;
  std::string x_correlation_id;
  std::string worker_id;

  /// Epoch ns at which the timing manager granted the credit.
  std::int64_t credit_issued_ns = 0;
  /// Monotonic ns at which the worker received the credit (0 = unknown).
  std::int64_t credit_received_ns = 0;
  /// Scheduled send time in rate / fixed-schedule modes (0 = none).
  std::int64_t intended_send_ns = 0;
  /// Monotonic ns right before the request was handed to the HTTP client.
  std::int64_t request_start_ns = 0;
  /// Epoch ns matching `request_start_ns`.
  std::int64_t request_start_wall_ns = 0;
  /// Monotonic ns at which response headers arrived (0 = none).
  std::int64_t request_ack_ns = 0;
  /// Monotonic ns at which the response ended (last byte or failure).
  std::int64_t request_end_ns = 0;
  /// The worker's clock offset: controller_time = worker_time -
  /// clock_offset_ns (0 on one host). Corrects only times that span
  /// processes, never per-request latencies.
  std::int64_t clock_offset_ns = 0;

  std::int32_t http_status = 0;
  bool streaming = false;
  /// Streaming was asked for ("stream": true) but the server answered one
  /// body, not an SSE stream: TTFT is the latency, ITL 0.
  bool stream_ignored = false;
  /// Arrival (monotonic ns) of each CONTENT response: non-empty content or
  /// reasoning delta. Usage-only chunks, empty deltas and [DONE] are not
  /// content. Non-streaming: one entry when the body had content.
  std::vector<std::int64_t> response_ts_ns;
  /// Parallel to `response_ts_ns`: 1 when that response was reasoning only.
  std::vector<std::uint8_t> response_is_reasoning;
  /// All content deltas joined with "".
  std::string output_text;
  /// All reasoning deltas joined with "".
  std::string reasoning_text;
  usage_counts usage;
  /// ISL counted by the client tokenizer when the dataset was built (−1 =
  /// unknown).
  std::int64_t input_tokens = -1;
  /// max tokens sent in the request (−1 = none).
  std::int64_t requested_output_tokens = -1;

  bool has_error = false;
  error_details error;
  bool was_cancelled = false;
  /// Monotonic ns of the cancellation (0 = not cancelled).
  std::int64_t cancellation_time_ns = 0;

  // Filled only at export level raw.
  std::string payload;
  std::vector<std::string> request_headers;
  std::vector<std::string> response_headers;
  std::vector<raw_response> raw_responses;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, request_record& x) {
  return f(caf::meta::type_name("aiperf::proto::request_record"), x.credit_id,
           x.session_num, x.turn_index, x.phase, x.conversation_id,
           x.x_request_id, x.x_correlation_id, x.worker_id, x.credit_issued_ns,
           x.credit_received_ns, x.intended_send_ns, x.request_start_ns,
           x.request_start_wall_ns, x.request_ack_ns, x.request_end_ns,
           x.clock_offset_ns, x.http_status, x.streaming, x.stream_ignored,
           x.response_ts_ns,
           x.response_is_reasoning, x.output_text, x.reasoning_text, x.usage,
           x.input_tokens, x.requested_output_tokens, x.has_error, x.error,
           x.was_cancelled, x.cancellation_time_ns, x.payload,
           x.request_headers, x.response_headers, x.raw_responses);
}

/// Per-request metrics with a scalar value, in base units (ns for times,
/// tokens for counts, tokens/s for throughputs, percent for *_pct). The tag
/// of each is AIPerf's (`metric_tag()` in actors/benchmark/metrics).
enum class record_metric : std::uint8_t {
  time_to_first_token,
  time_to_second_token,
  time_to_first_output_token,
  inter_token_latency,
  request_latency,
  output_token_throughput_per_user,
  prefill_throughput_per_user,
  e2e_output_token_throughput,
  output_token_count,
  reasoning_token_count,
  output_sequence_length,
  input_sequence_length,
  thinking_efficiency,
  usage_prompt_tokens,
  usage_completion_tokens,
  usage_total_tokens,
  usage_reasoning_tokens,
  usage_prompt_tokens_diff_pct,
  usage_completion_tokens_diff_pct,
  usage_reasoning_tokens_diff_pct,
  osl_mismatch_diff_pct,
  stream_setup_latency,
  stream_prefill_latency,
  credit_drop_latency,
  /// request start − intended send (rate / fixed schedule).
  send_lag,
  /// Coordinated-omission-corrected TTFT: r[0] − intended send.
  time_to_first_token_from_intended,
  /// Coordinated-omission-corrected latency: r[last] − intended send.
  request_latency_from_intended,
  /// ISL of a failed request (the only metric of error records).
  error_isl,
};

inline constexpr std::size_t record_metric_count
    = static_cast<std::size_t>(record_metric::error_isl) + 1;
static_assert(record_metric_count <= 32, "presence mask is 32 bits");

/// What a record processor computed for one request (jsonl line content).
struct metric_record {
  // Metadata of the jsonl export. Epoch ns on the controller clock.
  std::uint32_t session_num = 0;
  std::string x_request_id;
  std::string x_correlation_id;
  std::string conversation_id;
  std::uint32_t turn_index = 0;
  std::int64_t credit_issued_ns = 0;
  std::int64_t request_start_ns = 0;
  /// 0 = none (jsonl null).
  std::int64_t request_ack_ns = 0;
  std::int64_t request_end_ns = 0;
  std::string worker_id;
  std::string record_processor_id;
  benchmark_phase phase = benchmark_phase::profiling;
  bool was_cancelled = false;
  /// Epoch ns; 0 = none (jsonl null).
  std::int64_t cancellation_time_ns = 0;

  /// Indexed by record_metric; meaningful only where `present` has the bit.
  std::array<double, record_metric_count> values{};
  /// Bit i set = values[i] holds a value.
  std::uint32_t present = 0;
  /// Inter-chunk latencies (ns), one per gap between content responses.
  /// Integers (differences of stamps): the record processor turns the
  /// request's stamp array into them in place, without an allocation.
  std::vector<std::int64_t> inter_chunk_latency;
  /// Some usage_*_diff_pct exceeds 10 %.
  bool usage_discrepancy = false;
  /// OSL differs from the requested output tokens beyond the threshold.
  bool osl_mismatch = false;
  /// request_record::stream_ignored (jsonl metadata `stream_ignored`).
  bool stream_ignored = false;

  bool has_error = false;
  error_details error;

  [[nodiscard]] bool valid() const noexcept { return !has_error; }
  [[nodiscard]] bool has(std::size_t i) const noexcept {
    return (present >> i) & 1u;
  }
  [[nodiscard]] bool has(record_metric m) const noexcept {
    return has(static_cast<std::size_t>(m));
  }
  [[nodiscard]] std::optional<double> get(record_metric m) const noexcept {
    return has(m) ? std::optional<double>{values[static_cast<std::size_t>(m)]}
                  : std::nullopt;
  }
  /// Sets a value; NaN/infinite values are treated as "no value".
  void set(record_metric m, double v) noexcept {
    auto i = static_cast<std::size_t>(m);
    if (!std::isfinite(v))
      return;
    values[i] = v;
    present |= 1u << i;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, metric_record& x) {
  return f(caf::meta::type_name("aiperf::proto::metric_record"), x.session_num,
           x.x_request_id, x.x_correlation_id, x.conversation_id, x.turn_index,
           x.credit_issued_ns, x.request_start_ns, x.request_ack_ns,
           x.request_end_ns, x.worker_id, x.record_processor_id, x.phase,
           x.was_cancelled, x.cancellation_time_ns, x.values, x.present,
           x.inter_chunk_latency, x.usage_discrepancy, x.osl_mismatch,
           x.stream_ignored, x.has_error, x.error);
}

/// Records travel in batches to amortize per-message cost.
struct request_record_batch {
  std::vector<request_record> records;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, request_record_batch& x) {
  return f(caf::meta::type_name("aiperf::proto::request_record_batch"),
           x.records);
}

struct metric_record_batch {
  std::vector<metric_record> records;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, metric_record_batch& x) {
  return f(caf::meta::type_name("aiperf::proto::metric_record_batch"),
           x.records);
}

} // namespace aiperf::proto
