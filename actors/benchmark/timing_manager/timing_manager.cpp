#include "actors/benchmark/timing_manager/timing_manager.hpp"

#include "runtime/log/log.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <random>
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
  std::uint32_t session = 0;
  bool awaiting_first_token = false;
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
  gap_source next_gap;

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
  /// The credits in flight, to hand back when their worker is lost.
  std::unordered_map<std::uint64_t, credit> credits;
  std::uint32_t prefill_in_flight = 0;
  pending_queue pending;            // turns with a due time
  std::deque<std::uint32_t> waiting; // turns blocked on a prefill slot
  std::int64_t next_rate_due_ns = 0;
  std::uint32_t fixed_next = 0; // fixed schedule: next session to seed
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

/// Opens a session on the least loaded worker; returns its number.
std::optional<std::uint32_t> open_session(actor_ptr self, std::uint32_t user) {
  auto& st = self->state;
  auto worker = pick_worker(st);
  if (!worker || st.cfg.sessions.empty())
    return std::nullopt;
  auto num = st.next_session++;
  session_state s;
  s.conversation = num % static_cast<std::uint32_t>(st.cfg.sessions.size());
  s.worker = *worker;
  s.num_turns = std::max<std::uint32_t>(1, st.cfg.sessions[s.conversation].num_turns);
  s.user = user;
  st.sessions.emplace(num, s);
  ++st.stats.sessions_started;
  return num;
}

void end_session(actor_ptr self, std::uint32_t session);

/// Issues the next turn of `session` now, due at `due_ns` (0 = at once).
/// Returns false when the budget or a prefill slot does not allow it.
void issue_turn(actor_ptr self, std::uint32_t session, std::int64_t due_ns) {
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
  st.in_flight.emplace(c.id, in_flight_credit{s.worker, session, prefill});
  st.credits.emplace(c.id, c);
  if (prefill)
    ++st.prefill_in_flight;
  ++st.worker_load[s.worker];
  ++st.worker_sent[s.worker];
  ++st.stats.sent;
  st.outbox[s.worker].push_back(c);
  if (!budget_left(st))
    st.sending_done = true;
}

/// First turns of new sessions, as far as slots and budget allow.
void fill_slots(actor_ptr self) {
  auto& st = self->state;
  while (!st.sending_done && budget_left(st) && slot_free(st)) {
    auto s = open_session(self, 0);
    if (!s)
      break;
    issue_turn(self, *s, 0);
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
      // The user slot starts a new session one turn gap after its last turn.
      auto gap = static_cast<std::int64_t>(
        1e9 * st.cfg.num_users / std::max(st.cfg.user_centric_rate, 1e-9));
      if (auto s = open_session(self, ended.user))
        st.pending.push({ended.last_due_ns + gap, *s});
      break;
    }
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
    auto gap = static_cast<std::int64_t>(
      1e9 * st.cfg.num_users / std::max(st.cfg.user_centric_rate, 1e-9));
    due = s.last_due_ns + gap;
  } else {
    const auto& delays = st.cfg.sessions[s.conversation].turn_delay_ns;
    if (s.next_turn < delays.size() && delays[s.next_turn] > 0)
      due = now + delays[s.next_turn];
  }
  if (due > now + st.cfg.lookahead_ns)
    st.pending.push({due, session});
  else
    issue_turn(self, session, due);
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
    issue_turn(self, session, 0);
  }
}

/// Rate mode: first turns due within the lookahead window.
void issue_rate_turns(actor_ptr self, std::int64_t now) {
  auto& st = self->state;
  while (!st.sending_done && budget_left(st)
         && st.next_rate_due_ns <= now + st.cfg.lookahead_ns) {
    auto due = st.next_rate_due_ns;
    if (now - due > st.cfg.catch_up_window_ns) {
      // Too late to catch up without a burst: reset the schedule to now and
      // count the sends that were skipped.
      auto gap = std::max<std::int64_t>(1, st.next_gap());
      st.stats.skipped_sends += static_cast<std::uint64_t>((now - due) / gap);
      st.next_rate_due_ns = now;
      continue;
    }
    st.next_rate_due_ns = due + st.next_gap();
    if (!slot_free(st)) {
      ++st.stats.skipped_sends; // no session slot: the tick is skipped
      continue;
    }
    auto s = open_session(self, 0);
    if (!s)
      break;
    issue_turn(self, *s, due);
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

void arm_tick(actor_ptr self) {
  auto& st = self->state;
  if (st.tick_armed || !st.running)
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
      && st.fixed_next >= st.cfg.sessions.size())
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
      st.next_rate_due_ns = now;
      issue_rate_turns(self, now);
      break;
    case timing_mode::fixed_schedule:
      // Sessions are seeded lazily from their offsets (see on_tick), in
      // dataset order; only one pass over the trace is replayed.
      break;
    case timing_mode::user_centric: {
      auto gap = 1e9 * st.cfg.num_users
                 / std::max(st.cfg.user_centric_rate, 1e-9);
      for (std::uint32_t u = 0; u < st.cfg.num_users; ++u)
        if (auto s = open_session(self, u))
          st.pending.push(
            {now + static_cast<std::int64_t>(gap * u / st.cfg.num_users), *s});
      break;
    }
  }
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
  if (!st.sending_done) {
    if (st.cfg.mode == timing_mode::fixed_schedule) {
      while (st.fixed_next < st.cfg.sessions.size()) {
        auto offset = st.cfg.sessions[st.fixed_next].start_offset_ns;
        auto due = st.stats.start_ns + std::max<std::int64_t>(0, offset);
        if (due > now + st.cfg.lookahead_ns)
          break;
        ++st.fixed_next;
        if (!slot_free(st)) {
          ++st.stats.skipped_sends;
          continue;
        }
        if (auto s = open_session(self, 0))
          issue_turn(self, *s, due);
      }
    }
    if (st.cfg.mode == timing_mode::request_rate)
      issue_rate_turns(self, now);
    while (!st.pending.empty()
           && st.pending.top().due_ns <= now + st.cfg.lookahead_ns) {
      auto p = st.pending.top();
      st.pending.pop();
      issue_turn(self, p.session, p.due_ns);
    }
  }
  if (st.sending_done && !st.in_flight.empty()) {
    if (st.grace_deadline_ns == 0)
      st.grace_deadline_ns = st.cfg.grace_ns < 0
                               ? std::numeric_limits<std::int64_t>::max()
                               : now + st.cfg.grace_ns;
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
      st.credits.clear();
    }
  }
  flush(self);
  maybe_finish_phase(self);
  arm_tick(self);
}

} // namespace

gap_source make_gap_source(const timing_config& cfg) {
  auto rate = std::max(cfg.request_rate, 1e-9);
  auto engine = std::make_shared<std::mt19937_64>(cfg.random_seed);
  auto uniform = [engine] {
    // (0, 1]: never 0, so log() is finite.
    return (static_cast<double>((*engine)() >> 11) + 1.0) * 0x1.0p-53;
  };
  switch (cfg.pattern) {
    case arrival_pattern::constant:
      return [rate] { return static_cast<std::int64_t>(1e9 / rate); };
    case arrival_pattern::poisson:
      return [rate, uniform] {
        return static_cast<std::int64_t>(-std::log(uniform()) * 1e9 / rate);
      };
    default: {
      // Gamma(shape k = smoothness, scale 1/(rate k)) by Marsaglia-Tsang.
      auto k = std::max(cfg.smoothness, 1e-3);
      return [rate, k, uniform] {
        auto shape = k < 1 ? k + 1 : k;
        auto d = shape - 1.0 / 3;
        auto c = 1 / std::sqrt(9 * d);
        double v = 0;
        for (;;) {
          // Box-Muller normal from two uniforms.
          auto z = std::sqrt(-2 * std::log(uniform()))
                   * std::cos(2 * M_PI * uniform());
          v = 1 + c * z;
          if (v <= 0)
            continue;
          v = v * v * v;
          auto u = uniform();
          if (std::log(u) < 0.5 * z * z + d - d * v + d * std::log(v))
            break;
        }
        auto x = d * v;
        if (k < 1)
          x *= std::pow(uniform(), 1 / k);
        return static_cast<std::int64_t>(x / (rate * k) * 1e9);
      };
    }
  }
}

namespace {

timing_manager_impl_actor::behavior_type timing_manager_impl(actor_ptr self) {
  auto logger = log::get("timing_manager");
  return {
    [=](configure_atom, timing_config& cfg,
        std::vector<credit_sink_actor>& workers) -> caf::result<caf::ok_atom> {
      if (workers.empty())
        return caf::make_error(caf::sec::invalid_argument,
                               "timing_manager: no workers");
      if (cfg.sessions.empty())
        return caf::make_error(caf::sec::invalid_argument,
                               "timing_manager: empty dataset");
      auto& st = self->state;
      st.next_gap = make_gap_source(cfg);
      st.cfg = std::move(cfg);
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
        return caf::make_error(caf::sec::invalid_argument,
                               "timing_manager: start before configure");
      st.start_promise = self->make_response_promise<std::vector<phase_stats>>();
      st.running = true;
      if (st.cfg.warmup_request_count > 0)
        st.phases.push_back(phase::warmup);
      st.phases.push_back(phase::profiling);
      start_phase(self);
      flush(self);
      maybe_finish_phase(self);
      return st.start_promise;
    },
    [=](credit_return_batch& batch) {
      auto& st = self->state;
      for (auto& r : batch) {
        auto it = st.in_flight.find(r.credit_id);
        if (it == st.in_flight.end())
          continue; // already written off (drain timeout)
        auto c = it->second;
        release_prefill(self, it->second);
        st.in_flight.erase(it);
        st.credits.erase(r.credit_id);
        if (st.worker_load[c.worker] > 0)
          --st.worker_load[c.worker];
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
        continue_session(self, c.session,
                         r.outcome != credit_outcome::ok);
      }
      flush(self);
      maybe_finish_phase(self);
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
    },
    [=](lost_atom, std::uint32_t worker) {
      auto& st = self->state;
      credit_batch lost;
      if (worker >= st.workers.size() || !st.worker_alive[worker])
        return lost;
      st.worker_alive[worker] = false;
      for (auto& [id, c] : st.in_flight)
        if (c.worker == worker)
          lost.push_back(st.credits[id]);
      logger->warn("worker {} lost with {} credits in flight", worker,
                   lost.size());
      for (auto& c : lost) {
        auto it = st.in_flight.find(c.id);
        release_prefill(self, it->second);
        st.in_flight.erase(it);
        st.credits.erase(c.id);
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
