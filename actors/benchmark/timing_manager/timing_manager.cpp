#include "actors/benchmark/timing_manager/timing_manager.hpp"
#include "proto/benchmark_errors.hpp"

#include "actors/benchmark/timing/rate_schedule.hpp"
#include "runtime/log/log.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <unordered_map>

namespace aiperf::timing_manager {

using namespace proto;

namespace {

constexpr std::int64_t tick_ns = 1'000'000;
constexpr std::int64_t drain_timeout_ns = 10'000'000'000;

struct session_state {
  std::uint32_t conversation = 0;
  std::uint32_t worker = 0;
  std::uint32_t next_turn = 0;
  std::uint32_t num_turns = 1;
  /// User-centric mode: the user slot and the due time of the last turn.
  std::uint32_t user = 0;
  std::int64_t last_due_ns = 0;
};

struct in_flight_credit {
  std::uint32_t worker = 0;
  bool awaiting_first_token = false;
  /// The credit as granted (its session, and what to hand back when its
  /// worker is lost).
  credit granted;
};

/// A turn waiting for its due time (or for a prefill slot).
struct pending_turn {
  std::int64_t due_ns = 0;
  std::uint32_t session = 0;
  bool operator>(const pending_turn& other) const {
    return due_ns > other.due_ns;
  }
};

using pending_queue = std::priority_queue<pending_turn, std::vector<pending_turn>,
                                          std::greater<pending_turn>>;

} // namespace

struct timing_manager_state {
  static inline const char* name = "timing_manager";

  timing_config cfg;
  std::vector<credit_sink_actor> workers;
  std::vector<bool> worker_alive;
  std::vector<std::uint64_t> worker_load;
  std::vector<std::uint64_t> worker_sent;
  /// Fixed schedule: conversations in replay order (by start offset).
  std::vector<std::uint32_t> fixed_order;

  // Phases still to run, and the results of those that ran.
  std::deque<phase> phases;
  std::vector<phase_stats> results;
  caf::typed_response_promise<std::vector<phase_stats>> start_promise;
  bool running = false;

  // The running phase.
  phase_stats stats;
  std::uint64_t budget = 0; // 0 = unbounded
  std::int64_t deadline_ns = 0;
  std::int64_t grace_deadline_ns = 0;
  std::int64_t drain_deadline_ns = 0;
  bool sending_done = false;
  bool cancelling = false;
  bool cancel_requested = false;
  std::uint64_t next_credit_id = 1;
  std::uint32_t next_session = 0;
  std::unordered_map<std::uint32_t, session_state> sessions;
  std::unordered_map<std::uint64_t, in_flight_credit> in_flight;
  std::uint32_t prefill_in_flight = 0;
  pending_queue pending;            // turns with a due time
  std::deque<std::uint32_t> waiting; // turns blocked on a prefill slot
  /// Request-rate mode: first-turn targets and catch-up (one per phase).
  std::optional<timing::rate_schedule> rate;
  /// User-centric mode: staggered user starts and turn gaps (one per phase).
  std::optional<timing::user_centric_schedule> users;
  std::uint32_t fixed_next = 0; // fixed schedule: index into fixed_order
  std::vector<credit_batch> outbox;
  bool tick_armed = false;
};

namespace {

/// The public interface plus the private tick the actor sends itself.
using timing_manager_impl_actor
  = timing_manager_actor::extend<caf::reacts_to<tick_atom>>;

using actor_ptr
  = timing_manager_impl_actor::stateful_pointer<timing_manager_state>;

std::int64_t now_ns(actor_ptr self) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           self->clock().now().time_since_epoch())
    .count();
}

/// Whether a send due at `due_ns` falls at or after the duration's end: it
/// is not granted ahead (lookahead) only to leave after the duration.
bool past_deadline(const timing_manager_state& st, std::int64_t due_ns) {
  return st.deadline_ns > 0 && due_ns >= st.deadline_ns;
}

bool budget_left(const timing_manager_state& st) {
  return st.budget == 0 || st.stats.sent < st.budget;
}

bool slot_free(const timing_manager_state& st) {
  return st.cfg.concurrency == 0 || st.sessions.size() < st.cfg.concurrency;
}

bool any_worker_alive(const timing_manager_state& st) {
  return std::find(st.worker_alive.begin(), st.worker_alive.end(), true)
         != st.worker_alive.end();
}

/// Least loaded live worker; ties go to the one that got fewer credits.
std::optional<std::uint32_t> pick_worker(const timing_manager_state& st) {
  std::optional<std::uint32_t> best;
  for (std::uint32_t i = 0; i < st.workers.size(); ++i) {
    if (!st.worker_alive[i])
      continue;
    if (!best || st.worker_load[i] < st.worker_load[*best]
        || (st.worker_load[i] == st.worker_load[*best]
            && st.worker_sent[i] < st.worker_sent[*best]))
      best = i;
  }
  return best;
}

void flush(actor_ptr self) {
  auto& st = self->state;
  for (std::size_t i = 0; i < st.outbox.size(); ++i) {
    if (st.outbox[i].empty())
      continue;
    self->send(st.workers[i], std::move(st.outbox[i]));
    st.outbox[i] = credit_batch{};
  }
}

/// The conversation of the next session outside trace replay: the dataset
/// in order, cycling.
std::uint32_t next_conversation(const timing_manager_state& st) {
  return st.next_session % static_cast<std::uint32_t>(st.cfg.sessions.size());
}

/// Opens a session of `conversation` on the least loaded worker, sending at
/// most `max_turns` of its turns; returns its number.
std::optional<std::uint32_t>
open_session(actor_ptr self, std::uint32_t conversation, std::uint32_t user = 0,
             std::uint32_t max_turns
             = std::numeric_limits<std::uint32_t>::max()) {
  auto& st = self->state;
  auto worker = pick_worker(st);
  if (!worker || conversation >= st.cfg.sessions.size())
    return std::nullopt;
  auto num = st.next_session++;
  session_state s;
  s.conversation = conversation;
  s.worker = *worker;
  s.num_turns = std::clamp<std::uint32_t>(
    st.cfg.sessions[conversation].num_turns, 1, std::max(1u, max_turns));
  s.user = user;
  st.sessions.emplace(num, s);
  ++st.stats.sessions_started;
  return num;
}

void end_session(actor_ptr self, std::uint32_t session);
void grant_fixed_turns(actor_ptr self, std::int64_t now);

/// Grants the next turn of `session` now, due at `due_ns` (0 = at once).
/// Ends the session instead when sending is over; parks the turn when no
/// prefill slot is free.
void grant_turn(actor_ptr self, std::uint32_t session, std::int64_t due_ns) {
  auto& st = self->state;
  auto it = st.sessions.find(session);
  if (it == st.sessions.end())
    return;
  if (st.sending_done || !budget_left(st)) {
    end_session(self, session);
    return;
  }
  if (st.cfg.prefill_concurrency > 0
      && st.prefill_in_flight >= st.cfg.prefill_concurrency) {
    st.waiting.push_back(session);
    return;
  }
  auto& s = it->second;
  credit c;
  c.id = st.next_credit_id++;
  c.phase = st.stats.phase;
  c.session_num = session;
  c.conversation = s.conversation;
  c.turn_index = s.next_turn++;
  c.num_turns = s.num_turns;
  c.issued_at_ns = now_ns(self);
  c.due_ns = due_ns;
  c.url_index = st.cfg.num_urls == 0
                  ? 0
                  : static_cast<std::uint32_t>(st.stats.sent % st.cfg.num_urls);
  s.last_due_ns = due_ns == 0 ? c.issued_at_ns : due_ns;
  bool prefill = st.cfg.prefill_concurrency > 0;
  st.in_flight.emplace(c.id, in_flight_credit{s.worker, prefill, c});
  if (prefill)
    ++st.prefill_in_flight;
  ++st.worker_load[s.worker];
  ++st.worker_sent[s.worker];
  ++st.stats.sent;
  st.outbox[s.worker].push_back(c);
  if (!budget_left(st))
    st.sending_done = true;
}

/// Grants the turn now if it is due within the lookahead, else parks it
/// until a tick gets there.
void schedule_turn(actor_ptr self, std::uint32_t session, std::int64_t due_ns,
                   std::int64_t now) {
  auto& st = self->state;
  if (due_ns > now + st.cfg.lookahead_ns)
    st.pending.push({due_ns, session});
  else
    grant_turn(self, session, due_ns);
}

/// First turns of new sessions, as far as slots and budget allow.
void fill_slots(actor_ptr self) {
  auto& st = self->state;
  while (!st.sending_done && budget_left(st) && slot_free(st)) {
    auto s = open_session(self, next_conversation(st));
    if (!s)
      break;
    grant_turn(self, *s, 0);
  }
}

void end_session(actor_ptr self, std::uint32_t session) {
  auto& st = self->state;
  auto it = st.sessions.find(session);
  if (it == st.sessions.end())
    return;
  auto ended = it->second;
  st.sessions.erase(it);
  if (st.sending_done)
    return;
  switch (st.cfg.mode) {
    case timing_mode::concurrency:
      fill_slots(self);
      break;
    case timing_mode::user_centric: {
      // A fresh user (new conversation, full session) takes over the slot
      // at the user's next due time.
      auto now = now_ns(self);
      auto due = st.users->next_due(ended.last_due_ns, now);
      if (auto s = open_session(self, next_conversation(st), ended.user))
        schedule_turn(self, *s, due, now);
      break;
    }
    case timing_mode::fixed_schedule:
      grant_fixed_turns(self, now_ns(self)); // a trace session may wait
      break;
    default:
      break;
  }
}

/// Next turn of a session whose previous turn came back.
void continue_session(actor_ptr self, std::uint32_t session, bool stop) {
  auto& st = self->state;
  auto it = st.sessions.find(session);
  if (it == st.sessions.end())
    return;
  auto& s = it->second;
  if (stop || s.next_turn >= s.num_turns || st.sending_done) {
    end_session(self, session);
    return;
  }
  auto now = now_ns(self);
  std::int64_t due = 0;
  if (st.cfg.mode == timing_mode::user_centric) {
    due = st.users->next_due(s.last_due_ns, now);
  } else {
    // Think time after the return (trace replay: timing::fixed_schedule's
    // rule for turns without a timestamp).
    const auto& delays = st.cfg.sessions[s.conversation].turn_delay_ns;
    if (s.next_turn < delays.size() && delays[s.next_turn] > 0)
      due = now + delays[s.next_turn];
  }
  schedule_turn(self, session, due, now);
}

void release_prefill(actor_ptr self, in_flight_credit& c) {
  auto& st = self->state;
  if (!c.awaiting_first_token)
    return;
  c.awaiting_first_token = false;
  --st.prefill_in_flight;
  while (!st.waiting.empty()
         && st.prefill_in_flight < st.cfg.prefill_concurrency) {
    auto session = st.waiting.front();
    st.waiting.pop_front();
    grant_turn(self, session, 0);
  }
}

/// Request-rate mode: first turns whose targets fall within the lookahead.
/// The catch-up rule is timing::rate_schedule's: a target at most
/// catch_up_window_ns late keeps its due time (the worker sends at once and
/// the lag is measured from the target); later, one credit goes out due now
/// and the targets in between are counted as skipped.
void grant_rate_turns(actor_ptr self, std::int64_t now) {
  auto& st = self->state;
  auto& rate = *st.rate;
  while (!st.sending_done && budget_left(st)
         && rate.next_due() <= now + st.cfg.lookahead_ns) {
    const auto target = rate.next_due();
    if (past_deadline(st, target))
      break; // the tick at the deadline ends the sending
    if (!slot_free(st)) {
      // AIPerf skips a tick that finds no free session slot. Decide only
      // once it is due: a session may end before then.
      if (target > now)
        break;
      rate.skip();
      continue;
    }
    const bool late = now - target > st.cfg.catch_up_window_ns;
    // Polled at the target when it is still ahead (lookahead), so that
    // credit goes out early with lag 0.
    const auto decision = rate.poll(std::max(now, target));
    if (!decision.send)
      break; // cannot happen: polled at or after the target
    auto s = open_session(self, next_conversation(st));
    if (!s)
      break;
    grant_turn(self, *s, late ? now : target);
  }
  st.stats.skipped_sends = rate.skipped_sends();
}

/// Fixed schedule: first turns of the trace due within the lookahead, in
/// replay order. A session that finds no free slot waits for one (AIPerf
/// blocks on the slot too); it then goes out late, its lag measured from
/// the trace time.
void grant_fixed_turns(actor_ptr self, std::int64_t now) {
  auto& st = self->state;
  while (!st.sending_done && st.fixed_next < st.fixed_order.size()) {
    const auto conversation = st.fixed_order[st.fixed_next];
    const auto offset = st.cfg.sessions[conversation].start_offset_ns;
    const auto due = st.stats.start_ns + std::max<std::int64_t>(0, offset);
    if (due > now + st.cfg.lookahead_ns || past_deadline(st, due))
      break;
    if (!slot_free(st))
      break; // retried when a session ends
    auto s = open_session(self, conversation);
    if (!s)
      break;
    ++st.fixed_next;
    grant_turn(self, *s, due);
  }
}

/// Everything due within the lookahead: the mode's first turns, then the
/// parked later turns.
void grant_due(actor_ptr self, std::int64_t now) {
  auto& st = self->state;
  if (st.sending_done)
    return;
  if (st.cfg.mode == timing_mode::fixed_schedule)
    grant_fixed_turns(self, now);
  if (st.cfg.mode == timing_mode::request_rate)
    grant_rate_turns(self, now);
  while (!st.sending_done && !st.pending.empty()
         && st.pending.top().due_ns <= now + st.cfg.lookahead_ns
         && !past_deadline(st, st.pending.top().due_ns)) {
    auto p = st.pending.top();
    st.pending.pop();
    grant_turn(self, p.session, p.due_ns);
  }
}

void cancel_in_flight(actor_ptr self) {
  auto& st = self->state;
  std::vector<bool> busy(st.workers.size(), false);
  for (auto& [id, c] : st.in_flight)
    busy[c.worker] = true;
  for (std::size_t i = 0; i < st.workers.size(); ++i)
    if (busy[i] && st.worker_alive[i])
      self->send(st.workers[i], cancel_atom::value,
                 std::vector<std::uint64_t>{});
}

void stop_sending(actor_ptr self) {
  auto& st = self->state;
  st.sending_done = true;
  st.pending = pending_queue{};
  st.waiting.clear();
}

void start_phase(actor_ptr self);

/// Whether anything waits for the clock: scheduled first turns, parked
/// turns, the duration deadline, or the grace/drain deadlines. A closed
/// loop with a request count needs no tick (it would wake the CAF clock
/// thread 1000 times a second for nothing).
bool needs_tick(const timing_manager_state& st) {
  if (!st.sending_done)
    return st.cfg.mode != timing_mode::concurrency || !st.pending.empty()
           || st.deadline_ns > 0;
  if (st.in_flight.empty())
    return false;
  return st.cancelling || st.cfg.grace_ns >= 0;
}

void arm_tick(actor_ptr self) {
  auto& st = self->state;
  if (st.tick_armed || !st.running || !needs_tick(st))
    return;
  st.tick_armed = true;
  self->delayed_send(self, std::chrono::nanoseconds{tick_ns},
                     tick_atom::value);
}

/// Ends the phase once sending is done and nothing is in flight.
void maybe_finish_phase(actor_ptr self) {
  auto& st = self->state;
  if (!st.running)
    return;
  if (!st.sending_done && st.cfg.mode == timing_mode::fixed_schedule
      && st.pending.empty() && st.sessions.empty()
      && st.fixed_next >= st.fixed_order.size())
    st.sending_done = true;
  if (!any_worker_alive(st))
    stop_sending(self);
  if (!st.sending_done || !st.in_flight.empty())
    return;
  st.stats.end_ns = now_ns(self);
  st.stats.was_cancelled = st.cancel_requested;
  st.results.push_back(st.stats);
  if (!st.phases.empty() && !st.cancel_requested) {
    start_phase(self);
    flush(self);
    return;
  }
  st.running = false;
  st.start_promise.deliver(st.results);
}

void start_phase(actor_ptr self) {
  auto& st = self->state;
  auto ph = st.phases.front();
  st.phases.pop_front();
  auto now = now_ns(self);
  st.stats = phase_stats{};
  st.stats.phase = ph;
  st.stats.start_ns = now;
  st.sending_done = false;
  st.cancelling = false;
  st.sessions.clear();
  st.pending = pending_queue{};
  st.waiting.clear();
  st.next_session = 0;
  st.fixed_next = 0;
  st.grace_deadline_ns = 0;
  st.drain_deadline_ns = 0;
  if (ph == phase::warmup) {
    st.budget = st.cfg.warmup_request_count;
    st.deadline_ns = 0;
  } else {
    st.budget = st.cfg.request_count;
    st.deadline_ns = st.cfg.duration_ns > 0 ? now + st.cfg.duration_ns : 0;
  }
  switch (st.cfg.mode) {
    case timing_mode::concurrency:
      fill_slots(self);
      break;
    case timing_mode::request_rate:
      // Same seed every phase: the profiling schedule does not depend on
      // how long the warmup was.
      st.rate.emplace(timing::interval_generator{interval_options_of(st.cfg)},
                      now, st.cfg.catch_up_window_ns);
      break;
    case timing_mode::fixed_schedule:
      // Sessions are seeded from their offsets as they come due (see the
      // fixed-schedule pass above); one pass over the trace is replayed.
      break;
    case timing_mode::user_centric: {
      st.users.emplace(user_centric_options_of(st.cfg), now);
      const auto& users = st.users->users();
      for (std::uint32_t u = 0; u < users.size(); ++u)
        if (auto s = open_session(self, next_conversation(st), u,
                                  users[u].initial_turns))
          st.pending.push({users[u].first_due_ns, *s});
      break;
    }
  }
  grant_due(self, now);
  arm_tick(self);
}

void on_tick(actor_ptr self) {
  auto& st = self->state;
  st.tick_armed = false;
  if (!st.running)
    return;
  auto now = now_ns(self);
  if (!st.sending_done && st.deadline_ns > 0 && now >= st.deadline_ns)
    stop_sending(self);
  grant_due(self, now);
  if (st.sending_done && !st.in_flight.empty()) {
    // The grace period follows the duration (AIPerf: "after the duration
    // ends"), also when --request-count stopped the sending first: the
    // requests in flight then have until duration + grace.
    if (st.grace_deadline_ns == 0)
      st.grace_deadline_ns = st.cfg.grace_ns < 0
                               ? std::numeric_limits<std::int64_t>::max()
                               : std::max(now, st.deadline_ns) + st.cfg.grace_ns;
    if (!st.cancelling && now >= st.grace_deadline_ns) {
      st.stats.timed_out = true;
      st.cancelling = true;
      st.drain_deadline_ns = now + drain_timeout_ns;
      cancel_in_flight(self);
    } else if (st.cancelling && st.drain_deadline_ns > 0
               && now >= st.drain_deadline_ns) {
      // Workers did not answer the cancel: give up on those credits.
      st.stats.lost += st.in_flight.size();
      st.in_flight.clear();
    }
  }
  flush(self);
  maybe_finish_phase(self);
  arm_tick(self);
}

} // namespace

timing::interval_options interval_options_of(const timing_config& cfg) {
  timing::interval_options opts;
  switch (cfg.pattern) {
    case arrival_pattern::constant:
      opts.pattern = timing::arrival_pattern::constant;
      break;
    case arrival_pattern::poisson:
      opts.pattern = timing::arrival_pattern::poisson;
      break;
    case arrival_pattern::gamma:
      opts.pattern = timing::arrival_pattern::gamma;
      break;
  }
  opts.rate = cfg.request_rate;
  opts.smoothness = cfg.smoothness;
  opts.seed = cfg.random_seed;
  return opts;
}

timing::user_centric_options user_centric_options_of(const timing_config& cfg) {
  timing::user_centric_options opts;
  opts.num_users = cfg.num_users;
  opts.qps = cfg.user_centric_rate;
  double total = 0;
  for (const auto& s : cfg.sessions)
    total += s.num_turns;
  opts.session_turns
    = cfg.sessions.empty()
        ? 0
        : static_cast<std::uint32_t>(
          std::lround(total / static_cast<double>(cfg.sessions.size())));
  return opts;
}

caf::expected<void> validate(const timing_config& cfg) {
  using timing::errc;
  if (cfg.sessions.empty())
    return make_error(errc::empty_dataset,
                      "timing_manager: empty dataset (no session plans); give "
                      "the dataset at least one conversation");
  if (cfg.lookahead_ns < 0)
    return make_error(errc::bad_option,
                      "timing_manager: lookahead_ns must be >= 0");
  if (cfg.catch_up_window_ns < 0)
    return make_error(errc::bad_option,
                      "timing_manager: catch_up_window_ns must be >= 0");
  // The schedule's own check, its message prefixed with this service.
  auto prefixed = [](const caf::error& err) {
    return make_error(error_code(err, errc::bad_option),
                      "timing_manager: " + error_message(err));
  };
  switch (cfg.mode) {
    case timing_mode::request_rate:
      if (auto valid = timing::validate(interval_options_of(cfg)); !valid)
        return prefixed(valid.error());
      break;
    case timing_mode::user_centric:
      if (auto valid = timing::validate(user_centric_options_of(cfg)); !valid)
        return prefixed(valid.error());
      break;
    default:
      break;
  }
  return caf::unit;
}

namespace {

timing_manager_impl_actor::behavior_type timing_manager_impl(actor_ptr self) {
  auto logger = log::get("timing_manager");
  return {
    [=](configure_atom, timing_config& cfg,
        std::vector<credit_sink_actor>& workers) -> caf::result<caf::ok_atom> {
      if (workers.empty())
        return make_error(benchmark::errc::invalid_config,
                          "timing_manager: no workers");
      if (auto valid = validate(cfg); !valid)
        return make_error(benchmark::errc::invalid_config,
                          error_message(valid.error()));
      auto& st = self->state;
      if (st.running)
        return make_error(benchmark::errc::bad_request,
                          "timing_manager: configure while running");
      st.cfg = std::move(cfg);
      st.fixed_order.clear();
      if (st.cfg.mode == timing_mode::fixed_schedule) {
        // Replay order by offset, whatever order the plans came in (the
        // dataset_manager already sorts them; ties keep dataset order).
        st.fixed_order.resize(st.cfg.sessions.size());
        for (std::uint32_t i = 0; i < st.fixed_order.size(); ++i)
          st.fixed_order[i] = i;
        auto offset = [&](std::uint32_t i) {
          return std::max<std::int64_t>(0, st.cfg.sessions[i].start_offset_ns);
        };
        std::stable_sort(st.fixed_order.begin(), st.fixed_order.end(),
                         [&](auto a, auto b) { return offset(a) < offset(b); });
      }
      st.workers = std::move(workers);
      st.worker_alive.assign(st.workers.size(), true);
      st.worker_load.assign(st.workers.size(), 0);
      st.worker_sent.assign(st.workers.size(), 0);
      st.outbox.assign(st.workers.size(), credit_batch{});
      return caf::ok_atom::value;
    },
    [=](start_atom) -> caf::result<std::vector<phase_stats>> {
      auto& st = self->state;
      if (st.workers.empty() || st.running)
        return make_error(benchmark::errc::bad_request,
                          "timing_manager: start before configure");
      st.start_promise = self->make_response_promise<std::vector<phase_stats>>();
      st.running = true;
      if (st.cfg.warmup_request_count > 0)
        st.phases.push_back(phase::warmup);
      st.phases.push_back(phase::profiling);
      start_phase(self);
      flush(self);
      maybe_finish_phase(self);
      arm_tick(self);
      return st.start_promise;
    },
    [=](credit_return_batch& batch) {
      auto& st = self->state;
      for (auto& r : batch) {
        auto it = st.in_flight.find(r.credit_id);
        if (it == st.in_flight.end())
          continue; // already written off (drain timeout)
        const auto worker = it->second.worker;
        const auto session = it->second.granted.session_num;
        release_prefill(self, it->second);
        st.in_flight.erase(it);
        if (st.worker_load[worker] > 0)
          --st.worker_load[worker];
        switch (r.outcome) {
          case credit_outcome::ok:
            ++st.stats.returned;
            break;
          case credit_outcome::cancelled:
            ++st.stats.cancelled;
            break;
          case credit_outcome::lost:
            ++st.stats.lost;
            break;
        }
        continue_session(self, session, r.outcome != credit_outcome::ok);
      }
      flush(self);
      maybe_finish_phase(self);
      arm_tick(self);
    },
    [=](first_tok_atom, std::uint64_t credit_id) {
      auto& st = self->state;
      auto it = st.in_flight.find(credit_id);
      if (it != st.in_flight.end())
        release_prefill(self, it->second);
      flush(self);
    },
    [=](cancel_atom) {
      auto& st = self->state;
      if (!st.running || st.cancel_requested)
        return;
      logger->info("cancelling: no new credits, cancelling {} in flight",
                   st.in_flight.size());
      st.cancel_requested = true;
      st.phases.clear();
      stop_sending(self);
      st.cancelling = true;
      st.drain_deadline_ns = now_ns(self) + drain_timeout_ns;
      cancel_in_flight(self);
      maybe_finish_phase(self);
      arm_tick(self);
    },
    [=](lost_atom, std::uint32_t worker) {
      auto& st = self->state;
      credit_batch lost;
      if (worker >= st.workers.size() || !st.worker_alive[worker])
        return lost;
      st.worker_alive[worker] = false;
      for (auto& [id, c] : st.in_flight)
        if (c.worker == worker)
          lost.push_back(c.granted);
      logger->warn("worker {} lost with {} credits in flight", worker,
                   lost.size());
      for (auto& c : lost) {
        auto it = st.in_flight.find(c.id);
        release_prefill(self, it->second);
        st.in_flight.erase(it);
        ++st.stats.lost;
      }
      // Sessions pinned to the dead worker cannot go on.
      std::vector<std::uint32_t> orphans;
      for (auto& [num, s] : st.sessions)
        if (s.worker == worker)
          orphans.push_back(num);
      for (auto num : orphans)
        end_session(self, num);
      flush(self);
      maybe_finish_phase(self);
      arm_tick(self);
      return lost;
    },
    [=](progress_atom) {
      auto& st = self->state;
      timing_progress p;
      p.phase = st.stats.phase;
      p.sent = st.stats.sent;
      p.returned = st.stats.returned + st.stats.cancelled + st.stats.lost;
      p.in_flight = st.in_flight.size();
      p.target = st.budget;
      p.phase_start_ns = st.stats.start_ns;
      return p;
    },
    [=](tick_atom) { on_tick(self); },
  };
}

} // namespace

timing_manager_actor spawn_timing_manager(caf::actor_system& sys) {
  return caf::actor_cast<timing_manager_actor>(sys.spawn(timing_manager_impl));
}

} // namespace aiperf::timing_manager
