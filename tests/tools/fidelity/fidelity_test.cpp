// Fidelity of aiperf-node's streaming metrics against an independent server.
//
// tests/tools/fidelity/sse_server.py (Python + aiohttp, no code shared with
// aiperf-node) logs per X-Request-ID when each request arrived and when every
// write of its SSE response began and ended, in CLOCK_MONOTONIC (the clock
// aiperf-node stamps with), while varying the framing: LF/CRLF, comment lines
// and comment-only blocks, an empty role delta, a 3-token chunk, events split
// mid-line and inside the line terminators, an empty finish delta, a
// usage-only chunk and [DONE].
//
// The suite runs `aiperf-node profile --export-level raw` against it (once per
// server pacing: 6 ms between writes, and 0 ms so that reads batch events) and
// joins profile_export.jsonl, profile_export_raw.jsonl and the server log. It
// asserts exact counts, the exact arithmetic from client stamps to metrics,
// and causality (no client stamp precedes the server write that produced it);
// it never asserts how long anything took. The client − server differences
// it observed are printed (and recorded as test properties) for comparison.
#include "runtime/tokenizer/tokenizer.hpp"
#include "tests/support/skip.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <poll.h>
#include <set>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <string>
#include <string_view>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <utility>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

constexpr int request_count = 20;
constexpr std::string_view python_bin = AIPERF_FIDELITY_PYTHON;
constexpr std::string_view server_script = AIPERF_FIDELITY_SERVER;

// ---------------------------------------------------------------------------
// What each side saw.

struct server_event {
  std::string kind; // comment, role, content, finish, usage, done
  std::string text; // content delta ("" for non-content)
  std::optional<std::string> data; // the `data:` payload (none for comments)
  std::int64_t tokens = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> writes; // [begin, end]

  /// Begin of the write that completed the event (its blank line).
  [[nodiscard]] std::int64_t completed_ns() const {
    return writes.back().first;
  }
};

struct server_request {
  std::int64_t receive_ns = 0;
  std::int64_t prepare_ns = 0; // right before the response headers went out
  std::string mode;
  std::vector<server_event> events;
};

struct client_request {
  bool has_error = false;
  std::string error;
  // jsonl metadata (epoch ns; ack 0 = null)
  std::int64_t request_start_ns = 0;
  std::int64_t request_ack_ns = 0;
  std::int64_t request_end_ns = 0;
  // jsonl metrics as the exact number text ("20.228976"), by tag.
  std::map<std::string, std::string> metrics;
  std::vector<std::string> inter_chunk_latency;
  // raw export (monotonic ns)
  bool has_raw = false;
  std::int64_t start_perf_ns = 0;
  std::vector<std::pair<std::int64_t, std::string>> responses;
};

struct run_result {
  std::string setup_error; // non-empty: the run itself failed
  fs::path dir;
  int profile_exit = -1;
  std::string profile_output;
  std::map<std::string, server_request> server;
  std::map<std::string, client_request> client;
};

// ---------------------------------------------------------------------------
// Child processes (bounded waits: the deadline guards against a hang, it is
// not a timing assertion).

struct child {
  pid_t pid = -1;
  int stdout_fd = -1; // read end when stdout is piped
};

/// Starts `args`; stdout (and stderr too when `output_file` is set) goes to
/// `output_file`, or to a pipe when it is empty.
std::optional<child> spawn_child(const std::vector<std::string>& args,
                                 const std::string& output_file,
                                 std::string& error) {
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  int fds[2] = {-1, -1};
  if (output_file.empty()) {
    if (pipe(fds) != 0) {
      error = std::string{"pipe: "} + std::strerror(errno);
      return std::nullopt;
    }
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
  } else {
    posix_spawn_file_actions_addopen(&fa, 1, output_file.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  }
  child c;
  int rc = posix_spawn(&c.pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (fds[1] >= 0)
    close(fds[1]);
  if (rc != 0) {
    if (fds[0] >= 0)
      close(fds[0]);
    error = "cannot start " + args[0] + ": " + std::strerror(rc);
    return std::nullopt;
  }
  c.stdout_fd = fds[0];
  return c;
}

/// Waits for `pid` to exit until `deadline`; returns its exit code (128 +
/// signal when killed by one) or nullopt on timeout.
std::optional<int> wait_child(pid_t pid, clock_type::time_point deadline) {
  for (;;) {
    int status = 0;
    auto r = waitpid(pid, &status, WNOHANG);
    if (r == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0 || clock_type::now() > deadline)
      return std::nullopt;
    timespec pause{0, 10'000'000}; // re-check the exit condition every 10 ms
    nanosleep(&pause, nullptr);
  }
}

/// Reads the first line of `fd` until `deadline`.
std::optional<std::string> read_first_line(int fd,
                                           clock_type::time_point deadline) {
  std::string line;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - clock_type::now());
    if (left.count() <= 0)
      return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0)
      continue;
    char c = 0;
    if (read(fd, &c, 1) != 1)
      return std::nullopt;
    if (c == '\n')
      return line;
    line.push_back(c);
  }
}

std::string read_file(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---------------------------------------------------------------------------
// Parsing.

/// Exact ns of a decimal millisecond text ("20.228976" -> 20228976), or
/// nullopt when it is not a whole number of ns in plain decimal notation.
std::optional<std::int64_t> ms_text_to_ns(std::string_view s) {
  bool negative = !s.empty() && s.front() == '-';
  if (negative)
    s.remove_prefix(1);
  auto dot = s.find('.');
  auto whole = s.substr(0, dot);
  auto frac
      = dot == std::string_view::npos ? std::string_view{} : s.substr(dot + 1);
  if (whole.empty() || frac.size() > 6)
    return std::nullopt;
  std::int64_t v = 0;
  for (char c : whole) {
    if (c < '0' || c > '9')
      return std::nullopt;
    v = v * 10 + (c - '0');
  }
  std::int64_t f = 0;
  for (std::size_t i = 0; i < 6; ++i) {
    char c = i < frac.size() ? frac[i] : '0';
    if (c < '0' || c > '9')
      return std::nullopt;
    f = f * 10 + (c - '0');
  }
  v = v * 1'000'000 + f;
  return negative ? -v : v;
}

std::string get_string(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject() || !obj.HasMember(key) || !obj[key].IsString())
    return {};
  return {obj[key].GetString(), obj[key].GetStringLength()};
}

std::optional<std::string> parse_server_log(const std::string& text,
                                            run_result& out) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  if (d.HasParseError() || !d.IsObject())
    return "server log is not a JSON object";
  for (auto& m : d.GetObject()) {
    server_request r;
    auto& v = m.value;
    r.receive_ns = v["receive_ns"].GetInt64();
    r.prepare_ns = v["prepare_ns"].GetInt64();
    r.mode = get_string(v, "mode");
    for (auto& e : v["events"].GetArray()) {
      server_event ev;
      ev.kind = get_string(e, "kind");
      ev.text = get_string(e, "text");
      if (e["data"].IsString())
        ev.data = get_string(e, "data");
      ev.tokens = e["tokens"].GetInt64();
      for (auto& w : e["writes"].GetArray())
        ev.writes.emplace_back(w[0].GetInt64(), w[1].GetInt64());
      if (ev.writes.empty())
        return "server log: an event of " + std::string{m.name.GetString()}
               + " has no writes";
      r.events.push_back(std::move(ev));
    }
    out.server.emplace(m.name.GetString(), std::move(r));
  }
  return std::nullopt;
}

std::optional<std::string> parse_jsonl(const std::string& text,
                                       run_result& out) {
  std::istringstream in{text};
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    rapidjson::Document d;
    // Numbers as text: metric values are compared exactly in ns.
    d.Parse<rapidjson::kParseNumbersAsStringsFlag>(line.data(), line.size());
    if (d.HasParseError() || !d.IsObject())
      return "profile_export.jsonl line is not JSON: " + line.substr(0, 200);
    auto& meta = d["metadata"];
    auto& c = out.client[get_string(meta, "x_request_id")];
    auto epoch_ns = [&](const char* key) -> std::int64_t {
      return meta[key].IsString()
                 ? std::strtoll(meta[key].GetString(), nullptr, 10)
                 : 0;
    };
    c.request_start_ns = epoch_ns("request_start_ns");
    c.request_ack_ns = epoch_ns("request_ack_ns");
    c.request_end_ns = epoch_ns("request_end_ns");
    c.has_error = !d["error"].IsNull();
    if (c.has_error)
      c.error = get_string(d["error"], "message");
    for (auto& m : d["metrics"].GetObject()) {
      auto& value = m.value["value"];
      if (value.IsArray()) {
        for (auto& x : value.GetArray())
          c.inter_chunk_latency.emplace_back(x.GetString());
      } else {
        c.metrics.emplace(m.name.GetString(), value.GetString());
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> parse_raw(const std::string& text, run_result& out) {
  std::istringstream in{text};
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    rapidjson::Document d;
    d.Parse(line.data(), line.size());
    if (d.HasParseError() || !d.IsObject())
      return "profile_export_raw.jsonl line is not JSON: "
             + line.substr(0, 200);
    auto& c = out.client[get_string(d["metadata"], "x_request_id")];
    c.has_raw = true;
    c.start_perf_ns = d["start_perf_ns"].GetInt64();
    for (auto& r : d["responses"].GetArray())
      c.responses.emplace_back(r["perf_ns"].GetInt64(), get_string(r, "text"));
  }
  return std::nullopt;
}

std::optional<fs::path> find_file(const fs::path& dir, std::string_view name) {
  std::error_code ec;
  for (auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.path().filename() == name)
      return e.path();
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// The run: server up, profile, server down, parse.

void run_everything(run_result& out, int delay_ms) {
  const char* node = std::getenv("AIPERF_NODE_BIN");
  if (node == nullptr || *node == '\0') {
    out.setup_error = "AIPERF_NODE_BIN is not set; run through ctest or set "
                      "it to the aiperf-node binary";
    return;
  }
  char dir_template[] = "/tmp/aiperf-fidelity-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) {
    out.setup_error = std::string{"mkdtemp: "} + std::strerror(errno);
    return;
  }
  out.dir = dir_template;
  auto log_path = out.dir / "server_log.json";

  auto server = spawn_child(
      {std::string{python_bin}, std::string{server_script}, "--port", "0",
       "--delay-ms", std::to_string(delay_ms), "--log-file", log_path.string()},
      "", out.setup_error);
  if (!server)
    return;
  auto port = read_first_line(server->stdout_fd,
                              clock_type::now() + std::chrono::seconds{60});
  if (!port || port->empty()) {
    kill(server->pid, SIGKILL);
    wait_child(server->pid, clock_type::now() + std::chrono::seconds{10});
    out.setup_error = "sse_server.py printed no port";
    return;
  }

  auto output_path = out.dir / "profile_output.txt";
  auto profile = spawn_child(
      {node, "profile", "--url", "http://127.0.0.1:" + *port, "--model", "m",
       "--tokenizer", "whitespace8", // the mock's token model, not "m"
       "--streaming", "--request-count", std::to_string(request_count),
       "--concurrency", "4", "--export-level", "raw", "--output-artifact-dir",
       (out.dir / "artifacts").string()},
      output_path.string(), out.setup_error);
  if (profile) {
    auto rc = wait_child(profile->pid,
                         clock_type::now() + std::chrono::seconds{180});
    if (!rc) {
      kill(profile->pid, SIGKILL);
      wait_child(profile->pid, clock_type::now() + std::chrono::seconds{10});
      out.setup_error = "aiperf-node profile did not finish";
    }
    out.profile_exit = rc.value_or(-1);
    out.profile_output = read_file(output_path);
  }

  kill(server->pid, SIGTERM);
  auto server_rc
      = wait_child(server->pid, clock_type::now() + std::chrono::seconds{30});
  close(server->stdout_fd);
  if (!server_rc) {
    kill(server->pid, SIGKILL);
    wait_child(server->pid, clock_type::now() + std::chrono::seconds{10});
  }
  if (!out.setup_error.empty())
    return;
  if (server_rc != 0) {
    out.setup_error = "sse_server.py did not exit cleanly on SIGTERM";
    return;
  }
  if (auto err = parse_server_log(read_file(log_path), out)) {
    out.setup_error = *err;
    return;
  }
  auto jsonl = find_file(out.dir / "artifacts", "profile_export.jsonl");
  auto raw = find_file(out.dir / "artifacts", "profile_export_raw.jsonl");
  if (!jsonl || !raw) {
    out.setup_error = "no profile_export.jsonl / profile_export_raw.jsonl "
                      "under "
                      + (out.dir / "artifacts").string()
                      + "; aiperf-node said:\n" + out.profile_output;
    return;
  }
  if (auto err = parse_jsonl(read_file(*jsonl), out))
    out.setup_error = *err;
  else if (auto err2 = parse_raw(read_file(*raw), out))
    out.setup_error = *err2;
}

// ---------------------------------------------------------------------------
// Joining.

/// The server's events that carry `data:` (the client must dispatch exactly
/// these; comment-only blocks are not events).
std::vector<const server_event*> data_events(const server_request& s) {
  std::vector<const server_event*> out;
  for (auto& e : s.events)
    if (e.data)
      out.push_back(&e);
  return out;
}

/// Client stamps of the content events, paired with the server event, by
/// position in the stream (requires equal data-event counts).
std::vector<std::pair<std::int64_t, const server_event*>>
content_pairs(const server_request& s, const client_request& c) {
  std::vector<std::pair<std::int64_t, const server_event*>> out;
  auto events = data_events(s);
  if (events.size() != c.responses.size())
    return out;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i]->kind == "content")
      out.emplace_back(c.responses[i].first, events[i]);
  return out;
}

std::int64_t metric_ns(const client_request& c, const std::string& tag) {
  auto it = c.metrics.find(tag);
  if (it == c.metrics.end()) {
    ADD_FAILURE() << "metric " << tag << " missing";
    return 0;
  }
  auto v = ms_text_to_ns(it->second);
  EXPECT_TRUE(v.has_value())
      << tag << " = " << it->second << " is not a whole number of ns";
  return v.value_or(0);
}

std::int64_t metric_count(const client_request& c, const std::string& tag) {
  auto it = c.metrics.find(tag);
  if (it == c.metrics.end()) {
    ADD_FAILURE() << "metric " << tag << " missing";
    return -1;
  }
  return std::strtoll(it->second.c_str(), nullptr, 10);
}

/// min / median / max of `v` (sorted copy), for the report.
std::string summary(std::vector<std::int64_t> v) {
  if (v.empty())
    return "n=0";
  std::sort(v.begin(), v.end());
  char buf[160];
  std::snprintf(buf, sizeof buf, "n=%zu min=%.3f ms p50=%.3f ms max=%.3f ms",
                v.size(), static_cast<double>(v.front()) / 1e6,
                static_cast<double>(v[v.size() / 2]) / 1e6,
                static_cast<double>(v.back()) / 1e6);
  return buf;
}

/// Parameter: the server's pause before every write, in ms. Paced (6 ms),
/// each write normally lands in its own client read; burst (0 ms), reads
/// carry several events and cut events at arbitrary places.
class fidelity : public ::testing::TestWithParam<int> {
protected:
  static void TearDownTestSuite() {
    for (auto& [delay, run] : runs_) {
      if (run->dir.empty())
        continue;
      if (std::getenv("AIPERF_FIDELITY_KEEP") != nullptr) {
        std::printf("fidelity: artifacts kept in %s\n", run->dir.c_str());
      } else {
        std::error_code ec;
        fs::remove_all(run->dir, ec);
      }
    }
    runs_.clear();
  }

  void SetUp() override {
    if (python_bin.empty())
      AIPERF_SKIP_OR_FAIL("no python3 with aiohttp at configure time",
                          aiperf::test::bootstrap_hint("python3-aiohttp")
                            + ", then re-run cmake (tools/build does)");
    // One profile run per delay, shared by the tests of this process.
    auto& run = runs_[GetParam()];
    if (!run) {
      run = std::make_unique<run_result>();
      run_everything(*run, GetParam());
    }
    run_ = run.get();
    ASSERT_TRUE(run_->setup_error.empty()) << run_->setup_error;
    ASSERT_EQ(run_->profile_exit, 0) << run_->profile_output;
  }

  /// Every joined request: (id, server side, client side).
  template <class F> void for_each_request(F&& f) {
    for (auto& [id, c] : run_->client) {
      auto s = run_->server.find(id);
      ASSERT_NE(s, run_->server.end()) << id << " missing from the server log";
      SCOPED_TRACE("x_request_id " + id + " (" + s->second.mode + ")");
      f(id, s->second, c);
    }
  }

  run_result* run_ = nullptr;

  static inline std::map<int, std::unique_ptr<run_result>> runs_;
};

// ---------------------------------------------------------------------------

TEST_P(fidelity, every_request_joins_the_server_log_and_succeeds) {
  EXPECT_EQ(run_->client.size(), static_cast<std::size_t>(request_count));
  EXPECT_EQ(run_->server.size(), static_cast<std::size_t>(request_count));
  std::set<std::string> modes;
  for_each_request([&](const std::string&, const server_request& s,
                       const client_request& c) {
    EXPECT_FALSE(c.has_error) << c.error;
    EXPECT_TRUE(c.has_raw) << "no raw record";
    modes.insert(s.mode);
  });
  // The server varies framing by request number: all four must have run.
  EXPECT_EQ(modes, (std::set<std::string>{"lf", "crlf", "lf-split-term",
                                          "crlf-split-term"}));
}

TEST_P(fidelity, output_tokens_are_the_tokens_the_server_sent) {
  for_each_request([](const std::string&, const server_request& s,
                      const client_request& c) {
    std::string content;
    std::int64_t server_tokens = 0;
    for (auto& e : s.events)
      if (e.kind == "content") {
        content += e.text;
        server_tokens += e.tokens;
      }
    auto tokens
        = static_cast<std::int64_t>(aiperf::tokenizer::count_tokens(content));
    // The server's own count (a Python re-implementation) agrees with ours.
    EXPECT_EQ(server_tokens, tokens) << content;
    EXPECT_EQ(metric_count(c, "output_sequence_length"), tokens);
    EXPECT_EQ(metric_count(c, "output_token_count"), tokens);
    // The usage-only chunk was read (and not counted as content).
    EXPECT_EQ(metric_count(c, "usage_completion_tokens"), tokens);
    EXPECT_EQ(metric_count(c, "usage_prompt_tokens"),
              metric_count(c, "input_sequence_length"));
  });
}

TEST_P(fidelity, only_content_events_count_as_responses) {
  for_each_request([](const std::string&, const server_request& s,
                      const client_request& c) {
    auto events = data_events(s);
    // Every data event arrives whole and in order, however it was split;
    // comment-only blocks dispatch nothing.
    ASSERT_EQ(c.responses.size(), events.size());
    for (std::size_t i = 0; i < events.size(); ++i)
      EXPECT_EQ(c.responses[i].second, *events[i]->data) << "event " << i;
    auto content = std::count_if(events.begin(), events.end(),
                                 [](auto* e) { return e->kind == "content"; });
    // Role delta (""), finish delta, usage-only chunk and [DONE] are no
    // responses: one ICL per gap between content events.
    EXPECT_EQ(static_cast<std::int64_t>(c.inter_chunk_latency.size()),
              content - 1);
  });
}

TEST_P(fidelity, metrics_are_exact_functions_of_the_client_stamps) {
  for_each_request(
      [](const std::string&, const server_request& s, const client_request& c) {
        auto pairs = content_pairs(s, c);
        ASSERT_GE(pairs.size(), 2u);
        auto start = c.start_perf_ns;
        auto ttft = metric_ns(c, "time_to_first_token");
        auto latency = metric_ns(c, "request_latency");
        EXPECT_EQ(ttft, pairs.front().first - start);
        EXPECT_EQ(metric_ns(c, "time_to_second_token"),
                  pairs[1].first - pairs[0].first);
        EXPECT_EQ(latency, pairs.back().first - start);
        ASSERT_EQ(c.inter_chunk_latency.size(), pairs.size() - 1);
        for (std::size_t i = 0; i + 1 < pairs.size(); ++i) {
          auto icl = ms_text_to_ns(c.inter_chunk_latency[i]);
          ASSERT_TRUE(icl.has_value()) << c.inter_chunk_latency[i];
          EXPECT_EQ(*icl, pairs[i + 1].first - pairs[i].first) << "gap " << i;
        }
        // AIPerf's ITL = (request_latency − TTFT) / (OSL − 1), tokens not
        // chunks (the 3-token chunk makes the two differ).
        auto osl = metric_count(c, "output_sequence_length");
        auto itl
            = std::strtod(c.metrics.at("inter_token_latency").c_str(), nullptr);
        auto expected = static_cast<double>(latency - ttft) / 1e6
                        / static_cast<double>(osl - 1);
        EXPECT_NEAR(itl, expected, 1e-9 * expected);
      });
}

TEST_P(fidelity, epoch_metadata_is_the_monotonic_stamps_plus_one_offset) {
  std::optional<std::int64_t> offset;
  for_each_request([&](const std::string&, const server_request& s,
                       const client_request& c) {
    // One process, one epoch − monotonic offset for every record.
    auto o = c.request_start_ns - c.start_perf_ns;
    if (!offset)
      offset = o;
    EXPECT_EQ(o, *offset);
    ASSERT_NE(c.request_ack_ns, 0) << "request_ack_ns is null";
    ASSERT_FALSE(c.responses.empty());
    auto ack = c.request_ack_ns - o;
    auto end = c.request_end_ns - o;
    EXPECT_EQ(metric_ns(c, "stream_setup_latency"), ack - c.start_perf_ns);
    // Headers come after the server started sending them and before any
    // event; the end comes after the last event and the server's last write.
    EXPECT_GE(ack, s.prepare_ns);
    EXPECT_LE(ack, c.responses.front().first);
    EXPECT_GE(end, c.responses.back().first);
    EXPECT_GE(end, s.events.back().writes.back().first);
  });
}

TEST_P(fidelity, client_stamps_never_precede_the_server_writes) {
  std::vector<std::int64_t> send_to_receive, event_delivery, icl_diff,
      ttft_diff;
  int shared_reads = 0; // content events stamped by the same read
  for_each_request([&](const std::string&, const server_request& s,
                       const client_request& c) {
    // Same CLOCK_MONOTONIC on both sides (same host): causality is exact.
    EXPECT_LE(c.start_perf_ns, s.receive_ns)
        << "the client stamped its send after the server had the request";
    send_to_receive.push_back(s.receive_ns - c.start_perf_ns);
    auto events = data_events(s);
    ASSERT_EQ(c.responses.size(), events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
      // An event is complete only once its last piece was written.
      EXPECT_GE(c.responses[i].first, events[i]->completed_ns())
          << "event " << i << " (" << events[i]->kind << ", "
          << events[i]->writes.size() << " writes) stamped before the write "
          << "that completed it";
      if (i > 0) {
        EXPECT_GE(c.responses[i].first, c.responses[i - 1].first);
      }
    }
    auto pairs = content_pairs(s, c);
    ASSERT_FALSE(pairs.empty());
    auto ttft = metric_ns(c, "time_to_first_token");
    EXPECT_GE(c.start_perf_ns + ttft, pairs.front().second->completed_ns());
    ttft_diff.push_back(
        ttft - (pairs.front().second->completed_ns() - s.receive_ns));
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      event_delivery.push_back(pairs[i].first
                               - pairs[i].second->completed_ns());
      if (i > 0) {
        auto client_gap = pairs[i].first - pairs[i - 1].first;
        auto server_gap = pairs[i].second->completed_ns()
                          - pairs[i - 1].second->completed_ns();
        icl_diff.push_back(std::abs(client_gap - server_gap));
        shared_reads += client_gap == 0 ? 1 : 0;
      }
    }
  });
  // Observations, not assertions: how far the client's view is from what the
  // server did (includes Python's own write latency and loopback delivery).
  auto report = [delay = GetParam()](const char* name,
                                     const std::vector<std::int64_t>& v) {
    auto text = summary(v);
    std::printf("fidelity (server delay %d ms): %s: %s\n", delay, name,
                text.c_str());
    ::testing::Test::RecordProperty(name, text);
  };
  report("client_send_to_server_receive", send_to_receive);
  report("server_write_to_client_stamp", event_delivery);
  report("abs_client_icl_minus_server_gap", icl_diff);
  report("client_ttft_minus_server_ttft", ttft_diff);
  std::printf("fidelity (server delay %d ms): content gaps of 0 (one read): "
              "%d of %zu\n",
              GetParam(), shared_reads, icl_diff.size());
}

INSTANTIATE_TEST_SUITE_P(server, fidelity, ::testing::Values(6, 0),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == 0
                                      ? std::string{"burst"}
                                      : "paced_" + std::to_string(info.param)
                                            + "ms";
                         });

} // namespace
