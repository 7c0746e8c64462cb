#include "actors/benchmark/timing/rate_schedule.hpp"

#include <cmath>

namespace aiperf::timing {

rate_schedule::rate_schedule(interval_generator gen, std::int64_t start_ns,
                             std::int64_t catch_up_window_ns)
    : gen_(std::move(gen)), target_ns_(static_cast<double>(start_ns)),
      window_ns_(catch_up_window_ns) {
  // nop
}

std::int64_t rate_schedule::next_due() const noexcept {
  // Round up: sleeping until the rounded-down time would poll too early.
  return static_cast<std::int64_t>(std::ceil(target_ns_));
}

rate_decision rate_schedule::poll(std::int64_t now_ns) {
  rate_decision d;
  const auto now = static_cast<double>(now_ns);
  if (now < target_ns_)
    return d;
  d.send = true;
  ++sends_;
  if (now - target_ns_ <= static_cast<double>(window_ns_)) {
    d.lag_ns = static_cast<std::int64_t>(now - target_ns_);
    target_ns_ += gen_.next_gap_ns();
    return d;
  }
  // Too far behind: the latest passed target is sent now, the ones before
  // it are counted. Drawing each gap keeps the count exact for random
  // patterns; the loop is O(missed targets), i.e. O(stall · rate).
  double latest = target_ns_;
  for (double t = target_ns_ + gen_.next_gap_ns(); t <= now;
       t += gen_.next_gap_ns()) {
    latest = t;
    ++d.skipped;
  }
  d.lag_ns = static_cast<std::int64_t>(now - latest);
  skipped_ += d.skipped;
  target_ns_ = now + gen_.next_gap_ns();
  return d;
}

void rate_schedule::skip() {
  ++skipped_;
  target_ns_ += gen_.next_gap_ns();
}

} // namespace aiperf::timing
