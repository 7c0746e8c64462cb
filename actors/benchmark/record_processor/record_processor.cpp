#include "actors/benchmark/record_processor/record_processor.hpp"
#include "proto/benchmark_errors.hpp"
#include "proto/utf8.hpp"

#include "actors/benchmark/metrics/compute_metrics.hpp"
#include "runtime/io/durable_file.hpp"
#include "runtime/log/log.hpp"

#include <caf/all.hpp>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <optional>

namespace aiperf::record_processor {

using namespace proto;

namespace {

using writer_type = rapidjson::Writer<rapidjson::StringBuffer>;

/// `s` as a JSON string; ill-formed UTF-8 (server bytes) becomes U+FFFD so
/// the line stays valid JSON. The writer does not check: ASCII is the
/// common case and is scanned eight bytes per step.
void write_string(writer_type& w, std::string_view s) {
  if (utf8::count_invalid(s) != 0) {
    auto clean = utf8::replace_invalid(s);
    w.String(clean.data(), static_cast<rapidjson::SizeType>(clean.size()));
    return;
  }
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

/// The ill-formed UTF-8 sequences of `rec`'s texts that the raw line
/// replaces (they are counted in its metadata, which comes first).
std::size_t invalid_utf8(const request_record& rec,
                         std::string_view processor_id) {
  std::size_t n = utf8::count_invalid(rec.x_request_id)
                  + utf8::count_invalid(rec.x_correlation_id)
                  + utf8::count_invalid(rec.conversation_id)
                  + utf8::count_invalid(rec.worker_id)
                  + utf8::count_invalid(processor_id)
                  + utf8::count_invalid(rec.payload);
  for (const auto* headers : {&rec.request_headers, &rec.response_headers})
    for (const auto& h : *headers)
      n += utf8::count_invalid(h);
  for (const auto& r : rec.raw_responses)
    n += utf8::count_invalid(r.text) + utf8::count_invalid(r.comment);
  if (rec.has_error)
    n += utf8::count_invalid(rec.error.type)
         + utf8::count_invalid(rec.error.message);
  return n;
}

/// "Name: value" pairs as a JSON object.
void write_headers(writer_type& w, const std::vector<std::string>& headers) {
  w.StartObject();
  for (auto& h : headers) {
    auto colon = h.find(':');
    std::string_view name{h.data(), colon == std::string::npos ? h.size()
                                                               : colon};
    std::string_view value;
    if (colon != std::string::npos) {
      value = std::string_view{h}.substr(colon + 1);
      while (!value.empty() && value.front() == ' ')
        value.remove_prefix(1);
    }
    write_string(w, name);
    write_string(w, value);
  }
  w.EndObject();
}

} // namespace

void append_raw_line(std::string& out, const request_record& rec,
                     std::string_view processor_id) {
  const auto replaced = invalid_utf8(rec, processor_id);
  rapidjson::StringBuffer buf;
  writer_type w{buf};
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.Key("session_num");
  w.Uint(rec.session_num);
  w.Key("x_request_id");
  write_string(w, rec.x_request_id);
  w.Key("x_correlation_id");
  write_string(w, rec.x_correlation_id);
  w.Key("conversation_id");
  write_string(w, rec.conversation_id);
  w.Key("turn_index");
  w.Uint(rec.turn_index);
  w.Key("worker_id");
  write_string(w, rec.worker_id);
  w.Key("record_processor_id");
  write_string(w, processor_id);
  w.Key("benchmark_phase");
  w.String(to_string(rec.phase));
  w.Key("was_cancelled");
  w.Bool(rec.was_cancelled);
  // Our addition to AIPerf's metadata, only on the lines it concerns.
  if (replaced != 0) {
    w.Key("invalid_utf8_replaced");
    w.Uint64(replaced);
  }
  w.EndObject();
  w.Key("start_perf_ns");
  w.Int64(rec.request_start_ns);
  w.Key("payload");
  // The exact body sent: embedded as JSON when it is JSON.
  // Ill-formed UTF-8 in it: written as a (replaced) string instead.
  rapidjson::Document body;
  bool embedded = false;
  if (!rec.payload.empty() && utf8::count_invalid(rec.payload) == 0) {
    body.Parse(rec.payload.data(), rec.payload.size());
    embedded = !body.HasParseError();
  }
  if (embedded)
    body.Accept(w);
  else
    write_string(w, rec.payload);
  w.Key("request_headers");
  write_headers(w, rec.request_headers);
  w.Key("status");
  w.Int(rec.http_status);
  w.Key("response_headers");
  write_headers(w, rec.response_headers);
  w.Key("responses");
  w.StartArray();
  for (auto& r : rec.raw_responses) {
    w.StartObject();
    w.Key("perf_ns");
    w.Int64(r.perf_ns);
    w.Key("text");
    write_string(w, r.text);
    if (!r.comment.empty()) {
      w.Key("comment");
      write_string(w, r.comment);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("error");
  if (rec.has_error) {
    w.StartObject();
    w.Key("code");
    w.Int(rec.error.code);
    w.Key("type");
    write_string(w, rec.error.type);
    w.Key("message");
    write_string(w, rec.error.message);
    w.EndObject();
  } else {
    w.Null();
  }
  w.EndObject();
  out.append(buf.GetString(), buf.GetSize());
  out.push_back('\n');
}

namespace {

struct processor_state {
  static inline const char* name = "record_processor";
  processor_config cfg;
  records_manager_actor records;
  std::optional<io::durable_writer> raw;
  std::string line;
};

record_processor_actor::behavior_type
processor_impl(record_processor_actor::stateful_pointer<processor_state> self,
               processor_config cfg, records_manager_actor records) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.records = std::move(records);
  if (!st.cfg.raw_part_path.empty())
    st.raw.emplace(st.cfg.raw_part_path);
  return {
    [=](request_record_batch& batch) {
      auto& st = self->state;
      metric_record_batch out;
      out.records.reserve(batch.records.size());
      for (auto& rec : batch.records) {
        if (!st.raw) {
          // Nothing reads the record afterwards: its ids move over.
          out.records.push_back(metrics::compute_metrics(
            std::move(rec), st.cfg.options, st.cfg.processor_id));
          continue;
        }
        out.records.push_back(
          metrics::compute_metrics(rec, st.cfg.options, st.cfg.processor_id));
        st.line.clear();
        append_raw_line(st.line, rec, st.cfg.processor_id);
        st.raw->append(st.line);
      }
      self->send(st.records, std::move(out));
    },
    [=](finalize_atom) -> caf::result<std::string> {
      auto& st = self->state;
      if (!st.raw)
        return std::string{};
      auto path = st.raw->target().string();
      auto done = st.raw->commit();
      st.raw.reset();
      if (!done)
        return make_error(benchmark::errc::export_failed, error_message(done.error()));
      return path;
    },
  };
}

} // namespace

record_processor_actor spawn_record_processor(caf::actor_system& sys,
                                              processor_config cfg,
                                              records_manager_actor records) {
  return sys.spawn(processor_impl, std::move(cfg), std::move(records));
}

} // namespace aiperf::record_processor
