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
  EXPECT_TRUE(v.warning.empty());
  EXPECT_EQ(v.summary,
            "client self-check: loop lag p50 0.01 ms p99 0.05 ms max 0.10 ms "
            "(1000 samples), CPU 30% of 2 cores, I/O thread 40% busy");
}

// Verifies the warning docs/profile.md quotes: lag and CPU both saturated.
TEST(selfcheck_judge, lag_and_cpu_saturation_give_the_documented_warning) {
  auto v = judge(lag_of(3.2), cpu_of(0.97, 2), std::nullopt);
  EXPECT_TRUE(v.client_limited);
  EXPECT_TRUE(v.lag_limited);
  EXPECT_TRUE(v.cpu_limited);
  EXPECT_EQ(v.warning, "client-limited: I/O thread lag p99 3.20 ms, CPU 97% "
                       "of 2 cores; results may include client overhead");
}

TEST(selfcheck_judge, lag_alone_is_enough) {
  auto v = judge(lag_of(1.5), cpu_of(0.2, 2), 0.3);
  EXPECT_TRUE(v.client_limited);
  EXPECT_TRUE(v.lag_limited);
  EXPECT_FALSE(v.cpu_limited);
  EXPECT_NE(v.warning.find("lag p99 1.50 ms"), std::string::npos);
}

TEST(selfcheck_judge, cpu_alone_is_enough) {
  auto v = judge(lag_of(0.1), cpu_of(0.95, 4), std::nullopt);
  EXPECT_TRUE(v.client_limited);
  EXPECT_FALSE(v.lag_limited);
  EXPECT_TRUE(v.cpu_limited);
  EXPECT_NE(v.warning.find("CPU 95% of 4 cores"), std::string::npos);
}

// Verifies one saturated I/O thread is caught even when the process uses
// only half of the machine (1 of 2 cores).
TEST(selfcheck_judge, a_saturated_io_thread_is_enough) {
  auto v = judge(lag_of(0.2), cpu_of(0.5, 2), 0.98);
  EXPECT_TRUE(v.client_limited);
  EXPECT_TRUE(v.io_thread_limited);
  EXPECT_FALSE(v.cpu_limited);
  EXPECT_EQ(v.warning, "client-limited: I/O thread lag p99 0.20 ms, I/O "
                       "thread 98% busy; results may include client overhead");
}

// Verifies the thresholds are inclusive for CPU and exclusive for lag.
TEST(selfcheck_judge, thresholds_are_configurable_and_exact_at_the_edge) {
  thresholds limits;
  limits.lag_p99 = 2ms;
  limits.cpu_saturation = 0.5;
  EXPECT_FALSE(judge(lag_of(2.0), cpu_of(0.49, 2), std::nullopt, limits)
                 .client_limited);
  EXPECT_TRUE(judge(lag_of(2.01), cpu_of(0.1, 2), std::nullopt, limits)
                .lag_limited);
  EXPECT_TRUE(judge(lag_of(0.1), cpu_of(0.5, 2), std::nullopt, limits)
                .cpu_limited);
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
  EXPECT_TRUE(v.warning.empty());
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
  EXPECT_TRUE(judge(lag_of(3.0), cpu_of(0.125, 2), std::nullopt, limits)
                .lag_limited);
}

TEST(selfcheck_judge, fractional_core_quota_is_printed_as_such) {
  auto v = judge(lag_of(0.1), cpu_of(0.99, 1.5), std::nullopt);
  EXPECT_NE(v.warning.find("CPU 99% of 1.50 cores"), std::string::npos);
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

// Verifies several lagging I/O threads make one warning for the process:
// each thread's own quotes its own lag, so they differed and all were
// printed (one line per thread over the line, up to --io-threads lines).
TEST(selfcheck_combine, many_lagging_threads_give_one_warning) {
  std::vector<verdict> threads;
  for (double p99 : {2.45, 7.09, 0.05, 3.43, 2.93})
    threads.push_back(judge(lag_of(p99), cpu_of(0.24, 2), 0.3));
  auto v = combine(threads);
  EXPECT_TRUE(v.client_limited);
  EXPECT_DOUBLE_EQ(v.lag.p99_ns, 7.09e6);
  EXPECT_EQ(
      v.warning,
      "client-limited: I/O thread lag p99 7.09 ms (the worst of 4 of 5 I/O "
      "threads over the line), CPU 24% of 2 cores; results may include client "
      "overhead");
}

TEST(selfcheck_combine, the_limited_thread_is_quoted_not_the_most_lagging) {
  // An idle thread's lag is not judged, however late its timer woke.
  std::vector<verdict> threads{judge(lag_of(9.0), cpu_of(0.02, 2), 0.01),
                               judge(lag_of(0.2), cpu_of(0.02, 2), 0.98)};
  ASSERT_FALSE(threads[0].client_limited);
  auto v = combine(threads);
  EXPECT_TRUE(v.io_thread_limited);
  EXPECT_EQ(
      v.warning,
      "client-limited: I/O thread lag p99 0.20 ms (1 of 2 I/O threads), I/O "
      "thread 98% busy; results may include client overhead");
}

TEST(selfcheck_combine, one_thread_or_none_keeps_the_warning_as_judged) {
  auto one = judge(lag_of(3.2), cpu_of(0.97, 2), std::nullopt);
  EXPECT_EQ(combine({one}).warning, one.warning);
  std::vector<verdict> quiet{judge(lag_of(0.1), cpu_of(0.3, 2), 0.3),
                             judge(lag_of(0.4), cpu_of(0.3, 2), 0.4)};
  auto v = combine(quiet);
  EXPECT_FALSE(v.client_limited);
  EXPECT_TRUE(v.warning.empty());
  EXPECT_DOUBLE_EQ(v.lag.p99_ns, 0.4e6);
  EXPECT_FALSE(combine({}).client_limited);
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
