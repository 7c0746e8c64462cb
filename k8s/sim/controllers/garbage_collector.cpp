#include "k8s/sim/controllers/controllers.hpp"
#include "k8s/sim/controllers/detail.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <chrono>
#include <map>
#include <set>

namespace aiperf::k8s::sim {

namespace {

constexpr auto relist_delay = std::chrono::seconds{1};

// What the collector keeps of each object: its identity, owners, finalizers.
struct entry {
  std::string type; // type key
  std::string ns;
  std::string name;
  std::string uid;
  std::string rv;
  json owner_refs = json::array();
  std::vector<std::string> finalizers;
  bool deleting = false;

  bool has_finalizer(std::string_view f) const {
    return std::find(finalizers.begin(), finalizers.end(), f)
           != finalizers.end();
  }
};

struct reflector {
  resource_type type;
  std::uint64_t watch_id = 0;
  bool served = true;
};

struct gc_state {
  // Not an aggregate: CAF would build the state from the actor pointer.
  gc_state() = default;

  api_actor api;
  type_registry registry;
  std::map<std::string, reflector> reflectors;  // by type key
  std::map<std::uint64_t, std::string> watches; // watch id -> type key
  std::map<std::string, entry> objects;         // by uid
  std::set<std::string> in_flight;              // uids with a write under way
  // Owners confirmed gone: "uid" (deleted), or "namespace/uid" (not in
  // that namespace); and the lookups under way, keyed the same.
  std::set<std::string> absent;
  std::set<std::string> checking;
  static inline const char* name = "k8s_garbage_collector";
};

using gc_ptr = garbage_collector_actor::stateful_pointer<gc_state>;

std::optional<entry> entry_of(const std::string& type, const json& obj) {
  if (!obj.is_object() || !obj.contains("metadata")
      || !obj["metadata"].is_object())
    return std::nullopt;
  const auto& m = obj["metadata"];
  entry e;
  e.type = type;
  e.ns = m.value("namespace", "");
  e.name = m.value("name", "");
  e.uid = m.value("uid", "");
  e.rv = m.value("resourceVersion", "");
  if (m.contains("ownerReferences") && m["ownerReferences"].is_array())
    e.owner_refs = m["ownerReferences"];
  if (m.contains("finalizers") && m["finalizers"].is_array())
    for (const auto& f : m["finalizers"])
      if (f.is_string())
        e.finalizers.push_back(f.get<std::string>());
  e.deleting
      = m.contains("deletionTimestamp") && !m["deletionTimestamp"].is_null();
  if (e.uid.empty())
    return std::nullopt;
  return e;
}

void sweep(gc_ptr self);
void start(gc_ptr self, const std::string& key);

const resource_type* type_of(gc_ptr self, const std::string& key) {
  auto it = self->state.reflectors.find(key);
  return it == self->state.reflectors.end() ? nullptr : &it->second.type;
}

// A CRD came, changed or went: serve its types from the local registry and
// start or stop watching its custom resources.
void crd_changed(gc_ptr self, const json& crd, bool deleted) {
  auto& st = self->state;
  auto name = crd.contains("metadata") ? crd["metadata"].value("name", "")
                                       : std::string{};
  if (deleted || !detail::established(crd)) {
    st.registry.remove_crd(name);
  } else if (!st.registry.add_crd(crd)) {
    return;
  }
  std::set<std::string> wanted;
  for (const auto& t : detail::watched_types(st.registry))
    if (t.custom)
      wanted.insert(detail::type_key(t));
  // Types of this CRD no longer wanted: stop watching, forget their objects.
  for (auto it = st.reflectors.begin(); it != st.reflectors.end();) {
    if (it->second.type.custom && it->second.type.crd_name == name
        && !wanted.count(it->first)) {
      if (it->second.watch_id != 0) {
        self->send(st.api, unwatch_atom::value, it->second.watch_id);
        st.watches.erase(it->second.watch_id);
      }
      for (auto o = st.objects.begin(); o != st.objects.end();)
        o = o->second.type == it->first ? st.objects.erase(o) : std::next(o);
      it = st.reflectors.erase(it);
    } else {
      ++it;
    }
  }
  for (const auto& t : detail::watched_types(st.registry))
    if (t.custom && t.crd_name == name
        && !st.reflectors.count(detail::type_key(t))) {
      auto key = detail::type_key(t);
      st.reflectors[key] = reflector{t, 0, true};
      start(self, key);
    }
}

void upsert(gc_ptr self, const std::string& key, const json& obj) {
  auto e = entry_of(key, obj);
  if (!e)
    return;
  self->state.objects[e->uid] = std::move(*e);
  const auto* t = type_of(self, key);
  if (t && t->group == "apiextensions.k8s.io"
      && t->resource == "customresourcedefinitions")
    crd_changed(self, obj, false);
}

void erase(gc_ptr self, const std::string& key, const json& obj) {
  auto e = entry_of(key, obj);
  if (!e)
    return;
  self->state.objects.erase(e->uid);
  // A uid never comes back: whoever named it as owner is dangling now.
  self->state.absent.insert(e->uid);
  const auto* t = type_of(self, key);
  if (t && t->group == "apiextensions.k8s.io"
      && t->resource == "customresourcedefinitions")
    crd_changed(self, obj, true);
}

// Lists `key`, replaces its objects, then watches from the list's version.
void start(gc_ptr self, const std::string& key) {
  auto& st = self->state;
  auto it = st.reflectors.find(key);
  if (it == st.reflectors.end())
    return;
  if (it->second.watch_id != 0) {
    self->send(st.api, unwatch_atom::value, it->second.watch_id);
    st.watches.erase(it->second.watch_id);
    it->second.watch_id = 0;
  }
  auto type = it->second.type;
  self->request(st.api, caf::infinite, detail::list_request(type))
      .then(
          [self, key, type](response& res) {
            auto& st = self->state;
            if (!st.reflectors.count(key))
              return;
            auto doc = detail::parse(res.body);
            if (!doc || !doc->contains("items"))
              return;
            std::set<std::string> seen;
            for (const auto& item : (*doc)["items"]) {
              if (auto e = entry_of(key, item))
                seen.insert(e->uid);
              upsert(self, key, item);
            }
            for (auto o = st.objects.begin(); o != st.objects.end();) {
              if (o->second.type == key && !seen.count(o->first)) {
                st.absent.insert(o->first);
                o = st.objects.erase(o);
              } else {
                ++o;
              }
            }
            std::string rv;
            if (doc->contains("metadata") && (*doc)["metadata"].is_object())
              rv = (*doc)["metadata"].value("resourceVersion", "");
            auto sink = caf::actor_cast<watch_sink_actor>(self);
            self->request(st.api, caf::infinite, watch_atom::value,
                          detail::watch_request(type, rv), sink)
                .then(
                    [self, key](std::uint64_t id) {
                      auto& st = self->state;
                      auto r = st.reflectors.find(key);
                      if (r == st.reflectors.end()) {
                        self->send(st.api, unwatch_atom::value, id);
                        return;
                      }
                      r->second.watch_id = id;
                      st.watches[id] = key;
                    },
                    [self, key](caf::error&) {
                      self->delayed_send(self, relist_delay, relist_atom::value,
                                         key);
                    });
            sweep(self);
          },
          [self, key](caf::error& err) {
            auto& st = self->state;
            auto r = st.reflectors.find(key);
            if (r == st.reflectors.end())
              return;
            // A type the server does not serve stays unwatched.
            if (is_error(err, errc::not_found)) {
              r->second.served = false;
              return;
            }
            self->delayed_send(self, relist_delay, relist_atom::value, key);
          });
}

// --- the collection itself --------------------------------------------------

void finish(gc_ptr self, const std::string& uid) {
  self->state.in_flight.erase(uid);
}

void send_write(gc_ptr self, const std::string& uid, request req) {
  self->state.in_flight.insert(uid);
  self->request(self->state.api, caf::infinite, std::move(req))
      .then([self, uid](response&) { finish(self, uid); },
            [self, uid](caf::error&) { finish(self, uid); });
}

void delete_object(gc_ptr self, const entry& e, const std::string& policy) {
  const auto* t = type_of(self, e.type);
  if (t == nullptr)
    return;
  send_write(self, e.uid,
             detail::delete_request(*t, e.ns, e.name, e.uid, policy));
}

void set_owner_refs(gc_ptr self, const entry& e, const json& refs) {
  const auto* t = type_of(self, e.type);
  if (t == nullptr)
    return;
  send_write(self, e.uid,
             detail::metadata_patch(*t, e.ns, e.name, e.rv, "ownerReferences",
                                    refs.empty() ? json{} : refs));
}

void drop_finalizer(gc_ptr self, const entry& e, std::string_view finalizer) {
  const auto* t = type_of(self, e.type);
  if (t == nullptr)
    return;
  json rest = json::array();
  for (const auto& f : e.finalizers)
    if (f != finalizer)
      rest.push_back(f);
  send_write(self, e.uid,
             detail::metadata_patch(*t, e.ns, e.name, e.rv, "finalizers",
                                    rest.empty() ? json{} : rest));
}

// Confirms with a GET that the owner a cached dependent names is gone: the
// cache may simply not have seen it yet (kubernetes isDangling).
void check_owner(gc_ptr self, const entry& dependent, const json& ref) {
  auto& st = self->state;
  auto uid = ref.value("uid", "");
  const auto* t = st.registry.find_kind(ref.value("apiVersion", ""),
                                        ref.value("kind", ""));
  if (uid.empty() || t == nullptr)
    return; // an unknown kind: the owner cannot be resolved, nothing is done
  if (t->namespaced && dependent.ns.empty())
    return; // a cluster-scoped dependent cannot have a namespaced owner
  // A namespaced owner is looked for in the dependent's namespace only.
  auto absent_key = t->namespaced ? dependent.ns + "/" + uid : uid;
  if (st.checking.count(absent_key))
    return;
  st.checking.insert(absent_key);
  request get;
  get.verb = verb::get;
  get.ref = detail::ref_of(*t, dependent.ns, ref.value("name", ""));
  self->request(st.api, caf::infinite, std::move(get))
      .then(
          [self, uid, absent_key](response& res) {
            self->state.checking.erase(absent_key);
            auto doc = detail::parse(res.body);
            if (doc && doc->contains("metadata")
                && (*doc)["metadata"].value("uid", "") != uid) {
              self->state.absent.insert(
                  absent_key); // the name now belongs to another
              sweep(self);
            }
          },
          [self, absent_key](caf::error& err) {
            self->state.checking.erase(absent_key);
            if (is_error(err, errc::not_found)) {
              self->state.absent.insert(absent_key);
              sweep(self);
            }
          });
}

bool foreground_pending(const entry& owner) {
  return owner.deleting && owner.has_finalizer("foregroundDeletion");
}

// attemptToDeleteItem for a dependent that is not being deleted.
void attempt_to_delete(
    gc_ptr self, const entry& e,
    const std::map<std::string, std::vector<std::string>>& dependents) {
  auto& st = self->state;
  json solid = json::array();
  json kept = json::array(); // every reference but the dangling and waiting
  bool dangling = false;
  bool waiting = false;
  bool unresolved = false;
  for (const auto& ref : e.owner_refs) {
    auto uid = ref.is_object() ? ref.value("uid", "") : std::string{};
    if (st.absent.count(uid) || st.absent.count(e.ns + "/" + uid)) {
      dangling = true;
      continue;
    }
    auto owner = st.objects.find(uid);
    const auto* owner_type = owner == st.objects.end()
                                 ? nullptr
                                 : type_of(self, owner->second.type);
    bool elsewhere = owner_type != nullptr && owner_type->namespaced
                     && owner->second.ns != e.ns;
    if (owner == st.objects.end() || elsewhere) {
      check_owner(self, e, ref);
      unresolved = true;
      kept.push_back(ref);
      continue;
    }
    if (foreground_pending(owner->second)) {
      waiting = true;
      continue;
    }
    solid.push_back(ref);
    kept.push_back(ref);
  }
  if (unresolved)
    return; // decided once every owner is known to be there or gone
  if (!solid.empty()) {
    if (dangling || waiting)
      set_owner_refs(self, e, kept);
    return;
  }
  if (waiting && dependents.count(e.uid)) {
    delete_object(self, e, "Foreground");
    return;
  }
  if (!dangling && !waiting)
    return;
  std::string policy = "Background";
  if (e.has_finalizer("orphan"))
    policy = "Orphan";
  else if (e.has_finalizer("foregroundDeletion"))
    policy = "Foreground";
  delete_object(self, e, policy);
}

// One pass over the cache; every decision it takes is a write whose watch
// event brings the next pass.
void sweep(gc_ptr self) {
  auto& st = self->state;
  // owner uid -> dependents' uids
  std::map<std::string, std::vector<std::string>> dependents;
  for (const auto& [uid, e] : st.objects)
    for (const auto& ref : e.owner_refs)
      if (ref.is_object())
        dependents[ref.value("uid", "")].push_back(uid);
  std::vector<entry> work;
  work.reserve(st.objects.size());
  for (const auto& [uid, e] : st.objects)
    work.push_back(e);
  for (const auto& e : work) {
    if (st.in_flight.count(e.uid) || !st.objects.count(e.uid))
      continue;
    if (e.deleting) {
      auto deps = dependents.find(e.uid);
      if (e.has_finalizer("orphan")) {
        // orphanDependents: drop the references to this owner, then the
        // finalizer once no dependent names it.
        bool any = false;
        if (deps != dependents.end())
          for (const auto& d : deps->second) {
            auto it = st.objects.find(d);
            if (it == st.objects.end())
              continue;
            any = true;
            if (st.in_flight.count(d))
              continue;
            json rest = json::array();
            for (const auto& ref : it->second.owner_refs)
              if (!ref.is_object() || ref.value("uid", "") != e.uid)
                rest.push_back(ref);
            set_owner_refs(self, it->second, rest);
          }
        if (!any)
          drop_finalizer(self, e, "orphan");
      } else if (e.has_finalizer("foregroundDeletion")) {
        // processDeletingDependentsItem: done once nothing blocks.
        bool blocked = false;
        if (deps != dependents.end())
          for (const auto& d : deps->second) {
            auto it = st.objects.find(d);
            if (it == st.objects.end())
              continue;
            for (const auto& ref : it->second.owner_refs)
              if (ref.is_object() && ref.value("uid", "") == e.uid
                  && ref.value("blockOwnerDeletion", false))
                blocked = true;
          }
        if (!blocked)
          drop_finalizer(self, e, "foregroundDeletion");
      }
      continue;
    }
    if (!e.owner_refs.empty())
      attempt_to_delete(self, e, dependents);
  }
}

garbage_collector_actor::behavior_type gc_impl(gc_ptr self, api_actor api) {
  self->state.api = std::move(api);
  for (const auto& t : detail::watched_types(self->state.registry)) {
    auto key = detail::type_key(t);
    self->state.reflectors[key] = reflector{t, 0, true};
  }
  for (const auto& [key, r] : self->state.reflectors)
    start(self, key);
  return {
      [self](events_atom, std::uint64_t id, std::vector<watch_event>& events) {
        auto& st = self->state;
        auto w = st.watches.find(id);
        if (w == st.watches.end())
          return;
        auto key = w->second;
        for (const auto& ev : events) {
          auto obj = detail::parse(ev.object);
          if (!obj)
            continue;
          if (ev.type == "ADDED" || ev.type == "MODIFIED") {
            upsert(self, key, *obj);
          } else if (ev.type == "DELETED") {
            erase(self, key, *obj);
          } else if (ev.type == "ERROR") {
            // 410 Expired and the like: start over from a fresh list.
            st.watches.erase(id);
            if (st.reflectors.count(key)) {
              st.reflectors[key].watch_id = 0;
              start(self, key);
            }
            return;
          }
          if (!st.watches.count(id))
            return; // a CRD's removal stopped this very watch
        }
        sweep(self);
      },
      [self](watch_end_atom, std::uint64_t id, caf::error&) {
        auto& st = self->state;
        auto w = st.watches.find(id);
        if (w == st.watches.end())
          return;
        auto key = w->second;
        st.watches.erase(w);
        if (st.reflectors.count(key)) {
          st.reflectors[key].watch_id = 0;
          self->delayed_send(self, relist_delay, relist_atom::value, key);
        }
      },
      [self](relist_atom, const std::string& key) { start(self, key); },
  };
}

} // namespace

garbage_collector_actor spawn_garbage_collector(caf::actor_system& sys,
                                                api_actor api) {
  return sys.spawn(gc_impl, std::move(api));
}

} // namespace aiperf::k8s::sim
