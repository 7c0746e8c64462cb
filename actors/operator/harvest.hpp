// The results harvest of a finished AIPerfJob: the operator pulls the run's
// files from its controller pod and stores them under
// `<AIPERF_RESULTS_DIR>/<namespace>/<name>/<epoch>/`, then points
// `<namespace>/<name>/latest.txt` at that epoch (AIPerf's layout).
//
//   - list `GET /api/results/list` on the controller API (9090), falling
//     back to the results sidecar (9091) when the controller does not
//     answer or lists nothing ready; download each `/api/results/files/
//     <name>` and check its size; a listed name that would leave the run
//     directory is refused;
//   - every file is written atomically and durably; `job_spec.json` holds
//     the AIPerfJob's spec; `latest.txt` is replaced atomically and never
//     moves back to an older epoch;
//   - a cancellation (the AIPerfJob was deleted) is checked between files
//     and before `latest.txt`: a deleted job gets no latest pointer;
//   - then `POST /api/shutdown` lets the controller exit (best effort).
//   - then retention: runs past AIPERF_RESULTS_RETAIN_RUNS (10) or older than
//     the TTL are removed, never the latest one;
// Transient failures are retried AIPERF_RESULTS_MAX_RETRIES (5) times,
// AIPERF_RESULTS_RETRY_DELAY (2 s) doubling, capped at 30 s.
#pragma once

#include "k8s/api/json.hpp"
#include "proto/error.hpp"

#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace aiperf::op {

/// Why a harvest ended without results.
enum class errc : std::uint8_t {
  cancelled = 1,        // the AIPerfJob was deleted meanwhile
  results_fetch_failed, // the controller and its sidecar did not deliver
  results_store_failed, // the results volume refused a write
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::op

AIPERF_ERROR_ENUM(aiperf::op::errc, "operator")

namespace aiperf::op {

using k8s::json;

/// Set once the job is gone; the harvest stops at its next check.
using cancel_flag = std::shared_ptr<std::atomic<bool>>;

struct harvest_request {
  std::string namespace_name;
  std::string job_name;
  std::string epoch;
  /// The controller pod's address (its DNS name in the cluster).
  std::string controller_host;
  std::uint16_t api_port = 9090;
  std::uint16_t sidecar_port = 9091;
  /// The AIPerfJob's spec, written as job_spec.json.
  std::string spec_json;
  cancel_flag cancelled;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, harvest_request& x) {
  return f(caf::meta::type_name("aiperf::op::harvest_request"), x.namespace_name, x.job_name,
           x.epoch, x.controller_host, x.api_port, x.sidecar_port, x.spec_json);
}

struct harvest_result {
  /// The run directory written.
  std::string path;
  /// The files stored, relative to `path`.
  std::vector<std::string> files;
  /// profile_export_aiperf.json's text ("" when the run has none).
  std::string profile_json;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, harvest_result& x) {
  return f(caf::meta::type_name("aiperf::op::harvest_result"), x.path, x.files, x.profile_json);
}

using harvest_atom = caf::atom_constant<caf::atom("op_harv")>;
using sweep_atom = caf::atom_constant<caf::atom("op_sweep")>;

/// `(harvest_atom, harvest_request)` → harvest_result, or an error naming
/// what failed after the retries (the job then fails ResultsFetchFailed),
/// or op::errc::cancelled. The reconciler waits up to 30 min.
/// `(sweep_atom)`: the daily TTL sweep over every stored job (the leader's
/// reconciler sends it); no reply.
using harvester_actor
    = caf::typed_actor<caf::replies_to<harvest_atom, harvest_request>::with<harvest_result>,
                       caf::reacts_to<sweep_atom>>;

struct harvest_settings {
  std::filesystem::path results_dir = "/data";
  int max_retries = 5;
  std::chrono::milliseconds retry_delay{2000};
  std::chrono::milliseconds file_timeout{300'000};
  /// Retention after each stored run (runs_to_prune in results_api.hpp):
  /// AIPERF_RESULTS_RETAIN_RUNS, and AIPERF_RESULTS_TTL_DAYS unless the
  /// job's spec.resultsTtlDays says otherwise.
  int retain_runs = 10;
  int ttl_days = 30;
};

/// The harvester over HTTP and the file system (a detached actor: its calls
/// block).
[[nodiscard]] harvester_actor spawn_http_harvester(caf::actor_system& sys,
                                                   harvest_settings settings);

/// `status.summary` of a profile export: the curated metric tags with
/// their statistics (floats rounded to 2 decimals), `total_requests`
/// (completed + errored) and `error_rate` (9 decimals). Empty for a
/// document that is not an export.
[[nodiscard]] json summary_of(const json& profile_export);

/// The TTL sweep over `results_dir`: for every `<ns>/<job>`, the runs older
/// than the TTL (the newest run's job_spec.json resultsTtlDays, else
/// `ttl_days`; 0 = never) are removed, with runs_to_prune's protections.
/// Returns "<ns>/<job>/<epoch>" of each run removed.
[[nodiscard]] std::vector<std::string> sweep_results(const std::filesystem::path& results_dir,
                                                     int ttl_days, std::int64_t now_unix);

/// Points `<job_dir>/latest.txt` at `epoch` (atomically and durably) unless
/// it already names an epoch of later whole seconds (a run of the same
/// second replaces it: the later store is the newer run); returns whether it
/// now names `epoch`.
[[nodiscard]] caf::expected<bool> publish_latest(const std::filesystem::path& job_dir,
                                                 const std::string& epoch);

} // namespace aiperf::op
