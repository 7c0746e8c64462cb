#include "k8s/sim/cel/format.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace aiperf::k8s::cel {

std::string go_format_g(double v) {
  if (std::isnan(v))
    return "NaN";
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  if (v == 0)
    return std::signbit(v) ? "-0" : "0";
  // Shortest round-trip digits, then Go's choice between %e and %f.
  char buf[64];
  auto [end, ec]
      = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  (void)ec;
  std::string sci{buf, end};
  bool negative = sci[0] == '-';
  if (negative)
    sci.erase(0, 1);
  auto e = sci.find('e');
  std::string digits = sci.substr(0, e);
  if (digits.size() > 1)
    digits.erase(1, 1); // the '.'
  int exp = std::atoi(sci.c_str() + e + 1);
  std::string out = negative ? "-" : "";
  if (exp < -4 || exp >= 6) { // %e: the shortest form decides at 6
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += exp < 0 ? '-' : '+';
    int a = std::abs(exp);
    if (a < 10)
      out += '0';
    out += std::to_string(a);
    return out;
  }
  if (exp < 0) {
    out += "0.";
    out += std::string(static_cast<std::size_t>(-exp - 1), '0');
    out += digits;
    return out;
  }
  auto point = static_cast<std::size_t>(exp + 1);
  if (digits.size() <= point) {
    out += digits + std::string(point - digits.size(), '0');
  } else {
    out += digits.substr(0, point) + "." + digits.substr(point);
  }
  return out;
}

std::regex go_regex(std::string_view pattern) {
  auto flags = std::regex::ECMAScript;
  if (pattern.size() >= 4 && pattern.substr(0, 2) == "(?") {
    auto close = pattern.find(')');
    auto inline_flags
        = pattern.substr(2, close == std::string_view::npos ? 0 : close - 2);
    if (close != std::string_view::npos && !inline_flags.empty()
        && inline_flags.find_first_not_of("ims") == std::string_view::npos) {
      if (inline_flags.find('i') != std::string_view::npos)
        flags |= std::regex::icase;
      if (inline_flags.find('m') != std::string_view::npos)
        flags |= std::regex::multiline;
      pattern.remove_prefix(close + 1);
    }
  }
  return std::regex{std::string{pattern}, flags};
}

} // namespace aiperf::k8s::cel
