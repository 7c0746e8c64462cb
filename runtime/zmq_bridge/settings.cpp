#include "runtime/zmq_bridge/settings.hpp"

#include <charconv>
#include <cstdlib>

namespace aiperf::zmq_bridge {

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

std::uint16_t port_config::of(channel ch) const noexcept {
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

env_lookup process_env() {
  return [](const char* name) { return std::getenv(name); };
}

std::optional<std::string> apply_port_env(port_config& ports,
                                          const env_lookup& env) {
  struct entry {
    const char* name;
    std::uint16_t port_config::*field;
  };
  static constexpr entry entries[] = {
    {"AIPERF_K8S_PORT_API", &port_config::api},
    {"AIPERF_K8S_PORT_HEALTH", &port_config::health},
    {"AIPERF_K8S_PORT_CONTROL", &port_config::control},
    {"AIPERF_K8S_PORT_CREDIT", &port_config::credit},
    {"AIPERF_K8S_PORT_CREDIT_RETURN", &port_config::credit_return},
    {"AIPERF_K8S_PORT_RECORDS", &port_config::records},
  };
  auto result = ports;
  for (const auto& e : entries) {
    const char* raw = env(e.name);
    if (raw == nullptr)
      continue;
    std::string_view text{raw};
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(),
                                     value);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size()
        || value > 65535)
      return std::string{e.name} + "=\"" + std::string{text}
             + "\" is not a port number: use 0-65535 (0 = ephemeral)";
    result.*e.field = static_cast<std::uint16_t>(value);
  }
  ports = result;
  return std::nullopt;
}

std::optional<std::string> controller_host_from_env(const env_lookup& env) {
  const char* raw = env(controller_host_env);
  if (raw == nullptr || *raw == '\0')
    return std::nullopt;
  return std::string{raw};
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
      result[ch] = "tcp://" + host + ":" + std::to_string(ports.of(ch));
    } else {
      result[ch] = bound.ipc[ch].empty() ? bound.tcp[ch] : bound.ipc[ch];
    }
  }
  return result;
}

std::optional<std::string> ipc_endpoint(std::string_view ipc_dir, channel ch,
                                        std::string* error) {
  std::string path{ipc_dir};
  if (!path.empty() && path.back() == '/')
    path.pop_back();
  path += '/';
  path += to_string(ch);
  path += ".ipc";
  // sockaddr_un::sun_path holds 108 bytes including the terminator.
  if (path.size() > 107) {
    if (error != nullptr)
      *error = "ipc_dir \"" + std::string{ipc_dir} + "\" makes the socket path "
               + std::to_string(path.size())
               + " bytes long, the limit is 107: use a shorter directory";
    return std::nullopt;
  }
  return "ipc://" + path;
}

} // namespace aiperf::zmq_bridge
