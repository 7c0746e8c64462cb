// Credits: one credit = permission for one request (one turn). Granted by the
// timing_manager, spent by a worker, returned when the request is over.
// Credits carry ids and times, never payloads: the worker looks the turn up
// in its copy of the dataset.
#pragma once

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace aiperf::proto {

enum class phase : std::uint8_t { warmup = 0, profiling = 1 };

[[nodiscard]] inline const char* to_string(phase p) noexcept {
  return p == phase::warmup ? "warmup" : "profiling";
}

struct credit {
  std::uint64_t id = 0;
  proto::phase phase = phase::profiling;
  /// Session number within the phase (0, 1, ...); names the session in
  /// records and in X-Correlation-ID.
  std::uint32_t session_num = 0;
  /// Index of the conversation in the dataset.
  std::uint32_t conversation = 0;
  std::uint32_t turn_index = 0;
  std::uint32_t num_turns = 1;
  /// When the timing_manager granted the credit (its monotonic clock).
  std::int64_t issued_at_ns = 0;
  /// Absolute monotonic time at which the request must be sent; 0 = at once
  /// (closed loop). In rate/trace modes this is the intended send time that
  /// latencies are also measured from (coordinated omission).
  std::int64_t due_ns = 0;
  /// Index into the configured URL list (round-robin by the timing_manager).
  std::uint32_t url_index = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, credit& x) {
  return f(caf::meta::type_name("aiperf::proto::credit"), x.id, x.phase,
           x.session_num, x.conversation, x.turn_index, x.num_turns,
           x.issued_at_ns, x.due_ns, x.url_index);
}

/// What became of a credit.
enum class credit_outcome : std::uint8_t {
  ok = 0,        // request completed (it may still be an error record)
  cancelled = 1, // cancelled before or while running (code 499)
  lost = 2,      // the worker died with it in flight
};

[[nodiscard]] inline const char* to_string(credit_outcome x) noexcept {
  switch (x) {
    case credit_outcome::ok:
      return "ok";
    case credit_outcome::cancelled:
      return "cancelled";
    default:
      return "lost";
  }
}

struct credit_return {
  std::uint64_t credit_id = 0;
  std::uint32_t worker_index = 0;
  credit_outcome outcome = credit_outcome::ok;
  /// The request failed (any error record), for session bookkeeping.
  bool failed = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, credit_return& x) {
  return f(caf::meta::type_name("aiperf::proto::credit_return"), x.credit_id,
           x.worker_index, x.outcome, x.failed);
}

using credit_batch = std::vector<credit>;
using credit_return_batch = std::vector<credit_return>;

} // namespace aiperf::proto
