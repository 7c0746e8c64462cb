// Controller side of the distributed runtime: the worker group that stands
// for worker pods, and the inbox that hands bridge deliveries to the local
// services.
#pragma once

#include "actors/benchmark/api_service/api_service.hpp"
#include "actors/benchmark/pod_watch/pod_watch.hpp"
#include "actors/benchmark/remote/layout.hpp"
#include "actors/benchmark/system_controller/system_controller.hpp"
#include "runtime/zmq_bridge/bridge.hpp"

#include <caf/actor.hpp>
#include <caf/atom.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace aiperf::remote {

/// `(pod_lost_atom, std::string pod, std::string why)`: the pod's process
/// is gone (child exit seen by the parent, or heartbeat timeout).
using pod_lost_atom = caf::atom_constant<caf::atom("podlost")>;
/// Internal: `(finalize_pod_atom, uint32 pod, uint32 processor)`.
using finalize_pod_atom = caf::atom_constant<caf::atom("finpod")>;
/// Internal: periodic liveness / registration deadline checks.
using check_atom = caf::atom_constant<caf::atom("check")>;

/// What the controller process and its remote group share. Thread-safe.
class run_monitor {
public:
  void set_controller(caf::actor h) {
    std::lock_guard<std::mutex> guard{mtx_};
    controller_ = std::move(h);
  }
  [[nodiscard]] caf::actor controller() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return controller_;
  }
  void set_group(caf::actor h) {
    std::lock_guard<std::mutex> guard{mtx_};
    group_ = std::move(h);
  }
  [[nodiscard]] caf::actor group() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return group_;
  }
  /// Records a lost pod ("pod1 (exited with code 9)"); returns how many
  /// pods are lost now.
  std::uint32_t add_lost_pod(std::string description) {
    std::lock_guard<std::mutex> guard{mtx_};
    lost_.push_back(std::move(description));
    pods_lost = static_cast<std::uint32_t>(lost_.size());
    return pods_lost;
  }
  /// The lost pods, in the order they were lost.
  [[nodiscard]] std::vector<std::string> lost_pods() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return lost_;
  }
  /// Pods declared lost so far.
  std::atomic<std::uint32_t> pods_lost{0};
  /// The run was cancelled because too many pods were lost.
  std::atomic<bool> aborted{false};
  /// Registrations refused (unknown id, a lost pod's new process, a pod
  /// index taken by another process).
  std::atomic<std::uint32_t> registrations_refused{0};

private:
  mutable std::mutex mtx_;
  caf::actor controller_;
  caf::actor group_;
  std::vector<std::string> lost_;
};

struct remote_group_config {
  std::shared_ptr<zmq_bridge::bridge> bridge;
  pod_layout layout;
  /// The api_service serves the dataset from here (export_compressed).
  std::filesystem::path dataset_dir;
  /// Asked for the staged RAW parts once a pod acked FINALIZE; told the
  /// pods' registration (`/api/pods`).
  api_service::api_service_actor api;
  /// How long every expected service has to register.
  std::chrono::milliseconds registration_timeout{60'000};
  /// A pod without a heartbeat for this long is lost.
  std::chrono::milliseconds heartbeat_timeout{5'000};
  /// AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT: above this share of lost
  /// pods the run is cancelled like Ctrl+C; at or below it goes on degraded.
  double abort_threshold_percent = 50;
  /// Kubernetes: a pod watch reports the worker pods (pod_watch), and the
  /// group answers get only once every pod also is Running and Ready.
  bool await_pods_ready = false;
  /// Kubernetes: the group spawns this pod watch with itself as the sink
  /// (and ends it when it ends); set with await_pods_ready.
  std::optional<pod_watch::watch_config> watch;
  std::shared_ptr<run_monitor> monitor;
  /// Called, on the group's thread, with every registration state the
  /// api_service is told (operator mode: status.workers); may be empty.
  std::function<void(const api_service::pods_status&)> on_status;
};

/// A system_controller group factory whose group is the worker pods.
///
/// remote group protocol (speaks worker_group_manager_actor's):
/// - `(caf::get_atom)` from the system_controller: exports the dataset for
///   the pods, then replies `group_handles` once every expected service
///   instance registered (proxies: one credit_sink per remote worker, one
///   record_processor per remote processor), or an error naming every
///   missing service when registration_timeout passes.
/// - bridge deliveries `(origin, register_service | heartbeat | ack |
///   worker_connected)` on the control channel.
/// - `(pod_lost_atom, pod, why)`: turns the pod's in-flight credits into
///   WorkerLost records, then continues degraded or cancels the run.
/// - `(pod_watch::pod_report_atom, pod_report)` from the pod watch
///   (Kubernetes): readiness, which gates the get reply when
///   await_pods_ready; a gone pod is lost once the run started (before,
///   its next process's registration resets the pod's registration).
/// A pod is lost when its process exits (local mode), when a send to it
/// fails (its control connection dropped: while the run goes on it gets a
/// heartbeat every 250 ms, so a killed process is noticed within that),
/// after heartbeat_timeout of silence (a network cut), when the pod watch
/// reports it gone, or when one of its services registers again mid-run (a
/// new process in the pod); that registration is refused and logged.
/// Tells `api` `(pods_atom, pods_status)` when a service registers, the
/// registration completes or fails, and (at most every 250 ms) when a pod's
/// heartbeat or loss changed what /api/pods shows; no reply expected. Once
/// every pod finalized (or was lost), and before the last finalize answer,
/// it sends the records_manager `(section_atom, "pods", json)`: each pod's
/// last clock estimate and whether it was lost, for the export.
/// Proxies: a remote worker forwards credit_batch / cancel to its pod on the
/// credit channel (sender = worker id); a remote processor's finalize sends
/// FINALIZE to its pod once and replies after the pod's ack (the staged RAW
/// part's path for the pod's first processor, "" for the others).
[[nodiscard]] system_controller::group_factory
make_remote_group_factory(remote_group_config cfg);

/// Spawns the controller's inbox and routes the bridge's data channels to
/// it: credit_return_batch and first-token commands -> `timing`,
/// metric_record_batch -> `records`. Control traffic is routed to the
/// remote group by the factory.
[[nodiscard]] caf::actor
spawn_controller_inbox(caf::actor_system& sys, zmq_bridge::bridge& bridge,
                       proto::timing_manager_actor timing,
                       proto::records_manager_actor records);

} // namespace aiperf::remote
