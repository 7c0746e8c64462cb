#include "actors/benchmark/exporters/export_names.hpp"

#include <array>

namespace aiperf::exporters {

export_names make_export_names(std::string_view prefix) {
  if (prefix.empty())
    return {};
  // Longest first, so "x_raw.jsonl" loses "_raw.jsonl", not just ".jsonl".
  static constexpr std::array<std::string_view, 10> suffixes{
    "_server_metrics.jsonl", "_server_metrics.json", "_server_metrics.csv",
    "_gpu_telemetry.jsonl",  "_timeslices.csv",      "_timeslices.json",
    "_raw.jsonl",            ".csv",                 ".json",
    ".jsonl"};
  for (auto s : suffixes)
    if (prefix.size() > s.size() && prefix.ends_with(s)) {
      prefix.remove_suffix(s.size());
      break;
    }
  std::string p{prefix};
  return {p + ".json",           p + ".csv",   p + "_timeslices.json",
          p + "_timeslices.csv", p + ".jsonl", p + "_raw.jsonl"};
}

} // namespace aiperf::exporters
