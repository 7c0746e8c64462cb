#include "runtime/log/log.hpp"

#include <gtest/gtest.h>

using namespace aiperf;

TEST(log, one_logger_per_component) {
  auto a = log::get("component_a");
  EXPECT_EQ(a, log::get("component_a"));
  EXPECT_NE(a, log::get("component_b"));
  EXPECT_EQ(a->name(), "component_a");
}

TEST(log, level_applies_to_existing_and_new_loggers) {
  auto before = log::get("before");
  ASSERT_TRUE(log::set_level("debug"));
  EXPECT_EQ(before->level(), spdlog::level::debug);
  EXPECT_EQ(log::get("after")->level(), spdlog::level::debug);
  ASSERT_TRUE(log::set_level("warning"));
  EXPECT_EQ(before->level(), spdlog::level::warn);
}

TEST(log, unknown_level_is_rejected_without_change) {
  ASSERT_TRUE(log::set_level("error"));
  EXPECT_FALSE(log::set_level("loud"));
  EXPECT_EQ(log::get("x")->level(), spdlog::level::err);
}
