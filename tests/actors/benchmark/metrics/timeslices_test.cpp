#include "actors/benchmark/metrics/compute_metrics.hpp"
#include "actors/benchmark/metrics/timeslices.hpp"
#include "tests/actors/benchmark/metrics/record_builder.hpp"

#include <gtest/gtest.h>

using namespace aiperf;
using test::make_record;

namespace {

constexpr std::int64_t sec = 1'000'000'000;

metrics::metric_options streaming() {
  metrics::metric_options o;
  o.streaming = true;
  return o;
}

void add(metrics::timeslicer& t, const proto::request_record& r) {
  t.add(metrics::compute_metrics(r, streaming(), "rp"));
}

double avg(const metrics::run_summary& s, std::string_view tag) {
  auto* m = s.find(tag);
  EXPECT_NE(m, nullptr) << tag;
  return m ? m->avg() : -1;
}

} // namespace

TEST(timeslices, slice_index_counts_windows_from_the_origin) {
  EXPECT_EQ(metrics::slice_index(100, 100, 10), 0u);
  EXPECT_EQ(metrics::slice_index(109, 100, 10), 0u);
  EXPECT_EQ(metrics::slice_index(110, 100, 10), 1u) << "a boundary opens "
                                                       "the later window";
  EXPECT_EQ(metrics::slice_index(135, 100, 10), 3u);
  EXPECT_EQ(metrics::slice_index(90, 100, 10), 0u);
}

TEST(timeslices, records_land_in_the_window_of_their_start) {
  metrics::timeslicer t{streaming(), 1 * sec};
  const std::int64_t t0 = 50 * sec;
  // Window 0: [t0, t0+1s): two requests, latencies 100 and 300 ms; the
  // second ends in window 1 but started in window 0.
  add(t, make_record(t0, {t0 + sec / 10}));
  add(t, make_record(t0 + sec / 2, {t0 + sec / 2 + 3 * sec / 10}));
  // Exactly on the boundary: window 1. Latency 200 ms.
  add(t, make_record(t0 + sec, {t0 + sec + sec / 5}));
  // Window 2 is empty and skipped; window 3 holds one request, 400 ms.
  add(t, make_record(t0 + 3 * sec + sec / 2, {t0 + 3 * sec + 9 * sec / 10}));
  // Warmup records are not sliced.
  auto warm = metrics::compute_metrics(make_record(t0 - sec, {t0}), streaming(),
                                       "rp");
  warm.phase = proto::benchmark_phase::warmup;
  t.add(std::move(warm));

  auto slices = t.finalize();
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0].start_ns, t0);
  EXPECT_EQ(slices[0].end_ns, t0 + sec);
  EXPECT_TRUE(slices[0].is_complete);
  EXPECT_EQ(slices[0].request_count, 2u);
  EXPECT_DOUBLE_EQ(avg(slices[0].summary, "request_latency"), 200.0); // ms
  EXPECT_DOUBLE_EQ(avg(slices[0].summary, "request_count"), 2.0);

  EXPECT_EQ(slices[1].start_ns, t0 + sec);
  EXPECT_EQ(slices[1].request_count, 1u);
  EXPECT_DOUBLE_EQ(avg(slices[1].summary, "request_latency"), 200.0);

  // The last window is cut at the last response and marked incomplete.
  EXPECT_EQ(slices[2].start_ns, t0 + 3 * sec);
  EXPECT_EQ(slices[2].end_ns, t0 + 3 * sec + 9 * sec / 10);
  EXPECT_FALSE(slices[2].is_complete);
  EXPECT_EQ(slices[2].request_count, 1u);
  EXPECT_DOUBLE_EQ(avg(slices[2].summary, "request_latency"), 400.0);

  std::uint64_t total = 0;
  for (const auto& s : slices)
    total += s.request_count;
  EXPECT_EQ(total, 4u);
}

TEST(timeslices, error_records_count_in_their_window) {
  metrics::timeslicer t{streaming(), 10 * sec};
  add(t, make_record(sec, {2 * sec}));
  auto failed = make_record(3 * sec, {});
  failed.http_status = 500;
  add(t, failed);
  auto slices = t.finalize();
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].request_count, 1u);
  EXPECT_EQ(slices[0].error_request_count, 1u);
  EXPECT_FALSE(slices[0].is_complete);
  EXPECT_EQ(slices[0].end_ns, 3 * sec);
  // Never sent (no start): in no window.
  auto unsent = make_record(0, {});
  unsent.has_error = true;
  add(t, unsent);
  EXPECT_EQ(t.record_count(), 2u);
}

TEST(timeslices, merge_and_no_records) {
  metrics::timeslicer a{streaming(), sec};
  EXPECT_TRUE(a.finalize().empty());
  metrics::timeslicer b{streaming(), sec};
  add(a, make_record(sec, {sec + sec / 10}));
  add(b, make_record(3 * sec, {3 * sec + sec / 10}));
  a.merge(b);
  auto slices = a.finalize();
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[1].start_ns, 3 * sec);
}
