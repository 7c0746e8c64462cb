// The default TCP ports of a node, defined once. A pod reads overrides from
// AIPERF_K8S_PORT_<NAME> (runtime/system/env.hpp); 0 picks a free port.
#pragma once

#include <cstdint>

namespace aiperf::proto::default_port {

/// The controller's api_service: progress, Prometheus /metrics, files.
inline constexpr std::uint16_t api = 9090;
/// /healthz and /readyz of every pod.
inline constexpr std::uint16_t health = 8080;
/// ZMQ channels, bound by the controller.
inline constexpr std::uint16_t control = 5667;
inline constexpr std::uint16_t credit = 5668;
inline constexpr std::uint16_t credit_return = 5669;
inline constexpr std::uint16_t records = 5670;

} // namespace aiperf::proto::default_port
