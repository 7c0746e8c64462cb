#include "actors/benchmark/metrics/in_flight.hpp"

#include <algorithm>

namespace aiperf::metrics {

void in_flight_meter::add(std::int64_t start_ns, std::int64_t end_ns) {
  if (start_ns <= 0 || end_ns < start_ns)
    return;
  widen(start_ns, start_ns);
  ++count_;
  settle();
  if (end_ns <= last_start_ns_)
    closed_ns_ += end_ns - start_ns; // already whole inside the window
  else
    open_.emplace(end_ns, start_ns);
}

void in_flight_meter::merge(const in_flight_meter& other) {
  if (other.count_ == 0)
    return;
  widen(other.first_start_ns_, other.last_start_ns_);
  count_ += other.count_;
  closed_ns_ += other.closed_ns_;
  auto copy = other.open_;
  for (; !copy.empty(); copy.pop())
    open_.push(copy.top());
  settle();
}

void in_flight_meter::widen(std::int64_t first_ns, std::int64_t last_ns) {
  if (count_ == 0) {
    first_start_ns_ = first_ns;
    last_start_ns_ = last_ns;
    return;
  }
  first_start_ns_ = std::min(first_start_ns_, first_ns);
  last_start_ns_ = std::max(last_start_ns_, last_ns);
}

void in_flight_meter::settle() {
  while (!open_.empty() && open_.top().first <= last_start_ns_) {
    closed_ns_ += open_.top().first - open_.top().second;
    open_.pop();
  }
}

std::optional<double> in_flight_meter::mean() const {
  if (last_start_ns_ <= first_start_ns_)
    return std::nullopt;
  // Every open request runs past the last start: it counts up to there.
  auto total = static_cast<double>(closed_ns_);
  auto copy = open_;
  for (; !copy.empty(); copy.pop())
    total += static_cast<double>(last_start_ns_ - copy.top().second);
  return total / static_cast<double>(last_start_ns_ - first_start_ns_);
}

} // namespace aiperf::metrics
