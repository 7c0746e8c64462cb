#include "actors/benchmark/exporters/exporters.hpp"
#include "actors/benchmark/exporters/json_writer.hpp"
#include "actors/benchmark/metrics/metric_registry.hpp"
#include "proto/utf8.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::exporters {

namespace {

using namespace detail;

/// A short fixed text in a padded block: copied whole (a few vector
/// moves, no memcpy call), then the writer advances by `size`.
struct fixed_text {
  static constexpr std::size_t capacity = 64;
  std::array<char, capacity> bytes{};
  std::size_t size = 0;

  explicit fixed_text(std::string_view text) : size(text.size()) {
    // A metric tag or unit of the registry grew past the block: a bug that
    // every records-level export would hit, so it stops at once.
    if (text.size() > capacity) {
      std::fprintf(stderr, "internal error: jsonl text longer than %zu bytes: %.*s\n", capacity,
                   static_cast<int>(text.size()), text.data());
      std::abort();
    }
    std::memcpy(bytes.data(), text.data(), text.size());
  }
};

// The jsonl metric order: AIPerf's report order, record metrics only.
// Computed once; the per-line loop then only walks this small table.
struct jsonl_slot {
  const metrics::metric_info* info;
  int record_index; // −1: inter_chunk_latency
  /// The fixed text around the value: `,"<tag>":{"value":` (`[` for the
  /// array) and `,"unit":"<unit>"}`, so a metric costs two copies.
  fixed_text open;
  fixed_text close;
};

const std::vector<jsonl_slot>& slots() {
  static const auto table = [] {
    std::vector<jsonl_slot> t;
    for (const auto& m : metrics::all_metrics()) {
      if (m.kind != metrics::metric_kind::record)
        continue;
      auto rm = metrics::find_record_metric(m.tag);
      std::string open = ",\"";
      open += m.tag;
      open += rm ? "\":{\"value\":" : "\":{\"value\":[";
      std::string close = ",\"unit\":";
      append_json_string(close, m.unit);
      close += '}';
      t.push_back(jsonl_slot{&m, rm ? static_cast<int>(*rm) : -1,
                             fixed_text{open}, fixed_text{close}});
    }
    return t;
  }();
  return table;
}

/// Whether `s` holds a byte JSON must escape (control, '"', '\\') or one
/// that needs a UTF-8 check (>= 0x80): eight bytes per step (the ids are
/// 10-40 bytes).
bool needs_escape(std::string_view s) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101ull;
  constexpr std::uint64_t highs = 0x8080808080808080ull;
  // Some byte of x is zero exactly when (x - ones) & ~x & highs != 0; a
  // byte is below 0x20 exactly when only bits 0-4 can be set in it.
  auto any_zero = [](std::uint64_t x) { return ((x - ones) & ~x & highs) != 0; };
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t x;
    std::memcpy(&x, s.data() + i, 8);
    if ((x & highs) != 0 || any_zero(x & (0xE0 * ones))
        || any_zero(x ^ ('"' * ones))
        || any_zero(x ^ ('\\' * ones)))
      return true;
  }
  for (; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80)
      return true;
  }
  return false;
}

// Collects a line's bounded pieces (punctuation, numbers, registry tags
// and units) in a stack buffer and hands them to the output string in a
// few large appends instead of ~100 small ones per line.
class line_writer {
public:
  static constexpr std::size_t capacity = 4096;

  explicit line_writer(std::string& out) : out_(out) {}
  line_writer(const line_writer&) = delete;
  line_writer& operator=(const line_writer&) = delete;
  ~line_writer() { flush(); }

  /// Returns room for `n` (<= capacity) more bytes; `advance` takes the end.
  [[gnu::always_inline]] char* room(std::size_t n) {
    if (n > buf_.size() - used_)
      flush();
    return buf_.data() + used_;
  }
  [[gnu::always_inline]] void advance(char* end) {
    used_ = static_cast<std::size_t>(end - buf_.data());
  }
  [[gnu::always_inline]] void put(std::string_view s) {
    if (s.size() > buf_.size() / 4) {
      flush();
      out_.append(s);
      return;
    }
    auto* p = room(s.size());
    std::memcpy(p, s.data(), s.size());
    advance(p + s.size());
  }
  [[gnu::always_inline]] void put(char c) { *room(1) = c, ++used_; }
  /// `t` (or all of it but the first `skip` bytes).
  [[gnu::always_inline]] void put(const fixed_text& t, std::size_t skip = 0) {
    auto* p = room(fixed_text::capacity);
    std::memcpy(p, t.bytes.data(), fixed_text::capacity);
    if (skip != 0) // rare: the first metric drops its comma
      std::memmove(p, p + skip, t.size - skip);
    advance(p + t.size - skip);
  }
  void put_int(std::int64_t v) { advance(write_json_int(room(max_number_chars), v)); }
  void put_scaled(double base, double per) {
    advance(write_json_scaled(room(max_number_chars), base, per));
  }
  void put_nullable_ns(std::int64_t v) {
    if (v == 0)
      put("null");
    else
      put_int(v);
  }
  /// Quoted and escaped like append_json_string; returns how many
  /// ill-formed UTF-8 sequences became U+FFFD.
  std::size_t put_string(std::string_view s) {
    if (needs_escape(s)) {
      flush();
      return append_json_string(out_, s);
    }
    put('"');
    put(s);
    put('"');
    return 0;
  }
  void flush() {
    out_.append(buf_.data(), used_);
    used_ = 0;
  }

private:
  std::string& out_;
  std::size_t used_ = 0;
  std::array<char, capacity> buf_;
};

/// ICL values written per call: their room must fit line_writer's buffer.
constexpr std::size_t icl_run = 64;
static_assert(icl_run * (max_number_chars + 1) + 1 <= line_writer::capacity);

} // namespace

void append_jsonl_line(std::string& out, const proto::metric_record& r) {
  line_writer w{out};
  // Ill-formed UTF-8 replaced on this line: the error's text is written
  // after the metadata, so it is counted first.
  std::size_t replaced = r.has_error ? utf8::count_invalid(r.error.type)
                                           + utf8::count_invalid(r.error.message)
                                     : 0;
  w.put("{\"metadata\":{\"session_num\":");
  w.put_int(r.session_num);
  w.put(",\"x_request_id\":");
  replaced += w.put_string(r.x_request_id);
  w.put(",\"x_correlation_id\":");
  replaced += w.put_string(r.x_correlation_id);
  w.put(",\"conversation_id\":");
  replaced += w.put_string(r.conversation_id);
  w.put(",\"turn_index\":");
  w.put_int(r.turn_index);
  w.put(",\"credit_issued_ns\":");
  w.put_int(r.credit_issued_ns);
  w.put(",\"request_start_ns\":");
  w.put_int(r.request_start_ns);
  w.put(",\"request_ack_ns\":");
  w.put_nullable_ns(r.request_ack_ns);
  w.put(",\"request_end_ns\":");
  w.put_int(r.request_end_ns);
  w.put(",\"worker_id\":");
  replaced += w.put_string(r.worker_id);
  w.put(",\"record_processor_id\":");
  replaced += w.put_string(r.record_processor_id);
  w.put(",\"benchmark_phase\":\"");
  w.put(proto::to_string(r.phase));
  w.put("\",\"was_cancelled\":");
  w.put(r.was_cancelled ? "true" : "false");
  w.put(",\"cancellation_time_ns\":");
  w.put_nullable_ns(r.cancellation_time_ns);
  // Our addition to AIPerf's metadata, only on the records it concerns.
  if (r.stream_ignored)
    w.put(",\"stream_ignored\":true");
  if (replaced != 0) {
    w.put(",\"invalid_utf8_replaced\":");
    w.put_int(static_cast<std::int64_t>(replaced));
  }
  w.put("},\"metrics\":{");
  bool first = true;
  for (const auto& slot : slots()) {
    const auto& m = *slot.info;
    const std::size_t skip = first ? 1 : 0; // the first metric has no comma
    if (slot.record_index < 0) {
      if (r.inter_chunk_latency.empty())
        continue;
      w.put(slot.open, skip);
      // In runs of values that fit the writer's buffer (OSL can be long).
      std::span<const std::int64_t> rest{r.inter_chunk_latency};
      while (!rest.empty()) {
        auto run = rest.first(std::min(rest.size(), icl_run));
        rest = rest.subspan(run.size());
        auto* p = w.room(run.size() * (max_number_chars + 1));
        p = write_json_scaled_list(p, run, m.base_per_display);
        if (!rest.empty())
          *p++ = ',';
        w.advance(p);
      }
      w.put(']');
    } else {
      auto i = static_cast<std::size_t>(slot.record_index);
      if (!r.has(i))
        continue;
      w.put(slot.open, skip);
      w.put_scaled(r.values[i], m.base_per_display);
    }
    w.put(slot.close);
    first = false;
  }
  w.put("},\"error\":");
  if (r.has_error) {
    w.put("{\"code\":");
    w.put_int(r.error.code);
    w.put(",\"type\":");
    w.put_string(r.error.type);
    w.put(",\"message\":");
    w.put_string(r.error.message);
    w.put('}');
  } else {
    w.put("null");
  }
  w.put("}\n");
}

} // namespace aiperf::exporters
