#include "actors/benchmark/exporters/export_names.hpp"
#include "actors/benchmark/exporters/exporters.hpp"
#include "actors/benchmark/exporters/json_writer.hpp"
#include "actors/benchmark/metrics/compute_metrics.hpp"
#include "actors/benchmark/metrics/metric_registry.hpp"
#include "proto/utf8.hpp"
#include "tests/actors/benchmark/metrics/record_builder.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <charconv>

#include <cmath>
#include <limits>
#include <sstream>
#include <string_view>
#include <vector>

using namespace aiperf;
using test::make_record;

namespace {

metrics::metric_options streaming() {
  metrics::metric_options o;
  o.streaming = true;
  return o;
}

// Three valid streaming requests and one HTTP 500, epoch-sized times.
metrics::run_summary small_run(bool with_error = true) {
  metrics::metrics_aggregator agg{streaming()};
  constexpr std::int64_t t0 = 1'764'416'439'000'000'000; // 2025-11-29
  for (int i = 0; i < 3; ++i) {
    auto r = make_record(
        0, {10'000'000, 15'000'000, 20'000'000 + i * 1'000'000}, 2);
    r.request_start_wall_ns = t0 + i * 100'000'000;
    r.input_tokens = 100;
    agg.add(metrics::compute_metrics(r, agg.options(), "rp0"));
  }
  if (with_error) {
    auto bad = make_record(0, {5});
    bad.http_status = 500;
    bad.request_start_wall_ns = t0;
    agg.add(metrics::compute_metrics(bad, agg.options(), "rp0"));
  }
  return agg.finalize();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

} // namespace

TEST(profile_json, parses_back_with_expected_keys_and_values) {
  auto s = small_run();
  auto text = exporters::render_profile_json(
      s, {"bench-1", R"({"endpoint":{"streaming":true}})", false});
  ASSERT_TRUE(text) << error_message(text.error());
  rapidjson::Document d;
  d.Parse(text->c_str());
  ASSERT_FALSE(d.HasParseError());
  EXPECT_STREQ(d["schema_version"].GetString(), "1.1");
  EXPECT_STREQ(d["aiperf_version"].GetString(), "aiperf-node 0.1.0");
  EXPECT_STREQ(d["benchmark_id"].GetString(), "bench-1");
  const auto& lat = d["request_latency"];
  EXPECT_STREQ(lat["unit"].GetString(), "ms");
  EXPECT_DOUBLE_EQ(lat["avg"].GetDouble(), 21.0); // 20, 21, 22 ms
  EXPECT_DOUBLE_EQ(lat["min"].GetDouble(), 20.0);
  EXPECT_DOUBLE_EQ(lat["max"].GetDouble(), 22.0);
  EXPECT_DOUBLE_EQ(lat["p50"].GetDouble(), 21.0);
  EXPECT_EQ(lat["count"].GetUint64(), 3u);
  for (auto k :
       {"p1", "p5", "p10", "p25", "p75", "p90", "p95", "p99", "std", "sum"})
    EXPECT_TRUE(lat.HasMember(k)) << k;
  EXPECT_DOUBLE_EQ(d["time_to_first_token"]["avg"].GetDouble(), 10.0);
  EXPECT_EQ(d["request_count"]["avg"].GetInt64(), 3);
  EXPECT_STREQ(d["request_count"]["unit"].GetString(), "requests");
  EXPECT_EQ(d["error_request_count"]["avg"].GetInt64(), 1);
  EXPECT_STREQ(d["request_throughput"]["unit"].GetString(), "requests/sec");
  EXPECT_STREQ(d["benchmark_duration"]["unit"].GetString(), "sec");
  EXPECT_DOUBLE_EQ(d["benchmark_duration"]["avg"].GetDouble(), 0.222);
  EXPECT_TRUE(d["input_config"]["endpoint"]["streaming"].GetBool());
  EXPECT_FALSE(d["was_cancelled"].GetBool());
  ASSERT_EQ(d["error_summary"].Size(), 1u);
  EXPECT_EQ(d["error_summary"][0]["error_details"]["code"].GetInt(), 500);
  EXPECT_EQ(d["error_summary"][0]["count"].GetUint64(), 1u);
  EXPECT_STREQ(d["start_time"].GetString(), "2025-11-29T11:40:39.000000+00:00");
  EXPECT_STREQ(d["percentile_method"].GetString(), "exact");
  EXPECT_STREQ(d["token_count_source"].GetString(),
               "client (built-in tokenizer)");
  EXPECT_TRUE(d["warnings"].IsArray());
}

TEST(profile_json, rejects_input_config_that_is_not_an_object) {
  auto text = exporters::render_profile_json(small_run(), {"b", "[1]", false});
  ASSERT_FALSE(text);
  EXPECT_TRUE(is_error(text.error(), exporters::errc::bad_input_config));
  EXPECT_NE(error_message(text.error()).find("input_config"),
            std::string::npos);
}

TEST(profile_csv, two_sections_with_fixed_layout) {
  auto csv = exporters::render_profile_csv(small_run());
  auto lines = lines_of(csv);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0],
            "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std");
  auto blank = std::find(lines.begin(), lines.end(), "");
  ASSERT_NE(blank, lines.end());
  ASSERT_NE(blank + 1, lines.end());
  EXPECT_EQ(*(blank + 1), "Metric,Value");
  // Distribution rows are sorted by tag: e2e_output_token_throughput first.
  EXPECT_EQ(lines[1].rfind("E2E Output Token Throughput (tokens/sec/user),", 0),
            0u)
      << lines[1];
  auto has_line = [&](const std::string& l) {
    return std::find(lines.begin(), lines.end(), l) != lines.end();
  };
  EXPECT_TRUE(has_line("Request Latency (ms),21.00,20.00,22.00,63.00,20.02,"
                       "20.10,20.20,20.50,21.00,21.50,21.80,21.90,21.98,0.82"));
  EXPECT_TRUE(has_line("Request Count (requests),3"));
  EXPECT_TRUE(has_line("Error Request Count (requests),1"));
  EXPECT_TRUE(has_line("Benchmark Duration (sec),0.22"));
}

// Verifies a jsonl line is one valid JSON object with display units.
TEST(jsonl, line_round_trips_through_rapidjson) {
  auto r = make_record(1000, {2'001'000, 3'001'000, 5'001'000}, 2);
  r.request_start_wall_ns = 1'700'000'000'000'000'000;
  r.x_request_id = "id-\"quoted\"\n";
  r.session_num = 45;
  r.input_tokens = 10;
  auto m = metrics::compute_metrics(r, streaming(), "record_processor_1");
  std::string out;
  exporters::append_jsonl_line(out, m);
  ASSERT_EQ(out.back(), '\n');
  EXPECT_EQ(out.find('\n'), out.size() - 1);
  rapidjson::Document d;
  d.Parse(out.c_str());
  ASSERT_FALSE(d.HasParseError());
  const auto& md = d["metadata"];
  EXPECT_EQ(md["session_num"].GetInt(), 45);
  EXPECT_STREQ(md["x_request_id"].GetString(), "id-\"quoted\"\n");
  EXPECT_EQ(md["request_start_ns"].GetInt64(), 1'700'000'000'000'000'000);
  EXPECT_TRUE(md["request_ack_ns"].IsNull());
  EXPECT_TRUE(md["cancellation_time_ns"].IsNull());
  EXPECT_STREQ(md["benchmark_phase"].GetString(), "profiling");
  EXPECT_STREQ(md["record_processor_id"].GetString(), "record_processor_1");
  const auto& mt = d["metrics"];
  EXPECT_DOUBLE_EQ(mt["time_to_first_token"]["value"].GetDouble(), 2.0);
  EXPECT_STREQ(mt["time_to_first_token"]["unit"].GetString(), "ms");
  EXPECT_DOUBLE_EQ(mt["request_latency"]["value"].GetDouble(), 5.0);
  ASSERT_TRUE(mt["inter_chunk_latency"]["value"].IsArray());
  EXPECT_DOUBLE_EQ(mt["inter_chunk_latency"]["value"][0].GetDouble(), 1.0);
  EXPECT_DOUBLE_EQ(mt["inter_chunk_latency"]["value"][1].GetDouble(), 2.0);
  EXPECT_EQ(mt["output_sequence_length"]["value"].GetDouble(), 6.0);
  EXPECT_STREQ(mt["output_sequence_length"]["unit"].GetString(), "tokens");
  EXPECT_TRUE(d["error"].IsNull());

  // Error line: only error_isl, and the error object.
  auto bad = make_record(0, {});
  bad.input_tokens = 10;
  bad.has_error = true;
  bad.error = {499, "RequestCancellationError", "cancelled"};
  std::string err_line;
  exporters::append_jsonl_line(
      err_line, metrics::compute_metrics(bad, streaming(), "rp"));
  rapidjson::Document e;
  e.Parse(err_line.c_str());
  ASSERT_FALSE(e.HasParseError());
  EXPECT_EQ(e["metrics"].MemberCount(), 1u);
  EXPECT_EQ(e["metrics"]["error_isl"]["value"].GetDouble(), 10.0);
  EXPECT_EQ(e["error"]["code"].GetInt(), 499);
}

TEST(console_table, contains_metric_rows_and_columns) {
  auto table = exporters::render_console_table(small_run());
  EXPECT_EQ(table.find("NVIDIA"), std::string::npos) << table;
  for (auto s : {"aiperf-node | LLM Metrics", "Metric", "avg", "p99", "std",
                 "Time to First Token (ms)", "Request Latency (ms)",
                 "Inter Token Latency (ms)", "Output Sequence Length (tokens)",
                 "Request Throughput (requests/sec)",
                 "Request Count (requests)", "Warning: 1 of 4 requests failed"})
    EXPECT_NE(table.find(s), std::string::npos) << s << "\n" << table;
  // Exports-only metrics stay off the console.
  EXPECT_EQ(table.find("Total Output Sequence Length"), std::string::npos);
  EXPECT_EQ(table.find("Credit Drop"), std::string::npos);
  // Every row has the same display width.
  auto lines = lines_of(table);
  std::size_t width = 0;
  for (const auto& l : lines) {
    if (l.rfind("│", 0) != 0)
      continue;
    std::size_t w = 0;
    for (auto c : l)
      w += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    if (width == 0)
      width = w;
    EXPECT_EQ(w, width) << l;
  }
  EXPECT_GT(width, 0u);
}

TEST(iso8601, formats_utc_with_microseconds) {
  EXPECT_EQ(exporters::iso8601(0), "1970-01-01T00:00:00.000000+00:00");
  EXPECT_EQ(exporters::iso8601(1'500'000'001'234'567'891),
            "2017-07-14T02:40:01.234567+00:00");
}

TEST(json_writer, scaled_values_are_exact_decimals) {
  auto scaled = [](double base, double per) {
    std::string out;
    exporters::detail::append_json_scaled(out, base, per);
    return out;
  };
  EXPECT_EQ(scaled(4'123'456, 1e6), "4.123456");
  EXPECT_EQ(scaled(4'000'000, 1e6), "4.0");
  EXPECT_EQ(scaled(500, 1e6), "0.0005");
  EXPECT_EQ(scaled(0, 1e6), "0.0");
  EXPECT_EQ(scaled(-1'500'000, 1e6), "-1.5");
  EXPECT_EQ(scaled(30, 1e9), "0.00000003");
  EXPECT_EQ(scaled(42, 1), "42");
  EXPECT_EQ(scaled(1.5, 1e6), "1.5e-06"); // not whole: shortest float
  EXPECT_EQ(scaled(2.5, 1), "2.5");
  std::string s;
  exporters::detail::append_json_string(s, std::string_view{"a\x01\"", 3});
  EXPECT_EQ(s, "\"a\\u0001\\\"\"");
}

// The jsonl writer and number formatting as they were before the
// raw-buffer rewrite, verbatim: the new code must produce the same bytes.
namespace reference {

using exporters::detail::append_json_string;

void ref_json_double(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, ptr);
}

void ref_json_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, ptr);
}

void ref_json_scaled(std::string& out, double base,
                        double base_per_display) {
  int shift = base_per_display == 1.0   ? 0
              : base_per_display == 1e6 ? 6
              : base_per_display == 1e9 ? 9
                                        : -1;
  constexpr double exact_limit = 9.0e15; // below 2^53: integers exact
  if (shift < 0 || base != std::trunc(base) || std::abs(base) >= exact_limit) {
    ref_json_double(out, base / base_per_display);
    return;
  }
  auto v = static_cast<std::int64_t>(base);
  if (v == 0) {
    out += shift == 0 ? "0" : "0.0";
    return;
  }
  if (v < 0) {
    out.push_back('-');
    v = -v;
  }
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), v);
  auto len = static_cast<int>(end - digits);
  if (shift == 0) {
    out.append(digits, end);
    return;
  }
  // Integer part, then the fraction without trailing zeros ("4.0" at least).
  if (len <= shift) {
    out += "0.";
    out.append(static_cast<std::size_t>(shift - len), '0');
    auto last = end;
    while (last > digits && last[-1] == '0')
      --last;
    out.append(digits, last);
    return;
  }
  out.append(digits, digits + (len - shift));
  out.push_back('.');
  auto frac = digits + (len - shift);
  auto last = end;
  while (last > frac + 1 && last[-1] == '0')
    --last;
  out.append(frac, last);
}


struct jsonl_slot {
  const metrics::metric_info* info;
  int record_index; // -1: inter_chunk_latency
};

const std::vector<jsonl_slot>& slots() {
  static const auto table = [] {
    std::vector<jsonl_slot> t;
    for (const auto& m : metrics::all_metrics()) {
      if (m.kind != metrics::metric_kind::record)
        continue;
      auto rm = metrics::find_record_metric(m.tag);
      t.push_back({&m, rm ? static_cast<int>(*rm) : -1});
    }
    return t;
  }();
  return table;
}

void append_nullable_ns(std::string& out, std::int64_t v) {
  if (v == 0)
    out += "null";
  else
    ref_json_int(out, v);
}

void append_unit(std::string& out, std::string_view unit) {
  out += ",\"unit\":";
  append_json_string(out, unit);
  out += '}';
}

void ref_jsonl_line(std::string& out, const proto::metric_record& r) {
  out += "{\"metadata\":{\"session_num\":";
  ref_json_int(out, r.session_num);
  out += ",\"x_request_id\":";
  append_json_string(out, r.x_request_id);
  out += ",\"x_correlation_id\":";
  append_json_string(out, r.x_correlation_id);
  out += ",\"conversation_id\":";
  append_json_string(out, r.conversation_id);
  out += ",\"turn_index\":";
  ref_json_int(out, r.turn_index);
  out += ",\"credit_issued_ns\":";
  ref_json_int(out, r.credit_issued_ns);
  out += ",\"request_start_ns\":";
  ref_json_int(out, r.request_start_ns);
  out += ",\"request_ack_ns\":";
  append_nullable_ns(out, r.request_ack_ns);
  out += ",\"request_end_ns\":";
  ref_json_int(out, r.request_end_ns);
  out += ",\"worker_id\":";
  append_json_string(out, r.worker_id);
  out += ",\"record_processor_id\":";
  append_json_string(out, r.record_processor_id);
  out += ",\"benchmark_phase\":\"";
  out += proto::to_string(r.phase);
  out += "\",\"was_cancelled\":";
  out += r.was_cancelled ? "true" : "false";
  out += ",\"cancellation_time_ns\":";
  append_nullable_ns(out, r.cancellation_time_ns);
  out += "},\"metrics\":{";
  bool first = true;
  for (const auto& slot : slots()) {
    const auto& m = *slot.info;
    if (slot.record_index < 0) {
      if (r.inter_chunk_latency.empty())
        continue;
      out += first ? "\"" : ",\"";
      out += m.tag;
      out += "\":{\"value\":[";
      for (std::size_t i = 0; i < r.inter_chunk_latency.size(); ++i) {
        if (i > 0)
          out += ',';
        ref_json_scaled(out, r.inter_chunk_latency[i], m.base_per_display);
      }
      out += ']';
    } else {
      auto i = static_cast<std::size_t>(slot.record_index);
      if (!r.has(i))
        continue;
      auto v = r.values[i];
      out += first ? "\"" : ",\"";
      out += m.tag;
      out += "\":{\"value\":";
      ref_json_scaled(out, v, m.base_per_display);
    }
    append_unit(out, m.unit);
    first = false;
  }
  out += "},\"error\":";
  if (r.has_error) {
    out += "{\"code\":";
    ref_json_int(out, r.error.code);
    out += ",\"type\":";
    append_json_string(out, r.error.type);
    out += ",\"message\":";
    append_json_string(out, r.error.message);
    out += '}';
  } else {
    out += "null";
  }
  out += "}\n";
}

} // namespace reference

namespace {

std::uint64_t next_random(std::uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return state >> 11;
}

// Values of every shape the exporters see: whole ns (the fast path), whole
// ns beyond 2^53, fractional, tiny, huge, negative, zero, non-finite.
double random_value(std::uint64_t& state) {
  auto r = next_random(state);
  auto mag = static_cast<double>(r % 10'000'000'000ull);
  switch (r % 11) {
  case 0: return mag;
  case 1: return std::trunc(mag / static_cast<double>(1 + r % 1000));
  case 2: return -mag;
  case 3: return static_cast<double>(r % 10);
  case 4: return mag * 1e6 + static_cast<double>(r % 7);
  case 5: return mag / 7.0;
  case 6: return std::ldexp(static_cast<double>(r), -static_cast<int>(r % 80));
  case 7: return std::ldexp(static_cast<double>(r), static_cast<int>(r % 900));
  case 8: return r % 3 == 0 ? 0.0 : (r % 3 == 1 ? -0.0 : 1e-300);
  case 9: return r % 2 == 0 ? std::nan("") : -std::numeric_limits<double>::infinity();
  default: return static_cast<double>(r % 100'000) * 1000.0;
  }
}

} // namespace

TEST(json_writer, raw_number_writers_match_the_previous_output) {
  std::uint64_t state = 1;
  const double scales[] = {1.0, 1e3, 1e6, 1e9, 100.0, 0.001};
  for (int i = 0; i < 200'000; ++i) {
    auto v = random_value(state);
    for (auto per : scales) {
      std::string got;
      std::string want;
      exporters::detail::append_json_scaled(got, v, per);
      reference::ref_json_scaled(want, v, per);
      ASSERT_EQ(got, want) << v << " / " << per;
    }
    std::string got;
    std::string want;
    exporters::detail::append_json_double(got, v);
    reference::ref_json_double(want, v);
    ASSERT_EQ(got, want) << v;
    auto n = static_cast<std::int64_t>(next_random(state)) - (std::int64_t{1} << 52);
    got.clear();
    want.clear();
    exporters::detail::append_json_int(got, n);
    reference::ref_json_int(want, n);
    ASSERT_EQ(got, want) << n;
  }
  // Integers of every length, across the writer's 8-digit chunk bounds,
  // and the ends of the range.
  std::vector<std::int64_t> ints{std::numeric_limits<std::int64_t>::min(),
                                 std::numeric_limits<std::int64_t>::max(),
                                 999'999'999'999'999'999, 1'000'000'000'000'000'000,
                                 1'000'000'000'000'000'001};
  for (std::int64_t p = 1; p <= std::numeric_limits<std::int64_t>::max() / 10;
       p *= 10)
    for (std::int64_t v : {p - 1, p, p + 1, 10 * p - 1, 3 * p + 7})
      ints.insert(ints.end(), {v, -v});
  for (int i = 0; i < 20'000; ++i)
    ints.push_back(static_cast<std::int64_t>(next_random(state) << 11 ^ next_random(state)));
  for (auto n : ints) {
    std::string got;
    std::string want;
    exporters::detail::append_json_int(got, n);
    reference::ref_json_int(want, n);
    ASSERT_EQ(got, want) << n;
    got.clear();
    want.clear();
    exporters::detail::append_json_scaled(got, static_cast<double>(n), 1e6);
    reference::ref_json_scaled(want, static_cast<double>(n), 1e6);
    ASSERT_EQ(got, want) << n;
  }
}

TEST(jsonl, lines_match_the_previous_writer_byte_for_byte) {
  std::uint64_t state = 3;
  std::string got;
  std::string want;
  for (int i = 0; i < 3000; ++i) {
    proto::metric_record m;
    m.session_num = static_cast<std::uint32_t>(next_random(state));
    m.x_request_id = i % 7 == 0 ? "id \"quoted\"\n\x01" : "8c7e5a2e-3f5b-4a51-9d7c-0d6d2f1c9a11";
    if (i % 7 == 1) {
      // One byte that must (or, for DEL and a well-formed two-byte
      // sequence, must not) be escaped, at every position of the 8-byte
      // steps and the tail.
      const std::string_view specials[] = {"\"", "\\", "\x1f", {"\0", 1},
                                           "\x7f", "\xc3\xa9", " "};
      m.x_request_id.assign(27, 'r');
      m.x_request_id.replace(
        static_cast<std::size_t>(i / 7) % 27, 1,
        specials[static_cast<std::size_t>(i / 7) % std::size(specials)]);
    }
    m.x_correlation_id = std::string(next_random(state) % 3000, 'c');
    m.conversation_id = "session_" + std::to_string(i);
    m.turn_index = static_cast<std::uint32_t>(i % 5);
    m.credit_issued_ns = static_cast<std::int64_t>(next_random(state));
    m.request_start_ns = static_cast<std::int64_t>(next_random(state));
    m.request_ack_ns = i % 2 == 0 ? 0 : m.request_start_ns + 5;
    m.request_end_ns = m.request_start_ns + 1000;
    m.worker_id = "worker_" + std::to_string(i % 3);
    m.record_processor_id = "record_processor_0";
    m.phase = i % 4 == 0 ? proto::benchmark_phase::warmup
                         : proto::benchmark_phase::profiling;
    m.was_cancelled = i % 9 == 0;
    m.cancellation_time_ns = m.was_cancelled ? m.request_end_ns : 0;
    for (std::size_t k = 0; k < proto::record_metric_count; ++k)
      if (next_random(state) % 3 != 0)
        m.set(static_cast<proto::record_metric>(k), random_value(state));
    auto icl = next_random(state) % 300;
    for (std::uint64_t k = 0; k < icl; ++k)
      m.inter_chunk_latency.push_back(
          static_cast<std::int64_t>(next_random(state) % 20'000'000'000ull)
          - 1'000'000);
    if (i % 11 == 0) // around the bound of exact whole doubles, and beyond
      for (std::int64_t big : {std::int64_t{8'999'999'999'999'999},
                               std::int64_t{9'000'000'000'000'000},
                               std::int64_t{-9'000'000'000'000'001},
                               std::numeric_limits<std::int64_t>::max(),
                               std::numeric_limits<std::int64_t>::min()})
        m.inter_chunk_latency.push_back(big);
    m.has_error = i % 5 == 0;
    if (m.has_error)
      m.error = {500, "HTTPError", i % 10 == 0 ? "tab\there" : "HTTP status 500"};
    // Appends to a non-empty string, like the records_manager's buffer.
    exporters::append_jsonl_line(got, m);
    reference::ref_jsonl_line(want, m);
    ASSERT_EQ(got, want) << "record " << i;
    if (got.size() > (1u << 20)) {
      got.clear();
      want.clear();
    }
  }
}

namespace {

/// Whether `text` is one JSON document of well-formed UTF-8.
bool strict_json(const std::string& text) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseValidateEncodingFlag>(text.c_str(), text.size());
  return !d.HasParseError();
}

} // namespace

TEST(json_writer, ill_formed_utf8_becomes_replacement_characters) {
  using exporters::detail::append_json_string;
  struct sample {
    std::string in;
    std::string out; // the JSON text written
    std::size_t replaced;
  };
  const std::vector<sample> samples = {
      {"a\x80" "b", "\"a\\ufffdb\"", 1},                  // lone continuation
      {"\xBF\xBF", "\"\\ufffd\\ufffd\"", 2},               // two of them
      {"\xC0\xAF", "\"\\ufffd\\ufffd\"", 2},               // overlong '/'
      {"\xE0\x80\xAF", "\"\\ufffd\\ufffd\\ufffd\"", 3},    // overlong 3-byte
      {"\xF0\x80\x80\xAF", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", 4}, // overlong 4
      {"x\xE2\x82", "\"x\\ufffd\"", 1},                    // truncated at end
      {"x\xF0\x9F\x98", "\"x\\ufffd\"", 1},                // truncated 4-byte
      {"\xE2\x82" "A", "\"\\ufffdA\"", 1},                 // cut by ASCII
      {"\xED\xA0\x80", "\"\\ufffd\\ufffd\\ufffd\"", 3},    // high surrogate
      {"\xED\xBF\xBF", "\"\\ufffd\\ufffd\\ufffd\"", 3},    // low surrogate
      {"\xF4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", 4}, // > U+10FFFF
      {"\xF5\x80", "\"\\ufffd\\ufffd\"", 2},               // no such lead
      {"\xFF" "\"\n", "\"\\ufffd\\\"\\n\"", 1},            // with escapes
  };
  for (const auto& s : samples) {
    std::string out;
    EXPECT_EQ(append_json_string(out, s.in), s.replaced) << s.out;
    EXPECT_EQ(out, s.out);
    EXPECT_TRUE(strict_json(out)) << out;
    EXPECT_EQ(utf8::count_invalid(s.in), s.replaced) << s.out;
  }
}

TEST(json_writer, well_formed_multibyte_text_is_unchanged) {
  using exporters::detail::append_json_string;
  // Each length, the boundary code points, and U+FFFD itself.
  const std::string text = "caf\xC3\xA9 \xC2\x80 \xDF\xBF \xE0\xA0\x80 \xE2\x82\xAC "
                           "\xED\x9F\xBF \xEE\x80\x80 \xEF\xBF\xBD "
                           "\xF0\x90\x80\x80 \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF";
  std::string out;
  EXPECT_EQ(append_json_string(out, text), 0u);
  EXPECT_EQ(out, "\"" + text + "\"");
  EXPECT_TRUE(strict_json(out));
  EXPECT_EQ(utf8::count_invalid(text), 0u);
  EXPECT_EQ(utf8::replace_invalid(text), text);
  EXPECT_EQ(utf8::replace_invalid("a\xC0" "b\xE2\x82"),
            "a" + std::string{utf8::replacement} + "b"
                + std::string{utf8::replacement});
}

TEST(jsonl, ill_formed_utf8_is_replaced_and_counted_in_the_metadata) {
  auto bad = make_record(0, {});
  bad.has_error = true;
  bad.x_request_id = "id\xC3";
  bad.error = {502, "HTTPError", "upstream said \xFF\xFE\xED\xA0\x80 ok"};
  std::string line;
  exporters::append_jsonl_line(
      line, metrics::compute_metrics(bad, streaming(), "rp"));
  ASSERT_TRUE(strict_json(line)) << line;
  rapidjson::Document d;
  d.Parse(line.c_str());
  EXPECT_EQ(d["metadata"]["invalid_utf8_replaced"].GetInt(), 6);
  EXPECT_EQ(std::string{d["metadata"]["x_request_id"].GetString()},
            "id\xEF\xBF\xBD");
  EXPECT_EQ(std::string{d["error"]["message"].GetString()},
            "upstream said \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
            "\xEF\xBF\xBD ok");

  // Clean lines carry no count (AIPerf's layout unchanged).
  auto good = make_record(0, {5}, 1);
  good.x_request_id = "caf\xC3\xA9";
  std::string clean;
  exporters::append_jsonl_line(
      clean, metrics::compute_metrics(good, streaming(), "rp"));
  ASSERT_TRUE(strict_json(clean)) << clean;
  rapidjson::Document c;
  c.Parse(clean.c_str());
  EXPECT_FALSE(c["metadata"].HasMember("invalid_utf8_replaced"));
  EXPECT_STREQ(c["metadata"]["x_request_id"].GetString(), "caf\xC3\xA9");
}

TEST(timeslices_json, one_object_per_window_with_aiperfs_keys) {
  std::vector<metrics::timeslice> slices(2);
  slices[0] = {1'000, 2'000, true, small_run(), 3, 1};
  slices[1] = {2'000, 2'500, false, small_run(false), 3, 0};
  auto text = exporters::render_timeslices_json(
      slices, {"id", R"({"model":"m"})", false});
  ASSERT_TRUE(text);
  rapidjson::Document d;
  d.Parse(text->c_str());
  ASSERT_FALSE(d.HasParseError());
  ASSERT_EQ(d["timeslices"].Size(), 2u);
  const auto& first = d["timeslices"][0];
  EXPECT_EQ(first["start_ns"].GetInt64(), 1'000);
  EXPECT_EQ(first["end_ns"].GetInt64(), 2'000);
  EXPECT_FALSE(first.HasMember("is_complete")) << "AIPerf omits true";
  EXPECT_EQ(first["request_count"]["avg"].GetInt64(), 3);
  EXPECT_STREQ(first["request_latency"]["unit"].GetString(), "ms");
  EXPECT_TRUE(first["request_latency"].HasMember("p99"));
  EXPECT_FALSE(d["timeslices"][1]["is_complete"].GetBool());
  EXPECT_STREQ(d["input_config"]["model"].GetString(), "m");
  EXPECT_FALSE(exporters::render_timeslices_json(slices, {"id", "[1]", false}));
}

TEST(timeslices_csv, tidy_rows_per_window_metric_and_stat) {
  std::vector<metrics::timeslice> slices(2);
  slices[0] = {1'000, 2'000, true, small_run(), 3, 1};
  slices[1] = {2'000, 2'500, false, small_run(false), 3, 0};
  auto lines = lines_of(exporters::render_timeslices_csv(slices));
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "Timeslice,Metric,Unit,Stat,Value");
  auto has = [&](const std::string& row) {
    return std::find(lines.begin(), lines.end(), row) != lines.end();
  };
  EXPECT_TRUE(has("0,Request Count,requests,avg,3"));
  EXPECT_TRUE(has("1,Request Count,requests,avg,3"));
  EXPECT_TRUE(has("0,Error Request Count,requests,avg,1"));
  EXPECT_FALSE(has("1,Error Request Count,requests,avg,1"));
  // A distribution has 13 stats, in AIPerf's order.
  std::vector<std::string> stats;
  for (const auto& l : lines)
    if (l.starts_with("0,Request Latency,ms,"))
      stats.push_back(l.substr(21, l.find(',', 21) - 21));
  EXPECT_EQ(stats, (std::vector<std::string>{"avg", "min", "max", "p1", "p5",
                                             "p10", "p25", "p50", "p75", "p90",
                                             "p95", "p99", "std"}));
}

// --profile-export-prefix as AIPerf's OutputConfig: defaults without one,
// P.* with one, a trailing export suffix dropped once.
TEST(export_names, default_names_without_a_prefix) {
  auto n = aiperf::exporters::make_export_names("");
  EXPECT_EQ(n.summary_json, "profile_export_aiperf.json");
  EXPECT_EQ(n.summary_csv, "profile_export_aiperf.csv");
  EXPECT_EQ(n.timeslices_json, "profile_export_aiperf_timeslices.json");
  EXPECT_EQ(n.timeslices_csv, "profile_export_aiperf_timeslices.csv");
  EXPECT_EQ(n.records_jsonl, "profile_export.jsonl");
  EXPECT_EQ(n.raw_jsonl, "profile_export_raw.jsonl");
}

TEST(export_names, a_prefix_names_every_file) {
  auto n = aiperf::exporters::make_export_names("run1");
  EXPECT_EQ(n.summary_json, "run1.json");
  EXPECT_EQ(n.summary_csv, "run1.csv");
  EXPECT_EQ(n.timeslices_json, "run1_timeslices.json");
  EXPECT_EQ(n.timeslices_csv, "run1_timeslices.csv");
  EXPECT_EQ(n.records_jsonl, "run1.jsonl");
  EXPECT_EQ(n.raw_jsonl, "run1_raw.jsonl");
}

TEST(export_names, one_export_suffix_is_dropped) {
  using aiperf::exporters::make_export_names;
  EXPECT_EQ(make_export_names("run1.jsonl").records_jsonl, "run1.jsonl");
  EXPECT_EQ(make_export_names("run1_raw.jsonl").records_jsonl, "run1.jsonl");
  EXPECT_EQ(make_export_names("run1.csv").summary_json, "run1.json");
  EXPECT_EQ(make_export_names("run1_timeslices.json").summary_csv,
            "run1.csv");
  // Only one: "a.json.csv" keeps "a.json".
  EXPECT_EQ(make_export_names("a.json.csv").summary_csv, "a.json.csv");
  // Other dots are part of the name.
  EXPECT_EQ(make_export_names("v1.2").records_jsonl, "v1.2.jsonl");
}

// kube profile renders the table from the downloaded JSON export: it must
// be the table the run itself printed (the real-run check is in
// tests/tools/profile: profile_test.console_table_renders_back_from_the_json_export).
TEST(read_profile_json, renders_the_same_console_table_as_the_summary) {
  for (bool with_error : {true, false}) {
    auto s = small_run(with_error);
    auto text = exporters::render_profile_json(s, {"id", "{}", false});
    ASSERT_TRUE(text);
    auto back = exporters::read_profile_json(*text);
    ASSERT_TRUE(back) << error_message(back.error());
    EXPECT_EQ(exporters::render_console_table(*back),
              exporters::render_console_table(s));
  }
}

TEST(read_profile_json, keeps_the_histogram_note) {
  auto s = small_run();
  s.exact_percentiles = false;
  auto back = exporters::read_profile_json(*exporters::render_profile_json(s, {}));
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->exact_percentiles);
  EXPECT_EQ(exporters::render_console_table(*back), exporters::render_console_table(s));
}

TEST(read_profile_json, refuses_text_that_is_no_json_object) {
  for (std::string_view text : {"", "[1]", "{\"a\":"}) {
    auto back = exporters::read_profile_json(text);
    ASSERT_FALSE(back) << text;
    EXPECT_EQ(error_code(back.error(), exporters::errc::bad_input_config),
              exporters::errc::bad_export);
    EXPECT_NE(error_message(back.error()).find("profile_export_aiperf.json"),
              std::string::npos);
  }
}

TEST(read_profile_json, refuses_a_distribution_missing_a_statistic) {
  auto back = exporters::read_profile_json(
      R"({"request_latency": {"unit": "ms", "avg": 1.0, "count": 3, "min": 1}})");
  ASSERT_FALSE(back);
  EXPECT_NE(error_message(back.error()).find("request_latency"), std::string::npos)
      << error_message(back.error());
  auto no_avg = exporters::read_profile_json(R"({"request_count": {"unit": "requests"}})");
  ASSERT_FALSE(no_avg);
  EXPECT_NE(error_message(no_avg.error()).find("request_count has no numeric avg"),
            std::string::npos);
}
