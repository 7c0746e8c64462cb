#include "config/profile/profile_cli.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace aiperf::config {

namespace {

// CLI11 2.1 has no std::optional binding; store through a callback instead.
template <class T>
CLI::Option* add_optional(CLI::App& cmd, const std::string& names,
                          std::optional<T>& target, const std::string& help) {
  return cmd.add_option_function<T>(
      names, [&target](const T& value) { target = value; }, help);
}

// CLI11 2.1 parses integers with strtoll: an out-of-range value is clamped
// silently and a leading 0 means octal. Parse decimal text ourselves, so an
// overflow is refused naming `flag`.
template <class T>
T parse_integer(const std::string& flag, const std::string& text) {
  T value{};
  auto [ptr, ec]
      = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size())
    throw CLI::ValidationError(
        flag, "must be an integer in "
                  + std::to_string(std::numeric_limits<T>::min()) + ".."
                  + std::to_string(std::numeric_limits<T>::max()) + " (got '"
                  + text + "')");
  return value;
}

template <class T> struct integer_of { using type = T; };
template <class T> struct integer_of<std::optional<T>> { using type = T; };

/// An integer flag (plain or optional target) parsed by parse_integer.
template <class Target>
CLI::Option* add_integer(CLI::App& cmd, const std::string& names,
                         const std::string& flag, Target& target,
                         const std::string& help) {
  using T = typename integer_of<Target>::type;
  return cmd
      .add_option_function<std::string>(
          names,
          [&target, flag](const std::string& text) {
            target = parse_integer<T>(flag, text);
          },
          help)
      ->type_name("INT");
}

// AIPerf 0.7's choices of an enum flag that aiperf-node does not implement:
// refused as such rather than as a typo.
template <class Enum> std::vector<std::string_view> unsupported_choices() {
  return {};
}

template <> std::vector<std::string_view> unsupported_choices<endpoint_type>() {
  return {"cohere_rankings",      "responses",
          "chat_embeddings",      "hf_tei_rankings",
          "huggingface_generate", "image_generation",
          "video_generation",     "image_retrieval",
          "nim_embeddings",       "nim_rankings",
          "solido_rag",           "template"};
}

template <>
std::vector<std::string_view> unsupported_choices<arrival_pattern>() {
  return {"concurrency_burst"};
}

template <>
std::vector<std::string_view> unsupported_choices<custom_dataset_type>() {
  return {"burst_gpt_trace", "bailian_trace", "random_pool"};
}

template <>
std::vector<std::string_view> unsupported_choices<prompt_corpus>() {
  return {"random"};
}

template <> std::vector<std::string_view> unsupported_choices<ui_type>() {
  return {"dashboard"};
}

// Enum flags reject unknown spellings while parsing, listing the choices.
template <class Enum, class Target>
CLI::Option* add_enum(CLI::App& cmd, const std::string& names, Target& target,
                      const std::string& help, std::string flag = {}) {
  if (flag.empty())
    flag = names.substr(names.rfind(',') + 1);
  auto* opt = cmd.add_option_function<std::string>(
      names,
      [&target, flag](const std::string& text) {
        auto value = enum_from_string<Enum>(text);
        auto aiperf = unsupported_choices<Enum>();
        if (!value
            && std::find(aiperf.begin(), aiperf.end(), text) != aiperf.end())
          throw CLI::ValidationError(
              flag, "'" + text
                        + "' is not supported by aiperf-node; the "
                          "choices are "
                        + enum_choices<Enum>());
        if (!value)
          throw CLI::ValidationError(flag, "'" + text + "' is not one of "
                                               + enum_choices<Enum>());
        target = *value;
      },
      help + " (" + enum_choices<Enum>() + ")");
  opt->type_name("ENUM");
  return opt;
}

// AIPerf 0.7 `profile` options aiperf-node does not implement. Each is
// registered so that it is refused by name with exit code 2 (CLI11 alone
// would say "argument was not expected"), and takes any number of values so
// that its own values are never read as something else; none is accepted
// and ignored. `names` are CLI11's, `why` says what aiperf-node does instead.
struct unsupported_option {
  const char* names;
  const char* why;
};

constexpr unsupported_option unsupported_options[] = {
    // Endpoint
    {"--transport,--transport-type",
     "the transport follows the --url scheme (http or https); drop the flag"},
    {"--connection-reuse-strategy",
     "connections are always pooled keep-alive (AIPerf's default pooled)"},
    {"--download-video-content", "there is no video endpoint type"},
    {"--request-content-type", "request bodies are always application/json"},
    // Tokenizer
    {"--tokenizer-trust-remote-code",
     "tokenizers load from tokenizer.json and never run a model's code"},
    // Input
    {"--public-dataset", "use --input-file with the dataset as JSONL"},
    {"--hf-subset", "use --input-file with the dataset as JSONL"},
    {"--dataset-sampling-strategy",
     "synthetic prompts are shuffled and input files read in order "
     "(AIPerf's defaults)"},
    // Prompt
    {"-b,--prompt-batch-size,--batch-size-text,--batch-size",
     "every request carries one input"},
    {"--prompt-prefix-pool-size,--prefix-prompt-pool-size,--num-prefix-prompts",
     "synthetic prompts have no shared prefixes"},
    {"--prompt-prefix-length,--prefix-prompt-length",
     "synthetic prompts have no shared prefixes"},
    {"--shared-system-prompt-length",
     "synthetic prompts have no system prompt"},
    {"--user-context-prompt-length",
     "synthetic prompts have no per-session context"},
    // Input and output sequence lengths
    {"--prompt-input-tokens-block-size,--synthetic-input-tokens-block-size,"
     "--isl-block-size",
     "mooncake_trace hash_ids are 512-token blocks"},
    {"--seq-dist,--sequence-distribution",
     "use --isl/--isl-stddev and --osl/--osl-stddev"},
    // Audio, image, video
    {"--audio-batch-size,--batch-size-audio", "requests carry text only"},
    {"--audio-length-mean", "requests carry text only"},
    {"--audio-length-stddev", "requests carry text only"},
    {"--audio-format", "requests carry text only"},
    {"--audio-depths", "requests carry text only"},
    {"--audio-sample-rates", "requests carry text only"},
    {"--audio-num-channels", "requests carry text only"},
    {"--image-width-mean", "requests carry text only"},
    {"--image-width-stddev", "requests carry text only"},
    {"--image-height-mean", "requests carry text only"},
    {"--image-height-stddev", "requests carry text only"},
    {"--image-batch-size,--batch-size-image", "requests carry text only"},
    {"--image-format", "requests carry text only"},
    {"--video-batch-size,--batch-size-video", "requests carry text only"},
    {"--video-duration", "requests carry text only"},
    {"--video-fps", "requests carry text only"},
    {"--video-width", "requests carry text only"},
    {"--video-height", "requests carry text only"},
    {"--video-synth-type", "requests carry text only"},
    {"--video-format", "requests carry text only"},
    {"--video-codec", "requests carry text only"},
    {"--video-audio-sample-rate", "requests carry text only"},
    {"--video-audio-num-channels", "requests carry text only"},
    {"--video-audio-codec", "requests carry text only"},
    {"--video-audio-depth", "requests carry text only"},
    // Rankings, trace synthesis
    {"--rankings-passages-mean", "there is no rankings endpoint type"},
    {"--rankings-passages-stddev", "there is no rankings endpoint type"},
    {"--rankings-passages-prompt-token-mean",
     "there is no rankings endpoint type"},
    {"--rankings-passages-prompt-token-stddev",
     "there is no rankings endpoint type"},
    {"--rankings-query-prompt-token-mean",
     "there is no rankings endpoint type"},
    {"--rankings-query-prompt-token-stddev",
     "there is no rankings endpoint type"},
    {"--synthesis-speedup-ratio", "traces are replayed as recorded"},
    {"--synthesis-prefix-len-multiplier", "traces are replayed as recorded"},
    {"--synthesis-prefix-root-multiplier", "traces are replayed as recorded"},
    {"--synthesis-prompt-len-multiplier", "traces are replayed as recorded"},
    {"--synthesis-max-isl", "traces are replayed as recorded"},
    {"--synthesis-max-osl", "traces are replayed as recorded"},
    // Load generator
    {"--concurrency-ramp-duration", "the load starts at its target"},
    {"--prefill-concurrency-ramp-duration", "the load starts at its target"},
    {"--request-rate-ramp-duration", "the load starts at its target"},
    // Warmup
    {"--warmup-duration", "warmup is a request count: --warmup-request-count"},
    {"--num-warmup-sessions",
     "warmup is a request count: --warmup-request-count"},
    {"--warmup-concurrency", "warmup runs at the profiling load"},
    {"--warmup-prefill-concurrency", "warmup runs at the profiling load"},
    {"--warmup-request-rate", "warmup runs at the profiling load"},
    {"--warmup-arrival-pattern", "warmup runs at the profiling load"},
    {"--warmup-grace-period", "warmup waits for every request"},
    {"--warmup-concurrency-ramp-duration", "warmup runs at the profiling load"},
    {"--warmup-prefill-concurrency-ramp-duration",
     "warmup runs at the profiling load"},
    {"--warmup-request-rate-ramp-duration",
     "warmup runs at the profiling load"},
    // Output, HTTP trace
    {"--export-http-trace", "no HTTP phase timings are recorded"},
    {"--show-trace-timing", "no HTTP phase timings are recorded"},
    // Telemetry
    {"--server-metrics", "the server's /metrics is not scraped"},
    {"--server-metrics-formats", "the server's /metrics is not scraped"},
    {"--gpu-telemetry", "no GPU telemetry is collected"},
    // Multi-run, accuracy
    {"--num-profile-runs", "one run per invocation; run profile again"},
    {"--profile-run-cooldown-seconds",
     "one run per invocation; run profile again"},
    {"--confidence-level", "one run per invocation; run profile again"},
    {"--profile-run-disable-warmup-after-first",
     "one run per invocation; run profile again"},
    {"--no-profile-run-disable-warmup-after-first",
     "one run per invocation; run profile again"},
    {"--set-consistent-seed", "one run per invocation; use --random-seed"},
    {"--no-set-consistent-seed", "one run per invocation; use --random-seed"},
    {"--convergence-metric", "one run per invocation; run profile again"},
    {"--convergence-stat", "one run per invocation; run profile again"},
    {"--convergence-threshold", "one run per invocation; run profile again"},
    {"--convergence-mode", "one run per invocation; run profile again"},
    {"--accuracy-benchmark", "there are no accuracy benchmarks"},
    {"--accuracy-tasks", "there are no accuracy benchmarks"},
    {"--accuracy-n-shots", "there are no accuracy benchmarks"},
    {"--accuracy-enable-cot", "there are no accuracy benchmarks"},
    {"--accuracy-grader", "there are no accuracy benchmarks"},
    {"--accuracy-system-prompt", "there are no accuracy benchmarks"},
    {"--accuracy-verbose", "there are no accuracy benchmarks"},
    // Service, ZMQ
    {"--api-port", "profile serves no API (aiperf-node service does)"},
    {"--api-host", "profile serves no API (aiperf-node service does)"},
    {"--zmq-host", "the runtime binds its own sockets"},
    {"--zmq-ipc-path", "the runtime binds its own sockets"},
};

// "-b/--prompt-batch-size/--batch-size" from CLI11's "-b,--prompt-...": the
// message then holds whichever spelling the user typed.
std::string label_of(std::string names) {
  std::replace(names.begin(), names.end(), ',', '/');
  return names;
}

void add_unsupported_options(CLI::App& cmd) {
  const std::string g = "AIPerf options not supported by aiperf-node (refused)";
  for (const auto& u : unsupported_options) {
    auto label = label_of(u.names);
    std::string why = u.why;
    cmd.add_option_function<std::vector<std::string>>(
           u.names,
           [label, why](const std::vector<std::string>&) {
             throw CLI::ValidationError(label,
                                        "not supported by aiperf-node; " + why);
           },
           "refused: " + why)
        ->expected(0, -1)
        ->type_name("")
        ->group(g);
  }
  // AIPerf's switches that turn a collection off: aiperf-node collects
  // neither, so their meaning holds as given.
  cmd.add_flag_function(
         "--no-server-metrics", [](std::int64_t) {},
         "Accepted: the server's /metrics is never scraped")
      ->group("Telemetry");
  cmd.add_flag_function(
         "--no-gpu-telemetry", [](std::int64_t) {},
         "Accepted: no GPU telemetry is collected")
      ->group("Telemetry");
}

} // namespace

void add_profile_options(CLI::App& cmd, profile_config& cfg) {
  // --- endpoint ---
  std::string g = "Endpoint";
  cmd.add_option("-m,--model-names,--model", cfg.model_names,
                 "Model name(s) to benchmark (required; comma list allowed)")
      ->delimiter(',')
      ->group(g);
  add_enum<model_selection_strategy>(
      cmd, "--model-selection-strategy", cfg.model_selection_strategy,
      "How requests pick one of several models; default round_robin")
      ->group(g);
  cmd.add_option("-u,--url", cfg.urls,
                 "Server URL, repeatable (round-robin); none = start the "
                 "built-in mock server on a free loopback port")
      ->group(g);
  add_enum<url_strategy>(cmd, "--url-strategy", cfg.url_strategy,
                         "How requests spread over several --url; "
                         "round_robin (AIPerf's only strategy)")
      ->group(g);
  add_enum<endpoint_type>(cmd, "--endpoint-type", cfg.endpoint_type,
                          "API flavour; default chat")
      ->group(g);
  add_optional(cmd, "--custom-endpoint,--endpoint", cfg.custom_endpoint,
               "Request path overriding the endpoint type's default "
               "(/v1/chat/completions, /v1/completions, /v1/embeddings)")
      ->group(g);
  cmd.add_flag("--streaming", cfg.streaming,
               "Stream responses (SSE); ignored for embeddings")
      ->group(g);
  add_optional(cmd, "--api-key", cfg.api_key,
               "Sent as 'Authorization: Bearer <key>'")
      ->group(g);
  cmd.add_option("-H,--header", cfg.cli.headers,
                 "Extra header 'Name:Value' (repeatable) or a JSON object")
      ->group(g);
  cmd.add_option(
         "--extra-inputs", cfg.cli.extra_inputs,
         "key:value pairs (values parsed as JSON when they are JSON) or "
         "a JSON object, merged into every request body")
      ->group(g);
  cmd.add_option("--request-timeout-seconds", cfg.request_timeout_seconds,
                 "Per-request timeout in seconds; default 21600")
      ->group(g);
  cmd.add_flag("--use-legacy-max-tokens", cfg.use_legacy_max_tokens,
               "Send max_tokens instead of max_completion_tokens")
      ->group(g);
  cmd.add_flag("--use-server-token-count", cfg.use_server_token_count,
               "Take token counts from the response 'usage' field (sets "
               "stream_options.include_usage when streaming)")
      ->group(g);
  add_optional(cmd, "--ca-file", cfg.ca_file,
               "PEM CA bundle to verify https servers")
      ->group(g);
  cmd.add_flag("--insecure", cfg.insecure, "Do not verify TLS certificates")
      ->group(g);

  // --- input ---
  g = "Input";
  add_optional(cmd, "--input-file", cfg.input_file, "JSONL dataset file")
      ->group(g);
  add_enum<custom_dataset_type>(cmd, "--custom-dataset-type",
                                cfg.custom_dataset_type,
                                "Format of --input-file; default detected "
                                "from its first record; traces imply "
                                "--fixed-schedule")
      ->group(g);
  cmd.add_flag("--fixed-schedule", cfg.fixed_schedule,
               "Replay the input file's timestamps")
      ->group(g);
  cmd.add_flag("--fixed-schedule-auto-offset", cfg.fixed_schedule_auto_offset,
               "Shift the schedule so the first timestamp is 0")
      ->group(g);
  add_integer(cmd, "--fixed-schedule-start-offset",
              "--fixed-schedule-start-offset", cfg.fixed_schedule_start_offset,
              "First timestamp (ms, inclusive) to replay")
      ->group(g);
  add_integer(cmd, "--fixed-schedule-end-offset", "--fixed-schedule-end-offset",
              cfg.fixed_schedule_end_offset,
              "Last timestamp (ms, inclusive) to replay")
      ->group(g);
  // CLI11 2.1 wraps "-1" into a huge unsigned value; parse the seed ourselves.
  cmd.add_option_function<std::string>(
         "--random-seed",
         [&cfg](const std::string& text) {
           std::uint64_t seed = 0;
           auto [ptr, ec]
               = std::from_chars(text.data(), text.data() + text.size(), seed);
           if (text.empty() || ec != std::errc{}
               || ptr != text.data() + text.size())
             throw CLI::ValidationError("--random-seed",
                                        "must be an integer in 0.."
                                        "18446744073709551615 (got '"
                                            + text + "')");
           cfg.random_seed = seed;
         },
         "Seed for synthetic data, sampling and delays")
      ->type_name("UINT")
      ->group(g);
  add_integer(cmd, "--num-dataset-entries,--num-prompts",
              "--num-dataset-entries", cfg.num_dataset_entries,
              "Distinct synthetic prompts; default 100")
      ->group(g);
  add_integer(cmd,
              "--isl,--synthetic-input-tokens-mean,"
              "--prompt-input-tokens-mean",
              "--isl", cfg.isl_mean,
              "Mean input tokens per prompt; default 550")
      ->group(g);
  cmd.add_option("--isl-stddev,--synthetic-input-tokens-stddev,"
                 "--prompt-input-tokens-stddev",
                 cfg.isl_stddev, "Stddev of input tokens; default 0")
      ->group(g);
  add_integer(cmd, "--osl,--output-tokens-mean,--prompt-output-tokens-mean",
              "--osl", cfg.osl_mean,
              "Mean max output tokens (sent as max_completion_tokens); "
              "default unset = server decides")
      ->group(g);
  cmd.add_option("--osl-stddev,--output-tokens-stddev,"
                 "--prompt-output-tokens-stddev",
                 cfg.osl_stddev, "Stddev of output tokens; default 0")
      ->group(g);
  add_integer(cmd, "--conversation-num,--num-conversations,--num-sessions",
              "--conversation-num", cfg.conversation_num,
              "Number of sessions (conversations)")
      ->group(g);
  add_integer(cmd, "--conversation-turn-mean,--session-turns-mean",
              "--conversation-turn-mean", cfg.conversation_turn_mean,
              "Mean turns per session; default 1")
      ->group(g);
  cmd.add_option("--conversation-turn-stddev,--session-turns-stddev",
                 cfg.conversation_turn_stddev,
                 "Stddev of turns per session; default 0")
      ->group(g);
  cmd.add_option("--conversation-turn-delay-mean,--session-turn-delay-mean",
                 cfg.conversation_turn_delay_mean,
                 "Mean think time between turns (ms); default 0")
      ->group(g);
  cmd.add_option("--conversation-turn-delay-stddev,--session-turn-delay-stddev",
                 cfg.conversation_turn_delay_stddev,
                 "Stddev of think time (ms); default 0")
      ->group(g);
  cmd.add_option("--conversation-turn-delay-ratio,--session-delay-ratio",
                 cfg.conversation_turn_delay_ratio,
                 "Multiplier on every turn delay; default 1.0")
      ->group(g);
  add_enum<prompt_corpus>(cmd, "--prompt-corpus", cfg.prompt_corpus,
                          "Corpus synthetic prompts are cut from, in the "
                          "tokenizer's tokens; default sonnet")
      ->group(g);
  cmd.add_option("--tokenizer", cfg.tokenizer,
                 "Tokenizer counting ISL/OSL: whitespace8, a tokenizer.json "
                 "path or directory, or a Hugging Face model id; default the "
                 "model name (whitespace8 for the built-in mock)")
      ->group(g);
  cmd.add_option("--tokenizer-revision", cfg.tokenizer_revision,
                 "Hugging Face revision (branch, tag or commit) of "
                 "--tokenizer; default main")
      ->group(g);

  // --- load generator ---
  g = "Load Generator";
  add_integer(cmd, "--concurrency", "--concurrency", cfg.concurrency,
              "Max sessions in flight; default 1 when no other stimulus")
      ->group(g);
  add_optional(cmd, "--request-rate", cfg.request_rate,
               "Target requests per second")
      ->group(g);
  add_enum<arrival_pattern>(cmd, "--request-rate-mode,--arrival-pattern",
                            cfg.arrival_pattern,
                            "Inter-arrival distribution for --request-rate; "
                            "default poisson")
      ->group(g);
  add_optional(cmd, "--vllm-burstiness,--arrival-smoothness",
               cfg.arrival_smoothness,
               "Gamma shape for --arrival-pattern gamma (1.0 = Poisson)")
      ->group(g);
  add_integer(cmd, "--num-requests,--request-count", "--request-count",
              cfg.request_count,
              "Requests to send; default max(10, 2·concurrency), or 10 "
              "with --request-rate alone; with --benchmark-duration the "
              "first reached ends the run")
      ->group(g);
  add_optional(cmd, "--benchmark-duration", cfg.benchmark_duration,
               "Seconds to send for; with --request-count the first "
               "reached ends the run")
      ->group(g);
  add_optional(cmd, "--benchmark-grace-period", cfg.benchmark_grace_period,
               "Seconds in-flight requests may finish after the duration "
               "(inf allowed); default 30")
      ->group(g);
  add_integer(cmd, "--num-warmup-requests,--warmup-request-count",
              "--warmup-request-count", cfg.warmup_request_count,
              "Warmup requests whose results are discarded; default 0")
      ->group(g);
  add_integer(cmd, "--prefill-concurrency", "--prefill-concurrency",
              cfg.prefill_concurrency,
              "Max requests awaiting their first token (needs --streaming)")
      ->group(g);
  add_optional(cmd, "--user-centric-rate", cfg.user_centric_rate,
               "Total qps over --num-users users (multi-turn KV-cache mode)")
      ->group(g);
  add_integer(cmd, "--num-users", "--num-users", cfg.num_users,
              "Simulated users for --user-centric-rate")
      ->group(g);
  cmd.add_option("--goodput", cfg.cli.goodput,
                 "SLOs \"tag:value ...\" in display units (ms, tokens/s)")
      ->group(g);
  add_optional(cmd, "--failed-request-threshold", cfg.failed_request_threshold,
               "Abort the run once failed/total profiling records exceeds "
               "this ratio in [0, 1] (0.05 = 5 %), judged from max("
               "concurrency, 10) records on; exit code 4")
      ->group(g);
  cmd.add_option("--request-cancellation-rate", cfg.request_cancellation_rate,
                 "Percent of requests to cancel after "
                 "--request-cancellation-delay (0-100; picked by "
                 "--random-seed); default 0")
      ->group(g);
  cmd.add_option("--request-cancellation-delay",
                 cfg.request_cancellation_delay,
                 "Seconds after sending a request chosen by "
                 "--request-cancellation-rate that it is cancelled; "
                 "default 0")
      ->group(g);

  // --- output ---
  g = "Output";
  cmd.add_option("--artifact-dir,--output-artifact-dir",
                 cfg.output_artifact_dir, "Artifact root; default artifacts")
      ->group(g);
  add_optional(cmd, "--profile-export-prefix,--profile-export-file",
               cfg.profile_export_prefix,
               "Export file names: P.json, P.csv, P.jsonl, P_raw.jsonl; "
               "default profile_export_aiperf.* / profile_export*.jsonl")
      ->group(g);
  add_enum<export_level>(
      cmd, "--export-level,--profile-export-level", cfg.export_level,
      "Per-request exports; default records", "--export-level")
      ->group(g);
  add_optional(cmd, "--slice-duration", cfg.slice_duration,
               "Also export metrics per window of this many seconds "
               "(profile_export_aiperf_timeslices.json/.csv)")
      ->group(g);
  add_enum<ui_type>(cmd, "--ui-type,--ui", cfg.ui,
                    "Progress display; default simple")
      ->group(g);
  cmd.add_option("--log-level", cfg.log_level,
                 "trace|debug|info|warning|error|critical|off; default info")
      ->transform([](std::string s) {
        for (auto& c : s)
          c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return s;
      })
      ->group(g);

  // -vv is -v twice to CLI11: the count is the level.
  cmd.add_flag_function(
         "-v,--verbose",
         [&cfg](std::int64_t n) {
           cfg.cli.verbosity = std::max(cfg.cli.verbosity, n >= 2 ? 2 : 1);
         },
         "--log-level debug (-vv: trace); wins over --log-level")
      ->group(g);
  cmd.add_flag_function(
         "--extra-verbose",
         [&cfg](std::int64_t) { cfg.cli.verbosity = 2; },
         "--log-level trace; wins over --log-level")
      ->group(g);

  // --- runtime ---
  g = "Runtime";
  add_optional(cmd, "--max-workers,--workers-max", cfg.workers_max,
               "Workers in total; default min(concurrency, 0.75·cores−1), "
               "cap 32")
      ->group(g);
  add_optional(cmd, "--record-processor-service-count,--record-processors",
               cfg.record_processors,
               "Record processors in total; default 1 per 4 workers")
      ->group(g);
  add_optional(cmd, "--io-threads", cfg.io_threads,
               "HTTP I/O threads; default 1 on ≤ 2 cores, else cores/2; at "
               "most 64 and 4 per core")
      ->group(g);
  add_enum<io_priority>(cmd, "--io-priority", cfg.io_priority,
                        "HTTP I/O thread priority: high = nice -10 (needs "
                        "CAP_SYS_NICE), so timestamps are taken on time on a "
                        "busy host; default auto (high only for rate, fixed-"
                        "schedule and user-centric runs)")
      ->group(g);
  add_enum<scheduler_policy>(cmd, "--scheduler-policy", cfg.scheduler_policy,
                             "Where actors run: io-thread = on the HTTP I/O "
                             "thread, sharing/stealing = CAF's own threads; "
                             "default auto (io-thread with one I/O thread, "
                             "else sharing)")
      ->group(g);
  add_optional(cmd, "--scheduler-threads", cfg.scheduler_threads,
               "CAF scheduler threads (sharing, stealing); default cores "
               "minus --io-threads (min 1)")
      ->group(g);
  cmd.add_option("--worker-pods", cfg.worker_pods,
                 "Worker pods (distributed runtime); default 1")
      ->group(g);
  add_optional(cmd, "--workers-per-pod", cfg.workers_per_pod,
               "Workers per pod; default --workers-max / --worker-pods")
      ->group(g);

  add_unsupported_options(cmd);
}

} // namespace aiperf::config
