#include "actors/benchmark/timing/user_centric.hpp"

#include <cmath>

namespace aiperf::timing {

caf::expected<void> validate(const user_centric_options& opts) {
  if (opts.num_users == 0)
    return make_error(errc::bad_option,
                      "num_users: must be >= 1; set --num-users");
  if (!std::isfinite(opts.qps) || opts.qps <= 0)
    return make_error(errc::bad_option,
                      "user_centric_rate: must be a positive requests/second; "
                      "set --user-centric-rate");
  if (opts.session_turns < 2)
    return make_error(errc::bad_option,
                      "session_turns: user-centric mode needs sessions of >= 2 "
                      "turns; set --session-turns-mean 2 or more");
  if (static_cast<double>(opts.num_users) / opts.qps > 1e9)
    return make_error(errc::bad_option,
                      "user_centric_rate: turn gap num_users/qps exceeds 1e9 "
                      "s; raise --user-centric-rate");
  return caf::unit;
}

user_centric_schedule::user_centric_schedule(const user_centric_options& opts,
                                             std::int64_t start_ns)
    : gap_ns_(
        std::llround(static_cast<double>(opts.num_users) / opts.qps * 1e9)) {
  const auto n = opts.num_users;
  const std::uint64_t turns = opts.session_turns;
  const double stagger_ns = 1e9 / opts.qps; // turn_gap / num_users
  users_.reserve(n);
  for (std::uint64_t u = 0; u < n; ++u) {
    user_start s;
    // Computed from u (not accumulated) so no rounding drift over users.
    s.first_due_ns
        = start_ns + std::llround(static_cast<double>(u) * stagger_ns);
    s.initial_turns = static_cast<std::uint32_t>(turns - u * turns / n);
    users_.push_back(s);
  }
}

} // namespace aiperf::timing
