#include "actors/benchmark/metrics/metric_options.hpp"

#include "actors/benchmark/metrics/metric_registry.hpp"

#include <charconv>
#include <cmath>

namespace aiperf::metrics {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::bad_option:
      return "bad_option";
    case errc::bad_goodput:
      return "bad_goodput";
  }
  return "unknown";
}

caf::expected<std::vector<goodput_slo>> parse_goodput(std::string_view text) {
  std::vector<goodput_slo> result;
  std::size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
    if (pos == text.size())
      break;
    auto end = text.find(' ', pos);
    auto piece = text.substr(pos, end == std::string_view::npos
                                      ? std::string_view::npos
                                      : end - pos);
    pos = end == std::string_view::npos ? text.size() : end;
    auto colon = piece.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return make_error(errc::bad_goodput,
                        "--goodput: '" + std::string{piece}
                          + "' is not tag:value (e.g. request_latency:250)");
    auto value_text = piece.substr(colon + 1);
    double value = 0;
    auto [ptr, ec] = std::from_chars(
        value_text.data(), value_text.data() + value_text.size(), value);
    if (ec != std::errc{} || ptr != value_text.data() + value_text.size())
      return make_error(errc::bad_goodput,
                        "--goodput: value of '"
                          + std::string{piece.substr(0, colon)}
                          + "' is not a number: '" + std::string{value_text}
                          + "'");
    result.push_back({std::string{piece.substr(0, colon)}, value});
  }
  return result;
}

caf::expected<void> validate(const metric_options& options) {
  if (!(options.osl_mismatch_threshold_pct >= 0))
    return make_error(errc::bad_option,
                      "osl mismatch threshold must be a percentage >= 0");
  if (!(options.osl_mismatch_max_tokens >= 0))
    return make_error(errc::bad_option, "osl mismatch token cap must be >= 0");
  if (options.target_request_rate && !(*options.target_request_rate > 0))
    return make_error(errc::bad_option, "request rate must be > 0");
  for (const auto& slo : options.goodput) {
    auto m = find_record_metric(slo.tag);
    if (!m)
      return make_error(errc::bad_goodput,
                        "--goodput: unknown metric '" + slo.tag
                          + "'; use a per-request metric such as "
                            "request_latency, time_to_first_token, "
                            "inter_token_latency or "
                            "output_token_throughput_per_user");
    const auto& i = info(*m);
    if ((i.has(flag::streaming_only) && !options.streaming)
        || (i.has(flag::produces_tokens_only) && !options.produces_tokens)
        || i.has(flag::error_only)
        || (i.has(flag::rate_only) && !options.coordinated_omission))
      return make_error(errc::bad_goodput,
                        "--goodput: metric '" + slo.tag
                          + "' does not apply to this run (streaming off, "
                            "endpoint without tokens, or not a rate run); "
                            "remove it or enable --streaming");
    if (!std::isfinite(slo.threshold) || slo.threshold <= 0)
      return make_error(errc::bad_goodput,
                        "--goodput: threshold of '" + slo.tag
                          + "' must be > 0 (in " + std::string{i.unit} + ")");
  }
  return caf::unit;
}

} // namespace aiperf::metrics
