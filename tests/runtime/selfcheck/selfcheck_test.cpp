#include "runtime/selfcheck/selfcheck.hpp"

#include <gtest/gtest.h>

#include <chrono>

using namespace aiperf::selfcheck;
using namespace std::chrono_literals;

namespace {

/// A sustained lag: the fifth-largest sample is as late as the p99.
lag_stats lag_of(double p99_ms, std::uint64_t samples = 1000) {
  return {samples, p99_ms * 1e6 / 4, p99_ms * 1e6, p99_ms * 1e6 * 2,
          p99_ms * 1e6};
}

// `fraction` of `cores` busy over one second.
cpu_usage cpu_of(double fraction, double cores) {
  cpu_usage u;
  u.wall_ns = 1'000'000'000;
  auto busy = static_cast<std::int64_t>(fraction * cores * 1e9);
  u.user_ns = busy / 4;
  u.system_ns = busy - busy / 4;
  u.cores_available = cores;
  return u;
}

} // namespace

// Verifies a quiet client gets no warning but still a summary line.
TEST(selfcheck_judge, idle_client_is_not_limited) {
  auto v = judge(lag_of(0.05), cpu_of(0.30, 2), 0.4);
  EXPECT_FALSE(v.client_limited);
  EXPECT_FALSE(v.lag_limited);
  EXPECT_FALSE(v.cpu_limited);
  EXPECT_FALSE(v.io_thread_limited);
  EXPECT_EQ(v.summary,
            "client self-check: loop lag p50 0.01 ms p99 0.05 ms max 0.10 ms "
            "(1000 samples), CPU 30% of 2 cores, I/O thread 40% busy");
}

// Lag and CPU both over their lines: marked, and summarized with figures.
TEST(selfcheck_judge, lag_and_cpu_saturation_are_both_marked) {
  auto v = judge(lag_of(3.2), cpu_of(0.97, 2), std::nullopt);
  EXPECT_TRUE(v.client_limited);
  EXPECT_TRUE(v.lag_limited);
  EXPECT_TRUE(v.cpu_limited);
  EXPECT_NE(v.summary.find("p99 3.20 ms"), std::string::npos) << v.summary;
  EXPECT_NE(v.summary.find("CPU 97% of 2 cores"), std::string::npos)
      << v.summary;
}

TEST(selfcheck_judge, lag_alone_is_enough) {
  auto v = judge(lag_of(1.5), cpu_of(0.2, 2), 0.3);
  EXPECT_TRUE(v.client_limited);
  EXPECT_TRUE(v.lag_limited);
  EXPECT_FALSE(v.cpu_limited);
}

TEST(selfcheck_judge, cpu_alone_is_enough) {
  auto v = judge(lag_of(0.1), cpu_of(0.95, 4), std::nullopt);
  EXPECT_TRUE(v.client_limited);
  EXPECT_FALSE(v.lag_limited);
  EXPECT_TRUE(v.cpu_limited);
}

// Verifies one saturated I/O thread is caught even when the process uses
// only half of the machine (1 of 2 cores).
TEST(selfcheck_judge, a_saturated_io_thread_is_enough) {
  auto v = judge(lag_of(0.2), cpu_of(0.5, 2), 0.98);
  EXPECT_TRUE(v.client_limited);
  EXPECT_TRUE(v.io_thread_limited);
  EXPECT_FALSE(v.cpu_limited);
  EXPECT_NE(v.summary.find("I/O thread 98% busy"), std::string::npos);
}

// Verifies the thresholds are inclusive for CPU and exclusive for lag.
TEST(selfcheck_judge, thresholds_are_configurable_and_exact_at_the_edge) {
  thresholds limits;
  limits.lag_p99 = 2ms;
  limits.cpu_saturation = 0.5;
  EXPECT_FALSE(
      judge(lag_of(2.0), cpu_of(0.49, 2), std::nullopt, limits).client_limited);
  EXPECT_TRUE(
      judge(lag_of(2.01), cpu_of(0.1, 2), std::nullopt, limits).lag_limited);
  EXPECT_TRUE(
      judge(lag_of(0.1), cpu_of(0.5, 2), std::nullopt, limits).cpu_limited);
}

// Verifies a run too short for a p99 is not judged on lag.
TEST(selfcheck_judge, too_few_lag_samples_are_not_judged) {
  auto v = judge(lag_of(50, 3), cpu_of(0.1, 2), std::nullopt);
  EXPECT_FALSE(v.lag_limited);
  EXPECT_FALSE(v.client_limited);
}

// Verifies a short run whose p99 is one burst (four late samples of 200)
// is not judged lag-limited, while a fifth late sample makes it so.
TEST(selfcheck_judge, a_p99_of_fewer_than_five_late_samples_is_not_a_limit) {
  auto burst = lag_of(1.5, 200);
  burst.fifth_largest_ns = 0.4e6;
  EXPECT_FALSE(judge(burst, cpu_of(0.3, 2), 0.4).client_limited);
  burst.fifth_largest_ns = 1.1e6;
  EXPECT_TRUE(judge(burst, cpu_of(0.3, 2), 0.4).lag_limited);
}

// Verifies a client waiting on a slow server (CPU near zero, the I/O thread
// asleep in epoll) is not lag-limited however late its timer woke: that
// lateness is the host's, and nothing was waiting on the client.
TEST(selfcheck_judge, an_idle_client_with_late_wake_ups_is_not_limited) {
  auto v = judge(lag_of(3.0), cpu_of(0.04, 2), 0.01);
  EXPECT_TRUE(v.idle);
  EXPECT_FALSE(v.lag_limited);
  EXPECT_FALSE(v.client_limited);
  EXPECT_NE(v.summary.find("(idle: lag not judged)"), std::string::npos);
  // Without an I/O thread figure the process CPU alone decides.
  EXPECT_FALSE(judge(lag_of(3.0), cpu_of(0.0, 2), std::nullopt).client_limited);
  // The same lag from a client at work is a limit.
  auto busy = judge(lag_of(3.0), cpu_of(0.04, 2), 0.5);
  EXPECT_FALSE(busy.idle);
  EXPECT_TRUE(busy.lag_limited);
  // At the line the client counts as busy.
  thresholds limits;
  limits.min_busy_cores = 0.25;
  EXPECT_TRUE(
      judge(lag_of(3.0), cpu_of(0.125, 2), std::nullopt, limits).lag_limited);
}

TEST(selfcheck_judge, fractional_core_quota_is_printed_as_such) {
  auto v = judge(lag_of(0.1), cpu_of(0.99, 1.5), std::nullopt);
  EXPECT_NE(v.summary.find("CPU 99% of 1.50 cores"), std::string::npos);
}

TEST(selfcheck_judge, empty_interval_is_not_cpu_limited) {
  cpu_usage none;
  auto v = judge(lag_stats{}, none, std::nullopt);
  EXPECT_FALSE(v.client_limited);
  EXPECT_DOUBLE_EQ(none.cores_used(), 0);
}

TEST(selfcheck_usage, between_two_readings) {
  cpu_reading a{1'000, 100, 50};
  cpu_reading b{2'001'000, 1'100, 1'050};
  auto u = usage_between(a, b, 2);
  EXPECT_EQ(u.wall_ns, 2'000'000);
  EXPECT_EQ(u.user_ns, 1'000);
  EXPECT_EQ(u.system_ns, 1'000);
  EXPECT_DOUBLE_EQ(u.cores_used(), 0.001);
  EXPECT_DOUBLE_EQ(u.saturation(), 0.0005);
}

TEST(selfcheck_usage, readings_in_the_wrong_order_give_zeros) {
  cpu_reading a{5'000, 100, 100};
  cpu_reading b{1'000, 200, 200};
  auto u = usage_between(a, b, 0);
  EXPECT_EQ(u.wall_ns, 0);
  EXPECT_EQ(u.user_ns, 0);
  EXPECT_DOUBLE_EQ(u.cores_available, 1); // never divide by zero cores
}

TEST(selfcheck_cgroup, parses_cpu_max) {
  EXPECT_EQ(parse_cgroup_cpu_max("200000 100000\n"), 2.0);
  EXPECT_EQ(parse_cgroup_cpu_max("150000 100000"), 1.5);
  EXPECT_EQ(parse_cgroup_cpu_max("max 100000\n"), std::nullopt);
  EXPECT_EQ(parse_cgroup_cpu_max(""), std::nullopt);
  EXPECT_EQ(parse_cgroup_cpu_max("abc 100000"), std::nullopt);
  EXPECT_EQ(parse_cgroup_cpu_max("100000 0"), std::nullopt);
  EXPECT_EQ(parse_cgroup_cpu_max("-5 100000"), std::nullopt);
}

// Verifies the live readings are sane (no timing asserted: only signs and
// monotonicity of counters).
TEST(selfcheck_live, readings_are_monotonic_and_cores_positive) {
  auto a = read_process_cpu();
  volatile std::uint64_t sink = 0;
  for (std::uint64_t i = 0; i < 1'000'000; ++i)
    sink = sink + i;
  auto b = read_process_cpu();
  EXPECT_GE(b.wall_ns, a.wall_ns);
  EXPECT_GE(b.user_ns + b.system_ns, a.user_ns + a.system_ns);
  EXPECT_GE(available_cores(), 0.01);
  EXPECT_GE(thread_cpu_ns(), 0);
}

// Several I/O threads: the figures of the most lagging one over a line.
TEST(selfcheck_combine, the_most_lagging_thread_over_a_line_is_quoted) {
  std::vector<verdict> threads;
  for (double p99 : {2.45, 7.09, 0.05, 3.43, 2.93})
    threads.push_back(judge(lag_of(p99), cpu_of(0.24, 2), 0.3));
  auto v = combine(threads);
  EXPECT_TRUE(v.client_limited);
  EXPECT_DOUBLE_EQ(v.lag.p99_ns, 7.09e6);
}

TEST(selfcheck_combine, the_limited_thread_is_quoted_not_the_most_lagging) {
  // An idle thread's lag is not judged, however late its timer woke.
  std::vector<verdict> threads{judge(lag_of(9.0), cpu_of(0.02, 2), 0.01),
                               judge(lag_of(0.2), cpu_of(0.02, 2), 0.98)};
  ASSERT_FALSE(threads[0].client_limited);
  auto v = combine(threads);
  EXPECT_TRUE(v.io_thread_limited);
  EXPECT_DOUBLE_EQ(v.lag.p99_ns, 0.2e6);
}

TEST(selfcheck_combine, quiet_threads_give_the_most_lagging_figures) {
  std::vector<verdict> quiet{judge(lag_of(0.1), cpu_of(0.3, 2), 0.3),
                             judge(lag_of(0.4), cpu_of(0.3, 2), 0.4)};
  auto v = combine(quiet);
  EXPECT_FALSE(v.client_limited);
  EXPECT_DOUBLE_EQ(v.lag.p99_ns, 0.4e6);
  EXPECT_FALSE(combine({}).client_limited);
}

// -- merged reads
// ---------------------------------------------------------------

// Gaps of one response: 0 = the event came in the read of the one before.
TEST(selfcheck_reads, runs_of_zero_gaps_are_merged_reads) {
  read_counts c;
  // 6 events: [e0 e1 e2] [e3] [e4 e5] -> 3 reads, 2 merged, 3 gaps lost.
  c.add_gaps({0, 0, 5'000'000, 4'000'000, 0});
  EXPECT_EQ(c.reads, 3u);
  EXPECT_EQ(c.merged_reads, 2u);
  EXPECT_EQ(c.lost_gaps, 3u);
  // No gap, nothing to lose: not counted.
  c.add_gaps({});
  EXPECT_EQ(c.reads, 3u);
  // Every event in its own read.
  read_counts apart;
  apart.add_gaps({5'000'000, 5'000'000, 5'000'000});
  EXPECT_EQ(apart.reads, 4u);
  EXPECT_EQ(apart.merged_reads, 0u);
  c.merge(apart);
  EXPECT_EQ(c.reads, 7u);
  EXPECT_EQ(c.merged_reads, 2u);
  EXPECT_EQ(c.lost_gaps, 3u);
  EXPECT_DOUBLE_EQ(c.merged_share(), 2.0 / 7.0);
}

// The 47 req/s run against the built-in mock (writes 5 ms apart, loop lag
// p99 1.3 ms): the loop is never later than the next write, no read merges,
// no warning. One stray merge in 2000 reads stays under the 1 % line.
TEST(selfcheck_reads, a_client_reading_before_the_next_write_is_not_warned) {
  read_counts c;
  for (int r = 0; r < 100; ++r)
    c.add_gaps(std::vector<std::int64_t>(19, 5'000'000));
  EXPECT_EQ(c.reads, 2000u);
  EXPECT_EQ(merged_reads_warning(c), "");
  c.add_gaps({0});
  EXPECT_EQ(c.merged_reads, 1u);
  EXPECT_EQ(merged_reads_warning(c), "");
  EXPECT_EQ(merged_reads_warning(read_counts{}), "");
}

TEST(selfcheck_reads,
     merged_reads_above_one_percent_are_warned_with_the_share) {
  read_counts c;
  c.reads = 10'000;
  c.merged_reads = 100; // exactly 1 %: not above
  c.lost_gaps = 120;
  EXPECT_EQ(merged_reads_warning(c), "");
  c.merged_reads = 320;
  c.lost_gaps = 410;
  EXPECT_EQ(merged_reads_warning(c),
            "3.2% of the SSE reads (320 of 10000) carried two or more events: "
            "410 inter-chunk gaps read 0 ms and are lost from "
            "inter_chunk_latency (its low percentiles read 0). The client read "
            "later than the server's next write (loop lag above the gap "
            "between two writes) or the server wrote them together; at most 1% "
            "is not warned about");
  EXPECT_EQ(merged_reads_warning(c, 0.05), "");
}

// -- send lag
// -------------------------------------------------------------------

// 47 req/s: 21.28 ms between scheduled sends. A loop lag of 1.3 ms p99 is
// 6 % of it: no warning; 6.2 ms is 29 %, above the quarter.
TEST(selfcheck_send_lag, judged_against_the_scheduled_inter_arrival_time) {
  EXPECT_EQ(send_lag_warning(2000, 1.3e6, 47), "");
  EXPECT_EQ(send_lag_warning(2000, 5.3e6, 47), "");
  EXPECT_EQ(send_lag_warning(2000, 6.2e6, 47),
            "send lag p99 6.20 ms is 29% of the scheduled inter-arrival time "
            "(21.3 ms at --request-rate 47), above 25%: the client sent "
            "scheduled requests late, so the server saw another arrival "
            "process than the one asked for; the *_from_intended latencies "
            "include the lag");
  // The same lag is fine at a slower rate.
  EXPECT_EQ(send_lag_warning(2000, 6.2e6, 10), "");
}

TEST(selfcheck_send_lag, short_runs_and_no_rate_are_not_judged) {
  EXPECT_EQ(send_lag_warning(send_lag_min_sends - 1, 50e6, 47), "");
  EXPECT_NE(send_lag_warning(send_lag_min_sends, 50e6, 47), "");
  EXPECT_EQ(send_lag_warning(2000, 50e6, 0), "");
}

TEST(selfcheck_env, lag_line_is_whole_microseconds_else_the_default) {
  EXPECT_EQ(lag_p99_from_env(nullptr), 1ms);
  EXPECT_EQ(lag_p99_from_env(""), 1ms);
  EXPECT_EQ(lag_p99_from_env("0"), 0ns);
  EXPECT_EQ(lag_p99_from_env("2500"), 2500us);
  EXPECT_EQ(lag_p99_from_env("-1"), 1ms);
  EXPECT_EQ(lag_p99_from_env("1.5"), 1ms);
  EXPECT_EQ(lag_p99_from_env("abc"), 1ms);
}
