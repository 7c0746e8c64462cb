#include "runtime/selfcheck/loop_lag_probe.hpp"

#include "runtime/stats/histogram.hpp"

#include <utility> // before Boost.Asio with g++ 12 (std::exchange)

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <array>
#include <functional>
#include <mutex>

namespace aiperf::selfcheck {

// -- lag_recorder ---------------------------------------------------------------

struct lag_recorder::impl {
  stats::log_linear_histogram lateness;
  /// The five largest samples, largest first (exact, unlike the histogram).
  std::array<double, thresholds::min_late_samples> largest{};
  std::int64_t first_cpu = 0;
  std::int64_t first_wall = 0;
  std::int64_t last_cpu = 0;
  std::int64_t last_wall = 0;
  int cpu_ticks = 0;
};

lag_recorder::lag_recorder() : impl_(std::make_unique<impl>()) {
  // nop
}

lag_recorder::~lag_recorder() = default;
lag_recorder::lag_recorder(lag_recorder&&) noexcept = default;
lag_recorder& lag_recorder::operator=(lag_recorder&&) noexcept = default;

void lag_recorder::record_lateness(std::chrono::nanoseconds late) {
  auto ns = late.count() > 0 ? static_cast<double>(late.count()) : 0.0;
  impl_->lateness.record(ns);
  auto& top = impl_->largest;
  if (ns > top.back()) {
    top.back() = ns;
    std::sort(top.begin(), top.end(), std::greater<>{});
  }
}

void lag_recorder::record_thread_cpu(std::int64_t thread_cpu_ns,
                                     std::int64_t wall_ns) {
  if (impl_->cpu_ticks++ == 0) {
    impl_->first_cpu = thread_cpu_ns;
    impl_->first_wall = wall_ns;
  }
  impl_->last_cpu = thread_cpu_ns;
  impl_->last_wall = wall_ns;
}

lag_stats lag_recorder::stats() const {
  lag_stats s;
  s.samples = impl_->lateness.count();
  if (s.samples == 0)
    return s;
  s.p50_ns = impl_->lateness.percentile(50);
  s.p99_ns = impl_->lateness.percentile(99);
  s.max_ns = impl_->lateness.max();
  if (s.samples >= impl_->largest.size())
    s.fifth_largest_ns = impl_->largest.back();
  return s;
}

std::optional<double> lag_recorder::busy() const {
  auto wall = impl_->last_wall - impl_->first_wall;
  if (impl_->cpu_ticks < 2 || wall <= 0)
    return std::nullopt;
  auto cpu = impl_->last_cpu - impl_->first_cpu;
  return cpu > 0 ? static_cast<double>(cpu) / static_cast<double>(wall) : 0.0;
}

// -- loop_lag_probe -------------------------------------------------------------

std::chrono::nanoseconds
next_probe_interval(std::chrono::nanoseconds current,
                    std::chrono::nanoseconds base,
                    std::chrono::nanoseconds thread_cpu_since_last_tick,
                    std::chrono::nanoseconds idle_max) {
  if (thread_cpu_since_last_tick >= base / 10 || idle_max <= base)
    return base;
  return std::clamp(current * 2, base, idle_max);
}

struct loop_lag_probe::state : std::enable_shared_from_this<state> {
  state(boost::asio::io_context& ioc, std::chrono::nanoseconds interval)
    : ioc(ioc), timer(ioc), interval(interval), current(interval) {
    // nop
  }

  // Runs on the io_context thread only.
  void arm() {
    timer.expires_after(current);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      self->fired(ec);
    });
  }

  void fired(boost::system::error_code ec) {
    if (ec || !running)
      return;
    auto now = boost::asio::steady_timer::clock_type::now();
    auto late = now - timer.expiry();
    auto cpu = thread_cpu_ns();
    {
      std::lock_guard guard{mtx};
      recorder.record_lateness(
        std::chrono::duration_cast<std::chrono::nanoseconds>(late));
      recorder.record_thread_cpu(cpu, read_process_cpu().wall_ns);
    }
    current = next_probe_interval(current, interval,
                                  std::chrono::nanoseconds{cpu - last_cpu});
    last_cpu = cpu;
    // Re-armed from now, not from the missed expiry: one long stall must
    // count once, not as a burst of catch-up samples.
    arm();
  }

  boost::asio::io_context& ioc;
  boost::asio::steady_timer timer; // io_context thread only
  std::chrono::nanoseconds interval;
  std::chrono::nanoseconds current; // io_context thread only
  std::int64_t last_cpu = 0;        // io_context thread only
  bool running = false;            // io_context thread only
  mutable std::mutex mtx;
  lag_recorder recorder;           // guarded by mtx
};

loop_lag_probe::loop_lag_probe(boost::asio::io_context& ioc,
                               std::chrono::nanoseconds interval)
  : state_(std::make_shared<state>(
    ioc, interval.count() > 0 ? interval : std::chrono::milliseconds{10})) {
  // nop
}

loop_lag_probe::~loop_lag_probe() {
  stop();
}

void loop_lag_probe::start() {
  boost::asio::post(state_->ioc, [s = state_] {
    if (s->running)
      return;
    s->running = true;
    s->current = s->interval;
    s->last_cpu = thread_cpu_ns();
    {
      // The first CPU tick is the baseline of io_thread_busy.
      std::lock_guard guard{s->mtx};
      s->recorder.record_thread_cpu(s->last_cpu, read_process_cpu().wall_ns);
    }
    s->arm();
  });
}

void loop_lag_probe::stop() {
  boost::asio::post(state_->ioc, [s = state_] {
    s->running = false;
    s->timer.cancel();
  });
}

lag_stats loop_lag_probe::lag() const {
  std::lock_guard guard{state_->mtx};
  return state_->recorder.stats();
}

std::optional<double> loop_lag_probe::io_thread_busy() const {
  std::lock_guard guard{state_->mtx};
  return state_->recorder.busy();
}

// -- monitor --------------------------------------------------------------------

monitor::monitor(boost::asio::io_context& ioc,
                 std::chrono::nanoseconds interval)
  : probe_(ioc, interval) {
  // nop
}

void monitor::start() {
  cores_ = available_cores();
  start_ = read_process_cpu();
  probe_.start();
}

verdict monitor::finish(const thresholds& limits) {
  probe_.stop();
  auto usage = usage_between(start_, read_process_cpu(), cores_);
  return judge(probe_.lag(), usage, probe_.io_thread_busy(), limits);
}

} // namespace aiperf::selfcheck
