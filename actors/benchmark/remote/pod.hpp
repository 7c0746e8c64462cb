// Worker-pod side of the distributed runtime: the proxies a pod's
// worker_group_manager talks to instead of the controller's services, and
// the inbox that hands bridge deliveries to the pod's services.
#pragma once

#include "proto/ports.hpp"
#include "runtime/http_fetch/http_fetch.hpp"
#include "proto/records_path.hpp"
#include "proto/timing_manager.hpp"
#include "runtime/time/clock_offset_tracker.hpp"
#include "runtime/time/skewed_clock.hpp"
#include "runtime/zmq_bridge/bridge.hpp"

#include <caf/actor.hpp>
#include <caf/atom.hpp>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace aiperf::remote {

/// `(heartbeat_atom)`: internal tick of the pod inbox.
using heartbeat_atom = caf::atom_constant<caf::atom("heartbeat")>;
/// `(caf::get_atom, clock_atom)` -> int64 clock_offset_ns estimate.
using clock_atom = caf::atom_constant<caf::atom("clock")>;

/// remote_timing protocol (a timing_manager_actor for the pod's workers):
/// credit_return_batch and first tokens go to the controller (PUSH on the
/// credit-return channel, sender = `pod`); configure/start/progress/lost are
/// controller-only and answer an error.
[[nodiscard]] proto::timing_manager_actor
spawn_remote_timing(caf::actor_system& sys,
                    std::shared_ptr<zmq_bridge::bridge> bridge,
                    std::string pod);

/// remote_records protocol (a records_manager_actor for the pod's record
/// processors): metric_record_batch goes to the controller (PUSH on the
/// records channel); process/progress answer an error, a section is
/// dropped with a warning.
[[nodiscard]] proto::records_manager_actor
spawn_remote_records(caf::actor_system& sys,
                     std::shared_ptr<zmq_bridge::bridge> bridge,
                     std::string pod);

/// The current clock_offset_ns for records (the record contract: add it to
/// worker epoch times to get the controller's clock). The pod inbox writes,
/// the stampers read.
using offset_slot = std::shared_ptr<std::atomic<std::int64_t>>;

/// record stamper protocol (a record_sink_actor between a pod's workers and
/// one of its processors): sets `clock_offset_ns` from `slot` on every
/// record of a `request_record_batch` and forwards the batch.
[[nodiscard]] proto::record_sink_actor
spawn_offset_stamper(caf::actor_system& sys,
                     proto::record_processor_actor processor, offset_slot slot);

struct pod_inbox_config {
  std::shared_ptr<zmq_bridge::bridge> bridge;
  /// "pod1": the sender of the pod's control traffic.
  std::string pod;
  /// Workers by service id ("pod1/worker_0").
  std::map<std::string, proto::credit_sink_actor> workers;
  std::vector<proto::record_processor_actor> processors;
  /// Upload the processors' RAW parts to the API on FINALIZE.
  bool export_raw = false;
  http_fetch::endpoint api{"127.0.0.1", proto::default_port::api};
  /// Name of the RAW part (PUT /api/raw/<name>); empty = `pod`. Tests set
  /// an invalid one (AIPERF_TEST_RAW_UPLOAD_NAME) to exercise the barrier's
  /// failure path.
  std::string raw_upload_name;
  /// Worker clock for cross-process stamps (AIPERF_TEST_CLOCK_SKEW_NS).
  time::skewed_clock clock;
  /// Same host as the controller: offset pinned to 0 (and no skew).
  bool local_clock = true;
  /// Updated after every credit batch; may be null.
  offset_slot record_offset;
  std::chrono::milliseconds heartbeat_interval{1000};
  /// The controller heartbeats every second once every pod registered; a
  /// pod that hears nothing from it for this long exits with code 1 (its
  /// controller is gone and nobody will send a shutdown). 0 = never.
  std::chrono::milliseconds controller_timeout{30'000};
  /// Called once with the process exit code (shutdown from the controller,
  /// registration refused). Runs on a CAF thread: only signal the owner.
  std::function<void(int, std::string)> on_exit;
};

/// pod inbox protocol: bridge deliveries `(origin, T)`:
/// - credit channel: `credit_batch` (sender = target worker id): stamps the
///   arrival for the clock estimate, maps due/grant times from the
///   controller's clock onto ours, forwards to the worker; `command`
///   "cancel" (body: comma-separated credit ids, empty = all).
/// - control channel: `registered` (a refusal ends the process with exit 1),
///   `command` "finalize" (flush every processor, upload the RAW part with
///   PUT /api/raw/<pod>, then `ack`), `shutdown` (on_exit with its code),
///   `heartbeat` (the controller is alive).
/// - `time_pong`: round-trip samples of the clock estimate.
/// Sends a heartbeat on the control channel every heartbeat_interval, and
/// one more before the FINALIZE ack; each carries the clock offset estimate
/// (the controller reports the last one in the export's `pods`).
[[nodiscard]] caf::actor spawn_pod_inbox(caf::actor_system& sys,
                                         pod_inbox_config cfg);

/// Routes every message type a pod receives to `inbox`.
void route_pod_inbox(zmq_bridge::bridge& bridge, const caf::actor& inbox);

} // namespace aiperf::remote
