#include "config/profile/profile_cli.hpp"

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <system_error>

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

// Enum flags reject unknown spellings while parsing, listing the choices.
template <class Enum, class Target>
CLI::Option* add_enum(CLI::App& cmd, const std::string& names, Target& target,
                      const std::string& help) {
  auto flag = names.substr(names.rfind(',') + 1);
  auto* opt = cmd.add_option_function<std::string>(
      names,
      [&target, flag](const std::string& text) {
        auto value = enum_from_string<Enum>(text);
        if (!value)
          throw CLI::ValidationError(flag, "'" + text + "' is not one of "
                                               + enum_choices<Enum>());
        target = *value;
      },
      help + " (" + enum_choices<Enum>() + ")");
  opt->type_name("ENUM");
  return opt;
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
  cmd.add_option("--conversation-turn-stddev", cfg.conversation_turn_stddev,
                 "Stddev of turns per session; default 0")
      ->group(g);
  cmd.add_option("--conversation-turn-delay-mean",
                 cfg.conversation_turn_delay_mean,
                 "Mean think time between turns (ms); default 0")
      ->group(g);
  cmd.add_option("--conversation-turn-delay-stddev",
                 cfg.conversation_turn_delay_stddev,
                 "Stddev of think time (ms); default 0")
      ->group(g);
  cmd.add_option("--conversation-turn-delay-ratio",
                 cfg.conversation_turn_delay_ratio,
                 "Multiplier on every turn delay; default 1.0")
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
              "with --request-rate alone")
      ->group(g);
  add_optional(cmd, "--benchmark-duration", cfg.benchmark_duration,
               "Run for this many seconds instead of a request count")
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
               "Abort when this percentage of requests failed")
      ->group(g);

  // --- output ---
  g = "Output";
  cmd.add_option("--artifact-dir,--output-artifact-dir",
                 cfg.output_artifact_dir, "Artifact root; default artifacts")
      ->group(g);
  add_enum<export_level>(cmd, "--export-level", cfg.export_level,
                         "Per-request exports; default records")
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
}

} // namespace aiperf::config
