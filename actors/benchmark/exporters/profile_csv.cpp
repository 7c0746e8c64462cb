#include "actors/benchmark/exporters/exporters.hpp"
#include "actors/benchmark/exporters/json_writer.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace aiperf::exporters {

namespace {

void append_csv_field(std::string& out, std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) {
    out += s;
    return;
  }
  out += '"';
  for (auto c : s) {
    if (c == '"')
      out += '"';
    out += c;
  }
  out += '"';
}

std::string row_name(const metrics::metric_result& m) {
  return std::string{m.info->header} + " (" + std::string{m.info->unit} + ")";
}

} // namespace

std::string render_profile_csv(const metrics::run_summary& summary) {
  std::vector<const metrics::metric_result*> dists;
  std::vector<const metrics::metric_result*> scalars;
  for (const auto& m : summary.metrics)
    (m.stats ? dists : scalars).push_back(&m);
  auto by_tag = [](auto* a, auto* b) { return a->tag() < b->tag(); };
  std::sort(dists.begin(), dists.end(), by_tag);
  std::sort(scalars.begin(), scalars.end(), by_tag);

  std::string out;
  out += "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\n";
  for (const auto* m : dists) {
    const auto& s = *m->stats;
    append_csv_field(out, row_name(*m));
    for (double v : {s.avg, s.min, s.max, s.sum}) {
      out += ',';
      detail::append_fixed(out, v, 2);
    }
    using stats::pct;
    for (auto p : {pct::p1, pct::p5, pct::p10, pct::p25, pct::p50, pct::p75,
                   pct::p90, pct::p95, pct::p99}) {
      out += ',';
      detail::append_fixed(out, s.at(p), 2);
    }
    out += ',';
    detail::append_fixed(out, s.std, 2);
    out += '\n';
  }
  out += "\nMetric,Value\n";
  for (const auto* m : scalars) {
    append_csv_field(out, row_name(*m));
    out += ',';
    if (m->info->has(metrics::flag::integer))
      detail::append_json_int(out, std::llround(m->value));
    else
      detail::append_fixed(out, m->value, 2);
    out += '\n';
  }
  return out;
}

} // namespace aiperf::exporters
