#include "runtime/system/node_supervisor.hpp"

#include "runtime/log/log.hpp"

#include <caf/all.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <algorithm>

namespace aiperf::system {

node_supervisor_actor::behavior_type node_supervisor(
  node_supervisor_actor::stateful_pointer<node_supervisor_state> self,
  supervision_mode mode, reaper_actor reaper) {
  auto logger = log::get("supervisor");
  self->set_exit_handler([=](caf::exit_msg& msg) {
    auto& kids = self->state.children;
    auto it = std::find_if(kids.begin(), kids.end(), [&](const auto& c) {
      return c.handle.address() == msg.source;
    });
    if (it == kids.end()) {
      // Not a child: our own parent asks us to go down.
      self->quit(std::move(msg.reason));
      return;
    }
    auto name = std::move(it->name);
    kids.erase(it);
    if (!msg.reason || msg.reason == caf::exit_reason::user_shutdown)
      return;
    auto text = self->system().render(msg.reason);
    if (mode == supervision_mode::fail_closed) {
      logger->error("service '{}' failed: {}; stopping the node (fail-closed)",
                    name, text);
      self->quit(std::move(msg.reason));
      return;
    }
    ++self->state.reaped;
    logger->warn("service '{}' failed: {}; reaped, the node goes on", name,
                 text);
    if (reaper)
      self->send(reaper, proto::reaped_atom::value, std::move(name),
                 std::move(msg.reason));
  });
  return {
    [=](adopt_atom, caf::actor& child, std::string& name) {
      self->link_to(child);
      self->state.children.push_back({std::move(child), std::move(name)});
    },
    [=](caf::get_atom) {
      std::vector<std::string> names;
      for (auto& c : self->state.children)
        names.push_back(c.name);
      return names;
    },
    [=](proto::stop_atom) {
      for (auto& c : self->state.children) {
        self->unlink_from(c.handle);
        self->send_exit(c.handle, caf::exit_reason::user_shutdown);
      }
      self->state.children.clear();
      self->quit();
    },
  };
}

int exit_code_for(const caf::error& reason) {
  if (!reason || reason == caf::exit_reason::user_shutdown)
    return 0;
  return 1;
}

} // namespace aiperf::system
