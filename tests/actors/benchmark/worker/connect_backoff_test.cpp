// The wait schedule after refused connections, and the state the workers
// of a process share per destination: pure, no clocks (times are passed).
#include "actors/benchmark/worker/connect_backoff.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

using aiperf::worker::backoff_registry;
using aiperf::worker::connect_backoff_initial_ns;
using aiperf::worker::connect_backoff_max_ns;
using aiperf::worker::connect_backoff_ns;
using aiperf::worker::destination_backoff;

constexpr std::int64_t ms = 1'000'000;

TEST(connect_backoff, no_failure_no_wait) {
  EXPECT_EQ(connect_backoff_ns(0, 0.0), 0);
  EXPECT_EQ(connect_backoff_ns(0, 1.0), 0);
}

TEST(connect_backoff, doubles_from_10_ms_up_to_1_s) {
  // Full jitter (1.0) is the schedule itself.
  std::int64_t expected[] = {10, 20, 40, 80, 160, 320, 640, 1000, 1000};
  for (std::uint32_t n = 1; n <= 9; ++n)
    EXPECT_EQ(connect_backoff_ns(n, 1.0), expected[n - 1] * ms) << n;
  EXPECT_EQ(connect_backoff_ns(64, 1.0), connect_backoff_max_ns);
  EXPECT_EQ(connect_backoff_ns(UINT32_MAX, 1.0), connect_backoff_max_ns);
}

TEST(connect_backoff, jitter_keeps_at_least_half) {
  for (std::uint32_t n = 1; n <= 12; ++n) {
    auto full = connect_backoff_ns(n, 1.0);
    EXPECT_EQ(connect_backoff_ns(n, 0.0), full / 2) << n;
    auto mid = connect_backoff_ns(n, 0.5);
    EXPECT_GE(mid, full / 2) << n;
    EXPECT_LE(mid, full) << n;
    // Out-of-range jitter is clamped.
    EXPECT_EQ(connect_backoff_ns(n, -3.0), full / 2) << n;
    EXPECT_EQ(connect_backoff_ns(n, 7.0), full) << n;
  }
}

TEST(connect_backoff, a_dead_endpoint_costs_few_attempts) {
  // The least total wait of the first k attempts of one worker (every
  // jitter at its minimum): within 10 s, 26 attempts.
  std::int64_t waited = 0;
  std::uint32_t attempts = 0;
  while (waited < 10'000 * ms) {
    ++attempts;
    waited += connect_backoff_ns(attempts, 0.0);
  }
  EXPECT_EQ(attempts, 26u); // 7 doubling waits (635 ms), then 500 ms each
  EXPECT_EQ(connect_backoff_initial_ns, 10 * ms);
}

/// `workers` closed-loop workers, each with one request always due, facing
/// a destination that refuses every connection `refuse_after_ns` after the
/// attempt, for `run_ns` of simulated time; returns the attempts made.
std::uint64_t
attempts_against_a_dead_server(std::size_t workers, std::int64_t run_ns,
                               std::int64_t refuse_after_ns = 100'000) {
  destination_backoff shared;
  struct slot {
    std::int64_t due = 0;      // when it asks admit() next
    std::int64_t refused = -1; // when its attempt under way is refused
    bool probe = false;
  };
  std::vector<slot> slots(workers);
  std::uint64_t attempts = 0;
  for (;;) {
    // The next event of any worker, in time order (a discrete-event loop).
    auto next = std::min_element(slots.begin(), slots.end(),
                                 [](const slot& a, const slot& b) {
                                   auto ta = a.refused >= 0 ? a.refused : a.due;
                                   auto tb = b.refused >= 0 ? b.refused : b.due;
                                   return ta < tb;
                                 });
    auto now = next->refused >= 0 ? next->refused : next->due;
    if (now >= run_ns)
      return attempts;
    if (next->refused >= 0) {
      shared.refused(now, next->probe);
      next->refused = -1;
      next->due = now; // closed loop: the next request is due at once
      continue;
    }
    auto admitted = shared.admit(now);
    if (admitted.retry_at_ns != 0) {
      EXPECT_GT(admitted.retry_at_ns, now);
      next->due = admitted.retry_at_ns;
      continue;
    }
    ++attempts;
    next->probe = admitted.probe;
    next->refused = now + refuse_after_ns;
  }
}

TEST(destination_backoff, healthy_sends_are_admitted_at_once) {
  destination_backoff b;
  EXPECT_FALSE(b.backing_off());
  auto a = b.admit(5);
  EXPECT_EQ(a.retry_at_ns, 0);
  EXPECT_FALSE(a.probe);
  b.reached(); // nothing to end
  EXPECT_EQ(b.failures(), 0u);
}

TEST(destination_backoff, a_refusal_holds_every_sender_back_then_one_probes) {
  destination_backoff b;
  b.refused(1'000 * ms, false);
  EXPECT_TRUE(b.backing_off());
  EXPECT_EQ(b.failures(), 1u);
  // Within the first wait (5-10 ms after the refusal) nobody sends.
  auto held = b.admit(1'000 * ms + 1);
  EXPECT_GE(held.retry_at_ns, 1'005 * ms);
  EXPECT_LE(held.retry_at_ns, 1'010 * ms);
  // After it one sender probes; the others wait for the next step (10-20
  // ms), not for the probe's answer alone.
  auto probe = b.admit(held.retry_at_ns);
  EXPECT_EQ(probe.retry_at_ns, 0);
  EXPECT_TRUE(probe.probe);
  auto other = b.admit(held.retry_at_ns);
  EXPECT_GE(other.retry_at_ns, held.retry_at_ns + 10 * ms);
  EXPECT_LE(other.retry_at_ns, held.retry_at_ns + 20 * ms);
  EXPECT_FALSE(other.probe);
  // Requests that were under way before the backoff change nothing.
  b.refused(held.retry_at_ns, false);
  EXPECT_EQ(b.failures(), 1u);
  // The probe's refusal is the next step: 10-20 ms from it.
  b.refused(held.retry_at_ns + 1 * ms, true);
  EXPECT_EQ(b.failures(), 2u);
  auto again = b.admit(held.retry_at_ns + 1 * ms);
  EXPECT_GE(again.retry_at_ns, held.retry_at_ns + 11 * ms);
  EXPECT_LE(again.retry_at_ns, held.retry_at_ns + 21 * ms);
}

TEST(destination_backoff, an_answer_ends_it_for_every_sender) {
  destination_backoff b;
  b.refused(0, false);
  auto probe = b.admit(20 * ms);
  ASSERT_TRUE(probe.probe);
  b.reached();
  EXPECT_FALSE(b.backing_off());
  EXPECT_EQ(b.failures(), 0u);
  for (int i = 0; i < 4; ++i) {
    auto a = b.admit(20 * ms);
    EXPECT_EQ(a.retry_at_ns, 0);
    EXPECT_FALSE(a.probe);
  }
}

TEST(destination_backoff, a_cancelled_probe_frees_its_place) {
  destination_backoff b;
  b.refused(0, false);
  ASSERT_TRUE(b.admit(20 * ms).probe);
  auto held = b.admit(20 * ms);
  ASSERT_NE(held.retry_at_ns, 0);
  b.abandoned(true);
  // The step is unchanged and the next sender due probes.
  EXPECT_EQ(b.failures(), 1u);
  EXPECT_TRUE(b.admit(held.retry_at_ns).probe);
  // A non-probe's cancel frees nothing.
  b.abandoned(false);
  EXPECT_FALSE(b.admit(held.retry_at_ns).probe);
}

TEST(destination_backoff, a_probe_that_hangs_holds_the_others_a_full_step) {
  destination_backoff b;
  b.refused(0, false);
  ASSERT_TRUE(b.admit(20 * ms).probe);
  // Past the probe's provisional wait, still no answer: wait 10 ms more
  // (the step of 1 failure, unjittered), nobody else probes.
  auto a = b.admit(1'000 * ms);
  EXPECT_EQ(a.retry_at_ns, 1'010 * ms);
  EXPECT_FALSE(a.probe);
}

TEST(destination_backoff, the_wait_is_capped_and_jittered) {
  destination_backoff b{42};
  std::int64_t t = 0;
  b.refused(t, false);
  std::vector<std::int64_t> waits;
  for (int i = 0; i < 20; ++i) {
    auto held = b.admit(t);
    ASSERT_NE(held.retry_at_ns, 0);
    t = held.retry_at_ns;
    ASSERT_TRUE(b.admit(t).probe);
    b.refused(t, true);
    auto next = b.admit(t);
    waits.push_back(next.retry_at_ns - t);
  }
  EXPECT_EQ(b.failures(), 21u);
  // From the 8th refusal on the schedule is at its cap (1 s).
  waits.erase(waits.begin(), waits.begin() + 7);
  for (auto w : waits) {
    EXPECT_GE(w, connect_backoff_max_ns / 2);
    EXPECT_LE(w, connect_backoff_max_ns);
  }
  // Jittered: not every capped wait is the same.
  EXPECT_NE(*std::min_element(waits.begin(), waits.end()),
            *std::max_element(waits.begin(), waits.end()));
}

// The point of sharing: 16 workers facing a dead server for 10 s make
// about as many attempts as one worker does (one probe per wait), where
// per-worker state made 16 times as many.
TEST(destination_backoff, many_workers_cost_what_one_does) {
  auto one = attempts_against_a_dead_server(1, 10'000 * ms);
  auto sixteen = attempts_against_a_dead_server(16, 10'000 * ms);
  EXPECT_GE(one, 10u);
  EXPECT_LE(one, 40u); // 26 with every jitter at its least
  // The 16 first attempts were all under way before the first refusal.
  EXPECT_LE(sixteen, one + 16);
}

TEST(backoff_registry, one_state_per_host_and_port_while_held) {
  backoff_registry r;
  auto a = r.of("127.0.0.1", 8000);
  auto b = r.of("127.0.0.1", 8000);
  auto c = r.of("127.0.0.1", 8001);
  auto d = r.of("localhost", 8000);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  a->refused(0, false);
  EXPECT_TRUE(b->backing_off());
  EXPECT_FALSE(c->backing_off());
  // Once nobody holds it the next run starts afresh.
  a.reset();
  b.reset();
  auto fresh = r.of("127.0.0.1", 8000);
  EXPECT_FALSE(fresh->backing_off());
  EXPECT_EQ(backoff_registry::process(), backoff_registry::process());
}

} // namespace
