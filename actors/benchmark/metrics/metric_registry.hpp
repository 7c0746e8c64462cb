// Names, units and applicability of every metric we report, after AIPerf's
// metric definitions (its docs/metrics_reference.md). Values are computed in
// base units (ns, tokens, tokens/s, percent) and shown in display units (ms,
// sec, ...).
#pragma once

#include "proto/records.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace aiperf::metrics {

/// How a metric is computed (AIPerf's three kinds).
enum class metric_kind : std::uint8_t {
  record,    ///< one value (or list) per request → distribution
  aggregate, ///< running counter/min/max → scalar
  derived,   ///< formula over other results → scalar
};

/// Applicability and display flags (bit set).
namespace flag {
inline constexpr std::uint32_t none = 0;
/// Only with --streaming.
inline constexpr std::uint32_t streaming_only = 1u << 0;
/// Not for endpoints without tokens (embeddings, rankings).
inline constexpr std::uint32_t produces_tokens_only = 1u << 1;
/// Only shown when the model produced reasoning.
inline constexpr std::uint32_t reasoning = 1u << 2;
/// Compares server usage with client counts; off with server counts.
inline constexpr std::uint32_t usage_diff = 1u << 3;
/// Exports only, not the console table.
inline constexpr std::uint32_t no_console = 1u << 4;
/// Experimental; exports only.
inline constexpr std::uint32_t experimental = 1u << 5;
/// Internal bookkeeping; exports only.
inline constexpr std::uint32_t internal = 1u << 6;
/// Goodput passes when value ≥ threshold (else ≤).
inline constexpr std::uint32_t larger_is_better = 1u << 7;
/// Only present when some request failed.
inline constexpr std::uint32_t error_only = 1u << 8;
/// Only with goodput SLOs.
inline constexpr std::uint32_t goodput_only = 1u << 9;
/// Only in coordinated-omission mode (rate / fixed schedule).
inline constexpr std::uint32_t rate_only = 1u << 10;
/// A whole number (printed as an integer in scalar CSV rows).
inline constexpr std::uint32_t integer = 1u << 11;
} // namespace flag

/// Static description of one metric.
struct metric_info {
  std::string_view tag;
  std::string_view header;
  /// Display unit ("ms", "tokens/sec", ...).
  std::string_view unit;
  /// Base units per display unit (1e6 ns per ms): display = base / this.
  /// A divisor, not a factor, so thresholds like 250 ms convert exactly.
  double base_per_display;

  [[nodiscard]] double to_display(double base) const noexcept {
    return base / base_per_display;
  }
  [[nodiscard]] double to_base(double display) const noexcept {
    return display * base_per_display;
  }
  metric_kind kind;
  std::uint32_t flags;

  [[nodiscard]] bool has(std::uint32_t f) const noexcept {
    return (flags & f) != 0;
  }
};

/// Returns the description of a scalar record metric.
[[nodiscard]] const metric_info& info(proto::record_metric m) noexcept;

/// The list-valued record metric (one sample per gap).
[[nodiscard]] const metric_info& inter_chunk_latency_info() noexcept;

/// Returns every metric (record, aggregate and derived) in report order.
[[nodiscard]] std::span<const metric_info> all_metrics() noexcept;

/// Returns the metric with `tag`, or nullptr.
[[nodiscard]] const metric_info* find_metric(std::string_view tag) noexcept;

/// Returns the scalar record metric with `tag`, if there is one.
[[nodiscard]] std::optional<proto::record_metric>
find_record_metric(std::string_view tag) noexcept;

} // namespace aiperf::metrics
