#include "actors/benchmark/exporters/json_writer.hpp"
#include "proto/utf8.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

namespace aiperf::exporters::detail {

std::size_t append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  const auto* bytes = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t replaced = 0;
  out.push_back('"');
  std::size_t run = 0; // start of the pending run that needs no escaping
  for (std::size_t i = 0; i < s.size();) {
    auto c = bytes[i];
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      auto seq = utf8::decode(bytes + i, s.size() - i);
      if (!seq.valid) {
        out.append(s.data() + run, i - run);
        out += "\\ufffd";
        ++replaced;
        run = i + seq.length;
      }
      i += seq.length;
      continue;
    }
    out.append(s.data() + run, i - run);
    run = ++i;
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      out += "\\u00";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 0xf]);
    }
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
  return replaced;
}

char* write_json_double(char* p, double v) noexcept {
  if (!std::isfinite(v)) {
    std::memcpy(p, "null", 4);
    return p + 4;
  }
  return std::to_chars(p, p + max_number_chars, v).ptr;
}

namespace {

/// The decimal places of `base_per_display` when it is 1, 1e6 or 1e9 (the
/// scales written by moving the decimal point), else -1.
int scale_shift(double base_per_display) noexcept {
  return base_per_display == 1.0   ? 0
         : base_per_display == 1e6 ? 6
         : base_per_display == 1e9 ? 9
                                   : -1;
}

/// "00" "01" ... "99": two digits per division.
constexpr std::array<char, 200> digit_pairs = [] {
  std::array<char, 200> t{};
  for (int i = 0; i < 100; ++i) {
    t[2 * i] = static_cast<char>('0' + i / 10);
    t[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return t;
}();

/// The 8 digits of `v` < 10^8, zero-padded, at `p`: 32-bit arithmetic,
/// two digits per step.
void write_8_digits(char* p, std::uint32_t v) noexcept {
  const std::uint32_t hi = v / 10'000;
  const std::uint32_t lo = v % 10'000;
  std::memcpy(p, &digit_pairs[2 * (hi / 100)], 2);
  std::memcpy(p + 2, &digit_pairs[2 * (hi % 100)], 2);
  std::memcpy(p + 4, &digit_pairs[2 * (lo / 100)], 2);
  std::memcpy(p + 6, &digit_pairs[2 * (lo % 100)], 2);
}

/// `v` < 10^8 without leading zeros.
char* write_leading_digits(char* p, std::uint32_t v) noexcept {
  const int n = v < 10           ? 1
                : v < 100        ? 2
                : v < 1'000      ? 3
                : v < 10'000     ? 4
                : v < 100'000    ? 5
                : v < 1'000'000  ? 6
                : v < 10'000'000 ? 7
                                 : 8;
  char* q = p + n;
  while (v >= 100) {
    q -= 2;
    std::memcpy(q, &digit_pairs[2 * (v % 100)], 2);
    v /= 100;
  }
  if (v >= 10)
    std::memcpy(q - 2, &digit_pairs[2 * v], 2);
  else
    q[-1] = static_cast<char>('0' + v);
  return p + n;
}

/// `u` in decimal: at most three 8-digit chunks (the ns stamps have 19
/// digits), each in 32-bit arithmetic, instead of one 64-bit division per
/// digit pair.
char* write_uint(char* p, std::uint64_t u) noexcept {
  constexpr std::uint64_t e8 = 100'000'000;
  constexpr std::uint64_t e16 = e8 * e8;
  if (u < e8)
    return write_leading_digits(p, static_cast<std::uint32_t>(u));
  if (u < e16) {
    p = write_leading_digits(p, static_cast<std::uint32_t>(u / e8));
    write_8_digits(p, static_cast<std::uint32_t>(u % e8));
    return p + 8;
  }
  const auto rest = u % e16;
  p = write_leading_digits(p, static_cast<std::uint32_t>(u / e16));
  write_8_digits(p, static_cast<std::uint32_t>(rest / e8));
  write_8_digits(p + 8, static_cast<std::uint32_t>(rest % e8));
  return p + 16;
}

/// Whole `base` at a scale with a shift: the decimal point moved.
char* write_scaled_int(char* p, std::int64_t base, int shift) noexcept {
  if (shift == 0)
    return write_json_int(p, base);
  if (base == 0) { // bursts of events read at once: common enough
    std::memcpy(p, "0.0", 3);
    return p + 3;
  }
  // Integer part, then the fraction without trailing zeros ("4.0" at least).
  auto magnitude = static_cast<std::uint64_t>(base);
  if (base < 0) {
    *p++ = '-';
    magnitude = 0 - magnitude;
  }
  const std::uint64_t unit = shift == 6 ? 1'000'000 : 1'000'000'000;
  auto fraction = magnitude % unit;
  p = write_uint(p, magnitude / unit);
  *p++ = '.';
  if (fraction == 0) {
    *p++ = '0';
    return p;
  }
  // The fraction's `shift` digits, zero-padded, written two at a time from
  // the right into the caller's room (which holds max_number_chars).
  char* end = p + shift;
  char* q = end;
  if (shift % 2 != 0) {
    *--q = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  while (q != p) {
    q -= 2;
    std::memcpy(q, &digit_pairs[2 * (fraction % 100)], 2);
    fraction /= 100;
  }
  while (end[-1] == '0')
    --end;
  return end;
}

/// Below 2^53: whole numbers are exact as doubles.
constexpr double exact_limit = 9.0e15;

} // namespace

char* write_json_int(char* p, std::int64_t v) noexcept {
  auto magnitude = static_cast<std::uint64_t>(v);
  if (v < 0) {
    *p++ = '-';
    magnitude = 0 - magnitude;
  }
  return write_uint(p, magnitude);
}

char* write_json_scaled(char* p, double base, double base_per_display) noexcept {
  int shift = scale_shift(base_per_display);
  if (shift < 0 || base != std::trunc(base) || std::abs(base) >= exact_limit)
    return write_json_double(p, base / base_per_display);
  return write_scaled_int(p, static_cast<std::int64_t>(base), shift);
}

namespace {

/// write_json_scaled for an integer base, the scale's shift known.
[[gnu::always_inline]] inline char*
write_scaled(char* p, std::int64_t base, double base_per_display,
             int shift) noexcept {
  constexpr auto exact = static_cast<std::int64_t>(exact_limit);
  if (shift < 0 || base <= -exact || base >= exact)
    return write_json_double(p, static_cast<double>(base) / base_per_display);
  return write_scaled_int(p, base, shift);
}

} // namespace

char* write_json_scaled(char* p, std::int64_t base,
                        double base_per_display) noexcept {
  return write_scaled(p, base, base_per_display, scale_shift(base_per_display));
}

char* write_json_scaled_list(char* p, std::span<const std::int64_t> values,
                             double base_per_display) noexcept {
  // One scale for the whole list: its shift is looked up once.
  const int shift = scale_shift(base_per_display);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0)
      *p++ = ',';
    p = write_scaled(p, values[i], base_per_display, shift);
  }
  return p;
}

void append_json_double(std::string& out, double v) {
  char buf[max_number_chars];
  out.append(buf, write_json_double(buf, v));
}

void append_json_int(std::string& out, std::int64_t v) {
  char buf[max_number_chars];
  out.append(buf, write_json_int(buf, v));
}

void append_json_scaled(std::string& out, double base,
                        double base_per_display) {
  char buf[max_number_chars];
  out.append(buf, write_json_scaled(buf, base, base_per_display));
}

void append_fixed(std::string& out, double v, int decimals) {
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v,
                                 std::chars_format::fixed, decimals);
  if (ec != std::errc{}) {
    out += "nan";
    return;
  }
  out.append(buf, ptr);
}

} // namespace aiperf::exporters::detail
