#include "actors/operator/leader_elector.hpp"

#include "k8s/api/json.hpp"
#include "k8s/object/time.hpp"
#include "proto/error.hpp"
#include "runtime/log/log.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <ctime>
#include <optional>
#include <random>

namespace aiperf::op {

namespace {

using k8s::json;
using k8s::request;
using k8s::response;
using k8s::verb;

/// `(tick_atom, attempt)`: try to acquire or renew (attempt numbers drop
/// ticks of an older schedule). `(deadline_atom, renewals)`: the renew
/// deadline of the renewal `renewals` counted, passed.
using tick_atom = caf::atom_constant<caf::atom("eltick")>;
using deadline_atom = caf::atom_constant<caf::atom("eldeadl")>;

using elector_impl = elector_actor::extend<caf::reacts_to<tick_atom, std::uint64_t>,
                                           caf::reacts_to<deadline_atom, std::uint64_t>>;

struct elector_state {
  election_config cfg;
  caf::actor_clock::time_point started;
  std::mt19937_64 rng;
  /// The Lease as last read or written (with its resourceVersion), and
  /// when its spec was seen to change, on our clock.
  std::optional<json> observed;
  caf::actor_clock::time_point observed_at;
  bool leading = false;
  bool stopped = false;
  bool in_flight = false;
  std::uint64_t ticks = 0;
  std::uint64_t renewals = 0;
};

using self_ptr = elector_impl::stateful_pointer<elector_state>;

std::int64_t now_unix_ns(self_ptr self) {
  auto& st = self->state;
  return st.cfg.start_unix_ns
         + std::chrono::duration_cast<std::chrono::nanoseconds>(self->clock().now() - st.started)
               .count();
}

const json& spec_of(const json& lease) {
  static const json none = json::object();
  auto it = lease.find("spec");
  return it != lease.end() && it->is_object() ? *it : none;
}

std::string holder_of(const json& lease) {
  return spec_of(lease).value("holderIdentity", std::string{});
}

request make_request(self_ptr self, verb v, const json& body = nullptr) {
  auto& cfg = self->state.cfg;
  request r;
  r.verb = v;
  r.ref = {"coordination.k8s.io", "v1", "leases", cfg.namespace_name,
           v == verb::create ? std::string{} : cfg.lease_name, ""};
  if (!body.is_null())
    r.body = body.dump();
  r.user = cfg.user;
  r.user_agent = "aiperf-node/operator";
  if (v != verb::get)
    r.field_manager = "aiperf-operator";
  return r;
}

// The Lease we want to hold: `base` (the observed one, or none) with our
// record. A renewal keeps acquireTime and leaseTransitions; a takeover
// counts one more transition.
json desired(self_ptr self, const std::optional<json>& base, bool renewal) {
  auto& cfg = self->state.cfg;
  auto now = k8s::format_micro_time(now_unix_ns(self));
  json lease = base ? *base
                    : json{{"apiVersion", "coordination.k8s.io/v1"},
                           {"kind", "Lease"},
                           {"metadata", {{"name", cfg.lease_name},
                                         {"namespace", cfg.namespace_name}}}};
  const json old = spec_of(lease);
  std::int64_t transitions = old.value("leaseTransitions", std::int64_t{0});
  json spec = {
      {"holderIdentity", cfg.identity},
      {"leaseDurationSeconds",
       std::chrono::duration_cast<std::chrono::seconds>(cfg.lease_duration).count()},
      {"acquireTime", renewal ? old.value("acquireTime", now) : now},
      {"renewTime", now},
      {"leaseTransitions", renewal || !base ? transitions : transitions + 1},
  };
  lease["spec"] = std::move(spec);
  return lease;
}

bool lease_valid(self_ptr self) {
  auto& st = self->state;
  auto seconds = spec_of(*st.observed).value("leaseDurationSeconds", std::int64_t{0});
  return self->clock().now() < st.observed_at + std::chrono::seconds{seconds};
}

void observe(self_ptr self, json lease) {
  auto& st = self->state;
  if (!st.observed || spec_of(*st.observed) != spec_of(lease))
    st.observed_at = self->clock().now();
  st.observed = std::move(lease);
}

void schedule(self_ptr self) {
  auto& st = self->state;
  auto wait = st.cfg.retry_period;
  if (!st.leading) {
    // wait.JitterUntil with JitterFactor 1.2: period × U[1, 2.2).
    std::uniform_real_distribution<double> jitter{1.0, 2.2};
    wait = std::chrono::duration_cast<caf::timespan>(wait * jitter(st.rng));
  }
  self->delayed_send(self, wait, tick_atom::value, ++st.ticks);
}

void step_down(self_ptr self, const char* why) {
  auto& st = self->state;
  if (st.stopped)
    return;
  st.stopped = true;
  bool was_leading = st.leading;
  st.leading = false;
  if (was_leading) {
    log::get("operator")->error("leader election: {} lost the Lease {}/{}: {}", st.cfg.identity,
                                st.cfg.namespace_name, st.cfg.lease_name, why);
    self->send(st.cfg.listener, leading_atom::value, false);
  }
  self->quit();
}

// The result of one attempt: whether we hold the Lease now.
void attempted(self_ptr self, bool holding) {
  auto& st = self->state;
  st.in_flight = false;
  if (st.stopped)
    return;
  if (holding) {
    auto renewal = ++st.renewals;
    self->delayed_send(self, st.cfg.renew_deadline, deadline_atom::value, renewal);
    if (!st.leading) {
      st.leading = true;
      log::get("operator")->info("leader election: {} acquired the Lease {}/{}", st.cfg.identity,
                                 st.cfg.namespace_name, st.cfg.lease_name);
      self->send(st.cfg.listener, leading_atom::value, true);
    }
  }
  schedule(self);
}

void call(self_ptr self, request r, std::function<void(response&)> ok,
          std::function<void(const caf::error&)> failed) {
  self->request(self->state.cfg.api, self->state.cfg.renew_deadline, std::move(r))
      .then([ok](response& res) { ok(res); }, [failed](caf::error& err) { failed(err); });
}

// client-go's slow path: read the Lease, create it if missing, take it over
// if it is ours, released or expired, else stay a standby.
void acquire_or_renew_slowly(self_ptr self) {
  call(
      self, make_request(self, verb::get),
      [self](response& r) {
        auto lease = json::parse(r.body, nullptr, false);
        if (!lease.is_object())
          return attempted(self, false);
        observe(self, lease);
        auto& st = self->state;
        auto holder = holder_of(lease);
        if (!holder.empty() && holder != st.cfg.identity && lease_valid(self)) {
          if (st.leading)
            return step_down(self, ("held by " + holder).c_str());
          return attempted(self, false);
        }
        bool renewal = holder == st.cfg.identity;
        call(
            self, make_request(self, verb::update, desired(self, st.observed, renewal)),
            [self](response& w) {
              observe(self, json::parse(w.body, nullptr, false));
              attempted(self, true);
            },
            [self](const caf::error&) { attempted(self, false); });
      },
      [self](const caf::error& err) {
        if (error_code(err, k8s::errc::transport) != k8s::errc::not_found)
          return attempted(self, false);
        call(
            self, make_request(self, verb::create, desired(self, std::nullopt, false)),
            [self](response& w) {
              observe(self, json::parse(w.body, nullptr, false));
              attempted(self, true);
            },
            [self](const caf::error&) { attempted(self, false); });
      });
}

void try_acquire_or_renew(self_ptr self) {
  auto& st = self->state;
  if (st.in_flight || st.stopped)
    return;
  st.in_flight = true;
  if (!(st.leading && st.observed && lease_valid(self)))
    return acquire_or_renew_slowly(self);
  // The fast path: one PUT on the Lease we last wrote, no GET.
  call(
      self, make_request(self, verb::update, desired(self, st.observed, true)),
      [self](response& w) {
        observe(self, json::parse(w.body, nullptr, false));
        attempted(self, true);
      },
      [self](const caf::error& err) {
        log::get("operator")->info("leader election: renewing optimistically failed ({}); "
                                   "reading the Lease",
                                   error_message(err));
        acquire_or_renew_slowly(self);
      });
}

elector_impl::behavior_type elector(self_ptr self, election_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.started = self->clock().now();
  if (st.cfg.start_unix_ns == 0)
    st.cfg.start_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  st.rng.seed(st.cfg.seed ? st.cfg.seed : std::random_device{}());
  // An elector that dies (not its own quit after stepping down or
  // releasing) can renew no more: its listener hears it as a lost lead.
  self->attach_functor([listener = st.cfg.listener](const caf::error& reason) {
    if (reason && reason != caf::exit_reason::normal && listener)
      caf::anon_send(listener, leading_atom::value, false);
  });
  self->send(self, tick_atom::value, st.ticks);
  return {
      [self](tick_atom, std::uint64_t tick) {
        if (tick == self->state.ticks)
          try_acquire_or_renew(self);
      },
      [self](deadline_atom, std::uint64_t renewal) {
        if (renewal == self->state.renewals && self->state.leading)
          step_down(self, "no renewal within the renew deadline");
      },
      [self](release_atom) -> caf::result<bool> {
        auto& st = self->state;
        auto rp = self->make_response_promise<bool>();
        if (!st.leading || !st.observed || st.stopped) {
          st.stopped = true;
          rp.deliver(false);
          self->quit();
          return rp;
        }
        st.stopped = true;
        st.leading = false;
        json lease = *st.observed;
        auto now = k8s::format_micro_time(now_unix_ns(self));
        auto& spec = lease["spec"];
        spec["holderIdentity"] = "";
        spec["leaseDurationSeconds"] = 1;
        spec["acquireTime"] = now;
        spec["renewTime"] = now;
        call(
            self, make_request(self, verb::update, lease),
            [self, rp](response&) mutable {
              rp.deliver(true);
              self->quit();
            },
            [self, rp](const caf::error&) mutable {
              rp.deliver(false);
              self->quit();
            });
        return rp;
      },
  };
}

struct gate_state {
  caf::actor running;
};

leadership_listener::behavior_type gate(leadership_listener::stateful_pointer<gate_state> self,
                                        std::function<caf::actor()> start,
                                        std::function<void()> lost) {
  // Fail-closed: a reconciler that ends on its own is a lost lead too.
  self->set_down_handler([self, lost](caf::down_msg& msg) {
    auto& st = self->state;
    if (!st.running || msg.source != st.running.address())
      return;
    st.running = nullptr;
    log::get("operator")->error("the reconciler ended ({}): stopping", caf::to_string(msg.reason));
    if (lost)
      lost();
  });
  // Stopped (a shutdown): the reconciler goes with the gate.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    if (self->state.running)
      caf::anon_send_exit(self->state.running, caf::exit_reason::kill);
    self->state.running = nullptr;
    self->quit(msg.reason);
  });
  return {
      [self, start, lost](leading_atom, bool leading) {
        auto& st = self->state;
        if (leading && !st.running) {
          st.running = start();
          if (st.running)
            self->monitor(st.running);
        } else if (!leading) {
          if (st.running) {
            self->demonitor(st.running);
            caf::anon_send_exit(st.running, caf::exit_reason::kill);
            st.running = nullptr;
          }
          if (lost)
            lost();
        }
      },
  };
}

} // namespace

elector_actor spawn_leader_elector(caf::actor_system& sys, election_config cfg) {
  return caf::actor_cast<elector_actor>(sys.spawn(elector, std::move(cfg)));
}

leadership_listener spawn_leadership_gate(caf::actor_system& sys,
                                          std::function<caf::actor()> start,
                                          std::function<void()> lost) {
  return sys.spawn(gate, std::move(start), std::move(lost));
}

} // namespace aiperf::op
