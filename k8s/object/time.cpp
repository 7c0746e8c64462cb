#include "k8s/object/time.hpp"

#include "k8s/errors/errors.hpp"

#include <charconv>
#include <cstdio>
#include <ctime>

namespace aiperf::k8s {

namespace {

std::tm utc_of(std::int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return tm;
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil), so parsing needs no time zone state.
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool digits(std::string_view text, std::size_t pos, std::size_t n, int& out) {
  if (pos + n > text.size())
    return false;
  auto [ptr, ec]
      = std::from_chars(text.data() + pos, text.data() + pos + n, out);
  return ec == std::errc{} && ptr == text.data() + pos + n;
}

} // namespace

std::string format_time(std::int64_t unix_seconds) {
  auto tm = utc_of(unix_seconds);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec);
  return buf;
}

std::string format_micro_time(std::int64_t unix_ns) {
  auto seconds = floor_div(unix_ns, 1'000'000'000);
  auto micros = (unix_ns - seconds * 1'000'000'000) / 1000;
  auto tm = utc_of(seconds);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<long long>(micros));
  return buf;
}

caf::expected<std::int64_t> parse_time(std::string_view text) {
  auto bad = [&] {
    std::string message = "not an RFC 3339 time: \"";
    message.append(text);
    message += "\" (write it as 2006-01-02T15:04:05Z)";
    return make_error(errc::invalid, std::move(message));
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits(text, 0, 4, year) || text.size() < 20 || text[4] != '-'
      || !digits(text, 5, 2, month) || text[7] != '-'
      || !digits(text, 8, 2, day) || (text[10] != 'T' && text[10] != 't')
      || !digits(text, 11, 2, hour) || text[13] != ':'
      || !digits(text, 14, 2, minute) || text[16] != ':'
      || !digits(text, 17, 2, second))
    return bad();
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59
      || second > 60)
    return bad();
  std::size_t pos = 19;
  std::int64_t nanos = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::int64_t scale = 100'000'000;
    std::size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      nanos += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start)
      return bad();
  }
  std::int64_t offset = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int oh = 0, om = 0;
    if (!digits(text, pos + 1, 2, oh) || pos + 3 >= text.size()
        || text[pos + 3] != ':' || !digits(text, pos + 4, 2, om))
      return bad();
    offset = (oh * 3600 + om * 60) * (text[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return bad();
  }
  if (pos != text.size())
    return bad();
  auto days = days_from_civil(year, static_cast<unsigned>(month),
                              static_cast<unsigned>(day));
  auto seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset;
  return seconds * 1'000'000'000 + nanos;
}

} // namespace aiperf::k8s
