// The work queue's client-go semantics: stingy de-duplication, never two
// at once for a key, delayed and rate-limited adds.
#include "k8s/informer/work_queue.hpp"

#include <gtest/gtest.h>

namespace aiperf::k8s::informer {
namespace {

using namespace std::chrono_literals;

const queue_clock::time_point t0{std::chrono::hours{1}};

TEST(work_queue, a_key_added_twice_before_processing_is_processed_once) {
  work_queue q;
  q.add("ns/a");
  q.add("ns/b");
  q.add("ns/a");
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.get(), "ns/a");
  EXPECT_EQ(q.get(), "ns/b");
  EXPECT_EQ(q.get(), std::nullopt);
}

TEST(work_queue, a_key_added_while_processing_comes_back_after_done) {
  work_queue q;
  q.add("k");
  ASSERT_EQ(q.get(), "k");
  q.add("k");
  q.add("k");
  EXPECT_EQ(q.size(), 0u); // never handed out while processing
  EXPECT_EQ(q.get(), std::nullopt);
  q.done("k");
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.get(), "k");
  q.done("k");
  EXPECT_EQ(q.get(), std::nullopt);
}

TEST(work_queue, add_after_waits_and_the_earliest_time_wins) {
  work_queue q;
  q.add_after("k", 10s, t0);
  q.add_after("k", 3s, t0);
  q.add_after("k", 20s, t0);
  EXPECT_EQ(q.next_due(), t0 + 3s);
  q.advance(t0 + 2s);
  EXPECT_EQ(q.get(), std::nullopt);
  q.advance(t0 + 3s);
  EXPECT_EQ(q.get(), "k");
  EXPECT_EQ(q.next_due(), std::nullopt);
  q.add_after("now", 0s, t0);
  EXPECT_EQ(q.get(), "now");
}

TEST(work_queue, rate_limited_adds_back_off_exponentially_until_forget) {
  work_queue q;
  EXPECT_EQ(q.next_backoff("k"), 5ms);
  q.add_rate_limited("k", t0);
  EXPECT_EQ(q.next_due(), t0 + 5ms);
  q.advance(t0 + 5ms);
  ASSERT_EQ(q.get(), "k");
  q.done("k");
  q.add_rate_limited("k", t0);
  EXPECT_EQ(q.next_due(), t0 + 10ms);
  for (int i = 0; i < 30; ++i)
    q.add_rate_limited("other", t0);
  EXPECT_EQ(q.next_backoff("other"), 1000s); // capped
  EXPECT_EQ(q.num_requeues("k"), 2);
  q.forget("k");
  EXPECT_EQ(q.num_requeues("k"), 0);
  EXPECT_EQ(q.next_backoff("k"), 5ms);
}

TEST(work_queue, due_keys_join_in_the_order_they_fell_due) {
  work_queue q;
  q.add_after("late", 2s, t0);
  q.add_after("early", 1s, t0);
  q.add("now");
  q.advance(t0 + 5s);
  EXPECT_EQ(q.get(), "now");
  EXPECT_EQ(q.get(), "early");
  EXPECT_EQ(q.get(), "late");
}

} // namespace
} // namespace aiperf::k8s::informer
