// The record_processor service: raw request records in, metric records out.
// Protocol: proto::record_processor_actor (proto/records_path.hpp).
#pragma once

#include "actors/benchmark/metrics/metric_options.hpp"
#include "proto/records_path.hpp"

#include <caf/fwd.hpp>

#include <string>

namespace aiperf::record_processor {

struct processor_config {
  std::string processor_id;
  metrics::metric_options options;
  /// Where raw records go at export level raw ("" = not kept).
  std::string raw_part_path;
};

[[nodiscard]] proto::record_processor_actor
spawn_record_processor(caf::actor_system& sys, processor_config cfg,
                       proto::records_manager_actor records);

/// Appends one `profile_export_raw.jsonl` line (AIPerf's layout) for `rec`.
void append_raw_line(std::string& out, const proto::request_record& rec,
                     std::string_view processor_id);

} // namespace aiperf::record_processor
