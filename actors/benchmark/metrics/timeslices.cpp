#include "actors/benchmark/metrics/timeslices.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace aiperf::metrics {

std::uint64_t slice_index(std::int64_t request_start_ns, std::int64_t origin_ns,
                          std::int64_t slice_ns) noexcept {
  if (request_start_ns <= origin_ns || slice_ns <= 0)
    return 0;
  return static_cast<std::uint64_t>(request_start_ns - origin_ns)
         / static_cast<std::uint64_t>(slice_ns);
}

timeslicer::timeslicer(metric_options options, std::int64_t slice_ns)
    : options_(std::move(options)),
      slice_ns_(std::max<std::int64_t>(1, slice_ns)) {}

void timeslicer::add(proto::metric_record record) {
  // A request that never left (cancelled before its due time) has no
  // start and so no window; AIPerf leaves such records out of every slice.
  if (record.phase != proto::benchmark_phase::profiling
      || record.request_start_ns <= 0)
    return;
  // The aggregation reads none of the ids: do not keep them per record.
  std::string{}.swap(record.x_request_id);
  std::string{}.swap(record.x_correlation_id);
  std::string{}.swap(record.conversation_id);
  std::string{}.swap(record.worker_id);
  std::string{}.swap(record.record_processor_id);
  records_.push_back(std::move(record));
}

void timeslicer::merge(const timeslicer& other) {
  records_.insert(records_.end(), other.records_.begin(), other.records_.end());
}

std::vector<timeslice> timeslicer::finalize() const {
  std::vector<timeslice> out;
  if (records_.empty())
    return out;
  auto origin = std::numeric_limits<std::int64_t>::max();
  std::int64_t last = std::numeric_limits<std::int64_t>::min();
  for (const auto& r : records_) {
    origin = std::min(origin, r.request_start_ns);
    last = std::max({last, r.request_start_ns, r.request_end_ns});
  }
  std::map<std::uint64_t, metrics_aggregator> windows;
  for (const auto& r : records_) {
    auto i = slice_index(r.request_start_ns, origin, slice_ns_);
    auto it = windows.try_emplace(i, options_).first;
    it->second.add(r);
  }
  out.reserve(windows.size());
  for (const auto& [i, agg] : windows) {
    timeslice s;
    s.start_ns = origin + static_cast<std::int64_t>(i) * slice_ns_;
    auto full_end = s.start_ns + slice_ns_;
    s.is_complete = full_end <= last;
    s.end_ns = s.is_complete ? full_end : last;
    s.summary = agg.finalize();
    s.request_count = agg.request_count();
    s.error_request_count = agg.error_request_count();
    out.push_back(std::move(s));
  }
  return out;
}

} // namespace aiperf::metrics
