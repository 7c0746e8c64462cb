#include "runtime/log/log.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in{p};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

// The run's log file gets what stderr gets, at the current level, from
// loggers made before and after it was opened; nothing after close_file().
TEST(log, open_file_copies_every_logger_at_the_level) {
  auto root = std::filesystem::temp_directory_path()
              / ("aiperf_log_test_" + std::to_string(::getpid()));
  auto path = root / "logs" / "aiperf.log";
  ASSERT_TRUE(log::set_level("info"));
  auto early = log::get("early");
  ASSERT_EQ(log::open_file(path), "");
  early->info("first line");
  log::get("late")->warn("second line");
  early->debug("below the level");
  log::close_file();
  early->info("after close");
  auto text = slurp(path);
  EXPECT_NE(text.find("[early] first line"), std::string::npos) << text;
  EXPECT_NE(text.find("[late] second line"), std::string::npos) << text;
  EXPECT_EQ(text.find("below the level"), std::string::npos) << text;
  EXPECT_EQ(text.find("after close"), std::string::npos) << text;
  std::filesystem::remove_all(root);
}

TEST(log, open_file_reports_an_unwritable_path) {
  auto root = std::filesystem::temp_directory_path()
              / ("aiperf_log_test_file_" + std::to_string(::getpid()));
  { std::ofstream{root}; } // a file where the folder should be
  EXPECT_NE(log::open_file(root / "logs" / "aiperf.log"), "");
  std::filesystem::remove(root);
}
