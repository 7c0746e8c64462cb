// Time-sliced metrics (AIPerf's `--slice-duration`): the profiling records
// cut into consecutive windows, each summarized with the run's own
// aggregation (metrics_aggregator), for profile_export_aiperf_timeslices.*.
#pragma once

#include "actors/benchmark/metrics/metric_options.hpp"
#include "actors/benchmark/metrics/metrics_aggregator.hpp"
#include "proto/records.hpp"

#include <cstdint>
#include <vector>

namespace aiperf::metrics {

/// One window with records, in chronological order.
struct timeslice {
  /// Epoch ns, [start_ns, end_ns).
  std::int64_t start_ns = 0;
  /// The last window ends at the run's last timestamp instead of a full
  /// slice later; it is then not complete.
  std::int64_t end_ns = 0;
  bool is_complete = true;
  run_summary summary;
  std::uint64_t request_count = 0;
  std::uint64_t error_request_count = 0;
};

/// The window of a request that started at `request_start_ns`, for a grid
/// that begins at `origin_ns` (the first request start) with windows of
/// `slice_ns`: floor((start − origin) / slice). Each window holds its start
/// and not its end, so a request starting exactly on a boundary belongs to
/// the later window (AIPerf aiperf/metrics/metrics_accumulator.py
/// `_compute_timeslices`, np.digitize).
[[nodiscard]] std::uint64_t slice_index(std::int64_t request_start_ns,
                                        std::int64_t origin_ns,
                                        std::int64_t slice_ns) noexcept;

/// Collects the profiling records of a run and summarizes them per window.
/// The grid starts at the earliest request start, known only once every
/// record arrived, so the records are kept (without their id strings)
/// until `finalize`. Not thread-safe: owned by the records_manager actor.
class timeslicer {
public:
  /// `slice_ns` > 0; `options` as for metrics_aggregator.
  timeslicer(metric_options options, std::int64_t slice_ns);

  /// Keeps a profiling record; warmup records are ignored (as in the
  /// summary), and so are records of requests that were never sent (no
  /// start time).
  void add(proto::metric_record record);

  /// Adds everything `other` collected (same options and slice assumed).
  void merge(const timeslicer& other);

  /// The windows that hold at least one record (AIPerf skips empty ones),
  /// each summarized like the whole run. Empty when no record arrived.
  [[nodiscard]] std::vector<timeslice> finalize() const;

  [[nodiscard]] std::size_t record_count() const noexcept {
    return records_.size();
  }

private:
  metric_options options_;
  std::int64_t slice_ns_;
  std::vector<proto::metric_record> records_;
};

} // namespace aiperf::metrics
