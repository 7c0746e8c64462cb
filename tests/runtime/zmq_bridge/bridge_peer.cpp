// A worker process for the two-process bridge test: connects to the
// endpoints in argv, proves its return channel, registers, answers every
// credit_batch with a credit_return_batch and exits 0 on shutdown.
//   bridge_peer <identity> <control> <credit> <credit_return> <records>
#include "runtime/zmq_bridge/bridge.hpp"

#include <caf/all.hpp>

#include <unistd.h>

#include <chrono>
#include <iostream>

using namespace aiperf;
using namespace aiperf::zmq_bridge;

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: bridge_peer <identity> <control> <credit> "
                 "<credit_return> <records>\n";
    return 2;
  }
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  bridge_config bc;
  bc.identity = argv[1];
  bc.connect = {argv[2], argv[3], argv[4], argv[5]};
  bridge b{bc};
  if (auto started = b.start(); !started) {
    std::cerr << aiperf::error_message(started.error()) << "\n";
    return 3;
  }
  b.route_default(caf::actor_cast<caf::actor>(self));
  std::string id = std::string{argv[1]} + "/worker_0";
  b.probe_return_channel(id, {100, std::chrono::milliseconds{50}},
                         caf::actor_cast<caf::actor>(self));
  int rc = 4;
  bool running = true;
  while (running) {
    self->receive(
      [&](const probe_result& r) {
        if (!r.connected) {
          rc = 5;
          running = false;
          return;
        }
        (void) b.send(channel::control,
                      proto::register_service{id, "worker", "test",
                                              static_cast<std::uint32_t>(
                                                ::getpid())},
                      id);
      },
      [&](const origin&, const proto::credit_batch& credits) {
        proto::credit_return_batch returns;
        for (const auto& c : credits)
          returns.push_back({c.id, 0, proto::credit_outcome::ok, false});
        (void) b.send(channel::credit_return, returns, id);
      },
      [&](const origin&, const proto::shutdown& s) {
        rc = s.exit_code;
        running = false;
      },
      caf::after(std::chrono::seconds(30)) >> [&] { running = false; });
  }
  b.stop();
  return rc;
}
