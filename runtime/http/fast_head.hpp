// A fast path for the response heads benchmarks see nearly every time:
// "HTTP/1.1 200 OK", a handful of plain fields and a Content-Length body
// (static servers such as nginx). Beast's basic_parser costs ~4k
// instructions per head (field enum lookups, list validation); this scan
// costs a few hundred. It accepts only a strict subset of what Beast accepts
// and answers everything else with "not mine", so the client hands those
// bytes, untouched, to Beast: the fast path never has to be a complete
// HTTP/1.1 parser to be exact.
#pragma once

#include "runtime/http/client.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace aiperf::http {

/// What parse_fast_head() read; views point into the parsed bytes.
struct fast_head {
  int status = 0;
  /// Bytes of the head, status line through the blank line's CRLF.
  std::size_t size = 0;
  /// The body's length (the head always has exactly one Content-Length).
  std::uint64_t content_length = 0;
  /// Content-Type's value (trimmed), empty when absent.
  std::string_view content_type;
  /// Fields stored in the caller's span (at most its size; further fields
  /// are checked but not stored).
  std::size_t field_count = 0;
};

/// Parses a complete response head at the start of `bytes` when it has the
/// common shape: "HTTP/1.1 " + 3-digit status (200..599 except 204, 304) +
/// SP + reason, CRLF line ends, fields `token ":" OWS value OWS` of visible
/// characters (SP/HTAB inside), exactly one Content-Length of digits, no
/// Transfer-Encoding, no Connection other than "keep-alive", no obs-fold.
/// Field names and values (trimmed, as Beast trims them) go into `fields`.
/// Returns nullopt for any other shape or an incomplete head: the caller
/// then parses the same bytes with Beast. A connection answered this way
/// stays reusable (HTTP/1.1 keep-alive).
[[nodiscard]] std::optional<fast_head>
parse_fast_head(std::string_view bytes, std::span<header_view> fields) noexcept;

} // namespace aiperf::http
