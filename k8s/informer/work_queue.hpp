// The work queue of a controller, with client-go's semantics
// (k8s.io/client-go/util/workqueue): a fair FIFO of keys that is "stingy"
// — a key added several times before it is processed is processed once —
// and never hands out a key that is being processed: a key added while it
// is processed is queued again when done() is called. Delayed adds
// (add_after) and per-key exponential back-off (add_rate_limited: 5 ms,
// 10 ms, ... capped at 1000 s, until forget()) sit beside it.
//
// Pure and single-threaded: time is a parameter (the informer passes its
// actor clock), so the semantics are tested without an actor system.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace aiperf::k8s::informer {

using queue_clock = std::chrono::steady_clock;

/// Per-key exponential back-off: base * 2^failures, capped (client-go's
/// ItemExponentialFailureRateLimiter, DefaultControllerRateLimiter's
/// per-item part).
struct backoff_limits {
  std::chrono::nanoseconds base = std::chrono::milliseconds{5};
  std::chrono::nanoseconds cap = std::chrono::seconds{1000};
};

class work_queue {
public:
  explicit work_queue(backoff_limits limits = {}) : limits_(limits) {
    // nop
  }

  /// Queues `key` unless it is queued already; while it is processed, marks
  /// it to be queued again by done().
  void add(const std::string& key);

  /// Adds `key` at `now + delay` (at once when delay <= 0). An earlier
  /// pending time for the same key wins.
  void add_after(const std::string& key, std::chrono::nanoseconds delay,
                 queue_clock::time_point now);

  /// add_after with the key's back-off; every call doubles the next one.
  void add_rate_limited(const std::string& key, queue_clock::time_point now);

  /// The back-off add_rate_limited would use next for `key`.
  [[nodiscard]] std::chrono::nanoseconds
  next_backoff(const std::string& key) const;

  /// Resets `key`'s back-off (call after it was processed successfully).
  void forget(const std::string& key) { failures_.erase(key); }

  /// Rate-limited adds of `key` since its last forget().
  [[nodiscard]] int num_requeues(const std::string& key) const;

  /// Moves every delayed key due at `now` into the queue.
  void advance(queue_clock::time_point now);

  /// The earliest pending delayed add, if any.
  [[nodiscard]] std::optional<queue_clock::time_point> next_due() const;

  /// The next key to process (marking it processing), or nullopt when the
  /// queue is empty.
  std::optional<std::string> get();

  /// Ends the processing of `key`; queues it again if it was added since.
  void done(const std::string& key);

  /// Keys waiting (not counting processing or delayed ones).
  [[nodiscard]] std::size_t size() const noexcept { return queue_.size(); }
  [[nodiscard]] bool processing(const std::string& key) const {
    return processing_.count(key) > 0;
  }
  [[nodiscard]] std::size_t delayed() const noexcept { return waiting_.size(); }

private:
  backoff_limits limits_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_; // queued, or added while processing
  std::set<std::string> processing_;
  std::map<std::string, queue_clock::time_point> waiting_; // key -> due
  std::map<std::string, int> failures_;
};

} // namespace aiperf::k8s::informer
