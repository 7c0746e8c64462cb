#include "actors/benchmark/metrics/compute_metrics.hpp"

#include "runtime/tokenizer/resolve.hpp"
#include "runtime/tokenizer/tokenizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace aiperf::metrics {

namespace {

using proto::record_metric;

// AIPerf counts a usage field as discrepant beyond 10 %.
constexpr double usage_discrepancy_pct = 10.0;

// Everything but the id strings, which the callers copy or move.
void fill_metadata(const proto::request_record& in, std::string_view processor,
                   proto::metric_record& out) {
  out.session_num = in.session_num;
  out.turn_index = in.turn_index;
  out.credit_issued_ns = in.credit_issued_ns;
  // Monotonic stamps become epoch via the start pair, then controller clock.
  auto wall = in.request_start_wall_ns - in.clock_offset_ns;
  auto to_wall = [&](std::int64_t mono) {
    return mono == 0 ? std::int64_t{0} : wall + (mono - in.request_start_ns);
  };
  out.request_start_ns = wall;
  out.request_ack_ns = to_wall(in.request_ack_ns);
  out.request_end_ns = to_wall(in.request_end_ns);
  out.record_processor_id = std::string{processor};
  out.phase = in.phase;
  out.was_cancelled = in.was_cancelled;
  out.cancellation_time_ns = to_wall(in.cancellation_time_ns);
  out.stream_ignored = in.stream_ignored;
}

// Returns the error that makes `in` invalid, if any.
std::optional<proto::error_details>
invalid_reason(const proto::request_record& in) {
  if (in.has_error) {
    auto e = in.error;
    if (e.code == 0 && in.was_cancelled)
      e.code = 499;
    return e;
  }
  if (in.was_cancelled)
    return proto::error_details{499, "RequestCancellationError",
                                "request was cancelled"};
  if (in.http_status < 200 || in.http_status > 299)
    return proto::error_details{in.http_status, "HTTPError",
                                "HTTP status "
                                    + std::to_string(in.http_status)};
  if (in.response_ts_ns.empty())
    return proto::error_details{
        in.http_status, "NoContentError",
        "response had no content (only usage/metadata, empty data or [DONE])"};
  return std::nullopt;
}

std::optional<double> client_isl(const proto::request_record& in,
                                 const metric_options& opt) {
  if (opt.use_server_token_count) {
    if (in.usage.prompt_tokens >= 0)
      return static_cast<double>(in.usage.prompt_tokens);
    return std::nullopt;
  }
  if (in.input_tokens >= 0)
    return static_cast<double>(in.input_tokens);
  return std::nullopt;
}

void set_diff(proto::metric_record& out, record_metric m, std::int64_t usage,
              std::optional<double> client) {
  if (usage < 0 || !client || *client <= 0)
    return;
  auto pct = std::abs((static_cast<double>(usage) - *client) / *client) * 100.0;
  out.set(m, pct);
  if (pct > usage_discrepancy_pct)
    out.usage_discrepancy = true;
}

// Turns stamps into the gaps between them, in place (one element fewer).
void stamps_to_gaps(std::vector<std::int64_t>& v) {
  for (std::size_t i = 1; i < v.size(); ++i)
    v[i - 1] = v[i] - v[i - 1];
  v.pop_back();
}

// All but the id strings and the inter-chunk latencies; `has_gaps` says
// whether the latter are the gaps of `in.response_ts_ns`.
proto::metric_record compute_without_ids(const proto::request_record& in,
                                         const metric_options& opt,
                                         std::string_view processor_id,
                                         bool& has_gaps) {
  proto::metric_record out;
  fill_metadata(in, processor_id, out);
  auto isl = opt.produces_tokens ? client_isl(in, opt) : std::nullopt;

  if (auto err = invalid_reason(in)) {
    out.has_error = true;
    out.error = std::move(*err);
    if (isl)
      out.set(record_metric::error_isl, *isl);
    return out;
  }

  const auto start = in.request_start_ns;
  const auto& r = in.response_ts_ns;
  const auto first = r.front();
  const auto last = r.back();

  std::optional<double> latency;
  if (last >= start) {
    latency = static_cast<double>(last - start);
    out.set(record_metric::request_latency, *latency);
  }

  // Token counts.
  std::optional<double> osl;
  std::optional<double> reasoning;
  if (opt.produces_tokens) {
    std::optional<double> output;
    if (opt.use_server_token_count) {
      if (in.usage.completion_tokens >= 0) {
        auto rt = std::max<std::int64_t>(in.usage.reasoning_tokens, 0);
        // Clamped: some servers report reasoning outside completion tokens.
        output = static_cast<double>(
            std::max<std::int64_t>(in.usage.completion_tokens - rt, 0));
        reasoning = static_cast<double>(rt);
      }
    } else {
      output = static_cast<double>(tokenizer::count_for_metrics(in.output_text));
      reasoning
          = static_cast<double>(tokenizer::count_for_metrics(in.reasoning_text));
    }
    if (output) {
      osl = *output + *reasoning;
      out.set(record_metric::output_token_count, *output);
      out.set(record_metric::output_sequence_length, *osl);
      if (*reasoning > 0) {
        out.set(record_metric::reasoning_token_count, *reasoning);
        if (*output > 0)
          out.set(record_metric::thinking_efficiency, *reasoning / *output);
      }
    }
    if (isl)
      out.set(record_metric::input_sequence_length, *isl);
    if (osl && latency && *latency > 0)
      out.set(record_metric::e2e_output_token_throughput,
              *osl / (*latency * 1e-9));
  }

  // Streaming timing metrics.
  if (opt.streaming && opt.produces_tokens) {
    std::optional<double> ttft;
    if (first >= start) {
      ttft = static_cast<double>(first - start);
      out.set(record_metric::time_to_first_token, *ttft);
    }
    if (r.size() >= 2 && r[1] >= r[0])
      out.set(record_metric::time_to_second_token,
              static_cast<double>(r[1] - r[0]));
    // TTFO only means something when the model reasoned first.
    const auto& reasoning_flags = in.response_is_reasoning;
    if (!reasoning_flags.empty()
        && std::memchr(reasoning_flags.data(), 1, reasoning_flags.size())
               != nullptr) {
      for (std::size_t i = 0;
           i < r.size() && i < in.response_is_reasoning.size(); ++i) {
        if (in.response_is_reasoning[i] == 0) {
          if (r[i] >= start)
            out.set(record_metric::time_to_first_output_token,
                    static_cast<double>(r[i] - start));
          break;
        }
      }
    }
    // Out of order stamps have no trustworthy gaps: then none at all. The
    // callers fill them (from a copy or in place).
    if (r.size() >= 2) {
      bool ordered = true;
      for (std::size_t i = 1; i < r.size(); ++i)
        ordered &= r[i] >= r[i - 1];
      has_gaps = ordered;
    }
    if (ttft && latency && osl && *osl >= 2) {
      auto itl = (*latency - *ttft) / (*osl - 1);
      out.set(record_metric::inter_token_latency, itl);
      if (itl > 0)
        out.set(record_metric::output_token_throughput_per_user, 1e9 / itl);
    }
    if (ttft && isl && *ttft > 0)
      out.set(record_metric::prefill_throughput_per_user,
              *isl / (*ttft * 1e-9));
    if (in.request_ack_ns > 0 && in.request_ack_ns >= start) {
      auto setup = static_cast<double>(in.request_ack_ns - start);
      out.set(record_metric::stream_setup_latency, setup);
      if (ttft)
        out.set(record_metric::stream_prefill_latency, *ttft - setup);
    }
  }

  // Server usage, as reported, and how it compares with our counts.
  const auto& u = in.usage;
  auto set_usage = [&](record_metric m, std::int64_t v) {
    if (v >= 0)
      out.set(m, static_cast<double>(v));
  };
  set_usage(record_metric::usage_prompt_tokens, u.prompt_tokens);
  set_usage(record_metric::usage_completion_tokens, u.completion_tokens);
  set_usage(record_metric::usage_total_tokens, u.total_tokens);
  set_usage(record_metric::usage_reasoning_tokens, u.reasoning_tokens);
  if (opt.produces_tokens && !opt.use_server_token_count) {
    set_diff(out, record_metric::usage_prompt_tokens_diff_pct, u.prompt_tokens,
             isl);
    set_diff(out, record_metric::usage_completion_tokens_diff_pct,
             u.completion_tokens, osl);
    if (reasoning && *reasoning > 0)
      set_diff(out, record_metric::usage_reasoning_tokens_diff_pct,
               u.reasoning_tokens, reasoning);
  }

  // Output length vs what was asked for.
  if (opt.produces_tokens && osl && in.requested_output_tokens > 0) {
    auto req = static_cast<double>(in.requested_output_tokens);
    out.set(record_metric::osl_mismatch_diff_pct, (*osl - req) / req * 100.0);
    auto allowed = std::min(req * opt.osl_mismatch_threshold_pct / 100.0,
                            opt.osl_mismatch_max_tokens);
    out.osl_mismatch = std::abs(*osl - req) > allowed;
  }

  if (in.credit_received_ns > 0)
    out.set(record_metric::credit_drop_latency,
            static_cast<double>(start - in.credit_received_ns));
  if (in.intended_send_ns > 0) {
    out.set(record_metric::send_lag,
            static_cast<double>(start - in.intended_send_ns));
    if (opt.coordinated_omission) {
      out.set(record_metric::request_latency_from_intended,
              static_cast<double>(last - in.intended_send_ns));
      if (opt.streaming && opt.produces_tokens)
        out.set(record_metric::time_to_first_token_from_intended,
                static_cast<double>(first - in.intended_send_ns));
    }
  }
  return out;
}

} // namespace

proto::metric_record compute_metrics(const proto::request_record& in,
                                     const metric_options& opt,
                                     std::string_view processor_id) {
  bool has_gaps = false;
  auto out = compute_without_ids(in, opt, processor_id, has_gaps);
  if (has_gaps) {
    out.inter_chunk_latency = in.response_ts_ns;
    stamps_to_gaps(out.inter_chunk_latency);
  }
  out.x_request_id = in.x_request_id;
  out.x_correlation_id = in.x_correlation_id;
  out.conversation_id = in.conversation_id;
  out.worker_id = in.worker_id;
  return out;
}

proto::metric_record compute_metrics(proto::request_record&& in,
                                     const metric_options& opt,
                                     std::string_view processor_id) {
  bool has_gaps = false;
  auto out = compute_without_ids(in, opt, processor_id, has_gaps);
  if (has_gaps) {
    // The stamps are not needed any more: their array becomes the gaps.
    out.inter_chunk_latency = std::move(in.response_ts_ns);
    stamps_to_gaps(out.inter_chunk_latency);
  }
  out.x_request_id = std::move(in.x_request_id);
  out.x_correlation_id = std::move(in.x_correlation_id);
  out.conversation_id = std::move(in.conversation_id);
  out.worker_id = std::move(in.worker_id);
  return out;
}

} // namespace aiperf::metrics
