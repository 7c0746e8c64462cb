// The local files of a cluster run: embedded into run_config.json on the
// CLI side (size limit, warnings) and materialized in the pods (checks).
#include "tools/commands/user_files.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace aiperf::user_files {
namespace {

namespace fs = std::filesystem;

class user_files_test : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("user-files-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& content) {
    auto p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream{p, std::ios::binary} << content;
    return p;
  }

  fs::path dir_;
};

TEST_F(user_files_test, exactly_512_kib_travels) {
  config::profile_config cfg;
  cfg.input_file = write("prompts.jsonl", std::string(524288, 'x')).string();
  std::vector<std::string> warnings;
  auto files = embed(cfg, warnings);
  ASSERT_TRUE(files) << error_message(files.error());
  ASSERT_EQ(files->size(), 1u);
  EXPECT_EQ((*files)[0]["option"], "input_file");
  EXPECT_EQ((*files)[0]["name"], "prompts.jsonl");
  EXPECT_EQ((*files)[0]["size"], 524288);
  EXPECT_TRUE(warnings.empty());
}

TEST_F(user_files_test, one_byte_more_is_refused_naming_each_file_and_the_ways_out) {
  config::profile_config cfg;
  cfg.input_file = write("prompts.jsonl", std::string(524288, 'x')).string();
  cfg.ca_file = write("ca.pem", "y").string();
  std::vector<std::string> warnings;
  auto files = embed(cfg, warnings);
  ASSERT_FALSE(files);
  auto msg = error_message(files.error());
  EXPECT_NE(msg.find("524289 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--input-file " + *cfg.input_file + " (524288 bytes)"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("--ca-file " + *cfg.ca_file + " (1 bytes)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--secret-mounts"), std::string::npos) << msg;
  EXPECT_NE(msg.find("URL"), std::string::npos) << msg;
}

TEST_F(user_files_test, a_missing_path_is_an_in_pod_path_with_a_warning) {
  config::profile_config cfg;
  cfg.input_file = "/data/in-pod.jsonl";
  cfg.tokenizer = "Qwen/Qwen3-0.6B";
  std::vector<std::string> warnings;
  auto files = embed(cfg, warnings);
  ASSERT_TRUE(files);
  EXPECT_TRUE(files->empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("--input-file /data/in-pod.jsonl"), std::string::npos);
  EXPECT_NE(warnings[0].find("inside the pods"), std::string::npos);
}

TEST_F(user_files_test, round_trip_points_the_options_at_private_files) {
  config::profile_config cfg;
  cfg.input_file = write("in/prompts.jsonl", "{\"text\": \"a b c\"}\n").string();
  write("tok/tokenizer.json", "{\"model\": {}}");
  cfg.tokenizer = (dir_ / "tok").string();
  std::vector<std::string> warnings;
  auto files = embed(cfg, warnings);
  ASSERT_TRUE(files);
  ASSERT_EQ(files->size(), 2u);
  k8s::json run = {{"input", {{"input_file", *cfg.input_file}}}};
  auto out = dir_ / "pod";
  auto done = materialize(*files, out, run);
  ASSERT_TRUE(done) << error_message(done.error());
  auto input = fs::path{run["input"]["input_file"].get<std::string>()};
  auto tok = fs::path{run["input"]["tokenizer"].get<std::string>()};
  EXPECT_EQ(input, out / "input_file" / "prompts.jsonl");
  EXPECT_EQ(tok, out / "tokenizer" / "tokenizer.json");
  std::ifstream in{input};
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "{\"text\": \"a b c\"}");
  struct stat st{};
  ASSERT_EQ(::stat(input.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(user_files_test, a_sha256_mismatch_is_refused) {
  config::profile_config cfg;
  cfg.input_file = write("p.jsonl", "hello").string();
  std::vector<std::string> warnings;
  auto files = embed(cfg, warnings);
  ASSERT_TRUE(files);
  (*files)[0]["content_base64"] = "aGVsbG8h"; // "hello!"
  k8s::json run = k8s::json::object();
  auto done = materialize(*files, dir_ / "pod", run);
  ASSERT_FALSE(done);
  EXPECT_NE(error_message(done.error()).find("does not match"), std::string::npos)
      << error_message(done.error());
  EXPECT_FALSE(fs::exists(dir_ / "pod" / "input_file" / "p.jsonl"));
}

TEST_F(user_files_test, bad_base64_is_refused) {
  k8s::json files = k8s::json::array(
      {{{"option", "input_file"}, {"name", "p.jsonl"}, {"sha256", ""},
        {"content_base64", "not base64!"}}});
  k8s::json run = k8s::json::object();
  auto done = materialize(files, dir_ / "pod", run);
  ASSERT_FALSE(done);
  EXPECT_NE(error_message(done.error()).find("not base64"), std::string::npos);
}

TEST_F(user_files_test, a_name_that_leaves_its_folder_is_refused) {
  for (std::string name : {"../escape", "a/b", "..", ""}) {
    k8s::json files = k8s::json::array(
        {{{"option", "input_file"}, {"name", name}, {"sha256", ""}, {"content_base64", ""}}});
    k8s::json run = k8s::json::object();
    auto done = materialize(files, dir_ / "pod", run);
    ASSERT_FALSE(done) << name;
    EXPECT_NE(error_message(done.error()).find("not a plain file name"), std::string::npos)
        << error_message(done.error());
  }
  EXPECT_FALSE(fs::exists(dir_ / "escape"));
}

TEST_F(user_files_test, an_unknown_option_is_refused) {
  k8s::json files = k8s::json::array(
      {{{"option", "output_dir"}, {"name", "x"}, {"sha256", ""}, {"content_base64", ""}}});
  k8s::json run = k8s::json::object();
  auto done = materialize(files, dir_ / "pod", run);
  ASSERT_FALSE(done);
  EXPECT_NE(error_message(done.error()).find("output_dir"), std::string::npos);
}

} // namespace
} // namespace aiperf::user_files
