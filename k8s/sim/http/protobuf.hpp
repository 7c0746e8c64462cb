// Request bodies in Kubernetes' protobuf encoding, turned into the JSON the
// store reads. kubectl's typed clients (create configmap|secret|namespace|
// role|rolebinding|clusterrole|clusterrolebinding|serviceaccount, auth
// can-i, create token) send `Content-Type: application/vnd.kubernetes.protobuf`
// while accepting JSON answers, so only the request direction is needed.
//
// The body is the 4-byte magic "k8s\0" and a runtime.Unknown message
// (k8s.io/apimachinery pkg/runtime/generated.proto: 1 typeMeta {1
// apiVersion, 2 kind}, 2 raw) whose raw bytes are the typed object. The
// object is decoded from hand-written field tables of k8s.io/api's
// generated.proto files for the kinds listed above; any other kind is
// refused with 415, as a server that does not know the kind in that
// encoding would.
#pragma once

#include "k8s/api/json.hpp"
#include "proto/error.hpp"

#include <string_view>

namespace aiperf::k8s::sim::http {

inline constexpr std::string_view protobuf_content_type
    = "application/vnd.kubernetes.protobuf";

/// The JSON object (kind and apiVersion first) a protobuf body encodes.
/// Errors carry a Status: 400 BadRequest for bytes that are not a
/// Kubernetes protobuf message, 415 UnsupportedMediaType for a kind this
/// decoder has no table for.
[[nodiscard]] caf::expected<json> decode_protobuf_object(std::string_view body);

} // namespace aiperf::k8s::sim::http
