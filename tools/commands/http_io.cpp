#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "tools/commands/http_io.hpp"

#include "tools/commands/error_categories.hpp"

#include "actors/benchmark/exporters/exporters.hpp"
#include "actors/benchmark/remote/layout.hpp"
#include "actors/benchmark/timing/errc.hpp"
#include "proto/benchmark_errors.hpp"
#include "proto/codec.hpp"
#include "runtime/io/durable_file.hpp"
#include "runtime/time/skewed_clock.hpp"
#include "runtime/zmq_bridge/settings.hpp"

#include "runtime/system/node.hpp"

#include <caf/actor_system_config.hpp>

#include <cerrno>
#include <sys/resource.h>
#include <unistd.h>

namespace aiperf::profile_command {

namespace {

http::client_options client_options_of(const config::profile_config& cfg) {
  http::client_options opts;
  opts.max_connections_per_endpoint
    = cfg.concurrency && *cfg.concurrency > 0
        ? static_cast<std::size_t>(*cfg.concurrency)
        : 65536;
  opts.tls.ca_file = cfg.ca_file.value_or("");
  opts.tls.insecure = cfg.insecure;
  return opts;
}

bool wants_high_priority(const config::profile_config& cfg) {
  switch (cfg.io_priority) {
  case config::io_priority::high:
    return true;
  case config::io_priority::normal:
    return false;
  case config::io_priority::automatic:
    break;
  }
  return cfg.request_rate || cfg.fixed_schedule || cfg.user_centric_rate;
}

/// Whether this process may lower its nice value to io_thread_nice: tried
/// on the calling thread and undone (raising it back is always allowed).
bool may_raise_priority() {
  errno = 0;
  const int before = ::getpriority(PRIO_PROCESS, 0);
  if (before == -1 && errno != 0)
    return false;
  if (before <= http::io_thread_nice)
    return true;
  if (!http::raise_thread_priority(http::io_thread_nice))
    return false;
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), before);
  return true;
}

} // namespace

http_io::http_io(const config::profile_config& cfg)
  : pool_(static_cast<std::size_t>(cfg.io_threads.value_or(1)),
          wants_high_priority(cfg)) {
  if (cfg.io_priority == config::io_priority::high && !may_raise_priority())
    priority_warning_
      = "--io-priority high: this process may not lower its nice value to "
        + std::to_string(http::io_thread_nice)
        + " (needs CAP_SYS_NICE or RLIMIT_NICE); the I/O threads run at normal "
          "priority";
  auto opts = client_options_of(cfg);
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    clients_.push_back(std::make_unique<http::client>(pool_.context(i), opts));
    slots_.push_back({&pool_.context(i), clients_.back().get()});
  }
}

void http_io::shutdown_clients() {
  for (auto& c : clients_)
    c->shutdown();
}

void http_io::stop() {
  shutdown_clients();
  pool_.stop();
}

caf::expected<void>
apply_scheduler(caf::actor_system_config& cfg,
                const config::profile_config& run, http_io* io) {
  system::node_options node;
  using config::scheduler_policy;
  auto policy = run.scheduler_policy;
  if (policy == scheduler_policy::automatic)
    policy = io != nullptr && io->pool().size() == 1
               ? scheduler_policy::io_thread
               : scheduler_policy::sharing;
  if (policy == scheduler_policy::io_thread && io == nullptr)
    policy = scheduler_policy::sharing; // the controller role: no I/O thread
  node.scheduler_policy = std::string{config::to_string(policy)};
  if (io != nullptr)
    node.actor_io = &io->pool().context(0);
  node.scheduler_threads
    = static_cast<std::size_t>(run.scheduler_threads.value_or(0));
  commands::add_error_categories(cfg);
  return system::apply(cfg, node);
}

} // namespace aiperf::profile_command
