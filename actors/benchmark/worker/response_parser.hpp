// Pulls what the metrics need out of one OpenAI-compatible response message
// (an SSE event's data or a whole non-streaming body): the content and
// reasoning text, `usage`, and whether the server reported an error.
//
// Three paths with identical results. The cheapest: a stream's chunks
// usually differ only in their content string, so after a chunk whose only
// output was that string, the parser keeps its bytes before and after it as a
// template; a later chunk with the same bytes around a (valid) string
// differs from it in that string alone, so the scan would give that string
// and nothing else. Next, a targeted scanner that walks the bytes once,
// decoding only the strings it returns, and RapidJSON (a full DOM) as the
// authority. The scanner handles the shapes servers really send and
// hands anything else (error objects, odd number forms, surrogate misuse,
// invalid JSON, embeddings) to RapidJSON, so it never has to be a complete
// JSON validator to be exact.
#pragma once

#include "proto/records.hpp"
#include "proto/worker.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace aiperf::worker {

namespace detail {

/// Bytes that end a run of plain string characters: '"', '\\', controls.
inline constexpr std::array<bool, 256> string_stops = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c)
    t[c] = true;
  t['"'] = true;
  t['\\'] = true;
  return t;
}();

/// Returns the first byte in [p, end) that ends a plain string run, or end.
/// Strings are most of a message's bytes: 16 at a time where SSE2 exists.
inline const char* skip_plain(const char* p, const char* end) noexcept {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i control_max = _mm_set1_epi8(0x1F);
  while (end - p >= 16) {
    auto v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Unsigned v <= 0x1F exactly when min(v, 0x1F) == v.
    auto stop = _mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
      _mm_cmpeq_epi8(_mm_min_epu8(v, control_max), v));
    if (auto mask = _mm_movemask_epi8(stop); mask != 0)
      return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (p < end && !string_stops[static_cast<unsigned char>(*p)])
    ++p;
  return p;
}

} // namespace detail

/// What one message carried. The views point into the parsed text or the
/// parser's scratch buffer: valid until the next parse() and while the text
/// lives.
struct message_fields {
  std::string_view content;
  std::string_view reasoning;
  bool has_usage = false;
  proto::usage_counts usage;
  /// `{"error": ...}` object; `error_message` holds its message.
  bool is_error = false;
  std::string_view error_message;
  /// Embeddings: the body had a `data` array (a response, without text).
  bool has_embedding = false;

  friend bool operator==(const message_fields&,
                         const message_fields&) noexcept = default;
};

/// Outcome of the targeted scanner alone.
enum class scan_result : std::uint8_t {
  ok,       ///< `out` is filled exactly as the DOM path would fill it
  fallback, ///< unexpected shape or invalid JSON: ask the DOM path
};

/// Reusable parser (one per request context; not thread-safe). Chat reads
/// `choices[0].delta` (streaming) or `choices[0].message` (`content`, and
/// `reasoning_content` or `reasoning`); completions read `choices[0].text`;
/// `usage` is read at the top level for every kind.
class response_parser {
public:
  /// Parses `json` (template, then scanner, RapidJSON when it declines).
  /// Returns
  /// false when it is not valid JSON (the caller records a protocol error
  /// naming the bad message).
  [[nodiscard]] bool parse(std::string_view json, proto::endpoint_kind kind,
                           message_fields& out);

  /// The template path for a whole SSE block: when [first, last) starts
  /// with `data: <message>\n\n` and the message matches the template,
  /// sets `content` (parse() would give that content and nothing else) and
  /// returns the end of the block (after the blank line); else nullptr.
  /// Such a block is exactly one event whose data is the message, so an SSE
  /// parser may hand it over whole (see sse::sse_parser's shortcut) and skip
  /// its line loop. When the bytes after the block already start the next
  /// template block, they are compared in the same pass and the next call
  /// skips that head if it is for exactly that block: the parser's next
  /// call always is, since it offers each block as soon as the last ends.
  [[nodiscard]] const char* match_data_block(const char* first,
                                             const char* last,
                                             proto::endpoint_kind kind,
                                             std::string_view& content);

  /// The targeted scanner only (exposed for cross-checks and benchmarks);
  /// a message it accepts may become the template.
  [[nodiscard]] scan_result scan(std::string_view json,
                                 proto::endpoint_kind kind,
                                 message_fields& out);

  /// The RapidJSON path only (exposed for cross-checks and benchmarks).
  [[nodiscard]] bool parse_dom(std::string_view json,
                               proto::endpoint_kind kind, message_fields& out);

  /// Messages the scanner handed to RapidJSON so far (diagnostics).
  [[nodiscard]] std::uint64_t fallbacks() const noexcept { return fallbacks_; }

  /// Messages answered by the template so far (diagnostics, tests).
  [[nodiscard]] std::uint64_t template_hits() const noexcept {
    return template_hits_;
  }

private:
  /// The template path: true when `json` matched it (then `out` is set).
  bool match_template(std::string_view json, proto::endpoint_kind kind,
                      message_fields& out);
  /// The JSON string whose opening quote is at `first + at`: sets
  /// `content` (a view of the input, or of `scratch_` when it has escapes)
  /// and returns the end (after the closing quote), or nullptr.
  const char* string_at(const char* first, const char* last, std::size_t at,
                        std::string_view& content);
  /// The string with escapes at offset `at` (its quote): decoded into
  /// `scratch_`; returns the end of it, or nullptr. Out of the fast path.
  [[gnu::noinline]] const char* decode_string_at(const char* first,
                                                 const char* last,
                                                 std::size_t at,
                                                 std::string_view& content);

  std::string scratch_;
  std::uint64_t fallbacks_ = 0;
  std::uint64_t template_hits_ = 0;
  // Bytes before the content string's opening quote and after its closing
  // quote, of the last scanned message whose only output was that string.
  bool has_template_ = false;
  // Neither part holds CR or LF, so the template's messages fit one line.
  bool template_one_line_ = false;
  // The template as SSE blocks: `data: ` + prefix + the opening quote; and
  // from a closing quote on, suffix + blank line + the next block's head.
  std::string block_head_;
  std::string block_gap_;
  // The block whose head the last match_data_block call compared (as the
  // end of its gap); valid for the very next call only.
  const char* chained_ = nullptr;
  proto::endpoint_kind template_kind_ = proto::endpoint_kind::chat;
  std::string template_prefix_;
  std::string template_suffix_;
};

// -- the per-event path, inline: it runs for nearly every event ------------

inline const char* response_parser::string_at(const char* first,
                                              const char* last,
                                              std::size_t at,
                                              std::string_view& content) {
  const char* text = first + at + 1;
  const char* stop = detail::skip_plain(text, last);
  if (stop != last && *stop == '"') {
    // No escapes (the usual case): a view of the input, no scratch.
    content = {text, static_cast<std::size_t>(stop - text)};
    return stop + 1;
  }
  return decode_string_at(first, last, at, content);
}

inline const char* response_parser::match_data_block(const char* first,
                                                     const char* last,
                                                     proto::endpoint_kind kind,
                                                     std::string_view& content) {
  // "data: " + message + "\n\n" is one block with one data line exactly
  // when the message holds no line break: true of the template's bytes
  // (checked when it was taken) and of a string (raw controls end it).
  const char* chained = std::exchange(chained_, nullptr);
  if (!template_one_line_ || kind != template_kind_)
    return nullptr;
  auto avail = [last](const char* p) {
    return static_cast<std::size_t>(last - p);
  };
  // The block's head (up to the content string's opening quote) was
  // compared already when the previous call's gap reached into it.
  if (first != chained
      && (avail(first) < block_head_.size()
          || std::memcmp(first, block_head_.data(), block_head_.size()) != 0))
    return nullptr;
  const char* after = string_at(first, last, block_head_.size() - 1, content);
  if (after == nullptr)
    return nullptr;
  const std::size_t tail = block_gap_.size() - block_head_.size();
  if (avail(after) >= block_gap_.size()
      && std::memcmp(after, block_gap_.data(), block_gap_.size()) == 0) {
    // This block ends as the template's do and the next one starts so:
    // one compare for both, and the next call (the parser's, for the very
    // next block of these bytes) skips its head.
    chained_ = after + tail;
  } else if (avail(after) < tail
             || std::memcmp(after, block_gap_.data(), tail) != 0) {
    return nullptr;
  }
  ++template_hits_;
  return after + tail;
}

} // namespace aiperf::worker
