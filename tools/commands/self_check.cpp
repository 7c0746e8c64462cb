#include "tools/commands/self_check.hpp"

#include "runtime/http/client.hpp"
#include "runtime/log/log.hpp"
#include "runtime/selfcheck/loop_lag_probe.hpp"
#include "runtime/selfcheck/selfcheck.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

namespace aiperf::profile_command {

namespace {

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4f", x);
  return buf;
}

} // namespace

client_self_check::client_self_check(http::io_pool& io) {
  limits_.lag_p99 = selfcheck::lag_p99_from_env(
      std::getenv("AIPERF_SELF_CHECK_LAG_P99_US"));
  for (std::size_t i = 0; i < io.size(); ++i)
    monitors_.push_back(std::make_unique<selfcheck::monitor>(io.context(i)));
}

void client_self_check::start() {
  std::lock_guard<std::mutex> guard{mtx_};
  start_locked();
}

void client_self_check::start_locked() {
  if (started_)
    return;
  started_ = true;
  for (auto& m : monitors_)
    m->start();
}

client_self_check::~client_self_check() {
  finish();
}

std::pair<std::vector<std::string>, std::string> client_self_check::finish() {
  std::lock_guard<std::mutex> guard{mtx_};
  if (result_)
    return *result_;
  start_locked();
  // One verdict for the process: each thread's own warning quotes its own
  // lag, so printing them all gave one line per I/O thread over the line
  // (up to --io-threads lines for one cause).
  std::vector<selfcheck::verdict> threads;
  for (auto& m : monitors_) {
    threads.push_back(m->finish(limits_));
    log::get("profile")->debug("{}", threads.back().summary);
  }
  auto worst = selfcheck::combine(threads);
  // No warning: loop lag and CPU change a number only through merged reads
  // and send lag, which the records show (selfcheck.hpp).
  std::vector<std::string> warnings;
  std::string json = "{\"client_limited\":";
  json += worst.client_limited ? "true" : "false";
  json += ",\"io_threads\":" + std::to_string(monitors_.size());
  json += ",\"loop_lag_p50_ms\":" + number(worst.lag.p50_ns / 1e6);
  json += ",\"loop_lag_p99_ms\":" + number(worst.lag.p99_ns / 1e6);
  json += ",\"loop_lag_max_ms\":" + number(worst.lag.max_ns / 1e6);
  json += ",\"loop_lag_samples\":" + std::to_string(worst.lag.samples);
  json += ",\"cpu_cores_used\":" + number(worst.cpu.cores_used());
  json += ",\"cores_available\":" + number(worst.cpu.cores_available);
  json += ",\"io_thread_busy\":"
          + (worst.io_thread_busy ? number(*worst.io_thread_busy)
                                  : std::string{"null"});
  json += "}";
  result_ = std::make_unique<std::pair<std::vector<std::string>, std::string>>(
    std::move(warnings), std::move(json));
  return *result_;
}

} // namespace aiperf::profile_command
