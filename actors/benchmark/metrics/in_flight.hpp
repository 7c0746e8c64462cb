// How many requests the server had in flight, averaged over time: what a
// closed-loop run (--concurrency N) actually offered. Each slot idles from
// a response's end to its next request's start (the client's turn-around),
// so against a fast server the mean falls below N while the numbers look
// like those of load N.
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

namespace aiperf::metrics {

/// Mean number of requests in flight (start → end, as the client stamped
/// them) between the first and the last request start: after the last
/// start no request replaces one that ends, by design, so that drain is
/// left out. Records may come in any order; only the requests still running
/// at the latest start seen so far are kept (about N of them). Mergeable.
class in_flight_meter {
public:
  /// Adds one sent request; ignored when `end_ns < start_ns` or unsent.
  void add(std::int64_t start_ns, std::int64_t end_ns);

  /// Adds everything `other` measured.
  void merge(const in_flight_meter& other);

  /// Time-weighted mean over [first start, last start]; nullopt until two
  /// requests started at different instants.
  [[nodiscard]] std::optional<double> mean() const;

  /// Requests added (sent ones only).
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  /// The first and the last start (0 before any request).
  [[nodiscard]] std::int64_t first_start_ns() const noexcept {
    return first_start_ns_;
  }
  [[nodiscard]] std::int64_t last_start_ns() const noexcept {
    return last_start_ns_;
  }

private:
  /// (end, start) with the earliest end on top.
  using open_heap
    = std::priority_queue<std::pair<std::int64_t, std::int64_t>,
                          std::vector<std::pair<std::int64_t, std::int64_t>>,
                          std::greater<>>;

  /// Widens [first start, last start] to cover [first_ns, last_ns]; call
  /// before count_ grows.
  void widen(std::int64_t first_ns, std::int64_t last_ns);

  /// Moves requests that ended by the latest start into closed_ns_: their
  /// whole duration lies inside the window whatever starts come later.
  void settle();

  std::uint64_t count_ = 0;
  std::int64_t first_start_ns_ = 0;
  std::int64_t last_start_ns_ = 0;
  /// Sum of the durations of the settled requests.
  std::int64_t closed_ns_ = 0;
  open_heap open_;
};

} // namespace aiperf::metrics
