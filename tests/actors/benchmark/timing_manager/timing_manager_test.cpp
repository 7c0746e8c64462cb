#include "actors/benchmark/timing_manager/timing_manager.hpp"

#include "tests/support/caf_gtest.hpp"

#include <map>
#include <numeric>
#include <set>

using namespace aiperf;
using namespace aiperf::proto;
using namespace std::chrono_literals;

namespace {

/// What the fake workers saw, shared with the test body.
struct worker_log {
  std::vector<std::pair<std::uint32_t, credit>> credits; // (worker, credit)
  std::vector<std::uint32_t> cancels;                    // worker indexes
};

credit_sink_actor::behavior_type
fake_worker(credit_sink_actor::pointer, std::uint32_t index,
            std::shared_ptr<worker_log> log) {
  return {
    [=](credit_batch& batch) {
      for (auto& c : batch)
        log->credits.emplace_back(index, c);
    },
    [=](cancel_atom, std::vector<std::uint64_t>&) {
      log->cancels.push_back(index);
    },
  };
}

timing_config closed_loop(std::uint32_t concurrency, std::uint64_t requests,
                          std::uint32_t turns = 1) {
  timing_config cfg;
  cfg.mode = timing_mode::concurrency;
  cfg.concurrency = concurrency;
  cfg.request_count = requests;
  for (int i = 0; i < 5; ++i)
    cfg.sessions.push_back(session_plan{turns, -1, {}});
  return cfg;
}

struct timing_fixture : caf_gtest::fixture<> {
  std::shared_ptr<worker_log> log = std::make_shared<worker_log>();
  std::vector<credit_sink_actor> workers;
  timing_manager_actor tm;
  std::set<std::uint64_t> returned;
  std::optional<std::vector<phase_stats>> results;
  std::optional<caf::response_handle<caf::blocking_actor,
                                     caf::message, true>>
    start_handle;

  void configure(timing_config cfg, std::uint32_t num_workers = 2) {
    for (std::uint32_t i = 0; i < num_workers; ++i)
      workers.push_back(sys.spawn(fake_worker, i, log));
    tm = timing_manager::spawn_timing_manager(sys);
    drain();
    auto ok = request<caf::ok_atom>(tm, configure_atom::value, cfg, workers);
    ASSERT_TRUE(ok) << sys.render(ok.error());
  }

  void start() {
    self->send(tm, start_atom::value);
    drain();
  }

  /// Collects the reply to `start` if it arrived.
  bool finished() {
    if (results)
      return true;
    receive_now([&](std::vector<phase_stats>& xs) { results = xs; });
    return results.has_value();
  }

  std::vector<credit> outstanding() {
    std::vector<credit> xs;
    for (auto& [w, c] : log->credits)
      if (returned.count(c.id) == 0)
        xs.push_back(c);
    return xs;
  }

  void give_back(const credit& c, std::uint32_t worker,
                 credit_outcome outcome = credit_outcome::ok) {
    returned.insert(c.id);
    self->send(tm, credit_return_batch{{c.id, worker, outcome, false}});
    drain();
  }

  std::uint32_t worker_of(std::uint64_t id) {
    for (auto& [w, c] : log->credits)
      if (c.id == id)
        return w;
    return ~0u;
  }

  /// Returns the oldest outstanding credit; returns false if none.
  bool return_oldest(credit_outcome outcome = credit_outcome::ok) {
    auto xs = outstanding();
    if (xs.empty())
      return false;
    give_back(xs.front(), worker_of(xs.front().id), outcome);
    return true;
  }
};

} // namespace

// Verifies the closed loop keeps exactly `concurrency` sessions in flight
// (reached, never exceeded) and that credits sent == returned == requests.
TEST_F(timing_fixture, concurrency_is_reached_and_never_exceeded) {
  configure(closed_loop(4, 20));
  self->send(tm, start_atom::value);
  drain();
  std::size_t max_seen = 0;
  while (!finished()) {
    auto n = outstanding().size();
    max_seen = std::max(max_seen, n);
    ASSERT_LE(n, 4u);
    ASSERT_TRUE(return_oldest());
  }
  EXPECT_EQ(max_seen, 4u);
  EXPECT_EQ(log->credits.size(), 20u);
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0].sent, 20u);
  EXPECT_EQ((*results)[0].returned, 20u);
  EXPECT_EQ((*results)[0].phase, phase::profiling);
}

// Verifies sticky routing: every turn of a session goes to the worker of
// its first turn, turns arrive in order, and first turns are balanced.
TEST_F(timing_fixture, sessions_are_sticky_and_turns_sequential) {
  configure(closed_loop(3, 18, 3), 3);
  start();
  while (!finished())
    ASSERT_TRUE(return_oldest());
  std::map<std::uint32_t, std::uint32_t> worker_of_session;
  std::map<std::uint32_t, std::uint32_t> next_turn;
  std::map<std::uint32_t, int> first_turns_per_worker;
  for (auto& [w, c] : log->credits) {
    auto [it, fresh] = worker_of_session.emplace(c.session_num, w);
    EXPECT_EQ(it->second, w) << "session " << c.session_num << " moved";
    EXPECT_EQ(c.turn_index, next_turn[c.session_num]++);
    EXPECT_EQ(c.num_turns, 3u);
    if (c.turn_index == 0)
      ++first_turns_per_worker[w];
  }
  EXPECT_EQ(worker_of_session.size(), 6u); // 18 requests / 3 turns
  for (auto& [w, n] : first_turns_per_worker)
    EXPECT_EQ(n, 2) << "worker " << w;
}

// Verifies warmup credits come first, are marked warmup, and are reported
// as their own phase.
TEST_F(timing_fixture, warmup_runs_first_and_is_its_own_phase) {
  auto cfg = closed_loop(2, 5);
  cfg.warmup_request_count = 3;
  configure(cfg);
  start();
  while (!finished())
    ASSERT_TRUE(return_oldest());
  ASSERT_EQ(log->credits.size(), 8u);
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_EQ(log->credits[i].second.phase, phase::warmup);
  for (std::size_t i = 3; i < 8; ++i)
    EXPECT_EQ(log->credits[i].second.phase, phase::profiling);
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].phase, phase::warmup);
  EXPECT_EQ((*results)[0].sent, 3u);
  EXPECT_EQ((*results)[1].sent, 5u);
}

// Verifies constant-rate credits carry due times exactly 1/rate apart, are
// issued ahead of time (lookahead), and the count matches.
TEST_F(timing_fixture, constant_rate_due_times_are_exact) {
  timing_config cfg;
  cfg.mode = timing_mode::request_rate;
  cfg.request_rate = 1000; // 1 ms apart
  cfg.pattern = arrival_pattern::constant;
  cfg.concurrency = 0;
  cfg.request_count = 40;
  cfg.sessions.push_back(session_plan{});
  configure(cfg);
  start();
  for (int i = 0; i < 100 && !finished(); ++i) {
    advance_time(1ms);
    while (return_oldest()) {
    }
  }
  ASSERT_TRUE(finished());
  ASSERT_EQ(log->credits.size(), 40u);
  std::vector<credit> xs;
  for (auto& [w, c] : log->credits)
    xs.push_back(c);
  std::sort(xs.begin(), xs.end(),
            [](auto& a, auto& b) { return a.id < b.id; });
  for (std::size_t i = 1; i < xs.size(); ++i) {
    auto& prev = xs[i - 1];
    auto& cur = xs[i];
    EXPECT_EQ(cur.due_ns - prev.due_ns, 1'000'000);
    EXPECT_LE(cur.issued_at_ns, cur.due_ns);
    EXPECT_LE(cur.due_ns - cur.issued_at_ns, cfg.lookahead_ns);
  }
  EXPECT_EQ((*results)[0].skipped_sends, 0u);
}

// Verifies Poisson gaps: mean 1/rate and coefficient of variation 1.
TEST(gap_source, poisson_gap_statistics) {
  timing_config cfg;
  cfg.request_rate = 2000;
  cfg.pattern = arrival_pattern::poisson;
  cfg.random_seed = 42;
  auto gap = timing_manager::make_gap_source(cfg);
  std::vector<double> xs(100'000);
  for (auto& x : xs)
    x = static_cast<double>(gap());
  auto mean = std::accumulate(xs.begin(), xs.end(), 0.0) / xs.size();
  double var = 0;
  for (auto x : xs)
    var += (x - mean) * (x - mean);
  auto cv = std::sqrt(var / xs.size()) / mean;
  EXPECT_NEAR(mean, 500'000, 500'000 * 0.02);
  EXPECT_NEAR(cv, 1.0, 0.02);
}

// Verifies gamma gaps: mean 1/rate, CV 1/sqrt(smoothness).
TEST(gap_source, gamma_gap_statistics) {
  timing_config cfg;
  cfg.request_rate = 100;
  cfg.pattern = arrival_pattern::gamma;
  cfg.smoothness = 4;
  cfg.random_seed = 7;
  auto gap = timing_manager::make_gap_source(cfg);
  std::vector<double> xs(100'000);
  for (auto& x : xs)
    x = static_cast<double>(gap());
  auto mean = std::accumulate(xs.begin(), xs.end(), 0.0) / xs.size();
  double var = 0;
  for (auto x : xs)
    var += (x - mean) * (x - mean);
  EXPECT_NEAR(mean, 1e7, 1e7 * 0.02);
  EXPECT_NEAR(std::sqrt(var / xs.size()) / mean, 0.5, 0.02);
}

// Verifies the same seed gives the same gaps (reproducible schedules).
TEST(gap_source, seeded_and_reproducible) {
  timing_config cfg;
  cfg.request_rate = 10;
  cfg.random_seed = 3;
  auto a = timing_manager::make_gap_source(cfg);
  auto b = timing_manager::make_gap_source(cfg);
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(a(), b());
}

// Verifies the duration bound, then the grace period, then cancellation of
// what is still in flight; the phase reports it timed out.
TEST_F(timing_fixture, cancellation_after_grace_period) {
  auto cfg = closed_loop(2, 0);
  cfg.duration_ns = 10'000'000;
  cfg.grace_ns = 5'000'000;
  configure(cfg);
  start();
  EXPECT_EQ(outstanding().size(), 2u);
  advance_time(9ms);
  EXPECT_TRUE(log->cancels.empty());
  advance_time(2ms); // duration over: no new credits
  advance_time(3ms);
  EXPECT_TRUE(log->cancels.empty()) << "cancelled before the grace period";
  advance_time(3ms); // grace over
  EXPECT_FALSE(log->cancels.empty());
  while (return_oldest(credit_outcome::cancelled)) {
  }
  advance_time(1ms);
  ASSERT_TRUE(finished());
  EXPECT_EQ(log->credits.size(), 2u);
  EXPECT_TRUE((*results)[0].timed_out);
  EXPECT_EQ((*results)[0].cancelled, 2u);
  EXPECT_EQ((*results)[0].sent, (*results)[0].cancelled);
}

// Verifies a user cancel stops issuing, cancels in flight and reports it.
TEST_F(timing_fixture, cancel_stops_issuing_and_reports) {
  configure(closed_loop(3, 100));
  start();
  ASSERT_TRUE(return_oldest());
  self->send(tm, cancel_atom::value);
  drain();
  EXPECT_FALSE(log->cancels.empty());
  auto sent_before = log->credits.size();
  while (return_oldest(credit_outcome::cancelled)) {
  }
  ASSERT_TRUE(finished());
  EXPECT_EQ(log->credits.size(), sent_before);
  EXPECT_TRUE((*results)[0].was_cancelled);
  EXPECT_EQ((*results)[0].sent,
            (*results)[0].returned + (*results)[0].cancelled);
}

// Verifies a lost worker: its credits count as lost, its sessions end, the
// others carry on, and sent == returned + lost at the end.
TEST_F(timing_fixture, lost_worker_credits_are_written_off) {
  configure(closed_loop(4, 12), 2);
  start();
  auto lost = request<credit_batch>(tm, lost_atom::value, std::uint32_t{1});
  ASSERT_TRUE(lost);
  std::set<std::uint64_t> expected_lost;
  for (auto& [w, c] : log->credits)
    if (w == 1) {
      returned.insert(c.id); // the dead worker will never answer
      expected_lost.insert(c.id);
    }
  std::set<std::uint64_t> reported;
  for (auto& c : *lost)
    reported.insert(c.id);
  EXPECT_EQ(reported, expected_lost);
  while (!finished())
    ASSERT_TRUE(return_oldest());
  auto& s = (*results)[0];
  EXPECT_EQ(s.sent, 12u);
  EXPECT_EQ(s.lost, 2u);
  EXPECT_EQ(s.sent, s.returned + s.lost);
  for (std::size_t i = 4; i < log->credits.size(); ++i)
    EXPECT_EQ(log->credits[i].first, 0u) << "credit to a dead worker";
}
