// Minimal append-only JSON text helpers for the hot jsonl path (RapidJSON's
// Writer formats doubles differently from Python; these print the shortest
// round-trip representation).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace aiperf::exporters::detail {

/// Appends `s` as a quoted JSON string (escapes quotes, backslashes and
/// control characters; well-formed UTF-8 passes through, each ill-formed
/// sequence becomes `\ufffd`). Returns how many were replaced.
std::size_t append_json_string(std::string& out, std::string_view s);

/// Appends the shortest decimal that round-trips `v` (finite only; NaN and
/// infinities become null, which JSON cannot otherwise express).
void append_json_double(std::string& out, double v);

void append_json_int(std::string& out, std::int64_t v);

/// Appends `base / base_per_display`. Whole-number base values with a power
/// of ten divisor (ns → ms) are written by moving the decimal point: exact
/// and much cheaper than a shortest-float conversion.
void append_json_scaled(std::string& out, double base, double base_per_display);

/// The longest text the `write_json_*` number writers produce.
inline constexpr std::size_t max_number_chars = 32;

/// Raw-buffer forms of the appenders above for hot loops: each writes the
/// same text at `p` (which must have `max_number_chars` of room) and
/// returns the end.
char* write_json_double(char* p, double v) noexcept;
char* write_json_int(char* p, std::int64_t v) noexcept;
char* write_json_scaled(char* p, double base, double base_per_display) noexcept;

/// `write_json_scaled` for an integer base value (ns): the same text,
/// without a round trip through double where the value is exact.
char* write_json_scaled(char* p, std::int64_t base,
                        double base_per_display) noexcept;

/// `write_json_scaled` of each of `values`, joined with commas; `p` must
/// have `values.size() * (max_number_chars + 1)` of room.
char* write_json_scaled_list(char* p, std::span<const std::int64_t> values,
                             double base_per_display) noexcept;

/// Appends `v` with `decimals` fixed decimals (CSV and console).
void append_fixed(std::string& out, double v, int decimals);

} // namespace aiperf::exporters::detail
