#include "runtime/selfcheck/loop_lag_probe.hpp"

#include <gtest/gtest.h>

#include <utility> // before Boost.Asio with g++ 12

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <chrono>
#include <future>
#include <thread>

using namespace aiperf::selfcheck;
using namespace std::chrono_literals;

TEST(lag_recorder, percentiles_of_injected_samples) {
  lag_recorder r;
  EXPECT_EQ(r.stats().samples, 0u);
  for (int i = 1; i <= 100; ++i)
    r.record_lateness(std::chrono::microseconds{i});
  auto s = r.stats();
  EXPECT_EQ(s.samples, 100u);
  EXPECT_NEAR(s.p50_ns, 50'500, 50);
  EXPECT_NEAR(s.p99_ns, 99'010, 60);
  EXPECT_DOUBLE_EQ(s.max_ns, 100'000);
  EXPECT_DOUBLE_EQ(s.fifth_largest_ns, 96'000); // exact, not binned
}

TEST(lag_recorder, fifth_largest_needs_five_samples) {
  lag_recorder r;
  for (int i = 0; i < 4; ++i)
    r.record_lateness(3ms);
  EXPECT_DOUBLE_EQ(r.stats().fifth_largest_ns, 0);
  r.record_lateness(1ms);
  EXPECT_DOUBLE_EQ(r.stats().fifth_largest_ns, 1e6);
}

TEST(lag_recorder, negative_lateness_counts_as_zero) {
  lag_recorder r;
  r.record_lateness(-5ms);
  EXPECT_EQ(r.stats().samples, 1u);
  EXPECT_DOUBLE_EQ(r.stats().max_ns, 0);
}

TEST(lag_recorder, busy_is_thread_cpu_over_wall_since_first_tick) {
  lag_recorder r;
  EXPECT_EQ(r.busy(), std::nullopt);
  r.record_thread_cpu(1'000, 10'000);
  EXPECT_EQ(r.busy(), std::nullopt);
  r.record_thread_cpu(2'000, 12'000);
  r.record_thread_cpu(4'000, 14'000);
  ASSERT_TRUE(r.busy());
  EXPECT_DOUBLE_EQ(*r.busy(), 0.75);
}

namespace {

// Runs `ioc` on a thread until it runs out of work; `done` says whether it
// did within `limit` (a probe that keeps re-arming never runs out).
struct runner {
  boost::asio::io_context& ioc;
  std::future<void> done;
  explicit runner(boost::asio::io_context& ioc)
    : ioc(ioc), done(std::async(std::launch::async, [&ioc] { ioc.run(); })) {
    // nop
  }
  bool finished_within(std::chrono::seconds limit) {
    if (done.wait_for(limit) == std::future_status::ready)
      return true;
    ioc.stop();
    done.wait();
    return false;
  }
};

bool wait_for_samples(const loop_lag_probe& probe, std::uint64_t n) {
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (probe.lag().samples < n) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::yield();
  }
  return true;
}

} // namespace

// Verifies an idle loop is sampled ever less often, up to the cap, and that
// a tick with work in it restores the base interval at once.
TEST(next_probe_interval, backs_off_while_idle_and_resets_on_work) {
  using std::chrono::nanoseconds;
  nanoseconds base = 10ms;
  nanoseconds idle_cpu = 120us;
  EXPECT_EQ(next_probe_interval(base, base, idle_cpu), 20ms);
  EXPECT_EQ(next_probe_interval(640ms, base, idle_cpu), 1s);
  EXPECT_EQ(next_probe_interval(1s, base, idle_cpu), 1s);
  EXPECT_EQ(next_probe_interval(1s, base, 1ms), base);
  EXPECT_EQ(next_probe_interval(80ms, base, 2ms), base);
  // A cap at or below the base interval turns the back-off off.
  EXPECT_EQ(next_probe_interval(base, base, idle_cpu, base), base);
}

// Verifies the probe samples a live io_context and, once stopped, stops
// re-arming so the io_context runs out of work.
TEST(loop_lag_probe, samples_a_live_loop_and_stops_cleanly) {
  boost::asio::io_context ioc;
  loop_lag_probe probe{ioc, 1ms};
  probe.start();
  runner run{ioc};
  ASSERT_TRUE(wait_for_samples(probe, 5));
  probe.stop();
  EXPECT_TRUE(run.finished_within(20s));
  auto s = probe.lag();
  EXPECT_GE(s.samples, 5u);
  EXPECT_GE(s.p50_ns, 0);
  EXPECT_LE(s.p50_ns, s.p99_ns);
  EXPECT_LE(s.p99_ns, s.max_ns);
  ASSERT_TRUE(probe.io_thread_busy());
  EXPECT_GE(*probe.io_thread_busy(), 0);
}

// Verifies destroying a running probe leaves no handler re-arming a dead
// timer: the io_context still runs out of work.
TEST(loop_lag_probe, destroyed_while_running_is_safe) {
  boost::asio::io_context ioc;
  std::optional<runner> run;
  {
    loop_lag_probe probe{ioc, 1ms};
    probe.start();
    run.emplace(ioc);
    ASSERT_TRUE(wait_for_samples(probe, 2));
  }
  EXPECT_TRUE(run->finished_within(20s));
}

// Verifies the monitor returns a verdict built from live readings.
TEST(monitor, finish_judges_the_run) {
  boost::asio::io_context ioc;
  monitor m{ioc, 1ms};
  m.start();
  runner run{ioc};
  // Some work on the loop so the verdict has CPU to report.
  std::promise<void> worked;
  boost::asio::post(ioc, [&worked] {
    volatile std::uint64_t sink = 0;
    for (std::uint64_t i = 0; i < 2'000'000; ++i)
      sink = sink + i;
    worked.set_value();
  });
  worked.get_future().wait();
  auto v = m.finish();
  EXPECT_TRUE(run.finished_within(20s));
  EXPECT_GT(v.cpu.wall_ns, 0);
  EXPECT_GE(v.cpu.cores_available, 0.01);
  EXPECT_NE(v.summary.find("client self-check: loop lag"), std::string::npos);
  EXPECT_EQ(v.client_limited,
            v.lag_limited || v.cpu_limited || v.io_thread_limited);
}
