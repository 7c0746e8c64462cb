#include "actors/benchmark/worker/connect_backoff.hpp"

#include <functional>
#include <iterator>

namespace aiperf::worker {

double destination_backoff::next_jitter() noexcept {
  jitter_state_ ^= jitter_state_ << 13;
  jitter_state_ ^= jitter_state_ >> 7;
  jitter_state_ ^= jitter_state_ << 17;
  return static_cast<double>(jitter_state_ >> 11) * 0x1.0p-53;
}

destination_backoff::admission destination_backoff::admit(std::int64_t now_ns) {
  if (!backing_off())
    return {};
  std::lock_guard<std::mutex> guard{mtx_};
  if (failures_ == 0)
    return {};
  if (now_ns < until_ns_)
    return {until_ns_, false};
  if (probing_) {
    // The probe outlived its provisional wait (a connect that hangs): the
    // others wait one more full step.
    return {now_ns + connect_backoff_ns(failures_, 1.0), false};
  }
  probing_ = true;
  // Provisional: where the waiters ask again if the probe is still out.
  until_ns_ = now_ns + connect_backoff_ns(failures_ + 1, next_jitter());
  return {0, true};
}

void destination_backoff::refused(std::int64_t ts_ns, bool probe) {
  std::lock_guard<std::mutex> guard{mtx_};
  if (probe) {
    probing_ = false;
  } else if (failures_ != 0) {
    return; // under way before the backoff started: it knows already
  }
  if (failures_ < 64)
    ++failures_;
  until_ns_ = ts_ns + connect_backoff_ns(failures_, next_jitter());
  active_.store(true, std::memory_order_relaxed);
}

void destination_backoff::reached() {
  if (!backing_off())
    return;
  std::lock_guard<std::mutex> guard{mtx_};
  failures_ = 0;
  until_ns_ = 0;
  probing_ = false;
  active_.store(false, std::memory_order_relaxed);
}

void destination_backoff::abandoned(bool probe) {
  if (!probe)
    return;
  std::lock_guard<std::mutex> guard{mtx_};
  probing_ = false;
}

std::uint32_t destination_backoff::failures() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return failures_;
}

std::shared_ptr<destination_backoff>
backoff_registry::of(const std::string& host, std::uint16_t port) {
  auto key = host + ":" + std::to_string(port);
  std::lock_guard<std::mutex> guard{mtx_};
  auto& slot = states_[key];
  if (auto live = slot.lock())
    return live;
  // Destinations whose runs ended go (a long-lived service sees many).
  for (auto it = states_.begin(); it != states_.end();)
    it = it->second.expired() && it->first != key ? states_.erase(it)
                                                  : std::next(it);
  auto fresh = std::make_shared<destination_backoff>(
      std::hash<std::string>{}(key) | 1);
  states_[key] = fresh;
  return fresh;
}

std::shared_ptr<backoff_registry> backoff_registry::process() {
  static const auto registry = std::make_shared<backoff_registry>();
  return registry;
}

} // namespace aiperf::worker
