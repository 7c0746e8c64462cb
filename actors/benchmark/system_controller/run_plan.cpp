#include "actors/benchmark/system_controller/run_plan.hpp"
#include "proto/redact.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <random>

namespace aiperf::system_controller {

std::string make_uuid() {
  std::random_device rd;
  std::uint64_t hi = (std::uint64_t{rd()} << 32) | rd();
  std::uint64_t lo = (std::uint64_t{rd()} << 32) | rd();
  hi = (hi & ~0xF000ULL) | 0x4000ULL;                  // version 4
  lo = (lo & ~(0xC0ULL << 56)) | (0x80ULL << 56);      // variant 10
  char buf[37];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xFFFF),
                static_cast<unsigned>(hi & 0xFFFF),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

namespace {

proto::endpoint_kind kind_of(config::endpoint_type t) {
  switch (t) {
    case config::endpoint_type::chat:
      return proto::endpoint_kind::chat;
    case config::endpoint_type::completions:
      return proto::endpoint_kind::completions;
    default:
      return proto::endpoint_kind::embeddings;
  }
}

std::string extra_inputs_json(const config::profile_config& cfg) {
  if (cfg.extra_inputs.empty())
    return {};
  std::string out = "{";
  for (auto& x : cfg.extra_inputs) {
    if (out.size() > 1)
      out += ',';
    out += '"';
    for (char c : x.key) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    out += "\":";
    out += x.json;
  }
  return out + "}";
}

dataset::input_file_type file_type_of(const config::profile_config& cfg) {
  switch (cfg.custom_dataset_type.value_or(
    config::custom_dataset_type::single_turn)) {
    case config::custom_dataset_type::multi_turn:
      return dataset::input_file_type::multi_turn;
    case config::custom_dataset_type::mooncake_trace:
      return dataset::input_file_type::mooncake_trace;
    default:
      return dataset::input_file_type::single_turn;
  }
}

} // namespace

run_plan make_run_plan(const config::profile_config& cfg, std::string run_id,
                       std::string input_config_json) {
  run_plan plan;
  plan.run_id = run_id;
  plan.artifact_dir = config::artifact_dir(cfg).string();
  auto seed = cfg.random_seed ? *cfg.random_seed
                              : std::uint64_t{std::random_device{}()};

  // Dataset.
  auto& ds = plan.dataset;
  ds.synthetic.num_conversations = static_cast<std::uint64_t>(
    cfg.conversation_num.value_or(cfg.num_dataset_entries));
  ds.synthetic.isl_mean = static_cast<double>(cfg.isl_mean);
  ds.synthetic.isl_stddev = cfg.isl_stddev;
  ds.synthetic.corpus = cfg.prompt_corpus == config::prompt_corpus::coding
                          ? dataset::prompt_corpus::coding
                          : dataset::prompt_corpus::sonnet;
  if (cfg.osl_mean)
    ds.synthetic.osl_mean = static_cast<double>(*cfg.osl_mean);
  ds.synthetic.osl_stddev = cfg.osl_stddev;
  ds.synthetic.turn_mean = static_cast<double>(cfg.conversation_turn_mean);
  ds.synthetic.turn_stddev = cfg.conversation_turn_stddev;
  ds.synthetic.turn_delay_mean_ms = cfg.conversation_turn_delay_mean;
  ds.synthetic.turn_delay_stddev_ms = cfg.conversation_turn_delay_stddev;
  ds.synthetic.turn_delay_ratio = cfg.conversation_turn_delay_ratio;
  ds.synthetic.random_seed = seed;
  ds.sampling_seed = seed;
  ds.input_file = cfg.input_file.value_or("");
  ds.file_type = file_type_of(cfg);
  ds.fixed_schedule = cfg.fixed_schedule;
  ds.schedule.auto_offset = cfg.fixed_schedule_auto_offset;
  ds.schedule.start_offset_ms = cfg.fixed_schedule_start_offset;
  ds.schedule.end_offset_ms = cfg.fixed_schedule_end_offset;
  ds.payload.endpoint = static_cast<dataset::endpoint_type>(
    kind_of(cfg.endpoint_type));
  ds.payload.model = cfg.model_names.empty() ? "" : cfg.model_names.front();
  ds.models.names = cfg.model_names;
  ds.models.strategy
    = cfg.model_selection_strategy == config::model_selection_strategy::random
        ? dataset::model_selection::random
        : dataset::model_selection::round_robin;
  ds.models.seed = seed;
  ds.payload.streaming = cfg.streaming;
  ds.payload.use_legacy_max_tokens = cfg.use_legacy_max_tokens;
  ds.payload.include_usage = cfg.include_usage;
  ds.payload.extra_inputs_json = extra_inputs_json(cfg);
  ds.inputs_json_path = plan.artifact_dir + "/inputs.json";

  // Timing.
  auto& t = plan.timing;
  if (cfg.user_centric_rate)
    t.mode = proto::timing_mode::user_centric;
  else if (cfg.fixed_schedule)
    t.mode = proto::timing_mode::fixed_schedule;
  else if (cfg.request_rate)
    t.mode = proto::timing_mode::request_rate;
  else
    t.mode = proto::timing_mode::concurrency;
  t.concurrency = static_cast<std::uint32_t>(cfg.concurrency.value_or(0));
  t.prefill_concurrency
    = static_cast<std::uint32_t>(cfg.prefill_concurrency.value_or(0));
  t.request_rate = cfg.request_rate.value_or(0);
  t.pattern = static_cast<proto::arrival_pattern>(cfg.arrival_pattern);
  t.smoothness = cfg.arrival_smoothness.value_or(1.0);
  t.random_seed = seed;
  t.warmup_request_count
    = static_cast<std::uint64_t>(cfg.warmup_request_count);
  t.request_count = static_cast<std::uint64_t>(cfg.request_count.value_or(0));
  t.duration_ns = cfg.benchmark_duration
                    ? static_cast<std::int64_t>(*cfg.benchmark_duration * 1e9)
                    : 0;
  // The grace period bounds duration runs only; a counted run waits for
  // every request (each has --request-timeout-seconds).
  auto grace = cfg.benchmark_grace_period.value_or(30.0);
  t.grace_ns = !cfg.benchmark_duration || std::isinf(grace)
                 ? -1
                 : static_cast<std::int64_t>(grace * 1e9);
  t.num_users = static_cast<std::uint32_t>(cfg.num_users.value_or(0));
  t.user_centric_rate = cfg.user_centric_rate.value_or(0);
  t.num_urls = static_cast<std::uint32_t>(std::max<std::size_t>(1, cfg.urls.size()));

  // Workers.
  auto& w = plan.worker;
  w.run_id = run_id.substr(0, 8);
  w.urls = cfg.urls;
  w.endpoint_path = config::endpoint_path(cfg);
  w.endpoint = kind_of(cfg.endpoint_type);
  w.model = ds.payload.model;
  w.streaming = cfg.streaming;
  w.include_usage = cfg.include_usage;
  w.use_legacy_max_tokens = cfg.use_legacy_max_tokens;
  w.extra_inputs_json = ds.payload.extra_inputs_json;
  if (cfg.api_key)
    w.headers.push_back("Authorization: Bearer " + *cfg.api_key);
  for (auto& h : cfg.headers)
    w.headers.push_back(h.name + ": " + h.value);
  w.timeout_ms = static_cast<std::int64_t>(cfg.request_timeout_seconds * 1e3);
  w.export_raw = cfg.export_level == config::export_level::raw;
  w.notify_first_token = t.prefill_concurrency > 0;
  w.cancel_share = cfg.request_cancellation_rate / 100.0;
  w.cancel_delay_ns
    = static_cast<std::int64_t>(cfg.request_cancellation_delay * 1e9);
  w.cancel_seed = seed;
  plan.num_workers = static_cast<std::uint32_t>(cfg.workers_max.value_or(1));
  plan.num_processors
    = static_cast<std::uint32_t>(cfg.record_processors.value_or(1));

  // Metrics and records.
  auto& opts = plan.processor.options;
  opts.streaming = cfg.streaming;
  opts.produces_tokens = cfg.endpoint_type != config::endpoint_type::embeddings;
  opts.use_server_token_count = cfg.use_server_token_count;
  for (auto& g : cfg.goodput)
    opts.goodput.push_back({g.tag, g.value});
  opts.coordinated_omission = t.mode != proto::timing_mode::concurrency;
  if (cfg.request_rate)
    opts.target_request_rate = *cfg.request_rate;
  // A load to keep only when nothing but the client leaves a slot idle:
  // no prefill limit and no think time between turns (synthetic turn delays,
  // or an input file, whose turns may carry them).
  if (t.mode == proto::timing_mode::concurrency && t.concurrency > 0
      && t.prefill_concurrency == 0 && cfg.conversation_turn_delay_mean == 0
      && !cfg.input_file)
    opts.target_concurrency = t.concurrency;
  auto& rec = plan.records;
  rec.artifact_dir = plan.artifact_dir;
  rec.export_prefix = cfg.profile_export_prefix.value_or("");
  rec.level = static_cast<records_manager::export_level>(cfg.export_level);
  rec.options = opts;
  if (cfg.slice_duration)
    rec.slice_ns = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::llround(*cfg.slice_duration * 1e9)));
  rec.input_config_json = std::move(input_config_json);
  rec.benchmark_id = std::move(run_id);
  plan.failed_request_threshold = cfg.failed_request_threshold.value_or(-1);
  rec.failed_request_threshold = plan.failed_request_threshold;
  // AIPerf's grace floor: max(concurrency, 10), concurrency 1 when unset.
  rec.failed_request_floor = static_cast<std::uint64_t>(
    std::max<std::int64_t>(cfg.concurrency.value_or(1), 10));
  plan.unreachable_timeout_ms = unreachable_timeout_ms(
    std::getenv("AIPERF_UNREACHABLE_TIMEOUT_MS"));
  // For messages only: the credentials of a URL never reach a log line.
  for (auto& u : cfg.urls)
    plan.urls += (plan.urls.empty() ? "" : ", ") + proto::redact_url(u);
  plan.show_progress = cfg.ui == config::ui_type::simple;
  bool think_time = cfg.conversation_turn_delay_mean > 0 || cfg.input_file.has_value()
                    || t.mode == proto::timing_mode::user_centric;
  plan.timeouts.run = longest_run(t, w.timeout_ms, think_time);
  return plan;
}

std::int64_t unreachable_timeout_ms(const char* env) noexcept {
  constexpr std::int64_t fallback = 10'000;
  if (env == nullptr || *env == '\0')
    return fallback;
  std::int64_t v = 0;
  auto* end = env + std::strlen(env);
  auto [p, ec] = std::from_chars(env, end, v);
  return ec == std::errc{} && p == end && v >= 0 ? v : fallback;
}

std::chrono::milliseconds longest_run(const proto::timing_config& t, std::int64_t timeout_ms,
                                      bool has_think_time) {
  using std::chrono::milliseconds;
  constexpr double margin_ms = 10 * 60 * 1e3;
  constexpr double day_ms = 24 * 3600 * 1e3;
  double parallel = t.concurrency > 0 ? t.concurrency : 1.0;
  auto counted = [&](double requests) {
    double sending = t.request_rate > 0 ? requests / t.request_rate * 1e3 : 0.0;
    return std::ceil(requests / parallel) * static_cast<double>(timeout_ms) + sending;
  };
  double ms = counted(static_cast<double>(t.warmup_request_count));
  if (t.duration_ns > 0)
    ms += static_cast<double>(t.duration_ns) / 1e6
          + (t.grace_ns >= 0 ? static_cast<double>(t.grace_ns) / 1e6
                             : static_cast<double>(timeout_ms));
  else
    ms += counted(static_cast<double>(t.request_count));
  if (has_think_time || t.mode == proto::timing_mode::fixed_schedule)
    ms += day_ms;
  ms += margin_ms;
  // Far beyond any run, and still representable in a caf::duration.
  constexpr double cap_ms = 365 * day_ms;
  return milliseconds{static_cast<std::int64_t>(std::min(ms, cap_ms))};
}

} // namespace aiperf::system_controller
