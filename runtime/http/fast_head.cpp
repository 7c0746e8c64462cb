#include "runtime/http/fast_head.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace aiperf::http {

namespace {

/// RFC 7230 tchar: the bytes of a field name.
constexpr std::array<bool, 256> token_chars = [] {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c)
    t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c)
    t[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c)
    t[c] = true;
  for (char c : std::string_view{"!#$%&'*+-.^_`|~"})
    t[static_cast<unsigned char>(c)] = true;
  return t;
}();

/// Bytes Beast accepts in a reason phrase or field value: HTAB, SP, VCHAR
/// and obs-text (everything but the other controls and DEL).
constexpr std::array<bool, 256> text_chars = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x100; ++c)
    t[c] = c != 0x7F;
  t['\t'] = true;
  return t;
}();

/// Returns the first byte in [p, end) that is not a text char (the CR
/// ending the line, or a byte that sends the head to Beast), or end. Values
/// and reasons are most of a head's bytes: 16 at a time where SSE2 exists.
inline const char* skip_text(const char* p, const char* end) noexcept {
#if defined(__SSE2__)
  const __m128i control_max = _mm_set1_epi8(0x1F);
  const __m128i tab = _mm_set1_epi8('\t');
  const __m128i del = _mm_set1_epi8(0x7F);
  while (end - p >= 16) {
    auto v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Unsigned v <= 0x1F exactly when min(v, 0x1F) == v; HTAB is text.
    auto control = _mm_cmpeq_epi8(_mm_min_epu8(v, control_max), v);
    auto stop = _mm_or_si128(_mm_andnot_si128(_mm_cmpeq_epi8(v, tab), control),
                             _mm_cmpeq_epi8(v, del));
    if (auto mask = _mm_movemask_epi8(stop); mask != 0)
      return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  while (p < end && text_chars[static_cast<unsigned char>(*p)])
    ++p;
  return p;
}

/// Whether `s` equals `lower` ignoring ASCII case, where `lower` holds only
/// lowercase letters and '-' (the names and the value looked for below) and
/// `s` holds no CR (names are tokens, values stop at controls): then a byte
/// matches exactly when it matches with its 0x20 bit set, eight at a time.
bool iequals_lower(std::string_view s, std::string_view lower) noexcept {
  const std::size_t n = s.size();
  if (n != lower.size())
    return false;
  if (n < 8) {
    for (std::size_t i = 0; i < n; ++i)
      if ((static_cast<unsigned char>(s[i]) | 0x20)
          != static_cast<unsigned char>(lower[i]))
        return false;
    return true;
  }
  constexpr std::uint64_t case_bits = 0x2020202020202020ull;
  auto differ_at = [&](std::size_t i) {
    std::uint64_t a;
    std::uint64_t b;
    std::memcpy(&a, s.data() + i, 8);
    std::memcpy(&b, lower.data() + i, 8);
    return (a | case_bits) != b;
  };
  for (std::size_t i = 0; i + 8 <= n; i += 8)
    if (differ_at(i))
      return false;
  return n % 8 == 0 || !differ_at(n - 8); // the last, overlapping eight
}

bool is_ows(char c) noexcept {
  return c == ' ' || c == '\t';
}

} // namespace

std::optional<fast_head> parse_fast_head(std::string_view bytes,
                                         std::span<header_view> fields) noexcept {
  const char* p = bytes.data();
  const char* end = p + bytes.size();
  // Status line: "HTTP/1.1 " 3DIGIT SP reason CRLF.
  constexpr std::string_view version = "HTTP/1.1 ";
  if (bytes.size() < version.size() + 4
      || std::memcmp(p, version.data(), version.size()) != 0)
    return std::nullopt;
  p += version.size();
  if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9' || p[2] < '0'
      || p[2] > '9' || p[3] != ' ')
    return std::nullopt;
  fast_head out;
  out.status = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
  // 1xx, 204 and 304 have no body whatever Content-Length says; 6xx+ are
  // Beast's business too.
  if (out.status < 200 || out.status > 599 || out.status == 204
      || out.status == 304)
    return std::nullopt;
  p = skip_text(p + 4, end);
  if (end - p < 2 || p[0] != '\r' || p[1] != '\n')
    return std::nullopt;
  p += 2;
  bool has_length = false;
  bool has_type = false;
  for (;;) {
    if (p == end)
      return std::nullopt; // incomplete
    if (*p == '\r') {
      if (end - p < 2 || p[1] != '\n')
        return std::nullopt;
      p += 2;
      break;
    }
    // Field name up to ':' (an OWS or any non-token byte: not ours).
    const char* name_begin = p;
    while (p < end && token_chars[static_cast<unsigned char>(*p)])
      ++p;
    if (p == end || *p != ':' || p == name_begin)
      return std::nullopt;
    std::string_view name{name_begin, static_cast<std::size_t>(p - name_begin)};
    ++p;
    while (p < end && is_ows(*p))
      ++p;
    const char* value_begin = p;
    p = skip_text(p, end);
    // CRLF, and the next line must exist and not be an obs-fold.
    if (end - p < 3 || p[0] != '\r' || p[1] != '\n' || is_ows(p[2]))
      return std::nullopt;
    const char* value_end = p;
    while (value_end > value_begin && is_ows(value_end[-1]))
      --value_end;
    std::string_view value{value_begin,
                           static_cast<std::size_t>(value_end - value_begin)};
    p += 2;
    // Fields that change framing or connection handling, by their length
    // first (most fields are none of these).
    switch (name.size()) {
      case 14:
        if (iequals_lower(name, "content-length")) {
          if (has_length || value.empty() || value.size() > 18)
            return std::nullopt;
          std::uint64_t n = 0;
          for (char c : value) {
            if (c < '0' || c > '9')
              return std::nullopt;
            n = n * 10 + static_cast<std::uint64_t>(c - '0');
          }
          has_length = true;
          out.content_length = n;
        }
        break;
      case 17:
        if (iequals_lower(name, "transfer-encoding"))
          return std::nullopt;
        break;
      case 10:
        if (iequals_lower(name, "connection")
            && !iequals_lower(value, "keep-alive"))
          return std::nullopt;
        break;
      case 16:
        if (iequals_lower(name, "proxy-connection"))
          return std::nullopt;
        break;
      case 12:
        if (iequals_lower(name, "content-type")) {
          if (has_type)
            return std::nullopt; // repeated: leave it to Beast
          has_type = true;
          out.content_type = value;
        }
        break;
      case 7:
        if (iequals_lower(name, "upgrade"))
          return std::nullopt;
        break;
      default:
        break;
    }
    if (out.field_count < fields.size())
      fields[out.field_count] = header_view{name, value};
    ++out.field_count;
  }
  if (!has_length)
    return std::nullopt;
  out.field_count = std::min(out.field_count, fields.size());
  out.size = static_cast<std::size_t>(p - bytes.data());
  return out;
}

} // namespace aiperf::http
