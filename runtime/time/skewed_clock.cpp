#include "runtime/time/skewed_clock.hpp"

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <string>

namespace aiperf::time {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::bad_skew:
      return "bad_skew";
  }
  return "unknown";
}

std::int64_t monotonic_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

std::optional<std::int64_t> parse_skew_ns(std::string_view text) {
  // from_chars rejects a leading '+', which people do write for a skew.
  bool plus = !text.empty() && text.front() == '+';
  if (plus)
    text.remove_prefix(1);
  if (text.empty() || (plus && text.front() == '-'))
    return std::nullopt;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(),
                                   value);
  if (ec != std::errc{} || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

caf::expected<skewed_clock> skewed_clock::parse(std::string_view name, std::string_view text) {
  if (text.empty())
    return skewed_clock{};
  if (auto skew = parse_skew_ns(text))
    return skewed_clock{*skew};
  return make_error(errc::bad_skew, std::string{name} + "='" + std::string{text}
                                      + "' is not a number of nanoseconds: set a signed "
                                        "integer such as -2500000000");
}

} // namespace aiperf::time
