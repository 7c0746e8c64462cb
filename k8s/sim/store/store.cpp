#include "k8s/sim/store/store.hpp"

#include "k8s/sim/store/state_log.hpp"
#include "k8s/sim/store/store_core.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <chrono>
#include <map>
#include <optional>

namespace aiperf::k8s::sim {

bool answers_plain_not_found(const caf::error& err) {
  return is_error(err, errc::not_found)
         && error_message(err) == "404 page not found";
}

namespace {

using watch_tick_atom = caf::atom_constant<caf::atom("k8s_wtick")>;
using watch_deadline_atom = caf::atom_constant<caf::atom("k8s_wdead")>;

/// The store plus its own timers (bookmarks, watch deadlines).
using store_impl_actor
    = store_actor::extend<caf::reacts_to<watch_tick_atom, std::uint64_t>,
                          caf::reacts_to<watch_deadline_atom, std::uint64_t>>;

struct watch_state {
  watch_sink_actor sink;
  watch_filter filter;
};

struct store_state {
  std::optional<store_core> core;
  std::optional<state_log> log;
  std::map<std::uint64_t, watch_state> watches;
  std::uint64_t next_watch_id = 1;
  /// Changes committed by the request being handled, sent after it.
  std::vector<history_event> pending;
  static inline const char* name = "k8s_sim_store";
};

using actor_ptr = store_impl_actor::stateful_pointer<store_state>;

caf::error ended(std::string why) {
  return make_error(errc::transport, std::move(why));
}

void end_watch(actor_ptr self, std::uint64_t id, caf::error why) {
  auto it = self->state.watches.find(id);
  if (it == self->state.watches.end())
    return;
  auto sink = it->second.sink;
  self->state.watches.erase(it);
  self->send(sink, watch_end_atom::value, id, std::move(why));
}

/// Logs the batch (fsync before any reply), then tells the watches.
caf::error flush(actor_ptr self) {
  auto& st = self->state;
  if (st.pending.empty())
    return caf::none;
  auto batch = std::move(st.pending);
  st.pending.clear();
  caf::error failed;
  if (st.log)
    if (auto ok = st.log->append(batch); !ok)
      failed = ok.error();
  for (auto& [id, w] : st.watches) {
    std::vector<watch_event> out;
    for (const auto& ev : batch)
      if (auto e = st.core->event_for(w.filter, ev))
        out.push_back(std::move(*e));
    if (!out.empty())
      self->send(w.sink, events_atom::value, id, std::move(out));
  }
  return failed;
}

template <class T> caf::result<T> answer(actor_ptr self, caf::expected<T> r) {
  if (auto err = flush(self))
    return err;
  if (!r)
    return r.error();
  return std::move(*r);
}

store_impl_actor::behavior_type store_impl(actor_ptr self, store_config cfg,
                                           std::vector<history_event> replay,
                                           std::optional<state_log> log) {
  auto start = self->clock().now();
  std::int64_t base = cfg.start_unix_seconds;
  if (base == 0)
    base = std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
               .count();
  auto& st = self->state;
  st.core.emplace(cfg, [self, start, base] {
    return base
           + std::chrono::duration_cast<std::chrono::seconds>(
                 self->clock().now() - start)
                 .count();
  });
  st.core->on_commit
      = [self](const history_event& ev) { self->state.pending.push_back(ev); };
  st.log = std::move(log);
  if (replay.empty()) {
    st.core->seed();
  } else {
    for (const auto& ev : replay)
      st.core->replay(ev);
    st.core->refresh_root_ca();
  }
  (void)flush(self);
  self->set_down_handler([self](const caf::down_msg& msg) {
    std::vector<std::uint64_t> gone;
    for (const auto& [id, w] : self->state.watches)
      if (caf::actor_cast<caf::actor_addr>(w.sink) == msg.source)
        gone.push_back(id);
    for (auto id : gone)
      self->state.watches.erase(id);
  });
  auto watch_seconds = cfg.default_watch_seconds;
  auto bookmark_seconds = cfg.bookmark_seconds;
  return {
      [self](request& req) -> caf::result<response> {
        return answer(self, self->state.core->handle(req));
      },
      [self, watch_seconds,
       bookmark_seconds](watch_atom, request& req,
                         watch_sink_actor& sink) -> caf::result<std::uint64_t> {
        req.verb = verb::watch;
        auto plan = self->state.core->plan_watch(req);
        if (!plan)
          return plan.error();
        auto id = self->state.next_watch_id++;
        auto rp = self->make_response_promise<std::uint64_t>();
        rp.deliver(id);
        if (!plan->initial.empty())
          self->send(sink, events_atom::value, id, std::move(plan->initial));
        if (plan->ends_after_initial) {
          self->send(sink, watch_end_atom::value, id, caf::error{});
          return rp;
        }
        self->monitor(sink);
        self->state.watches.emplace(id, watch_state{sink, plan->filter});
        auto lifetime
            = req.timeout_seconds > 0 ? req.timeout_seconds : watch_seconds;
        self->delayed_send(self, std::chrono::seconds(lifetime),
                           watch_deadline_atom::value, id);
        if (req.allow_watch_bookmarks && bookmark_seconds > 0
            && bookmark_seconds < lifetime)
          self->delayed_send(self, std::chrono::seconds(bookmark_seconds),
                             watch_tick_atom::value, id);
        return rp;
      },
      [self](unwatch_atom, std::uint64_t id) {
        end_watch(self, id, ended("the watch was ended by unwatch"));
      },
      [self, bookmark_seconds](watch_tick_atom, std::uint64_t id) {
        auto it = self->state.watches.find(id);
        if (it == self->state.watches.end())
          return;
        self->send(it->second.sink, events_atom::value, id,
                   std::vector<watch_event>{
                       self->state.core->bookmark(it->second.filter)});
        self->delayed_send(self, std::chrono::seconds(bookmark_seconds),
                           watch_tick_atom::value, id);
      },
      [self](watch_deadline_atom, std::uint64_t id) {
        auto it = self->state.watches.find(id);
        if (it == self->state.watches.end())
          return;
        // A bookmark just before the deadline lets the client resume from the
        // latest resourceVersion (kube-apiserver's cacher does the same).
        if (it->second.filter.bookmarks)
          self->send(it->second.sink, events_atom::value, id,
                     std::vector<watch_event>{
                         self->state.core->bookmark(it->second.filter)});
        end_watch(self, id, caf::error{});
      },
      [self](authenticate_atom, std::string& token) -> caf::result<user_info> {
        return answer(self, self->state.core->authenticate(token));
      },
      [self](discovery_atom, std::string& path) -> caf::result<response> {
        return answer(self, self->state.core->discovery(path));
      },
      [self](reset_atom, bool keep_state) -> caf::result<std::string> {
        std::vector<std::uint64_t> ids;
        for (const auto& [id, _] : self->state.watches)
          ids.push_back(id);
        for (auto id : ids)
          end_watch(self, id, ended("the API server restarted"));
        if (!keep_state) {
          if (self->state.log)
            if (auto ok = self->state.log->truncate(); !ok)
              return ok.error();
          self->state.core->wipe();
        }
        if (auto err = flush(self))
          return err;
        return std::to_string(self->state.core->revision());
      },
      [self](drop_watches_atom,
             std::string& resource) -> caf::result<std::uint64_t> {
        std::vector<std::uint64_t> ids;
        for (const auto& [id, w] : self->state.watches)
          if (resource.empty() || w.filter.type.resource == resource)
            ids.push_back(id);
        for (auto id : ids)
          end_watch(self, id, ended("the watch was dropped"));
        return static_cast<std::uint64_t>(ids.size());
      },
  };
}

} // namespace

caf::expected<store_actor> spawn_store(caf::actor_system& sys,
                                       store_config cfg) {
  std::vector<history_event> replay;
  std::optional<state_log> log;
  if (!cfg.state_dir.empty()) {
    auto opened = state_log::open(cfg.state_dir, replay);
    if (!opened)
      return opened.error();
    log.emplace(std::move(*opened));
  }
  auto impl = sys.spawn(store_impl, std::move(cfg), std::move(replay),
                        std::move(log));
  return caf::actor_cast<store_actor>(impl);
}

} // namespace aiperf::k8s::sim
