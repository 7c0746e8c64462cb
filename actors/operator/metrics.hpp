// What the operator serves on /metrics (port 9090, Prometheus' text format):
// reconciles by result, their latency, the work queue's depth, whether this
// replica leads, and — from the Kubernetes client — every API request by
// verb, resource and code. Written by the reconciler's and the elector's
// threads, read by the HTTP server's; every member is safe from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace aiperf::op {

/// How one reconcile pass ended.
enum class pass_result : std::uint8_t {
  success = 0, // done, nothing queued
  requeue,     // done, asked to come back after a delay
  error,       // an API call failed: retried with back-off
};

class operator_metrics {
public:
  /// One pass over a key, `seconds` from its start to its end.
  void reconciled(pass_result result, double seconds);

  /// Keys waiting for a reconciler worker (informer_config::depth).
  std::shared_ptr<std::atomic<std::int64_t>> depth
      = std::make_shared<std::atomic<std::int64_t>>(0);

  /// 1 while this replica holds the leader Lease (or runs without election).
  std::atomic<int> leader{0};

  /// The exposition of the operator's own series (the client's are
  /// appended by whoever serves /metrics).
  [[nodiscard]] std::string prometheus_text() const;

  [[nodiscard]] std::uint64_t reconciles(pass_result result) const;

  /// Upper bounds of the latency histogram (controller-runtime's
  /// reconcile_time_seconds buckets, shortened).
  static constexpr std::array<double, 10> buckets{0.005, 0.01, 0.025, 0.05, 0.1,
                                                  0.25,  0.5,  1.0,   5.0,  60.0};

private:
  mutable std::mutex mtx_;
  std::array<std::uint64_t, 3> results_{};
  std::array<std::uint64_t, buckets.size()> bucket_counts_{};
  std::uint64_t count_ = 0;
  double sum_ = 0;
};

} // namespace aiperf::op
