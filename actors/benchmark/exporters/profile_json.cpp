#include "actors/benchmark/exporters/exporters.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string_view>

namespace aiperf::exporters {

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

// JSON keys of the percentiles, in the order of stats::percentile_levels.
constexpr std::array<std::string_view, stats::percentile_levels.size()>
    pct_keys{"p1",  "p5",  "p10", "p25", "p50",
             "p75", "p90", "p95", "p99", "p99_9"};

void key(json_writer& w, std::string_view k) {
  w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
}

void str(json_writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void write_metric(json_writer& w, const metrics::metric_result& m) {
  key(w, m.tag());
  w.StartObject();
  key(w, "unit");
  str(w, m.info->unit);
  if (m.stats) {
    const auto& s = *m.stats;
    key(w, "avg");
    w.Double(s.avg);
    for (std::size_t i = 0; i < pct_keys.size(); ++i) {
      key(w, pct_keys[i]);
      w.Double(s.pct[i]);
    }
    key(w, "min");
    w.Double(s.min);
    key(w, "max");
    w.Double(s.max);
    key(w, "std");
    w.Double(s.std);
    key(w, "count");
    w.Uint64(s.count);
    key(w, "sum");
    w.Double(s.sum);
  } else {
    key(w, "avg");
    if (m.info->has(metrics::flag::integer))
      w.Int64(static_cast<std::int64_t>(m.value));
    else
      w.Double(m.value);
  }
  w.EndObject();
}

} // namespace

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::bad_input_config:
      return "bad_input_config";
    case errc::bad_export:
      return "bad_export";
  }
  return "unknown";
}

std::string iso8601(std::int64_t epoch_ns) {
  auto secs = static_cast<std::time_t>(epoch_ns / 1'000'000'000);
  auto micros = (epoch_ns % 1'000'000'000) / 1000;
  if (micros < 0) {
    micros += 1'000'000;
    --secs;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  auto n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof(buf) - n, ".%06lld+00:00",
                static_cast<long long>(micros));
  return buf;
}

caf::expected<std::string>
render_profile_json(const metrics::run_summary& summary, const run_info& info) {
  rapidjson::Document config;
  auto config_text = info.input_config_json.empty()
                         ? std::string_view{"{}"}
                         : std::string_view{info.input_config_json};
  config.Parse(config_text.data(), config_text.size());
  if (config.HasParseError() || !config.IsObject())
    return make_error(errc::bad_input_config,
                      "input_config must be one serialized JSON object (got "
                        + std::string{config_text.substr(0, 40)} + ")");

  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  key(w, "schema_version");
  str(w, schema_version);
  key(w, "aiperf_version");
  str(w, aiperf_version);
  key(w, "benchmark_id");
  str(w, info.benchmark_id);
  for (const auto& m : summary.metrics)
    write_metric(w, m);
  key(w, "input_config");
  config.Accept(w);
  key(w, "was_cancelled");
  w.Bool(info.was_cancelled);
  key(w, "error_summary");
  w.StartArray();
  for (const auto& e : summary.errors) {
    w.StartObject();
    key(w, "error_details");
    w.StartObject();
    key(w, "code");
    w.Int(e.error.code);
    key(w, "type");
    str(w, e.error.type);
    key(w, "message");
    str(w, e.error.message);
    w.EndObject();
    key(w, "count");
    w.Uint64(e.count);
    w.EndObject();
  }
  w.EndArray();
  if (summary.start_ns != 0) {
    key(w, "start_time");
    str(w, iso8601(summary.start_ns));
    key(w, "end_time");
    str(w, iso8601(summary.end_ns));
  }
  key(w, "token_count_source");
  str(w, summary.token_count_source);
  key(w, "percentile_method");
  str(w, summary.exact_percentiles ? "exact" : "histogram");
  key(w, "warnings");
  w.StartArray();
  for (const auto& warning : summary.warnings)
    str(w, warning);
  w.EndArray();
  if (summary.target_request_rate || summary.achieved_request_rate
      || summary.send_lag_p50_ms || summary.mean_requests_in_flight
      || summary.sse_reads.reads > 0) {
    key(w, "load");
    w.StartObject();
    auto opt = [&](std::string_view k, const std::optional<double>& v) {
      if (v) {
        key(w, k);
        w.Double(*v);
      }
    };
    opt("target_request_rate", summary.target_request_rate);
    opt("achieved_request_rate", summary.achieved_request_rate);
    opt("send_lag_p50_ms", summary.send_lag_p50_ms);
    opt("send_lag_p99_ms", summary.send_lag_p99_ms);
    if (summary.target_concurrency) {
      key(w, "target_concurrency");
      w.Uint(*summary.target_concurrency);
    }
    opt("mean_requests_in_flight", summary.mean_requests_in_flight);
    if (summary.sse_reads.reads > 0) {
      // Reads of the streamed responses with two or more content events;
      // a merged read lost inter-chunk samples (selfcheck::read_counts).
      key(w, "sse_reads");
      w.Uint64(summary.sse_reads.reads);
      key(w, "sse_merged_reads");
      w.Uint64(summary.sse_reads.merged_reads);
      key(w, "sse_lost_gaps");
      w.Uint64(summary.sse_reads.lost_gaps);
    }
    w.EndObject();
  }
  w.EndObject();
  return std::string{buf.GetString(), buf.GetSize()};
}

caf::expected<std::string>
render_timeslices_json(const std::vector<metrics::timeslice>& slices,
                       const run_info& info) {
  rapidjson::Document config;
  auto config_text = info.input_config_json.empty()
                         ? std::string_view{"{}"}
                         : std::string_view{info.input_config_json};
  config.Parse(config_text.data(), config_text.size());
  if (config.HasParseError() || !config.IsObject())
    return make_error(errc::bad_input_config,
                      "input_config must be one serialized JSON object (got "
                        + std::string{config_text.substr(0, 40)} + ")");
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  key(w, "timeslices");
  w.StartArray();
  for (const auto& s : slices) {
    w.StartObject();
    key(w, "start_ns");
    w.Int64(s.start_ns);
    key(w, "end_ns");
    w.Int64(s.end_ns);
    if (!s.is_complete) { // AIPerf writes the flag only when false
      key(w, "is_complete");
      w.Bool(false);
    }
    for (const auto& m : s.summary.metrics)
      write_metric(w, m);
    w.EndObject();
  }
  w.EndArray();
  key(w, "input_config");
  config.Accept(w);
  w.EndObject();
  return std::string{buf.GetString(), buf.GetSize()};
}

} // namespace aiperf::exporters
