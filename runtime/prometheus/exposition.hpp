// The Prometheus text exposition formats, read: version 0.0.4 (what
// `/metrics` of vLLM, SGLang, TRT-LLM, Triton and Dynamo answer by default)
// and OpenMetrics 1.0 (`# EOF`, `# UNIT`, exemplars, `_created`). Pure
// code, no I/O: the server-metrics scraper hands it a response body.
//
// Grammar as the formats specify it
// (prometheus.io/docs/instrumenting/exposition_formats,
// github.com/OpenObservability/OpenMetrics specification):
//   line      := comment | sample | blank
//   comment   := "# HELP" name text | "# TYPE" name type | "# UNIT" name unit
//              | "# EOF" | "#" anything
//   sample    := name [ "{" label ("," label)* [","] "}" ] value [timestamp]
//                [ " # " exemplar ]
//   label     := name "=" '"' escaped '"'     (escapes \\ \" \n)
//   value     := float | "NaN" | "+Inf" | "-Inf" | "Inf"
// A sample belongs to the family its name names, or whose name it extends
// with the suffix its type allows (_bucket/_sum/_count for histograms,
// _sum/_count for summaries, _total/_created for counters, ...). A sample
// of no declared family makes an `untyped` family of its own.
#pragma once

#include "proto/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aiperf::prometheus {

enum class errc : std::uint8_t {
  bad_exposition = 1, // a line that is not the format: "line N: why"
};

[[nodiscard]] const char* to_string(errc x) noexcept;

enum class metric_type {
  counter,
  gauge,
  histogram,
  gaugehistogram,
  summary,
  info,
  stateset,
  untyped, // 0.0.4's name; OpenMetrics calls it unknown
};

[[nodiscard]] const char* to_string(metric_type t) noexcept;

using label_set = std::vector<std::pair<std::string, std::string>>;

struct sample {
  std::string name; // as written: "vllm:e2e_request_latency_seconds_bucket"
  label_set labels; // in the order written
  double value = 0;
  std::optional<std::int64_t> timestamp_ms;

  /// The value of label `key`, or nullptr.
  [[nodiscard]] const std::string* label(std::string_view key) const;
};

struct family {
  std::string name; // "vllm:e2e_request_latency_seconds"
  metric_type type = metric_type::untyped;
  std::string help;
  std::string unit;
  std::vector<sample> samples;
};

/// Parses a whole exposition. Families are in the order they first appear.
/// Errors (errc::bad_exposition) name the line number and what is wrong:
/// a malformed label or value, a TYPE given twice or after the family's
/// samples, anything after `# EOF`.
[[nodiscard]] caf::expected<std::vector<family>>
parse_exposition(std::string_view text);

} // namespace aiperf::prometheus

AIPERF_ERROR_ENUM(aiperf::prometheus::errc, "prometheus")
