// The records_manager service: aggregates metric records and writes every
// export. Protocol: proto::records_manager_actor (proto/records_path.hpp).
#pragma once

#include "actors/benchmark/metrics/metric_options.hpp"
#include "proto/records_path.hpp"

#include <caf/actor.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace aiperf::records_manager {

enum class export_level : std::uint8_t { summary, records, raw };

struct records_config {
  /// `<artifact-dir>/<run-name>`; created by the controller.
  std::string artifact_dir;
  /// `--profile-export-prefix` ("" = AIPerf's default names); see
  /// exporters::make_export_names.
  std::string export_prefix;
  export_level level = export_level::records;
  metrics::metric_options options;
  /// The user configuration as one JSON object (secrets redacted).
  std::string input_config_json;
  std::string benchmark_id;
  /// The server counts tokens with our built-in tokenizer (the embedded
  /// mock): client-side ISL/OSL are then exact, else approximate.
  bool server_uses_builtin_tokenizer = false;
  /// `--slice-duration` in ns; > 0 = also write the time-sliced exports
  /// (profile_export_aiperf_timeslices.json/.csv).
  std::int64_t slice_ns = 0;
  /// How long `process` waits for missing records before exporting anyway.
  std::int64_t drain_timeout_ms = 30'000;
  /// `--failed-request-threshold` as a ratio in [0, 1]; < 0: off.
  double failed_request_threshold = -1;
  /// The threshold is armed once this many profiling records arrived:
  /// max(concurrency, 10), as AIPerf's grace floor, so that one early
  /// failure cannot end a run.
  std::uint64_t failed_request_floor = 10;
};

/// `(failed_threshold_atom, uint64_t failed, uint64_t records)`: sent once
/// to the listener, with the profiling counts of the record that made
/// failed/records exceed records_config::failed_request_threshold (with at
/// least failed_request_floor records). A one-way notice, like
/// write_failed_atom: the listener stops the run (exit code 4); no reply.
using failed_threshold_atom = caf::atom_constant<caf::atom("frthresh")>;

/// Whether `failed` of `records` profiling records cross `threshold` (a
/// ratio; < 0: off) once `floor` records arrived: AIPerf's strict
/// failed/records > threshold. Pure.
[[nodiscard]] bool crosses_failed_threshold(std::uint64_t failed,
                                            std::uint64_t records,
                                            double threshold,
                                            std::uint64_t floor) noexcept;

/// `listener` (may be null) hears `(write_failed_atom, caf::error)` when
/// the JSONL stream fails mid-run (proto/records_path.hpp), and
/// `(failed_threshold_atom, ...)` when the failed share crosses
/// `--failed-request-threshold`.
[[nodiscard]] proto::records_manager_actor
spawn_records_manager(caf::actor_system& sys, records_config cfg,
                      caf::actor listener = {});

/// `t` as UTC "YYYYMMDDTHHMMSSZ", the suffix of a previous-run folder.
[[nodiscard]] std::string utc_stamp(std::chrono::system_clock::time_point t);

/// Whether a file of this name in a run folder belongs to a run: the
/// exports, inputs.json, run_manifest.json, RAW part files
/// (`profile_export_raw.part*`) and temp files (`*.tmp.*`).
[[nodiscard]] bool is_run_file(const std::string& name);

/// The files `set_aside_previous_run` moved, and where to.
struct set_aside_files {
  std::filesystem::path folder;
  std::vector<std::string> names;
};

/// Moves the files of an earlier run out of the run folder `dir` (the
/// regular files `is_run_file` names) into `dir/previous-<stamp>/` (with
/// `-1`, `-2`, ... when that exists), so that a re-used folder never mixes
/// two runs. Returns the names moved; none (and no folder made) when `dir`
/// holds no such file or does not exist. A failure is an `io::errc::system`
/// error naming the folder, the step and the errno.
[[nodiscard]] caf::expected<set_aside_files>
set_aside_previous_run(const std::filesystem::path& dir,
                       const std::string& stamp);

} // namespace aiperf::records_manager
