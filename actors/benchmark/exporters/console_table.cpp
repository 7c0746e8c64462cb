#include "actors/benchmark/exporters/exporters.hpp"
#include "actors/benchmark/exporters/json_writer.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace aiperf::exporters {

namespace {

constexpr std::size_t value_columns = 7;
constexpr std::array<std::string_view, value_columns> column_names{
    "avg", "min", "max", "p99", "p90", "p50", "std"};

// "1234567.891" → "1,234,567.89" (Rich/AIPerf style thousands separators).
std::string with_commas(double v, int decimals) {
  std::string digits;
  detail::append_fixed(digits, std::abs(v), decimals);
  auto dot = digits.find('.');
  auto int_end = dot == std::string::npos ? digits.size() : dot;
  std::string out = v < 0 && digits != "0.00" ? "-" : "";
  for (std::size_t i = 0; i < int_end; ++i) {
    if (i > 0 && (int_end - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  out += digits.substr(int_end);
  return out;
}

// Display width of UTF-8 text (box-drawing characters are one column).
std::size_t width(std::string_view s) {
  std::size_t n = 0;
  for (auto c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80)
      ++n;
  return n;
}

std::string repeat(std::string_view s, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i)
    out += s;
  return out;
}

bool on_console(const metrics::metric_info& m) {
  return !m.has(metrics::flag::no_console) && !m.has(metrics::flag::internal)
         && !m.has(metrics::flag::experimental);
}

} // namespace

std::string render_console_table(const metrics::run_summary& summary,
                                 std::string_view title) {
  using row = std::array<std::string, value_columns + 1>;
  std::vector<row> rows;
  for (const auto& m : summary.metrics) {
    if (!on_console(*m.info))
      continue;
    row r;
    r[0] = m.info->header;
    r[0] += " (";
    r[0] += m.info->unit;
    r[0] += ')';
    if (m.stats) {
      const auto& s = *m.stats;
      using stats::pct;
      std::array<double, value_columns> v{
          s.avg,          s.min,          s.max, s.at(pct::p99),
          s.at(pct::p90), s.at(pct::p50), s.std};
      for (std::size_t i = 0; i < value_columns; ++i)
        r[i + 1] = with_commas(v[i], 2);
    } else {
      r[1] = with_commas(m.value, m.info->has(metrics::flag::integer) ? 0 : 2);
      for (std::size_t i = 2; i <= value_columns; ++i)
        r[i] = "N/A";
    }
    rows.push_back(std::move(r));
  }
  std::array<std::size_t, value_columns + 1> w{};
  w[0] = width("Metric");
  for (std::size_t i = 0; i < value_columns; ++i)
    w[i + 1] = width(column_names[i]);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i)
      w[i] = std::max(w[i], width(r[i]));

  auto rule = [&](std::string_view left, std::string_view mid,
                  std::string_view right, std::string_view fill) {
    std::string s{left};
    for (std::size_t i = 0; i < w.size(); ++i) {
      s += repeat(fill, w[i] + 2);
      s += i + 1 < w.size() ? mid : right;
    }
    return s + "\n";
  };
  auto line = [&](const auto& cells, std::string_view sep) {
    std::string s{sep};
    for (std::size_t i = 0; i < w.size(); ++i) {
      std::string_view c = cells[i];
      auto pad = std::string(w[i] - width(c), ' ');
      // Metric names left-aligned, numbers right-aligned.
      s += ' ';
      if (i == 0) {
        s += c;
        s += pad;
      } else {
        s += pad;
        s += c;
      }
      s += ' ';
      s += sep;
    }
    return s + "\n";
  };

  std::size_t total = 1;
  for (auto x : w)
    total += x + 3;
  std::string out;
  auto title_pad = total > width(title) ? (total - width(title)) / 2 : 0;
  out.append(title_pad, ' ');
  out += title;
  out += '\n';
  out += rule("┏", "┳", "┓", "━");
  std::array<std::string_view, value_columns + 1> header{"Metric"};
  for (std::size_t i = 0; i < value_columns; ++i)
    header[i + 1] = column_names[i];
  out += line(header, "┃");
  out += rule("┡", "╇", "┩", "━");
  for (const auto& r : rows)
    out += line(r, "│");
  out += rule("└", "┴", "┘", "─");
  if (!summary.exact_percentiles)
    out += "Percentiles marked approximate: histogram with <= 0.1 % relative "
           "error.\n";
  for (const auto& warning : summary.warnings) {
    out += "Warning: ";
    out += warning;
    out += '\n';
  }
  return out;
}

} // namespace aiperf::exporters
