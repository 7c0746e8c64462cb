#include "actors/benchmark/exporters/exporters.hpp"
#include "actors/benchmark/exporters/json_writer.hpp"
#include "actors/benchmark/metrics/metric_registry.hpp"

#include <cmath>
#include <vector>

namespace aiperf::exporters {

namespace {

using namespace detail;

// The jsonl metric order: AIPerf's report order, record metrics only.
// Computed once; the per-line loop then only walks this small table.
struct jsonl_slot {
  const metrics::metric_info* info;
  int record_index; // −1: inter_chunk_latency
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
    append_json_int(out, v);
}

void append_unit(std::string& out, std::string_view unit) {
  out += ",\"unit\":";
  append_json_string(out, unit);
  out += '}';
}

} // namespace

void append_jsonl_line(std::string& out, const proto::metric_record& r) {
  out += "{\"metadata\":{\"session_num\":";
  append_json_int(out, r.session_num);
  out += ",\"x_request_id\":";
  append_json_string(out, r.x_request_id);
  out += ",\"x_correlation_id\":";
  append_json_string(out, r.x_correlation_id);
  out += ",\"conversation_id\":";
  append_json_string(out, r.conversation_id);
  out += ",\"turn_index\":";
  append_json_int(out, r.turn_index);
  out += ",\"credit_issued_ns\":";
  append_json_int(out, r.credit_issued_ns);
  out += ",\"request_start_ns\":";
  append_json_int(out, r.request_start_ns);
  out += ",\"request_ack_ns\":";
  append_nullable_ns(out, r.request_ack_ns);
  out += ",\"request_end_ns\":";
  append_json_int(out, r.request_end_ns);
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
        append_json_scaled(out, r.inter_chunk_latency[i], m.base_per_display);
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
      append_json_scaled(out, v, m.base_per_display);
    }
    append_unit(out, m.unit);
    first = false;
  }
  out += "},\"error\":";
  if (r.has_error) {
    out += "{\"code\":";
    append_json_int(out, r.error.code);
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

} // namespace aiperf::exporters
