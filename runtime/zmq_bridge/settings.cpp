#include "runtime/zmq_bridge/settings.hpp"

namespace aiperf::zmq_bridge {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::bad_config:
      return "bad_config";
    case errc::not_running:
      return "not_running";
    case errc::not_open:
      return "not_open";
    case errc::os_error:
      return "os_error";
  }
  return "unknown";
}

const char* to_string(channel x) noexcept {
  switch (x) {
    case channel::control:
      return "control";
    case channel::credit:
      return "credit";
    case channel::credit_return:
      return "credit_return";
    case channel::records:
      return "records";
  }
  return "unknown";
}

std::uint16_t port_of(const port_config& ports, channel ch) noexcept {
  switch (ch) {
    case channel::control:
      return ports.control;
    case channel::credit:
      return ports.credit;
    case channel::credit_return:
      return ports.credit_return;
    default:
      return ports.records;
  }
}

std::string& endpoints::operator[](channel ch) noexcept {
  switch (ch) {
    case channel::control:
      return control;
    case channel::credit:
      return credit;
    case channel::credit_return:
      return credit_return;
    default:
      return records;
  }
}

const std::string& endpoints::operator[](channel ch) const noexcept {
  return const_cast<endpoints&>(*this)[ch];
}

endpoints
select_worker_endpoints(const std::optional<std::string>& controller_host,
                        const port_config& ports, const bound_endpoints& bound) {
  endpoints result;
  for (std::size_t i = 0; i < channel_count; ++i) {
    auto ch = static_cast<channel>(i);
    if (controller_host) {
      // Bracket IPv6 literals: zmq needs tcp://[::1]:port.
      auto host = controller_host->find(':') != std::string::npos
                      && controller_host->front() != '['
                    ? "[" + *controller_host + "]"
                    : *controller_host;
      result[ch] = "tcp://" + host + ":" + std::to_string(port_of(ports, ch));
    } else {
      result[ch] = bound.ipc[ch].empty() ? bound.tcp[ch] : bound.ipc[ch];
    }
  }
  return result;
}

caf::expected<std::string> ipc_endpoint(std::string_view ipc_dir, channel ch) {
  std::string path{ipc_dir};
  if (!path.empty() && path.back() == '/')
    path.pop_back();
  path += '/';
  path += to_string(ch);
  path += ".ipc";
  // sockaddr_un::sun_path holds 108 bytes including the terminator.
  if (path.size() > 107)
    return make_error(errc::bad_config,
                      "ipc_dir \"" + std::string{ipc_dir} + "\" makes the socket path "
                        + std::to_string(path.size())
                        + " bytes long, the limit is 107: use a shorter directory");
  return "ipc://" + path;
}

} // namespace aiperf::zmq_bridge
