#include "runtime/time/clock_offset_tracker.hpp"

#include <algorithm>

namespace aiperf::time {

clock_offset_tracker::clock_offset_tracker(bool local, std::size_t window)
    : local_(local), window_(std::max<std::size_t>(window, 1)) {
  deltas_.reserve(window_);
}

bool clock_offset_tracker::add_one_way(std::int64_t worker_recv_ns,
                                       std::int64_t controller_granted_ns) {
  std::int64_t delta = 0;
  // Timestamps come off the wire: reject rather than wrap.
  if (__builtin_sub_overflow(worker_recv_ns, controller_granted_ns, &delta))
    return false;
  if (deltas_.size() < window_) {
    deltas_.push_back(delta);
  } else {
    deltas_[next_] = delta;
    next_ = (next_ + 1) % window_;
  }
  ++one_way_count_;
  return true;
}

bool clock_offset_tracker::add_ping_pong(std::int64_t worker_send_ns,
                                         std::int64_t controller_ns,
                                         std::int64_t worker_recv_ns) {
  std::int64_t rtt = 0;
  if (__builtin_sub_overflow(worker_recv_ns, worker_send_ns, &rtt) || rtt < 0)
    return false;
  // Midpoint of the worker's send/receive, computed without overflow, minus
  // the controller's stamp: the offset if the path is symmetric.
  std::int64_t midpoint = worker_send_ns + rtt / 2;
  std::int64_t offset = 0;
  if (__builtin_sub_overflow(midpoint, controller_ns, &offset))
    return false;
  if (rtt_count_ == 0 || rtt < min_rtt_) {
    min_rtt_ = rtt;
    best_ping_offset_ = offset;
  }
  ++rtt_count_;
  return true;
}

std::optional<std::int64_t> clock_offset_tracker::offset_ns() const {
  if (local_)
    return 0;
  if (auto min_delta = min_one_way_delta_ns()) {
    // Without a ping/pong, the forward delay is taken as 0 (the estimate is
    // then biased by at most that delay).
    std::int64_t half_rtt = rtt_count_ > 0 ? min_rtt_ / 2 : 0;
    std::int64_t offset = 0;
    if (!__builtin_sub_overflow(*min_delta, half_rtt, &offset))
      return offset;
    return *min_delta;
  }
  if (rtt_count_ > 0)
    return best_ping_offset_;
  return std::nullopt;
}

std::optional<std::int64_t> clock_offset_tracker::min_rtt_ns() const {
  if (rtt_count_ == 0)
    return std::nullopt;
  return min_rtt_;
}

std::optional<std::int64_t> clock_offset_tracker::min_one_way_delta_ns() const {
  if (deltas_.empty())
    return std::nullopt;
  return *std::min_element(deltas_.begin(), deltas_.end());
}

} // namespace aiperf::time
