#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "tools/commands/operator_command.hpp"

#include "actors/operator/job_reconciler.hpp"
#include "actors/operator/leader_elector.hpp"
#include "actors/operator/results_api.hpp"
#include "config/profile/profile_config.hpp"
#include "k8s/api/json.hpp"
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

#include <atomic>
#include <charconv>
#include <filesystem>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

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
  std::optional<std::uint16_t> metrics_port;
  std::string host = "0.0.0.0";
  bool leader_elect = true;
  std::string election_namespace; // default $POD_NAMESPACE, else the client's
};

// What the operator's ports answer (every port the same routes).
struct served {
  std::shared_ptr<std::atomic<bool>> leading = std::make_shared<std::atomic<bool>>(false);
  std::shared_ptr<op::operator_metrics> metrics = std::make_shared<op::operator_metrics>();
  std::shared_ptr<k8s::client::request_metrics> requests
      = std::make_shared<k8s::client::request_metrics>();
  /// AIPERF_RESULTS_DIR: what /api/v1/results serves.
  std::filesystem::path results_dir;
};

// Whether a file can be created in `dir` (the results volume is mounted and
// not read-only or full of inodes).
bool writable(const std::filesystem::path& dir) {
  auto probe = dir / (".aiperf_readyz." + std::to_string(::getpid()));
  int fd = ::open(probe.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return false;
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

// The body of /readyz when the results volume is not writable (built
// outside the coroutine: g++ 12 miscompiles brace-init lists in one).
std::string storage_unavailable(const std::filesystem::path& dir) {
  return k8s::json{{"status", "storage"},
                   {"leader", true},
                   {"detail", "the results directory " + dir.string() + " is not writable"}}
      .dump();
}

// /healthz: the process lives (liveness, on every replica). /readyz: this
// replica leads and can write results, so it is the one that writes and
// serves them (the Service routes to ready pods only); 503 on a standby or
// with the results volume not writable. /metrics: the
// Prometheus exposition of metrics.hpp and of the client's requests.
http_server::handler router(served s) {
  return [s](http_server::request& req, http_server::response_writer& w) -> awaitable<void> {
    const auto& leading = s.leading;
    std::string_view target{req.target().data(), req.target().size()};
    if (auto q = target.find('?'); q != std::string_view::npos)
      target = target.substr(0, q);
    if (target == "/healthz") {
      co_await w.send(200, "application/json", R"({"status":"ok"})");
    } else if (target == "/readyz") {
      if (!leading->load())
        co_await w.send(503, "application/json",
                        R"({"status":"standby","leader":false,)"
                        R"("detail":"this replica is not the leader; another one serves"})");
      else if (!writable(s.results_dir))
        co_await w.send(503, "application/json", storage_unavailable(s.results_dir));
      else
        co_await w.send(200, "application/json", R"({"status":"ok","leader":true})");
    } else if (target == "/metrics") {
      co_await w.send(200, "text/plain; version=0.0.4; charset=utf-8",
                      s.metrics->prometheus_text() + s.requests->prometheus_text());
    } else if (auto r = op::answer_results(
                   s.results_dir, std::string_view{req.target().data(), req.target().size()},
                   std::string_view{req[http::field::accept_encoding].data(),
                                    req[http::field::accept_encoding].size()});
               r.status != 0) {
      std::string headers;
      if (!r.filename.empty())
        headers = "Content-Disposition: attachment; filename=\"" + r.filename
                  + "\"\r\nVary: Accept-Encoding\r\n";
      if (!r.content_encoding.empty())
        headers += "Content-Encoding: " + r.content_encoding + "\r\n";
      co_await w.send(static_cast<unsigned>(r.status), r.content_type, r.body, headers);
    } else {
      co_await w.send(404, "application/json",
                      R"({"detail":"no route: the operator answers /healthz, /readyz, /metrics )"
                      R"(and /api/v1/results"})");
    }
  };
}

std::string election_identity(const system::env_lookup& env) {
  if (auto pod = env("POD_NAME"); pod && !pod->empty())
    return *pod;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
    return "aiperf-operator-" + std::to_string(getpid());
  return std::string{host} + "_" + std::to_string(getpid());
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

// A port: the flag, else the environment variable, else `fallback`.
caf::expected<std::uint16_t> port_from(const system::env_lookup& env,
                                       const std::optional<std::uint16_t>& flag,
                                       const char* name, std::uint16_t fallback) {
  if (flag)
    return *flag;
  auto text = env(name);
  if (!text || text->empty())
    return fallback;
  return system::parse_port(name, *text);
}

int run(const operator_options& o) {
  auto env = system::process_env();
  auto timeout = number_from(env, "AIPERF_JOB_TIMEOUT_SECONDS", 0);
  auto retry_delay = number_from(env, "AIPERF_RESULTS_RETRY_DELAY", 2.0);
  auto retries = number_from(env, "AIPERF_RESULTS_MAX_RETRIES", 5);
  auto pending = number_from(env, "AIPERF_K8S_WATCHDOG_PENDING_THRESHOLD_SECONDS", 30);
  auto critical = number_from(env, "AIPERF_K8S_WATCHDOG_PENDING_CRITICAL_THRESHOLD_SECONDS", 90);
  auto expiry = number_from(env, "AIPERF_K8S_CONTROLLER_HEARTBEAT_EXPIRY_SECONDS", 30);
  auto restarts = number_from(env, "AIPERF_POD_RESTART_THRESHOLD", 3);
  auto probe_timeout = number_from(env, "AIPERF_ENDPOINT_CHECK_TIMEOUT", 10.0);
  auto retain = number_from(env, "AIPERF_RESULTS_RETAIN_RUNS", 10);
  auto ttl_days = number_from(env, "AIPERF_RESULTS_TTL_DAYS", 30);
  for (const auto* read : {&timeout, &retry_delay, &retries, &pending, &critical, &expiry,
                           &restarts, &probe_timeout, &retain, &ttl_days})
    if (!*read) {
      std::fprintf(stderr, "error: %s\n", error_message(read->error()).c_str());
      return proto::exit_config;
    }
  op::harvest_settings harvest;
  harvest.results_dir = env("AIPERF_RESULTS_DIR").value_or("/data");
  harvest.retry_delay = std::chrono::milliseconds{static_cast<std::int64_t>(*retry_delay * 1000)};
  harvest.max_retries = static_cast<int>(*retries);
  harvest.retain_runs = static_cast<int>(*retain);
  harvest.ttl_days = static_cast<int>(*ttl_days);
  auto results_port = port_from(env, o.results_port, "AIPERF_RESULTS_SERVER_PORT", 8081);
  auto metrics_port = port_from(env, o.metrics_port, "AIPERF_METRICS_PORT", 9090);
  for (const auto* read : {&results_port, &metrics_port})
    if (!*read) {
      std::fprintf(stderr, "error: %s\n", error_message(read->error()).c_str());
      return proto::exit_config;
    }
  auto client_cfg = k8s::client::load_config({o.kubeconfig, o.context},
                                             k8s::client::process_environment());
  if (!client_cfg) {
    std::fprintf(stderr, "error: %s\n", error_message(client_cfg.error()).c_str());
    return proto::exit_config;
  }
  auto origin = client_cfg->origin;
  std::string election_ns = o.election_namespace;
  if (election_ns.empty())
    election_ns = env("POD_NAMESPACE").value_or("");
  if (election_ns.empty())
    election_ns = client_cfg->namespace_name;

  // Installed before any thread starts, so every thread inherits the mask.
  system::stop_signal stop;
  caf::actor_system_config sys_cfg;
  commands::add_error_categories(sys_cfg);
  sys_cfg.set("scheduler.max-threads", 2);
  sys_cfg.set("logger.console", caf::atom("none"));
  caf::actor_system sys{sys_cfg};
  k8s::client::client_options copts;
  copts.user_agent = "aiperf-node/operator";
  served routes;
  routes.results_dir = harvest.results_dir;
  copts.metrics = routes.requests;
  auto api = k8s::client::spawn_client(sys, std::move(*client_cfg), std::move(copts));
  if (!api) {
    std::fprintf(stderr, "error: %s\n", error_message(api.error()).c_str());
    return proto::exit_config;
  }
  auto leading = routes.leading;
  std::vector<std::unique_ptr<http_server::server>> servers;
  for (std::uint16_t port : {o.health_port, *results_port, *metrics_port}) {
    http_server::options opts;
    opts.host = o.host;
    opts.port = port;
    auto s = std::make_unique<http_server::server>(opts, router(routes));
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
  rcfg.heartbeat_expiry_seconds = static_cast<std::int64_t>(*expiry);
  rcfg.pod_restart_threshold = static_cast<int>(*restarts);
  rcfg.env = [env](std::string_view name) { return env(name); };
  rcfg.harvester = op::spawn_http_harvester(sys, harvest);
  auto probe_ms = std::chrono::milliseconds{static_cast<std::int64_t>(*probe_timeout * 1000)};
  rcfg.prober = op::spawn_endpoint_prober(sys, probe_ms);
  // Resolution has its own timeouts (resolv.conf); allow it 5 s beyond.
  rcfg.probe_timeout = probe_ms + std::chrono::seconds{5};
  rcfg.metrics = routes.metrics;
  std::string scope = "every namespace";
  if (!o.watch_namespaces.empty()) {
    scope = "namespaces";
    for (const auto& ns : o.watch_namespaces)
      scope += " " + ns;
  }
  // The reconciler runs while this replica leads. Losing the lead is
  // fail-closed: the gate kills the reconciler at once (no further writes)
  // and the process ends with exit 1, to come back as a standby (as
  // controller-runtime exits on lost leadership).
  auto lost = std::make_shared<std::atomic<bool>>(false);
  auto metrics = routes.metrics;
  auto listener = op::spawn_leadership_gate(
      sys,
      [&sys, rcfg, leading, metrics] {
        leading->store(true);
        metrics->leader.store(1);
        std::printf("operator: leading; reconciling AIPerfJobs\n");
        std::fflush(stdout);
        return caf::actor_cast<caf::actor>(op::spawn_job_reconciler(sys, rcfg));
      },
      [leading, metrics, lost, &stop] {
        leading->store(false);
        metrics->leader.store(0);
        lost->store(true);
        stop.stop();
      });
  op::elector_actor elector;
  std::string election = "no leader election";
  if (o.leader_elect) {
    op::election_config ecfg;
    ecfg.api = *api;
    ecfg.namespace_name = election_ns;
    ecfg.identity = election_identity(env);
    ecfg.listener = listener;
    election = "leader election on Lease " + election_ns + "/" + ecfg.lease_name + " as "
               + ecfg.identity;
    elector = op::spawn_leader_elector(sys, std::move(ecfg));
  } else {
    caf::anon_send(listener, op::leading_atom::value, true);
  }
  // The documented first stdout line.
  std::printf("operator watching AIPerfJobs in %s (API server from %s; %s); /healthz on :%u "
              "and :%u, /metrics on :%u\n",
              scope.c_str(), origin.c_str(), election.c_str(), unsigned{o.health_port},
              unsigned{*results_port}, unsigned{*metrics_port});
  std::fflush(stdout);
  stop.wait();
  leading->store(false);
  // Stop writing first, then hand the Lease over (a standby takes it at its
  // next poll instead of waiting the lease out).
  caf::scoped_actor self{sys};
  caf::anon_send_exit(listener, caf::exit_reason::user_shutdown);
  self->wait_for(listener);
  if (elector && !lost->load())
    self->request(elector, std::chrono::seconds{5}, op::release_atom::value)
        .receive([](bool) {}, [](caf::error&) {});
  for (auto& s : servers)
    s->stop();
  caf::anon_send_exit(*api, caf::exit_reason::user_shutdown);
  if (lost->load()) {
    std::fprintf(stderr, "error: operator: lost the lead (the Lease, or the reconciler or "
                         "elector ended); exiting so that this replica restarts as a "
                         "standby\n");
    return proto::exit_internal;
  }
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
  cmd->add_option("--metrics-port", o->metrics_port,
                  "Port of /metrics (default AIPERF_METRICS_PORT, else 9090)");
  cmd->add_option("--host", o->host, "Address to bind (default 0.0.0.0)");
  cmd->add_flag("--leader-elect,!--no-leader-elect", o->leader_elect,
                "Lead through the Lease aiperf-operator-leader before reconciling, so replicas "
                "never overlap (default on)");
  cmd->add_option("--leader-election-namespace", o->election_namespace,
                  "Namespace of the Lease (default $POD_NAMESPACE, else the client's namespace)");
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
