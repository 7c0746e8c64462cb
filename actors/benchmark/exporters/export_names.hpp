// The export files' names, from `--profile-export-prefix`.
#pragma once

#include <string>
#include <string_view>

namespace aiperf::exporters {

/// File names (not paths) of one run's exports.
struct export_names {
  std::string summary_json = "profile_export_aiperf.json";
  std::string summary_csv = "profile_export_aiperf.csv";
  std::string timeslices_json = "profile_export_aiperf_timeslices.json";
  std::string timeslices_csv = "profile_export_aiperf_timeslices.csv";
  std::string records_jsonl = "profile_export.jsonl";
  std::string raw_jsonl = "profile_export_raw.jsonl";
};

/// AIPerf's naming (OutputConfig.set_export_filenames, github.com/
/// ai-dynamo/aiperf): "" keeps the defaults; a prefix P names the files
/// P.json, P.csv, P_timeslices.json/.csv, P.jsonl and P_raw.jsonl. One
/// export suffix on P is dropped first, so `--profile-export-prefix
/// run1.jsonl` gives run1.jsonl, not run1.jsonl.jsonl.
[[nodiscard]] export_names make_export_names(std::string_view prefix);

} // namespace aiperf::exporters
