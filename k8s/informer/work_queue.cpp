#include "k8s/informer/work_queue.hpp"

#include <algorithm>
#include <vector>

namespace aiperf::k8s::informer {

void work_queue::add(const std::string& key) {
  if (dirty_.count(key) > 0)
    return;
  dirty_.insert(key);
  if (processing_.count(key) > 0)
    return; // done() queues it
  queue_.push_back(key);
}

void work_queue::add_after(const std::string& key,
                           std::chrono::nanoseconds delay,
                           queue_clock::time_point now) {
  if (delay <= std::chrono::nanoseconds::zero()) {
    add(key);
    return;
  }
  auto due = now + delay;
  auto [i, inserted] = waiting_.try_emplace(key, due);
  if (!inserted && due < i->second)
    i->second = due;
}

std::chrono::nanoseconds
work_queue::next_backoff(const std::string& key) const {
  auto n = num_requeues(key);
  auto d = limits_.base;
  for (int i = 0; i < n && d < limits_.cap; ++i)
    d *= 2;
  return std::min(d, limits_.cap);
}

void work_queue::add_rate_limited(const std::string& key,
                                  queue_clock::time_point now) {
  auto delay = next_backoff(key);
  ++failures_[key];
  add_after(key, delay, now);
}

int work_queue::num_requeues(const std::string& key) const {
  auto i = failures_.find(key);
  return i == failures_.end() ? 0 : i->second;
}

void work_queue::advance(queue_clock::time_point now) {
  // Due keys in the order they fall due, so that the FIFO stays fair.
  std::vector<std::pair<queue_clock::time_point, std::string>> due;
  for (auto i = waiting_.begin(); i != waiting_.end();) {
    if (i->second <= now) {
      due.emplace_back(i->second, i->first);
      i = waiting_.erase(i);
    } else {
      ++i;
    }
  }
  std::sort(due.begin(), due.end());
  for (auto& [_, key] : due)
    add(key);
}

std::optional<queue_clock::time_point> work_queue::next_due() const {
  std::optional<queue_clock::time_point> out;
  for (const auto& [_, due] : waiting_)
    if (!out || due < *out)
      out = due;
  return out;
}

std::optional<std::string> work_queue::get() {
  if (queue_.empty())
    return std::nullopt;
  auto key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  return key;
}

void work_queue::done(const std::string& key) {
  processing_.erase(key);
  if (dirty_.count(key) > 0)
    queue_.push_back(key);
}

} // namespace aiperf::k8s::informer
