// The container runtime's error codes (category "k8s_sbx"). Each error's
// message names the step that failed and, where there is one, the fix.
#pragma once

#include "proto/error.hpp"

#include <cstdint>
#include <string_view>

namespace aiperf::k8s::sim::sandbox {

enum class errc : std::uint8_t {
  not_root = 1,           // the pod network needs root
  namespaces_unavailable, // clone/unshare of PID, network or mount namespaces
  ip_missing,             // no `ip` command (iproute2)
  bad_cidr,               // the pod CIDR is not an IPv4 prefix of /8-/28
  bad_options,            // cluster_options or a spec field is unusable
  init_failed,            // the cluster init did not start or answer setup
  init_gone,              // the cluster init has exited
  timeout,                // the cluster init did not answer in time
  network_failed,         // bridge, veth, address or route setup failed
  address_exhausted,      // every address of the pod CIDR is in use
  unknown_sandbox,        // no sandbox with that id
  already_running,        // a container of that name still runs
  mount_source_missing,   // a declared mount's source does not exist
  start_failed,           // a container step before exec failed
  probe_failed,           // the probe's connect or answer failed
  io_failed,              // a pod file could not be written
};

[[nodiscard]] const char* to_string(errc x) noexcept;

/// The code named `name` (to_string's text), or init_failed for a name
/// that is none of them.
[[nodiscard]] errc errc_from_name(std::string_view name) noexcept;

} // namespace aiperf::k8s::sim::sandbox

AIPERF_ERROR_ENUM(aiperf::k8s::sim::sandbox::errc, "k8s_sbx")
