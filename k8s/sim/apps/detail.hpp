// What the controllers of k8s/sim/apps and the scheduler share: a local cache
// of the types an actor lists and watches (relisted a second after a watch
// ends), the wall clock of Event timestamps, and Events. Internal to
// k8s/sim/apps and k8s/sim/scheduler.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "k8s/sim/apps/apps.hpp"

#include <caf/actor_clock.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::apps_detail {

/// Every request the controllers send waits at most this long; a timeout is
/// handled as any failure (the next event or timer reconciles again).
inline constexpr auto request_timeout = std::chrono::seconds{30};
inline constexpr auto relist_delay = std::chrono::seconds{1};

struct watched_type {
  resource_ref ref;                    // group, version, resource only
  std::map<std::string, json> objects; // by key_of()
  std::uint64_t watch_id = 0;
  bool synced = false;
};

/// `before` is null for an object new to the cache, `after` null for one
/// that is gone.
using change_fn = std::function<void(std::size_t type, const std::string& key,
                                     const json* before, const json* after)>;

struct watch_cache {
  std::vector<watched_type> types;
  change_fn on_change;
  /// Called after each (re)list of a type has replaced its objects.
  std::function<void(std::size_t type)> on_listed;

  /// Adds a type; returns its index.
  std::size_t add(std::string group, std::string version, std::string resource);
  [[nodiscard]] std::optional<std::size_t> by_watch(std::uint64_t id) const;
  [[nodiscard]] std::optional<std::size_t>
  by_type_key(const std::string& key) const;
  /// An object as a watch or a write reply shows it: kept unless the cache
  /// holds a newer resourceVersion of the same uid.
  void put(std::size_t type, const json& obj);
  /// An object that is gone (watch DELETED, or a delete we sent succeeded).
  void remove(std::size_t type, const json& obj);
  /// Replaces a type's objects with a list's items (changes are reported).
  void replace(std::size_t type, const json& items);
  [[nodiscard]] const json* find(std::size_t type,
                                 const std::string& key) const;

private:
  std::set<std::string> deleted_uids_;
};

/// Per-key back-off after a failed write, as client-go's default
/// controller rate limiter (ItemExponentialFailureRateLimiter): 5 ms,
/// doubling per consecutive failure, at most 1000 s; a success forgets the
/// key. Retrying at once would turn a lasting refusal (an admission plugin,
/// a quota) into a hot loop of requests and Events.
class failure_backoff {
public:
  /// The delay before retrying `key` after one more failure.
  [[nodiscard]] caf::timespan next(const std::string& key);
  void forget(const std::string& key) { failures_.erase(key); }

private:
  std::map<std::string, int> failures_;
};

/// "namespace/name", or "name" for a cluster-scoped object.
[[nodiscard]] std::string key_of(const json& obj);
/// "group/version/resource".
[[nodiscard]] std::string type_key(const resource_ref& ref);
[[nodiscard]] std::optional<json> parse(const std::string& text);

/// metadata.<field> as a string ("" when absent).
[[nodiscard]] std::string meta(const json& obj, const char* field);
[[nodiscard]] bool being_deleted(const json& obj);
/// The uid of the controller ownerReference of `kind`, or "".
[[nodiscard]] std::string controller_uid(const json& obj, const char* kind);
[[nodiscard]] json controller_ref(const json& owner, const char* api_version,
                                  const char* kind);
/// A pod's Ready condition is True.
[[nodiscard]] bool pod_ready(const json& pod);
/// Succeeded or Failed.
[[nodiscard]] bool pod_terminal(const json& pod);

/// Wall-clock seconds of the actor clock: the system clock read once at
/// spawn plus the actor clock's elapsed time since then.
class wall_clock {
public:
  explicit wall_clock(caf::actor_clock::time_point start);
  wall_clock() = default;
  [[nodiscard]] std::int64_t
  unix_seconds(caf::actor_clock::time_point now) const;

private:
  std::int64_t base_unix_ns_ = 0;
  caf::actor_clock::time_point start_{};
};

/// A core/v1 Event about `involved` (kind from `kind`, apiVersion
/// `api_version`) as a controller records it.
[[nodiscard]] request
event_request(const json& involved, const std::string& api_version,
              const std::string& kind, const std::string& type,
              const std::string& reason, const std::string& message,
              const std::string& component, std::int64_t unix_seconds);

[[nodiscard]] request make_request(verb v, resource_ref ref,
                                   const json& body = nullptr);

/// Syncs `key` again after its next back-off (`state.backoff`).
template <class Self> void retry_later(Self self, const std::string& key) {
  self->delayed_send(self, self->state.backoff.next(key),
                     apps_sync_atom::value, key);
}

/// Lists `type` of the actor's `state.cache`, replaces its objects, then
/// watches from the list's resourceVersion. Failures retry after
/// relist_delay with `(apps_relist_atom, type key)`.
template <class Self> void relist(Self self, std::size_t type) {
  auto& t = self->state.cache.types[type];
  if (t.watch_id != 0) {
    self->send(self->state.api, unwatch_atom::value, t.watch_id);
    t.watch_id = 0;
  }
  auto retry = [self, type] {
    self->delayed_send(self, relist_delay, apps_relist_atom::value,
                       type_key(self->state.cache.types[type].ref));
  };
  request list;
  list.verb = verb::list;
  list.ref = t.ref;
  self->request(self->state.api, request_timeout, std::move(list))
      .then(
          [self, type, retry](response& res) {
            auto doc = parse(res.body);
            if (!doc || !doc->is_object()) {
              retry();
              return;
            }
            std::string rv;
            if (doc->contains("metadata") && (*doc)["metadata"].is_object())
              rv = (*doc)["metadata"].value("resourceVersion", "");
            self->state.cache.types[type].synced = true;
            self->state.cache.replace(type, doc->value("items", json::array()));
            if (self->state.cache.on_listed)
              self->state.cache.on_listed(type);
            request w;
            w.verb = verb::watch;
            w.ref = self->state.cache.types[type].ref;
            w.resource_version = rv;
            w.allow_watch_bookmarks = true;
            auto sink = caf::actor_cast<watch_sink_actor>(self);
            self->request(self->state.api, request_timeout, watch_atom::value,
                          std::move(w), sink)
                .then(
                    [self, type](std::uint64_t id) {
                      self->state.cache.types[type].watch_id = id;
                    },
                    [retry](caf::error&) { retry(); });
          },
          [retry](caf::error&) { retry(); });
}

template <class Self>
void on_events(Self self, std::uint64_t id, std::vector<watch_event>& events) {
  auto& cache = self->state.cache;
  auto type = cache.by_watch(id);
  if (!type)
    return;
  for (const auto& ev : events) {
    if (ev.type == "ERROR") {
      cache.types[*type].watch_id = 0;
      relist(self, *type);
      return;
    }
    if (ev.type == "BOOKMARK")
      continue;
    auto obj = parse(ev.object);
    if (!obj || !obj->is_object())
      continue;
    if (ev.type == "DELETED")
      cache.remove(*type, *obj);
    else
      cache.put(*type, *obj);
  }
}

template <class Self> void on_watch_end(Self self, std::uint64_t id) {
  auto& cache = self->state.cache;
  auto type = cache.by_watch(id);
  if (!type)
    return;
  cache.types[*type].watch_id = 0;
  self->delayed_send(self, relist_delay, apps_relist_atom::value,
                     type_key(cache.types[*type].ref));
}

template <class Self> void on_relist(Self self, const std::string& key) {
  if (auto type = self->state.cache.by_type_key(key))
    relist(self, *type);
}

/// The behavior every apps controller has: its watches feed the cache, its
/// timers relist and sync; `sync_key(key)` reconciles one object.
template <class Self, class Sync>
apps_controller_actor::behavior_type controller_behavior(Self self,
                                                         Sync sync_key) {
  return {
      [self](events_atom, std::uint64_t id, std::vector<watch_event>& evs) {
        on_events(self, id, evs);
      },
      [self](watch_end_atom, std::uint64_t id, caf::error&) {
        on_watch_end(self, id);
      },
      [self](apps_relist_atom, const std::string& type) {
        on_relist(self, type);
      },
      [self, sync_key](apps_sync_atom, const std::string& key) {
        self->state.queued.erase(key);
        sync_key(key);
      },
  };
}

} // namespace aiperf::k8s::sim::apps_detail
