// The configuration of one `aiperf-node profile` run: every AIPerf flag we
// re-implement, with AIPerf's names and defaults (its docs/cli_options.md),
// plus the runtime knobs of our own (CAF scheduler, I/O threads, worker pods).
//
// Life cycle: add_profile_options() (profile_cli.hpp) fills the struct from
// the command line, finalize() applies AIPerf's derived defaults and rejects
// anything invalid, then the struct travels as JSON (profile_json.hpp) into
// the export's `input_config` block and to other processes.
//
// Fields left unset (std::nullopt) after finalize() mean "not limited" or
// "not used"; each field's comment says which.
#pragma once

#include "proto/error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace aiperf::config {

// -- errors -------------------------------------------------------------------

/// Why a configuration was refused. The error's message is the line the CLI
/// prints after "error: ", the flag the user has to change followed by what
/// is wrong and how to fix it ("--concurrency: must be ≥ 1 (got 0)"); the
/// flag (or, for a serialized config, the JSON path) follows as a string
/// payload, read with error_flag().
enum class errc : std::uint8_t {
  invalid = 1, // a flag's value or a JSON field is malformed or out of range
  missing,     // a required flag is absent
  conflict,    // flags that exclude or need each other, or do not add up
  unreadable,  // a file a flag names is missing or cannot be read
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::config

AIPERF_ERROR_ENUM(aiperf::config::errc, "config")

namespace aiperf::config {

/// Makes the error of `code` for `flag`: message "<flag>: <message>" (just
/// `message` when `flag` is empty), then `flag` as a string payload.
[[nodiscard]] caf::error flag_error(errc code, std::string_view flag,
                                    std::string_view message);

/// The flag or JSON path `err` names ("--concurrency",
/// "input_config.loadgen.concurrency"), or "" when it names none. The view
/// lives as long as `err` is not modified.
[[nodiscard]] std::string_view error_flag(const caf::error& err);

// -- enumerations -------------------------------------------------------------

/// API flavour of the server; selects the payload format and default path.
enum class endpoint_type : std::uint8_t { chat, completions, embeddings };

/// How multiple `--model` names are assigned to requests.
enum class model_selection_strategy : std::uint8_t { round_robin, random };

/// Inter-arrival distribution for `--request-rate`.
enum class arrival_pattern : std::uint8_t { constant, poisson, gamma };

/// Format of `--input-file` (JSONL).
enum class custom_dataset_type : std::uint8_t {
  single_turn,
  multi_turn,
  mooncake_trace,
};

/// Which per-request files are written (summary < records < raw).
enum class export_level : std::uint8_t { summary, records, raw };

/// Console progress display.
enum class ui_type : std::uint8_t { simple, none };

/// CAF scheduler policy: where the actors run.
/// `automatic`: io_thread in a process with one HTTP I/O thread (the actors
/// run on it), else sharing.
enum class scheduler_policy : std::uint8_t {
  automatic,
  io_thread,
  sharing,
  stealing
};

/// Scheduling priority of the HTTP I/O threads, which take every timestamp.
/// `automatic` ("auto") raises it for runs that keep a send schedule (request
/// rate, fixed schedule, user-centric) and leaves it for closed loops, where a
/// raised client would take CPU from a server on the same host.
enum class io_priority : std::uint8_t { automatic, normal, high };

/// `--prompt-corpus`: the text synthetic prompts are cut from
/// (actors/benchmark/dataset/prompt_corpus.hpp).
enum class prompt_corpus : std::uint8_t { sonnet, coding };

/// `--url-strategy`: how requests spread over several `--url` values;
/// round_robin is AIPerf's only strategy.
enum class url_strategy : std::uint8_t { round_robin };

/// Returns the flag spelling of `x` ("chat", "mooncake_trace", ...).
[[nodiscard]] std::string_view to_string(endpoint_type x) noexcept;
[[nodiscard]] std::string_view to_string(model_selection_strategy x) noexcept;
[[nodiscard]] std::string_view to_string(arrival_pattern x) noexcept;
[[nodiscard]] std::string_view to_string(custom_dataset_type x) noexcept;
[[nodiscard]] std::string_view to_string(export_level x) noexcept;
[[nodiscard]] std::string_view to_string(ui_type x) noexcept;
[[nodiscard]] std::string_view to_string(scheduler_policy x) noexcept;
[[nodiscard]] std::string_view to_string(io_priority x) noexcept;
[[nodiscard]] std::string_view to_string(prompt_corpus x) noexcept;
[[nodiscard]] std::string_view to_string(url_strategy x) noexcept;

/// Parses the flag spelling of an enum; std::nullopt for anything else.
template <class Enum>
[[nodiscard]] std::optional<Enum> enum_from_string(std::string_view text);

/// Returns the accepted spellings of `Enum` joined by '|' (for messages).
template <class Enum> [[nodiscard]] std::string enum_choices();

// -- value types --------------------------------------------------------------

/// One extra HTTP header sent with every request.
struct http_header {
  std::string name;
  std::string value;
  bool operator==(const http_header&) const = default;
};

/// One `--extra-inputs` entry merged into every request body.
struct extra_input {
  std::string key;
  /// The value as compact JSON text (`true`, `5`, `"text"`, `{"a":1}`), so
  /// the payload builder can splice it in without re-parsing.
  std::string json;
  bool operator==(const extra_input&) const = default;
};

/// One `--goodput` service-level objective.
struct goodput_slo {
  /// Metric tag, e.g. "request_latency" (see goodput_tags()).
  std::string tag;
  /// Threshold in the metric's display unit: ms for latencies, tokens/s for
  /// throughputs, tokens for sequence lengths.
  double value = 0;
  bool operator==(const goodput_slo&) const = default;
};

/// A `--url` split into its parts.
struct parsed_url {
  std::string scheme; ///< "http" or "https".
  std::string host;   ///< Without brackets for IPv6 literals.
  std::uint16_t port = 0;
  std::string path; ///< "" or "/prefix" (never ends with '/').
  bool operator==(const parsed_url&) const = default;
};

// -- the configuration --------------------------------------------------------

/// Every setting of `aiperf-node profile`. Defaults are AIPerf's unless a
/// comment says otherwise; "derived" means finalize() fills it in.
struct profile_config {
  // --- endpoint ---
  /// `-m/--model/--model-names` (required; comma lists allowed).
  std::vector<std::string> model_names;
  /// `--model-selection-strategy`; default round_robin.
  config::model_selection_strategy model_selection_strategy
      = model_selection_strategy::round_robin;
  /// `-u/--url`, repeatable; requests go round-robin over them. Empty = no
  /// URL given: `profile` starts the built-in mock server on a free loopback
  /// port and puts its URL here. finalize() normalizes to
  /// `scheme://host:port[/path]` (AIPerf's bare `localhost:8000` → http).
  std::vector<std::string> urls;
  /// `--url-strategy`; default round_robin (credit i goes to URL i mod n).
  config::url_strategy url_strategy = url_strategy::round_robin;
  /// `--endpoint-type`; default chat.
  config::endpoint_type endpoint_type = endpoint_type::chat;
  /// `--endpoint/--custom-endpoint`: overrides the path of endpoint_type
  /// (see endpoint_path()).
  std::optional<std::string> custom_endpoint;
  /// `--streaming`; default off. finalize() turns it off for embeddings,
  /// which cannot stream (AIPerf does the same).
  bool streaming = false;
  /// `--api-key`: sent as `Authorization: Bearer <key>`. Secret.
  std::optional<std::string> api_key;
  /// `-H/--header Name:Value` (repeatable, or a JSON object). Values are
  /// secret (tokens often travel here).
  std::vector<http_header> headers;
  /// `--extra-inputs key:value ...` or a JSON object; merged into every body.
  std::vector<extra_input> extra_inputs;
  /// `--request-timeout-seconds`; default 21600 (6 h, AIPerf's "match vLLM").
  double request_timeout_seconds = 21600.0;
  /// `--use-legacy-max-tokens`: send `max_tokens` instead of
  /// `max_completion_tokens`; default off.
  bool use_legacy_max_tokens = false;
  /// `--use-server-token-count`: take ISL/OSL from the `usage` field;
  /// default off.
  bool use_server_token_count = false;
  /// Derived: send `stream_options.include_usage=true` (streaming with
  /// server token counts, else the server sends no usage).
  bool include_usage = false;
  /// `--ca-file`: PEM bundle to verify https servers; default system store.
  std::optional<std::string> ca_file;
  /// `--insecure`: skip TLS certificate verification; default off.
  bool insecure = false;

  // --- input / dataset ---
  /// `--input-file` (JSONL); unset = synthetic prompts.
  std::optional<std::string> input_file;
  /// `--custom-dataset-type`; derived from the file's first record when
  /// omitted (`turns` → multi_turn, `input_length`/`hash_ids` →
  /// mooncake_trace, else single_turn).
  std::optional<config::custom_dataset_type> custom_dataset_type;
  /// `--fixed-schedule`: replay the file's timestamps; derived true for
  /// trace dataset types.
  bool fixed_schedule = false;
  /// `--fixed-schedule-auto-offset`: shift timestamps so the first is 0.
  bool fixed_schedule_auto_offset = false;
  /// `--fixed-schedule-start-offset` (ms, inclusive); unset = from start.
  std::optional<std::int64_t> fixed_schedule_start_offset;
  /// `--fixed-schedule-end-offset` (ms, inclusive); unset = to the end.
  std::optional<std::int64_t> fixed_schedule_end_offset;
  /// `--random-seed`; unset = non-deterministic synthetic data and delays.
  std::optional<std::uint64_t> random_seed;
  /// `--num-dataset-entries/--num-prompts`; default 100 distinct prompts.
  std::int64_t num_dataset_entries = 100;
  /// `--isl/--synthetic-input-tokens-mean/--prompt-input-tokens-mean`;
  /// default 550.
  std::int64_t isl_mean = 550;
  /// `--isl-stddev/--synthetic-input-tokens-stddev`; default 0 (fixed).
  double isl_stddev = 0.0;
  /// `--prompt-corpus`; default sonnet, as in AIPerf.
  config::prompt_corpus prompt_corpus = config::prompt_corpus::sonnet;
  /// `--osl/--output-tokens-mean/--prompt-output-tokens-mean`; unset = no
  /// max tokens sent (the server decides).
  std::optional<std::int64_t> osl_mean;
  /// `--osl-stddev/--output-tokens-stddev`; default 0 (fixed).
  double osl_stddev = 0.0;
  /// `--conversation-num/--num-conversations/--num-sessions`; unset = as
  /// many sessions as the stop condition needs.
  std::optional<std::int64_t> conversation_num;
  /// `--conversation-turn-mean/--session-turns-mean`; default 1 (single
  /// turn).
  std::int64_t conversation_turn_mean = 1;
  /// `--conversation-turn-stddev/--session-turns-stddev`; default 0.
  double conversation_turn_stddev = 0.0;
  /// `--conversation-turn-delay-mean` (ms of think time between turns);
  /// default 0.
  double conversation_turn_delay_mean = 0.0;
  /// `--conversation-turn-delay-stddev` (ms); default 0.
  double conversation_turn_delay_stddev = 0.0;
  /// `--conversation-turn-delay-ratio`: multiplier on every delay; default 1.
  double conversation_turn_delay_ratio = 1.0;

  // --- load generator ---
  /// `--concurrency`: max sessions in flight. Derived 1 when no other
  /// stimulus (rate, fixed schedule, user-centric) is given; unset = no cap.
  std::optional<std::int64_t> concurrency;
  /// `--request-rate` (requests/s); unset = closed loop at concurrency.
  std::optional<double> request_rate;
  /// `--arrival-pattern/--request-rate-mode`; default poisson.
  config::arrival_pattern arrival_pattern = arrival_pattern::poisson;
  /// `--arrival-smoothness/--vllm-burstiness`: gamma shape (1 = Poisson);
  /// only with the gamma pattern; unset = 1.
  std::optional<double> arrival_smoothness;
  /// `--request-count/--num-requests`. Derived when no other stop condition
  /// is given: max(10, 2·concurrency), or 10 with `--request-rate` alone
  /// (max(10, 2·num_users) in user-centric mode). Unset = stop on
  /// benchmark_duration, conversation_num or the end of a fixed schedule.
  /// With benchmark_duration too, whichever is reached first stops the
  /// sending (AIPerf).
  std::optional<std::int64_t> request_count;
  /// `--benchmark-duration` (s); unset = stop on a count.
  std::optional<double> benchmark_duration;
  /// `--benchmark-grace-period` (s; may be infinity): how long in-flight
  /// requests may finish after the duration. Derived 30 with a duration.
  std::optional<double> benchmark_grace_period;
  /// `--warmup-request-count/--num-warmup-requests`; default 0 (no warmup).
  std::int64_t warmup_request_count = 0;
  /// `--prefill-concurrency`: max requests awaiting their first token;
  /// needs streaming; unset = no cap.
  std::optional<std::int64_t> prefill_concurrency;
  /// `--user-centric-rate` (qps over all users; KV-cache mode).
  std::optional<double> user_centric_rate;
  /// `--num-users`: simulated users for user-centric mode.
  std::optional<std::int64_t> num_users;
  /// `--goodput "tag:value ..."`; empty = no goodput metrics.
  std::vector<goodput_slo> goodput;
  /// `--failed-request-threshold`: a ratio in [0, 1] (AIPerf's unit, 0.05 =
  /// 5 %). Once max(concurrency, 10) profiling records arrived, a record
  /// that makes failed/total exceed it aborts the run (exit code 4, the
  /// results so far exported); unset = never abort.
  std::optional<double> failed_request_threshold;
  /// `--request-cancellation-rate` (%, [0, 100]): the share of requests the
  /// client cancels `request_cancellation_delay` seconds after sending them
  /// (code 499 error records, so out of the latency statistics, as in
  /// AIPerf); which ones follows from --random-seed
  /// (actors/benchmark/timing/cancellation.hpp). 0 = none.
  double request_cancellation_rate = 0;
  /// `--request-cancellation-delay` (s, ≥ 0); default 0: cancelled as soon
  /// as sent.
  double request_cancellation_delay = 0;

  // --- tokenizer ---
  /// `--tokenizer` (runtime/tokenizer/resolve.hpp): whitespace8, a
  /// tokenizer.json, a directory or a Hugging Face id. "" = the default
  /// (effective_tokenizer).
  std::string tokenizer;
  /// `--tokenizer-revision`: the Hugging Face revision (branch, tag, commit).
  std::string tokenizer_revision = "main";

  // --- output / UI ---
  /// `--output-artifact-dir/--artifact-dir`; default "artifacts".
  std::string output_artifact_dir = "artifacts";
  /// `--profile-export-prefix/--profile-export-file`: P names the exports
  /// P.json, P.csv, P.jsonl, P_raw.jsonl, P_timeslices.* in the run folder
  /// (a trailing export suffix dropped first, as AIPerf); unset = AIPerf's
  /// profile_export_aiperf.* and profile_export*.jsonl.
  std::optional<std::string> profile_export_prefix;
  /// `--export-level`; default records.
  config::export_level export_level = export_level::records;
  /// `--slice-duration` (s, > 0); set = also export per-window metrics
  /// (profile_export_aiperf_timeslices.json/.csv).
  std::optional<double> slice_duration;
  /// `--ui/--ui-type`; default simple (the CLI switches to none when stdout
  /// is not a terminal). AIPerf's TUI dashboard is not implemented.
  config::ui_type ui = ui_type::simple;
  /// `--log-level` (trace|debug|info|warning|error|critical|off); default
  /// info.
  std::string log_level = "info";

  // --- processes and threads ---
  /// `--workers-max/--max-workers` (total over all pods). Derived:
  /// min(concurrency, max(1, int(cores·0.75) − 1)) capped at 32, rounded up
  /// to a multiple of worker_pods.
  std::optional<int> workers_max;
  /// `--record-processors/--record-processor-service-count` (total).
  /// Derived: max(1, workers_per_pod / 4) per pod.
  std::optional<int> record_processors;
  /// `--io-threads`: HTTP I/O threads. Derived 1 on ≤ 2 cores, else cores/2.
  std::optional<int> io_threads;
  /// `--io-priority` (auto|normal|high); see io_priority.
  config::io_priority io_priority = io_priority::automatic;
  /// `--scheduler-policy` (auto|io-thread|sharing|stealing); default auto.
  config::scheduler_policy scheduler_policy = scheduler_policy::automatic;
  /// `--scheduler-threads`: CAF worker threads. Derived: cores minus I/O
  /// threads, at least 1.
  std::optional<int> scheduler_threads;
  /// `--worker-pods` (distributed runtime); default 1 (everything local).
  int worker_pods = 1;
  /// `--workers-per-pod`; derived workers_max / worker_pods.
  std::optional<int> workers_per_pod;

  /// Raw command-line text that finalize() parses into headers,
  /// extra_inputs and goodput (then clears, so finalize() is idempotent).
  /// Not serialized.
  struct cli_text {
    std::vector<std::string> headers;
    std::vector<std::string> extra_inputs;
    std::vector<std::string> goodput;
    /// `-v/--verbose` (1: log_level debug) and `-vv/--extra-verbose` (2:
    /// trace); AIPerf lets them win over `--log-level`.
    int verbosity = 0;
    bool operator==(const cli_text&) const = default;
  } cli;

  bool operator==(const profile_config&) const = default;
};

// -- limits -------------------------------------------------------------------
// Values no run can satisfy are refused at validation (docs/profile.md,
// "Limits"), before anything is allocated or started.

/// Lowest `--request-rate`/`--user-centric-rate`: one request per ~11.6 days.
/// Below it the first gap overflows the nanosecond clock.
inline constexpr double min_request_rate = 1e-6;
/// Highest `--request-timeout-seconds` and `--benchmark-duration` (~115
/// days): nanoseconds from now stay far inside int64.
inline constexpr double max_seconds = 1e7;
/// Highest `--isl`/`--osl` and mooncake `input_length`/`output_length`:
/// every synthetic prompt is built in memory (~6 bytes per token).
inline constexpr std::int64_t max_sequence_tokens = 1'000'000;
/// Most prompt tokens a synthetic dataset may hold: prompts × turns ×
/// `--isl` (~6 GB of text, built before the first send).
inline constexpr double max_synthetic_tokens = 1e9;
/// Most requests one run may plan: `--request-count`,
/// `--warmup-request-count`, and rate × `--benchmark-duration`. Every
/// request keeps its record and metric values in memory until the export.
inline constexpr std::int64_t max_planned_requests = 100'000'000;
/// Most `--io-threads` (also at most 4 per core).
inline constexpr int max_io_threads = 64;
/// Open files kept free for everything but connections (logs, exports,
/// pipes, epoll): `--concurrency` may use the hard RLIMIT_NOFILE minus this.
inline constexpr std::uint64_t reserved_open_files = 256;

// -- derivation and validation ------------------------------------------------

/// Returns the number of hardware threads (at least 1).
[[nodiscard]] unsigned detected_cores() noexcept;

/// Moves the raw `cfg.cli` text into parsed fields: --header, --extra-inputs
/// (a later key wins), --goodput, and -v/-vv over --log-level; then clears
/// `cfg.cli`. The first step of finalize(); errors name the flag.
[[nodiscard]] caf::expected<void> consume_cli_text(profile_config& cfg);

/// Applies AIPerf's derived defaults (see each field), reads `--input-file`
/// and `--ca-file` to check them, and validates everything. Returns the first
/// problem found; on error `cfg` may be partly derived and must not be used.
/// `cores` feeds the worker/thread defaults (a parameter so tests can pin it).
/// Idempotent: finalizing a finalized config changes nothing.
[[nodiscard]] caf::expected<void> finalize(profile_config& cfg,
                                           unsigned cores = detected_cores());

/// Where the files `--input-file` and `--ca-file` name are: on this machine
/// (finalize reads and checks them), or only inside the pods of a kube run
/// (a mounted path): then they are not read here, and the dataset type,
/// which finalize would take from the file, must be given.
struct file_site {
  bool input_file_here = true;
  bool ca_file_here = true;
};

/// finalize() for a run whose files may live elsewhere (`site`); an input
/// file elsewhere without --custom-dataset-type is an error naming both.
[[nodiscard]] caf::expected<void> finalize(profile_config& cfg, file_site site,
                                           unsigned cores = detected_cores());

/// Checks ranges and combinations without touching the file system (used by
/// finalize() and from_json()). Unset derived fields are accepted.
[[nodiscard]] caf::expected<void> validate(const profile_config& cfg);

// -- parsers for flag values --------------------------------------------------

/// Parses `Name:Value` (whitespace around Value trimmed) or a JSON object of
/// string values into headers; errors name `-H/--header`.
[[nodiscard]] caf::expected<std::vector<http_header>>
parse_headers(std::string_view text);

/// Parses `key:value` (value kept as JSON when it is valid JSON — numbers,
/// true/false/null, objects, arrays, quoted strings — else as a string) or a
/// JSON object; errors name `--extra-inputs`.
[[nodiscard]] caf::expected<std::vector<extra_input>>
parse_extra_inputs(std::string_view text);

/// Parses whitespace-separated `tag:value` pairs; checks tags and values but
/// not applicability (see validate()). Errors name `--goodput`.
[[nodiscard]] caf::expected<std::vector<goodput_slo>>
parse_goodput(std::string_view text);

/// Parses `[http[s]://]host[:port][/path]`; a missing scheme means http and
/// a missing port the scheme's default. Errors name `--url`.
[[nodiscard]] caf::expected<parsed_url> parse_url(std::string_view text);

/// Returns `url` as `scheme://host:port[/path]` (IPv6 hosts in brackets).
[[nodiscard]] std::string to_string(const parsed_url& url);

/// The metric tags `--goodput` accepts.
[[nodiscard]] const std::vector<std::string_view>& goodput_tags();

/// Returns whether goodput tag `tag` has values for this endpoint type and
/// streaming mode (e.g. time_to_first_token needs streaming).
[[nodiscard]] bool goodput_tag_applies(std::string_view tag, endpoint_type type,
                                       bool streaming);

// -- naming -------------------------------------------------------------------

/// Returns the default path of `type`: chat `/v1/chat/completions`,
/// completions `/v1/completions`, embeddings `/v1/embeddings`.
[[nodiscard]] std::string_view default_endpoint_path(endpoint_type type);

/// Returns the request path: `--endpoint` if given, else the type's default.
[[nodiscard]] std::string endpoint_path(const profile_config& cfg);

/// Returns whether `profile` must start the built-in mock server (no --url).
[[nodiscard]] inline bool uses_mock_server(const profile_config& cfg) {
  return cfg.urls.empty();
}

/// The tokenizer name a run counts with: `--tokenizer` if given, else
/// whitespace8 for the built-in mock (no --url) or the mock's placeholder
/// model names (`mock-model`), else the first model name (AIPerf).
[[nodiscard]] std::string effective_tokenizer(const profile_config& cfg);

/// Returns AIPerf's run directory name
/// `<model('/'→'_')>-openai-<endpoint_type>-<stimulus>`, stimulus being
/// `concurrency10`, `request_rate5.0`, `concurrency10-request_rate5.0`,
/// `fixed_schedule` or `user_centric-users15-qps1.0`. Several models use
/// the first with a `_multi` suffix. Expects a finalized config.
[[nodiscard]] std::string run_name(const profile_config& cfg);

/// Returns `<output_artifact_dir>/<run_name>`.
[[nodiscard]] std::filesystem::path artifact_dir(const profile_config& cfg);

/// Formats `x` like Python's repr(float) ("5.0", "0.25", "1e+16"), which is
/// how AIPerf spells rates in names.
[[nodiscard]] std::string python_float(double x);

} // namespace aiperf::config
