#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "tools/commands/local_pods.hpp"

#include "tools/commands/endpoint_credentials.hpp"

#include "actors/benchmark/api_service/api_service.hpp"
#include "actors/benchmark/api_service/results_files.hpp"
#include "actors/benchmark/remote/controller.hpp"
#include "actors/benchmark/remote/layout.hpp"
#include "actors/benchmark/remote/ports_file.hpp"
#include "actors/benchmark/status_push/status_push.hpp"
#include "config/profile/profile_json.hpp"
#include "runtime/io/durable_file.hpp"
#include "runtime/log/log.hpp"
#include "runtime/system/child_process.hpp"
#include "runtime/system/owned_dir.hpp"
#include "runtime/system/env.hpp"
#include "runtime/zmq_bridge/bridge.hpp"

#include <caf/all.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <future>
#include <optional>
#include <thread>
#include <unistd.h>

namespace aiperf::local_pods {

namespace sc = system_controller;
namespace fs = std::filesystem;

namespace {

// The bad_env error of `var`: `message`, and the variable's env_error.
caf::error bad_env(const char* var, std::string message) {
  std::vector<system::env_error> errors{{var, message}};
  return make_error(system::errc::bad_env, std::move(message),
                    std::move(errors));
}

caf::expected<void> read_ms(const char* var, std::chrono::milliseconds& out) {
  const char* v = std::getenv(var);
  if (!v || !*v)
    return caf::unit;
  char* end = nullptr;
  auto n = std::strtoll(v, &end, 10);
  if (*end != '\0' || n <= 0)
    return bad_env(var, std::string{var} + "=" + v
                          + " is not a positive number of milliseconds");
  out = std::chrono::milliseconds{n};
  return caf::unit;
}

/// A private directory for IPC sockets, the exported dataset, staged RAW
/// parts and the run file; removed at the end. Short path: Unix socket
/// paths are limited to 107 bytes.
struct child_slot {
  std::string pod;
  std::optional<system::child_process> proc;
  std::optional<system::exit_status> status;
  bool reported = false;
};

} // namespace

caf::expected<void> apply_env(controller_options& opts) {
  constexpr const char* threshold
    = "AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT";
  if (const char* v = std::getenv(threshold); v && *v) {
    char* end = nullptr;
    auto x = std::strtod(v, &end);
    if (*end != '\0' || !(x >= 0 && x <= 100))
      return bad_env(threshold, std::string{threshold} + "=" + v
                                  + " must be a percentage between 0 and 100");
    opts.abort_threshold_percent = x;
  }
  if (const char* v = std::getenv("AIPERF_K8S_PORTS_FILE"); v && *v)
    opts.ports_file = v;
  constexpr const char* push_interval = "AIPERF_K8S_CONTROLLER_HEARTBEAT_INTERVAL_SECONDS";
  if (const char* v = std::getenv(push_interval); v && *v) {
    char* end = nullptr;
    auto x = std::strtod(v, &end);
    if (*end != '\0' || !(x > 0 && x <= 3600))
      return bad_env(push_interval, std::string{push_interval} + "=" + v
                                      + " must be a number of seconds in (0, 3600]");
    opts.status_push_interval = std::chrono::milliseconds{static_cast<std::int64_t>(x * 1000)};
  }
  if (auto read = read_ms("AIPERF_REGISTRATION_TIMEOUT_MS",
                          opts.registration_timeout);
      !read)
    return read;
  return read_ms("AIPERF_HEARTBEAT_TIMEOUT_MS", opts.heartbeat_timeout);
}

std::vector<std::pair<std::string, std::string>>
secret_env(const config::profile_config& cfg) {
  return endpoint_credentials::child_env(cfg);
}

namespace {

/// Starts one worker process per pod, from this (the main) thread: they die
/// with it. A child that cannot start gets an empty slot; its services never
/// register and the registration deadline names them.
std::vector<child_slot> spawn_children(const config::profile_config& cfg,
                                       const controller_options& opts,
                                       const remote::pod_layout& layout,
                                       const zmq_bridge::bound_endpoints& ep,
                                       const fs::path& run_file, const std::string& run_id,
                                       std::uint16_t api_port) {
  auto logger = log::get("controller");
  const auto& use = opts.ipc ? ep.ipc : ep.tcp;
  std::vector<child_slot> children;
  for (std::uint32_t p = 0; p < layout.pods; ++p) {
    system::spawn_options so;
    so.args = {"service",
               "--role", "worker",
               "--run-config", run_file.string(),
               "--run-id", run_id,
               "--pod-index", std::to_string(p),
               "--control-endpoint", use.control,
               "--credit-endpoint", use.credit,
               "--credit-return-endpoint", use.credit_return,
               "--records-endpoint", use.records,
               "--api-host", opts.bind_host == "0.0.0.0" ? "127.0.0.1" : opts.bind_host,
               "--api-port", std::to_string(api_port),
               "--local-clock"};
    so.env = secret_env(cfg);
    for (auto& kv : opts.child_env)
      so.env.push_back(kv);
    so.stdout_mode = system::stdio_mode::discard;
    auto started = system::child_process::spawn(so);
    child_slot slot;
    slot.pod = remote::pod_name(p);
    if (!started) {
      logger->error("cannot start {}: {}", slot.pod, error_message(started.error()));
    } else {
      slot.proc = std::move(*started);
      logger->debug("started {} (pid {})", slot.pod, slot.proc->pid());
    }
    children.push_back(std::move(slot));
  }
  return children;
}

/// Asks for the run's result from a helper actor, so this thread stays free
/// to reap children (and report the ones that die) while the run goes on.
sc::run_result await_result(caf::actor_system& sys, sc::system_controller_actor controller,
                            std::chrono::milliseconds whole_run,
                            std::vector<child_slot>& children, remote::run_monitor& monitor) {
  auto logger = log::get("controller");
  std::promise<sc::run_result> done;
  auto outcome = done.get_future();
  sys.spawn([controller, whole_run, &done](caf::event_based_actor* self) {
    self->request(controller, whole_run, proto::start_atom::value)
      .then([&done](sc::run_result& r) { done.set_value(std::move(r)); },
            [&done, whole_run](caf::error& err) {
              sc::run_result r;
              r.exit_code = sc::exit_internal;
              r.message = error_message(benchmark::name_timeout(
                std::move(err), "system_controller", "start (the whole run)", whole_run));
              done.set_value(std::move(r));
            });
  });
  auto reap = [&] {
    for (auto& c : children) {
      if (!c.proc || c.reported)
        continue;
      if (!c.status)
        c.status = c.proc->try_wait();
      // The group exists once the dataset is ready; a child that died
      // before that fails registration when its deadline passes.
      auto g = monitor.group();
      if (!c.status || !g)
        continue;
      c.reported = true;
      auto why = "worker process " + std::to_string(c.proc->pid()) + " " + c.status->describe();
      logger->warn("{}: {}", c.pod, why);
      caf::anon_send(g, remote::pod_lost_atom::value, c.pod, why);
    }
  };
  while (outcome.wait_for(std::chrono::milliseconds{50}) != std::future_status::ready)
    reap();
  return outcome.get();
}

/// The shutdown broadcast, the children's exit (killed after 10 s), then the
/// ROUTER goes and the handle cycles (monitor <-> controller, bridge routes
/// <-> group) break so the actor system can wind down.
void tear_down(zmq_bridge::bridge& bridge, std::vector<child_slot>& children,
               remote::run_monitor& monitor) {
  auto logger = log::get("controller");
  (void) bridge.broadcast(zmq_bridge::channel::control, proto::shutdown{"run complete", 0},
                          "controller");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  for (auto& c : children) {
    if (!c.proc)
      continue;
    while (!c.proc->reaped() && std::chrono::steady_clock::now() < deadline)
      if (!c.proc->try_wait())
        std::this_thread::sleep_for(std::chrono::milliseconds{10});
    if (!c.proc->reaped()) {
      logger->warn("{} did not exit after the shutdown: killing it", c.pod);
      c.proc->kill();
      c.proc->wait();
    }
  }
  bridge.stop();
  for (auto t : {proto::msg_type::credit_return_batch, proto::msg_type::metric_record_batch,
                 proto::msg_type::command, proto::msg_type::worker_connected,
                 proto::msg_type::register_service, proto::msg_type::heartbeat,
                 proto::msg_type::ack})
    bridge.route(t, caf::actor{});
  bridge.set_failure_sink(caf::actor{});
  monitor.set_controller(caf::actor{});
  monitor.set_group(caf::actor{});
}

/// Lost pods decide the exit code: beyond the threshold the cancelled run
/// is exit 6 (pods lost), within it a completed run is exit 5 (degraded);
/// the message names the lost pods.
void judge_pod_losses(sc::run_result& result, const remote::run_monitor& monitor,
                      const remote::pod_layout& layout, double threshold_percent) {
  auto lost = monitor.pods_lost.load();
  std::string names;
  for (auto& pod : monitor.lost_pods())
    names += (names.empty() ? "" : ", ") + pod;
  auto share = std::to_string(lost) + " of " + std::to_string(layout.pods)
               + " worker pods were lost (" + names + ")";
  if (monitor.aborted && result.exit_code == sc::exit_interrupted) {
    result.exit_code = sc::exit_pods_lost;
    result.message = share + ", above AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT="
                     + fmt::format("{:g}", threshold_percent)
                     + "; the run was aborted (exports marked was_cancelled)";
  } else if (lost > 0 && result.exit_code == sc::exit_ok) {
    result.exit_code = sc::exit_degraded;
    result.message = share + "; the run went on degraded "
                             "(their in-flight requests are WorkerLost errors)";
  }
}

/// The ready marker, last, once the run's summary export exists (a run
/// that failed before exporting has no results to announce); a cancelled
/// or aborted run's marker says so. A marker that cannot be written fails
/// the run: readers would wait for it forever.
void mark_results_ready(sc::run_result& result, const fs::path& artifact_dir) {
  std::error_code ec;
  if (!fs::is_regular_file(artifact_dir / "profile_export_aiperf.json", ec))
    return;
  bool cancelled = result.exit_code == sc::exit_interrupted
                   || result.exit_code == sc::exit_terminated
                   || result.exit_code == sc::exit_hangup
                   || result.exit_code == sc::exit_pods_lost;
  if (auto done = api_service::write_ready_marker(artifact_dir, cancelled); !done) {
    log::get("controller")->error("results-ready marker: {}", error_message(done.error()));
    if (result.exit_code == sc::exit_ok || result.exit_code == sc::exit_degraded) {
      result.exit_code = sc::exit_internal;
      result.message = "cannot write " + std::string{api_service::ready_marker_name} + " in "
                       + artifact_dir.string() + ": " + error_message(done.error());
    }
  }
}

/// The final status push and, with results, the benchmark-complete
/// annotation the operator harvests on; waited for (bounded), so the
/// operator hears of the end before the pod lingers or exits.
void push_final(caf::actor_system& sys, const status_push::pusher_actor& pusher,
                const sc::run_result& result, const fs::path& artifact_dir) {
  status_push::final_report f;
  f.exit_code = result.exit_code;
  f.exit_reason = result.message;
  std::error_code ec;
  f.results_exported
      = fs::is_regular_file(artifact_dir / std::string{api_service::ready_marker_name}, ec);
  // A failure of the controller itself, not of the benchmark: no results
  // to salvage, and the operator must not wait for them.
  if (!f.results_exported && result.exit_code != sc::exit_ok)
    f.controller_failure = result.message.empty()
                               ? "the controller exited with code "
                                     + std::to_string(result.exit_code)
                               : result.message;
  caf::scoped_actor self{sys};
  self->request(pusher, std::chrono::seconds{30}, status_push::final_atom::value, std::move(f))
      .receive(
          [](bool written) {
            if (!written)
              log::get("controller")->warn("the AIPerfJob was not told that the run ended");
          },
          [](caf::error& err) {
            log::get("controller")->warn("final status push: {}", error_message(err));
          });
}

} // namespace

sc::run_result run_controller(caf::actor_system& sys, const config::profile_config& cfg,
                              sc::run_plan plan, controller_options opts,
                              const std::function<void(caf::actor)>& publish) {
  sc::run_result result;
  auto fail = [&](int code, std::string msg) {
    result.exit_code = code;
    result.message = std::move(msg);
    return result;
  };
  auto made = remote::make_layout(plan.num_workers, plan.num_processors,
                                  static_cast<std::uint32_t>(cfg.worker_pods));
  if (!made)
    return fail(sc::exit_config, error_message(made.error()));
  auto layout = *made;
  // A controller in a pod follows its worker pods: the start waits until
  // they are Ready, and a deleted or restarted pod is lost.
  std::optional<pod_watch::watch_config> watch;
  if (!opts.spawn_children) {
    auto found = pod_watch::in_cluster_watch(sys);
    if (!found)
      return fail(sc::exit_config, error_message(found.error()));
    watch = std::move(*found);
  }
  // In a pod the run's progress goes into its JobSet's annotations and, in
  // operator mode (a job UID), into its AIPerfJob's status.
  std::optional<status_push::pusher_actor> pusher;
  const char* job_uid = std::getenv("AIPERF_JOB_UID");
  bool operator_mode = job_uid != nullptr && *job_uid != '\0';
  if (watch) {
    status_push::pusher_config pcfg;
    pcfg.api = watch->api;
    pcfg.namespace_name = watch->namespace_name;
    pcfg.job_name = watch->job_id;
    pcfg.job_uid = operator_mode ? job_uid : "";
    pcfg.heartbeat_interval = opts.status_push_interval;
    pusher = status_push::spawn_pusher(sys, std::move(pcfg));
  }
  // Every pod runs at least one processor, which may exceed the total.
  plan.num_processors = layout.pods * layout.processors_per_pod;
  // The run's work directory; one a killed controller left is reclaimed.
  auto made_dir = system::owned_dir::make("/tmp", "aiperf-pods-");
  if (!made_dir)
    return fail(sc::exit_internal, error_message(made_dir.error()));
  const auto& dir = made_dir->path();
  auto run_file = dir / "run.json";
  if (auto done = io::atomic_write_file(run_file, config::to_json(cfg, true)); !done)
    return fail(sc::exit_internal, error_message(done.error()));
  // The control ROUTER listens before any service starts.
  zmq_bridge::bridge_config bcfg;
  bcfg.role = zmq_bridge::role::controller;
  bcfg.bind_host = opts.bind_host;
  bcfg.ports = opts.ports;
  if (opts.ipc)
    bcfg.ipc_dir = dir.string();
  auto bridge = std::make_shared<zmq_bridge::bridge>(bcfg);
  if (auto started = bridge->start(); !started)
    return fail(sc::exit_config, "bridge: " + error_message(started.error()));
  api_service::api_config acfg;
  acfg.host = opts.bind_host;
  acfg.port = opts.ports.api;
  acfg.dataset_dir = dir / "dataset";
  acfg.artifact_dir = plan.artifact_dir;
  acfg.raw_dir = dir / "raw";
  auto api = api_service::spawn_api_service(sys, acfg);
  if (!api) {
    bridge->stop();
    return fail(sc::exit_config, "api_service: " + error_message(api.error()));
  }
  if (!opts.ports_file.empty()) {
    auto ports = remote::bound_ports(bridge->bound(), api->port);
    auto written = ports ? remote::write_ports_file(opts.ports_file, *ports)
                         : caf::expected<void>{std::move(ports.error())};
    if (!written) {
      caf::anon_send(api->actor, proto::stop_atom::value);
      bridge->stop();
      return fail(sc::exit_config, "AIPERF_K8S_PORTS_FILE: " + error_message(written.error()));
    }
  }
  caf::anon_send(api->actor, api_service::ready_atom::value, true);
  auto monitor = std::make_shared<remote::run_monitor>();
  remote::remote_group_config gcfg;
  gcfg.bridge = bridge;
  gcfg.layout = layout;
  gcfg.dataset_dir = acfg.dataset_dir;
  gcfg.api = api->actor;
  gcfg.registration_timeout = opts.registration_timeout;
  gcfg.heartbeat_timeout = opts.heartbeat_timeout;
  gcfg.abort_threshold_percent = opts.abort_threshold_percent;
  gcfg.monitor = monitor;
  gcfg.await_pods_ready = watch.has_value();
  if (pusher)
    gcfg.on_status = [p = *pusher, layout](const api_service::pods_status& s) {
      caf::anon_send(p, status_push::workers_atom::value,
                     status_push::worker_counts_of(s, layout.workers_per_pod,
                                                   layout.processors_per_pod));
    };
  gcfg.watch = std::move(watch);
  // /api/progress: what the system_controller reports.
  plan.on_progress = [a = api->actor, pusher](const sc::run_progress& p) {
    if (pusher) {
      status_push::progress sp;
      sp.state = p.state;
      sp.phase = proto::to_string(p.timing.phase);
      sp.sent = p.timing.sent;
      sp.completed = p.timing.returned;
      sp.in_flight = p.timing.in_flight;
      sp.total = p.timing.target;
      sp.errors = p.errors;
      sp.requests_per_second = p.requests_per_second;
      caf::anon_send(*pusher, status_push::progress_atom::value, std::move(sp));
    }
    api_service::progress out;
    out.state = p.state;
    if (p.state != "configuring")
      out.phase = proto::to_string(p.timing.phase);
    out.sent = p.timing.sent;
    out.completed = p.timing.returned;
    out.in_flight = p.timing.in_flight;
    out.errors = p.errors;
    out.total = p.timing.target;
    out.requests_per_second = p.requests_per_second;
    caf::anon_send(a, api_service::progress_atom::value, std::move(out));
  };
  auto run_id = plan.run_id;
  const fs::path artifact_dir = plan.artifact_dir;
  auto whole_run = plan.timeouts.whole_run();
  auto controller = sc::spawn_system_controller(sys, std::move(plan), {},
                                                remote::make_remote_group_factory(gcfg));
  monitor->set_controller(caf::actor_cast<caf::actor>(controller));
  publish(caf::actor_cast<caf::actor>(controller));
  // POST /api/cancel (kube cancel) stops the run as Ctrl+C does.
  api->board->on_cancel([h = caf::actor_cast<caf::actor>(controller)] {
    caf::anon_send(h, proto::cancel_atom::value);
  });
  std::vector<child_slot> children;
  if (opts.spawn_children)
    children = spawn_children(cfg, opts, layout, bridge->bound(), run_file, run_id, api->port);
  result = await_result(sys, controller, whole_run, children, *monitor);
  publish(caf::actor{});
  api->board->on_cancel(nullptr);
  tear_down(*bridge, children, *monitor);
  caf::anon_send_exit(controller, caf::exit_reason::user_shutdown);
  judge_pod_losses(result, *monitor, layout, opts.abort_threshold_percent);
  mark_results_ready(result, artifact_dir);
  if (pusher && operator_mode)
    push_final(sys, *pusher, result, artifact_dir);
  api->board->set_finished();
  if (opts.after_results)
    opts.after_results(result, api->board);
  if (pusher)
    caf::anon_send_exit(*pusher, caf::exit_reason::user_shutdown);
  caf::anon_send(api->actor, proto::stop_atom::value);
  return result;
}

} // namespace aiperf::local_pods
