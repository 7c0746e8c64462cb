#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "tools/aiperf-node/http_io.hpp"

#include "runtime/system/node.hpp"

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

} // namespace

http_io::http_io(const config::profile_config& cfg)
  // Raised I/O priority only where a send schedule must be kept.
  : pool_(static_cast<std::size_t>(cfg.io_threads.value_or(1)),
          cfg.request_rate || cfg.fixed_schedule || cfg.user_centric_rate) {
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

std::optional<std::string>
apply_scheduler(caf::actor_system_config& cfg,
                const config::profile_config& run) {
  system::node_options node;
  node.scheduler_policy = std::string{config::to_string(run.scheduler_policy)};
  node.scheduler_threads
    = static_cast<std::size_t>(run.scheduler_threads.value_or(0));
  return system::apply(cfg, node);
}

} // namespace aiperf::profile_command
