// The timing_manager's configuration: everything it needs to grant credits,
// with no payloads (the dataset's shape only).
#pragma once

#include "proto/credits.hpp"

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <vector>

namespace aiperf::proto {

enum class timing_mode : std::uint8_t {
  concurrency = 0,    // closed loop: `concurrency` sessions in flight
  request_rate = 1,   // open loop: absolute schedule of first turns
  fixed_schedule = 2, // trace replay: first turns at their timestamps
  user_centric = 3,   // num_users users, each turn turn_gap apart
};

enum class arrival_pattern : std::uint8_t { constant = 0, poisson = 1, gamma = 2 };

[[nodiscard]] inline const char* to_string(timing_mode x) noexcept {
  switch (x) {
    case timing_mode::concurrency:
      return "concurrency";
    case timing_mode::request_rate:
      return "request_rate";
    case timing_mode::fixed_schedule:
      return "fixed_schedule";
    default:
      return "user_centric";
  }
}

[[nodiscard]] inline const char* to_string(arrival_pattern x) noexcept {
  switch (x) {
    case arrival_pattern::constant:
      return "constant";
    case arrival_pattern::poisson:
      return "poisson";
    default:
      return "gamma";
  }
}

/// The shape of one conversation: how many turns, when its first turn is
/// due (trace replay) and the think time before each later turn.
struct session_plan {
  std::uint32_t num_turns = 1;
  /// Offset of the first turn from the phase start; −1 = not scheduled.
  std::int64_t start_offset_ns = -1;
  /// Delay before turn i (index 0 unused); empty = no delays.
  std::vector<std::int64_t> turn_delay_ns;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, session_plan& x) {
  return f(caf::meta::type_name("aiperf::proto::session_plan"), x.num_turns,
           x.start_offset_ns, x.turn_delay_ns);
}

struct timing_config {
  timing_mode mode = timing_mode::concurrency;
  /// Session slots; 0 = unlimited (rate modes without --concurrency).
  std::uint32_t concurrency = 1;
  /// Requests waiting for their first token; 0 = no limit.
  std::uint32_t prefill_concurrency = 0;
  double request_rate = 0;
  arrival_pattern pattern = arrival_pattern::poisson;
  double smoothness = 1.0;
  std::uint64_t random_seed = 0;
  std::uint64_t warmup_request_count = 0;
  /// Requests (turns) of the profiling phase; 0 = bounded by duration.
  std::uint64_t request_count = 0;
  /// Profiling phase duration; 0 = bounded by request_count.
  std::int64_t duration_ns = 0;
  /// After sending stops: how long to wait for in-flight requests before
  /// cancelling them; negative = wait forever.
  std::int64_t grace_ns = 30'000'000'000;
  std::uint32_t num_users = 0;
  double user_centric_rate = 0;
  std::uint32_t num_urls = 1;
  /// Credits are sent this far ahead of their due time, in batches; the
  /// worker's I/O thread sends at the due time.
  std::int64_t lookahead_ns = 5'000'000;
  /// A send at most this late goes out at once; later resets the schedule.
  std::int64_t catch_up_window_ns = 10'000'000;
  /// One entry per conversation of the dataset; sessions use them in order
  /// (cycling).
  std::vector<session_plan> sessions;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, timing_config& x) {
  return f(caf::meta::type_name("aiperf::proto::timing_config"), x.mode,
           x.concurrency, x.prefill_concurrency, x.request_rate, x.pattern,
           x.smoothness, x.random_seed, x.warmup_request_count,
           x.request_count, x.duration_ns, x.grace_ns, x.num_users,
           x.user_centric_rate, x.num_urls, x.lookahead_ns,
           x.catch_up_window_ns, x.sessions);
}

/// Counters of one phase, reported when its credits are complete.
struct phase_stats {
  proto::phase phase = phase::profiling;
  std::uint64_t sent = 0;
  std::uint64_t returned = 0;
  std::uint64_t cancelled = 0;
  std::uint64_t lost = 0;
  std::uint64_t sessions_started = 0;
  /// Rate modes: sends later than the catch-up window (schedule reset).
  std::uint64_t skipped_sends = 0;
  /// Monotonic time of the first credit due and of the last return.
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  bool timed_out = false;
  bool was_cancelled = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, phase_stats& x) {
  return f(caf::meta::type_name("aiperf::proto::phase_stats"), x.phase, x.sent,
           x.returned, x.cancelled, x.lost, x.sessions_started,
           x.skipped_sends, x.start_ns, x.end_ns, x.timed_out,
           x.was_cancelled);
}

} // namespace aiperf::proto
