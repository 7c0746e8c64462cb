#include "k8s/sim/controllers/controllers.hpp"
#include "k8s/sim/controllers/detail.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <chrono>
#include <memory>
#include <set>

namespace aiperf::k8s::sim {

namespace {

constexpr auto retry_delay = std::chrono::seconds{1};
const std::string namespaces_key = "/v1/namespaces";

struct ns_state {
  // Not an aggregate: CAF would build the state from the actor pointer.
  ns_state() = default;

  api_actor api;
  type_registry registry;
  std::uint64_t watch_id = 0;
  std::set<std::string> in_progress; // namespaces being emptied
  static inline const char* name = "k8s_namespace_controller";
};

using ns_ptr = namespace_controller_actor::stateful_pointer<ns_state>;

const resource_type& namespace_type(ns_ptr self) {
  return *self->state.registry.find("", "v1", "namespaces");
}

// A namespace the controller has to empty: being deleted and still holding
// the `kubernetes` finalizer.
bool needs_purge(const json& ns) {
  if (!ns.is_object() || !ns.contains("metadata")
      || !ns["metadata"].is_object())
    return false;
  if (!ns["metadata"].contains("deletionTimestamp")
      || ns["metadata"]["deletionTimestamp"].is_null())
    return false;
  const auto& finalizers
      = ns.value("spec", json::object()).value("finalizers", json::array());
  return finalizers.is_array()
         && std::find(finalizers.begin(), finalizers.end(), json("kubernetes"))
                != finalizers.end();
}

void purge(ns_ptr self, const std::string& ns);

void retry(ns_ptr self, const std::string& ns) {
  self->delayed_send(self, retry_delay, purge_atom::value, ns);
}

// Every namespaced object is gone: drop the `kubernetes` finalizer through
// /finalize, after which the API server removes the namespace.
void finalize(ns_ptr self, const std::string& ns) {
  request get;
  get.verb = verb::get;
  get.ref = detail::ref_of(namespace_type(self), "", ns);
  self->request(self->state.api, caf::infinite, std::move(get))
      .then(
          [self, ns](response& res) {
            auto obj = detail::parse(res.body);
            if (!obj || !needs_purge(*obj)) {
              self->state.in_progress.erase(ns);
              return;
            }
            json rest = json::array();
            for (const auto& f : (*obj)["spec"]["finalizers"])
              if (f != "kubernetes")
                rest.push_back(f);
            (*obj)["spec"]["finalizers"] = rest;
            request put;
            put.verb = verb::update;
            put.ref = detail::ref_of(namespace_type(self), "", ns);
            put.ref.subresource = "finalize";
            put.body = obj->dump();
            self->request(self->state.api, caf::infinite, std::move(put))
                .then([self,
                       ns](response&) { self->state.in_progress.erase(ns); },
                      [self, ns](caf::error& err) {
                        if (is_error(err, errc::not_found))
                          self->state.in_progress.erase(ns);
                        else
                          retry(self, ns); // a conflict: read it again
                      });
          },
          [self, ns](caf::error& err) {
            if (is_error(err, errc::not_found))
              self->state.in_progress.erase(ns);
            else
              retry(self, ns);
          });
}

// One deletion pass: list every namespaced type in `ns`, delete what is not
// yet being deleted; finalize when nothing was left, else try again later.
void delete_contents(ns_ptr self, const std::string& ns) {
  struct pass {
    std::size_t pending = 0;
    std::size_t remaining = 0;
  };
  auto types = detail::watched_types(self->state.registry);
  types.erase(
      std::remove_if(types.begin(), types.end(),
                     [](const resource_type& t) { return !t.namespaced; }),
      types.end());
  auto p = std::make_shared<pass>();
  p->pending = types.size();
  auto one_done = [self, ns, p] {
    if (--p->pending > 0)
      return;
    if (p->remaining == 0)
      finalize(self, ns);
    else
      retry(self, ns);
  };
  if (types.empty()) {
    finalize(self, ns);
    return;
  }
  for (const auto& t : types) {
    self->request(self->state.api, caf::infinite, detail::list_request(t, ns))
        .then(
            [self, ns, p, t, one_done](response& res) {
              auto doc = detail::parse(res.body);
              if (doc && doc->contains("items") && (*doc)["items"].is_array())
                for (const auto& item : (*doc)["items"]) {
                  if (!item.is_object() || !item.contains("metadata"))
                    continue;
                  ++p->remaining;
                  const auto& m = item["metadata"];
                  if (m.contains("deletionTimestamp")
                      && !m["deletionTimestamp"].is_null())
                    continue; // waiting on its finalizers
                  self->request(self->state.api, caf::infinite,
                                detail::delete_request(
                                    t, ns, m.value("name", ""),
                                    m.value("uid", ""), "Background"))
                      .then([](response&) {},
                            [](caf::error&) {
                              // Gone already, or refused: the next pass sees
                              // it.
                            });
                }
              one_done();
            },
            [one_done](caf::error&) {
              // An unserved type has nothing to delete; anything else shows up
              // again on the next pass.
              one_done();
            });
  }
}

void purge(ns_ptr self, const std::string& ns) {
  // Learn the CRDs first: their objects live in namespaces too.
  auto crds = self->state.registry.find("apiextensions.k8s.io", "v1",
                                        "customresourcedefinitions");
  if (crds == nullptr) {
    delete_contents(self, ns);
    return;
  }
  self->request(self->state.api, caf::infinite, detail::list_request(*crds))
      .then(
          [self, ns](response& res) {
            auto doc = detail::parse(res.body);
            if (doc && doc->contains("items") && (*doc)["items"].is_array())
              for (const auto& crd : (*doc)["items"])
                if (detail::established(crd))
                  (void)self->state.registry.add_crd(crd);
            delete_contents(self, ns);
          },
          [self, ns](caf::error&) { delete_contents(self, ns); });
}

void consider(ns_ptr self, const json& ns) {
  if (!needs_purge(ns))
    return;
  auto name = ns["metadata"].value("name", "");
  if (name.empty() || !self->state.in_progress.insert(name).second)
    return;
  purge(self, name);
}

void start(ns_ptr self) {
  auto& st = self->state;
  if (st.watch_id != 0) {
    self->send(st.api, unwatch_atom::value, st.watch_id);
    st.watch_id = 0;
  }
  const auto& type = namespace_type(self);
  self->request(st.api, caf::infinite, detail::list_request(type))
      .then(
          [self](response& res) {
            auto doc = detail::parse(res.body);
            if (!doc || !doc->contains("items"))
              return;
            for (const auto& ns : (*doc)["items"])
              consider(self, ns);
            std::string rv;
            if (doc->contains("metadata") && (*doc)["metadata"].is_object())
              rv = (*doc)["metadata"].value("resourceVersion", "");
            auto sink = caf::actor_cast<watch_sink_actor>(self);
            self->request(self->state.api, caf::infinite, watch_atom::value,
                          detail::watch_request(namespace_type(self), rv), sink)
                .then([self](std::uint64_t id) { self->state.watch_id = id; },
                      [self](caf::error&) {
                        self->delayed_send(self, retry_delay,
                                           relist_atom::value, namespaces_key);
                      });
          },
          [self](caf::error&) {
            self->delayed_send(self, retry_delay, relist_atom::value,
                               namespaces_key);
          });
}

namespace_controller_actor::behavior_type ns_impl(ns_ptr self, api_actor api) {
  self->state.api = std::move(api);
  start(self);
  return {
      [self](events_atom, std::uint64_t id, std::vector<watch_event>& events) {
        if (id != self->state.watch_id)
          return;
        for (const auto& ev : events) {
          if (ev.type == "ERROR") {
            self->state.watch_id = 0;
            start(self);
            return;
          }
          if (ev.type != "ADDED" && ev.type != "MODIFIED")
            continue;
          if (auto obj = detail::parse(ev.object))
            consider(self, *obj);
        }
      },
      [self](watch_end_atom, std::uint64_t id, caf::error&) {
        if (id != self->state.watch_id)
          return;
        self->state.watch_id = 0;
        self->delayed_send(self, retry_delay, relist_atom::value,
                           namespaces_key);
      },
      [self](relist_atom, const std::string&) { start(self); },
      [self](purge_atom, const std::string& ns) { purge(self, ns); },
  };
}

} // namespace

namespace_controller_actor spawn_namespace_controller(caf::actor_system& sys,
                                                      api_actor api) {
  return sys.spawn(ns_impl, std::move(api));
}

} // namespace aiperf::k8s::sim
