// The mock server over real loopback sockets (in-process server on port 0),
// plus the `aiperf-node mock-server` CLI as a child process.
#include "runtime/tokenizer/tokenizer.hpp"
#include "tests/runtime/http_server/test_client.hpp"
#include "tests/support/skip.hpp"
#include "tools/mock_server/mock_server.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <regex>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <time.h>
#include <unistd.h>

extern char** environ;

using namespace aiperf;
namespace http = boost::beast::http;
namespace fs = std::filesystem;

namespace {

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

rapidjson::Document parse_json(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

struct sse_event {
  std::optional<std::int64_t> stamp;
  std::string data;
};

std::vector<sse_event> parse_sse(std::string_view body) {
  std::vector<sse_event> out;
  std::size_t pos = 0;
  while (pos < body.size()) {
    auto end = body.find("\n\n", pos);
    if (end == std::string_view::npos) {
      ADD_FAILURE() << "unterminated SSE event";
      break;
    }
    sse_event ev;
    auto block = body.substr(pos, end - pos);
    std::size_t lp = 0;
    while (lp <= block.size()) {
      auto nl = block.find('\n', lp);
      auto line = block.substr(
          lp, nl == std::string_view::npos ? std::string_view::npos : nl - lp);
      if (line.substr(0, 4) == ": t=")
        ev.stamp = std::stoll(std::string{line.substr(4)});
      else if (line.substr(0, 6) == "data: ")
        ev.data = std::string{line.substr(6)};
      if (nl == std::string_view::npos)
        break;
      lp = nl + 1;
    }
    out.push_back(std::move(ev));
    pos = end + 2;
  }
  return out;
}

std::string chat(std::uint64_t max_tokens, bool stream, bool usage = true,
                 std::string_view model = "mock-model") {
  return R"({"model":")" + std::string{model}
         + R"(","messages":[{"role":"user","content":"count my tokens please"}],)"
         + R"("max_completion_tokens":)" + std::to_string(max_tokens)
         + R"(,"stream":)" + (stream ? "true" : "false")
         + R"(,"stream_options":{"include_usage":)" + (usage ? "true" : "false")
         + "}}";
}

// Value of one metrics line ("name{labels}"), or -1.
double metric(const std::string& text, const std::string& series) {
  auto pos = text.find("\n" + series + " ");
  if (pos == std::string::npos)
    return -1;
  return std::stod(text.substr(pos + series.size() + 2));
}

struct mock_fixture : ::testing::Test {
  void start(mock_server::options o) {
    o.port = 0;
    srv = std::make_unique<mock_server::server>(o);
    auto r = srv->start();
    ASSERT_TRUE(r) << error_message(r.error());
    port = *r;
  }
  test::http_reply post(std::string_view target, std::string_view body,
                        std::string_view ct = "application/json") {
    return test::http_fetch(port, http::verb::post, target, body, ct);
  }
  static mock_server::options fast() {
    mock_server::options o;
    o.fast = true;
    return o;
  }
  std::unique_ptr<mock_server::server> srv;
  std::uint16_t port = 0;
};

void expect_error_object(const test::http_reply& r, unsigned status,
                         std::string_view code = {}) {
  EXPECT_EQ(r.status, status) << r.body;
  auto d = parse_json(r.body);
  ASSERT_TRUE(d.IsObject() && d.HasMember("error")) << r.body;
  EXPECT_TRUE(d["error"]["message"].IsString());
  if (!code.empty()) {
    ASSERT_TRUE(d["error"]["code"].IsString()) << r.body;
    EXPECT_EQ(std::string_view{d["error"]["code"].GetString()}, code);
  }
}

} // namespace

TEST_F(mock_fixture, streaming_with_usage_has_exact_token_counts) {
  start(fast());
  for (std::uint64_t n : {1u, 7u, 64u, 300u}) {
    auto r = post("/v1/chat/completions", chat(n, true));
    ASSERT_EQ(r.status, 200u);
    EXPECT_TRUE(r.chunked);
    EXPECT_EQ(r.content_type, "text/event-stream");
    auto events = parse_sse(r.body);
    ASSERT_EQ(events.size(), n + 2);
    EXPECT_EQ(events.back().data, "[DONE]");
    std::string content;
    for (std::uint64_t i = 0; i < n; ++i) {
      auto d = parse_json(events[i].data);
      content += d["choices"][0]["delta"]["content"].GetString();
    }
    auto usage = parse_json(events[n].data);
    EXPECT_TRUE(usage["choices"].Empty());
    EXPECT_EQ(tokenizer::count_tokens(content), n);
    EXPECT_EQ(usage["usage"]["completion_tokens"].GetUint64(), n);
    EXPECT_EQ(usage["usage"]["prompt_tokens"].GetUint64(),
              tokenizer::count_tokens("count my tokens please"));
  }
}

TEST_F(mock_fixture, tokens_follow_the_absolute_schedule) {
  // Verifies the lower bound that an absolute schedule guarantees: token i is
  // never written before start + TTFT + ITL*i (start >= our send time).
  mock_server::options o;
  o.ttft_ms = 15;
  o.itl_ms = 3;
  o.stamp_events = true;
  start(o);
  test::http_test_client c{port};
  const auto sent = monotonic_ns();
  auto r = c.request(http::verb::post, "/v1/chat/completions", chat(12, true));
  ASSERT_EQ(r.status, 200u);
  auto events = parse_sse(r.body);
  ASSERT_EQ(events.size(), 14u);
  std::int64_t previous = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    ASSERT_TRUE(events[i].stamp) << "event " << i << " has no stamp";
    EXPECT_GE(*events[i].stamp, previous);
    previous = *events[i].stamp;
    const auto token = std::min<std::size_t>(i, 11);
    EXPECT_GE(*events[i].stamp - sent,
              15'000'000 + 3'000'000 * static_cast<std::int64_t>(token))
        << "event " << i;
  }
}

TEST_F(mock_fixture, non_streaming_chat_and_completions) {
  start(fast());
  auto r = post("/v1/chat/completions", chat(9, false));
  ASSERT_EQ(r.status, 200u);
  EXPECT_FALSE(r.chunked);
  auto d = parse_json(r.body);
  EXPECT_EQ(tokenizer::count_tokens(
                d["choices"][0]["message"]["content"].GetString()),
            9u);
  EXPECT_EQ(d["usage"]["completion_tokens"].GetUint64(), 9u);
  auto c = post("/v1/completions",
                R"({"model":"m","prompt":"a b c d","max_tokens":4})");
  ASSERT_EQ(c.status, 200u);
  auto cd = parse_json(c.body);
  EXPECT_STREQ(cd["object"].GetString(), "text_completion");
  EXPECT_EQ(tokenizer::count_tokens(cd["choices"][0]["text"].GetString()), 4u);
  EXPECT_EQ(cd["usage"]["prompt_tokens"].GetUint64(), 4u);
  auto s = post("/v1/completions",
                R"({"model":"m","prompt":"a b","max_tokens":3,"stream":true})");
  auto events = parse_sse(s.body);
  ASSERT_EQ(events.size(), 4u); // no usage chunk without include_usage
  EXPECT_EQ(events.back().data, "[DONE]");
}

TEST_F(mock_fixture, embeddings_health_models_and_metrics) {
  auto o = fast();
  o.model_names = {"alpha", "beta"};
  start(o);
  auto e = post("/v1/embeddings", R"({"model":"alpha","input":["x y","z"]})");
  ASSERT_EQ(e.status, 200u);
  auto ed = parse_json(e.body);
  EXPECT_EQ(ed["data"].Size(), 2u);
  EXPECT_EQ(ed["data"][0]["embedding"].Size(), 768u);
  EXPECT_EQ(ed["usage"]["prompt_tokens"].GetUint64(), 3u);

  auto h = test::http_fetch(port, http::verb::get, "/health");
  EXPECT_EQ(h.status, 200u);
  auto m = test::http_fetch(port, http::verb::get, "/v1/models");
  auto md = parse_json(m.body);
  ASSERT_EQ(md["data"].Size(), 2u);
  EXPECT_STREQ(md["data"][0]["id"].GetString(), "alpha");

  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(
        post("/v1/chat/completions", chat(5, i % 2 == 0, true, "beta")).status,
        200u);
  auto text = test::http_fetch(port, http::verb::get, "/metrics").body;
  EXPECT_EQ(metric(text, R"(aiperf_mock_requests_total{endpoint="chat"})"), 3);
  EXPECT_EQ(
      metric(text, R"(aiperf_mock_requests_total{endpoint="embeddings"})"), 1);
  EXPECT_EQ(metric(text, R"(aiperf_mock_requests_total{endpoint="health"})"),
            1);
  EXPECT_EQ(metric(text, "aiperf_mock_output_tokens_total"), 15);
  EXPECT_EQ(metric(text, "aiperf_mock_in_flight"), 1); // this request
  // The /metrics handler leaves after its response is written, so the client
  // can hold the response a moment before the gauge drops: wait, bounded.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (srv->metrics_text().find("aiperf_mock_in_flight 0") == std::string::npos
         && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  EXPECT_NE(srv->metrics_text().find("aiperf_mock_in_flight 0"),
            std::string::npos);
}

TEST_F(mock_fixture, error_rate_100_fails_every_generation_request) {
  auto o = fast();
  o.error_rate = 100;
  start(o);
  for (int i = 0; i < 5; ++i)
    expect_error_object(post("/v1/chat/completions", chat(3, true)), 500);
  EXPECT_EQ(test::http_fetch(port, http::verb::get, "/health").status, 200u);
  EXPECT_EQ(metric(srv->metrics_text(),
                   R"(aiperf_mock_responses_total{status="500"})"),
            5);
}

TEST_F(mock_fixture, error_rate_0_never_fails) {
  start(fast());
  for (int i = 0; i < 50; ++i)
    ASSERT_EQ(post("/v1/chat/completions", chat(2, false)).status, 200u);
}

TEST_F(mock_fixture, error_rate_is_reproducible_from_the_seed) {
  auto o = fast();
  o.error_rate = 50;
  o.random_seed = 7;
  auto pattern = [&] {
    start(o);
    std::string p;
    for (int i = 0; i < 40; ++i)
      p += post("/v1/chat/completions", chat(1, false)).status == 500 ? 'x'
                                                                      : '.';
    srv.reset();
    return p;
  };
  auto a = pattern();
  EXPECT_EQ(a, pattern());
  EXPECT_NE(a.find('x'), std::string::npos);
  EXPECT_NE(a.find('.'), std::string::npos);
}

TEST_F(mock_fixture, bad_requests_get_openai_errors) {
  auto o = fast();
  o.model_names = {"only"};
  start(o);
  expect_error_object(
      post("/v1/chat/completions", chat(3, true, true, "other")), 404,
      "model_not_found");
  expect_error_object(post("/v1/chat/completions", "{\"model\": oops"), 400);
  expect_error_object(
      post("/v1/chat/completions", chat(3, true, true, "only"), "text/plain"),
      400);
  expect_error_object(post("/v1/nothing", "{}"), 404);
  expect_error_object(
      test::http_fetch(port, http::verb::get, "/v1/chat/completions"), 404);
  // The server is still fine afterwards.
  EXPECT_EQ(post("/v1/chat/completions", chat(3, false, false, "only")).status,
            200u);
}

TEST(mock_server_options, validation_names_the_flag) {
  auto message = [](const mock_server::options& o) {
    auto valid = mock_server::validate(o);
    EXPECT_FALSE(valid);
    return valid ? std::string{} : error_message(valid.error());
  };
  mock_server::options o;
  o.error_rate = 101;
  EXPECT_NE(message(o).find("--error-rate"), std::string::npos);
  o = {};
  o.ttft_ms = -1;
  EXPECT_NE(message(o).find("--ttft"), std::string::npos);
  o = {};
  o.itl_ms = -0.5;
  EXPECT_NE(message(o).find("--itl"), std::string::npos);
  o = {};
  o.workers = 0;
  EXPECT_NE(message(o).find("--workers"), std::string::npos);
  EXPECT_TRUE(mock_server::validate({}));
}

// Every answered request gets one Common Log Format line naming the client's
// address, the request line and the status, flushed as it is answered.
TEST_F(mock_fixture, access_log_has_one_line_per_request) {
  auto dir = fs::temp_directory_path() / ("mock-access-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto file = dir / "access.log";
  auto o = fast();
  o.access_log = file.string();
  start(o);
  EXPECT_EQ(post("/v1/chat/completions", chat(3, false)).status, 200u);
  EXPECT_EQ(test::http_fetch(port, http::verb::get, "/nope", "", "").status, 404u);
  // A line is written once its response went out, so a client can see the
  // answer first; the graceful stop lets every handler finish, line included.
  srv.reset();
  std::ifstream in{file};
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  ASSERT_EQ(lines.size(), 2u);
  std::regex clf{R"(^127\.0\.0\.1 - - \[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d \+0000\] )"
                 R"("([A-Z]+) (\S+) HTTP/1\.1" (\d{3}) -$)"};
  std::smatch m;
  ASSERT_TRUE(std::regex_match(lines[0], m, clf)) << lines[0];
  EXPECT_EQ(m[1], "POST");
  EXPECT_EQ(m[2], "/v1/chat/completions");
  EXPECT_EQ(m[3], "200");
  ASSERT_TRUE(std::regex_match(lines[1], m, clf)) << lines[1];
  EXPECT_EQ(m[2], "/nope");
  EXPECT_EQ(m[3], "404");
  fs::remove_all(dir);
}

TEST(mock_server_options, an_access_log_that_cannot_be_opened_stops_the_start) {
  mock_server::options o;
  o.port = 0;
  o.access_log = "/nonexistent-dir/access.log";
  mock_server::server srv{o};
  auto r = srv.start();
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), mock_server::errc::bad_option));
  EXPECT_NE(error_message(r.error()).find("--access-log /nonexistent-dir/access.log"),
            std::string::npos)
      << error_message(r.error());
}

TEST(mock_server_options, start_fails_on_bad_options_and_twice) {
  mock_server::options bad;
  bad.workers = 0;
  mock_server::server refused{bad};
  auto r = refused.start();
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), mock_server::errc::bad_option));
  EXPECT_NE(error_message(r.error()).find("--workers"), std::string::npos);
  mock_server::options ok;
  ok.port = 0;
  ok.fast = true;
  mock_server::server srv{ok};
  auto first = srv.start();
  ASSERT_TRUE(first) << error_message(first.error());
  auto again = srv.start();
  ASSERT_FALSE(again);
  EXPECT_TRUE(is_error(again.error(), mock_server::errc::already_started));
  EXPECT_EQ(error_message(again.error()), "mock server already started");
}

// Verifies a --tokenizer that resolves nowhere stops the start, naming it.
TEST(mock_server_options, start_fails_on_a_tokenizer_found_nowhere) {
  mock_server::options bad;
  bad.port = 0;
  bad.tokenizer = "/nonexistent/tokenizer.json";
  mock_server::server srv{bad};
  auto r = srv.start();
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), mock_server::errc::bad_option));
  EXPECT_NE(error_message(r.error()).find("--tokenizer /nonexistent"),
            std::string::npos)
      << error_message(r.error());
}

// -- the CLI as a child process
// -------------------------------------------------

namespace {

struct child {
  pid_t pid = -1;
  int out = -1; // read end of its stdout
};

child spawn(std::vector<std::string> args) {
  int fds[2];
  if (pipe(fds) != 0)
    return {};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  child c;
  if (posix_spawn(&c.pid, argv[0], &fa, nullptr, argv.data(), environ) != 0)
    c.pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  c.out = fds[0];
  return c;
}

// Reads the child's stdout until a newline or the deadline.
std::string read_line(int fd, std::chrono::seconds limit) {
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0)
      continue;
    char c;
    if (read(fd, &c, 1) != 1)
      break;
    if (c == '\n')
      return line;
    line.push_back(c);
  }
  return line;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

const char* node_bin() {
  return std::getenv("AIPERF_NODE_BIN");
}

} // namespace

TEST(mock_server_cli, prints_the_bound_port_serves_and_stops_on_sigterm) {
  if (!node_bin())
    AIPERF_SKIP_OR_FAIL("AIPERF_NODE_BIN is not set",
                        "run the test through ctest, which sets it");
  auto c = spawn({node_bin(), "mock-server", "-p", "0", "--fast", "--log-level",
                  "warning"});
  ASSERT_GT(c.pid, 0);
  auto line = read_line(c.out, std::chrono::seconds(20));
  const std::string prefix = "mock-server listening on http://127.0.0.1:";
  ASSERT_EQ(line.substr(0, prefix.size()), prefix) << line;
  auto port = static_cast<std::uint16_t>(std::stoi(line.substr(prefix.size())));
  EXPECT_EQ(test::http_fetch(port, http::verb::get, "/health").status, 200u);
  kill(c.pid, SIGTERM);
  EXPECT_EQ(wait_exit(c.pid), 0);
  close(c.out);
}

TEST(mock_server_cli, invalid_flags_exit_with_2) {
  if (!node_bin())
    AIPERF_SKIP_OR_FAIL("AIPERF_NODE_BIN is not set",
                        "run the test through ctest, which sets it");
  for (std::vector<std::string> bad :
       {std::vector<std::string>{"--error-rate", "150"},
        {"--ttft", "-1"},
        {"--port", "70000"},
        {"--workers", "0"},
        {"--log-level", "loud"}}) {
    std::vector<std::string> args{node_bin(), "mock-server", "-p", "0"};
    args.insert(args.end(), bad.begin(), bad.end());
    auto c = spawn(args);
    ASSERT_GT(c.pid, 0);
    EXPECT_EQ(wait_exit(c.pid), 2) << bad[0] << " " << bad[1];
    close(c.out);
  }
}
