#include "k8s/sim/sandbox/errors.hpp"

namespace aiperf::k8s::sim::sandbox {

const char* to_string(errc x) noexcept {
  switch (x) {
  case errc::not_root:
    return "not_root";
  case errc::namespaces_unavailable:
    return "namespaces_unavailable";
  case errc::ip_missing:
    return "ip_missing";
  case errc::bad_cidr:
    return "bad_cidr";
  case errc::bad_options:
    return "bad_options";
  case errc::init_failed:
    return "init_failed";
  case errc::init_gone:
    return "init_gone";
  case errc::timeout:
    return "timeout";
  case errc::network_failed:
    return "network_failed";
  case errc::address_exhausted:
    return "address_exhausted";
  case errc::unknown_sandbox:
    return "unknown_sandbox";
  case errc::already_running:
    return "already_running";
  case errc::mount_source_missing:
    return "mount_source_missing";
  case errc::start_failed:
    return "start_failed";
  case errc::probe_failed:
    return "probe_failed";
  case errc::io_failed:
    return "io_failed";
  }
  return "unknown";
}

errc errc_from_name(std::string_view name) noexcept {
  for (auto i = static_cast<int>(errc::not_root);
       i <= static_cast<int>(errc::io_failed); ++i) {
    auto code = static_cast<errc>(i);
    if (name == to_string(code))
      return code;
  }
  return errc::init_failed;
}

} // namespace aiperf::k8s::sim::sandbox
