// `aiperf-node` as a distributed system on one machine: a controller and
// worker processes linked by the ZMQ bridge, against real mock servers on
// loopback. Results are compared with a single-process run of the same
// seed: counts, inputs.json, ISL/OSL and errors, never timings.
#include "config/profile/profile_cli.hpp"
#include "config/profile/profile_json.hpp"
#include "tests/support/skip.hpp"
#include "tests/tools/profile/profile_harness.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <unistd.h>

namespace aiperf::itest {
namespace {

/// Sets environment variables for the children started while it lives.
class scoped_env {
public:
  explicit scoped_env(std::vector<std::pair<std::string, std::string>> vars)
    : vars_(std::move(vars)) {
    for (auto& [k, v] : vars_)
      ::setenv(k.c_str(), v.c_str(), 1);
  }
  ~scoped_env() {
    for (auto& [k, v] : vars_)
      ::unsetenv(k.c_str());
  }

private:
  std::vector<std::pair<std::string, std::string>> vars_;
};

/// What a run produced that must not depend on how it was distributed.
struct outcome {
  std::size_t records = 0;
  std::size_t errors = 0;
  std::multiset<std::pair<double, double>> isl_osl;
  std::string inputs_json;
  std::set<std::string> worker_ids;
  std::set<std::string> error_types;
  std::size_t raw_lines = 0;
};

outcome read_outcome(const fs::path& artifacts) {
  outcome o;
  auto dir = run_dir(artifacts);
  EXPECT_FALSE(dir.empty()) << "no run directory under " << artifacts;
  o.inputs_json = read_file(dir / "inputs.json");
  for (auto& line : read_lines(dir / "profile_export.jsonl")) {
    auto rec = parse_json(line);
    EXPECT_FALSE(rec.HasParseError()) << line;
    if (rec.HasParseError())
      continue;
    ++o.records;
    auto& meta = rec["metadata"];
    o.worker_ids.insert(meta["worker_id"].GetString());
    if (rec.HasMember("error") && !rec["error"].IsNull()) {
      ++o.errors;
      if (rec["error"].HasMember("type"))
        o.error_types.insert(rec["error"]["type"].GetString());
      continue;
    }
    auto& m = rec["metrics"];
    auto val = [&](const char* name) {
      return m.HasMember(name) ? m[name]["value"].GetDouble() : -1.0;
    };
    o.isl_osl.emplace(val("input_sequence_length"),
                      val("output_sequence_length"));
  }
  o.raw_lines = read_lines(dir / "profile_export_raw.jsonl").size();
  return o;
}

std::string describe(const run_result& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stderr:\n" + r.err;
}

std::vector<std::string> profile_args(const std::string& url,
                                      const fs::path& out) {
  return {"profile",       "--url",          url,
          "--tokenizer",   "whitespace8",    // the mock's, not "m"
          "--model",       "m",              "--streaming",
          "--isl",         "64",             "--isl-stddev",
          "16",            "--osl",          "12",
          "--concurrency", "4",              "--request-count",
          "60",            "--random-seed",  "7",
          "--workers-max", "4",              "--output-artifact-dir",
          out.string()};
}

// The core promise: spreading a run over worker processes changes nothing
// but where requests run.
TEST(distributed, two_pods_match_a_local_run_of_the_same_seed) {
  temp_dir tmp;
  // [error rate][pods mode]
  outcome runs[2][2];
  for (int errors = 0; errors < 2; ++errors) {
    for (int pods_mode = 0; pods_mode < 2; ++pods_mode) {
      // A fresh mock per run: its seeded error injection then fails the
      // same number of requests (which ones depends on arrival order).
      mock_process mock{{"--ttft", "1", "--itl", "1", "--error-rate",
                         errors ? "20" : "0", "--random-seed", "3"},
                        tmp.path()};
      ASSERT_TRUE(mock.ok());
      auto name = std::to_string(errors) + (pods_mode ? "pods" : "local");
      auto out = tmp.path() / name;
      auto args = profile_args(mock.url(), out);
      if (pods_mode) {
        args.push_back("--worker-pods");
        args.push_back("2");
      }
      auto r = run_node(args, tmp.path() / ("run" + name));
      ASSERT_EQ(r.exit_code, 0) << describe(r);
      runs[errors][pods_mode] = read_outcome(out);
    }
  }
  auto& local = runs[0][0];
  auto& pods = runs[0][1];
  EXPECT_EQ(local.records, 60u);
  EXPECT_EQ(local.errors, 0u);
  EXPECT_EQ(pods.records, local.records);
  EXPECT_EQ(pods.errors, 0u);
  EXPECT_EQ(pods.isl_osl, local.isl_osl);
  EXPECT_FALSE(local.inputs_json.empty());
  EXPECT_EQ(pods.inputs_json, local.inputs_json);
  EXPECT_EQ(runs[1][1].inputs_json, local.inputs_json);
  EXPECT_EQ(runs[1][0].records, 60u);
  EXPECT_EQ(runs[1][1].records, 60u);
  EXPECT_GT(runs[1][0].errors, 0u) << "the mock should have injected errors";
  EXPECT_EQ(runs[1][1].errors, runs[1][0].errors);
  // Every record names its worker process; both pods did work.
  std::set<std::string> pods_seen;
  for (auto& id : pods.worker_ids) {
    EXPECT_EQ(id.rfind("pod", 0), 0u) << id;
    pods_seen.insert(id.substr(0, id.find('/')));
  }
  EXPECT_EQ(pods_seen, (std::set<std::string>{"pod0", "pod1"}));
}

TEST(distributed, raw_barrier_collects_every_pods_part) {
  temp_dir tmp;
  mock_process mock{{"--fast"}, tmp.path()};
  ASSERT_TRUE(mock.ok());
  auto out = tmp.path() / "out";
  auto args = profile_args(mock.url(), out);
  for (auto a : {"--worker-pods", "2", "--export-level", "raw"})
    args.push_back(a);
  auto r = run_node(args, tmp.path() / "run");
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  auto o = read_outcome(out);
  EXPECT_EQ(o.records, 60u);
  EXPECT_EQ(o.raw_lines, 60u);
}

TEST(distributed, raw_barrier_failure_withholds_the_results) {
  temp_dir tmp;
  mock_process mock{{"--fast"}, tmp.path()};
  ASSERT_TRUE(mock.ok());
  auto out = tmp.path() / "out";
  auto args = profile_args(mock.url(), out);
  for (auto a : {"--worker-pods", "2", "--export-level", "raw"})
    args.push_back(a);
  // The API refuses this part name (400): the pod's FINALIZE fails.
  scoped_env env{{{"AIPERF_TEST_RAW_UPLOAD_NAME", "not.a.pod"}}};
  auto r = run_node(args, tmp.path() / "run", node_test_bin());
  EXPECT_NE(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.err.find("failed to finalize"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("invalid pod name"), std::string::npos) << r.err;
  auto dir = run_dir(out);
  EXPECT_FALSE(fs::exists(dir / "profile_export_aiperf.json"))
    << "results were exported although a RAW part is missing";
}

/// Pids of the direct children of `pid`.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (auto& task :
       fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in{task.path() / "children"};
    pid_t c = 0;
    while (in >> c)
      out.push_back(c);
  }
  return out;
}

/// Gone or a zombie (a zombie runs nothing).
bool process_gone(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  if (!in)
    return true;
  std::string text;
  std::getline(in, text);
  auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size()
         && text[close + 2] == 'Z';
}

std::vector<std::pair<std::string, std::string>> controller_ports_env(const fs::path& ports_file);
std::uint16_t api_port_of(const std::vector<std::pair<std::string, std::string>>& env);
bool wait_registered(std::uint16_t api_port, std::string& last);

/// Starts a long pods run against a slow mock and waits until both pods
/// registered; returns the profile process.
std::unique_ptr<child> start_long_pods_run(const std::string& url,
                                           const fs::path& out,
                                           const fs::path& log) {
  std::vector<std::string> argv{node_bin()};
  auto args = profile_args(url, out);
  argv.insert(argv.end(), args.begin(), args.end());
  // Long enough to kill something mid-run: 8 in flight at 200 ms each.
  auto set = [&](const std::string& flag, const std::string& value) {
    auto i = std::find(argv.begin(), argv.end(), flag);
    ASSERT_NE(i, argv.end()) << flag;
    *(i + 1) = value;
  };
  set("--request-count", "120");
  set("--concurrency", "8");
  argv.push_back("--worker-pods");
  argv.push_back("2");
  // The controller writes its bound ports; its API then says when both pods
  // registered.
  auto ports_file = log.parent_path() / (log.filename().string() + ".ports.json");
  std::unique_ptr<child> proc;
  {
    scoped_env e{{{"AIPERF_K8S_PORTS_FILE", ports_file.string()}}};
    proc = std::make_unique<child>(argv, log);
  }
  auto bound = controller_ports_env(ports_file);
  std::string last;
  EXPECT_TRUE(wait_registered(api_port_of(bound), last)) << last << proc->err();
  return proc;
}

TEST(distributed, killed_pod_within_threshold_goes_on_degraded) {
  temp_dir tmp;
  mock_process mock{{"--ttft", "200", "--itl", "1"}, tmp.path()};
  ASSERT_TRUE(mock.ok());
  scoped_env env{{{"AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT", "50"}}};
  auto out = tmp.path() / "out";
  auto proc = start_long_pods_run(mock.url(), out, tmp.path() / "run");
  auto kids = children_of(proc->pid());
  ASSERT_EQ(kids.size(), 2u);
  ASSERT_EQ(::kill(kids[1], SIGKILL), 0);
  auto code = proc->wait();
  ASSERT_TRUE(code.has_value()) << proc->err();
  EXPECT_EQ(*code, 5) << proc->err();
  EXPECT_NE(proc->err().find("1 of 2 worker pods were lost (pod1 ("), std::string::npos)
    << proc->err();
  auto o = read_outcome(out);
  // Credits sent = returned + lost: every request is a record.
  EXPECT_EQ(o.records, 120u);
  EXPECT_TRUE(o.error_types.count("WorkerLost")) << proc->err();
}

TEST(distributed, killed_pod_above_threshold_aborts_with_exit_6) {
  temp_dir tmp;
  mock_process mock{{"--ttft", "200", "--itl", "1"}, tmp.path()};
  ASSERT_TRUE(mock.ok());
  scoped_env env{{{"AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT", "0"}}};
  auto out = tmp.path() / "out";
  auto proc = start_long_pods_run(mock.url(), out, tmp.path() / "run");
  auto kids = children_of(proc->pid());
  ASSERT_EQ(kids.size(), 2u);
  ASSERT_EQ(::kill(kids[0], SIGKILL), 0);
  auto code = proc->wait();
  ASSERT_TRUE(code.has_value()) << proc->err();
  EXPECT_EQ(*code, 6) << proc->err();
  // The final error line names the lost process and the threshold.
  EXPECT_NE(proc->err().find("1 of 2 worker pods were lost (pod0 ("), std::string::npos)
    << proc->err();
  EXPECT_NE(proc->err().find("above AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT=0"),
            std::string::npos)
    << proc->err();
  auto o = read_outcome(out);
  EXPECT_LT(o.records, 120u);
  EXPECT_TRUE(o.error_types.count("WorkerLost")) << proc->err();
}

TEST(distributed, no_child_outlives_a_killed_parent) {
  temp_dir tmp;
  mock_process mock{{"--ttft", "200", "--itl", "1"}, tmp.path()};
  ASSERT_TRUE(mock.ok());
  auto proc = start_long_pods_run(mock.url(), tmp.path() / "out",
                                  tmp.path() / "run");
  auto kids = children_of(proc->pid());
  ASSERT_EQ(kids.size(), 2u);
  proc->signal(SIGKILL);
  (void) proc->wait();
  for (auto pid : kids)
    EXPECT_TRUE(poll_until([&] { return process_gone(pid); }))
      << "worker process " << pid << " outlived its parent";
}

// -- service roles: a controller and pods started separately, over TCP ------

/// Writes the run file of a finalized configuration built from CLI flags.
fs::path write_run_file(const fs::path& dir, const std::string& url,
                        const fs::path& out, const std::string& pods) {
  CLI::App app;
  config::profile_config cfg;
  config::add_profile_options(app, cfg);
  std::vector<std::string> args = {"--url", url,     "--model", "m",
                                   "--tokenizer", "whitespace8", // the mock's
                                   "--streaming", "--isl", "32", "--osl", "8",
                                   "--concurrency", "4", "--request-count",
                                   "40", "--random-seed", "7", "--workers-max",
                                   "4", "--worker-pods", pods,
                                   "--output-artifact-dir", out.string()};
  std::reverse(args.begin(), args.end()); // CLI11 parses a reversed vector
  app.parse(args);
  auto done = config::finalize(cfg);
  EXPECT_TRUE(done) << aiperf::error_message(done.error());
  auto path = dir / "run.json";
  std::ofstream{path} << config::to_json(cfg, true);
  return path;
}

/// The environment of a controller on loopback that binds port 0 for its
/// API and every channel and writes what it got to `ports_file`
/// (AIPERF_K8S_PORTS_FILE); its pods learn them from there
/// (controller_ports_env).
std::vector<std::pair<std::string, std::string>> port_env(const fs::path& ports_file) {
  std::vector<std::pair<std::string, std::string>> env;
  // HEALTH is per pod (see pod_env).
  for (auto name : {"API", "CONTROL", "CREDIT", "CREDIT_RETURN", "RECORDS"})
    env.emplace_back(std::string{"AIPERF_K8S_PORT_"} + name, "0");
  env.emplace_back("AIPERF_K8S_PORTS_FILE", ports_file.string());
  env.emplace_back("AIPERF_K8S_ZMQ_CONTROLLER_HOST", "127.0.0.1");
  env.emplace_back("AIPERF_JOB_ID", "itest");
  // The controller exits after the run instead of serving its results.
  env.emplace_back("AIPERF_K8S_RESULTS_LINGER_SECONDS", "0");
  return env;
}

/// Waits for the ports file a controller writes once bound and returns its
/// ports as AIPERF_K8S_PORT_* (what a pod needs to reach it).
std::vector<std::pair<std::string, std::string>> controller_ports_env(const fs::path& ports_file) {
  std::vector<std::pair<std::string, std::string>> env;
  bool written = poll_until([&] {
    std::error_code ec;
    if (!fs::exists(ports_file, ec))
      return false;
    auto d = parse_json(read_file(ports_file));
    if (d.HasParseError() || !d.IsObject())
      return false;
    env.clear();
    for (auto [key, name] : {std::pair{"api", "API"}, {"control", "CONTROL"}, {"credit", "CREDIT"},
                             {"credit_return", "CREDIT_RETURN"}, {"records", "RECORDS"}}) {
      if (!d.HasMember(key) || !d[key].IsUint() || d[key].GetUint() == 0)
        return false;
      env.emplace_back(std::string{"AIPERF_K8S_PORT_"} + name, std::to_string(d[key].GetUint()));
    }
    return true;
  });
  EXPECT_TRUE(written) << "no ports file at " << ports_file;
  return env;
}

/// AIPERF_POD_INDEX and a health port of its own for pod `index`: 0, so
/// the pod binds any free one (its first stdout line names it).
std::vector<std::pair<std::string, std::string>>
pod_env(int index, std::vector<std::pair<std::string, std::string>> more = {}) {
  more.emplace_back("AIPERF_POD_INDEX", std::to_string(index));
  more.emplace_back("AIPERF_K8S_PORT_HEALTH", "0");
  return more;
}

/// `env` plus one more variable.
std::vector<std::pair<std::string, std::string>>
with(std::vector<std::pair<std::string, std::string>> env, std::pair<std::string, std::string> more) {
  env.push_back(std::move(more));
  return env;
}

/// The controller's API port in `env` (see controller_ports_env).
std::uint16_t api_port_of(
  const std::vector<std::pair<std::string, std::string>>& env) {
  for (auto& [k, v] : env)
    if (k == "AIPERF_K8S_PORT_API")
      return static_cast<std::uint16_t>(std::stoi(v));
  ADD_FAILURE() << "no AIPERF_K8S_PORT_API";
  return 0;
}

/// Polls the controller's GET /api/pods until `done` holds for its JSON;
/// `last` keeps the last answer for the failure message.
template <class Condition>
bool poll_pods(std::uint16_t api_port, std::string& last, Condition done) {
  return poll_until([&] {
    auto body = http_get(api_port, "/api/pods");
    if (!body)
      return false;
    last = *body;
    auto d = parse_json(*body);
    return !d.HasParseError() && done(d);
  });
}

/// Waits until every pod the controller expects registered.
bool wait_registered(std::uint16_t api_port, std::string& last) {
  return poll_pods(api_port, last, [](const rapidjson::Document& d) {
    return std::string_view{d["registration"].GetString()} == "complete"
           && d["pods_registered"].GetUint() == d["pods_expected"].GetUint();
  });
}

/// The `pods` entry named `pod` of the run's profile_export_aiperf.json.
std::optional<std::int64_t> exported_clock_offset(const fs::path& artifacts,
                                                  const std::string& pod) {
  auto d = parse_json(read_file(run_dir(artifacts)
                                / "profile_export_aiperf.json"));
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("pods"))
    return std::nullopt;
  for (auto& entry : d["pods"].GetArray())
    if (entry["name"].GetString() == pod && entry["clock"].IsObject())
      return entry["clock"]["offset_ns"].GetInt64();
  return std::nullopt;
}

/// `binary` empty = aiperf-node; node_test_bin() for the test seams.
std::unique_ptr<child> start_service(const std::string& role,
                                     const fs::path& run_file,
                                     const fs::path& log,
                                     const std::string& binary = {}) {
  return std::make_unique<child>(
    std::vector<std::string>{binary.empty() ? node_bin() : binary, "service", "--role", role,
                             "--run-config", run_file.string()},
    log);
}

TEST(distributed, service_roles_over_tcp_with_a_skewed_worker_clock) {
  temp_dir tmp;
  mock_process mock{{"--fast"}, tmp.path()};
  ASSERT_TRUE(mock.ok());
  auto out = tmp.path() / "out";
  auto run_file = write_run_file(tmp.path(), mock.url(), out, "2");
  auto env = port_env(tmp.path() / "ports.json");
  scoped_env ports{env};
  auto controller = start_service("controller", run_file, tmp.path() / "ctl");
  auto bound = controller_ports_env(tmp.path() / "ports.json");
  std::unique_ptr<child> pod0, pod1;
  {
    scoped_env e{pod_env(0, bound)};
    pod0 = start_service("worker", run_file, tmp.path() / "pod0");
  }
  constexpr std::int64_t skew = 5'000'000'000;
  {
    scoped_env e{
      pod_env(1, with(bound, {"AIPERF_TEST_CLOCK_SKEW_NS", std::to_string(skew)}))};
    pod1 = start_service("worker", run_file, tmp.path() / "pod1", node_test_bin());
  }
  auto code = controller->wait();
  ASSERT_TRUE(code.has_value());
  ASSERT_EQ(*code, 0) << controller->err() << pod0->err() << pod1->err();
  EXPECT_EQ(pod0->wait(), 0) << pod0->err();
  EXPECT_EQ(pod1->wait(), 0) << pod1->err();
  EXPECT_EQ(read_outcome(out).records, 40u);
  // The skewed pod estimated the injected offset from credit stamps and
  // clock pings; the other one saw about none (each pod's final estimate,
  // as the export's `pods` reports it). The bound is the estimator's own:
  // half the smallest round trip, which spread-out pings keep far below
  // 1 ms on loopback even on a busy 2-core machine.
  auto e0 = exported_clock_offset(out, "pod0");
  auto e1 = exported_clock_offset(out, "pod1");
  ASSERT_TRUE(e0 && e1) << read_file(run_dir(out)
                                     / "profile_export_aiperf.json");
  std::printf("clock offset estimates: pod0 %lld ns, pod1 %lld ns "
              "(injected skew %lld ns)\n",
              static_cast<long long>(*e0), static_cast<long long>(*e1),
              static_cast<long long>(skew));
  constexpr std::int64_t tolerance = 500'000; // 0.5 ms
  EXPECT_LT(std::llabs(*e0), tolerance);
  EXPECT_LT(std::llabs(*e1 - skew), tolerance);
  // Records are stamped with the correction, and what it undoes is only the
  // injected skew: epoch times of both pods land on one timeline (a sign
  // error would put pod1 5 or 10 s away).
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> span;
  for (auto& line : read_lines(run_dir(out) / "profile_export.jsonl")) {
    auto rec = parse_json(line);
    ASSERT_FALSE(rec.HasParseError());
    std::string id = rec["metadata"]["worker_id"].GetString();
    auto start = rec["metadata"]["request_start_ns"].GetInt64();
    auto& s = span.try_emplace(id.substr(0, id.find('/')), start, start)
                .first->second;
    s.first = std::min(s.first, start);
    s.second = std::max(s.second, start);
  }
  ASSERT_EQ(span.size(), 2u);
  EXPECT_LT(std::llabs(span["pod1"].first - span["pod0"].first),
            std::int64_t{1'000'000'000});
}

/// One HTTP/1.1 exchange on loopback (Connection: close): status, the raw
/// header block and the body, de-chunked.
struct http_reply {
  int status = 0;
  std::string head;
  std::string body;
};

http_reply http_call(std::uint16_t port, const std::string& method, const std::string& path) {
  http_reply r;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return r;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string resp;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    std::string req = method + " " + path
                      + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
                        "Connection: close\r\n\r\n";
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      ssize_t n;
      while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0)
        resp.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  auto sep = resp.find("\r\n\r\n");
  if (sep == std::string::npos || resp.size() < 12)
    return r;
  r.status = std::atoi(resp.c_str() + 9);
  r.head = resp.substr(0, sep);
  auto body = resp.substr(sep + 4);
  if (r.head.find("Transfer-Encoding: chunked") == std::string::npos) {
    r.body = body;
    return r;
  }
  for (std::size_t at = 0; at < body.size();) {
    auto eol = body.find("\r\n", at);
    if (eol == std::string::npos)
      break;
    auto size = std::strtoul(body.c_str() + at, nullptr, 16);
    if (size == 0)
      break;
    r.body.append(body, eol + 2, size);
    at = eol + 2 + size + 2;
  }
  return r;
}

/// The port on a "... on http://host:PORT" first stdout line.
std::uint16_t port_of_first_line(child& c) {
  auto line = c.first_line();
  if (!line)
    return 0;
  auto colon = line->rfind(':');
  return colon == std::string::npos ? 0 : static_cast<std::uint16_t>(std::atoi(line->c_str() + colon + 1));
}

std::set<std::string> listed_names(const std::string& list_json) {
  std::set<std::string> names;
  auto d = parse_json(list_json);
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("files"))
    return names;
  for (auto& f : d["files"].GetArray())
    names.insert(f["name"].GetString());
  return names;
}

// The marker comes last, says the run was not cancelled, and the sidecar
// serves the run's directory with AIPerf's semantics.
TEST(distributed, results_ready_marker_is_last_and_the_sidecar_serves_it) {
  temp_dir tmp;
  mock_process mock{{"--fast"}, tmp.path()};
  ASSERT_TRUE(mock.ok());
  auto out = tmp.path() / "out";
  auto args = profile_args(mock.url(), out);
  auto count = std::find(args.begin(), args.end(), "--request-count");
  ASSERT_NE(count, args.end());
  *std::next(count) = "8";
  // One pod runs in-process; two take the distributed path.
  for (auto a : {"--worker-pods", "2"})
    args.emplace_back(a);
  auto r = run_node(args, tmp.path() / "run");
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  auto dir = run_dir(out);
  ASSERT_FALSE(dir.empty());
  auto marker = dir / ".aiperf_results_ready.json";
  auto m = parse_json(read_file(marker));
  ASSERT_FALSE(m.HasParseError()) << read_file(marker);
  EXPECT_TRUE(m["ready"].GetBool());
  EXPECT_FALSE(m["was_cancelled"].GetBool());
  auto marker_time = fs::last_write_time(marker);
  std::size_t files = 0;
  for (auto& e : fs::recursive_directory_iterator{dir})
    if (e.is_regular_file() && e.path() != marker) {
      ++files;
      EXPECT_LE(e.last_write_time(), marker_time) << e.path() << " was written after the marker";
    }
  EXPECT_GE(files, 3u);

  // The sidecar on the output dir finds the one run directory in it.
  fs::create_directories(dir / "checkpoints");
  std::ofstream{dir / "checkpoints" / "c1.json"} << "{}";
  child sidecar{{node_bin(), "results-sidecar", "--results-dir", out.string(), "--port", "0",
                 "--host", "127.0.0.1"},
                tmp.path() / "sidecar"};
  auto port = port_of_first_line(sidecar);
  ASSERT_NE(port, 0) << sidecar.err();
  EXPECT_EQ(http_call(port, "GET", "/healthz").status, 200);
  auto list = http_call(port, "GET", "/api/results/list");
  ASSERT_EQ(list.status, 200) << list.body;
  auto names = listed_names(list.body);
  EXPECT_TRUE(names.count("profile_export_aiperf.json")) << list.body;
  EXPECT_TRUE(names.count("checkpoints/c1.json")) << list.body;
  EXPECT_FALSE(names.count(".aiperf_results_ready.json")) << list.body;
  auto file = http_call(port, "GET", "/api/results/files/profile_export_aiperf.json");
  ASSERT_EQ(file.status, 200);
  EXPECT_EQ(file.body, read_file(dir / "profile_export_aiperf.json"));
  EXPECT_NE(file.head.find("X-Filename: profile_export_aiperf.json"), std::string::npos)
    << file.head;
  EXPECT_NE(file.head.find("Content-Disposition: attachment"), std::string::npos) << file.head;
  for (auto bad : {"/api/results/files/..%2F..%2Fetc%2Fpasswd", "/api/results/files/../x",
                   "/api/results/files/.aiperf_results_ready.json"})
    EXPECT_EQ(http_call(port, "GET", bad).status, 400) << bad;
  EXPECT_EQ(http_call(port, "GET", "/api/results/files/nope.json").status, 404);
  EXPECT_EQ(http_call(port, "POST", "/api/results/list").status, 405);

  // Without the marker: only checkpoints, the rest is "Results not ready".
  fs::remove(marker);
  auto early = http_call(port, "GET", "/api/results/list");
  EXPECT_EQ(listed_names(early.body), (std::set<std::string>{"checkpoints/c1.json"}))
    << early.body;
  auto not_ready = http_call(port, "GET", "/api/results/files/profile_export_aiperf.json");
  EXPECT_EQ(not_ready.status, 404);
  EXPECT_NE(not_ready.body.find("Results not ready"), std::string::npos) << not_ready.body;
  EXPECT_EQ(http_call(port, "GET", "/api/results/files/checkpoints/c1.json").body, "{}");

  sidecar.signal(SIGTERM);
  EXPECT_EQ(sidecar.wait(), 0) << sidecar.err();
}

// A controller started by `service` lingers with its results until POST
// /api/shutdown, then exits with the run's exit code.
TEST(distributed, service_controller_lingers_until_shutdown) {
  temp_dir tmp;
  mock_process mock{{"--fast"}, tmp.path()};
  ASSERT_TRUE(mock.ok());
  auto out = tmp.path() / "out";
  auto run_file = write_run_file(tmp.path(), mock.url(), out, "1");
  auto env = port_env(tmp.path() / "ports.json");
  for (auto& [k, v] : env)
    if (k == "AIPERF_K8S_RESULTS_LINGER_SECONDS")
      v = "600";
  scoped_env ports{env};
  auto controller = start_service("controller", run_file, tmp.path() / "ctl");
  auto bound = controller_ports_env(tmp.path() / "ports.json");
  auto api = api_port_of(bound);
  std::unique_ptr<child> pod0;
  {
    scoped_env e{pod_env(0, bound)};
    pod0 = start_service("worker", run_file, tmp.path() / "pod0");
  }
  EXPECT_EQ(pod0->wait(), 0) << pod0->err();
  // The run is over once the marker is listed; the controller still serves.
  std::string last;
  ASSERT_TRUE(poll_until([&] {
    last = http_call(api, "GET", "/api/results/list").body;
    return listed_names(last).count("profile_export_aiperf.json") > 0;
  })) << last << controller->err();
  EXPECT_FALSE(controller->wait(std::chrono::milliseconds{0}).has_value())
    << "the controller exited instead of lingering: " << controller->err();
  auto metrics = parse_json(http_call(api, "GET", "/api/metrics").body);
  ASSERT_FALSE(metrics.HasParseError());
  EXPECT_TRUE(metrics["summary"].IsObject());
  EXPECT_EQ(http_call(api, "GET", "/api/shutdown").status, 405);
  EXPECT_EQ(http_call(api, "POST", "/api/shutdown").status, 202);
  auto code = controller->wait();
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << controller->err();
}

TEST(distributed, missing_pod_registration_timeout_names_it) {
  temp_dir tmp;
  mock_process mock{{"--fast"}, tmp.path()};
  ASSERT_TRUE(mock.ok());
  auto run_file = write_run_file(tmp.path(), mock.url(), tmp.path() / "out",
                                 "2");
  auto env = port_env(tmp.path() / "ports.json");
  env.emplace_back("AIPERF_REGISTRATION_TIMEOUT_MS", "3000");
  scoped_env ports{env};
  auto controller = start_service("controller", run_file, tmp.path() / "ctl");
  auto bound = controller_ports_env(tmp.path() / "ports.json");
  std::unique_ptr<child> pod0;
  {
    scoped_env e{pod_env(0, bound)};
    pod0 = start_service("worker", run_file, tmp.path() / "pod0");
  }
  // While it waits, the API names who registered and who is missing.
  std::string last;
  EXPECT_TRUE(poll_pods(api_port_of(bound), last, [](const rapidjson::Document& d) {
    if (std::string_view{d["registration"].GetString()} != "waiting"
        || d["pods_registered"].GetUint() != 1 || d["pods_expected"].GetUint() != 2)
      return false;
    std::set<std::string> missing;
    for (auto& id : d["missing"].GetArray())
      missing.insert(id.GetString());
    return missing == std::set<std::string>{"pod1", "pod1/record_processor_0",
                                            "pod1/worker_0", "pod1/worker_1"}
           && d["pods"][0]["registered"].GetBool()
           && !d["pods"][1]["registered"].GetBool();
  })) << last;
  auto code = controller->wait();
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(*code, 0);
  auto err = controller->err();
  EXPECT_NE(err.find("registration timed out"), std::string::npos) << err;
  EXPECT_NE(err.find("missing: pod1, pod1/record_processor_0, pod1/worker_0"),
            std::string::npos)
    << err;
  EXPECT_EQ(err.find("pod0/worker_0"), std::string::npos)
    << "pod0 registered but is named missing: " << err;
  // The pod that did come is told to stop.
  EXPECT_EQ(pod0->wait(), 0) << pod0->err();
}

} // namespace
} // namespace aiperf::itest

namespace aiperf::itest {
namespace {

// Pods started separately (no parent to see the exit): the controller finds
// out through the bridge (peer gone / no heartbeat).
TEST(distributed, lost_tcp_pod_is_detected_without_a_parent) {
  temp_dir tmp;
  mock_process mock{{"--ttft", "200", "--itl", "1"}, tmp.path()};
  ASSERT_TRUE(mock.ok());
  auto out = tmp.path() / "out";
  auto run_file = write_run_file(tmp.path(), mock.url(), out, "2");
  auto env = port_env(tmp.path() / "ports.json");
  env.emplace_back("AIPERF_HEARTBEAT_TIMEOUT_MS", "1000");
  env.emplace_back("AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT", "50");
  scoped_env ports{env};
  auto controller = start_service("controller", run_file, tmp.path() / "ctl");
  auto bound = controller_ports_env(tmp.path() / "ports.json");
  std::unique_ptr<child> pod0, pod1;
  {
    scoped_env e{pod_env(0, bound)};
    pod0 = start_service("worker", run_file, tmp.path() / "pod0");
  }
  {
    scoped_env e{pod_env(1, bound)};
    pod1 = start_service("worker", run_file, tmp.path() / "pod1");
  }
  std::string last;
  ASSERT_TRUE(wait_registered(api_port_of(bound), last))
    << last << controller->err();
  pod1->signal(SIGKILL);
  auto code = controller->wait();
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 5) << controller->err();
  EXPECT_NE(controller->err().find("pod1 lost"), std::string::npos)
    << controller->err();
  EXPECT_EQ(pod0->wait(), 0) << pod0->err();
  auto o = read_outcome(out);
  EXPECT_EQ(o.records, 40u);
}

} // namespace
} // namespace aiperf::itest

namespace aiperf::itest {
namespace {

TEST(distributed, a_worker_without_a_controller_exits_naming_its_address) {
  temp_dir tmp;
  auto run_file = write_run_file(tmp.path(), "http://127.0.0.1:9", tmp.path() / "out", "2");
  // Bound but never listening: every connect there is refused.
  closed_port api, control, credit, credit_return, records;
  for (auto* p : {&api, &control, &credit, &credit_return, &records})
    ASSERT_NE(p->port(), 0);
  auto port = std::to_string(api.port());
  std::unique_ptr<child> pod;
  {
    scoped_env e{pod_env(0, {{"AIPERF_K8S_ZMQ_CONTROLLER_HOST", "127.0.0.1"},
                             {"AIPERF_JOB_ID", "itest"},
                             {"AIPERF_CONTROLLER_TIMEOUT_MS", "1500"},
                             {"AIPERF_K8S_PORT_API", port},
                             {"AIPERF_K8S_PORT_CONTROL", std::to_string(control.port())},
                             {"AIPERF_K8S_PORT_CREDIT", std::to_string(credit.port())},
                             {"AIPERF_K8S_PORT_CREDIT_RETURN", std::to_string(credit_return.port())},
                             {"AIPERF_K8S_PORT_RECORDS", std::to_string(records.port())}})};
    pod = start_service("worker", run_file, tmp.path() / "pod0");
  }
  auto code = pod->wait();
  ASSERT_TRUE(code.has_value()) << "the pod did not give up: " << pod->err();
  EXPECT_NE(*code, 0);
  EXPECT_NE(pod->err().find("127.0.0.1:" + port), std::string::npos) << pod->err();
  EXPECT_NE(pod->err().find("AIPERF_CONTROLLER_TIMEOUT_MS"), std::string::npos) << pod->err();
}

TEST(distributed, pods_exit_when_their_controller_is_gone) {
  temp_dir tmp;
  mock_process mock{{"--ttft", "200", "--itl", "1"}, tmp.path()};
  ASSERT_TRUE(mock.ok());
  auto run_file = write_run_file(tmp.path(), mock.url(), tmp.path() / "out",
                                 "2");
  auto env = port_env(tmp.path() / "ports.json");
  env.emplace_back("AIPERF_CONTROLLER_TIMEOUT_MS", "2000");
  scoped_env ports{env};
  auto controller = start_service("controller", run_file, tmp.path() / "ctl");
  auto bound = controller_ports_env(tmp.path() / "ports.json");
  std::unique_ptr<child> pod0, pod1;
  {
    scoped_env e{pod_env(0, bound)};
    pod0 = start_service("worker", run_file, tmp.path() / "pod0");
  }
  {
    scoped_env e{pod_env(1, bound)};
    pod1 = start_service("worker", run_file, tmp.path() / "pod1");
  }
  std::string last;
  ASSERT_TRUE(wait_registered(api_port_of(bound), last))
    << last << controller->err();
  // A registered pod answers its probes.
  auto line = pod0->first_line();
  ASSERT_TRUE(line) << pod0->err();
  const std::string probes = "health probes on http://0.0.0.0:";
  ASSERT_EQ(line->rfind(probes, 0), 0u) << *line;
  auto health = static_cast<std::uint16_t>(std::stoi(line->substr(probes.size())));
  EXPECT_TRUE(poll_until([&] { return http_get(health, "/readyz").has_value(); }));
  EXPECT_TRUE(http_get(health, "/healthz").has_value());
  controller->signal(SIGKILL);
  EXPECT_EQ(pod0->wait(), 1) << pod0->err();
  EXPECT_EQ(pod1->wait(), 1) << pod1->err();
  EXPECT_NE(pod0->err().find("nothing from the controller"), std::string::npos)
    << pod0->err();
}

} // namespace
} // namespace aiperf::itest

namespace aiperf::itest {
namespace {

/// Runs a shell command; returns its exit status.
int sh(const std::string& cmd) {
  return std::system((cmd + " >/dev/null 2>&1").c_str());
}

/// Three network namespaces (controller + two pods) on one Linux bridge,
/// 10.<n>.0.1-3/24, each with its own address. Root only; removed at the
/// end.
class netns_lab {
public:
  netns_lab() {
    auto id = std::to_string(getpid() % 100000);
    bridge_ = "aipb" + id;
    if (getuid() != 0 || sh("ip link add " + bridge_ + " type bridge") != 0)
      return;
    ok_ = sh("ip link set " + bridge_ + " up") == 0;
    for (int i = 0; i < 3 && ok_; ++i) {
      auto ns = "aipn" + id + "-" + std::to_string(i);
      auto veth = "aipv" + id + "-" + std::to_string(i);
      names_.push_back(ns);
      veths_.push_back(veth);
      ok_ = sh("ip netns add " + ns) == 0
            && sh("ip link add " + veth + " type veth peer name eth0 netns "
                  + ns)
                 == 0
            && sh("ip link set " + veth + " master " + bridge_ + " up") == 0
            && sh("ip netns exec " + ns + " ip addr add " + address(i)
                  + "/24 dev eth0")
                 == 0
            && sh("ip netns exec " + ns + " ip link set eth0 up") == 0
            && sh("ip netns exec " + ns + " ip link set lo up") == 0;
    }
  }
  ~netns_lab() {
    for (auto& v : veths_)
      sh("ip link del " + v);
    for (auto& ns : names_)
      sh("ip netns del " + ns);
    sh("ip link del " + bridge_);
  }
  [[nodiscard]] bool ok() const noexcept { return ok_; }
  [[nodiscard]] static std::string address(int i) {
    return "10.231.0." + std::to_string(i + 1);
  }
  /// argv prefix that runs a command in namespace `i`.
  [[nodiscard]] std::vector<std::string> in(int i) const {
    // The harness spawns without a PATH search.
    std::string ip = fs::exists("/usr/sbin/ip") ? "/usr/sbin/ip" : "/sbin/ip";
    return {ip, "netns", "exec", names_.at(i)};
  }

private:
  std::string bridge_;
  std::vector<std::string> names_;
  std::vector<std::string> veths_;
  bool ok_ = false;
};

TEST(distributed, every_process_in_its_own_network_namespace) {
  netns_lab lab;
  if (!lab.ok())
    AIPERF_SKIP_OR_FAIL("needs root and `ip netns` (network namespaces)",
                        "run the tests as root; "
                          + aiperf::test::bootstrap_hint("iproute2"));
  temp_dir tmp;
  // The mock lives with the controller; pods reach both over the bridge.
  auto argv = lab.in(0);
  for (auto a : {node_bin(), std::string{"mock-server"}, std::string{"-p"},
                 std::string{"18000"}, std::string{"--host"},
                 std::string{"0.0.0.0"}, std::string{"--fast"}})
    argv.push_back(a);
  child mock{argv, tmp.path() / "mock"};
  ASSERT_TRUE(mock.first_line().has_value()) << mock.err();
  auto out = tmp.path() / "out";
  auto run_file = write_run_file(
    tmp.path(), "http://" + netns_lab::address(0) + ":18000", out, "2");
  // Fresh namespaces: the default ports are free.
  scoped_env env{{{"AIPERF_K8S_ZMQ_CONTROLLER_HOST", netns_lab::address(0)},
                  {"AIPERF_JOB_ID", "netns"},
                  {"AIPERF_K8S_RESULTS_LINGER_SECONDS", "0"}}};
  auto start = [&](int ns, const std::string& role, const std::string& log,
                   std::vector<std::pair<std::string, std::string>> vars) {
    scoped_env e{std::move(vars)};
    auto args = lab.in(ns);
    for (auto a : {node_bin(), std::string{"service"}, std::string{"--role"},
                   role, std::string{"--run-config"}, run_file.string()})
      args.push_back(a);
    return std::make_unique<child>(args, tmp.path() / log);
  };
  auto controller = start(0, "controller", "ctl", {});
  auto pod0 = start(1, "worker", "pod0", {{"AIPERF_POD_INDEX", "0"}});
  auto pod1 = start(2, "worker", "pod1", {{"AIPERF_POD_INDEX", "1"}});
  auto code = controller->wait();
  ASSERT_TRUE(code.has_value());
  ASSERT_EQ(*code, 0) << controller->err() << pod0->err() << pod1->err();
  EXPECT_EQ(pod0->wait(), 0) << pod0->err();
  EXPECT_EQ(pod1->wait(), 0) << pod1->err();
  auto o = read_outcome(out);
  EXPECT_EQ(o.records, 40u);
  std::set<std::string> pods_seen;
  for (auto& id : o.worker_ids)
    pods_seen.insert(id.substr(0, id.find('/')));
  EXPECT_EQ(pods_seen, (std::set<std::string>{"pod0", "pod1"}));
}

} // namespace
} // namespace aiperf::itest
