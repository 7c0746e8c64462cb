#include "actors/benchmark/exporters/json_writer.hpp"

#include <charconv>
#include <cmath>

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

void append_json_double(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, ptr);
}

void append_json_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, ptr);
}

void append_json_scaled(std::string& out, double base,
                        double base_per_display) {
  int shift = base_per_display == 1.0   ? 0
              : base_per_display == 1e6 ? 6
              : base_per_display == 1e9 ? 9
                                        : -1;
  constexpr double exact_limit = 9.0e15; // below 2^53: integers exact
  if (shift < 0 || base != std::trunc(base) || std::abs(base) >= exact_limit) {
    append_json_double(out, base / base_per_display);
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
