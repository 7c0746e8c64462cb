#include "runtime/system/node.hpp"

#include "runtime/system/io_scheduler.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

namespace aiperf::system {

std::size_t available_cores() {
  std::size_t cores = std::thread::hardware_concurrency();
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    cores = static_cast<std::size_t>(CPU_COUNT(&set));
  // cgroup v2: "max 100000" (no quota) or "<quota> <period>".
  std::ifstream cpu_max{"/sys/fs/cgroup/cpu.max"};
  std::string quota;
  long period = 0;
  if (cpu_max >> quota >> period && quota != "max" && period > 0) {
    auto limit = std::ceil(std::stod(quota) / static_cast<double>(period));
    if (limit >= 1 && static_cast<std::size_t>(limit) < cores)
      cores = static_cast<std::size_t>(limit);
  }
  return cores == 0 ? 1 : cores;
}

caf::expected<void> apply(caf::actor_system_config& cfg,
                          const node_options& opts) {
  if (opts.scheduler_policy == "io-thread") {
    if (opts.actor_io == nullptr)
      return make_error(errc::bad_option,
                        "--scheduler-policy io-thread: this process has no "
                        "HTTP I/O thread to run the actors on; use 'sharing'");
    use_io_scheduler(cfg, *opts.actor_io);
    // A resumed actor holds the I/O thread's sends and reads back: one
    // message per turn, so the loop polls its sockets in between.
    cfg.set("scheduler.max-throughput", std::size_t{1});
  } else if (opts.scheduler_policy == "sharing"
             || opts.scheduler_policy == "stealing") {
    auto threads = opts.scheduler_threads == 0 ? available_cores()
                                               : opts.scheduler_threads;
    cfg.set("scheduler.policy", caf::atom_from_string(opts.scheduler_policy));
    cfg.set("scheduler.max-threads", threads);
    // Stealing workers spin before sleeping; keep the spin short on small
    // machines so they do not starve I/O threads.
    cfg.set("work-stealing.aggressive-poll-attempts", std::size_t{10});
  } else {
    return make_error(errc::bad_option,
                      "--scheduler-policy: must be 'io-thread', 'sharing' or "
                      "'stealing' (got '"
                        + opts.scheduler_policy + "')");
  }
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  return caf::unit;
}

signal_watcher::signal_watcher(std::function<void(int)> on_signal)
  : on_signal_(std::move(on_signal)) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP); // a closed terminal: stop like SIGTERM
  sigaddset(&set, SIGUSR2); // private wake-up for the destructor
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // A closed stdout or socket is a failed write (EPIPE), not the end of the
  // process: the run keeps its own exit code.
  std::signal(SIGPIPE, SIG_IGN);
  thread_ = std::thread{[this, set] {
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0)
        continue;
      if (stopping_.load())
        return;
      if (sig == SIGUSR2)
        continue;
      if (received_.fetch_add(1) >= 1)
        std::_Exit(130); // second interrupt: abort at once
      on_signal_(sig);
    }
  }};
}

signal_watcher::~signal_watcher() {
  stopping_.store(true);
  pthread_kill(thread_.native_handle(), SIGUSR2);
  thread_.join();
}

stop_signal::stop_signal() : watcher_{[this](int) { stop(); }} {
  // nop
}

void stop_signal::stop() {
  std::lock_guard<std::mutex> guard{mtx_};
  stopped_ = true;
  cv_.notify_all();
}

void stop_signal::wait() {
  std::unique_lock<std::mutex> lock{mtx_};
  cv_.wait(lock, [this] { return stopped_; });
}

} // namespace aiperf::system
