#include "actors/benchmark/metrics/compute_metrics.hpp"
#include "actors/benchmark/metrics/metrics_aggregator.hpp"
#include "tests/actors/benchmark/metrics/record_builder.hpp"

#include <gmock/gmock.h>
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

void add(metrics::metrics_aggregator& agg, const proto::request_record& r) {
  agg.add(metrics::compute_metrics(r, agg.options(), "rp"));
}

double scalar(const metrics::run_summary& s, std::string_view tag) {
  auto* m = s.find(tag);
  EXPECT_NE(m, nullptr) << tag;
  return m ? m->value : -1;
}

} // namespace

// AIPerf's test vectors for the benchmark duration (tests/unit/metrics/).
TEST(metrics_aggregator, benchmark_duration) {
  metrics::metrics_aggregator agg{streaming()};
  add(agg, make_record(10, {15}));
  add(agg, make_record(20, {25}));
  add(agg, make_record(30, {40}));
  auto s = agg.finalize();
  EXPECT_EQ(s.end_ns - s.start_ns, 30);
  EXPECT_DOUBLE_EQ(scalar(s, "benchmark_duration"), 30 / 1e9); // sec
  metrics::metrics_aggregator one{streaming()};
  add(one, make_record(100, {150}));
  EXPECT_DOUBLE_EQ(scalar(one.finalize(), "benchmark_duration"), 50 / 1e9);
}

// AIPerf's test vectors for output token throughput (tests/unit/metrics/).
TEST(metrics_aggregator, output_token_throughput) {
  metrics::metrics_aggregator a{streaming()};
  add(a, test::make_osl_record(0, 2'000'000'000, 1000));
  EXPECT_DOUBLE_EQ(scalar(a.finalize(), "output_token_throughput"), 500.0);
  metrics::metrics_aggregator b{streaming()};
  add(b, test::make_osl_record(0, 1'000'000'000, 400));
  add(b, test::make_osl_record(500'000'000, 1'500'000'000, 350));
  auto sb = b.finalize();
  EXPECT_DOUBLE_EQ(scalar(sb, "total_osl"), 750.0);
  EXPECT_DOUBLE_EQ(scalar(sb, "output_token_throughput"), 500.0);
  EXPECT_DOUBLE_EQ(scalar(sb, "request_throughput"), 2 / 1.5);
  // Zero duration: no throughput at all.
  metrics::metrics_aggregator c{streaming()};
  add(c, test::make_osl_record(5, 5, 10));
  auto sc = c.finalize();
  EXPECT_EQ(sc.find("output_token_throughput"), nullptr);
  EXPECT_EQ(sc.find("benchmark_duration"), nullptr);
  EXPECT_EQ(sc.find("request_throughput"), nullptr);
}

// AIPerf's test vectors for goodput
// (tests/unit/metrics/test_good_request_count_metric.py).
TEST(metrics_aggregator, goodput) {
  auto o = streaming();
  o.goodput = {{"request_latency", 250}}; // ms
  metrics::metrics_aggregator agg{o};
  for (std::int64_t ms : {100, 300, 250})
    add(agg, make_record(0, {ms * 1'000'000}));
  EXPECT_EQ(agg.good_request_count(), 2u); // inclusive ≤
  EXPECT_DOUBLE_EQ(scalar(agg.finalize(), "good_request_count"), 2);

  o.goodput = {{"request_latency", 1000}};
  metrics::metrics_aggregator fifteen{o};
  for (int i = 0; i < 15; ++i)
    add(fifteen, make_record(0, {1'000'000'000}));
  EXPECT_DOUBLE_EQ(scalar(fifteen.finalize(), "goodput"), 15.0);

  metrics::metrics_aggregator none{streaming()};
  add(none, make_record(0, {100}));
  EXPECT_EQ(none.good_request_count(), 0u);
  EXPECT_EQ(none.finalize().find("goodput"), nullptr);
}

// Verifies larger-is-better SLOs and that a missing value is not good.
TEST(metrics_aggregator, goodput_larger_is_better_and_missing_values) {
  auto o = streaming();
  o.goodput = {{"output_token_throughput_per_user", 10}};
  metrics::metrics_aggregator agg{o};
  add(agg, make_record(0, {100'000'000, 200'000'000})); // exactly 10/s
  add(agg, make_record(0, {100'000'000, 300'000'000})); // 5/s
  add(agg, make_record(0, {100'000'000}));              // OSL 1: no value
  EXPECT_EQ(agg.good_request_count(), 1u);
}

// AIPerf's test vectors (tests/unit/metrics/test_osl_mismatch_metrics.py),
// aggregated.
TEST(metrics_aggregator, osl_mismatch_count) {
  auto o = streaming();
  o.osl_mismatch_threshold_pct = 20;
  metrics::metrics_aggregator agg{o};
  for (int out : {100, 50, 85, 70, 120}) {
    auto r = test::make_osl_record(0, 10, out);
    r.requested_output_tokens = 100;
    add(agg, r);
  }
  auto s = agg.finalize();
  EXPECT_DOUBLE_EQ(scalar(s, "osl_mismatch_count"), 2);
  EXPECT_FALSE(s.warnings.empty());
}

// AIPerf's request-latency vectors and its statistics of 1..5 (numpy's)
// through the aggregator: stats in ms.
TEST(metrics_aggregator, record_metric_statistics_in_display_units) {
  metrics::metrics_aggregator agg{streaming()};
  for (int i = 1; i <= 5; ++i)
    add(agg, make_record(0, {i * 1'000'000}));
  auto s = agg.finalize();
  auto* lat = s.find("request_latency");
  ASSERT_TRUE(lat && lat->stats);
  EXPECT_DOUBLE_EQ(lat->stats->avg, 3);
  EXPECT_DOUBLE_EQ(lat->stats->min, 1);
  EXPECT_DOUBLE_EQ(lat->stats->max, 5);
  EXPECT_DOUBLE_EQ(lat->stats->at(stats::pct::p50), 3);
  EXPECT_DOUBLE_EQ(lat->stats->std, std::sqrt(2.0));
  EXPECT_EQ(lat->info->unit, "ms");
  EXPECT_TRUE(s.exact_percentiles);
}

// Verifies ICL pools every gap of every request.
TEST(metrics_aggregator, inter_chunk_latency_pools_all_gaps) {
  metrics::metrics_aggregator agg{streaming()};
  add(agg, make_record(100, {110, 120, 135}));
  add(agg, make_record(100, {110, 125}));
  auto* icl = agg.finalize().find("inter_chunk_latency");
  ASSERT_TRUE(icl && icl->stats);
  EXPECT_EQ(icl->stats->count, 3u);
  EXPECT_DOUBLE_EQ(icl->stats->sum, 40 / 1e6);
}

TEST(metrics_aggregator, warmup_records_are_excluded) {
  metrics::metrics_aggregator agg{streaming()};
  auto warm = make_record(0, {1'000'000'000});
  warm.phase = proto::benchmark_phase::warmup;
  add(agg, warm);
  auto bad_warm = warm;
  bad_warm.http_status = 500;
  add(agg, bad_warm);
  add(agg, make_record(0, {10}));
  auto s = agg.finalize();
  EXPECT_DOUBLE_EQ(scalar(s, "request_count"), 1);
  EXPECT_EQ(s.find("error_request_count"), nullptr);
  EXPECT_DOUBLE_EQ(s.find("request_latency")->stats->max, 10 / 1e6);
}

// Verifies errors count separately, feed only error metrics and are grouped.
TEST(metrics_aggregator, error_records_and_error_summary) {
  metrics::metrics_aggregator agg{streaming()};
  add(agg, make_record(0, {10}));
  for (int i = 0; i < 3; ++i) {
    auto r = make_record(0, {1'000'000});
    r.http_status = 500;
    r.input_tokens = 7;
    add(agg, r);
  }
  auto cancelled = make_record(0, {});
  cancelled.was_cancelled = true;
  add(agg, cancelled);
  auto s = agg.finalize();
  EXPECT_DOUBLE_EQ(scalar(s, "request_count"), 1);
  EXPECT_DOUBLE_EQ(scalar(s, "error_request_count"), 4);
  EXPECT_DOUBLE_EQ(scalar(s, "total_error_isl"), 21);
  EXPECT_EQ(s.find("request_latency")->stats->count, 1u);
  ASSERT_EQ(s.errors.size(), 2u);
  EXPECT_EQ(s.errors[0].error.code, 500);
  EXPECT_EQ(s.errors[0].count, 3u);
  EXPECT_EQ(s.errors[1].error.code, 499);
  EXPECT_EQ(s.errors[1].count, 1u);
}

TEST(metrics_aggregator, applicability_by_flags) {
  metrics::metric_options plain; // non-streaming chat
  metrics::metrics_aggregator agg{plain};
  add(agg, make_record(0, {100}, 3, false));
  auto s = agg.finalize();
  EXPECT_NE(s.find("request_latency"), nullptr);
  EXPECT_NE(s.find("output_sequence_length"), nullptr);
  EXPECT_NE(s.find("output_token_throughput"), nullptr);
  EXPECT_EQ(s.find("time_to_first_token"), nullptr);
  EXPECT_EQ(s.find("inter_token_latency"), nullptr);
  EXPECT_EQ(s.find("inter_chunk_latency"), nullptr);
  EXPECT_EQ(s.find("output_token_throughput_per_user"), nullptr);

  metrics::metric_options emb;
  emb.produces_tokens = false;
  metrics::metrics_aggregator e{emb};
  add(e, make_record(0, {100}, 3, false));
  auto se = e.finalize();
  EXPECT_NE(se.find("request_latency"), nullptr);
  EXPECT_NE(se.find("request_throughput"), nullptr);
  EXPECT_EQ(se.find("output_sequence_length"), nullptr);
  EXPECT_EQ(se.find("output_token_throughput"), nullptr);
}

// Verifies merging per-pod aggregators equals aggregating in one.
TEST(metrics_aggregator, merge_equals_single_aggregator) {
  auto o = streaming();
  o.goodput = {{"request_latency", 0.0001}};
  metrics::metrics_aggregator a{o}, b{o}, all{o};
  for (int i = 0; i < 40; ++i) {
    auto r = make_record(i * 10, {i * 10 + 5 + i, i * 10 + 50 + 2 * i}, 2);
    if (i % 7 == 0)
      r.http_status = 503;
    add(i % 2 ? a : b, r);
    add(all, r);
  }
  a.merge(b);
  auto sa = a.finalize();
  auto sall = all.finalize();
  ASSERT_EQ(sa.metrics.size(), sall.metrics.size());
  for (std::size_t i = 0; i < sa.metrics.size(); ++i) {
    EXPECT_EQ(sa.metrics[i].tag(), sall.metrics[i].tag());
    EXPECT_DOUBLE_EQ(sa.metrics[i].avg(), sall.metrics[i].avg())
        << sa.metrics[i].tag();
    if (sa.metrics[i].stats) {
      EXPECT_EQ(sa.metrics[i].stats->pct, sall.metrics[i].stats->pct);
    }
  }
  EXPECT_EQ(sa.errors.size(), 1u);
  EXPECT_EQ(sa.errors[0].count, sall.errors[0].count);
  EXPECT_EQ(a.good_request_count(), all.good_request_count());
}

TEST(metrics_aggregator, achieved_rate_and_send_lag) {
  auto o = streaming();
  o.target_request_rate = 10;
  o.coordinated_omission = true;
  metrics::metrics_aggregator agg{o};
  for (int i = 0; i < 11; ++i) {
    std::int64_t intended = i * 100'000'000ll; // 10/s
    auto r = make_record(intended + 2'000'000, {intended + 10'000'000});
    r.intended_send_ns = intended;
    add(agg, r);
  }
  auto s = agg.finalize();
  ASSERT_TRUE(s.achieved_request_rate);
  EXPECT_DOUBLE_EQ(*s.achieved_request_rate, 10.0);
  ASSERT_TRUE(s.send_lag_p50_ms);
  EXPECT_DOUBLE_EQ(*s.send_lag_p50_ms, 2.0);
  EXPECT_DOUBLE_EQ(*s.send_lag_p99_ms, 2.0);
  EXPECT_NE(s.find("request_latency_from_intended"), nullptr);
}

namespace {

/// How many of `s`'s warnings contain `part`.
std::size_t warnings_with(const metrics::run_summary& s, std::string_view part) {
  std::size_t n = 0;
  for (const auto& w : s.warnings)
    n += w.find(part) != std::string::npos ? 1 : 0;
  return n;
}

} // namespace

// Responses whose events arrive in reads of their own (the built-in mock
// writes 5 ms apart) lose no inter-chunk sample and earn no warning; the
// counts are reported.
TEST(metrics_aggregator, separate_reads_give_no_merged_read_warning) {
  metrics::metrics_aggregator agg{streaming()};
  for (int i = 0; i < 50; ++i)
    add(agg, make_record(0, {20'000'000, 25'000'000, 30'000'000, 35'000'000}));
  auto s = agg.finalize();
  EXPECT_EQ(s.sse_reads.reads, 200u);
  EXPECT_EQ(s.sse_reads.merged_reads, 0u);
  EXPECT_EQ(warnings_with(s, "SSE reads"), 0u) << testing::PrintToString(s.warnings);
}

// Events sharing a read's stamp: a merged read, their gap 0 and lost. Above
// 1 % of the reads, one warning with the share; merging pods add up.
TEST(metrics_aggregator, merged_reads_are_counted_and_warned_once) {
  metrics::metrics_aggregator agg{streaming()};
  metrics::metrics_aggregator other{streaming()};
  for (int i = 0; i < 30; ++i) {
    // 4 events, the last two in one read: 3 reads, 1 merged, 1 gap lost.
    add(agg, make_record(0, {20'000'000, 25'000'000, 30'000'000, 30'000'000}));
    add(other, make_record(0, {20'000'000, 25'000'000, 30'000'000, 35'000'000}));
  }
  agg.merge(other);
  auto s = agg.finalize();
  EXPECT_EQ(s.sse_reads.reads, 30u * 3 + 30u * 4);
  EXPECT_EQ(s.sse_reads.merged_reads, 30u);
  EXPECT_EQ(s.sse_reads.lost_gaps, 30u);
  ASSERT_EQ(warnings_with(s, "SSE reads"), 1u) << testing::PrintToString(s.warnings);
  EXPECT_EQ(warnings_with(s, "14.3% of the SSE reads (30 of 210)"), 1u)
      << testing::PrintToString(s.warnings);
}

// Rate mode at 47 requests/s (21.3 ms apart): a send lag of 1.3 ms is no
// warning, 8 ms (38 %) is one, quoted against the inter-arrival time.
TEST(metrics_aggregator, send_lag_is_judged_against_the_inter_arrival_time) {
  for (std::int64_t lag_us : {1'300, 8'000}) {
    SCOPED_TRACE(lag_us);
    auto o = streaming();
    o.target_request_rate = 47;
    o.coordinated_omission = true;
    metrics::metrics_aggregator agg{o};
    for (int i = 0; i < 200; ++i) {
      std::int64_t intended = i * 21'276'596ll;
      auto r = make_record(intended + lag_us * 1'000,
                           {intended + 40'000'000, intended + 45'000'000});
      r.intended_send_ns = intended;
      add(agg, r);
    }
    auto s = agg.finalize();
    EXPECT_EQ(warnings_with(s, "send lag p99"), lag_us > 5'300 ? 1u : 0u)
        << testing::PrintToString(s.warnings);
  }
}

// A request cancelled before its due time (or never connected) has no
// start; counting it as a send at time 0 made the achieved rate ~0.
TEST(metrics_aggregator, a_request_that_never_left_is_no_send) {
  auto o = streaming();
  o.target_request_rate = 10;
  metrics::metrics_aggregator agg{o};
  for (int i = 0; i < 11; ++i) {
    std::int64_t at = 1'000'000'000 + i * 100'000'000ll;
    add(agg, make_record(at, {at + 10'000'000}));
  }
  auto unsent = make_record(0, {});
  unsent.request_start_wall_ns = 0;
  unsent.was_cancelled = true;
  add(agg, unsent);
  auto s = agg.finalize();
  ASSERT_TRUE(s.achieved_request_rate);
  EXPECT_DOUBLE_EQ(*s.achieved_request_rate, 10.0);
  for (auto& w : s.warnings)
    EXPECT_EQ(w.find("below the target"), std::string::npos) << w;
}

TEST(metrics_aggregator, histogram_mode_is_reported) {
  metrics::metrics_aggregator agg{streaming(), 4};
  for (int i = 1; i <= 10; ++i)
    add(agg, make_record(0, {i * 1000}));
  auto s = agg.finalize();
  EXPECT_FALSE(s.exact_percentiles);
  EXPECT_FALSE(s.find("request_latency")->stats->exact);
  EXPECT_FALSE(s.warnings.empty());
}

TEST(metric_options, goodput_parsing_and_validation) {
  auto slos
      = metrics::parse_goodput("request_latency:250 inter_token_latency:10 "
                               "output_token_throughput_per_user:600");
  ASSERT_TRUE(slos) << error_message(slos.error());
  ASSERT_EQ(slos->size(), 3u);
  EXPECT_EQ((*slos)[1].tag, "inter_token_latency");
  EXPECT_DOUBLE_EQ((*slos)[2].threshold, 600);
  auto bad = metrics::parse_goodput("request_latency");
  ASSERT_FALSE(bad);
  EXPECT_NE(error_message(bad.error()).find("tag:value"), std::string::npos);
  EXPECT_TRUE(is_error(bad.error(), metrics::errc::bad_goodput));
  EXPECT_FALSE(metrics::parse_goodput("request_latency:abc"));

  auto o = streaming();
  o.goodput = *slos;
  EXPECT_TRUE(metrics::validate(o));
  o.streaming = false; // ITL needs streaming
  auto e = metrics::validate(o);
  ASSERT_FALSE(e);
  EXPECT_NE(error_message(e.error()).find("inter_token_latency"),
            std::string::npos);
  o.goodput = {{"no_such_metric", 1}};
  e = metrics::validate(o);
  ASSERT_FALSE(e);
  EXPECT_NE(error_message(e.error()).find("unknown metric"),
            std::string::npos);
}

namespace {

/// Two slots of a closed loop: requests of 10 ns, 2 ns of turn-around,
/// starts at 1, 13 and 25. Over [1, 25] each slot is busy 20 of 24 ns.
std::vector<std::pair<std::int64_t, std::int64_t>> two_slots() {
  std::vector<std::pair<std::int64_t, std::int64_t>> v;
  for (int slot = 0; slot < 2; ++slot)
    for (std::int64_t start : {1, 13, 25})
      v.emplace_back(start, start + 10);
  return v;
}

} // namespace

TEST(in_flight_meter, time_weighted_mean_up_to_the_last_start) {
  metrics::in_flight_meter m;
  for (auto [s, e] : two_slots())
    m.add(s, e);
  ASSERT_TRUE(m.mean());
  EXPECT_DOUBLE_EQ(*m.mean(), 40.0 / 24.0);
  EXPECT_EQ(m.count(), 6u);
}

TEST(in_flight_meter, arrival_order_and_merging_do_not_matter) {
  auto v = two_slots();
  metrics::in_flight_meter forward, backward, a, b;
  for (auto [s, e] : v)
    forward.add(s, e);
  for (auto it = v.rbegin(); it != v.rend(); ++it)
    backward.add(it->first, it->second);
  for (std::size_t i = 0; i < v.size(); ++i)
    (i % 2 ? a : b).add(v[i].first, v[i].second);
  a.merge(b);
  EXPECT_DOUBLE_EQ(*backward.mean(), *forward.mean());
  EXPECT_DOUBLE_EQ(*a.mean(), *forward.mean());
  EXPECT_EQ(a.count(), forward.count());
}

TEST(in_flight_meter, needs_two_start_instants_and_ignores_unsent_requests) {
  metrics::in_flight_meter m;
  m.add(5, 50);
  m.add(5, 60);
  EXPECT_FALSE(m.mean()); // one start instant: no window
  m.add(0, 10);           // never sent
  m.add(30, 20);          // ends before it starts
  EXPECT_EQ(m.count(), 2u);
  m.add(15, 40);
  // Window [5, 15]: both first requests run through it, the third starts
  // at its end.
  EXPECT_DOUBLE_EQ(*m.mean(), 2.0);
}

TEST(in_flight_meter, a_request_that_ends_as_it_starts_still_moves_the_window) {
  metrics::in_flight_meter m;
  m.add(1, 3);
  m.add(1, 9);
  m.add(4, 4); // the last start: [1, 4]
  EXPECT_DOUBLE_EQ(*m.mean(), (2.0 + 3.0 + 0.0) / 3.0);
}

TEST(metrics_aggregator, concurrency_shortfall_is_reported_and_warned) {
  auto o = streaming();
  o.target_concurrency = 2;
  metrics::metrics_aggregator slow{o}, tight{o}, open_loop{streaming()};
  for (auto [s, e] : two_slots()) {
    add(slow, make_record(s, {e}));
    add(open_loop, make_record(s, {e}));
    // No turn-around: each slot's next request starts as the last ends.
    auto k = (s - 1) / 12;
    add(tight, make_record(1 + 10 * k, {11 + 10 * k}));
  }
  auto warned = [](const metrics::run_summary& s) {
    for (auto& w : s.warnings)
      if (w.find("requests in flight on average") != std::string::npos)
        return true;
    return false;
  };
  // The client's process kept its one I/O thread busy.
  const metrics::client_cpu busy{0.93, 1, 2};
  auto s = slow.finalize(busy);
  ASSERT_TRUE(s.mean_requests_in_flight);
  EXPECT_DOUBLE_EQ(*s.mean_requests_in_flight, 40.0 / 24.0);
  EXPECT_EQ(s.target_concurrency, 2u);
  EXPECT_TRUE(warned(s)); // 1.67 < 90 % of 2
  EXPECT_THAT(s.warnings,
              testing::Contains(testing::HasSubstr(
                  "1.7 requests in flight on average, not the 2 of "
                  "--concurrency while the "
                  "client was busy (CPU 0.9 cores for 1 I/O thread)")));
  // The same shortfall from a sleeping client (a backoff, a slow server) is
  // not the client's; nor is one whose CPU was not measured.
  EXPECT_FALSE(warned(slow.finalize(metrics::client_cpu{0.03, 1, 2})));
  EXPECT_FALSE(warned(slow.finalize()));
  auto t = tight.finalize(busy);
  EXPECT_DOUBLE_EQ(*t.mean_requests_in_flight, 2.0);
  EXPECT_FALSE(warned(t));
  // Without a closed-loop target the mean is reported, never judged.
  auto u = open_loop.finalize(busy);
  EXPECT_TRUE(u.mean_requests_in_flight);
  EXPECT_FALSE(u.target_concurrency);
  EXPECT_FALSE(warned(u));
}

// The decision, with numbers: a shortfall below 90 % of the target, once
// 2 x target were sent, and near a core busy per I/O thread the client
// could run.
TEST(concurrency_client_limited, needs_the_shortfall_and_a_busy_client) {
  using metrics::client_cpu;
  using metrics::concurrency_client_limited;
  const client_cpu busy{0.91, 1, 2};
  // The nginx run of docs/profile.md: 47.6 of 64 at 0.91 cores.
  EXPECT_TRUE(concurrency_client_limited(47.6, 64, 10'000, busy));
  // 90 % of the target is no shortfall; just below it is.
  EXPECT_FALSE(concurrency_client_limited(57.6, 64, 10'000, busy));
  EXPECT_TRUE(concurrency_client_limited(57.5, 64, 10'000, busy));
  // Before every slot was refilled once the window is one ramp.
  EXPECT_FALSE(concurrency_client_limited(20, 64, 127, busy));
  EXPECT_TRUE(concurrency_client_limited(20, 64, 128, busy));
  // An idle client (0-4 % of a core: waiting on a slow server or a
  // connection backoff) is never client-limited.
  for (double idle : {0.0, 0.01, 0.04})
    EXPECT_FALSE(
        concurrency_client_limited(10, 64, 10'000, client_cpu{idle, 1, 2}))
        << idle;
  // Busy means 0.75 of a core per I/O thread.
  EXPECT_FALSE(
      concurrency_client_limited(10, 64, 10'000, client_cpu{0.74, 1, 2}));
  EXPECT_TRUE(
      concurrency_client_limited(10, 64, 10'000, client_cpu{0.75, 1, 2}));
  // Two I/O threads need 1.5 cores; four on 2 cores still only 2 cores'
  // worth (1.5), not 3.
  EXPECT_FALSE(
      concurrency_client_limited(10, 64, 10'000, client_cpu{1.2, 2, 4}));
  EXPECT_TRUE(
      concurrency_client_limited(10, 64, 10'000, client_cpu{1.6, 2, 4}));
  EXPECT_TRUE(
      concurrency_client_limited(10, 64, 10'000, client_cpu{1.5, 4, 2}));
  // Not measured, or no closed-loop target: not judged.
  EXPECT_FALSE(concurrency_client_limited(10, 64, 10'000, std::nullopt));
  EXPECT_FALSE(concurrency_client_limited(0, 0, 10'000, busy));
}
