// The local copy of a few resources that a network controller (or the DNS
// server's cache) keeps: one list + watch per resource over
// `k8s::api_actor`, relisted a second after its watch ends or fails, as
// client-go's reflector does for the controllers of kube-controller-manager.
//
// The actor that owns a watch_set is the sink of its watches and handles
// `(net_relist_atom, uint64_t kind)` by calling start() again; its state
// owns the set, so the callbacks, which capture the actor, never outlive it.
// Time comes only from the actor clock (the relist is a delayed message).
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"

#include <caf/actor_cast.hpp>
#include <caf/atom.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::net {

using net_relist_atom = caf::atom_constant<caf::atom("k8sn_rlst")>;
using net_sync_atom = caf::atom_constant<caf::atom("k8sn_sync")>;

/// How long a controller waits for the API: a list, a write, a watch's
/// establishment. An expired one is retried like a failure.
inline constexpr auto api_timeout = std::chrono::seconds{30};
/// Between a watch's end and the relist; between a failed write and its
/// retry.
inline constexpr auto retry_delay = std::chrono::seconds{1};

/// "namespace/name", or "name" for a cluster-scoped object.
[[nodiscard]] inline std::string key_of(const json& obj) {
  if (!obj.is_object() || !obj.contains("metadata")
      || !obj["metadata"].is_object())
    return {};
  const auto& m = obj["metadata"];
  auto name = m.value("name", "");
  auto ns = m.value("namespace", "");
  return ns.empty() ? name : ns + "/" + name;
}

struct watched_kind {
  resource_ref ref; // group, version, resource; namespace "" = all
  std::uint64_t watch_id = 0;
  bool synced = false;                 // the first list has been taken in
  std::map<std::string, json> objects; // by key_of
};

class watch_set {
public:
  /// A cached object changed: before/after are null for an object that
  /// appeared/vanished. Called for every difference a list finds, and for
  /// every watch event.
  using change_fn = std::function<void(std::size_t kind, const std::string& key,
                                       const json* before, const json* after)>;

  std::vector<watched_kind> kinds;
  change_fn on_change;
  /// Called whenever a list completes and every kind has been listed.
  std::function<void()> on_synced;

  std::size_t add(resource_ref ref) {
    kinds.push_back(watched_kind{std::move(ref), 0, false, {}});
    return kinds.size() - 1;
  }

  [[nodiscard]] bool all_synced() const {
    for (const auto& k : kinds)
      if (!k.synced)
        return false;
    return true;
  }

  [[nodiscard]] const json* find(std::size_t kind,
                                 const std::string& key) const {
    const auto& objs = kinds[kind].objects;
    auto it = objs.find(key);
    return it == objs.end() ? nullptr : &it->second;
  }

  [[nodiscard]] const std::map<std::string, json>&
  objects(std::size_t kind) const {
    return kinds[kind].objects;
  }

  /// Takes in what a write answered, before its watch event arrives, so
  /// the next sync does not act on the stale copy. No callback.
  void put(std::size_t kind, const json& obj) {
    auto key = key_of(obj);
    if (!key.empty())
      kinds[kind].objects[key] = obj;
  }
  void forget(std::size_t kind, const std::string& key) {
    kinds[kind].objects.erase(key);
  }

  /// Lists `kind` (ending its watch first), replaces its objects, then
  /// watches from the list's resourceVersion.
  template <class Self>
  void start(Self self, std::size_t kind, const api_actor& api) {
    auto& k = kinds[kind];
    if (k.watch_id != 0) {
      self->send(api, unwatch_atom::value, k.watch_id);
      k.watch_id = 0;
    }
    request list;
    list.verb = verb::list;
    list.ref = k.ref;
    self->request(api, api_timeout, std::move(list))
        .then(
            [this, self, kind, api](response& res) {
              auto doc = json::parse(res.body, nullptr, false);
              if (doc.is_discarded() || !doc.is_object()
                  || !doc.contains("items") || !doc["items"].is_array()) {
                relist_later(self, kind);
                return;
              }
              take_list(kind, doc["items"]);
              std::string rv;
              if (doc.contains("metadata") && doc["metadata"].is_object())
                rv = doc["metadata"].value("resourceVersion", "");
              request w;
              w.verb = verb::watch;
              w.ref = kinds[kind].ref;
              w.resource_version = rv;
              w.allow_watch_bookmarks = true;
              auto sink = caf::actor_cast<watch_sink_actor>(self);
              self->request(api, api_timeout, watch_atom::value, std::move(w),
                            sink)
                  .then([this,
                         kind](std::uint64_t id) { kinds[kind].watch_id = id; },
                        [this, self, kind](caf::error&) {
                          relist_later(self, kind);
                        });
              if (all_synced() && on_synced)
                guarded(on_synced);
            },
            [this, self, kind](caf::error&) { relist_later(self, kind); });
  }

  /// The sink's events handler. Returns false for an unknown watch.
  template <class Self>
  bool on_events(Self self, std::uint64_t id,
                 const std::vector<watch_event>& events, const api_actor& api) {
    auto kind = kind_of_watch(id);
    if (kind == kinds.size())
      return false;
    for (const auto& ev : events) {
      if (ev.type == "ERROR") {
        kinds[kind].watch_id = 0;
        start(self, kind, api);
        return true;
      }
      if (ev.type != "ADDED" && ev.type != "MODIFIED" && ev.type != "DELETED")
        continue;
      auto obj = json::parse(ev.object, nullptr, false);
      if (obj.is_discarded())
        continue;
      auto key = key_of(obj);
      if (key.empty())
        continue;
      auto& objs = kinds[kind].objects;
      auto it = objs.find(key);
      json before = it == objs.end() ? json() : it->second;
      if (ev.type == "DELETED") {
        if (it == objs.end())
          continue;
        objs.erase(it);
        if (on_change)
          notify(kind, key, &before, nullptr);
        continue;
      }
      if (it != objs.end() && older(obj, it->second))
        continue; // a write's answer already gave a newer copy
      objs[key] = obj;
      if (on_change)
        notify(kind, key, before.is_null() ? nullptr : &before, &obj);
    }
    return true;
  }

  /// The sink's watch_end handler.
  template <class Self> void on_end(Self self, std::uint64_t id) {
    auto kind = kind_of_watch(id);
    if (kind == kinds.size())
      return;
    kinds[kind].watch_id = 0;
    relist_later(self, kind);
  }

  /// Ends every watch (the owner is stopping).
  template <class Self> void stop(Self self, const api_actor& api) {
    for (auto& k : kinds)
      if (k.watch_id != 0) {
        self->send(api, unwatch_atom::value, k.watch_id);
        k.watch_id = 0;
      }
  }

private:
  // The callbacks read objects written by anyone: a field of an unexpected
  // type makes nlohmann's accessors throw, which must cost that object its
  // update, not the actor its life.
  template <class F> static void guarded(F& f) {
    try {
      f();
    } catch (const json::exception&) {
    }
  }

  void notify(std::size_t kind, const std::string& key, const json* before,
              const json* after) {
    if (!on_change)
      return;
    try {
      on_change(kind, key, before, after);
    } catch (const json::exception&) {
    }
  }

  std::size_t kind_of_watch(std::uint64_t id) const {
    for (std::size_t i = 0; i < kinds.size(); ++i)
      if (id != 0 && kinds[i].watch_id == id)
        return i;
    return kinds.size();
  }

  template <class Self> void relist_later(Self self, std::size_t kind) {
    self->delayed_send(self, retry_delay, net_relist_atom::value,
                       static_cast<std::uint64_t>(kind));
  }

  // resourceVersions are opaque, but every server this runs against writes
  // integers; when both are, a smaller one is an older copy.
  static bool older(const json& a, const json& b) {
    auto rv = [](const json& o) -> long long {
      try {
        return std::stoll(o["metadata"].value("resourceVersion", ""));
      } catch (...) {
        return -1;
      }
    };
    auto x = rv(a);
    auto y = rv(b);
    return x >= 0 && y >= 0 && x < y;
  }

  void take_list(std::size_t kind, const json& items) {
    auto& k = kinds[kind];
    std::map<std::string, json> fresh;
    for (const auto& item : items) {
      auto key = key_of(item);
      if (!key.empty())
        fresh[key] = item;
    }
    auto old = std::move(k.objects);
    k.objects = fresh;
    k.synced = true;
    if (!on_change)
      return;
    // Callbacks may write to the cache: they get copies.
    for (const auto& [key, before] : old) {
      auto it = fresh.find(key);
      if (it == fresh.end())
        notify(kind, key, &before, nullptr);
      else if (it->second != before)
        notify(kind, key, &before, &it->second);
    }
    for (const auto& [key, after] : fresh)
      if (!old.count(key))
        notify(kind, key, nullptr, &after);
  }
};

} // namespace aiperf::k8s::sim::net
