#include "actors/operator/metrics.hpp"

#include <cstdio>

namespace aiperf::op {

namespace {

constexpr std::array<const char*, 3> result_names{"success", "requeue", "error"};

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

} // namespace

void operator_metrics::reconciled(pass_result result, double seconds) {
  std::lock_guard<std::mutex> guard{mtx_};
  ++results_[static_cast<std::size_t>(result)];
  ++count_;
  sum_ += seconds;
  for (std::size_t i = 0; i < buckets.size(); ++i)
    if (seconds <= buckets[i])
      ++bucket_counts_[i];
}

std::uint64_t operator_metrics::reconciles(pass_result result) const {
  std::lock_guard<std::mutex> guard{mtx_};
  return results_[static_cast<std::size_t>(result)];
}

std::string operator_metrics::prometheus_text() const {
  std::lock_guard<std::mutex> guard{mtx_};
  std::string out;
  out += "# HELP aiperf_operator_reconciles_total AIPerfJob reconcile passes by how they "
         "ended.\n# TYPE aiperf_operator_reconciles_total counter\n";
  for (std::size_t i = 0; i < result_names.size(); ++i)
    out += std::string{"aiperf_operator_reconciles_total{result=\""} + result_names[i] + "\"} "
           + std::to_string(results_[i]) + "\n";
  out += "# HELP aiperf_operator_reconcile_duration_seconds Time from the start of a reconcile "
         "pass to its end.\n# TYPE aiperf_operator_reconcile_duration_seconds histogram\n";
  for (std::size_t i = 0; i < buckets.size(); ++i)
    out += "aiperf_operator_reconcile_duration_seconds_bucket{le=\"" + number(buckets[i])
           + "\"} " + std::to_string(bucket_counts_[i]) + "\n";
  out += "aiperf_operator_reconcile_duration_seconds_bucket{le=\"+Inf\"} "
         + std::to_string(count_) + "\n";
  out += "aiperf_operator_reconcile_duration_seconds_sum " + number(sum_) + "\n";
  out += "aiperf_operator_reconcile_duration_seconds_count " + std::to_string(count_) + "\n";
  out += "# HELP aiperf_operator_workqueue_depth AIPerfJob keys waiting for a reconciler "
         "worker.\n# TYPE aiperf_operator_workqueue_depth gauge\n";
  out += "aiperf_operator_workqueue_depth{name=\"aiperfjobs\"} " + std::to_string(depth->load())
         + "\n";
  out += "# HELP aiperf_operator_leader 1 while this replica holds the leader Lease.\n"
         "# TYPE aiperf_operator_leader gauge\n";
  out += "aiperf_operator_leader " + std::to_string(leader.load()) + "\n";
  return out;
}

} // namespace aiperf::op
