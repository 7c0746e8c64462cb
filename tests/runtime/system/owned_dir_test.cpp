#include "runtime/system/owned_dir.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <unistd.h>

using namespace aiperf::system;
namespace fs = std::filesystem;

namespace {

struct scratch_parent : ::testing::Test {
  fs::path parent = fs::temp_directory_path()
                    / ("aiperf_owned_dir_test." + std::to_string(::getpid()) + "."
                       + std::to_string(std::random_device{}()));
  scratch_parent() { fs::create_directories(parent); }
  ~scratch_parent() override {
    std::error_code ec;
    fs::remove_all(parent, ec);
  }
  void make_dir_owned_by(const std::string& name, const std::string& pid) {
    fs::create_directories(parent / name);
    std::ofstream{parent / name / "owner.pid"} << pid << "\n";
  }
};

TEST_F(scratch_parent, a_directory_names_its_owner_and_goes_with_it) {
  fs::path path;
  {
    auto dir = owned_dir::make(parent, "run-");
    ASSERT_TRUE(dir) << aiperf::error_message(dir.error());
    path = dir->path();
    EXPECT_TRUE(fs::is_directory(path));
    std::ifstream in{path / "owner.pid"};
    long pid = 0;
    in >> pid;
    EXPECT_EQ(pid, ::getpid());
  }
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(scratch_parent, stale_directories_of_dead_owners_are_reclaimed) {
  // A pid no process can have: above the kernel's pid_max ceiling.
  make_dir_owned_by("run-dead", "2147483600");
  make_dir_owned_by("run-alive", std::to_string(::getpid()));
  make_dir_owned_by("other-dead", "2147483600");
  fs::create_directories(parent / "run-unowned"); // fresh, no owner file
  EXPECT_EQ(reclaim_stale(parent, "run-"), 1u);
  EXPECT_FALSE(fs::exists(parent / "run-dead"));
  EXPECT_TRUE(fs::exists(parent / "run-alive"));
  EXPECT_TRUE(fs::exists(parent / "other-dead")) << "another prefix is not ours";
  EXPECT_TRUE(fs::exists(parent / "run-unowned")) << "a young unowned one may be being made";
}

TEST_F(scratch_parent, make_reclaims_before_it_creates) {
  make_dir_owned_by("run-dead", "2147483600");
  auto dir = owned_dir::make(parent, "run-");
  ASSERT_TRUE(dir);
  EXPECT_FALSE(fs::exists(parent / "run-dead"));
}

TEST_F(scratch_parent, an_unwritable_parent_is_an_error_naming_it) {
  auto dir = owned_dir::make(parent / "missing" / "deeper", "run-");
  ASSERT_FALSE(dir);
  EXPECT_NE(aiperf::error_message(dir.error()).find("missing/deeper"), std::string::npos)
    << aiperf::error_message(dir.error());
}

} // namespace
