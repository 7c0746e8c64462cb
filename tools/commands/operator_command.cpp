#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "tools/commands/operator_command.hpp"

#include "actors/operator/job_reconciler.hpp"
#include "config/profile/profile_config.hpp"
#include "k8s/client/client.hpp"
#include "k8s/client/config.hpp"
#include "proto/exit_codes.hpp"
#include "runtime/http_server/http_server.hpp"
#include "runtime/log/log.hpp"
#include "runtime/system/env.hpp"
#include "runtime/system/node.hpp"
#include "tools/commands/error_categories.hpp"

#include <CLI/CLI.hpp>
#include <caf/all.hpp>

#include <charconv>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace aiperf::operator_command {

namespace {

namespace http = boost::beast::http;
using boost::asio::awaitable;

struct operator_options {
  std::vector<std::string> watch_namespaces;
  std::string kubeconfig;
  std::string context;
  std::uint16_t health_port = 8080; // AIPerf's kopf liveness port
  std::optional<std::uint16_t> results_port;
  std::string host = "0.0.0.0";
};

awaitable<void> route(http_server::request& req, http_server::response_writer& w) {
  std::string_view target{req.target().data(), req.target().size()};
  if (auto q = target.find('?'); q != std::string_view::npos)
    target = target.substr(0, q);
  if (target == "/healthz") {
    co_await w.send(200, "application/json", R"({"status":"ok"})");
    co_return;
  }
  co_await w.send(404, "application/json",
                  R"({"error":"no route: the operator answers /healthz; the results API )"
                  R"((/api/v1/results) is not part of this build"})");
}

// A number >= 0 from the environment; `fallback` when unset.
caf::expected<double> number_from(const system::env_lookup& env, const char* name,
                                   double fallback) {
  auto text = env(name);
  if (!text || text->empty())
    return fallback;
  double v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc{} || end != text->data() + text->size() || !(v >= 0))
    return config::flag_error(config::errc::invalid, name,
                              "'" + *text + "' must be a number >= 0");
  return v;
}

int run(const operator_options& o) {
  auto env = system::process_env();
  auto timeout = number_from(env, "AIPERF_JOB_TIMEOUT_SECONDS", 0);
  auto retry_delay = number_from(env, "AIPERF_RESULTS_RETRY_DELAY", 2.0);
  auto retries = number_from(env, "AIPERF_RESULTS_MAX_RETRIES", 5);
  auto pending = number_from(env, "AIPERF_K8S_WATCHDOG_PENDING_THRESHOLD_SECONDS", 30);
  auto critical = number_from(env, "AIPERF_K8S_WATCHDOG_PENDING_CRITICAL_THRESHOLD_SECONDS", 90);
  for (const auto* read : {&timeout, &retry_delay, &retries, &pending, &critical})
    if (!*read) {
      std::fprintf(stderr, "error: %s\n", error_message(read->error()).c_str());
      return proto::exit_config;
    }
  op::harvest_settings harvest;
  harvest.results_dir = env("AIPERF_RESULTS_DIR").value_or("/data");
  harvest.retry_delay = std::chrono::milliseconds{static_cast<std::int64_t>(*retry_delay * 1000)};
  harvest.max_retries = static_cast<int>(*retries);
  std::uint16_t results_port = 8081;
  if (o.results_port) {
    results_port = *o.results_port;
  } else if (auto text = env("AIPERF_RESULTS_SERVER_PORT"); text && !text->empty()) {
    auto parsed = system::parse_port("AIPERF_RESULTS_SERVER_PORT", *text);
    if (!parsed) {
      std::fprintf(stderr, "error: %s\n", error_message(parsed.error()).c_str());
      return proto::exit_config;
    }
    results_port = *parsed;
  }
  auto client_cfg = k8s::client::load_config({o.kubeconfig, o.context},
                                             k8s::client::process_environment());
  if (!client_cfg) {
    std::fprintf(stderr, "error: %s\n", error_message(client_cfg.error()).c_str());
    return proto::exit_config;
  }
  auto origin = client_cfg->origin;

  // Installed before any thread starts, so every thread inherits the mask.
  system::stop_signal stop;
  caf::actor_system_config sys_cfg;
  commands::add_error_categories(sys_cfg);
  sys_cfg.set("scheduler.max-threads", 2);
  sys_cfg.set("logger.console", caf::atom("none"));
  caf::actor_system sys{sys_cfg};
  k8s::client::client_options copts;
  copts.user_agent = "aiperf-node/operator";
  auto api = k8s::client::spawn_client(sys, std::move(*client_cfg), std::move(copts));
  if (!api) {
    std::fprintf(stderr, "error: %s\n", error_message(api.error()).c_str());
    return proto::exit_config;
  }
  std::vector<std::unique_ptr<http_server::server>> servers;
  for (std::uint16_t port : {o.health_port, results_port}) {
    http_server::options opts;
    opts.host = o.host;
    opts.port = port;
    auto s = std::make_unique<http_server::server>(opts, route);
    if (auto started = s->start(); !started) {
      std::fprintf(stderr, "error: operator: port %u: %s\n", unsigned{port},
                   error_message(started.error()).c_str());
      caf::anon_send_exit(*api, caf::exit_reason::user_shutdown);
      return proto::exit_config;
    }
    servers.push_back(std::move(s));
  }
  op::reconciler_config rcfg;
  rcfg.api = *api;
  rcfg.namespaces = o.watch_namespaces;
  rcfg.default_timeout_seconds = *timeout;
  rcfg.pending_threshold_seconds = static_cast<std::int64_t>(*pending);
  rcfg.critical_threshold_seconds = static_cast<std::int64_t>(*critical);
  rcfg.env = [env](std::string_view name) { return env(name); };
  rcfg.harvester = op::spawn_http_harvester(sys, harvest);
  auto reconciler = op::spawn_job_reconciler(sys, rcfg);
  std::string scope = "every namespace";
  if (!o.watch_namespaces.empty()) {
    scope = "namespaces";
    for (const auto& ns : o.watch_namespaces)
      scope += " " + ns;
  }
  // The documented first stdout line.
  std::printf("operator watching AIPerfJobs in %s (API server from %s); /healthz on :%u and "
              ":%u\n",
              scope.c_str(), origin.c_str(), unsigned{o.health_port}, unsigned{results_port});
  std::fflush(stdout);
  stop.wait();
  for (auto& s : servers)
    s->stop();
  caf::anon_send_exit(reconciler, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(*api, caf::exit_reason::user_shutdown);
  return proto::exit_ok;
}

} // namespace

void add_subcommand(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "operator",
      "Run AIPerfJobs submitted as custom resources (the aiperf-node operator): admit each "
      "job, create its Role, RoleBinding, ConfigMap and JobSet, follow it to its end. Exits "
      "0 on SIGTERM");
  auto o = std::make_shared<operator_options>();
  cmd->add_option("--watch-namespaces", o->watch_namespaces,
                  "Namespaces to watch (repeat, or comma-separate); default every namespace")
      ->delimiter(',');
  cmd->add_option("--kubeconfig", o->kubeconfig,
                  "Kubeconfig file (default $KUBECONFIG, the in-cluster service account, "
                  "~/.kube/config)");
  cmd->add_option("--kube-context", o->context, "Kubeconfig context (default the current one)");
  cmd->add_option("--health-port", o->health_port, "Port of /healthz (default 8080)");
  cmd->add_option("--results-port", o->results_port,
                  "Port of the results server (default AIPERF_RESULTS_SERVER_PORT, else 8081)");
  cmd->add_option("--host", o->host, "Address to bind (default 0.0.0.0)");
  cmd->callback([o, &exit_code] {
    try {
      exit_code = run(*o);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: internal: %s\n", e.what());
      exit_code = proto::exit_internal;
    }
  });
}

} // namespace aiperf::operator_command
