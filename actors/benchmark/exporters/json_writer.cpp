#include "actors/benchmark/exporters/json_writer.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

namespace aiperf::exporters::detail {

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t run = 0; // start of the pending run that needs no escaping
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\')
      continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
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
}

char* write_json_double(char* p, double v) noexcept {
  if (!std::isfinite(v)) {
    std::memcpy(p, "null", 4);
    return p + 4;
  }
  return std::to_chars(p, p + max_number_chars, v).ptr;
}

char* write_json_int(char* p, std::int64_t v) noexcept {
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
  p = std::to_chars(p, p + max_number_chars, magnitude / unit).ptr;
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

char* write_json_scaled(char* p, double base, double base_per_display) noexcept {
  int shift = scale_shift(base_per_display);
  if (shift < 0 || base != std::trunc(base) || std::abs(base) >= exact_limit)
    return write_json_double(p, base / base_per_display);
  return write_scaled_int(p, static_cast<std::int64_t>(base), shift);
}

char* write_json_scaled(char* p, std::int64_t base,
                        double base_per_display) noexcept {
  int shift = scale_shift(base_per_display);
  constexpr auto exact = static_cast<std::int64_t>(exact_limit);
  if (shift < 0 || base <= -exact || base >= exact)
    return write_json_double(p, static_cast<double>(base) / base_per_display);
  return write_scaled_int(p, base, shift);
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
