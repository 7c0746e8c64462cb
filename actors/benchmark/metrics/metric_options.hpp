// Run-level settings that decide which metrics apply and how they are
// computed. Built by the config layer from the profile flags.
#pragma once

#include "proto/error.hpp"
#include "proto/records.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::metrics {

/// Why metric options are unusable.
enum class errc : std::uint8_t {
  bad_option = 1, // an OSL-mismatch bound or the target rate is out of range
  bad_goodput,    // a --goodput piece is malformed, unknown or inapplicable
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::metrics

// Metric option errors: a metrics::errc and a message naming the option and
// the fix.
AIPERF_ERROR_ENUM(aiperf::metrics::errc, "metrics")

namespace aiperf::metrics {

/// One `--goodput tag:value` SLO; `threshold` is in the metric's display
/// unit (ms for latencies, tokens/sec for throughputs).
struct goodput_slo {
  std::string tag;
  double threshold = 0;
};

struct metric_options {
  /// --streaming: enables TTFT, TTST, ITL, ICL and per-user throughputs.
  bool streaming = false;
  /// False for embeddings/rankings: no token metrics at all.
  bool produces_tokens = true;
  /// --use-server-token-count: ISL/OSL from `usage`; no usage diffs.
  bool use_server_token_count = false;
  /// --goodput SLOs; a request is good when it meets all of them.
  std::vector<goodput_slo> goodput;
  /// OSL mismatch: counted when |OSL − requested| > min(requested·pct/100,
  /// osl_mismatch_max_tokens).
  double osl_mismatch_threshold_pct = 5.0;
  double osl_mismatch_max_tokens = 50.0;
  /// Rate / fixed-schedule runs: also measure TTFT and latency from the
  /// intended send time, so a late send is charged to latency.
  bool coordinated_omission = false;
  /// --request-rate, for achieved-vs-target reporting.
  std::optional<double> target_request_rate;
  /// --concurrency of a closed-loop run (no rate, schedule or prefill
  /// limit), for requests-in-flight-vs-target reporting.
  std::optional<std::uint32_t> target_concurrency;
};

/// Parses `--goodput` text: space-separated `tag:value` pairs. Returns the
/// SLOs, or bad_goodput naming the bad piece.
[[nodiscard]] caf::expected<std::vector<goodput_slo>>
parse_goodput(std::string_view text);

/// Checks the options; fails naming the field and the fix when they are
/// unusable: bad_goodput for unknown/non-applicable goodput tags and
/// non-positive thresholds (errors, as in AIPerf), bad_option otherwise.
[[nodiscard]] caf::expected<void> validate(const metric_options& options);

} // namespace aiperf::metrics
