// Measures how late an Asio io_context runs its handlers: a timer armed for
// now + interval records, when it fires, how far past its expiry it ran. On
// the client's I/O thread that lateness is the delay a just-arrived SSE event
// waits before it is read and stamped, so it bounds the client's own share
// of TTFT/ITL.
#pragma once

#include "runtime/selfcheck/selfcheck.hpp"

#include <chrono>
#include <memory>
#include <optional>

namespace boost::asio {
class io_context;
} // namespace boost::asio

namespace aiperf::selfcheck {

/// Records probe lateness samples and the I/O thread's CPU; the part of the
/// probe that needs no clock, so it is tested with injected samples.
/// Not thread-safe (loop_lag_probe guards it).
class lag_recorder {
public:
  lag_recorder();
  ~lag_recorder();
  lag_recorder(lag_recorder&&) noexcept;
  lag_recorder& operator=(lag_recorder&&) noexcept;

  /// Adds one lateness sample; negative values (a timer that fired early,
  /// which Asio does not do, or clock skew) count as 0.
  void record_lateness(std::chrono::nanoseconds late);

  /// Records the I/O thread's CPU counter and the wall clock at one tick;
  /// busy() is the ratio of their growth since the first call.
  void record_thread_cpu(std::int64_t thread_cpu_ns, std::int64_t wall_ns);

  [[nodiscard]] lag_stats stats() const;
  /// Fraction of one core the I/O thread used between the first and the
  /// last record_thread_cpu; nullopt before two calls.
  [[nodiscard]] std::optional<double> busy() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// The probe's next interval after a tick. A tick in which the I/O thread
/// worked (at least base/10 of CPU since the previous tick: waking an idle
/// loop costs tens of microseconds on a VM) resets it to `base`; after an
/// idle tick it doubles, up to `idle_max`. An idle loop is then woken about
/// once a second instead of every `base`, and the first tick with work in it
/// brings the sampling rate back.
[[nodiscard]] std::chrono::nanoseconds
next_probe_interval(std::chrono::nanoseconds current,
                    std::chrono::nanoseconds base,
                    std::chrono::nanoseconds thread_cpu_since_last_tick,
                    std::chrono::nanoseconds idle_max = std::chrono::seconds{1});

/// A lag probe on one io_context. start() and stop() may be called from any
/// thread (they post to the io_context); lag() and io_thread_busy() may be
/// read from any thread at any time. The probe may be destroyed before the
/// io_context stops: pending handlers keep its state alive, find it stopped
/// and do not re-arm. Measures correctly only if a single thread runs the
/// io_context (the client's model: one io_context per thread).
class loop_lag_probe {
public:
  /// `interval` is how often the probe fires while the loop works; 10 ms
  /// costs < 0.01 % CPU. An idle loop is sampled less often
  /// (next_probe_interval).
  explicit loop_lag_probe(
    boost::asio::io_context& ioc,
    std::chrono::nanoseconds interval = std::chrono::milliseconds{10});
  ~loop_lag_probe();
  loop_lag_probe(const loop_lag_probe&) = delete;
  loop_lag_probe& operator=(const loop_lag_probe&) = delete;

  void start();
  void stop();

  [[nodiscard]] lag_stats lag() const;
  [[nodiscard]] std::optional<double> io_thread_busy() const;

private:
  struct state;
  std::shared_ptr<state> state_;
};

/// One run's self-check: a lag probe on the client's I/O io_context plus the
/// process CPU between start() and finish(). Usage in a run:
///   monitor m{ioc}; m.start(); ...run...; auto v = m.finish();
///   if (v.client_limited) warn(v.warning);
class monitor {
public:
  explicit monitor(
    boost::asio::io_context& ioc,
    std::chrono::nanoseconds interval = std::chrono::milliseconds{10});

  void start();
  /// Stops the probe and judges everything measured since start().
  [[nodiscard]] verdict finish(const thresholds& limits = {});

private:
  loop_lag_probe probe_;
  cpu_reading start_;
  double cores_ = 1;
};

} // namespace aiperf::selfcheck
