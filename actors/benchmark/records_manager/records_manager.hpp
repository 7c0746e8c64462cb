// The records_manager service: aggregates metric records and writes every
// export. Protocol: proto::records_manager_actor (proto/records_path.hpp).
#pragma once

#include "actors/benchmark/metrics/metric_options.hpp"
#include "proto/records_path.hpp"

#include <caf/fwd.hpp>

#include <cstdint>
#include <string>

namespace aiperf::records_manager {

enum class export_level : std::uint8_t { summary, records, raw };

struct records_config {
  /// `<artifact-dir>/<run-name>`; created by the controller.
  std::string artifact_dir;
  export_level level = export_level::records;
  metrics::metric_options options;
  /// The user configuration as one JSON object (secrets redacted).
  std::string input_config_json;
  std::string benchmark_id;
  /// The server counts tokens with our built-in tokenizer (the embedded
  /// mock): client-side ISL/OSL are then exact, else approximate.
  bool server_uses_builtin_tokenizer = false;
  /// How long `process` waits for missing records before exporting anyway.
  std::int64_t drain_timeout_ms = 30'000;
};

[[nodiscard]] proto::records_manager_actor
spawn_records_manager(caf::actor_system& sys, records_config cfg);

} // namespace aiperf::records_manager
