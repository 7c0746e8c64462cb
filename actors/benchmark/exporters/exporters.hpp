// Export formats of a run, in AIPerf's layout: profile_export_aiperf.json,
// profile_export_aiperf.csv, profile_export.jsonl lines and the console
// table. Pure rendering into strings; the records_manager writes the files.
#pragma once

#include "actors/benchmark/metrics/metrics_aggregator.hpp"
#include "actors/benchmark/metrics/timeslices.hpp"
#include "proto/error.hpp"
#include "proto/records.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::exporters {

/// Why an export cannot be rendered.
enum class errc : std::uint8_t {
  bad_input_config = 1, // run_info::input_config_json is not a JSON object
  bad_export,           // an export file to read back is malformed
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::exporters

// Export errors: an exporters::errc and a message naming the input.
AIPERF_ERROR_ENUM(aiperf::exporters::errc, "export")

namespace aiperf::exporters {

inline constexpr std::string_view aiperf_version = "aiperf-node 0.1.0";
inline constexpr std::string_view schema_version = "1.1";

/// Run facts the summary does not hold.
struct run_info {
  std::string benchmark_id;
  /// The user config, already serialized as one JSON object ("" = {}).
  std::string input_config_json;
  bool was_cancelled = false;
};

/// Renders profile_export_aiperf.json: schema_version, aiperf_version,
/// benchmark_id, one object per metric (unit + avg, p1..p99, p99_9, min,
/// max, std, count, sum for distributions; unit + avg for scalars),
/// input_config, was_cancelled, error_summary, start_time/end_time
/// (ISO-8601 UTC), and our additions token_count_source,
/// percentile_method ("exact" | "histogram"), warnings and load (target vs
/// achieved rate, send lag). Fails with bad_input_config when
/// `input_config_json` is not a JSON object.
[[nodiscard]] caf::expected<std::string>
render_profile_json(const metrics::run_summary& summary, const run_info& info);

/// Renders profile_export_aiperf.csv: a `Metric,avg,min,max,sum,p1,...,std`
/// section for distributions (rows sorted by tag, named "Header (unit)"),
/// a blank line, then `Metric,Value` for scalars. Floats with 2 decimals,
/// whole-number metrics as integers.
[[nodiscard]] std::string
render_profile_csv(const metrics::run_summary& summary);

/// Renders profile_export_aiperf_timeslices.json in AIPerf's layout:
/// {"timeslices": [{"start_ns", "end_ns", "is_complete": false (only on a
/// cut-short last window), one object per metric as in
/// profile_export_aiperf.json}, ...], "input_config": {...}}; the position
/// in the array is the window's index. Fails with bad_input_config like
/// render_profile_json.
[[nodiscard]] caf::expected<std::string>
render_timeslices_json(const std::vector<metrics::timeslice>& slices,
                       const run_info& info);

/// Renders profile_export_aiperf_timeslices.csv in AIPerf's tidy layout:
/// `Timeslice,Metric,Unit,Stat,Value`, per window its metrics sorted by
/// tag, one row per stat (avg, min, max, p1 ... p99, std; scalars avg
/// only). Floats with 2 decimals, whole-number metrics as integers.
[[nodiscard]] std::string
render_timeslices_csv(const std::vector<metrics::timeslice>& slices);

/// Appends one profile_export.jsonl line (with '\n') for `record`: metadata,
/// per-request metrics in display units ({"value": v, "unit": u}) and error.
/// Allocation-free once `out` has grown; meant to run per record.
void append_jsonl_line(std::string& out, const proto::metric_record& record);

/// The console table's title: our product's name, not AIPerf's ("NVIDIA
/// AIPerf | LLM Metrics"); the metric names and the JSON/CSV keys stay
/// AIPerf's.
inline constexpr std::string_view console_title = "aiperf-node | LLM Metrics";

/// Renders AIPerf's console table: one row per console metric with columns
/// avg, min, max, p99, p90, p50, std; scalars show avg only.
[[nodiscard]] std::string
render_console_table(const metrics::run_summary& summary,
                     std::string_view title = console_title);

/// Reads profile_export_aiperf.json (as render_profile_json wrote it) back
/// into what render_console_table needs: the metrics in file order, the
/// percentile method and the warnings; members that are no metric of this
/// build are skipped. For a CLI that only has the downloaded files (kube
/// profile). Fails with bad_export on malformed JSON or a metric missing a
/// statistic.
[[nodiscard]] caf::expected<metrics::run_summary>
read_profile_json(std::string_view text);

/// Formats epoch ns as ISO-8601 UTC with microseconds
/// ("2026-11-29T11:40:39.123456+00:00").
[[nodiscard]] std::string iso8601(std::int64_t epoch_ns);

} // namespace aiperf::exporters
