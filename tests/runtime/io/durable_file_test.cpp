#include "runtime/io/durable_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

using namespace aiperf::io;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A fresh directory per test, removed afterwards.
class durable_file : public ::testing::Test {
protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path()
           / ("aiperf_io_test." + std::to_string(::getpid()) + "."
              + std::to_string(rd()));
    fs::create_directories(dir_);
  }

  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  /// Names of everything in the test directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator{dir_})
      out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
};

} // namespace

TEST_F(durable_file, round_trips_contents) {
  auto target = dir_ / "out.json";
  std::string contents = "{\"a\":1}\n";
  contents.push_back('\0');
  contents += "binary\xff";
  EXPECT_TRUE(atomic_write_file(target, contents));
  EXPECT_EQ(read_file(target), contents);
  EXPECT_EQ(entries(), std::vector<std::string>{"out.json"}) << "no temp left";
}

TEST_F(durable_file, empty_contents) {
  auto target = dir_ / "empty";
  EXPECT_TRUE(atomic_write_file(target, ""));
  EXPECT_TRUE(fs::exists(target));
  EXPECT_EQ(fs::file_size(target), 0u);
}

TEST_F(durable_file, overwrite_replaces_old_contents) {
  auto target = dir_ / "latest.txt";
  ASSERT_TRUE(atomic_write_file(target, "old old old"));
  ASSERT_TRUE(atomic_write_file(target, "new"));
  EXPECT_EQ(read_file(target), "new");
  EXPECT_EQ(entries(), std::vector<std::string>{"latest.txt"});
}

TEST_F(durable_file, parent_that_is_a_file_fails_with_enotdir) {
  auto parent = dir_ / "not_a_dir";
  ASSERT_TRUE(atomic_write_file(parent, "keep me"));
  auto done = atomic_write_file(parent / "out.json", "x");
  ASSERT_FALSE(done);
  EXPECT_TRUE(aiperf::is_error(done.error(), errc::system));
  EXPECT_EQ(error_errno(done.error()), ENOTDIR);
  auto message = aiperf::error_message(done.error());
  EXPECT_NE(message.find((parent / "out.json").string()), std::string::npos)
      << message;
  EXPECT_NE(message.find("open temp file"), std::string::npos) << message;
  EXPECT_EQ(read_file(parent), "keep me");
  EXPECT_EQ(entries(), std::vector<std::string>{"not_a_dir"});
}

TEST_F(durable_file, missing_directory_fails_with_enoent) {
  auto done = atomic_write_file(dir_ / "missing" / "out.json", "x");
  ASSERT_FALSE(done);
  EXPECT_EQ(error_errno(done.error()), ENOENT);
  EXPECT_TRUE(entries().empty());
}

// Verifies the late failure path: the temp file was written and synced, the
// rename fails (target is a non-empty directory), and the temp is removed
// while the old target stays as it was.
TEST_F(durable_file, failed_rename_leaves_target_and_no_temp) {
  auto target = dir_ / "results";
  fs::create_directories(target);
  ASSERT_TRUE(atomic_write_file(target / "inner", "old"));
  auto done = atomic_write_file(target, "new");
  ASSERT_FALSE(done);
  auto message = aiperf::error_message(done.error());
  EXPECT_NE(message.find("rename"), std::string::npos) << message;
  EXPECT_TRUE(fs::is_directory(target));
  EXPECT_EQ(read_file(target / "inner"), "old");
  EXPECT_EQ(entries(), std::vector<std::string>{"results"});
}

TEST_F(durable_file, rejects_paths_that_name_no_file) {
  for (fs::path bad : {fs::path{}, dir_ / "", dir_ / "."}) {
    auto done = atomic_write_file(bad, "x");
    ASSERT_FALSE(done) << bad;
    EXPECT_TRUE(aiperf::is_error(done.error(), errc::invalid_argument));
    EXPECT_NE(aiperf::error_message(done.error()).find("must name a file"),
              std::string::npos);
  }
  EXPECT_TRUE(entries().empty());
}

TEST_F(durable_file, abandoned_writer_leaves_no_file) {
  auto target = dir_ / "export.jsonl";
  {
    durable_writer writer{target};
    ASSERT_TRUE(writer.ok());
    EXPECT_TRUE(fs::exists(writer.temp_path()));
    EXPECT_EQ(writer.temp_path().parent_path(), dir_);
    EXPECT_EQ(writer.temp_path().filename().string().rfind(
                  "export.jsonl.tmp." + std::to_string(::getpid()) + ".", 0),
              0u)
        << writer.temp_path();
    EXPECT_TRUE(writer.append(std::string(3u << 20, 'x'))) << "spills to disk";
  }
  EXPECT_TRUE(entries().empty());
}

TEST_F(durable_file, abandoned_writer_keeps_old_target) {
  auto target = dir_ / "export.jsonl";
  ASSERT_TRUE(atomic_write_file(target, "old"));
  {
    durable_writer writer{target};
    writer.append("new");
    writer.abandon();
    EXPECT_FALSE(writer.append("more"));
    auto done = writer.commit();
    ASSERT_FALSE(done);
    EXPECT_TRUE(aiperf::is_error(done.error(), errc::closed));
  }
  EXPECT_EQ(read_file(target), "old");
  EXPECT_EQ(entries(), std::vector<std::string>{"export.jsonl"});
}

TEST_F(durable_file, large_streamed_write_is_byte_exact) {
  auto target = dir_ / "profile_export.jsonl";
  std::string expected;
  expected.reserve(9u << 20);
  durable_writer writer{target, 1u << 20};
  std::mt19937 rng{42};
  std::string line;
  for (std::uint32_t i = 0; expected.size() < (8u << 20) + 12345; ++i) {
    // Lines of varying length, plus an occasional block bigger than the
    // buffer, exercise both the buffered and the direct write path.
    line = "{\"i\":" + std::to_string(i) + ",\"pad\":\""
           + std::string(rng() % 300, static_cast<char>('a' + i % 26))
           + "\"}\n";
    if (i % 5000 == 4999)
      line += std::string((1u << 20) + 7, 'Z');
    expected += line;
    ASSERT_TRUE(writer.append(line));
  }
  EXPECT_EQ(writer.size(), expected.size());
  EXPECT_FALSE(fs::exists(target)) << "nothing visible before commit";
  EXPECT_TRUE(writer.commit());
  EXPECT_TRUE(writer.temp_path().empty());
  EXPECT_EQ(read_file(target), expected);
  EXPECT_EQ(entries(), std::vector<std::string>{"profile_export.jsonl"});
  auto again = writer.commit();
  ASSERT_FALSE(again) << "second commit is an error";
}

TEST_F(durable_file, writer_open_failure_is_reported_by_commit) {
  durable_writer writer{dir_ / "missing" / "x.jsonl"};
  EXPECT_FALSE(writer.ok());
  EXPECT_FALSE(writer.append("data"));
  auto done = writer.commit();
  ASSERT_FALSE(done);
  EXPECT_EQ(error_errno(done.error()), ENOENT);
  EXPECT_TRUE(entries().empty());
}

// Verifies a failure in the middle of the stream (the file-size limit, which
// binds root too): the error is sticky, the temp file is removed, and the old
// target is intact.
TEST_F(durable_file, write_failure_mid_stream_keeps_old_target) {
  auto target = dir_ / "big.jsonl";
  ASSERT_TRUE(atomic_write_file(target, "old"));
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 1u << 20;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  bool appended_all = true;
  caf::expected<void> done;
  {
    durable_writer writer{target, 64u << 10};
    for (int i = 0; i < 64 && appended_all; ++i)
      appended_all = writer.append(std::string(64u << 10, 'x'));
    done = writer.commit();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(appended_all);
  ASSERT_FALSE(done);
  EXPECT_EQ(error_errno(done.error()), EFBIG);
  auto message = aiperf::error_message(done.error());
  EXPECT_NE(message.find("write temp file"), std::string::npos) << message;
  EXPECT_EQ(read_file(target), "old");
  EXPECT_EQ(entries(), std::vector<std::string>{"big.jsonl"});
}

TEST_F(durable_file, moved_writer_owns_the_temp_file) {
  auto target = dir_ / "moved.txt";
  durable_writer a{target};
  a.append("hello");
  durable_writer b{std::move(a)};
  EXPECT_TRUE(b.append(" world"));
  EXPECT_TRUE(b.commit());
  EXPECT_EQ(read_file(target), "hello world");
  EXPECT_EQ(entries(), std::vector<std::string>{"moved.txt"});
}

TEST_F(durable_file, relative_path_in_current_directory) {
  auto cwd = fs::current_path();
  fs::current_path(dir_);
  auto done = atomic_write_file("relative.txt", "r");
  fs::current_path(cwd);
  EXPECT_TRUE(done);
  EXPECT_EQ(read_file(dir_ / "relative.txt"), "r");
}
