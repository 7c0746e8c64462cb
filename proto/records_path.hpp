// Typed interfaces of the record path:
//   worker -> record_processor -> records_manager -> system_controller.
#pragma once

#include "proto/records.hpp"
#include "proto/timing.hpp"
#include "proto/worker.hpp"

#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace aiperf::proto {

using finalize_atom = caf::atom_constant<caf::atom("finalize")>;
using process_atom = caf::atom_constant<caf::atom("process")>;
/// Adds a member to profile_export_aiperf.json (see records_manager_actor).
using section_atom = caf::atom_constant<caf::atom("section")>;
/// An export stream failed mid-run (see records_manager_actor).
using write_failed_atom = caf::atom_constant<caf::atom("wfailed")>;

/// record_processor protocol:
/// - `(request_record_batch)` from workers: computes each record's metrics
///   and forwards one `metric_record_batch` to the records_manager; at
///   export level raw also appends the raw records to its own part file.
/// - `(finalize_atom)` from the controller after the last record: flushes
///   and durably closes the raw part file; replies its path ("" = none) or
///   `benchmark::errc::export_failed` naming the file. The controller waits
///   `service_timeouts::finalize`; past it the run fails naming this
///   processor (`silent_service`).
using record_processor_actor = record_sink_actor::extend<
  caf::replies_to<finalize_atom>::with<std::string>>;

/// What the controller knows at the end of a run that the exports report.
struct run_info {
  std::vector<phase_stats> phases;
  /// Raw part files of the record processors, in order.
  std::vector<std::string> raw_parts;
  bool was_cancelled = false;
  /// Client self-check: warnings when the client limited the results, and
  /// its measurements as one JSON object ("" = not measured).
  std::vector<std::string> client_warnings;
  std::string client_self_check_json;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_info& x) {
  return f(caf::meta::type_name("aiperf::proto::run_info"), x.phases,
           x.raw_parts, x.was_cancelled, x.client_warnings,
           x.client_self_check_json);
}

/// Live counters of the records_manager.
struct records_progress {
  std::uint64_t received = 0;
  std::uint64_t profiling_valid = 0;
  std::uint64_t profiling_errors = 0;
  /// Records of refused connections ("ConnectionError", any phase), and
  /// of those in a row since the last record whose request reached the
  /// server (the system_controller ends a run whose endpoint stays
  /// unreachable: exit code 3).
  std::uint64_t connection_errors = 0;
  std::uint64_t connection_errors_in_a_row = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, records_progress& x) {
  return f(caf::meta::type_name("aiperf::proto::records_progress"),
           x.received, x.profiling_valid, x.profiling_errors,
           x.connection_errors, x.connection_errors_in_a_row);
}

/// The outcome of the export step.
struct export_outcome {
  /// The exports that could not be written, by path, in write order. The
  /// others were still written (`files`); the run then fails (exit code 1)
  /// with `error`.
  std::vector<std::string> failed_files;
  /// `benchmark::errc::export_failed` listing each failed file with its
  /// reason (errno text); none when every export was written.
  caf::error error;
  /// The console table (already rendered) and the files written.
  std::string console;
  std::vector<std::string> files;
  std::uint64_t request_count = 0;
  std::uint64_t error_request_count = 0;
  /// Warnings the exports carry (also worth printing).
  std::vector<std::string> warnings;
  /// The most frequent error causes, "<count> x <code> <type>: <message>",
  /// by descending count (at most 3).
  std::vector<std::string> top_errors;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, export_outcome& x) {
  return f(caf::meta::type_name("aiperf::proto::export_outcome"),
           x.failed_files, x.error, x.console,
           x.files, x.request_count, x.error_request_count, x.warnings,
           x.top_errors);
}

/// records_manager protocol:
/// - `(metric_record_batch)` from record processors: aggregated, and
///   streamed to profile_export.jsonl (export level records or raw).
/// - `(process_atom, uint64_t expected, run_info)` from the controller once
///   every credit is back: waits until `expected` records have arrived (or
///   a timeout), then writes every export, each on its own (summary JSON,
///   CSV, records JSONL, raw JSONL, then run_manifest.json), and replies
///   `export_outcome`: the files written, and for the ones that could not
///   be written (or whose JSONL stream failed mid-run) `failed_files` and
///   `error` (`benchmark::errc::export_failed` listing each with its
///   reason). The controller waits `service_timeouts::exports`; past it the
///   run fails naming the records_manager (`silent_service`).
/// - `(progress_atom)`: live counters.
/// - Sent, not received: `(write_failed_atom, caf::error)` once, to the
///   listener given to spawn_records_manager (the controller), when the
///   JSONL stream fails (ENOSPC, EIO): the records_manager stopped
///   streaming and will report the error with the exports; the listener
///   may stop the run early. A one-way notice: no reply, so no timeout.
/// - `(section_atom, std::string name, std::string json)` from a service
///   that knows more about the run than the records (the remote group:
///   `pods`), before `process`: the export carries `name: json` as a member
///   of profile_export_aiperf.json (after AIPerf's own; a repeated name
///   replaces). JSON that does not parse is logged and dropped. No reply.
using records_manager_actor = caf::typed_actor<
  caf::reacts_to<metric_record_batch>,
  caf::reacts_to<section_atom, std::string, std::string>,
  caf::replies_to<process_atom, std::uint64_t, run_info>::with<export_outcome>,
  caf::replies_to<progress_atom>::with<records_progress>>;

} // namespace aiperf::proto
