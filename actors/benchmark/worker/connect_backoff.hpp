// The wait before the next send to a destination that refuses connections,
// and the state every worker of a process shares per destination. The
// schedule is pure and the state takes its times as arguments, so both are
// unit-tested without clocks or sleeps.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace aiperf::worker {

/// First wait after a connection failure, and the most one wait can be.
constexpr std::int64_t connect_backoff_initial_ns = 10'000'000; // 10 ms
constexpr std::int64_t connect_backoff_max_ns = 1'000'000'000;  // 1 s

/// The wait before the next send after `failures` (>= 1) connection
/// failures in a row at one destination: 10 ms doubling per failure, capped at
/// 1 s, scaled by `jitter` into [d/2, d] ("equal jitter": every wait is at
/// least half the schedule's, so a dead endpoint costs a bounded number of
/// attempts per second, and workers do not retry in lockstep). `jitter` is
/// clamped to [0, 1]; 0 for no failure.
[[nodiscard]] constexpr std::int64_t
connect_backoff_ns(std::uint32_t failures, double jitter) noexcept {
  if (failures == 0)
    return 0;
  std::int64_t d = connect_backoff_initial_ns;
  for (std::uint32_t i = 1; i < failures && d < connect_backoff_max_ns; ++i)
    d *= 2;
  d = std::min(d, connect_backoff_max_ns);
  jitter = std::clamp(jitter, 0.0, 1.0);
  return d / 2 + static_cast<std::int64_t>(static_cast<double>(d / 2) * jitter);
}

/// The connection backoff of one destination (host:port), shared by every
/// worker of the process that sends there. Thread-safe: the workers run on
/// several I/O threads.
///
/// While the destination refuses connections, one request at a time probes
/// it: admit() lets the first request due after the wait through (the
/// probe) and holds every other one back; the probe's refusal doubles the
/// wait (connect_backoff_ns, jittered), any answer ends the backoff. So N
/// workers facing a dead server cost what one worker alone does: one
/// attempt per wait, not N. Requests already under way when the first
/// refusal came may still be refused; they start the backoff, or, once it
/// runs, change nothing.
class destination_backoff {
public:
  /// `seed` starts the jitter's generator (nonzero; any value works).
  explicit destination_backoff(std::uint64_t seed
                               = 0x9e3779b97f4a7c15ULL) noexcept
      : jitter_state_(seed == 0 ? 1 : seed) {}

  /// What admit() decided.
  struct admission {
    /// 0: send now; else the time (ns, the caller's clock) to ask again.
    std::int64_t retry_at_ns = 0;
    /// The request sent now is the probe: report its outcome with
    /// `probe = true`.
    bool probe = false;
  };

  /// Whether a backoff runs; false is the only thing a healthy send checks
  /// (one relaxed load, no lock).
  [[nodiscard]] bool backing_off() const noexcept {
    return active_.load(std::memory_order_relaxed);
  }

  /// Asks whether a request may be sent at `now_ns`.
  [[nodiscard]] admission admit(std::int64_t now_ns);

  /// A request's connection was refused at `ts_ns`.
  void refused(std::int64_t ts_ns, bool probe);

  /// A request reached the server (any answer, or an error after
  /// connecting): the backoff ends.
  void reached();

  /// A request ended neither way (cancelled): a probe's place is free again.
  void abandoned(bool probe);

  /// Refusals counted in a row (the schedule's step; at most 64).
  [[nodiscard]] std::uint32_t failures() const;

private:
  double next_jitter() noexcept;

  mutable std::mutex mtx_;
  std::atomic<bool> active_{false};
  std::uint32_t failures_ = 0;
  /// Before this no request is sent (a probe's provisional wait while it
  /// runs: the waiters ask again then).
  std::int64_t until_ns_ = 0;
  bool probing_ = false;
  /// xorshift64 state of the jitter.
  std::uint64_t jitter_state_;
};

/// The destination_backoff of every destination, by "host:port". A
/// destination's state lives while a worker holds it: the next run starts
/// afresh. Thread-safe.
class backoff_registry {
public:
  /// The state of `host`:`port` (created on first use).
  [[nodiscard]] std::shared_ptr<destination_backoff> of(const std::string& host,
                                                        std::uint16_t port);

  /// The registry the workers of this process share.
  [[nodiscard]] static std::shared_ptr<backoff_registry> process();

private:
  std::mutex mtx_;
  std::unordered_map<std::string, std::weak_ptr<destination_backoff>> states_;
};

} // namespace aiperf::worker
