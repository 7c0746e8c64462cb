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

std::string
render_timeslices_csv(const std::vector<metrics::timeslice>& slices) {
  std::string out = "Timeslice,Metric,Unit,Stat,Value\n";
  for (std::size_t index = 0; index < slices.size(); ++index) {
    std::vector<const metrics::metric_result*> rows;
    for (const auto& m : slices[index].summary.metrics)
      rows.push_back(&m);
    std::sort(rows.begin(), rows.end(),
              [](auto* a, auto* b) { return a->tag() < b->tag(); });
    for (const auto* m : rows) {
      auto row = [&](std::string_view stat) {
        out += std::to_string(index);
        out += ',';
        append_csv_field(out, m->info->header);
        out += ',';
        append_csv_field(out, m->info->unit);
        out += ',';
        out += stat;
        out += ',';
      };
      if (!m->stats) {
        row("avg");
        if (m->info->has(metrics::flag::integer))
          detail::append_json_int(out, std::llround(m->value));
        else
          detail::append_fixed(out, m->value, 2);
        out += '\n';
        continue;
      }
      const auto& s = *m->stats;
      using stats::pct;
      auto value = [&](std::string_view stat, double v) {
        row(stat);
        detail::append_fixed(out, v, 2);
        out += '\n';
      };
      value("avg", s.avg);
      value("min", s.min);
      value("max", s.max);
      value("p1", s.at(pct::p1));
      value("p5", s.at(pct::p5));
      value("p10", s.at(pct::p10));
      value("p25", s.at(pct::p25));
      value("p50", s.at(pct::p50));
      value("p75", s.at(pct::p75));
      value("p90", s.at(pct::p90));
      value("p95", s.at(pct::p95));
      value("p99", s.at(pct::p99));
      value("std", s.std);
    }
  }
  return out;
}

} // namespace aiperf::exporters
