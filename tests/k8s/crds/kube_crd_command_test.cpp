// `aiperf-node kube crd` through run_main, in a temporary directory: it
// writes the generator's bytes, --check is 0 on identical files, 1 with a
// unified diff on a changed or missing one (and writes nothing), and a
// directory that does not exist is a usage error.
#include "k8s/crds/crds.hpp"
#include "tools/commands/commands.hpp"
#include "tests/support/run_main.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

using namespace aiperf;
using testing::HasSubstr;
using testing::Not;
namespace fs = std::filesystem;

namespace {

using result = test::main_result;

std::string slurp(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream out{p, std::ios::binary | std::ios::trunc};
  out << text;
}

class kube_crd : public testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path()
           / ("kube-crd-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  result run(std::vector<std::string> args) {
    args.insert(args.begin(), {"kube", "crd"});
    return test::run_main_captured(args);
  }

  fs::path dir_;
};

TEST_F(kube_crd, writes_both_files_with_the_generators_bytes) {
  auto r = run({"--output-dir", dir_.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const auto& f : k8s::crds::crd_files()) {
    EXPECT_EQ(slurp(dir_ / f.name), f.text) << f.name;
    EXPECT_THAT(r.out, HasSubstr("wrote " + (dir_ / f.name).string()));
  }
  // Nothing else (no temp files left behind).
  EXPECT_EQ(std::distance(fs::directory_iterator{dir_}, fs::directory_iterator{}),
            2);
  // A second run writes the same bytes.
  ASSERT_EQ(run({"--output-dir", dir_.string()}).code, 0);
  auto files = k8s::crds::crd_files();
  EXPECT_EQ(slurp(dir_ / files[0].name), files[0].text);
}

TEST_F(kube_crd, check_is_zero_on_identical_files) {
  ASSERT_EQ(run({"--output-dir", dir_.string()}).code, 0);
  auto r = run({"--check", "--output-dir", dir_.string()});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("@@")));
  EXPECT_THAT(r.out, HasSubstr("up to date"));
}

TEST_F(kube_crd, check_prints_a_unified_diff_and_writes_nothing) {
  ASSERT_EQ(run({"--output-dir", dir_.string()}).code, 0);
  auto files = k8s::crds::crd_files();
  const auto path = dir_ / files[1].name;
  // Change one line in the middle of the sweep's file.
  auto text = files[1].text;
  auto at = text.find("shortNames:");
  ASSERT_NE(at, std::string::npos);
  auto line_end = text.find('\n', at);
  auto line_start = text.rfind('\n', at) + 1;
  const std::string old_line = text.substr(line_start, line_end - line_start);
  const std::string new_line = old_line + "-edited";
  text.replace(line_start, line_end - line_start, new_line);
  write(path, text);

  auto r = run({"--check", "--output-dir", dir_.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("--- " + path.string() + "\n"));
  EXPECT_THAT(r.out, HasSubstr("+++ " + path.string() + " (generated)\n"));
  EXPECT_THAT(r.out, HasSubstr("\n-" + new_line + "\n+" + old_line + "\n"));
  EXPECT_THAT(r.out, HasSubstr("\n@@ -"));
  // Only the changed file is in the diff.
  EXPECT_THAT(r.out, Not(HasSubstr(files[0].name)));
  EXPECT_THAT(r.err, HasSubstr("aiperf-node kube crd --output-dir"));
  // The hunk: 3 lines of context either side of the one change.
  auto hunk = r.out.substr(r.out.find("@@"));
  EXPECT_EQ(std::count(hunk.begin(), hunk.end(), '\n'), 1 + 3 + 2 + 3) << hunk;
  // --check wrote nothing.
  EXPECT_EQ(slurp(path), text);
}

TEST_F(kube_crd, check_reports_a_missing_file) {
  ASSERT_EQ(run({"--output-dir", dir_.string()}).code, 0);
  auto files = k8s::crds::crd_files();
  fs::remove(dir_ / files[0].name);
  auto r = run({"--check", "--output-dir", dir_.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("--- /dev/null\n+++ "
                               + (dir_ / files[0].name).string() + "\n@@ -0,0 +1,"));
  EXPECT_THAT(r.err, HasSubstr((dir_ / files[0].name).string() + ": missing"));
  EXPECT_FALSE(fs::exists(dir_ / files[0].name));
}

TEST_F(kube_crd, check_sees_a_missing_final_newline) {
  ASSERT_EQ(run({"--output-dir", dir_.string()}).code, 0);
  auto files = k8s::crds::crd_files();
  auto text = files[0].text;
  text.pop_back();
  write(dir_ / files[0].name, text);
  auto r = run({"--check", "--output-dir", dir_.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("newline"));
}

TEST_F(kube_crd, a_directory_that_does_not_exist_is_a_usage_error) {
  auto missing = (dir_ / "absent").string();
  for (bool check : {false, true}) {
    std::vector<std::string> args{"--output-dir", missing};
    if (check)
      args.push_back("--check");
    auto r = run(args);
    EXPECT_EQ(r.code, 2);
    EXPECT_THAT(r.err, HasSubstr("--output-dir " + missing + ": not a directory"));
    EXPECT_FALSE(fs::exists(missing));
  }
  EXPECT_EQ(run({"--no-such-flag"}).code, 2);
}

TEST_F(kube_crd, help_names_the_default_directory) {
  auto r = run({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("k8s/deploy/crds"));
  EXPECT_THAT(r.out, HasSubstr("--check"));
}

} // namespace

TEST(kube_crd_committed, the_committed_files_are_the_generators) {
  // The unit twin of the `k8s_crds.committed` ctest (`kube crd --check`).
  const fs::path dir = AIPERF_SOURCE_DIR "/k8s/deploy/crds";
  for (const auto& f : k8s::crds::crd_files())
    EXPECT_TRUE(slurp(dir / f.name) == f.text)
        << "k8s/deploy/crds/" << f.name
        << " is stale or missing: regenerate it with `aiperf-node kube crd` "
           "from the repository root";
}
