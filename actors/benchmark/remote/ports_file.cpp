#include "actors/benchmark/remote/ports_file.hpp"

#include "actors/benchmark/remote/layout.hpp"
#include "runtime/io/durable_file.hpp"

#include <charconv>
#include <string_view>

namespace aiperf::remote {

namespace {

caf::expected<std::uint16_t> port_of(std::string_view endpoint,
                                     zmq_bridge::channel ch) {
  auto bad = [&] {
    return make_error(errc::bad_endpoint,
                      std::string{"the "} + zmq_bridge::to_string(ch)
                        + " channel's endpoint '" + std::string{endpoint}
                        + "' is not a bound tcp://host:port: start the "
                          "controller bridge with TCP ports first");
  };
  constexpr std::string_view scheme = "tcp://";
  auto colon = endpoint.rfind(':');
  if (!endpoint.starts_with(scheme) || colon == std::string_view::npos
      || colon < scheme.size())
    return bad();
  auto digits = endpoint.substr(colon + 1);
  std::uint16_t port = 0;
  auto [end, ec] = std::from_chars(digits.data(),
                                   digits.data() + digits.size(), port);
  if (ec != std::errc{} || end != digits.data() + digits.size() || port == 0)
    return bad();
  return port;
}

} // namespace

caf::expected<controller_ports>
bound_ports(const zmq_bridge::bound_endpoints& bound, std::uint16_t api) {
  using zmq_bridge::channel;
  controller_ports out;
  out.api = api;
  struct field {
    channel ch;
    std::uint16_t controller_ports::*member;
  };
  for (auto [ch, member] :
       {field{channel::control, &controller_ports::control},
        field{channel::credit, &controller_ports::credit},
        field{channel::credit_return, &controller_ports::credit_return},
        field{channel::records, &controller_ports::records}}) {
    auto port = port_of(bound.tcp[ch], ch);
    if (!port)
      return port.error();
    out.*member = *port;
  }
  return out;
}

std::string to_json(const controller_ports& p) {
  auto n = [](std::uint16_t x) { return std::to_string(x); };
  return "{\"api\":" + n(p.api) + ",\"control\":" + n(p.control)
         + ",\"credit\":" + n(p.credit) + ",\"credit_return\":"
         + n(p.credit_return) + ",\"records\":" + n(p.records) + "}";
}

caf::expected<void> write_ports_file(const std::filesystem::path& path,
                                     const controller_ports& ports) {
  return io::atomic_write_file(path, to_json(ports) + "\n");
}

} // namespace aiperf::remote
