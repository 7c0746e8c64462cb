// Reads profile_export_aiperf.json back into the part of a run_summary the
// console table shows. The writer emits doubles in shortest round-trip
// form, so the table rendered from the file equals the one the run printed.
#include "actors/benchmark/exporters/exporters.hpp"

#include <rapidjson/document.h>

#include <array>
#include <string_view>

namespace aiperf::exporters {

namespace {

// Same order as stats::percentile_levels (profile_json.cpp writes these).
constexpr std::array<std::string_view, stats::percentile_levels.size()>
    pct_keys{"p1",  "p5",  "p10", "p25", "p50",
             "p75", "p90", "p95", "p99", "p99_9"};

caf::error bad(std::string what) {
  return make_error(errc::bad_export, "profile_export_aiperf.json: " + what);
}

bool number_at(const rapidjson::Value& obj, const char* k, double& out) {
  auto it = obj.FindMember(k);
  if (it == obj.MemberEnd() || !it->value.IsNumber())
    return false;
  out = it->value.GetDouble();
  return true;
}

} // namespace

caf::expected<metrics::run_summary> read_profile_json(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  if (d.HasParseError() || !d.IsObject())
    return bad("not a JSON object");
  metrics::run_summary out;
  for (auto it = d.MemberBegin(); it != d.MemberEnd(); ++it) {
    std::string_view tag{it->name.GetString(), it->name.GetStringLength()};
    const auto* info = metrics::find_metric(tag);
    // Other members (input_config, error_summary, load, ...) and metrics
    // of another build are not table rows.
    if (info == nullptr || !it->value.IsObject())
      continue;
    const auto& m = it->value;
    metrics::metric_result r;
    r.info = info;
    double avg = 0;
    if (!number_at(m, "avg", avg))
      return bad("metric " + std::string{tag} + " has no numeric avg");
    if (m.HasMember("count")) {
      stats::summary s;
      s.avg = avg;
      double count = 0;
      bool ok = number_at(m, "min", s.min) && number_at(m, "max", s.max)
                && number_at(m, "std", s.std) && number_at(m, "sum", s.sum)
                && number_at(m, "count", count);
      for (std::size_t i = 0; ok && i < pct_keys.size(); ++i)
        ok = number_at(m, std::string{pct_keys[i]}.c_str(), s.pct[i]);
      if (!ok)
        return bad("metric " + std::string{tag}
                   + " lacks one of min, max, std, sum, count, p1..p99_9");
      s.count = static_cast<std::uint64_t>(count);
      r.stats = s;
    } else {
      r.value = avg;
    }
    out.metrics.push_back(std::move(r));
  }
  if (auto it = d.FindMember("percentile_method");
      it != d.MemberEnd() && it->value.IsString())
    out.exact_percentiles = std::string_view{it->value.GetString()} != "histogram";
  if (auto it = d.FindMember("token_count_source");
      it != d.MemberEnd() && it->value.IsString())
    out.token_count_source = it->value.GetString();
  if (auto it = d.FindMember("warnings"); it != d.MemberEnd() && it->value.IsArray())
    for (const auto& w : it->value.GetArray())
      if (w.IsString())
        out.warnings.emplace_back(w.GetString());
  return out;
}

} // namespace aiperf::exporters
