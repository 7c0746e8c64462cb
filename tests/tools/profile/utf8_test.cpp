// `aiperf-node profile` with bytes that are not UTF-8: an input file line
// is rejected; a server's are replaced by U+FFFD so every export stays
// valid JSON. Assertions on exit codes and file contents, never timings.
#include "tests/tools/profile/profile_harness.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <fstream>
#include <string>
#include <vector>

using namespace aiperf::itest;
using testing::HasSubstr;

namespace {

/// Parses `text` as JSON that must also be well-formed UTF-8.
rapidjson::Document strict_json(const std::string& text) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseValidateEncodingFlag>(text.data(), text.size());
  return d;
}

std::string describe(const run_result& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out
         + "\nstderr:\n" + r.err;
}

class utf8_test : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(node_bin().empty()) << "AIPERF_NODE_BIN is not set";
  }

  fs::path artifacts() const { return tmp_.path() / "artifacts"; }

  run_result profile(std::vector<std::string> args) {
    std::vector<std::string> full{"profile", "--model", "m", "--ui", "none",
                                  "--output-artifact-dir",
                                  artifacts().string()};
    full.insert(full.end(), args.begin(), args.end());
    return run_node(full, tmp_.path() / ("run" + std::to_string(runs_++)));
  }

  fs::path dir() const { return run_dir(artifacts()); }

  temp_dir tmp_;
  int runs_ = 0;
};

} // namespace

TEST_F(utf8_test, ill_formed_sse_content_is_replaced_in_every_export) {
  // A tiny server: HTTP 200 + an event stream whose content deltas hold a
  // lone continuation byte, an overlong form, an encoded surrogate, a code
  // point above U+10FFFF and a truncated sequence, next to valid text.
  auto server = std::make_unique<child>(
    std::vector<std::string>{
      "/usr/bin/python3", "-c",
      "import socket\n"
      "s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(64)\n"
      "print(s.getsockname()[1], flush=True)\n"
      "body=(b'data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":"
      "{\"content\":\"ok \\xff\\xc0\\xaf \\xed\\xa0\\x80 \\xf4\\x90\\x80\\x80"
      " caf\\xc3\\xa9 \\xe2\\x82\"}}]}\\n\\n'\n"
      "  b'data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":"
      "{\"content\":\" end\\x80\"},\"finish_reason\":\"stop\"}]}\\n\\n'\n"
      "  b'data: [DONE]\\n\\n')\n"
      "while True:\n"
      "  c,_=s.accept(); buf=b''\n"
      "  try:\n"
      "    while b'\\r\\n\\r\\n' not in buf:\n"
      "      d=c.recv(65536)\n"
      "      if not d: raise EOFError()\n"
      "      buf+=d\n"
      "    h=buf.split(b'\\r\\n\\r\\n')[0].lower()\n"
      "    n=int([l.split(b':')[1] for l in h.split(b'\\r\\n') if l.startswith(b'content-length')][0])\n"
      "    rest=buf.split(b'\\r\\n\\r\\n',1)[1]\n"
      "    while len(rest)<n: rest+=c.recv(65536)\n"
      "    c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Type: text/event-stream\\r\\n"
      "Connection: close\\r\\nContent-Length: '+str(len(body)).encode()+b'\\r\\n\\r\\n'+body)\n"
      "  except EOFError:\n"
      "    pass\n"
      "  c.close()\n"},
    tmp_.path() / "utf8_server");
  auto port = server->first_line().value_or("");
  ASSERT_FALSE(port.empty()) << server->err();
  auto r = profile({"--url", "http://127.0.0.1:" + port, "--streaming",
                    "--request-count", "3", "--export-level", "raw"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);

  // Every JSON export parses as JSON and as UTF-8.
  std::size_t checked = 0;
  for (const auto& name : files_under(dir())) {
    const auto path = dir() / name;
    if (path.extension() == ".json") {
      auto d = strict_json(read_file(path));
      EXPECT_FALSE(d.HasParseError()) << name;
      ++checked;
    } else if (path.extension() == ".jsonl") {
      for (const auto& line : read_lines(path)) {
        auto d = strict_json(line);
        EXPECT_FALSE(d.HasParseError()) << name << ": " << line;
      }
      ++checked;
    }
  }
  // inputs.json, the summary, the manifest, the records and the raw lines.
  EXPECT_GE(checked, 5u);

  // The raw lines: U+FFFD where the bytes were, and the count (11 in the
  // first event, 1 in the second) in the metadata.
  auto raw = read_lines(dir() / "profile_export_raw.jsonl");
  ASSERT_EQ(raw.size(), 3u);
  for (const auto& line : raw) {
    auto d = strict_json(line);
    ASSERT_FALSE(d.HasParseError()) << line;
    ASSERT_TRUE(d["metadata"].HasMember("invalid_utf8_replaced")) << line;
    EXPECT_EQ(d["metadata"]["invalid_utf8_replaced"].GetUint64(), 12u);
    ASSERT_GE(d["responses"].Size(), 2u);
    std::string first = d["responses"][0]["text"].GetString();
    EXPECT_THAT(first, HasSubstr("ok \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD "));
    EXPECT_THAT(first, HasSubstr(" caf\xC3\xA9 \xEF\xBF\xBD"));
  }
}

TEST_F(utf8_test, an_input_file_line_that_is_not_utf8_is_rejected) {
  auto input = tmp_.path() / "prompts.jsonl";
  {
    std::ofstream out{input, std::ios::binary};
    out << "{\"text\": \"fine\"}\n{\"text\": \"latin-1 caf\xE9\"}\n";
  }
  auto r = profile({"--input-file", input.string(), "--custom-dataset-type",
                    "single_turn"});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_THAT(r.err, HasSubstr(input.string()));
  EXPECT_THAT(r.err, HasSubstr("line 2: invalid UTF-8 at column 22"));
  EXPECT_FALSE(fs::exists(artifacts())) << "no empty folders left behind";
}
