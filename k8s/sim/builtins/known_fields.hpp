// What kube-apiserver's strict JSON decoding knows of the built-in types we
// write, for fieldValidation=Strict (kubectl 1.32's default: 400
// `strict decoding error: unknown field "spec.x"`) and Warn (one Warning
// header per field).
//
// The model covers ObjectMeta and the types the product and its tests
// write — Namespace, ConfigMap, Secret, ServiceAccount, Pod (PodSpec,
// Container), Job, Deployment, ReplicaSet, Service, Role, ClusterRole,
// RoleBinding, ClusterRoleBinding, Lease, Event — down to the structs we
// use; below that (probes, volumes, affinity, status) every field is
// accepted. Other types are checked at the top level only.
#pragma once

#include "k8s/api/json.hpp"
#include "k8s/sim/builtins/registry.hpp"

#include <string>
#include <vector>

namespace aiperf::k8s::sim {

/// The unknown fields of `object`, in document order, as the decoder names
/// them: "spec.x", "spec.template.spec.containers[0].foo", "metadata.bogus".
/// Custom resources answer none here: their schema prunes them (see
/// k8s/sim/schema).
[[nodiscard]] std::vector<std::string> unknown_fields(const resource_type& type,
                                                      const json& object);

/// The 400 message of a Strict request: `strict decoding error: unknown
/// field "a", unknown field "b"`.
[[nodiscard]] std::string
strict_decoding_message(const std::vector<std::string>& paths);

/// The Warning header texts of a Warn request: `unknown field "a"`, ...
[[nodiscard]] std::vector<std::string>
strict_decoding_warnings(const std::vector<std::string>& paths);

} // namespace aiperf::k8s::sim
