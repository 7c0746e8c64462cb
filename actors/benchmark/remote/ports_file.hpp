// The controller's bound ports as a file. A controller told to bind port 0
// (AIPERF_K8S_PORT_<NAME>=0) writes what it got, so that processes started
// after it on the same host (worker pods, tests) connect without picking a
// port in advance.
#pragma once

#include "proto/error.hpp"
#include "runtime/zmq_bridge/settings.hpp"

#include <cstdint>
#include <filesystem>
#include <string>

namespace aiperf::remote {

/// The TCP ports a controller listens on.
struct controller_ports {
  std::uint16_t api = 0;
  std::uint16_t control = 0;
  std::uint16_t credit = 0;
  std::uint16_t credit_return = 0;
  std::uint16_t records = 0;

  friend bool operator==(const controller_ports&,
                         const controller_ports&) = default;
};

/// The ports of a controller bridge's TCP endpoints ("tcp://host:port")
/// and of its API; errc::bad_endpoint naming the channel when one is not a
/// bound TCP endpoint.
[[nodiscard]] caf::expected<controller_ports>
bound_ports(const zmq_bridge::bound_endpoints& bound, std::uint16_t api);

/// One JSON object: {"api":N,"control":N,"credit":N,"credit_return":N,
/// "records":N}; the keys are the AIPERF_K8S_PORT_<NAME> names in lower
/// case.
[[nodiscard]] std::string to_json(const controller_ports& ports);

/// Writes to_json(ports) and a newline to `path` atomically and durably (a
/// reader sees no file or the whole object); io::errc naming the path.
[[nodiscard]] caf::expected<void>
write_ports_file(const std::filesystem::path& path,
                 const controller_ports& ports);

} // namespace aiperf::remote
