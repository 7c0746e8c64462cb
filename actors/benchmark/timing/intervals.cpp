#include "actors/benchmark/timing/intervals.hpp"

#include <cmath>

namespace aiperf::timing {

std::optional<arrival_pattern> parse_arrival_pattern(std::string_view name) {
  if (name == "constant")
    return arrival_pattern::constant;
  if (name == "poisson")
    return arrival_pattern::poisson;
  if (name == "gamma")
    return arrival_pattern::gamma;
  return std::nullopt;
}

caf::expected<void> validate(const interval_options& opts) {
  // Below 1e-9 req/s a gap no longer fits the ns clock's range sensibly.
  if (!std::isfinite(opts.rate) || opts.rate < 1e-9)
    return make_error(errc::bad_option,
                      "request_rate: must be a positive number of requests per "
                      "second; set --request-rate");
  if (opts.pattern == arrival_pattern::gamma
      && (!std::isfinite(opts.smoothness) || opts.smoothness <= 0))
    return make_error(errc::bad_option,
                      "arrival_smoothness: must be > 0 (1 = poisson, larger = "
                      "smoother); set --arrival-smoothness");
  return caf::unit;
}

interval_generator::interval_generator(const interval_options& opts)
    : pattern_(opts.pattern), mean_ns_(1e9 / opts.rate),
      smoothness_(opts.smoothness), gen_(opts.seed) {
  // nop
}

double interval_generator::next_gap_ns() {
  switch (pattern_) {
  case arrival_pattern::constant:
    return mean_ns_;
  case arrival_pattern::poisson:
    return dataset::exponential(gen_, mean_ns_);
  case arrival_pattern::gamma:
    return dataset::gamma(gen_, smoothness_, mean_ns_ / smoothness_);
  }
  return mean_ns_;
}

} // namespace aiperf::timing
