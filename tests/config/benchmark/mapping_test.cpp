// Every `profile` flag maps to one document field and back, and `-f FILE`
// with explicit flags overriding the file.
#include "config/benchmark/mapping.hpp"
#include "config/profile/profile_cli.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>

using namespace aiperf;
using namespace aiperf::config;
using namespace aiperf::config::benchmark;

namespace {

struct flag_case {
  std::vector<std::string> args;
  /// The document the flags give is valid for profile -f (false for values
  /// aiperf-node's validation refuses).
  bool valid = true;
};

// One row per flag of add_profile_options(), keyed by its first long name.
/// Flags the benchmark document does not carry (yet), with arguments that
/// set them.
const std::map<std::string, std::vector<std::string>>& unmapped_flags() {
  static const std::map<std::string, std::vector<std::string>> rows{
      {"request-cancellation-rate", {"--request-cancellation-rate", "10"}},
      {"request-cancellation-delay", {"--request-cancellation-delay", "0.5"}},
      {"profile-export-prefix", {"--profile-export-prefix", "run1"}},
      {"url-strategy", {"--url-strategy", "round_robin"}},
  };
  return rows;
}

const std::map<std::string, flag_case>& flag_cases() {
  static const std::map<std::string, flag_case> rows{
      {"model-names", {{"-m", "a,b"}}},
      {"model-selection-strategy",
       {{"-m", "a,b", "--model-selection-strategy", "random"}}},
      {"url", {{"-u", "http://h:1", "-u", "http://h:2/v1"}}},
      {"endpoint-type", {{"--endpoint-type", "embeddings"}}},
      {"custom-endpoint", {{"--endpoint", "/v2/generate"}}},
      {"streaming", {{"--streaming"}}},
      {"api-key", {{"--api-key", "sk-1"}}},
      {"header", {{"-H", "X-A:1", "-H", "X-B: two"}}},
      {"extra-inputs",
       {{"--extra-inputs", "ignore_eos:true", "--extra-inputs",
         "min_tokens:16"}}},
      {"request-timeout-seconds", {{"--request-timeout-seconds", "60.5"}}},
      {"use-legacy-max-tokens", {{"--use-legacy-max-tokens"}}},
      {"use-server-token-count", {{"--use-server-token-count"}}},
      {"ca-file", {{"--ca-file", "ca.pem"}}},
      {"insecure", {{"--insecure"}}},
      {"input-file", {{"--input-file", "data.jsonl"}}},
      {"custom-dataset-type",
       {{"--input-file", "t.jsonl", "--custom-dataset-type",
         "mooncake_trace"}}},
      {"fixed-schedule", {{"--input-file", "t.jsonl", "--fixed-schedule"}}},
      {"fixed-schedule-auto-offset",
       {{"--input-file", "t.jsonl", "--fixed-schedule",
         "--fixed-schedule-auto-offset"}}},
      {"fixed-schedule-start-offset",
       {{"--input-file", "t.jsonl", "--fixed-schedule",
         "--fixed-schedule-start-offset", "100"}}},
      {"fixed-schedule-end-offset",
       {{"--input-file", "t.jsonl", "--fixed-schedule",
         "--fixed-schedule-end-offset", "900"}}},
      {"random-seed", {{"--random-seed", "42"}}},
      {"num-dataset-entries", {{"--num-dataset-entries", "7"}}},
      {"isl", {{"--isl", "64"}}},
      {"isl-stddev", {{"--isl-stddev", "3.5"}}},
      {"prompt-corpus", {{"--prompt-corpus", "coding"}}},
      {"osl", {{"--osl", "16"}}},
      {"osl-stddev", {{"--osl", "16", "--osl-stddev", "2"}}},
      {"conversation-num", {{"--conversation-num", "4"}}},
      {"conversation-turn-mean", {{"--conversation-turn-mean", "3"}}},
      {"conversation-turn-stddev", {{"--conversation-turn-stddev", "1.5"}}},
      {"conversation-turn-delay-mean",
       {{"--conversation-turn-delay-mean", "100"}}},
      {"conversation-turn-delay-stddev",
       {{"--conversation-turn-delay-stddev", "10"}}},
      {"conversation-turn-delay-ratio",
       {{"--conversation-turn-delay-ratio", "0.5"}}},
      {"tokenizer", {{"--tokenizer", "gpt2"}}},
      {"tokenizer-revision",
       {{"--tokenizer", "gpt2", "--tokenizer-revision", "v1"}}},
      {"concurrency", {{"--concurrency", "8"}}},
      {"request-rate", {{"--request-rate", "5.5"}}},
      {"request-rate-mode",
       {{"--request-rate", "5", "--arrival-pattern", "constant"}}},
      {"vllm-burstiness",
       {{"--request-rate", "5", "--arrival-pattern", "gamma",
         "--arrival-smoothness", "2.5"}}},
      {"num-requests", {{"--request-count", "9"}}},
      {"benchmark-duration", {{"--benchmark-duration", "30"}}},
      {"benchmark-grace-period",
       {{"--benchmark-duration", "30", "--benchmark-grace-period", "inf"}}},
      {"num-warmup-requests", {{"--warmup-request-count", "3"}}},
      {"prefill-concurrency",
       {{"--streaming", "--concurrency", "4", "--prefill-concurrency", "2"}}},
      {"user-centric-rate", {{"--user-centric-rate", "2", "--num-users", "8"}}},
      {"num-users", {{"--user-centric-rate", "1", "--num-users", "4"}}},
      {"goodput",
       {{"--goodput", "request_latency:250 inter_token_latency:10"}}},
      {"failed-request-threshold", {{"--failed-request-threshold", "0.25"}}},
      {"artifact-dir", {{"--artifact-dir", "out"}}},
      {"export-level", {{"--export-level", "raw"}}},
      {"slice-duration", {{"--slice-duration", "2.5"}}},
      {"ui-type", {{"--ui", "none"}}},
      {"log-level", {{"--log-level", "debug"}}},
      {"verbose", {{"-v"}}},
      {"extra-verbose", {{"--extra-verbose"}}},
      {"max-workers", {{"--workers-max", "6"}}},
      {"record-processor-service-count", {{"--record-processors", "2"}}},
      {"io-threads", {{"--io-threads", "2"}}},
      {"io-priority", {{"--io-priority", "high"}}},
      {"scheduler-policy", {{"--scheduler-policy", "stealing"}}},
      {"scheduler-threads", {{"--scheduler-threads", "3"}}},
      {"worker-pods", {{"--worker-pods", "3"}}},
      {"workers-per-pod", {{"--worker-pods", "2", "--workers-per-pod", "2"}}},
  };
  return rows;
}

bool has(const std::vector<std::string>& args,
         std::initializer_list<const char*> names) {
  for (const auto& a : args)
    for (const char* n : names)
      if (a == n)
        return true;
  return false;
}

/// Parses `args` as `profile` flags (a model and a request count added when
/// the row has none, so the document is a whole benchmark).
profile_config parse_flags(std::vector<std::string> args) {
  if (!has(args, {"-m"}))
    args.insert(args.begin(), {"-m", "base"});
  if (!has(args,
           {"--request-count", "--benchmark-duration", "--fixed-schedule"}))
    args.insert(args.end(), {"--request-count", "20"});
  CLI::App app;
  profile_config cfg;
  add_profile_options(app, cfg);
  std::vector<const char*> argv{"profile"};
  for (const auto& a : args)
    argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  return cfg;
}

std::string problems(const json& doc) {
  std::string out;
  for (const auto& p : check(doc, document_kind::config_file))
    if (!p.warning)
      out += to_string(p) + "\n";
  return out;
}

} // namespace

TEST(flag_mapping, every_profile_flag_has_a_row) {
  CLI::App app;
  profile_config cfg;
  add_profile_options(app, cfg);
  std::set<std::string> flags;
  // The AIPerf options refused by name have no field, nor do the switches
  // that turn off a collection aiperf-node never makes.
  for (const auto* opt : app.get_options())
    if (!opt->get_lnames().empty() && opt->get_lnames()[0] != "help"
        && opt->get_group().find("not supported") == std::string::npos
        && opt->get_group() != "Telemetry")
      flags.insert(opt->get_lnames()[0]);
  std::set<std::string> rows;
  for (const auto& [k, v] : flag_cases())
    rows.insert(k);
  for (const auto& [k, v] : unmapped_flags())
    rows.insert(k);
  EXPECT_EQ(flags, rows);
}

TEST(flag_mapping, flags_without_a_document_field_are_refused_not_dropped) {
  for (const auto& [flag, args] : unmapped_flags()) {
    SCOPED_TRACE("--" + flag);
    auto doc = from_profile_config(parse_flags(args));
    if (flag == "url-strategy") { // its one value is the default
      ASSERT_TRUE(doc);
      EXPECT_EQ(*doc, *from_profile_config(parse_flags({})));
      continue;
    }
    ASSERT_FALSE(doc);
    EXPECT_NE(error_message(doc.error()).find("--" + flag), std::string::npos)
        << error_message(doc.error());
  }
}

TEST(flag_mapping, every_flag_round_trips_through_the_document) {
  const auto base_doc = from_profile_config(parse_flags({}));
  ASSERT_TRUE(base_doc);
  for (const auto& [flag, row] : flag_cases()) {
    SCOPED_TRACE("--" + flag);
    auto cfg = parse_flags(row.args);
    auto expected = with_cli_text_parsed(cfg);
    ASSERT_TRUE(expected) << error_message(expected.error());
    auto doc = from_profile_config(cfg);
    ASSERT_TRUE(doc) << error_message(doc.error());
    EXPECT_NE(*doc, *base_doc) << "the flag changes no field";
    auto canonical = normalize(*doc, document_kind::config_file);
    ASSERT_TRUE(canonical);
    EXPECT_EQ(*canonical, *doc) << "not in canonical form:\n"
                                << write_json(*doc);
    if (row.valid) {
      EXPECT_EQ(problems(*doc), "") << write_json(*doc);
    } else {
      EXPECT_NE(problems(*doc), "");
    }
    auto back = to_profile_config(*doc);
    ASSERT_TRUE(back) << error_message(back.error());
    EXPECT_TRUE(*back == *expected) << write_json(*doc);
    auto again = from_profile_config(*back);
    ASSERT_TRUE(again);
    EXPECT_EQ(write_json(*again), write_json(*doc));
  }
}

TEST(flag_mapping, flags_land_in_aiperf_fields) {
  auto doc = from_profile_config(parse_flags(
      {"-m", "llama", "-u", "http://gpu:8000", "--streaming", "--request-rate",
       "50", "--benchmark-duration", "60", "--failed-request-threshold", "0.05"}));
  ASSERT_TRUE(doc);
  EXPECT_EQ(write_json(*doc), R"({
  "schemaVersion": "2.0",
  "benchmark": {
    "models": [
      "llama"
    ],
    "endpoint": {
      "urls": [
        "http://gpu:8000"
      ],
      "streaming": true
    },
    "datasets": [
      {
        "name": "default",
        "type": "synthetic"
      }
    ],
    "phases": [
      {
        "name": "profiling",
        "kind": "profiling",
        "type": "poisson",
        "rate": 50.0,
        "duration": 60.0,
        "failedRequestThreshold": 0.05
      }
    ]
  }
}
)");
}

TEST(flag_mapping, values_flags_cannot_hold_are_refused_with_the_path) {
  auto doc = parse_yaml(
      "benchmark:\n  models: [m]\n  endpoint: {urls: ['http://h:1']}\n"
      "  datasets: [{name: d, type: synthetic, prompts: {isl: {mean: 10.5}}}]\n"
      "  phases: [{name: profiling, type: concurrency, requests: 3}]\n",
      "t.yaml");
  ASSERT_TRUE(doc);
  auto cfg = to_profile_config(*doc);
  ASSERT_FALSE(cfg);
  EXPECT_EQ(error_flag(cfg.error()), "benchmark.datasets[0].prompts.isl");
  auto off = parse_flags({"--log-level", "off"});
  auto mapped = from_profile_config(off);
  ASSERT_FALSE(mapped);
  EXPECT_EQ(error_flag(mapped.error()), "--log-level");
}

namespace {

struct temp_file {
  std::string path;
  explicit temp_file(const std::string& text) {
    char name[] = "/tmp/aiperf-config-XXXXXX.yaml";
    int fd = mkstemps(name, 5);
    path = name;
    std::FILE* f = fdopen(fd, "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  ~temp_file() { std::remove(path.c_str()); }
};

profile_config
run_with_file(const std::string& file, std::vector<std::string> args,
              caf::expected<std::vector<std::string>>* result = nullptr) {
  CLI::App app;
  profile_config cfg;
  add_profile_options(app, cfg);
  std::string path;
  auto* f = app.add_option("-f,--config", path, "config file");
  std::vector<const char*> argv{"profile", "-f", file.c_str()};
  for (const auto& a : args)
    argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  auto applied = apply_file_then_flags(path, app, cfg, f);
  if (result)
    *result = applied;
  else
    EXPECT_TRUE(applied) << error_message(applied.error());
  return cfg;
}

constexpr const char* bench_file = R"(schemaVersion: "2.0"
random_seed: 9
benchmark:
  model: file-model
  endpoint:
    url: http://file:8000
    streaming: true
    headers: {X-File: f}
  dataset: {type: synthetic, entries: 50, isl: {mean: 128, stddev: 4}}
  phases:
    - {name: warmup, type: concurrency, requests: 2}
    - {name: profiling, type: concurrency, concurrency: 4, requests: 40}
)";

} // namespace

TEST(profile_file, the_file_gives_the_flags) {
  temp_file file{bench_file};
  auto cfg = run_with_file(file.path, {});
  EXPECT_EQ(cfg.model_names, std::vector<std::string>{"file-model"});
  EXPECT_EQ(cfg.urls, std::vector<std::string>{"http://file:8000"});
  EXPECT_TRUE(cfg.streaming);
  EXPECT_EQ(cfg.random_seed, 9u);
  EXPECT_EQ(cfg.num_dataset_entries, 50);
  EXPECT_EQ(cfg.isl_mean, 128);
  EXPECT_EQ(cfg.isl_stddev, 4.0);
  EXPECT_EQ(cfg.warmup_request_count, 2);
  EXPECT_EQ(cfg.concurrency, 4);
  EXPECT_EQ(cfg.request_count, 40);
  ASSERT_EQ(cfg.headers.size(), 1u);
  EXPECT_EQ(cfg.headers[0].name, "X-File");
}

TEST(profile_file, explicit_flags_override_the_file) {
  temp_file file{bench_file};
  auto cfg
      = run_with_file(file.path, {"--concurrency", "16", "-u", "http://cli:1",
                                  "--isl", "64", "-H", "X-Cli:c"});
  EXPECT_EQ(cfg.concurrency, 16);
  EXPECT_EQ(cfg.urls, std::vector<std::string>{"http://cli:1"});
  EXPECT_EQ(cfg.isl_mean, 64);
  EXPECT_EQ(cfg.isl_stddev, 4.0) << "a flag not given keeps the file's value";
  EXPECT_EQ(cfg.request_count, 40);
  ASSERT_TRUE(finalize(cfg));
  ASSERT_EQ(cfg.headers.size(), 2u) << "-H adds to the file's headers";
  EXPECT_EQ(cfg.headers[1].name, "X-Cli");
}

TEST(profile_file, an_unsupported_field_names_the_file_and_path) {
  temp_file file{std::string{bench_file} + "  artifacts: {prefix: run1}\n"};
  caf::expected<std::vector<std::string>> result{std::vector<std::string>{}};
  run_with_file(file.path, {}, &result);
  ASSERT_FALSE(result);
  EXPECT_EQ(error_message(result.error()),
            file.path
                + ": benchmark.artifacts.prefix: not supported by "
                  "aiperf-node; "
                  "remove it");
  EXPECT_EQ(error_flag(result.error()), "benchmark.artifacts.prefix");
}

TEST(flag_mapping, slice_duration_takes_seconds_or_a_duration) {
  auto doc_with = [](const std::string& value) {
    return parse_yaml(
        "benchmark:\n  models: [m]\n  endpoint: {urls: ['http://h:1']}\n"
        "  phases: [{name: profiling, type: concurrency, requests: 3}]\n"
        "  artifacts: {sliceDuration: "
            + value + "}\n",
        "t.yaml");
  };
  auto doc = doc_with("10s");
  ASSERT_TRUE(doc);
  auto cfg = to_profile_config(*doc);
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  EXPECT_EQ(cfg->slice_duration, 10.0);
  doc = doc_with("2.5");
  ASSERT_TRUE(doc);
  cfg = to_profile_config(*doc);
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  EXPECT_EQ(cfg->slice_duration, 2.5);
  auto mapped = from_profile_config(*cfg);
  ASSERT_TRUE(mapped);
  EXPECT_EQ((*mapped)["benchmark"]["artifacts"]["sliceDuration"], 2.5);
}
