#include "runtime/io/mmap_file.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>

using namespace aiperf::io;
namespace fs = std::filesystem;

namespace {

class mmap_file_test : public ::testing::Test {
protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path()
           / ("aiperf_mmap_test." + std::to_string(::getpid()) + "."
              + std::to_string(rd()));
    fs::create_directories(dir_);
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path write(const std::string& name, const std::string& contents) {
    auto p = dir_ / name;
    std::ofstream out{p, std::ios::binary};
    out << contents;
    return p;
  }

  fs::path dir_;
};

} // namespace

TEST_F(mmap_file_test, maps_the_whole_file_byte_for_byte) {
  std::string contents = "hello";
  contents.push_back('\0');
  contents += std::string(100000, 'x');
  auto path = write("a.dat", contents);
  auto mapped = mmap_file::open(path);
  ASSERT_TRUE(mapped) << aiperf::error_message(mapped.error());
  EXPECT_EQ(mapped->bytes(), contents);
  EXPECT_EQ(mapped->size(), contents.size());
  EXPECT_EQ(mapped->path(), path);
}

TEST_F(mmap_file_test, empty_file_maps_to_empty_bytes) {
  auto mapped = mmap_file::open(write("empty.dat", ""));
  ASSERT_TRUE(mapped) << aiperf::error_message(mapped.error());
  EXPECT_TRUE(mapped->bytes().empty());
}

TEST_F(mmap_file_test, missing_file_error_names_the_path) {
  auto path = dir_ / "nope.dat";
  auto mapped = mmap_file::open(path);
  ASSERT_FALSE(mapped);
  EXPECT_EQ(error_errno(mapped.error()), ENOENT);
  auto message = aiperf::error_message(mapped.error());
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
}

TEST_F(mmap_file_test, directory_is_rejected) {
  auto mapped = mmap_file::open(dir_);
  ASSERT_FALSE(mapped);
  EXPECT_EQ(error_errno(mapped.error()), EISDIR);
  EXPECT_NE(aiperf::error_message(mapped.error()).find("regular file"),
            std::string::npos);
}

TEST_F(mmap_file_test, move_transfers_the_mapping) {
  auto mapped = mmap_file::open(write("m.dat", "abc"));
  ASSERT_TRUE(mapped);
  mmap_file a = std::move(*mapped);
  mmap_file b;
  b = std::move(a);
  EXPECT_EQ(b.bytes(), "abc");
  EXPECT_TRUE(a.bytes().empty()); // NOLINT(bugprone-use-after-move)
}

TEST_F(mmap_file_test, mapping_survives_unlink_and_replace) {
  auto path = write("r.dat", "old contents");
  auto mapped = mmap_file::open(path);
  ASSERT_TRUE(mapped);
  fs::remove(path);
  write("r.dat", "new");
  EXPECT_EQ(mapped->bytes(), "old contents");
}
