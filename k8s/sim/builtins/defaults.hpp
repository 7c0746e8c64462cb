// Defaulting and validation of the built-in types, as kube-apiserver applies
// them on a write (pkg/apis/*/v1/defaults.go, the registry strategies'
// PrepareForCreate, and the admission plugins every cluster runs:
// ServiceAccount, Priority, DefaultTolerationSeconds), so that what a
// client reads back looks like what a real cluster stores.
//
// Order on a write, as the real server does it: decode (unknown_fields),
// default_object, then validate_object; the store then fills the system
// fields it owns (resourceVersion, generation, ...).
#pragma once

#include "k8s/api/json.hpp"
#include "k8s/errors/errors.hpp"
#include "k8s/sim/builtins/registry.hpp"

#include <vector>

namespace aiperf::k8s::sim {

/// Fills in the defaults of a built-in object being created (or replaced):
/// - Pod: spec restartPolicy Always, dnsPolicy ClusterFirst,
///   terminationGracePeriodSeconds 30, schedulerName default-scheduler,
///   securityContext {}, enableServiceLinks; per container
///   terminationMessagePath /dev/termination-log, terminationMessagePolicy
///   File, imagePullPolicy (Always for :latest or no tag, else IfNotPresent),
///   resources {} (requests copied from limits where absent), ports' protocol
///   TCP, probes' timeoutSeconds 1, periodSeconds 10, successThreshold 1,
///   failureThreshold 3 and httpGet path "/" scheme HTTP, env fieldRef
///   apiVersion v1; volumes' defaultMode 420 (configMap, secret, downwardAPI,
///   projected) and projected tokens' expirationSeconds 3600; on create status
///   {phase: Pending, qosClass}. (ServiceAccount admission proper — the
///   account's existence, the token volume — is the store's, which knows the
///   accounts.)
/// - PersistentVolumeClaim: volumeMode Filesystem, on create phase Pending.
///   PersistentVolume: persistentVolumeReclaimPolicy Retain, volumeMode
///   Filesystem, on create phase Pending. StorageClass: reclaimPolicy
///   Delete, volumeBindingMode Immediate.
/// - Job: completions and parallelism 1 (parallelism alone if completions
///   is set), backoffLimit 6, completionMode NonIndexed, suspend false,
///   podReplacementPolicy; the generated selector and template labels
///   (batch.kubernetes.io/controller-uid, job-name) from metadata.uid —
///   call after the uid is set; the template's PodSpec defaults.
/// - Deployment: replicas 1, strategy RollingUpdate 25%/25%,
///   revisionHistoryLimit 10, progressDeadlineSeconds 600, template.
///   ReplicaSet: replicas 1, template.
/// - Service: type ClusterIP, sessionAffinity None, ports' protocol TCP and
///   targetPort = port, internalTrafficPolicy Cluster, ipFamilyPolicy
///   SingleStack, ipFamilies [IPv4].
/// - Namespace: spec.finalizers [kubernetes], the kubernetes.io/metadata.name
///   label, status.phase Active.
/// - Secret: type Opaque; stringData merged into data (base64) and dropped.
/// - RoleBinding/ClusterRoleBinding: subjects' and roleRef's apiGroup.
/// - CustomResourceDefinition: names.singular, names.listKind,
///   conversion.strategy None.
/// `creating` = a create (status is only initialised then).
void default_object(const resource_type& type, json& object,
                    bool creating = true);

/// What the admission plugins every cluster runs add to a Pod being created,
/// after defaulting (and after the field manager has recorded its creator's
/// fields): spec.serviceAccountName "default" and its mirror serviceAccount
/// (ServiceAccount), the not-ready/unreachable NoExecute tolerations of 300 s
/// (DefaultTolerationSeconds). The store adds the rest of ServiceAccount
/// admission and Priority, which need other objects.
void default_pod_admission(json& pod);

/// The built-in validation of `object` (after default_object): ObjectMeta
/// (create) or ObjectMetaUpdate (`old` set), then the type's own checks —
/// ConfigMap, Secret, Pod, Job, Deployment, ReplicaSet, Service, RBAC
/// rules/bindings. A Pod update may change only what ValidatePodUpdate
/// allows (images, a shorter activeDeadlineSeconds, added tolerations);
/// anything else is upstream's `spec: Forbidden: pod updates may not change
/// fields other than …` followed by a list of the changed paths (upstream
/// prints a go-cmp diff there). Custom resources get the ObjectMeta part only
/// (their schema does the rest). An empty result = valid; else compose the 422
/// with k8s::invalid_status(type.kind, type.group, name, causes).
[[nodiscard]] std::vector<status_cause>
validate_object(const resource_type& type, const json& object,
                const json* old = nullptr);

} // namespace aiperf::k8s::sim
