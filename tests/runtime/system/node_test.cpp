#include "runtime/system/node.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/config_value.hpp>

#include <gtest/gtest.h>

using namespace aiperf::system;

TEST(node, available_cores_is_positive) {
  EXPECT_GE(available_cores(), 1u);
}

TEST(node, scheduler_settings_are_always_explicit) {
  caf::actor_system_config cfg;
  ASSERT_TRUE(apply(cfg, node_options{"sharing", 3}));
  EXPECT_EQ(caf::get_or(cfg, "scheduler.max-threads", size_t{0}), 3u);
  EXPECT_EQ(caf::get_or(cfg, "scheduler.policy", caf::atom("x")),
            caf::atom("sharing"));
  ASSERT_TRUE(apply(cfg, node_options{"stealing", 0}));
  EXPECT_EQ(caf::get_or(cfg, "scheduler.max-threads", size_t{0}),
            available_cores());
}

TEST(node, io_thread_policy_needs_an_io_context) {
  caf::actor_system_config cfg;
  auto applied = apply(cfg, node_options{"io-thread", 0});
  ASSERT_FALSE(applied);
  EXPECT_TRUE(aiperf::is_error(applied.error(), errc::bad_option));
  auto msg = aiperf::error_message(applied.error());
  EXPECT_NE(msg.find("--scheduler-policy io-thread"), std::string::npos);
  EXPECT_NE(msg.find("'sharing'"), std::string::npos);
  EXPECT_TRUE(cfg.module_factories.empty());
}

TEST(node, unknown_policy_is_rejected_with_the_fix) {
  caf::actor_system_config cfg;
  auto applied = apply(cfg, node_options{"fifo", 1});
  ASSERT_FALSE(applied);
  auto msg = aiperf::error_message(applied.error());
  EXPECT_NE(msg.find("--scheduler-policy"), std::string::npos);
  EXPECT_NE(msg.find("sharing"), std::string::npos);
}

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>
#include <unistd.h>

// Verifies the first SIGTERM reaches the callback on the watcher thread.
TEST(signal_watcher, first_signal_calls_back) {
  std::mutex mtx;
  std::condition_variable cv;
  int seen = 0;
  signal_watcher watcher{[&](int sig) {
    std::lock_guard<std::mutex> guard{mtx};
    seen = sig;
    cv.notify_all();
  }};
  kill(getpid(), SIGTERM);
  std::unique_lock<std::mutex> lock{mtx};
  cv.wait_for(lock, std::chrono::seconds(30), [&] { return seen != 0; });
  EXPECT_EQ(seen, SIGTERM);
  EXPECT_EQ(watcher.signals_received(), 1);
}

// Verifies a second interrupt aborts at once with exit code 130.
TEST(signal_watcher_death, second_signal_exits_130) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
    {
      signal_watcher watcher{[](int) {}};
      kill(getpid(), SIGINT);
      // Standard signals do not queue: send the second after the first
      // was taken, or the two merge into one.
      while (watcher.signals_received() == 0)
        std::this_thread::yield();
      kill(getpid(), SIGINT);
      for (;;)
        pause();
    },
    ::testing::ExitedWithCode(130), "");
}
