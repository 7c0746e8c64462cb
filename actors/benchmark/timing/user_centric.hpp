// `--user-centric-rate <qps>` + `--num-users`: a fixed population of users,
// each sending one turn every turn_gap = num_users / qps seconds, so the
// aggregate rate is qps regardless of response times.
//
// Start-up (AIPerf's "virtual history", steady state from t = 0): user u
// (0-based) sends its first turn at start + u · turn_gap / num_users, so
// arrivals are evenly spaced at 1/qps from the first moment; and user u
// joins mid-session, with session_turns − floor(u · session_turns /
// num_users) turns left (user 0 is a fresh user with a full session), so
// session ends — and new users replacing them — are spread evenly instead
// of all landing at session_turns · turn_gap. The actor sends the FIRST
// `initial_turns` turns of the conversation it samples for that user (so the
// chat history stays consistent); afterwards a finished user is replaced by
// a fresh user, with a new conversation, at the user's next due time.
//
// Each later turn is due at previous due + turn_gap; if the previous
// response came back later than that, it goes out at the return and the
// user's schedule is rebased there (no burst catch-up).
#pragma once

#include "actors/benchmark/timing/errc.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace aiperf::timing {

/// The caller maps its config here.
struct user_centric_options {
  /// `--num-users`; ≥ 1.
  std::uint64_t num_users = 1;
  /// `--user-centric-rate` (requests per second over all users); > 0.
  double qps = 1.0;
  /// Turns per session (`--session-turns-mean`, rounded); ≥ 2.
  std::uint32_t session_turns = 2;
};

/// Where user slot u starts.
struct user_start {
  std::int64_t first_due_ns = 0;
  /// Turns of the first (joined mid-way) session, 1..session_turns.
  std::uint32_t initial_turns = 0;

  friend bool operator==(const user_start&, const user_start&) = default;
};

/// Returns bad_option naming the option and the fix when `opts` is
/// unusable.
[[nodiscard]] caf::expected<void> validate(const user_centric_options& opts);

/// The pure part of user-centric timing.
class user_centric_schedule {
public:
  /// `opts` must have passed validate().
  user_centric_schedule(const user_centric_options& opts,
                        std::int64_t start_ns);

  /// num_users / qps, in ns.
  [[nodiscard]] std::int64_t turn_gap_ns() const noexcept { return gap_ns_; }

  /// One entry per user slot, in slot order (first_due_ns ascending).
  [[nodiscard]] const std::vector<user_start>& users() const noexcept {
    return users_;
  }

  /// Due time of a user's next turn: max(previous due + gap, return time).
  [[nodiscard]] std::int64_t
  next_due(std::int64_t prev_due_ns,
           std::int64_t prev_return_ns) const noexcept {
    const auto planned = prev_due_ns + gap_ns_;
    return planned >= prev_return_ns ? planned : prev_return_ns;
  }

private:
  std::int64_t gap_ns_;
  std::vector<user_start> users_;
};

} // namespace aiperf::timing
