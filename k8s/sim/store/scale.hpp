// The scale subresource's mapping between a parent object and its
// autoscaling/v1 Scale: the projection GET answers and PATCH applies to,
// the write back of spec.replicas, and the replicas checks the custom
// resource validator makes wherever a CRD declares subresources.scale
// (kubernetes pkg/registry/apps/deployment/storage ScaleREST and
// apiextensions-apiserver pkg/registry/customresource etcd.go and
// validator.go). The store (store_core.cpp) serves the verbs.
#pragma once

#include "k8s/api/json.hpp"
#include "k8s/errors/errors.hpp"
#include "k8s/sim/builtins/registry.hpp"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace aiperf::k8s::sim {

/// What a custom resource's Scale carries as spec.replicas when the CRD's
/// specReplicasPath is absent from the object: the smallest int32, so that a
/// write which does not set the replicas can be told from one that sets 0.
inline constexpr std::int64_t unset_spec_replicas = -2147483648;

struct scale_projection {
  /// kind, apiVersion, metadata {name, namespace, uid, resourceVersion,
  /// creationTimestamp}, spec {replicas}, status {replicas, selector}, with
  /// autoscaling/v1's omitempty fields left out when zero.
  json scale;
  /// A custom resource lacks the value at specReplicasPath; scale then
  /// holds unset_spec_replicas.
  bool spec_replicas_missing = false;
};

/// The Scale of `parent`. Built-ins: spec.replicas, status.replicas and the
/// label selector string of spec.selector; custom resources: the integers
/// at the CRD's replicas paths (absent = 0) and the string at its
/// labelSelectorPath.
[[nodiscard]] scale_projection scale_of(const resource_type& rt,
                                        const json& parent);

/// The integer at a dotted path (".spec.replicas"); nullopt when absent or
/// not an integer.
[[nodiscard]] std::optional<std::int64_t> integer_at(const json& object,
                                                     std::string_view path);

/// Sets the value at a dotted path, making the objects on the way.
void set_at(json& object, std::string_view path, json value);

/// The custom resource validator's scale checks (ValidateScaleSpec unless
/// `status_only`, then ValidateScaleStatus): replicas at either path must be
/// a non-negative int32. Field paths are the CRD's, leading dot kept.
[[nodiscard]] std::vector<status_cause>
validate_custom_scale(const scale_paths& paths, const json& object,
                      bool status_only);

} // namespace aiperf::k8s::sim
