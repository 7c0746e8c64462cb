// Leader election on the simulator's store, on simulated time: who writes
// the Lease, how often, with which resourceVersion, and when a replica is
// told it leads or lost. Each elector's requests go through a proxy that
// records them by user name and can refuse or swallow them (an API server
// that fails or does not answer).
#include "actors/operator/leader_elector.hpp"
#include "k8s/api/json.hpp"
#include "k8s/object/time.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace aiperf::op {
namespace {

using namespace std::chrono_literals;
using k8s::json;
using k8s::request;
using k8s::response;
using k8s::verb;

constexpr std::int64_t start_unix = 1'795'000'000;

struct seen {
  std::string user;
  verb v;
  caf::actor_clock::time_point at;
  json body;
};

struct proxy_state {
  std::vector<seen> log;
  std::set<std::string> refused;   // answered 503
  std::set<std::string> swallowed; // never answered
  std::vector<caf::typed_response_promise<response>> held;
};

k8s::api_actor::behavior_type proxy(k8s::api_actor::pointer self, k8s::api_actor store,
                                    std::shared_ptr<proxy_state> st) {
  return {
      [=](request& r) -> caf::result<response> {
        st->log.push_back({r.user.username, r.verb, self->clock().now(),
                           r.body.empty() ? json() : json::parse(r.body)});
        auto rp = self->make_response_promise<response>();
        if (st->swallowed.count(r.user.username)) {
          st->held.push_back(rp);
          return rp;
        }
        if (st->refused.count(r.user.username)) {
          k8s::status s;
          s.reason = "ServiceUnavailable";
          s.code = 503;
          s.message = "the server is currently unable to handle the request";
          rp.deliver(k8s::make_status_error("leases", s));
          return rp;
        }
        self->request(store, caf::infinite, std::move(r))
            .then([rp](response& res) mutable { rp.deliver(std::move(res)); },
                  [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
        return rp;
      },
      [=](k8s::watch_atom, request& r, k8s::watch_sink_actor& sink) {
        return self->delegate(store, k8s::watch_atom::value, std::move(r), std::move(sink));
      },
      [=](k8s::unwatch_atom, std::uint64_t id) {
        self->send(store, k8s::unwatch_atom::value, id);
      },
  };
}

struct told {
  std::string who;
  bool leading;
  caf::actor_clock::time_point at;
};

leadership_listener::behavior_type listener(leadership_listener::pointer self, std::string who,
                                            std::shared_ptr<std::vector<told>> out) {
  return {
      [=](leading_atom, bool leading) {
        out->push_back({who, leading, self->clock().now()});
      },
  };
}

struct elector_test : caf_gtest::fixture<> {
  k8s::sim::store_actor store;
  k8s::api_actor api;
  std::shared_ptr<proxy_state> recorder = std::make_shared<proxy_state>();
  std::shared_ptr<std::vector<told>> news = std::make_shared<std::vector<told>>();
  caf::actor_clock::time_point t0;

  elector_test() {
    k8s::sim::store_config cfg;
    cfg.start_unix_seconds = start_unix;
    auto s = k8s::sim::spawn_store(sys, cfg);
    EXPECT_TRUE(s) << (s ? "" : error_message(s.error()));
    store = *s;
    api = sys.spawn(proxy, caf::actor_cast<k8s::api_actor>(*s), recorder);
    k8s::request ns;
    ns.verb = verb::create;
    ns.ref = {"", "v1", "namespaces", "", "", ""};
    ns.body = R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"aiperf-system"}})";
    EXPECT_TRUE(request<response>(caf::actor_cast<k8s::api_actor>(store), ns));
    drain();
    t0 = now();
  }

  elector_actor replica(const std::string& name, std::uint64_t seed, bool settle = true) {
    election_config cfg;
    cfg.api = api;
    cfg.identity = name;
    cfg.start_unix_ns = start_unix * 1'000'000'000LL;
    cfg.seed = seed;
    cfg.user = k8s::admin_user();
    cfg.user.username = name;
    cfg.listener = sys.spawn(listener, name, news);
    auto e = spawn_leader_elector(sys, cfg);
    if (settle)
      drain();
    return e;
  }

  // Simulated time in small steps, so timers set by fired timers fire too.
  void run_for(caf::timespan d) {
    for (caf::timespan done{0}; done < d; done += 100ms)
      advance_time(100ms);
  }

  json lease() {
    k8s::request r;
    r.ref = {"coordination.k8s.io", "v1", "leases", "aiperf-system", "aiperf-operator-leader", ""};
    auto res = request<response>(caf::actor_cast<k8s::api_actor>(store), r);
    return res ? json::parse(res->body) : json();
  }

  std::vector<const seen*> of(const std::string& user, verb v) const {
    std::vector<const seen*> out;
    for (const auto& s : recorder->log)
      if (s.user == user && s.v == v)
        out.push_back(&s);
    return out;
  }
};

TEST_F(elector_test, the_first_replica_creates_the_lease_and_renews_with_one_put_per_period) {
  auto a = replica("op-a", 1);
  ASSERT_EQ(news->size(), 1u);
  EXPECT_TRUE(news->at(0).leading);
  auto l = lease();
  EXPECT_EQ(l["spec"]["holderIdentity"], "op-a");
  EXPECT_EQ(l["spec"]["leaseDurationSeconds"], 15);
  EXPECT_EQ(l["spec"]["leaseTransitions"], 0);
  EXPECT_EQ(l["spec"]["renewTime"], k8s::format_micro_time(start_unix * 1'000'000'000LL));
  EXPECT_EQ(of("op-a", verb::create).size(), 1u);

  recorder->log.clear();
  run_for(20s);
  auto puts = of("op-a", verb::update);
  EXPECT_EQ(puts.size(), 10u); // every 2 s
  EXPECT_TRUE(of("op-a", verb::get).empty()) << "a leader renews without reading";
  // Each PUT carries the resourceVersion the previous write answered.
  for (std::size_t i = 1; i < puts.size(); ++i)
    EXPECT_NE(puts[i]->body["metadata"]["resourceVersion"],
              puts[i - 1]->body["metadata"]["resourceVersion"]);
  EXPECT_EQ(lease()["spec"]["acquireTime"], l["spec"]["acquireTime"]);
  EXPECT_EQ(lease()["spec"]["leaseTransitions"], 0);
  EXPECT_EQ(news->size(), 1u);
  (void)a;
}

TEST_F(elector_test, a_standby_only_reads_with_jitter_while_the_leader_renews) {
  auto a = replica("op-a", 1);
  auto b = replica("op-b", 2);
  run_for(60s);
  EXPECT_TRUE(of("op-b", verb::update).empty());
  EXPECT_TRUE(of("op-b", verb::create).empty());
  auto gets = of("op-b", verb::get);
  ASSERT_GE(gets.size(), 60u / 5);
  bool jittered = false;
  for (std::size_t i = 1; i < gets.size(); ++i) {
    auto gap = gets[i]->at - gets[i - 1]->at;
    EXPECT_GE(gap, 2s);
    EXPECT_LT(gap, 4400ms + 100ms); // U[1, 2.2) × 2 s, on a 100 ms grid
    jittered = jittered || gap != gets[1]->at - gets[0]->at;
  }
  EXPECT_TRUE(jittered);
  ASSERT_EQ(news->size(), 1u);
  EXPECT_EQ(news->at(0).who, "op-a");
  (void)a;
  (void)b;
}

TEST_F(elector_test, a_standby_takes_over_a_lease_unrenewed_for_its_duration) {
  auto a = replica("op-a", 1);
  auto b = replica("op-b", 2);
  run_for(10s);
  auto before = lease();
  // op-a dies without releasing: its renewals stop.
  caf::anon_send_exit(a, caf::exit_reason::kill);
  drain();
  auto died = now();
  run_for(30s);
  ASSERT_EQ(news->size(), 3u);
  // The dead elector's listener was told it no longer leads.
  EXPECT_EQ(news->at(1).who, "op-a");
  EXPECT_FALSE(news->at(1).leading);
  EXPECT_EQ(news->at(1).at, died);
  EXPECT_EQ(news->at(2).who, "op-b");
  EXPECT_TRUE(news->at(2).leading);
  // Not before the record had stood still for 15 s of op-b's clock.
  EXPECT_GE(news->at(2).at, died + 15s);
  EXPECT_LT(news->at(2).at, died + 15s + 4500ms);
  auto after = lease();
  EXPECT_EQ(after["spec"]["holderIdentity"], "op-b");
  EXPECT_EQ(after["spec"]["leaseTransitions"], 1);
  EXPECT_NE(after["spec"]["acquireTime"], before["spec"]["acquireTime"]);
  // The takeover was fenced on the resourceVersion op-b read.
  auto takeover = of("op-b", verb::update).front();
  EXPECT_EQ(takeover->body["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"]);
}

TEST_F(elector_test, a_released_lease_is_taken_over_at_the_next_poll) {
  auto a = replica("op-a", 1);
  auto b = replica("op-b", 2);
  run_for(6s);
  auto released = request<bool>(a, release_atom::value);
  ASSERT_TRUE(released);
  EXPECT_TRUE(*released);
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "");
  auto at = now();
  run_for(5s);
  ASSERT_EQ(news->size(), 2u);
  EXPECT_EQ(news->at(1).who, "op-b");
  EXPECT_LT(news->at(1).at, at + 4500ms);
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "op-b");
  EXPECT_EQ(lease()["spec"]["leaseTransitions"], 1);
  // The listener of a replica that released is not told: it asked.
  EXPECT_TRUE(news->at(0).leading);
}

TEST_F(elector_test, a_leader_that_cannot_renew_steps_down_before_the_lease_expires) {
  auto a = replica("op-a", 1);
  auto b = replica("op-b", 2);
  run_for(4s);
  auto last_renewal = of("op-a", verb::update).back()->at;
  recorder->refused.insert("op-a");
  run_for(12s);
  ASSERT_GE(news->size(), 2u);
  EXPECT_EQ(news->at(1).who, "op-a");
  EXPECT_FALSE(news->at(1).leading);
  EXPECT_EQ(news->at(1).at, last_renewal + 10s);
  // The others may take the Lease only 15 s after that renewal: never while
  // op-a still believes it leads.
  auto stepped_down = news->at(1).at;
  recorder->log.clear();
  run_for(20s);
  EXPECT_TRUE(of("op-a", verb::update).empty()) << "nothing written after stepping down";
  EXPECT_TRUE(of("op-a", verb::get).empty());
  ASSERT_EQ(news->size(), 3u);
  EXPECT_EQ(news->at(2).who, "op-b");
  EXPECT_GE(news->at(2).at, last_renewal + 15s);
  EXPECT_GT(news->at(2).at, stepped_down);
}

TEST_F(elector_test, a_leader_whose_api_server_hangs_steps_down_on_time) {
  auto a = replica("op-a", 1);
  run_for(3s);
  auto last_renewal = of("op-a", verb::update).back()->at;
  recorder->swallowed.insert("op-a");
  run_for(12s);
  ASSERT_EQ(news->size(), 2u);
  EXPECT_FALSE(news->at(1).leading);
  EXPECT_EQ(news->at(1).at, last_renewal + 10s);
}

TEST_F(elector_test, a_leader_seeing_another_holder_steps_down_at_once) {
  auto a = replica("op-a", 1);
  run_for(3s);
  // Someone else wrote the Lease (a partitioned peer that came back, or an
  // admin): op-a's optimistic PUT fails with 409, its read shows the holder.
  auto l = lease();
  l["spec"]["holderIdentity"] = "op-z";
  k8s::request put;
  put.verb = verb::update;
  put.ref = {"coordination.k8s.io", "v1", "leases", "aiperf-system", "aiperf-operator-leader", ""};
  put.body = l.dump();
  ASSERT_TRUE(request<response>(caf::actor_cast<k8s::api_actor>(store), put));
  auto written = now();
  run_for(3s);
  ASSERT_EQ(news->size(), 2u);
  EXPECT_FALSE(news->at(1).leading);
  EXPECT_LE(news->at(1).at, written + 2s);
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "op-z");
}

// A gate over a do-nothing reconciler whose end is recorded.
struct gated {
  int started = 0;
  int lost = 0;
  caf::actor reconciler;
  std::optional<caf::error> reconciler_end;
  leadership_listener gate;
  elector_actor elector;
};

std::shared_ptr<gated> gated_replica(elector_test& t, const std::string& name) {
  auto g = std::make_shared<gated>();
  g->gate = spawn_leadership_gate(
      t.sys,
      [&t, g] {
        ++g->started;
        g->reconciler
            = t.sys.spawn([](caf::event_based_actor*) -> caf::behavior { return {[](int) {}}; });
        g->reconciler->attach_functor([g](const caf::error& e) { g->reconciler_end = e; });
        return g->reconciler;
      },
      [g] { ++g->lost; });
  election_config cfg;
  cfg.api = t.api;
  cfg.identity = name;
  cfg.start_unix_ns = start_unix * 1'000'000'000LL;
  cfg.seed = 1;
  cfg.user.username = name;
  cfg.listener = g->gate;
  g->elector = spawn_leader_elector(t.sys, cfg);
  t.drain();
  return g;
}

TEST_F(elector_test, the_gate_runs_the_reconciler_only_while_leading) {
  std::optional<caf::actor_clock::time_point> killed_at;
  auto g = gated_replica(*this, "op-a");
  ASSERT_EQ(g->started, 1);
  g->reconciler->attach_functor([&](const caf::error&) { killed_at = now(); });
  run_for(4s);
  auto last_renewal = of("op-a", verb::update).back()->at;
  recorder->refused.insert("op-a");
  run_for(12s);
  // Killed when the elector stepped down, before the lease (15 s) expired.
  ASSERT_TRUE(killed_at);
  EXPECT_EQ(*killed_at, last_renewal + 10s);
  EXPECT_EQ(g->lost, 1);
  EXPECT_EQ(g->started, 1);
}

TEST_F(elector_test, the_gate_fails_closed_when_its_reconciler_dies) {
  auto g = gated_replica(*this, "op-a");
  ASSERT_EQ(g->started, 1);
  caf::anon_send_exit(g->reconciler, caf::exit_reason::unhandled_exception);
  drain();
  EXPECT_EQ(g->lost, 1);
}

TEST_F(elector_test, the_gate_fails_closed_when_its_elector_dies) {
  auto g = gated_replica(*this, "op-a");
  ASSERT_EQ(g->started, 1);
  caf::anon_send_exit(g->elector, caf::exit_reason::kill);
  drain();
  EXPECT_EQ(g->lost, 1);
  EXPECT_TRUE(g->reconciler_end) << "no reconciler runs without a renewing elector";
}

TEST_F(elector_test, a_gate_shut_down_ends_the_reconciler_but_the_elector_still_releases) {
  auto g = gated_replica(*this, "op-a");
  caf::anon_send_exit(g->gate, caf::exit_reason::user_shutdown);
  drain();
  EXPECT_TRUE(g->reconciler_end);
  EXPECT_EQ(g->lost, 0);
  auto released = request<bool>(g->elector, release_atom::value);
  ASSERT_TRUE(released);
  EXPECT_TRUE(*released);
  EXPECT_EQ(lease()["spec"]["holderIdentity"], "");
}

TEST_F(elector_test, of_three_replicas_starting_together_exactly_one_leads) {
  auto a = replica("op-a", 1, false);
  auto b = replica("op-b", 2, false);
  auto c = replica("op-c", 3, false);
  drain();
  run_for(60s);
  ASSERT_EQ(news->size(), 1u);
  EXPECT_TRUE(news->at(0).leading);
  EXPECT_EQ(lease()["spec"]["holderIdentity"], news->at(0).who);
  // All three found no Lease and tried to create it; the API let one win.
  EXPECT_EQ(of("op-a", verb::create).size() + of("op-b", verb::create).size()
                + of("op-c", verb::create).size(),
            3u);
  for (std::string who : {"op-a", "op-b", "op-c"}) {
    if (who != news->at(0).who) {
      EXPECT_TRUE(of(who, verb::update).empty()) << who;
    }
  }
  (void)a;
  (void)b;
  (void)c;
}

} // namespace
} // namespace aiperf::op
