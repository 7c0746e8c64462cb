// Per-request metrics (AIPerf's "record" metrics, as its
// docs/metrics_reference.md defines them): what a record_processor computes
// from one worker record.
#pragma once

#include "actors/benchmark/metrics/metric_options.hpp"
#include "proto/records.hpp"

#include <string_view>

namespace aiperf::metrics {

/// Turns a raw request record into a metric record. Validity follows
/// AIPerf: non-2xx status, a transport/timeout/cancel error (`has_error`,
/// `was_cancelled`, SSE `event: error` reported by the worker as an error)
/// or zero content responses make an error record, which carries only
/// `error_isl`. Epoch times in the metadata include `clock_offset_ns`.
/// Token counts use the built-in tokenizer on the joined text, or server
/// `usage` with `use_server_token_count`.
[[nodiscard]] proto::metric_record
compute_metrics(const proto::request_record& record,
                const metric_options& options, std::string_view processor_id);

/// Same, moving the id strings out of `record` instead of copying them (for
/// callers done with the record).
[[nodiscard]] proto::metric_record
compute_metrics(proto::request_record&& record, const metric_options& options,
                std::string_view processor_id);

} // namespace aiperf::metrics
