// The simulated cluster's workload and storage controllers, written against
// `k8s::api_actor` alone (list + watch + writes), as kube-controller-manager
// runs them:
//
// - the Deployment controller (kubernetes pkg/controller/deployment): one
//   ReplicaSet per pod template, named `<deployment>-<pod-template-hash>`,
//   RollingUpdate (maxSurge/maxUnavailable) and Recreate, the revision
//   annotation, status counts and the Available/Progressing conditions that
//   `kubectl rollout status` and `kubectl wait --for=condition=Available`
//   read;
// - the ReplicaSet controller (pkg/controller/replicaset): pods
//   `<replicaset>-<5 random>` from the template with a controller
//   ownerReference, replaced when deleted, and the status counts;
// - a volume provisioner (pkg/controller/volume/persistentvolume plus an
//   external provisioner's half): a claim of the default StorageClass gets
//   a PersistentVolume `pvc-<claim uid>` whose data lives in a folder on
//   this machine, both Bound; deleting the claim deletes the volume and its
//   folder (reclaimPolicy Delete).
//
// Each lists its types and watches them from the list's resourceVersion; a
// watch that ends is relisted after a second. Writes carry the
// resourceVersion they were computed from (a conflict is retried from the
// next watch event). Time comes from the actor clock; Event timestamps are a
// wall-clock base read at spawn plus the actor clock's elapsed time, as the
// store does.
//
// Deviations from upstream, by design: the pod-template-hash is FNV-32a of
// the template's JSON (upstream hashes its Go struct dump) encoded as
// upstream encodes it, so names look alike but differ; no orphan adoption
// (pods or ReplicaSets without a controller reference are left alone); no
// proportional scaling of old ReplicaSets in the middle of a rollout, no
// progressDeadlineSeconds (ProgressDeadlineExceeded), no pause/rollback
// subresources; minReadySeconds is counted from when the controller saw the
// pod Ready.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <string>

namespace aiperf::k8s::sim {

/// `(apps_relist_atom, std::string type)`: a controller's own timer that
/// lists and watches `type` ("group/version/resource") again.
using apps_relist_atom = caf::atom_constant<caf::atom("sa_relist")>;
/// `(apps_sync_atom, std::string key)`: a controller's own timer that
/// reconciles `key` ("namespace/name") again (minReadySeconds, retries).
using apps_sync_atom = caf::atom_constant<caf::atom("sa_sync")>;

/// Every controller here: a watch sink for its own watches plus its two
/// timers. Nothing is asked of it and it replies nothing; it stops when its
/// actor is killed.
using apps_controller_actor
    = watch_sink_actor::extend<caf::reacts_to<apps_relist_atom, std::string>,
                               caf::reacts_to<apps_sync_atom, std::string>>;

/// Starts the Deployment controller over `api` (watches deployments and
/// replicasets).
[[nodiscard]] apps_controller_actor
spawn_deployment_controller(caf::actor_system& sys, api_actor api);

/// Starts the ReplicaSet controller over `api` (watches replicasets and
/// pods).
[[nodiscard]] apps_controller_actor
spawn_replicaset_controller(caf::actor_system& sys, api_actor api);

/// The provisioner name written to `default_storage_class()` and to the
/// volumes' `pv.kubernetes.io/provisioned-by` annotation.
inline constexpr const char* provisioner_name
    = "aiperf.nvidia.com/sim-hostpath";

/// Starts the volume provisioner over `api` (watches persistentvolumeclaims,
/// persistentvolumes and storageclasses). Volumes' data lives in
/// `<pv_dir>/<claim uid>` (created mode 0777 so pods of any uid can write);
/// `pv_dir` is created if missing.
[[nodiscard]] apps_controller_actor
spawn_volume_provisioner(caf::actor_system& sys, api_actor api,
                         std::string pv_dir);

/// The StorageClass `standard`: the default class
/// (`storageclass.kubernetes.io/is-default-class: "true"`), provisioner
/// `provisioner_name`, reclaimPolicy Delete, volumeBindingMode Immediate.
[[nodiscard]] json default_storage_class();

/// The pod-template-hash of a template (and the Deployment's
/// status.collisionCount, 0 when unset), as a label value.
[[nodiscard]] std::string pod_template_hash(const json& pod_template,
                                            std::int64_t collision_count = 0);

} // namespace aiperf::k8s::sim
