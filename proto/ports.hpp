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

namespace aiperf::proto {

/// The TCP ports of one node; 0 = ephemeral (tests always use 0). A pod
/// reads its AIPERF_K8S_PORT_<NAME> variables with system::read_pod_env.
struct node_ports {
  std::uint16_t api = default_port::api;
  std::uint16_t health = default_port::health;
  std::uint16_t control = default_port::control;
  std::uint16_t credit = default_port::credit;
  std::uint16_t credit_return = default_port::credit_return;
  std::uint16_t records = default_port::records;

  friend bool operator==(const node_ports&, const node_ports&) = default;
};

} // namespace aiperf::proto
