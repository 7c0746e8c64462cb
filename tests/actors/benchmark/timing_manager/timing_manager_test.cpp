#include "actors/benchmark/timing_manager/timing_manager.hpp"

#include "actors/benchmark/timing/intervals.hpp"
#include "tests/support/caf_gtest.hpp"

#include <algorithm>
#include <cmath>
#include <map>
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

timing_config constant_rate(double rate, std::uint64_t requests,
                            std::uint32_t concurrency = 0) {
  timing_config cfg;
  cfg.mode = timing_mode::request_rate;
  cfg.request_rate = rate;
  cfg.pattern = arrival_pattern::constant;
  cfg.concurrency = concurrency;
  cfg.request_count = requests;
  cfg.sessions.push_back(session_plan{});
  return cfg;
}

timing_config user_centric(std::uint32_t users, double qps,
                           std::uint32_t turns, std::uint64_t requests) {
  timing_config cfg;
  cfg.mode = timing_mode::user_centric;
  cfg.num_users = users;
  cfg.user_centric_rate = qps;
  cfg.concurrency = 0;
  cfg.request_count = requests;
  for (int i = 0; i < 5; ++i)
    cfg.sessions.push_back(session_plan{turns, -1, {}});
  return cfg;
}

constexpr std::int64_t ms = 1'000'000;
constexpr std::int64_t sec = 1'000'000'000;

struct timing_fixture : caf_gtest::fixture<> {
  std::shared_ptr<worker_log> log = std::make_shared<worker_log>();
  std::vector<credit_sink_actor> workers;
  timing_manager_actor tm;
  std::set<std::uint64_t> returned;
  std::optional<std::vector<phase_stats>> results;
  std::optional<caf::response_handle<caf::blocking_actor,
                                     caf::message, true>>
    start_handle;

  caf::expected<caf::ok_atom> try_configure(const timing_config& cfg,
                                            std::uint32_t num_workers = 2) {
    for (std::uint32_t i = 0; i < num_workers; ++i)
      workers.push_back(sys.spawn(fake_worker, i, log));
    tm = timing_manager::spawn_timing_manager(sys);
    drain();
    return request<caf::ok_atom>(tm, configure_atom::value, cfg, workers);
  }

  void configure(timing_config cfg, std::uint32_t num_workers = 2) {
    auto ok = try_configure(cfg, num_workers);
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

  void return_all() {
    while (return_oldest()) {
    }
  }

  /// Steps simulated time by `step`, answering every credit at once after
  /// each step, until `start` replies (at most `max_steps` steps).
  void run_answering(caf::timespan step, int max_steps = 1000) {
    return_all();
    for (int i = 0; i < max_steps && !finished(); ++i) {
      advance_time(step);
      return_all();
    }
    ASSERT_TRUE(finished());
  }

  /// Every credit granted so far, in grant order.
  std::vector<credit> granted() {
    std::vector<credit> xs;
    for (auto& [w, c] : log->credits)
      xs.push_back(c);
    std::sort(xs.begin(), xs.end(),
              [](auto& a, auto& b) { return a.id < b.id; });
    return xs;
  }

  std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
             now().time_since_epoch())
      .count();
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
// granted ahead of time (lookahead), and the count matches.
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

// --request-count with --benchmark-duration: the count is reached first
// (5 requests answered at once, long before the 1 s duration) and ends the
// phase there, without waiting for the duration.
TEST_F(timing_fixture, request_count_reached_before_the_duration_ends_the_run) {
  auto cfg = closed_loop(2, 5);
  cfg.duration_ns = sec;
  cfg.grace_ns = 30 * sec;
  configure(cfg);
  auto t0 = now_ns();
  start();
  run_answering(1ms);
  EXPECT_EQ(log->credits.size(), 5u);
  EXPECT_EQ((*results)[0].sent, 5u);
  EXPECT_EQ((*results)[0].returned, 5u);
  EXPECT_FALSE((*results)[0].timed_out);
  EXPECT_LT(now_ns() - t0, 100 * ms) << "waited for the duration";
}

// The same pair the other way round: the duration ends first (2 in flight,
// each answered within the 1 ms step, 10 ms of sending) and the count of
// 1000 is never reached.
TEST_F(timing_fixture, duration_reached_before_the_request_count_ends_the_run) {
  auto cfg = closed_loop(2, 1000);
  cfg.duration_ns = 10 * ms;
  cfg.grace_ns = 30 * sec;
  configure(cfg);
  auto t0 = now_ns();
  start();
  // Each step answers what is in flight at its start, once.
  for (int i = 0; i < 100 && !finished(); ++i) {
    advance_time(1ms);
    for (auto& c : outstanding())
      give_back(c, worker_of(c.id));
  }
  ASSERT_TRUE(finished());
  auto sent = (*results)[0].sent;
  EXPECT_GE(sent, 2u);
  EXPECT_LE(sent, 2u * 12);
  EXPECT_LT(sent, 1000u);
  EXPECT_EQ((*results)[0].returned, sent);
  EXPECT_FALSE((*results)[0].timed_out);
  EXPECT_GE(now_ns() - t0, 10 * ms);
  EXPECT_LT(now_ns() - t0, 20 * ms);
}

// Both orders in rate mode. 5 requests at 100/s end at the 5th send
// (~40 ms), before a 1 s duration.
TEST_F(timing_fixture, rate_mode_count_reached_before_the_duration) {
  auto cfg = constant_rate(100, 5);
  cfg.duration_ns = sec;
  cfg.grace_ns = 30 * sec;
  configure(cfg);
  auto t0 = now_ns();
  start();
  run_answering(1ms);
  EXPECT_EQ((*results)[0].sent, 5u);
  EXPECT_LT(now_ns() - t0, 100 * ms);
}

// 1000 requests at 1000/s stop at a 10 ms duration, after about 10 sends.
TEST_F(timing_fixture, rate_mode_duration_reached_before_the_count) {
  auto cfg = constant_rate(1000, 1000);
  cfg.duration_ns = 10 * ms;
  cfg.grace_ns = 30 * sec;
  configure(cfg);
  start();
  run_answering(1ms);
  auto sent = (*results)[0].sent;
  EXPECT_GE(sent, 9u);
  EXPECT_LE(sent, 11u);
}

// The grace period follows the duration even when the count stopped the
// sending first: 2 requests sent at t=0 and never answered are cancelled at
// duration + grace (15 ms), not at grace after the count was reached (5 ms).
TEST_F(timing_fixture, grace_after_an_early_count_still_runs_from_the_duration) {
  auto cfg = closed_loop(2, 2);
  cfg.duration_ns = 10 * ms;
  cfg.grace_ns = 5 * ms;
  configure(cfg);
  start();
  EXPECT_EQ(outstanding().size(), 2u);
  advance_time(7ms);
  EXPECT_TRUE(log->cancels.empty()) << "cancelled before the duration ended";
  advance_time(7ms); // 14 ms
  EXPECT_TRUE(log->cancels.empty()) << "cancelled before duration + grace";
  advance_time(2ms); // 16 ms
  EXPECT_FALSE(log->cancels.empty());
  while (return_oldest(credit_outcome::cancelled)) {
  }
  advance_time(1ms);
  ASSERT_TRUE(finished());
  EXPECT_TRUE((*results)[0].timed_out);
  EXPECT_EQ((*results)[0].cancelled, 2u);
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

// Verifies the request-rate schedule is timing::interval_generator's: the
// due times are the phase start plus the generator's gaps (same seed, same
// accumulation), with nothing skipped when ticks keep up.
TEST_F(timing_fixture, poisson_due_times_replay_the_interval_generator) {
  timing_config cfg;
  cfg.mode = timing_mode::request_rate;
  cfg.request_rate = 2000;
  cfg.pattern = arrival_pattern::poisson;
  cfg.random_seed = 42;
  cfg.concurrency = 0;
  cfg.request_count = 200;
  cfg.sessions.push_back(session_plan{});
  configure(cfg);
  start();
  run_answering(1ms);
  auto xs = granted();
  ASSERT_EQ(xs.size(), 200u);
  timing::interval_generator gen{timing_manager::interval_options_of(cfg)};
  auto target = static_cast<double>((*results)[0].start_ns);
  for (auto& c : xs) {
    EXPECT_EQ(c.due_ns, static_cast<std::int64_t>(std::ceil(target)))
        << "credit " << c.id;
    EXPECT_LE(c.issued_at_ns, c.due_ns) << "granted late";
    target += gen.next_gap_ns();
  }
  EXPECT_EQ((*results)[0].skipped_sends, 0u);
}

// Verifies the bounded catch-up: after an 8 ms stall (inside the 10 ms
// window) the missed targets go out at once but keep their due times, so the
// lag is visible (grant time − due) and nothing is skipped.
TEST_F(timing_fixture, late_sends_within_catch_up_window_keep_due_times) {
  configure(constant_rate(1000, 30));
  start();
  const auto t0 = now_ns();
  ASSERT_EQ(log->credits.size(), 6u); // targets 0..5 ms (lookahead 5 ms)
  advance_time(8ms);                  // the 1 ms tick fires 7 ms late
  run_answering(1ms);
  auto xs = granted();
  ASSERT_EQ(xs.size(), 30u);
  for (std::size_t i = 0; i < xs.size(); ++i)
    EXPECT_EQ(xs[i].due_ns, t0 + static_cast<std::int64_t>(i) * ms);
  EXPECT_EQ(xs[6].issued_at_ns - xs[6].due_ns, 2 * ms); // lag recorded
  EXPECT_EQ(xs[8].issued_at_ns, xs[8].due_ns);
  EXPECT_EQ((*results)[0].skipped_sends, 0u);
}

// Verifies the reset: a stall far past the catch-up window sends one credit
// due now, counts the other missed targets as skipped (no burst), and
// restarts the schedule from now.
TEST_F(timing_fixture, stall_past_catch_up_window_resets_and_counts_skips) {
  configure(constant_rate(1000, 20));
  start();
  const auto t0 = now_ns();
  ASSERT_EQ(log->credits.size(), 6u); // targets 0..5 ms
  advance_time(100ms);
  auto xs = granted();
  // The reset send plus the new targets 101..105 ms within the lookahead.
  ASSERT_EQ(xs.size(), 12u);
  EXPECT_EQ(xs[6].due_ns, t0 + 100 * ms);
  EXPECT_EQ(xs[6].issued_at_ns, xs[6].due_ns);
  run_answering(1ms);
  xs = granted();
  ASSERT_EQ(xs.size(), 20u);
  for (std::size_t i = 7; i < xs.size(); ++i)
    EXPECT_EQ(xs[i].due_ns - xs[i - 1].due_ns, ms) << "credit " << i;
  // Targets 6..100 ms passed: one sent, 94 skipped.
  EXPECT_EQ((*results)[0].skipped_sends, 94u);
  EXPECT_EQ((*results)[0].sent, 20u);
}

// Verifies a rate tick that finds no free session slot once due is skipped
// and counted, and the schedule goes on from the next target.
TEST_F(timing_fixture, rate_tick_without_free_slot_is_skipped) {
  configure(constant_rate(1000, 3, 1)); // one session slot
  start();
  const auto t0 = now_ns();
  ASSERT_EQ(log->credits.size(), 1u); // the 1 ms target waits for a slot
  advance_time(1ms);                  // 1 ms target due, no slot: skipped
  advance_time(1ms);                  // 2 ms target: skipped
  EXPECT_EQ(log->credits.size(), 1u);
  return_all(); // the slot frees before the 3 ms target
  run_answering(1ms);
  auto xs = granted();
  ASSERT_EQ(xs.size(), 3u);
  EXPECT_EQ(xs[0].due_ns, t0);
  EXPECT_EQ(xs[1].due_ns, t0 + 3 * ms);
  EXPECT_EQ(xs[2].due_ns, t0 + 4 * ms);
  EXPECT_EQ((*results)[0].skipped_sends, 2u);
}

// Verifies user-centric timing (timing::user_centric_schedule): users start
// turn_gap/num_users apart, turns of a user are turn_gap apart, the first
// sessions join mid-way (4, 3, 2, 1 turns left), a finished user is replaced
// by a fresh full session at its next due time, and the aggregate is
// exactly qps.
TEST_F(timing_fixture, user_centric_staggers_users_and_spaces_turns) {
  // 4 users at 2 req/s: turn gap 2 s, users 0.5 s apart.
  configure(user_centric(4, 2.0, 4, 16));
  start();
  const auto t0 = now_ns();
  ASSERT_EQ(log->credits.size(), 1u); // only user 0 is due at once
  run_answering(100ms, 200);
  auto xs = granted();
  ASSERT_EQ(xs.size(), 16u);
  std::map<std::uint32_t, std::vector<credit>> by_session;
  for (auto& c : xs)
    by_session[c.session_num].push_back(c);
  const std::vector<std::uint32_t> initial_turns{4, 3, 2, 1};
  for (std::uint32_t u = 0; u < 4; ++u) {
    ASSERT_FALSE(by_session[u].empty());
    EXPECT_EQ(by_session[u][0].due_ns, t0 + u * sec / 2) << "user " << u;
    EXPECT_EQ(by_session[u][0].num_turns, initial_turns[u]) << "user " << u;
  }
  for (auto& [num, turns] : by_session) {
    EXPECT_EQ(turns[0].conversation, num % 5);
    for (std::size_t i = 0; i < turns.size(); ++i)
      EXPECT_EQ(turns[i].turn_index, i);
    for (std::size_t i = 1; i < turns.size(); ++i)
      EXPECT_EQ(turns[i].due_ns - turns[i - 1].due_ns, 2 * sec)
          << "session " << num;
  }
  // User 3's one-turn session (due 1.5 s) is followed by a fresh user.
  ASSERT_EQ(by_session[4].size(), 3u); // 3.5, 5.5, 7.5 s (budget ends)
  EXPECT_EQ(by_session[4][0].due_ns, t0 + 3 * sec + sec / 2);
  EXPECT_EQ(by_session[4][0].num_turns, 4u);
  std::vector<std::int64_t> dues;
  for (auto& c : xs)
    dues.push_back(c.due_ns);
  std::sort(dues.begin(), dues.end());
  for (std::size_t i = 0; i < dues.size(); ++i)
    EXPECT_EQ(dues[i], t0 + static_cast<std::int64_t>(i) * sec / 2);
  EXPECT_EQ((*results)[0].sent, 16u);
}

// Verifies a user-centric turn whose predecessor came back after its planned
// time goes out at the return, and the user's schedule is rebased there (no
// burst of catch-up turns).
TEST_F(timing_fixture, user_centric_late_return_rebases_the_user) {
  configure(user_centric(1, 1.0, 3, 3)); // turn gap 1 s
  start();
  const auto t0 = now_ns();
  ASSERT_EQ(log->credits.size(), 1u);
  for (int i = 0; i < 35; ++i)
    advance_time(100ms); // 3.5 s without an answer
  EXPECT_EQ(log->credits.size(), 1u);
  run_answering(100ms, 100);
  auto xs = granted();
  ASSERT_EQ(xs.size(), 3u);
  EXPECT_EQ(xs[0].due_ns, t0);
  EXPECT_EQ(xs[1].due_ns, t0 + 3 * sec + sec / 2);
  EXPECT_EQ(xs[2].due_ns, t0 + 4 * sec + sec / 2);
}

// Verifies trace replay seeds sessions in offset order, each with its own
// conversation, and that a session due while every slot is busy waits for
// a slot (as AIPerf does) instead of being skipped; it keeps its trace time
// as due time, so its lateness shows as send lag.
TEST_F(timing_fixture, fixed_schedule_replays_offsets_in_order) {
  timing_config cfg;
  cfg.mode = timing_mode::fixed_schedule;
  cfg.concurrency = 1;
  cfg.sessions = {session_plan{1, 30 * ms, {}}, session_plan{1, 0, {}},
                  session_plan{1, 1 * ms, {}}};
  configure(cfg);
  start();
  const auto t0 = now_ns();
  ASSERT_EQ(log->credits.size(), 1u);
  advance_time(2ms); // conversation 2 is due, but the slot is taken
  EXPECT_EQ(log->credits.size(), 1u) << "sent without a free slot";
  run_answering(1ms, 100);
  auto xs = granted();
  ASSERT_EQ(xs.size(), 3u);
  EXPECT_EQ(xs[0].conversation, 1u);
  EXPECT_EQ(xs[0].due_ns, t0);
  EXPECT_EQ(xs[1].conversation, 2u);
  EXPECT_EQ(xs[1].due_ns, t0 + 1 * ms);
  EXPECT_GT(xs[1].issued_at_ns, xs[1].due_ns) << "waited for the slot";
  EXPECT_EQ(xs[2].conversation, 0u);
  EXPECT_EQ(xs[2].due_ns, t0 + 30 * ms);
  EXPECT_EQ((*results)[0].skipped_sends, 0u);
  EXPECT_EQ((*results)[0].sessions_started, 3u);
}

// Verifies configure rejects schedule settings the timing component would
// reject, naming the option to fix.
TEST_F(timing_fixture, configure_rejects_bad_rate) {
  auto res = try_configure(constant_rate(0, 10));
  ASSERT_FALSE(res);
  EXPECT_NE(sys.render(res.error()).find("--request-rate"), std::string::npos)
      << sys.render(res.error());
}

TEST_F(timing_fixture, configure_rejects_bad_user_centric_settings) {
  auto res = try_configure(user_centric(0, 1.0, 3, 10));
  ASSERT_FALSE(res);
  EXPECT_NE(sys.render(res.error()).find("--num-users"), std::string::npos)
      << sys.render(res.error());
}
