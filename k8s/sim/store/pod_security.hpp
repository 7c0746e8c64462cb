// Pod Security admission, as kube-apiserver's built-in PodSecurity plugin
// applies it (kubernetes/kubernetes staging/src/k8s.io/pod-security-admission):
// a namespace's labels
//   pod-security.kubernetes.io/enforce: privileged | baseline | restricted
//   pod-security.kubernetes.io/enforce-version: latest | v1.N
//   pod-security.kubernetes.io/warn (+ -version)
// make a pod create that breaks the level Forbidden (enforce) or answered
// with a `Warning` header (warn; also for the pod templates of Deployments,
// ReplicaSets, Jobs, CronJobs, StatefulSets and DaemonSets, which enforce
// never refuses). `audit` is accepted and ignored.
//
// The checks are upstream's, with their messages, in upstream's order
// (baseline checks, then restricted ones, each in file order): baseline
// host namespaces, hostPath volumes, hostPorts, privileged, plus at the
// baseline level only the capabilities and seccomp checks that restricted
// supersedes; restricted allowPrivilegeEscalation, capabilities, volume
// types, runAsNonRoot, runAsUser, seccompProfile. Not emulated: AppArmor,
// SELinux options, procMount, sysctls, Windows host process, host probes,
// exemptions, and every version-specific variant (each version is latest).
#pragma once

#include "k8s/api/json.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::k8s::sim::pod_security {

/// "baseline:latest" for the `mode` labels (`enforce`, `warn`) of a
/// namespace, nullopt when the level is privileged or unset. An unknown
/// level evaluates as restricted, as upstream fails closed.
[[nodiscard]] std::optional<std::string>
policy_of(const json& namespace_labels, std::string_view mode);

/// The checks `pod_spec` fails under `policy` ("restricted:latest"), each as
/// upstream writes it: `reason (detail)`. Empty = allowed.
[[nodiscard]] std::vector<std::string>
violations(std::string_view policy, const json& pod_spec);

/// `PodSecurity "<policy>": <v1>, <v2>, ...`, which upstream writes after
/// "violates " (enforce) or "would violate " (warnings).
[[nodiscard]] std::string describe(std::string_view policy,
                                   const std::vector<std::string>& v);

/// The pod template spec of a pod-templated built-in (`resource` in group
/// `group`), or nullptr for any other object.
[[nodiscard]] const json* template_spec(std::string_view group,
                                        std::string_view resource,
                                        const json& object);

} // namespace aiperf::k8s::sim::pod_security
