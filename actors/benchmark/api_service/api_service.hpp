// The api_service: the controller's HTTP face (port 9090 in a pod) for the
// operator, Prometheus and worker pods.
//
//   GET /healthz                     200 while the process runs
//   GET /readyz                      200 once told ready, else 503
//   GET /api/progress                progress JSON (see `progress`)
//   GET /api/pods                    worker pod registration (`pods_status`)
//   GET /metrics                     the same as Prometheus text (0.0.4)
//   GET /api/dataset/dataset.dat.zst the dataset files worker pods download
//   GET /api/dataset/index.dat.zst
//   GET /api/metrics                 progress plus the summary export (JSON)
//   GET /api/results/list            the results dir (results_files.hpp)
//   GET /api/results/files/<path>    one results file (results_files.hpp)
//   POST /api/shutdown               202 once the run finished (ends a
//                                    pod's linger), 409 while it runs
//   GET /api/artifacts               JSON list of the artifact dir's files
//   GET /api/artifacts/<path>        one file of the artifact dir
//   PUT /api/raw/<pod>               stage a pod's RAW JSONL export part
//
// Threading choice: the HTTP handlers run on the server's I/O threads and
// never touch actor state nor ask the actor. The actor publishes what it is
// fed into a `status_board` (mutex-guarded, copy-on-publish) and handlers
// read the board. Probes therefore answer even while the actor's mailbox is
// busy, and no handler can block on a slow or dead actor. Files are read and
// fsync'ed on the I/O thread (blocking); that is fine for a handful of pods
// downloading one dataset, and keeps the benchmark's own threads untouched.
#pragma once

#include "proto/ports.hpp"
#include "proto/atoms.hpp"
#include "proto/benchmark_errors.hpp"

#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace aiperf::api_service {

/// Publishes a new progress snapshot.
using progress_atom = caf::atom_constant<caf::atom("progress")>;
/// Sets readiness (`/readyz`).
using ready_atom = caf::atom_constant<caf::atom("ready")>;
/// Asks for the staged RAW parts.
using raw_atom = caf::atom_constant<caf::atom("raw")>;
/// Publishes the worker pods' registration (`/api/pods`).
using pods_atom = caf::atom_constant<caf::atom("pods")>;

/// Live progress of the run, as served on /api/progress and /metrics.
struct progress {
  /// Credit phase: "warmup", "profiling", or empty before the first one.
  std::string phase;
  /// Run state: "initializing", "configuring", "running", "processing",
  /// "exporting", "complete", "failed", "cancelled" (free text, rendered as
  /// given).
  std::string state = "initializing";
  std::uint64_t sent = 0;
  std::uint64_t completed = 0;
  std::uint64_t in_flight = 0;
  std::uint64_t errors = 0;
  /// Requests planned in this phase; 0 = unknown (duration-bound).
  std::uint64_t total = 0;
  /// Completed requests per second over the phase so far.
  double requests_per_second = 0;

  friend bool operator==(const progress&, const progress&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, progress& x) {
  return f(caf::meta::type_name("aiperf::api_service::progress"), x.phase,
           x.state, x.sent, x.completed, x.in_flight, x.errors, x.total,
           x.requests_per_second);
}

/// One worker pod as the controller sees it.
struct pod_status {
  /// "pod1".
  std::string name;
  /// Every service of the pod registered (its group, workers, processors).
  bool registered = false;
  bool lost = false;
  /// Why it was declared lost ("" unless lost).
  std::string lost_reason;
  /// Whether a heartbeat carried the pod's clock estimate yet; the clock_*
  /// fields mean nothing before.
  bool clock_reported = false;
  /// The pod's clock offset estimate (controller_time = worker_time -
  /// clock_offset_ns), with the samples behind it.
  std::int64_t clock_offset_ns = 0;
  std::uint32_t clock_one_way_samples = 0;
  /// -1 = no ping round trip yet.
  std::int64_t clock_min_rtt_ns = -1;
  /// Same host as the controller: pinned to 0.
  bool clock_local = false;

  friend bool operator==(const pod_status&, const pod_status&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pod_status& x) {
  return f(caf::meta::type_name("aiperf::api_service::pod_status"), x.name,
           x.registered, x.lost, x.lost_reason, x.clock_reported,
           x.clock_offset_ns, x.clock_one_way_samples, x.clock_min_rtt_ns,
           x.clock_local);
}

/// The worker pods' registration, as served on /api/pods.
struct pods_status {
  /// "not_started" (no remote group yet: a local run, or the dataset is
  /// still being prepared), "waiting" (pods are registering), "complete"
  /// (every expected service registered), "failed" (registration timed out
  /// or a pod was lost before it registered; see `error`).
  std::string registration = "not_started";
  std::uint32_t pods_expected = 0;
  /// Service ids that did not register yet ("pod1", "pod1/worker_0", ...).
  std::vector<std::string> missing;
  std::string error;
  std::vector<pod_status> pods;

  friend bool operator==(const pods_status&, const pods_status&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pods_status& x) {
  return f(caf::meta::type_name("aiperf::api_service::pods_status"),
           x.registration, x.pods_expected, x.missing, x.error, x.pods);
}

/// A RAW JSONL export part a pod uploaded.
struct raw_part {
  std::string pod;
  std::uint64_t bytes = 0;
  /// Where it was staged (inside `api_config::raw_dir`).
  std::string path;

  friend bool operator==(const raw_part&, const raw_part&) = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, raw_part& x) {
  return f(caf::meta::type_name("aiperf::api_service::raw_part"), x.pod,
           x.bytes, x.path);
}

/// What the HTTP handlers read. Thread-safe: the actor writes, any number
/// of I/O threads read.
class status_board {
public:
  /// Replaces the progress snapshot.
  void publish(progress p);

  /// Returns the latest snapshot.
  [[nodiscard]] std::shared_ptr<const progress> snapshot() const;

  /// Replaces the pods' registration status.
  void publish_pods(pods_status p);

  /// Returns the latest pods' registration status.
  [[nodiscard]] std::shared_ptr<const pods_status> pods() const;

  void set_ready(bool ready) noexcept {
    ready_.store(ready, std::memory_order_release);
  }

  [[nodiscard]] bool ready() const noexcept {
    return ready_.load(std::memory_order_acquire);
  }

  /// Marks the run finished (its exports and the ready marker are
  /// written): POST /api/shutdown is accepted from now on.
  void set_finished();

  [[nodiscard]] bool finished() const;

  /// POST /api/shutdown: false (409) while the run is not finished; true
  /// once it is, and wakes wait_shutdown().
  bool request_shutdown();

  /// Ends a linger from outside HTTP (SIGTERM): wakes wait_shutdown()
  /// whether or not the run finished.
  void force_shutdown();

  /// What POST /api/cancel does: the same cancel as Ctrl+C (partial
  /// results exported, `was_cancelled: true` in the ready marker). Set by
  /// the process that owns the run; empty = nothing to cancel.
  void on_cancel(std::function<void()> cancel);

  /// POST /api/cancel: false (409) once the run finished or when no run
  /// can be cancelled; true after asking the run to stop (idempotent).
  bool request_cancel();

  /// Blocks until a shutdown was requested (true) or `timeout` passed
  /// (false). A request made before the call returns true at once.
  [[nodiscard]] bool wait_shutdown(std::chrono::steady_clock::duration timeout);

  /// Records (or replaces, on a retried upload) the part of `p.pod`.
  void stage(raw_part p);

  /// Returns the staged parts, ordered by pod.
  [[nodiscard]] std::vector<raw_part> raw_parts() const;

private:
  mutable std::mutex mtx_;
  std::shared_ptr<const progress> progress_ = std::make_shared<progress>();
  std::shared_ptr<const pods_status> pods_ = std::make_shared<pods_status>();
  std::vector<raw_part> raw_parts_;
  std::atomic<bool> ready_{false};
  bool finished_ = false;
  bool shutdown_ = false;
  std::condition_variable shutdown_cv_;
  std::function<void()> cancel_;
};

/// Listener and file locations.
struct api_config {
  /// Address to bind; a pod binds "0.0.0.0" so the operator can reach it.
  std::string host = "127.0.0.1";
  /// 9090 in a pod (AIPERF_K8S_PORT_API); 0 picks a free port.
  std::uint16_t port = proto::default_port::api;
  /// I/O threads of the HTTP server.
  unsigned threads = 1;
  /// Holds dataset.dat.zst and index.dat.zst; empty = no dataset served.
  std::filesystem::path dataset_dir;
  /// The run's artifact dir; empty = no artifacts served.
  std::filesystem::path artifact_dir;
  /// Where uploaded RAW parts are staged (created if missing); empty =
  /// uploads refused.
  std::filesystem::path raw_dir;
  /// Largest accepted upload (the whole body is held in memory).
  std::uint64_t upload_limit = std::uint64_t{1} << 30;
};

/// api_service protocol:
/// - `(progress_atom, progress)` from the records_manager (or whoever owns
///   the run's counters): replaces the snapshot served on /api/progress and
///   /metrics; no reply.
/// - `(ready_atom, bool)` from the system_controller: sets what /readyz
///   answers (200 when true, 503 when false); no reply.
/// - `(pods_atom, pods_status)` from the remote group (distributed runs):
///   replaces what /api/pods serves; no reply.
/// - `(caf::get_atom, raw_atom)` from the controller's RAW export barrier:
///   replies the parts staged so far (ordered by pod), so it can wait until
///   every pod has uploaded.
/// - `(proto::stop_atom)`: stops the HTTP server (in-flight responses get
///   the server's stop grace) and quits normally.
/// The actor never fails on bad input: HTTP errors are answered over HTTP.
using api_service_actor = caf::typed_actor<
    caf::reacts_to<progress_atom, progress>, caf::reacts_to<ready_atom, bool>,
    caf::reacts_to<pods_atom, pods_status>,
    caf::replies_to<caf::get_atom, raw_atom>::with<std::vector<raw_part>>,
    caf::reacts_to<proto::stop_atom>>;

/// The running service and its bound port.
struct api_handle {
  api_service_actor actor;
  std::uint16_t port = 0;
  /// What the handlers read; the owner of the run marks it finished and
  /// waits on it for POST /api/shutdown (a pod's linger).
  std::shared_ptr<status_board> board;
};

/// Binds the HTTP server (synchronously, so a port in use fails here, not
/// later), then spawns the actor that owns it. The server stops when the
/// actor terminates.
/// Errors name the failing setting: `benchmark::errc::invalid_config` for
/// threads 0 or a raw_dir that cannot be created; the `http_server::errc` of
/// the server (bind_failed for a host/port in use, bad_config for a host
/// that is not an IP literal), its message prefixed with "api_service: ".
[[nodiscard]] caf::expected<api_handle> spawn_api_service(caf::actor_system& sys,
                                                          api_config cfg);

} // namespace aiperf::api_service
