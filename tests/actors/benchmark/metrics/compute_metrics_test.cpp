#include "actors/benchmark/metrics/compute_metrics.hpp"
#include "tests/actors/benchmark/metrics/record_builder.hpp"

#include <gtest/gtest.h>

using namespace aiperf;
using proto::record_metric;
using test::make_record;

namespace {

metrics::metric_options streaming() {
  metrics::metric_options o;
  o.streaming = true;
  return o;
}

proto::metric_record compute(const proto::request_record& r,
                             const metrics::metric_options& o = streaming()) {
  return metrics::compute_metrics(r, o, "record_processor_0");
}

} // namespace

// AIPerf's test vectors (tests/unit/metrics/test_ttft_metric.py,
// test_ttst_metric.py).
TEST(compute_metrics, ttft_and_ttst) {
  auto m = compute(make_record(100, {110, 120}));
  EXPECT_EQ(m.get(record_metric::time_to_first_token), 10.0);
  EXPECT_EQ(m.get(record_metric::time_to_second_token), 10.0);
  m = compute(make_record(100, {105, 110, 130}));
  EXPECT_EQ(m.get(record_metric::time_to_second_token), 5.0);
  // Out of order responses: no TTST (and no chunk gaps).
  m = compute(make_record(100, {120, 110}));
  EXPECT_FALSE(m.has(record_metric::time_to_second_token));
  EXPECT_TRUE(m.inter_chunk_latency.empty());
  // A first response before the start is an error for TTFT.
  m = compute(make_record(100, {90, 120}));
  EXPECT_FALSE(m.has(record_metric::time_to_first_token));
}

// AIPerf's test vectors (tests/unit/metrics/test_request_latency_metric.py).
TEST(compute_metrics, request_latency_to_last_content_response) {
  EXPECT_EQ(compute(make_record(10, {15, 25, 35}))
                .get(record_metric::request_latency),
            25.0);
  std::vector<double> got;
  for (auto [s, e] : {std::pair{10, 25}, {20, 35}, {30, 50}})
    got.push_back(
        *compute(make_record(s, {e})).get(record_metric::request_latency));
  EXPECT_EQ(got, (std::vector<double>{15, 15, 20}));
}

// AIPerf's test vectors
// (tests/unit/metrics/test_inter_token_latency_metric.py).
TEST(compute_metrics, inter_token_latency) {
  auto m = compute(make_record(100, {120, 200}, 3));
  EXPECT_EQ(m.get(record_metric::output_sequence_length), 6.0);
  EXPECT_DOUBLE_EQ(*m.get(record_metric::inter_token_latency), 16.0);
  m = compute(make_record(1000, {1040, 1080, 1120}, 3));
  EXPECT_DOUBLE_EQ(*m.get(record_metric::inter_token_latency), 10.0);
  // OSL < 2: no ITL (and no per-user throughput).
  m = compute(make_record(100, {120}, 1));
  EXPECT_FALSE(m.has(record_metric::inter_token_latency));
  EXPECT_FALSE(m.has(record_metric::output_token_throughput_per_user));
}

// AIPerf's test vectors
// (tests/unit/metrics/test_inter_chunk_latency_metric.py).
TEST(compute_metrics, inter_chunk_latency) {
  EXPECT_EQ(compute(make_record(100, {110, 120, 135})).inter_chunk_latency,
            (std::vector<std::int64_t>{10, 15}));
  EXPECT_EQ(compute(make_record(100, {110, 125})).inter_chunk_latency,
            (std::vector<std::int64_t>{15}));
  // The moving overload turns the stamp array itself into the gaps.
  auto r = make_record(100, {110, 120, 135, 135});
  auto moved = metrics::compute_metrics(std::move(r), streaming(), "rp");
  EXPECT_EQ(moved.inter_chunk_latency, (std::vector<std::int64_t>{10, 15, 0}));
  // Out of order: no gaps at all, from either overload.
  EXPECT_TRUE(compute(make_record(100, {110, 130, 120})).inter_chunk_latency.empty());
  EXPECT_TRUE(metrics::compute_metrics(make_record(100, {110, 130, 120}),
                                       streaming(), "rp")
                  .inter_chunk_latency.empty());
  EXPECT_TRUE(compute(make_record(100, {110})).inter_chunk_latency.empty());
}

// AIPerf's test vectors for output token throughput per user
// (tests/unit/metrics/).
TEST(compute_metrics, per_user_throughputs) {
  // TTFT 0.1 s, one more token 0.1 s later: ITL 0.1 s → 10 tokens/s/user.
  auto r = make_record(0, {100'000'000, 200'000'000}, 1);
  r.input_tokens = 1000;
  auto m = compute(r);
  EXPECT_DOUBLE_EQ(*m.get(record_metric::inter_token_latency), 1e8);
  EXPECT_DOUBLE_EQ(*m.get(record_metric::output_token_throughput_per_user),
                   10.0);
  EXPECT_DOUBLE_EQ(*m.get(record_metric::prefill_throughput_per_user),
                   10'000.0);
  // e2e: 2 tokens over 0.2 s.
  EXPECT_DOUBLE_EQ(*m.get(record_metric::e2e_output_token_throughput), 10.0);
  EXPECT_EQ(m.get(record_metric::input_sequence_length), 1000.0);
}

// AIPerf's test vectors (tests/unit/metrics/test_osl_mismatch_metrics.py),
// per record.
TEST(compute_metrics, osl_mismatch_flags) {
  metrics::metric_options o = streaming();
  o.osl_mismatch_threshold_pct = 20;
  int flagged = 0;
  for (int out : {100, 50, 85, 70, 120}) {
    auto r = test::make_osl_record(0, 10, out);
    r.requested_output_tokens = 100;
    auto m = compute(r, o);
    EXPECT_DOUBLE_EQ(*m.get(record_metric::osl_mismatch_diff_pct),
                     (out - 100) * 1.0);
    flagged += m.osl_mismatch ? 1 : 0;
  }
  EXPECT_EQ(flagged, 2);            // strictly greater than 20 %
  o.osl_mismatch_threshold_pct = 5; // capped at 50 tokens
  auto r = test::make_osl_record(0, 10, 1940);
  r.requested_output_tokens = 2000;
  EXPECT_TRUE(compute(r, o).osl_mismatch);
  r = test::make_osl_record(0, 10, 1960);
  r.requested_output_tokens = 2000;
  EXPECT_FALSE(compute(r, o).osl_mismatch);
}

// Verifies every validity rule makes an error record that only carries
// error_isl.
TEST(compute_metrics, invalid_records_become_error_records) {
  auto http500 = make_record(0, {10});
  http500.http_status = 500;
  auto transport = make_record(0, {});
  transport.has_error = true;
  transport.error = {0, "ClientConnectorError", "connection refused"};
  auto sse_error = make_record(0, {10});
  sse_error.has_error = true;
  sse_error.error = {502, "SSEError", "event: error"};
  auto empty = make_record(0, {});
  auto cancelled = make_record(0, {10});
  cancelled.was_cancelled = true;
  cancelled.cancellation_time_ns = 5;
  for (auto* r : {&http500, &transport, &sse_error, &empty, &cancelled}) {
    r->input_tokens = 42;
    auto m = compute(*r);
    EXPECT_TRUE(m.has_error);
    EXPECT_FALSE(m.valid());
    EXPECT_EQ(m.get(record_metric::error_isl), 42.0);
    for (std::size_t i = 0; i < proto::record_metric_count; ++i) {
      if (static_cast<record_metric>(i) != record_metric::error_isl) {
        EXPECT_FALSE(m.has(i)) << i;
      }
    }
    EXPECT_TRUE(m.inter_chunk_latency.empty());
  }
  EXPECT_EQ(compute(http500).error.code, 500);
  EXPECT_EQ(compute(http500).error.type, "HTTPError");
  EXPECT_EQ(compute(transport).error.type, "ClientConnectorError");
  EXPECT_EQ(compute(sse_error).error.code, 502);
  EXPECT_EQ(compute(empty).error.type, "NoContentError");
  EXPECT_EQ(compute(cancelled).error.code, 499);
  EXPECT_TRUE(compute(cancelled).was_cancelled);
  EXPECT_EQ(compute(cancelled).cancellation_time_ns, 5);
}

TEST(compute_metrics, metadata_uses_wall_clock_and_offset) {
  auto r = make_record(1000, {1100, 1300});
  r.request_start_wall_ns = 1'700'000'000'000'000'000;
  r.clock_offset_ns = 50; // controller_time = worker_time - offset
  r.request_ack_ns = 1050;
  r.request_end_ns = 1400;
  r.session_num = 45;
  r.turn_index = 2;
  r.credit_issued_ns = 99;
  r.phase = proto::benchmark_phase::warmup;
  auto m = compute(r);
  EXPECT_EQ(m.request_start_ns, 1'700'000'000'000'000'000 - 50);
  EXPECT_EQ(m.request_ack_ns, m.request_start_ns + 50);
  EXPECT_EQ(m.request_end_ns, m.request_start_ns + 400);
  EXPECT_EQ(m.session_num, 45u);
  EXPECT_EQ(m.turn_index, 2u);
  EXPECT_EQ(m.credit_issued_ns, 99);
  EXPECT_EQ(m.record_processor_id, "record_processor_0");
  EXPECT_EQ(m.worker_id, "worker_0");
  EXPECT_EQ(m.phase, proto::benchmark_phase::warmup);
  EXPECT_EQ(m.cancellation_time_ns, 0);
  EXPECT_EQ(m.get(record_metric::stream_setup_latency), 50.0);
  EXPECT_EQ(m.get(record_metric::stream_prefill_latency), 50.0);
}

TEST(compute_metrics, non_streaming_has_no_streaming_metrics) {
  metrics::metric_options o; // streaming off
  auto m = compute(make_record(0, {500}, 5, false), o);
  EXPECT_EQ(m.get(record_metric::request_latency), 500.0);
  EXPECT_EQ(m.get(record_metric::output_sequence_length), 5.0);
  EXPECT_TRUE(m.has(record_metric::e2e_output_token_throughput));
  EXPECT_FALSE(m.has(record_metric::time_to_first_token));
  EXPECT_FALSE(m.has(record_metric::inter_token_latency));
}

TEST(compute_metrics, embeddings_have_no_token_metrics) {
  metrics::metric_options o;
  o.produces_tokens = false;
  auto r = make_record(0, {500}, 5, false);
  r.input_tokens = 10;
  auto m = compute(r, o);
  EXPECT_EQ(m.get(record_metric::request_latency), 500.0);
  EXPECT_FALSE(m.has(record_metric::output_sequence_length));
  EXPECT_FALSE(m.has(record_metric::input_sequence_length));
}

TEST(compute_metrics, reasoning_tokens_and_ttfo) {
  auto r = make_record(100, {110, 120, 130, 140});
  r.response_is_reasoning = {1, 1, 0, 0};
  r.output_text = " a b";
  r.reasoning_text = " x y";
  auto m = compute(r);
  EXPECT_EQ(m.get(record_metric::time_to_first_output_token), 30.0);
  EXPECT_EQ(m.get(record_metric::reasoning_token_count), 2.0);
  EXPECT_EQ(m.get(record_metric::output_token_count), 2.0);
  EXPECT_EQ(m.get(record_metric::output_sequence_length), 4.0);
  EXPECT_EQ(m.get(record_metric::thinking_efficiency), 1.0);
}

TEST(compute_metrics, server_token_counts_and_usage_diffs) {
  auto r = make_record(0, {10, 20}, 2); // client OSL 4
  r.input_tokens = 100;
  r.usage = {110, 6, 116, 1};
  auto m = compute(r);
  // Client counts, usage compared: prompt 10 %, completion 50 %.
  EXPECT_EQ(m.get(record_metric::input_sequence_length), 100.0);
  EXPECT_DOUBLE_EQ(*m.get(record_metric::usage_prompt_tokens_diff_pct), 10.0);
  EXPECT_DOUBLE_EQ(*m.get(record_metric::usage_completion_tokens_diff_pct),
                   50.0);
  EXPECT_TRUE(m.usage_discrepancy);
  EXPECT_EQ(m.get(record_metric::usage_total_tokens), 116.0);
  auto o = streaming();
  o.use_server_token_count = true;
  m = compute(r, o);
  EXPECT_EQ(m.get(record_metric::input_sequence_length), 110.0);
  EXPECT_EQ(m.get(record_metric::output_token_count), 5.0); // 6 − 1
  EXPECT_EQ(m.get(record_metric::reasoning_token_count), 1.0);
  EXPECT_EQ(m.get(record_metric::output_sequence_length), 6.0);
  EXPECT_FALSE(m.has(record_metric::usage_prompt_tokens_diff_pct));
  // No usage at all: no token counts in server mode.
  r.usage = {};
  m = compute(r, o);
  EXPECT_FALSE(m.has(record_metric::output_sequence_length));
  EXPECT_FALSE(m.has(record_metric::input_sequence_length));
}

TEST(compute_metrics, schedule_lag_and_coordinated_omission) {
  auto r = make_record(1000, {1100, 1300});
  r.intended_send_ns = 900;
  r.credit_received_ns = 950;
  auto o = streaming();
  o.coordinated_omission = true;
  auto m = compute(r, o);
  EXPECT_EQ(m.get(record_metric::send_lag), 100.0);
  EXPECT_EQ(m.get(record_metric::credit_drop_latency), 50.0);
  EXPECT_EQ(m.get(record_metric::time_to_first_token_from_intended), 200.0);
  EXPECT_EQ(m.get(record_metric::request_latency_from_intended), 400.0);
  EXPECT_EQ(m.get(record_metric::time_to_first_token), 100.0);
}

// Verifies the moving overload gives the same record as the copying one and
// takes the ids over.
TEST(compute_metrics, moving_overload_matches_the_copying_one) {
  auto r = make_record(100, {110, 120, 135});
  r.x_request_id = "run-with-a-long-id-r12345678901234";
  r.x_correlation_id = "run-with-a-long-id-s12345678901234";
  r.conversation_id = "chat-0000000000000000000042";
  r.worker_id = "worker_0000000000000000000007";
  auto copied = compute(r);
  auto input = r;
  auto moved = metrics::compute_metrics(std::move(input), streaming(),
                                        "record_processor_0");
  EXPECT_EQ(moved.x_request_id, r.x_request_id);
  EXPECT_EQ(moved.x_correlation_id, r.x_correlation_id);
  EXPECT_EQ(moved.conversation_id, r.conversation_id);
  EXPECT_EQ(moved.worker_id, r.worker_id);
  EXPECT_EQ(moved.record_processor_id, copied.record_processor_id);
  EXPECT_EQ(moved.values, copied.values);
  EXPECT_EQ(moved.present, copied.present);
  EXPECT_EQ(moved.inter_chunk_latency, copied.inter_chunk_latency);
  EXPECT_EQ(moved.request_start_ns, copied.request_start_ns);
  EXPECT_EQ(moved.has_error, copied.has_error);
}
