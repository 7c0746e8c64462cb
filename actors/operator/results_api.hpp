// The read side of the operator's results server (port 8081): the runs the
// harvest stored under `<AIPERF_RESULTS_DIR>/<namespace>/<job>/<epoch>/`,
// with AIPerf's routes and bodies. Every error body is {"detail": "..."}.
//
//   GET /api/v1/results                        {"results":[{"namespace","job_id",
//                                              "latest_epoch","run_count"}]}
//   GET /api/v1/results/{ns}/{job}             409: an epoch is required (so are
//       /{job}.zip and /{job}/{filename})      there is no epoch-less artifact route
//   GET .../{job}/runs                         newest first: {"namespace","job_id",
//                                              "latest_epoch","runs":[{"epoch",
//                                              "mtime_epoch","file_count",
//                                              "total_size_bytes","is_latest"}]};
//                                              404 when there is none
//   GET .../runs/{epoch}                       {"namespace","job_id","epoch","ready",
//                                              "summary_available","per_record_filename",
//                                              "server_metrics_filename","files":[{"name",
//                                              "size"}]}
//   GET .../runs/{epoch}.zip                   <ns>__<job>__<epoch>.zip (stored, no
//                                              compression), 404 until the run is ready
//   GET .../runs/{epoch}/profile_export?format=json   profile_export_aiperf.json
//   GET .../runs/{epoch}/{filename}            the file ("/"-separated below the run)
//
// Files (and profile_export) honour Accept-Encoding: zstd when the client
// accepts it (by name or `*`, q > 0), else identity; gzip is not offered
// (identity is always acceptable unless refused outright). Archives are
// identity.
//
// {epoch} not matching \d{9,10}(\d{6})? is 422; {ns} or {job} not an RFC 1123
// label is 400; a path that would leave the run directory (`..`, `%2e%2e`,
// an absolute or empty segment, a symlink in the tree) is 400; a missing run
// or file is 404, and a file of a run without `.aiperf_results_ready.json`
// is 404 naming it. `latest_epoch` is null when latest.txt names a run that
// is not there. Files are read whole (runs are exports of one benchmark;
// streaming comes with publication).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::op {

struct results_reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  /// The file's name for Content-Disposition ("" for JSON answers).
  std::string filename;
  /// "zstd" when the body is compressed, "" for identity.
  std::string content_encoding;
};

/// The answer to GET `target` (path and query) under `results_dir`, for a
/// client sending `accept_encoding`; status 0 when `target` is not under
/// /api/v1/results.
[[nodiscard]] results_reply answer_results(const std::filesystem::path& results_dir,
                                           std::string_view target,
                                           std::string_view accept_encoding = {});

/// Whether an Accept-Encoding header value accepts zstd.
[[nodiscard]] bool accepts_zstd(std::string_view accept_encoding);

/// AIPerf's EPOCH_RE: 9 or 10 digits of seconds, optionally 6 more.
[[nodiscard]] bool is_epoch_key(std::string_view text) noexcept;

/// The whole seconds of an epoch key (which is_epoch_key accepted).
[[nodiscard]] std::int64_t epoch_seconds(std::string_view epoch);

/// The run directories of `job_dir` (epoch keys, no symlinks), newest first:
/// by seconds, then by the whole key.
[[nodiscard]] std::vector<std::string> stored_runs(const std::filesystem::path& job_dir);

/// The runs retention removes from `job_dir`: those past the `retain_runs`
/// newest (AIPERF_RESULTS_RETAIN_RUNS; 0 = no count limit) and, with
/// `ttl_days` > 0 (AIPERF_RESULTS_TTL_DAYS or the job's resultsTtlDays),
/// those whose seconds are more than that many days before `now_unix`.
/// Never the run latest.txt names, never `keep` (the run just stored), never
/// a run without its ready marker (a harvest still writing it).
[[nodiscard]] std::vector<std::string> runs_to_prune(const std::filesystem::path& job_dir,
                                                     int retain_runs, int ttl_days,
                                                     std::int64_t now_unix,
                                                     std::string_view keep);

} // namespace aiperf::op
