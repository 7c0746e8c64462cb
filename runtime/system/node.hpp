// Node bootstrap: what every aiperf-node process does before and after its
// actors run — scheduler sizing, signal handling, and the exit code.
#pragma once

#include "runtime/system/errc.hpp"

#include <caf/fwd.hpp>

namespace boost::asio {
class io_context;
} // namespace boost::asio

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace aiperf::system {

/// CAF scheduler settings. CAF's defaults (work stealing, max(cores, 4)
/// threads, cores of the *host* inside a container) are wrong for a 2-core
/// pod: stealing workers spin and steal CPU from the I/O threads that stamp
/// responses. So both are always set explicitly.
struct node_options {
  /// "io-thread" (actors run on `actor_io`'s thread, see io_scheduler.hpp),
  /// "sharing" or "stealing".
  std::string scheduler_policy = "sharing";
  /// 0 = one per available core (affinity mask and cgroup quota respected).
  /// Ignored by "io-thread".
  std::size_t scheduler_threads = 0;
  /// The running io_context "io-thread" puts the actors on; it must outlive
  /// the actor system.
  boost::asio::io_context* actor_io = nullptr;
};

/// Returns the cores this process may use: the CPU affinity mask, capped by
/// the cgroup v2 CPU quota (`cpu.max`) when one is set. At least 1.
[[nodiscard]] std::size_t available_cores();

/// Writes `opts` into `cfg`. Fails with bad_option naming the option and the
/// fix when `opts` is invalid; `cfg` is untouched then.
[[nodiscard]] caf::expected<void> apply(caf::actor_system_config& cfg,
                                        const node_options& opts);

/// Turns SIGINT/SIGTERM/SIGHUP into a callback on a dedicated thread, and
/// ignores SIGPIPE process-wide (a write to a closed pipe fails with EPIPE).
///
/// Construct it FIRST in main, before the actor system or any other thread:
/// it blocks both signals for the calling thread, and threads started later
/// inherit the mask, so only its own thread (sigwait) ever sees them. The
/// first signal calls `on_signal(signo)`; a second one terminates
/// the process at once with exit code 130 (the user asked twice).
/// Not copyable; the destructor stops and joins the thread.
class signal_watcher {
public:
  explicit signal_watcher(std::function<void(int)> on_signal);
  ~signal_watcher();
  signal_watcher(const signal_watcher&) = delete;
  signal_watcher& operator=(const signal_watcher&) = delete;

  /// Number of signals received so far.
  [[nodiscard]] int signals_received() const noexcept {
    return received_.load();
  }

private:
  std::function<void(int)> on_signal_;
  std::atomic<int> received_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

/// The main thread of a server command (`results-sidecar`, `operator`):
/// wait() returns once SIGINT or SIGTERM arrived, or once stop() was called
/// (the command ends itself: an operator that lost its leadership).
/// Construct it first, as signal_watcher, before any thread starts.
class stop_signal {
public:
  stop_signal();
  stop_signal(const stop_signal&) = delete;
  stop_signal& operator=(const stop_signal&) = delete;

  /// Blocks until the first signal or stop().
  void wait();

  /// Ends wait() as a signal would; callable from any thread.
  void stop();

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  bool stopped_ = false;
  signal_watcher watcher_; // last: its thread uses the members above
};

} // namespace aiperf::system
