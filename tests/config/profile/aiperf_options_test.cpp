// Every AIPerf 0.7 `aiperf profile` option, fed to the real parser: each is
// accepted with AIPerf's meaning (the row checks the field it sets) or
// refused by name with "not supported by aiperf-node" (exit code 2), and no
// option the parser registers goes without a row, so none is accepted and
// ignored. The option names are AIPerf's public flag names (v0.7.0
// `docs/cli-options.md`, ai-dynamo/aiperf), as data.
#include "tests/config/profile/profile_test_support.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <optional>
#include <set>

using namespace aiperf::config;
using aiperf::config::testing::temp_file;

namespace {

using check_fn = std::function<void(const profile_config&)>;

/// One AIPerf spelling: `args` use it (`@` is replaced by an input file);
/// `check` asserts its meaning landed; no check = refused.
struct option_row {
  std::string flag;
  std::vector<std::string> args;
  check_fn check;
};

/// An input file every input flag can use: single_turn lines with
/// timestamps (ms), so the fixed-schedule flags apply to it too.
constexpr const char* input_lines
    = "{\"timestamp\": 0, \"text\": \"hello there\"}\n"
      "{\"timestamp\": 10, \"text\": \"and again\"}\n";

std::vector<option_row> accepted_rows() {
  std::vector<option_row> rows;
  auto add = [&](std::initializer_list<const char*> spellings,
                 std::function<std::vector<std::string>(std::string)> args,
                 check_fn check) {
    for (const char* s : spellings)
      rows.push_back({s, args(s), check});
  };
  auto value = [](std::string v) {
    return [v](std::string f) { return std::vector<std::string>{f, v}; };
  };
  auto alone = [](std::string f) { return std::vector<std::string>{f}; };
  // Endpoint
  add({"-m", "--model-names", "--model"}, value("a,b"), [](auto& c) {
    EXPECT_EQ(c.model_names, (std::vector<std::string>{"a", "b"}));
  });
  add(
      {"--model-selection-strategy"},
      [](std::string f) {
        return std::vector<std::string>{"-m", "a,b", f, "random"};
      },
      [](auto& c) {
        EXPECT_EQ(c.model_selection_strategy, model_selection_strategy::random);
      });
  add({"--custom-endpoint", "--endpoint"}, value("/v2/gen"),
      [](auto& c) { EXPECT_EQ(c.custom_endpoint, "/v2/gen"); });
  add({"--endpoint-type"}, value("completions"),
      [](auto& c) { EXPECT_EQ(c.endpoint_type, endpoint_type::completions); });
  add({"--streaming"}, alone, [](auto& c) { EXPECT_TRUE(c.streaming); });
  add({"-u", "--url"}, value("localhost:8000"), [](auto& c) {
    EXPECT_EQ(c.urls, (std::vector<std::string>{"http://localhost:8000"}));
  });
  add({"--url-strategy"}, value("round_robin"), [](auto& c) {
    EXPECT_EQ(c.url_strategy, url_strategy::round_robin);
  });
  add({"--request-timeout-seconds"}, value("5"),
      [](auto& c) { EXPECT_EQ(c.request_timeout_seconds, 5.0); });
  add({"--api-key"}, value("sk-1"),
      [](auto& c) { EXPECT_EQ(c.api_key, "sk-1"); });
  add({"--use-legacy-max-tokens"}, alone,
      [](auto& c) { EXPECT_TRUE(c.use_legacy_max_tokens); });
  add({"--use-server-token-count"}, alone,
      [](auto& c) { EXPECT_TRUE(c.use_server_token_count); });
  // Tokenizer
  add({"--tokenizer"}, value("whitespace8"),
      [](auto& c) { EXPECT_EQ(c.tokenizer, "whitespace8"); });
  add({"--tokenizer-revision"}, value("v1"),
      [](auto& c) { EXPECT_EQ(c.tokenizer_revision, "v1"); });
  add({"--prompt-corpus"}, value("coding"),
      [](auto& c) { EXPECT_EQ(c.prompt_corpus, prompt_corpus::coding); });
  // Input
  add({"--extra-inputs"}, value("ignore_eos:true"), [](auto& c) {
    ASSERT_EQ(c.extra_inputs.size(), 1u);
    EXPECT_EQ(c.extra_inputs[0].key, "ignore_eos");
    EXPECT_EQ(c.extra_inputs[0].json, "true");
  });
  add({"-H", "--header"}, value("X-Team:perf"), [](auto& c) {
    EXPECT_EQ(c.headers, (std::vector<http_header>{{"X-Team", "perf"}}));
  });
  add({"--input-file"}, value("@"),
      [](auto& c) { EXPECT_TRUE(c.input_file.has_value()); });
  add(
      {"--custom-dataset-type"},
      [](std::string f) {
        return std::vector<std::string>{"--input-file", "@", f, "single_turn"};
      },
      [](auto& c) {
        EXPECT_EQ(c.custom_dataset_type, custom_dataset_type::single_turn);
      });
  add({"--random-seed"}, value("42"),
      [](auto& c) { EXPECT_EQ(c.random_seed, 42u); });
  // Fixed schedule
  auto fixed = [](std::vector<std::string> tail) {
    return [tail](std::string f) {
      std::vector<std::string> a{"--input-file", "@", "--fixed-schedule"};
      if (f != "--fixed-schedule")
        a.push_back(f);
      a.insert(a.end(), tail.begin(), tail.end());
      return a;
    };
  };
  add({"--fixed-schedule"}, fixed({}),
      [](auto& c) { EXPECT_TRUE(c.fixed_schedule); });
  add({"--fixed-schedule-auto-offset"}, fixed({}),
      [](auto& c) { EXPECT_TRUE(c.fixed_schedule_auto_offset); });
  add({"--fixed-schedule-start-offset"}, fixed({"5"}),
      [](auto& c) { EXPECT_EQ(c.fixed_schedule_start_offset, 5); });
  add({"--fixed-schedule-end-offset"}, fixed({"10"}),
      [](auto& c) { EXPECT_EQ(c.fixed_schedule_end_offset, 10); });
  // Goodput
  add({"--goodput"}, value("request_latency:250"), [](auto& c) {
    EXPECT_EQ(c.goodput,
              (std::vector<goodput_slo>{{"request_latency", 250.0}}));
  });
  // Conversation input
  add({"--conversation-num", "--num-conversations", "--num-sessions"},
      value("4"), [](auto& c) { EXPECT_EQ(c.conversation_num, 4); });
  add({"--num-dataset-entries", "--num-prompts"}, value("7"),
      [](auto& c) { EXPECT_EQ(c.num_dataset_entries, 7); });
  add({"--conversation-turn-mean", "--session-turns-mean"}, value("3"),
      [](auto& c) { EXPECT_EQ(c.conversation_turn_mean, 3); });
  add({"--conversation-turn-stddev", "--session-turns-stddev"}, value("1.5"),
      [](auto& c) { EXPECT_EQ(c.conversation_turn_stddev, 1.5); });
  add({"--conversation-turn-delay-mean", "--session-turn-delay-mean"},
      value("100"),
      [](auto& c) { EXPECT_EQ(c.conversation_turn_delay_mean, 100.0); });
  add({"--conversation-turn-delay-stddev", "--session-turn-delay-stddev"},
      value("10"),
      [](auto& c) { EXPECT_EQ(c.conversation_turn_delay_stddev, 10.0); });
  add({"--conversation-turn-delay-ratio", "--session-delay-ratio"},
      value("0.5"),
      [](auto& c) { EXPECT_EQ(c.conversation_turn_delay_ratio, 0.5); });
  // Input and output sequence lengths
  add({"--prompt-input-tokens-mean", "--synthetic-input-tokens-mean", "--isl"},
      value("64"), [](auto& c) { EXPECT_EQ(c.isl_mean, 64); });
  add({"--prompt-input-tokens-stddev", "--synthetic-input-tokens-stddev",
       "--isl-stddev"},
      value("3.5"), [](auto& c) { EXPECT_EQ(c.isl_stddev, 3.5); });
  add({"--prompt-output-tokens-mean", "--output-tokens-mean", "--osl"},
      value("16"), [](auto& c) { EXPECT_EQ(c.osl_mean, 16); });
  add(
      {"--prompt-output-tokens-stddev", "--output-tokens-stddev",
       "--osl-stddev"},
      [](std::string f) {
        return std::vector<std::string>{"--osl", "16", f, "2"};
      },
      [](auto& c) { EXPECT_EQ(c.osl_stddev, 2.0); });
  // Load generator
  add({"--benchmark-duration"}, value("30"),
      [](auto& c) { EXPECT_EQ(c.benchmark_duration, 30.0); });
  add(
      {"--benchmark-grace-period"},
      [](std::string f) {
        return std::vector<std::string>{"--benchmark-duration", "30", f, "5"};
      },
      [](auto& c) { EXPECT_EQ(c.benchmark_grace_period, 5.0); });
  add({"--concurrency"}, value("8"),
      [](auto& c) { EXPECT_EQ(c.concurrency, 8); });
  add(
      {"--prefill-concurrency"},
      [](std::string f) {
        return std::vector<std::string>{"--streaming", "--concurrency", "4", f,
                                        "2"};
      },
      [](auto& c) { EXPECT_EQ(c.prefill_concurrency, 2); });
  add({"--request-rate"}, value("5.5"),
      [](auto& c) { EXPECT_EQ(c.request_rate, 5.5); });
  add(
      {"--arrival-pattern", "--request-rate-mode"},
      [](std::string f) {
        return std::vector<std::string>{"--request-rate", "5", f, "constant"};
      },
      [](auto& c) { EXPECT_EQ(c.arrival_pattern, arrival_pattern::constant); });
  add(
      {"--arrival-smoothness", "--vllm-burstiness"},
      [](std::string f) {
        return std::vector<std::string>{
            "--request-rate", "5", "--arrival-pattern", "gamma", f, "2.5"};
      },
      [](auto& c) { EXPECT_EQ(c.arrival_smoothness, 2.5); });
  add({"--request-count", "--num-requests"}, value("9"),
      [](auto& c) { EXPECT_EQ(c.request_count, 9); });
  // Later than 0.7, taken with its meaning: a ratio.
  add({"--failed-request-threshold"}, value("0.05"),
      [](auto& c) { EXPECT_EQ(c.failed_request_threshold, 0.05); });
  // Service: AIPerf's verbosity switches set the log level.
  add({"-v", "--verbose"}, alone,
      [](auto& c) { EXPECT_EQ(c.log_level, "debug"); });
  add({"-vv", "--extra-verbose"}, alone,
      [](auto& c) { EXPECT_EQ(c.log_level, "trace"); });
  add({"--request-cancellation-rate"}, value("25"),
      [](auto& c) { EXPECT_EQ(c.request_cancellation_rate, 25.0); });
  add({"--request-cancellation-delay"}, value("0.5"),
      [](auto& c) { EXPECT_EQ(c.request_cancellation_delay, 0.5); });
  // Warmup, user-centric rate
  add({"--warmup-request-count", "--num-warmup-requests"}, value("3"),
      [](auto& c) { EXPECT_EQ(c.warmup_request_count, 3); });
  auto user_centric = [](std::string f) {
    std::vector<std::string> a{
        "--user-centric-rate",      "2", "--num-users", "8",
        "--conversation-turn-mean", "2"};
    // The flag under test goes first; its partner keeps its place.
    for (std::size_t i = 0; i < a.size(); i += 2)
      if (a[i] == f)
        std::swap(a[i], a[0]), std::swap(a[i + 1], a[1]);
    return a;
  };
  add({"--user-centric-rate"}, user_centric,
      [](auto& c) { EXPECT_EQ(c.user_centric_rate, 2.0); });
  add({"--num-users"}, user_centric,
      [](auto& c) { EXPECT_EQ(c.num_users, 8); });
  // Output
  add({"--output-artifact-dir", "--artifact-dir"}, value("out"),
      [](auto& c) { EXPECT_EQ(c.output_artifact_dir, "out"); });
  add({"--profile-export-prefix", "--profile-export-file"}, value("run1"),
      [](auto& c) { EXPECT_EQ(c.profile_export_prefix, "run1"); });
  add({"--export-level", "--profile-export-level"}, value("raw"),
      [](auto& c) { EXPECT_EQ(c.export_level, export_level::raw); });
  add({"--slice-duration"}, value("2.5"),
      [](auto& c) { EXPECT_EQ(c.slice_duration, 2.5); });
  // Telemetry: turning a collection off is what aiperf-node does anyway.
  add({"--no-server-metrics", "--no-gpu-telemetry"}, alone, [](auto& c) {
    auto plain = aiperf::config::testing::parse({"-m", "m"});
    ASSERT_TRUE(plain);
    EXPECT_TRUE(c == *plain);
  });
  // UI, service, workers
  add({"--ui-type", "--ui"}, value("none"),
      [](auto& c) { EXPECT_EQ(c.ui, ui_type::none); });
  add({"--log-level"}, value("DEBUG"),
      [](auto& c) { EXPECT_EQ(c.log_level, "debug"); });
  add({"--record-processor-service-count", "--record-processors"}, value("2"),
      [](auto& c) { EXPECT_EQ(c.record_processors, 2); });
  add({"--workers-max", "--max-workers"}, value("6"),
      [](auto& c) { EXPECT_EQ(c.workers_max, 6); });
  return rows;
}

/// AIPerf 0.7 spellings aiperf-node refuses.
const std::vector<std::string>& refused_flags() {
  static const std::vector<std::string> flags{
      // Endpoint
      "--transport", "--transport-type",
      "--connection-reuse-strategy", "--download-video-content",
      "--request-content-type",
      // Tokenizer
      "--tokenizer-trust-remote-code",
      // Input
      "--public-dataset", "--hf-subset", "--dataset-sampling-strategy",
      // Prompt, prefix prompt
      "-b", "--prompt-batch-size", "--batch-size-text", "--batch-size",
      "--prompt-prefix-pool-size", "--prefix-prompt-pool-size",
      "--num-prefix-prompts", "--prompt-prefix-length",
      "--prefix-prompt-length", "--shared-system-prompt-length",
      "--user-context-prompt-length",
      // Input and output sequence lengths
      "--prompt-input-tokens-block-size", "--synthetic-input-tokens-block-size",
      "--isl-block-size", "--seq-dist", "--sequence-distribution",
      // Audio, image, video
      "--audio-batch-size", "--batch-size-audio", "--audio-length-mean",
      "--audio-length-stddev", "--audio-format", "--audio-depths",
      "--audio-sample-rates", "--audio-num-channels", "--image-width-mean",
      "--image-width-stddev", "--image-height-mean", "--image-height-stddev",
      "--image-batch-size", "--batch-size-image", "--image-format",
      "--video-batch-size", "--batch-size-video", "--video-duration",
      "--video-fps", "--video-width", "--video-height", "--video-synth-type",
      "--video-format", "--video-codec", "--video-audio-sample-rate",
      "--video-audio-num-channels", "--video-audio-codec",
      "--video-audio-depth",
      // Rankings, synthesis
      "--rankings-passages-mean", "--rankings-passages-stddev",
      "--rankings-passages-prompt-token-mean",
      "--rankings-passages-prompt-token-stddev",
      "--rankings-query-prompt-token-mean",
      "--rankings-query-prompt-token-stddev", "--synthesis-speedup-ratio",
      "--synthesis-prefix-len-multiplier", "--synthesis-prefix-root-multiplier",
      "--synthesis-prompt-len-multiplier", "--synthesis-max-isl",
      "--synthesis-max-osl",
      // Load generator
      "--concurrency-ramp-duration", "--prefill-concurrency-ramp-duration",
      "--request-rate-ramp-duration",
      // Warmup
      "--warmup-duration", "--num-warmup-sessions", "--warmup-concurrency",
      "--warmup-prefill-concurrency", "--warmup-request-rate",
      "--warmup-arrival-pattern", "--warmup-grace-period",
      "--warmup-concurrency-ramp-duration",
      "--warmup-prefill-concurrency-ramp-duration",
      "--warmup-request-rate-ramp-duration",
      // Output, HTTP trace
      "--export-http-trace",
      "--show-trace-timing",
      // Server metrics, GPU telemetry
      "--server-metrics", "--server-metrics-formats", "--gpu-telemetry",
      // Multi-run
      "--num-profile-runs", "--profile-run-cooldown-seconds",
      "--confidence-level", "--profile-run-disable-warmup-after-first",
      "--no-profile-run-disable-warmup-after-first", "--set-consistent-seed",
      "--no-set-consistent-seed", "--convergence-metric", "--convergence-stat",
      "--convergence-threshold", "--convergence-mode",
      // Accuracy
      "--accuracy-benchmark", "--accuracy-tasks", "--accuracy-n-shots",
      "--accuracy-enable-cot", "--accuracy-grader", "--accuracy-system-prompt",
      "--accuracy-verbose",
      // Service, ZMQ
      "--api-port", "--api-host",
      "--zmq-host", "--zmq-ipc-path"};
  return flags;
}

/// aiperf-node's own flags (no AIPerf counterpart).
const std::set<std::string>& own_flags() {
  static const std::set<std::string> flags{
      "--ca-file",     "--insecure",         "--io-threads",
      "--io-priority", "--scheduler-policy", "--scheduler-threads",
      "--worker-pods", "--workers-per-pod"};
  return flags;
}

/// Parses `args` as `profile` does (a model added unless the row gives
/// one); `@` becomes the path of `file`.
caf::expected<profile_config> parse_row(std::vector<std::string> args,
                                        const temp_file& file) {
  bool model = false;
  for (auto& a : args) {
    if (a == "@")
      a = file.path();
    model = model || a == "-m" || a == "--model" || a == "--model-names";
  }
  if (!model)
    args.insert(args.begin(), {"-m", "m"});
  return aiperf::config::testing::parse(args);
}

} // namespace

TEST(aiperf_options, each_accepted_option_keeps_aiperf_meaning) {
  temp_file file{"aiperf_options.jsonl", input_lines};
  for (const auto& row : accepted_rows()) {
    SCOPED_TRACE(row.flag);
    std::optional<caf::expected<profile_config>> cfg;
    try {
      cfg.emplace(parse_row(row.args, file));
    } catch (const CLI::ParseError& e) {
      ADD_FAILURE() << "refused: " << e.what();
      continue;
    }
    ASSERT_TRUE(*cfg) << aiperf::error_message(cfg->error());
    row.check(**cfg);
  }
}

TEST(aiperf_options, each_unsupported_option_is_refused_by_name) {
  temp_file file{"aiperf_options.jsonl", input_lines};
  for (const auto& flag : refused_flags()) {
    SCOPED_TRACE(flag);
    try {
      auto cfg = parse_row({flag, "1"}, file);
      ADD_FAILURE() << flag << " was accepted";
    } catch (const CLI::ParseError& e) {
      std::string what = e.what();
      // main turns every CLI11 parse error into exit code 2.
      EXPECT_NE(e.get_exit_code(), 0);
      EXPECT_NE(what.find(flag), std::string::npos) << what;
      EXPECT_NE(what.find("not supported by aiperf-node"), std::string::npos)
          << what;
    }
  }
}

// A refused option takes any number of values (AIPerf's switches none,
// --server-metrics a list), and is refused the same with none.
TEST(aiperf_options, refused_without_a_value_too) {
  temp_file file{"aiperf_options.jsonl", input_lines};
  for (const auto& flag :
       {"--export-http-trace", "--server-metrics", "--warmup-duration"}) {
    SCOPED_TRACE(flag);
    EXPECT_THROW((void)parse_row({flag, "--concurrency", "2"}, file),
                 CLI::ValidationError);
  }
}

// AIPerf 0.7's choices aiperf-node lacks are refused as such, naming the
// flag; a typo still gets "is not one of".
TEST(aiperf_options, unsupported_choices_are_refused_by_name) {
  temp_file file{"aiperf_options.jsonl", input_lines};
  const std::vector<std::vector<std::string>> cases{
      {"--endpoint-type", "responses"},
      {"--endpoint-type", "template"},
      {"--arrival-pattern", "concurrency_burst"},
      {"--custom-dataset-type", "bailian_trace"},
      {"--ui", "dashboard"}};
  for (const auto& args : cases) {
    SCOPED_TRACE(args[0] + " " + args[1]);
    try {
      auto a = args;
      if (a[0] == "--custom-dataset-type")
        a.insert(a.begin(), {"--input-file", "@"});
      if (a[0] == "--arrival-pattern")
        a.insert(a.begin(), {"--request-rate", "5"});
      (void)parse_row(a, file);
      ADD_FAILURE() << "accepted";
    } catch (const CLI::ParseError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find(args[0]), std::string::npos) << what;
      EXPECT_NE(what.find("'" + args[1] + "' is not supported by aiperf-node"),
                std::string::npos)
          << what;
    }
  }
  try {
    (void)parse_row({"--endpoint-type", "chatt"}, file);
    ADD_FAILURE() << "accepted";
  } catch (const CLI::ParseError& e) {
    EXPECT_NE(std::string{e.what()}.find("'chatt' is not one of"),
              std::string::npos)
        << e.what();
  }
}

// Every option the parser registers is an AIPerf option with a row above,
// or one of aiperf-node's own: nothing is accepted without its meaning
// being checked.
TEST(aiperf_options, every_registered_option_has_a_row) {
  std::set<std::string> rows;
  for (const auto& row : accepted_rows())
    rows.insert(row.flag);
  for (const auto& flag : refused_flags())
    rows.insert(flag);
  CLI::App app;
  profile_config cfg;
  add_profile_options(app, cfg);
  for (const auto* opt : app.get_options()) {
    std::vector<std::string> names;
    for (const auto& s : opt->get_snames())
      names.push_back("-" + s);
    for (const auto& l : opt->get_lnames())
      names.push_back("--" + l);
    for (const auto& n : names) {
      if (n == "-h" || n == "--help")
        continue;
      EXPECT_TRUE(rows.count(n) == 1 || own_flags().count(n) == 1)
          << n << " is registered without a row";
    }
  }
}

// The table holds each spelling once.
TEST(aiperf_options, the_table_lists_each_spelling_once) {
  std::map<std::string, int> seen;
  for (const auto& row : accepted_rows())
    ++seen[row.flag];
  for (const auto& flag : refused_flags())
    ++seen[flag];
  for (const auto& [flag, n] : seen)
    EXPECT_EQ(n, 1) << flag;
  EXPECT_EQ(seen.size(), accepted_rows().size() + refused_flags().size());
}
