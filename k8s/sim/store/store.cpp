#include "k8s/sim/store/store.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace aiperf::k8s::sim {
namespace {

caf::error not_ready() {
  return make_status_error("store", status{"ServiceUnavailable",
                                           503,
                                           "the store is not implemented yet",
                                           {}});
}

store_actor::behavior_type store_impl(store_actor::pointer) {
  return {
      [](request&) -> caf::result<response> { return not_ready(); },
      [](watch_atom, request&, watch_sink_actor&)
          -> caf::result<std::uint64_t> { return not_ready(); },
      [](unwatch_atom, std::uint64_t) {},
      [](authenticate_atom, std::string&) -> caf::result<user_info> {
        return not_ready();
      },
      [](discovery_atom, std::string&) -> caf::result<response> {
        return not_ready();
      },
      [](reset_atom, bool) -> caf::result<std::string> { return not_ready(); },
      [](drop_watches_atom, std::string&) -> caf::result<std::uint64_t> {
        return not_ready();
      },
  };
}

} // namespace

caf::expected<store_actor> spawn_store(caf::actor_system& sys, store_config) {
  return sys.spawn(store_impl);
}

} // namespace aiperf::k8s::sim
