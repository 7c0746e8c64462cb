// The clock a worker stamps cross-process timestamps with: the monotonic
// clock, optionally shifted by a fixed skew. Only the test build
// (aiperf-node-test) sets a skew, so tests on one host can make a worker look
// as if its clock were far from the controller's and check that
// clock_offset_tracker removes the difference; the library reads no
// environment.
#pragma once

#include "proto/error.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace aiperf::time {

/// Why a clock cannot be built.
enum class errc : std::uint8_t {
  bad_skew = 1, // a skew setting is not an int64 of nanoseconds
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::time

// Clock errors: a time::errc and a message naming the variable and the fix.
AIPERF_ERROR_ENUM(aiperf::time::errc, "time")

namespace aiperf::time {

/// Returns std::chrono::steady_clock's now in ns (no skew).
[[nodiscard]] std::int64_t monotonic_now_ns() noexcept;

/// Parses a skew value: optional sign then decimal digits, fitting int64.
[[nodiscard]] std::optional<std::int64_t> parse_skew_ns(std::string_view text);

/// Monotonic clock plus a fixed skew; copyable, thread-safe.
class skewed_clock {
public:
  /// A clock with skew `skew_ns` (0 = plain monotonic clock).
  explicit skewed_clock(std::int64_t skew_ns = 0) noexcept : skew_(skew_ns) {}

  /// Builds a clock from the text of setting `name` (empty = no skew).
  /// Fails with bad_skew naming the setting and the fix if it is not an
  /// int64 count of nanoseconds.
  [[nodiscard]] static caf::expected<skewed_clock> parse(std::string_view name,
                                                         std::string_view text);

  /// Returns monotonic_now_ns() + skew_ns().
  [[nodiscard]] std::int64_t now_ns() const noexcept {
    return monotonic_now_ns() + skew_;
  }

  /// Returns the skew added to every reading.
  [[nodiscard]] std::int64_t skew_ns() const noexcept { return skew_; }

private:
  std::int64_t skew_;
};

} // namespace aiperf::time
