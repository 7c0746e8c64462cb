#include "runtime/time/skewed_clock.hpp"

#include "runtime/time/clock_offset_tracker.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace aiperf::time;

namespace {

constexpr std::int64_t hour_ns = 3'600'000'000'000;

} // namespace

TEST(parse_skew_ns, accepts_signed_integers_only) {
  EXPECT_EQ(parse_skew_ns("0"), 0);
  EXPECT_EQ(parse_skew_ns("-2500000000"), -2'500'000'000);
  EXPECT_EQ(parse_skew_ns("+17"), 17);
  EXPECT_EQ(parse_skew_ns("9223372036854775807"),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_FALSE(parse_skew_ns(""));
  EXPECT_FALSE(parse_skew_ns("+"));
  EXPECT_FALSE(parse_skew_ns("-"));
  EXPECT_FALSE(parse_skew_ns("+-5"));
  EXPECT_FALSE(parse_skew_ns("1.5"));
  EXPECT_FALSE(parse_skew_ns("5ms"));
  EXPECT_FALSE(parse_skew_ns(" 5"));
  EXPECT_FALSE(parse_skew_ns("9223372036854775808"));
}

TEST(skewed_clock, adds_the_skew_to_the_monotonic_clock) {
  skewed_clock c{hour_ns};
  EXPECT_EQ(c.skew_ns(), hour_ns);
  auto before = monotonic_now_ns();
  auto skewed = c.now_ns();
  auto after = monotonic_now_ns();
  // Ordering only, no timing: the reading lies between two plain readings.
  EXPECT_LE(before, skewed - hour_ns);
  EXPECT_LE(skewed - hour_ns, after);
}

TEST(skewed_clock, is_monotonic) {
  skewed_clock c{-hour_ns};
  auto prev = c.now_ns();
  for (int i = 0; i < 1000; ++i) {
    auto now = c.now_ns();
    ASSERT_GE(now, prev);
    prev = now;
  }
}

TEST(skewed_clock, an_empty_setting_means_no_skew) {
  auto c = skewed_clock::parse("SKEW", "");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->skew_ns(), 0);
}

TEST(skewed_clock, parses_the_skew_once) {
  auto c = skewed_clock::parse("SKEW", "-5000000000");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->skew_ns(), -5'000'000'000);
}

TEST(skewed_clock, an_invalid_setting_names_it_and_the_fix) {
  auto c = skewed_clock::parse("AIPERF_TEST_CLOCK_SKEW_NS", "2s");
  ASSERT_FALSE(c);
  EXPECT_TRUE(aiperf::is_error(c.error(), errc::bad_skew));
  const auto msg = aiperf::error_message(c.error());
  EXPECT_NE(msg.find("AIPERF_TEST_CLOCK_SKEW_NS='2s'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("signed integer"), std::string::npos) << msg;
}

// Verifies the end-to-end path with an injected skew: a "worker" clock built
// from a skew setting and the controller's plain clock, exchanging real
// timestamps in one process, give back the injected skew.
TEST(skewed_clock, tracker_removes_an_injected_skew) {
  auto made = skewed_clock::parse("SKEW", "3600000000000");
  ASSERT_TRUE(made);
  auto worker = *made;
  skewed_clock controller;
  clock_offset_tracker tracker;
  for (int i = 0; i < 5; ++i) {
    auto send = worker.now_ns();
    auto at_controller = controller.now_ns();
    auto recv = worker.now_ns();
    ASSERT_TRUE(tracker.add_ping_pong(send, at_controller, recv));
  }
  for (int i = 0; i < 40; ++i) {
    auto granted = controller.now_ns();
    ASSERT_TRUE(tracker.add_one_way(worker.now_ns(), granted));
  }
  auto offset = tracker.offset_ns();
  ASSERT_TRUE(offset.has_value());
  // Exchanges here take far less than a second; the skew is an hour. The
  // tolerance only absorbs scheduling hiccups, it does not time anything.
  EXPECT_LT(std::llabs(*offset - hour_ns), 1'000'000'000);
  // A worker timestamp mapped back is on the controller's clock.
  auto w = worker.now_ns();
  auto c = controller.now_ns();
  EXPECT_LT(std::llabs(tracker.to_controller_ns(w) - c), 1'000'000'000);
}
