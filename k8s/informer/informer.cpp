#include "k8s/informer/informer.hpp"

#include "k8s/api/json.hpp"
#include "k8s/errors/errors.hpp"

#include <caf/all.hpp>

#include <map>
#include <optional>
#include <random>

namespace aiperf::k8s::informer {

namespace {

using relist_atom = caf::atom_constant<caf::atom("k8si_rlst")>;
using rewatch_atom = caf::atom_constant<caf::atom("k8si_rwtch")>;
using tick_atom = caf::atom_constant<caf::atom("k8si_tick")>;
using resync_atom = caf::atom_constant<caf::atom("k8si_rsync")>;

// The owner's interface, the watch sink, and the timers.
using informer_impl = informer_actor::extend_with<watch_sink_actor>::extend<
    caf::reacts_to<relist_atom, std::uint64_t>,
    caf::reacts_to<rewatch_atom, std::uint64_t>, caf::reacts_to<tick_atom>,
    caf::reacts_to<resync_atom>>;

struct cached {
  std::string object; // JSON text
  std::string resource_version;
};

struct informer_state {
  static inline const char* name = "k8s-informer";
  api_actor api;
  informer_config cfg;
  owner_actor owner;
  std::mt19937_64 rng;

  std::map<std::string, cached> cache;
  bool synced = false;
  std::string last_rv;

  // listing
  std::string list_rv = "0";
  std::string continue_token;
  std::map<std::string, cached> next_cache;

  // watching: the id of the current watch (0 = none)
  std::uint64_t watch_id = 0;
  bool watch_pending = false;

  // back-off of list and watch failures; timers carry `generation` so that
  // a superseded one does nothing
  caf::timespan backoff{0};
  std::uint64_t generation = 0;

  work_queue queue;
  std::int64_t published_depth = 0; // our share of cfg.depth
  std::size_t in_flight = 0;
  std::optional<caf::actor_clock::time_point> tick_at;
};

using informer_ptr = informer_impl::stateful_pointer<informer_state>;

std::string object_key(const json& obj) {
  const auto& meta
      = obj.contains("metadata") ? obj["metadata"] : json::object();
  return key_of(meta.value("namespace", std::string{}),
                meta.value("name", std::string{}));
}

std::string object_rv(const json& obj) {
  if (auto m = obj.find("metadata"); m != obj.end() && m->is_object())
    return m->value("resourceVersion", std::string{});
  return {};
}

void pump(informer_ptr self) {
  auto& st = self->state;
  while (st.in_flight < std::max<std::size_t>(st.cfg.workers, 1)) {
    auto key = st.queue.get();
    if (!key)
      break;
    ++st.in_flight;
    self->send(st.owner, reconcile_atom::value, std::move(*key));
  }
  if (st.cfg.depth) {
    auto depth = static_cast<std::int64_t>(st.queue.size());
    st.cfg.depth->fetch_add(depth - st.published_depth);
    st.published_depth = depth;
  }
}

void schedule_tick(informer_ptr self) {
  auto& st = self->state;
  auto due = st.queue.next_due();
  if (!due || (st.tick_at && *st.tick_at <= *due))
    return;
  st.tick_at = *due;
  auto now = self->clock().now();
  self->delayed_send(self, *due > now ? *due - now : caf::timespan{0},
                     tick_atom::value);
}

void enqueue(informer_ptr self, const std::string& key) {
  self->state.queue.add(key);
  pump(self);
}

caf::timespan next_backoff(informer_ptr self) {
  auto& st = self->state;
  st.backoff = st.backoff.count() == 0
                   ? st.cfg.backoff_initial
                   : std::min(st.backoff * 2, st.cfg.backoff_cap);
  std::uniform_int_distribution<std::int64_t> jitter{
      st.backoff.count() / 2,
      std::max<std::int64_t>(st.backoff.count() - 1, st.backoff.count() / 2)};
  return caf::timespan{jitter(st.rng)};
}

void list_page(informer_ptr self);
void start_watch(informer_ptr self);

/// Starts over with a list, now (after a 410) or after the back-off.
void relist(informer_ptr self, bool latest, bool after_backoff) {
  auto& st = self->state;
  if (st.watch_id != 0) {
    self->send(st.api, unwatch_atom::value, st.watch_id);
    st.watch_id = 0;
  }
  st.watch_pending = false;
  if (latest)
    st.list_rv.clear();
  st.continue_token.clear();
  st.next_cache.clear();
  auto gen = ++st.generation;
  if (after_backoff)
    self->delayed_send(self, next_backoff(self), relist_atom::value, gen);
  else
    list_page(self);
}

void rewatch_after_backoff(informer_ptr self) {
  auto gen = ++self->state.generation;
  self->delayed_send(self, next_backoff(self), rewatch_atom::value, gen);
}

/// Replaces the cache with the listed objects and queues what changed.
void replace_cache(informer_ptr self) {
  auto& st = self->state;
  std::vector<std::string> changed;
  for (const auto& [key, obj] : st.next_cache) {
    auto old = st.cache.find(key);
    if (old == st.cache.end()
        || old->second.resource_version != obj.resource_version
        || old->second.object != obj.object)
      changed.push_back(key);
  }
  for (const auto& [key, _] : st.cache)
    if (st.next_cache.count(key) == 0)
      changed.push_back(key);
  st.cache = std::move(st.next_cache);
  st.next_cache.clear();
  for (const auto& key : changed)
    st.queue.add(key);
  pump(self);
}

void on_page(informer_ptr self, const response& resp) {
  auto& st = self->state;
  json list = json::parse(resp.body, nullptr, false);
  if (list.is_discarded() || !list.is_object()) {
    relist(self, false, true);
    return;
  }
  // Typed lists of built-ins omit each item's kind and apiVersion; the
  // cache holds whole objects, as a watch delivers them.
  auto list_kind = list.value("kind", std::string{});
  auto item_kind = list_kind.ends_with("List")
                       ? list_kind.substr(0, list_kind.size() - 4)
                       : std::string{};
  auto api_version = list.value("apiVersion", std::string{});
  if (auto items = list.find("items");
      items != list.end() && items->is_array()) {
    for (auto& item : *items) {
      if (!item.is_object())
        continue;
      if (!item.contains("kind") && !item_kind.empty()) {
        json whole = json::object();
        whole["kind"] = item_kind;
        whole["apiVersion"] = api_version;
        for (auto& [k, v] : item.items())
          whole[k] = std::move(v);
        item = std::move(whole);
      }
      auto key = object_key(item);
      st.next_cache[key] = cached{item.dump(), object_rv(item)};
    }
  }
  const auto& meta
      = list.contains("metadata") ? list["metadata"] : json::object();
  st.continue_token = meta.value("continue", std::string{});
  if (!st.continue_token.empty()) {
    list_page(self);
    return;
  }
  st.last_rv = meta.value("resourceVersion", std::string{});
  // A later relist (after a failure) asks for at least what was seen; a
  // 410 makes it ask for the latest.
  st.list_rv = st.last_rv.empty() ? std::string{"0"} : st.last_rv;
  st.backoff = caf::timespan{0};
  replace_cache(self);
  st.synced = true;
  start_watch(self);
}

void list_page(informer_ptr self) {
  auto& st = self->state;
  request r;
  r.verb = verb::list;
  r.ref = st.cfg.ref;
  r.ref.name.clear();
  r.ref.subresource.clear();
  r.label_selector = st.cfg.label_selector;
  r.field_selector = st.cfg.field_selector;
  r.limit = st.cfg.page_size;
  if (st.continue_token.empty())
    r.resource_version = st.list_rv;
  else
    r.continue_token = st.continue_token;
  auto gen = st.generation;
  self->request(st.api, st.cfg.request_timeout, std::move(r))
      .then(
          [self, gen](response& resp) {
            if (gen == self->state.generation)
              on_page(self, resp);
          },
          [self, gen](caf::error& err) {
            if (gen != self->state.generation)
              return;
            // An expired continue token or a compacted resourceVersion: the
            // latest state instead, now. Anything else: try again later.
            bool gone = is_error(err, k8s::errc::gone);
            relist(self, gone, !gone || self->state.list_rv.empty());
          });
}

void start_watch(informer_ptr self) {
  auto& st = self->state;
  request r;
  r.verb = verb::watch;
  r.ref = st.cfg.ref;
  r.ref.name.clear();
  r.ref.subresource.clear();
  r.label_selector = st.cfg.label_selector;
  r.field_selector = st.cfg.field_selector;
  r.resource_version = st.last_rv;
  r.allow_watch_bookmarks = true;
  r.timeout_seconds
      = std::uniform_int_distribution<std::int64_t>{300, 600}(st.rng);
  st.watch_pending = true;
  auto gen = st.generation;
  auto sink = caf::actor_cast<watch_sink_actor>(self);
  self->request(st.api, st.cfg.request_timeout, watch_atom::value, std::move(r),
                sink)
      .then(
          [self, gen](std::uint64_t id) {
            auto& st = self->state;
            if (gen != st.generation || !st.watch_pending) {
              self->send(st.api, unwatch_atom::value, id);
              return;
            }
            st.watch_pending = false;
            st.watch_id = id;
          },
          [self, gen](caf::error& err) {
            auto& st = self->state;
            if (gen != st.generation)
              return;
            st.watch_pending = false;
            if (is_error(err, k8s::errc::gone))
              relist(self, true, false);
            else
              rewatch_after_backoff(self);
          });
}

void on_events(informer_ptr self, std::uint64_t id,
               std::vector<watch_event>& events) {
  auto& st = self->state;
  if (id != st.watch_id)
    return;
  for (auto& ev : events) {
    json obj = json::parse(ev.object, nullptr, false);
    if (obj.is_discarded() || !obj.is_object())
      continue;
    if (ev.type == "ERROR") {
      // 410 Expired/Gone: the resourceVersion is compacted away; relist.
      // Anything else: watch again from where we were, later.
      auto code = obj.value("code", 0);
      auto reason = obj.value("reason", std::string{});
      self->send(st.api, unwatch_atom::value, st.watch_id);
      st.watch_id = 0;
      if (code == 410 || reason == "Expired" || reason == "Gone")
        relist(self, true, false);
      else
        rewatch_after_backoff(self);
      return;
    }
    st.backoff = caf::timespan{0};
    auto rv = object_rv(obj);
    if (!rv.empty())
      st.last_rv = rv;
    if (ev.type == "BOOKMARK")
      continue;
    auto key = object_key(obj);
    if (ev.type == "DELETED")
      st.cache.erase(key);
    else
      st.cache[key] = cached{std::move(ev.object), rv};
    st.queue.add(key);
  }
  pump(self);
}

informer_impl::behavior_type informer_behavior(informer_ptr self, api_actor api,
                                               informer_config cfg,
                                               owner_actor owner) {
  auto& st = self->state;
  st.api = std::move(api);
  st.owner = std::move(owner);
  st.queue = work_queue{cfg.queue_limits};
  st.rng.seed(cfg.seed != 0 ? cfg.seed : std::random_device{}());
  st.cfg = std::move(cfg);
  list_page(self);
  if (st.cfg.resync_period.count() > 0)
    self->delayed_send(self, st.cfg.resync_period, resync_atom::value);
  return {
      [self](done_atom, std::string& key, caf::timespan requeue_after,
             bool failed) {
        auto& st = self->state;
        if (!st.queue.processing(key))
          return;
        st.queue.done(key);
        --st.in_flight;
        auto now = self->clock().now();
        if (failed) {
          st.queue.add_rate_limited(key, now);
        } else {
          st.queue.forget(key);
          if (requeue_after.count() > 0)
            st.queue.add_after(key, requeue_after, now);
        }
        schedule_tick(self);
        pump(self);
      },
      [self](enqueue_atom, std::string& key) { enqueue(self, key); },
      [self](cache_get_atom,
             const std::string& key) -> caf::result<std::string> {
        auto& st = self->state;
        auto i = st.cache.find(key);
        if (i == st.cache.end()) {
          auto what = st.cfg.ref.resource + " \"" + key + "\" not found";
          return make_error(k8s::errc::not_found,
                            what + " in the informer's cache",
                            status{"NotFound", 404, what, {}});
        }
        return i->second.object;
      },
      [self](cache_list_atom) {
        std::vector<std::string> out;
        for (const auto& [_, obj] : self->state.cache)
          out.push_back(obj.object);
        return out;
      },
      [self](synced_atom) { return self->state.synced; },
      [self](events_atom, std::uint64_t id, std::vector<watch_event>& events) {
        on_events(self, id, events);
      },
      [self](watch_end_atom, std::uint64_t id, const caf::error& err) {
        auto& st = self->state;
        if (id != st.watch_id)
          return;
        st.watch_id = 0;
        // A normal end (timeoutSeconds, the server closed the stream) resumes
        // at once from the last resourceVersion; a broken one after a wait.
        if (err)
          rewatch_after_backoff(self);
        else
          start_watch(self);
      },
      [self](relist_atom, std::uint64_t gen) {
        if (gen == self->state.generation)
          list_page(self);
      },
      [self](rewatch_atom, std::uint64_t gen) {
        if (gen == self->state.generation)
          start_watch(self);
      },
      [self](tick_atom) {
        auto& st = self->state;
        st.tick_at.reset();
        st.queue.advance(self->clock().now());
        schedule_tick(self);
        pump(self);
      },
      [self](resync_atom) {
        auto& st = self->state;
        for (const auto& [key, _] : st.cache)
          st.queue.add(key);
        pump(self);
        self->delayed_send(self, st.cfg.resync_period, resync_atom::value);
      },
  };
}

} // namespace

std::string key_of(const std::string& namespace_name, const std::string& name) {
  return namespace_name.empty() ? name : namespace_name + "/" + name;
}

informer_actor spawn_informer(caf::actor_system& sys, api_actor api,
                              informer_config cfg, owner_actor owner) {
  auto actor = sys.spawn(informer_behavior, std::move(api), std::move(cfg),
                         std::move(owner));
  return caf::actor_cast<informer_actor>(actor);
}

} // namespace aiperf::k8s::informer
