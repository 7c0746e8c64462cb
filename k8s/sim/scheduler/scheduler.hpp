// The simulated cluster's scheduler: kube-scheduler's default profile, as far
// as the pods the simulator runs need it, written against `k8s::api_actor`.
//
// It lists and watches pods, Nodes, PersistentVolumeClaims and
// PersistentVolumes and binds each pod that has no spec.nodeName, whose
// schedulerName is default-scheduler and that has no schedulingGates, with
// `POST pods/<name>/binding` (a Binding naming the Node; the API server sets
// spec.nodeName and PodScheduled=True), then records the `Scheduled` Event.
// Pods go by priority (highest first), then age. The filters are upstream's
// default plugins in their order (kubernetes pkg/scheduler/framework/
// plugins), each node failing at the first that refuses it:
//   NodeUnschedulable  spec.unschedulable (unless tolerated)
//   NodeName           spec.nodeName (a pod naming a Node is never ours)
//   TaintToleration    NoSchedule and NoExecute taints (PreferNoSchedule
//                      does not filter)
//   NodeAffinity       nodeSelector and required node affinity
//                      (matchExpressions In/NotIn/Exists/DoesNotExist/Gt/Lt,
//                      matchFields metadata.name)
//   NodeResourcesFit   requests (cpu, memory, ephemeral-storage and any
//                      extended resource such as nvidia.com/gpu; init
//                      containers by upstream's max rule, sidecars added,
//                      spec.overhead added) and the pod count, against
//                      allocatable minus the requests of the pods bound to
//                      the node that are not Succeeded or Failed
//   VolumeRestrictions a ReadWriteOncePod claim used by another pod
//   VolumeBinding      claims that are missing, being deleted or unbound
//                      (pre-filter: every node), a volume's
//                      spec.nodeAffinity, and — where upstream relies on the
//                      attach-detach controller's Multi-Attach refusal — a
//                      ReadWriteOnce claim in use by a pod on another node
//                      (reported as a volume node affinity conflict)
// A pod no node fits gets PodScheduled=False, reason Unschedulable, with
// kube-scheduler 1.32's message (reasons counted per node, sorted as
// strings; then the preemption verdict: `Preemption is not helpful for
// scheduling` for nodes refused by an unresolvable filter, `No preemption
// victims found for incoming pod` for the others — this scheduler never
// preempts) and a FailedScheduling Event when the message changes. It is
// tried again whenever pods, Nodes, claims or volumes change, and every
// 10 s of actor time while any pod waits.
//
// Score: upstream's NodeResourcesLeastAllocated on cpu and memory (the node
// with the most free share), ties broken by node name.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "k8s/sim/apps/apps.hpp"
#include "proto/error.hpp"

#include <caf/expected.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::scheduler {

/// Failures of loading a Nodes file.
enum class errc : std::uint8_t {
  unreadable = 1, // the file cannot be read or parsed
  invalid,        // a Node in it is not acceptable (names the field)
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::k8s::sim::scheduler

AIPERF_ERROR_ENUM(aiperf::k8s::sim::scheduler::errc, "k8s_sched")

namespace aiperf::k8s::sim {

using scheduler_fault_atom = caf::atom_constant<caf::atom("sched_flt")>;
using scheduler_pass_atom = caf::atom_constant<caf::atom("sched_pass")>;

/// The scheduler. Besides its own watches and timers (`apps_relist_atom`;
/// `(scheduler_pass_atom, bool from_timer)`: a scheduling pass), it
/// answers:
/// - `(scheduler_fault_atom, std::string namespace, std::string
///   label_selector, std::int32_t count)` -> void: the next `count` pods
///   created in `namespace` whose labels match `label_selector` (kubectl
///   syntax; "" = every pod) are never bound and get the Unschedulable
///   condition of a pod whose node affinity no Node matches. Error: 400
///   k8s::errc::invalid status for a selector that does not parse, or a
///   count below 1. Answered at once.
using scheduler_actor = watch_sink_actor::extend<
    caf::reacts_to<apps_relist_atom, std::string>,
    caf::reacts_to<scheduler_pass_atom, bool>,
    caf::replies_to<scheduler_fault_atom, std::string, std::string,
                    std::int32_t>::with<void>>;

/// Starts the scheduler over `api`.
[[nodiscard]] scheduler_actor spawn_scheduler(caf::actor_system& sys,
                                              api_actor api);

/// The default cluster: one Node `sim-node-0` with capacity and allocatable
/// cpu 64, memory 256Gi, pods 110 (and ephemeral-storage 1Ti, so pods
/// requesting some fit as on a real node), no taints, no GPUs, labels
/// kubernetes.io/hostname, kubernetes.io/os=linux, kubernetes.io/arch, and
/// the Ready condition.
[[nodiscard]] std::vector<json> default_nodes();

/// Nodes from a JSON or YAML file: a list of Node objects, a `v1` List (or
/// NodeList) with items, or one Node. Each needs metadata.name (a DNS-1123
/// subdomain, unique in the file); quantities in status.capacity and
/// status.allocatable must parse; taints need a key and an effect of
/// NoSchedule, PreferNoSchedule or NoExecute. allocatable defaults to
/// capacity, and both to the default Node's; the hostname/os/arch labels
/// and the Ready condition are added when absent. Errors (scheduler::errc)
/// name the file and the field, e.g. `nodes.yaml: items[1].status.
/// allocatable.cpu: "lots" is not a quantity`.
[[nodiscard]] caf::expected<std::vector<json>>
load_nodes(const std::string& path);

/// A resource quantity ("500m", "2", "256Gi", "1e3") in base units; nullopt
/// if it does not parse.
[[nodiscard]] std::optional<double> parse_quantity(const json& value);

} // namespace aiperf::k8s::sim
