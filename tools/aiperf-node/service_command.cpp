#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "tools/aiperf-node/service_command.hpp"

#include "tools/aiperf-node/http_io.hpp"
#include "tools/aiperf-node/profile_command.hpp"

#include "actors/benchmark/api_service/api_service.hpp"
#include "actors/benchmark/dataset/dataset_file.hpp"
#include "actors/benchmark/remote/http_fetch.hpp"
#include "actors/benchmark/remote/layout.hpp"
#include "actors/benchmark/remote/pod.hpp"
#include "actors/benchmark/system_controller/system_controller.hpp"
#include "actors/benchmark/worker_group_manager/worker_group_manager.hpp"
#include "config/profile/profile_json.hpp"
#include "runtime/http/client.hpp"
#include "runtime/log/log.hpp"
#include "runtime/system/env.hpp"
#include "runtime/system/node.hpp"
#include "runtime/system/node_supervisor.hpp"
#include "runtime/time/skewed_clock.hpp"
#include "runtime/zmq_bridge/bridge.hpp"
#include "tools/aiperf-node/local_pods.hpp"

#include <caf/all.hpp>

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace aiperf::service_command {

namespace {

namespace sc = system_controller;
namespace fs = std::filesystem;
using zmq_bridge::channel;

struct service_options {
  std::string role;
  std::string run_config;
  std::string run_id;
  std::optional<std::uint32_t> pod_index;
  zmq_bridge::endpoints connect;
  std::string api_host;
  std::optional<std::uint16_t> api_port;
  std::optional<std::uint16_t> health_port;
  bool local_clock = false;
};

/// Reads and parses the run file; secrets come from AIPERF_INJECTED_*.
/// The bridge's ports from the ones read_pod_env parsed.
zmq_bridge::port_config ports_of(const system::pod_ports& p) {
  return {p.api, p.health, p.control, p.credit, p.credit_return, p.records};
}

std::optional<std::string> load_run_file(const std::string& path,
                                         config::profile_config& cfg) {
  std::ifstream in{path};
  if (!in)
    return "--run-config: cannot read " + path;
  std::stringstream ss;
  ss << in.rdbuf();
  auto parsed = config::from_json(ss.str());
  if (!parsed)
    return "--run-config " + path + ": "
           + config::format_error(parsed.error());
  cfg = std::move(*parsed);
  auto declared = local_pods::declared_secrets(cfg);
  auto secrets = system::read_secrets(declared, system::process_env());
  if (!secrets)
    return "secrets: " + error_message(secrets.error());
  if (cfg.api_key)
    cfg.api_key = *secrets->find("API_KEY");
  for (std::size_t i = 0; i < cfg.headers.size(); ++i)
    cfg.headers[i].value
      = *secrets->find("HEADER_" + std::to_string(i));
  return std::nullopt;
}

/// Fetches one dataset file, retrying while the controller has not exported
/// it yet (404) or is not listening yet; dataset::errc::io when it cannot.
caf::expected<void> download(const remote::api_endpoint& api,
                             std::string_view name, const fs::path& to,
                             std::chrono::seconds budget) {
  auto deadline = std::chrono::steady_clock::now() + budget;
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = remote::http_get(api, "/api/dataset/" + std::string{name},
                              std::chrono::seconds{60});
    if (r.ok()) {
      std::ofstream out{to, std::ios::binary};
      out.write(r.body.data(), static_cast<std::streamsize>(r.body.size()));
      out.close();
      if (!out)
        return make_error(dataset::errc::io, "cannot write " + to.string());
      return caf::unit;
    }
    last = r.error.empty() ? "HTTP " + std::to_string(r.status) : r.error;
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
  return make_error(dataset::errc::io,
                    "dataset download of " + std::string{name} + " from "
                      + api.host + ":" + std::to_string(api.port)
                      + " failed for " + std::to_string(budget.count())
                      + " s: " + last);
}

int run_worker(service_options o) {
  auto logger = log::get("pod");
  // A child of `profile --worker-pods` shares its terminal's process group:
  // Ctrl+C reaches it too, but the parent coordinates the cancellation (it
  // cancels our credits and then sends the shutdown).
  if (o.local_clock)
    std::signal(SIGINT, SIG_IGN);
  auto fail = [&](int code, const std::string& msg) {
    std::fprintf(stderr, "error: %s\n", msg.c_str());
    return code;
  };
  config::profile_config cfg;
  if (auto err = load_run_file(o.run_config, cfg))
    return fail(sc::exit_config, *err);
  (void) log::set_level(cfg.log_level);
  auto env = system::read_pod_env(system::process_env());
  if (!env)
    return fail(sc::exit_config, error_message(env.error()));
  if (!o.pod_index)
    o.pod_index = env->pod_index;
  if (!o.pod_index)
    return fail(sc::exit_config,
                "no pod index: pass --pod-index or set AIPERF_POD_INDEX");
  if (o.run_id.empty())
    o.run_id = env->job_id.value_or("");
  if (o.run_id.empty())
    return fail(sc::exit_config,
                "no run id: pass --run-id or set AIPERF_JOB_ID");
  auto pod = remote::pod_name(*o.pod_index);

  // A pod reaches the controller over TCP only when told where it is.
  remote::api_endpoint api;
  if (auto& host = env->controller_host) {
    auto ports = ports_of(env->ports);
    o.connect = zmq_bridge::select_worker_endpoints(host, ports, {});
    api.host = *host;
    api.port = ports.api;
    if (!o.health_port)
      o.health_port = ports.health;
  }
  if (!o.api_host.empty())
    api.host = o.api_host;
  if (o.api_port)
    api.port = *o.api_port;
  for (auto ch : {channel::control, channel::credit, channel::credit_return,
                  channel::records})
    if (o.connect[ch].empty())
      return fail(sc::exit_config,
                  std::string{"no endpoint for the "} + zmq_bridge::to_string(ch)
                    + " channel: set AIPERF_K8S_ZMQ_CONTROLLER_HOST or pass "
                      "the --*-endpoint flags");

  auto plan = sc::make_run_plan(cfg, o.run_id, "{}");
  auto made = remote::make_layout(plan.num_workers, plan.num_processors,
                                  static_cast<std::uint32_t>(cfg.worker_pods));
  if (!made)
    return fail(sc::exit_config, error_message(made.error()));
  auto layout = *made;
  if (*o.pod_index >= layout.pods)
    return fail(sc::exit_config, "pod index " + std::to_string(*o.pod_index)
                                   + " is outside this run's "
                                   + std::to_string(layout.pods) + " pods");
  auto clock = time::skewed_clock::from_env();
  if (!clock)
    return fail(sc::exit_config, error_message(clock.error()));

  // Scratch space: the dataset and the RAW parts before upload.
  std::string tmpl = "/tmp/aiperf-" + pod + "-XXXXXX";
  if (!mkdtemp(tmpl.data()))
    return fail(sc::exit_internal, "cannot create a scratch dir in /tmp");
  struct cleanup {
    fs::path p;
    ~cleanup() {
      std::error_code ec;
      fs::remove_all(p, ec);
    }
  } scratch{tmpl};

  zmq_bridge::bridge_config bcfg;
  bcfg.role = zmq_bridge::role::worker;
  bcfg.identity = pod;
  bcfg.connect = o.connect;
  auto bridge = std::make_shared<zmq_bridge::bridge>(bcfg);
  if (auto err = bridge->start())
    return fail(sc::exit_config, "bridge: " + *err);

  // Once per pod: download, decompress next to the .zst files, map.
  for (auto name : {dataset::index_zst_file_name, dataset::data_zst_file_name})
    if (auto got = download(api, name, scratch.p / std::string{name},
                            std::chrono::seconds{120});
        !got)
      return fail(sc::exit_internal, error_message(got.error()));
  auto imported = dataset::import_compressed(scratch.p);
  if (!imported)
    return fail(sc::exit_internal,
                "dataset import: " + error_message(imported.error()));
  auto data = std::make_shared<const dataset::dataset>(std::move(*imported));
  logger->debug("{}: dataset with {} conversations", pod,
                data->conversations.size());

  profile_command::http_io io{cfg};

  caf::actor_system_config sys_cfg;
  if (auto applied = profile_command::apply_scheduler(sys_cfg, cfg, &io);
      !applied)
    return fail(sc::exit_config, error_message(applied.error()));

  int exit_code = 0;
  std::string exit_reason;
  {
    caf::actor_system sys{sys_cfg};
    caf::scoped_actor self{sys};
    // The pod's probes: /healthz while the process runs, /readyz once
    // every service registered.
    api_service::api_service_actor health;
    if (o.health_port) {
      api_service::api_config hcfg;
      hcfg.host = "0.0.0.0";
      hcfg.port = *o.health_port;
      auto h = api_service::spawn_api_service(sys, hcfg);
      if (!h.ok())
        return fail(sc::exit_config, "--health-port: " + h.error);
      health = h.actor;
      logger->info("{}: health probes on port {}", pod, h.port);
    }
    auto timing = remote::spawn_remote_timing(sys, bridge, pod);
    auto records = remote::spawn_remote_records(sys, bridge, pod);
    worker_group_manager::group_config g;
    g.worker = plan.worker;
    g.num_workers = layout.workers_per_pod;
    g.worker_index_offset = layout.worker_index(*o.pod_index, 0);
    g.id_prefix = pod + "/";
    g.processor = plan.processor;
    g.num_processors = layout.processors_per_pod;
    if (plan.worker.export_raw)
      g.raw_part_prefix = (scratch.p / "raw.part").string();
    g.io = io.slots();
    g.data = data;
    g.timing = timing;
    g.records = records;
    auto record_offset = std::make_shared<std::atomic<std::int64_t>>(0);
    g.wrap_record_sink = [record_offset](caf::actor_system& s,
                                         proto::record_processor_actor p) {
      return remote::spawn_offset_stamper(s, std::move(p), record_offset);
    };
    auto group = worker_group_manager::spawn_worker_group_manager(sys, g);
    worker_group_manager::group_handles handles;
    self->request(group, caf::infinite, caf::get_atom::value)
      .receive([&](worker_group_manager::group_handles& h) { handles = h; },
               [&](caf::error& err) {
                 exit_code = sc::exit_internal;
                 exit_reason = "worker group: " + sys.render(err);
               });

    std::promise<std::pair<int, std::string>> exit_promise;
    auto exit_future = exit_promise.get_future();
    auto once = std::make_shared<std::once_flag>();
    remote::pod_inbox_config icfg;
    icfg.bridge = bridge;
    icfg.pod = pod;
    for (std::uint32_t i = 0; i < handles.workers.size(); ++i)
      icfg.workers.emplace(remote::worker_service_id(*o.pod_index, i),
                           handles.workers[i]);
    icfg.processors = handles.processors;
    icfg.export_raw = plan.worker.export_raw;
    icfg.api = api;
    icfg.clock = *clock;
    icfg.local_clock = o.local_clock;
    icfg.record_offset = record_offset;
    if (const char* v = std::getenv("AIPERF_CONTROLLER_TIMEOUT_MS"); v && *v)
      icfg.controller_timeout = std::chrono::milliseconds{std::atoll(v)};
    if (const char* v = std::getenv("AIPERF_TEST_RAW_UPLOAD_NAME"))
      icfg.raw_upload_name = v;
    icfg.on_exit = [&exit_promise, once](int code, std::string why) {
      std::call_once(*once, [&] {
        exit_promise.set_value({code, std::move(why)});
      });
    };
    auto inbox = remote::spawn_pod_inbox(sys, icfg);
    remote::route_pod_inbox(*bridge, inbox);
    // Fail-closed: a worker or processor that fails takes the pod down (the
    // controller then reaps the pod's credits as lost) instead of leaving a
    // half-working pod the controller cannot see into.
    auto supervisor = sys.spawn(system::node_supervisor,
                                system::supervision_mode::fail_closed,
                                system::reaper_actor{});
    auto adopt = [&](const auto& h, std::string name) {
      self->send(supervisor, system::adopt_atom::value,
                 caf::actor_cast<caf::actor>(h), std::move(name));
    };
    adopt(group, "worker_group_manager");
    adopt(timing, "remote_timing");
    adopt(records, "remote_records");
    adopt(inbox, "pod_inbox");
    for (std::size_t i = 0; i < handles.workers.size(); ++i)
      adopt(handles.workers[i], "worker_" + std::to_string(i));
    for (std::size_t i = 0; i < handles.processors.size(); ++i)
      adopt(handles.processors[i], "record_processor_" + std::to_string(i));
    self->monitor(supervisor);

    if (exit_code == 0) {
      // Dispatchable only once the return path provably has a peer.
      bridge->probe_return_channel(remote::worker_service_id(*o.pod_index, 0),
                                   {}, caf::actor_cast<caf::actor>(self));
      self->receive(
        [&](zmq_bridge::probe_result& r) {
          if (!r.warning.empty())
            logger->warn("{}: return channel probe: {}", pod, r.warning);
        },
        caf::after(std::chrono::seconds{30}) >> [&] {
          logger->warn("{}: return channel probe did not answer", pod);
        });
      auto wall = [&] {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count()
               + icfg.clock.skew_ns();
      };
      for (std::uint64_t seq = 0; seq < 5; ++seq)
        (void) bridge->send(channel::credit, proto::time_ping{seq, wall()}, pod);
      auto reg = [&](std::string id, const char* type) {
        proto::register_service r{std::move(id), type, pod,
                                  static_cast<std::uint32_t>(getpid())};
        (void) bridge->send(channel::control, r, pod);
      };
      reg(remote::group_service_id(*o.pod_index), "worker_group_manager");
      for (std::uint32_t i = 0; i < layout.workers_per_pod; ++i)
        reg(remote::worker_service_id(*o.pod_index, i), "worker");
      for (std::uint32_t i = 0; i < layout.processors_per_pod; ++i)
        reg(remote::processor_service_id(*o.pod_index, i), "record_processor");
      logger->debug("{}: registered", pod);
      if (health)
        self->send(health, api_service::ready_atom::value, true);
      // Wait for the controller's shutdown, or for the group to fail.
      bool group_down = false;
      while (exit_future.wait_for(std::chrono::milliseconds{0})
               != std::future_status::ready
             && !group_down)
        self->receive(
          [&](caf::down_msg& d) {
            group_down = true;
            exit_code = system::exit_code_for(d.reason);
            if (exit_code == 0)
              exit_code = sc::exit_internal;
            exit_reason = "a service failed: " + sys.render(d.reason);
          },
          caf::after(std::chrono::milliseconds{100}) >> [] {});
      if (!group_down) {
        auto [code, why] = exit_future.get();
        exit_code = code;
        exit_reason = why;
      }
    }
    self->send(supervisor, proto::stop_atom::value);
    if (health)
      self->send(health, proto::stop_atom::value);
    // Adopted or not (a failed group start), everything goes.
    for (auto h : {caf::actor_cast<caf::actor>(group),
                   caf::actor_cast<caf::actor>(timing),
                   caf::actor_cast<caf::actor>(records), inbox})
      self->send_exit(h, caf::exit_reason::user_shutdown);
    io.shutdown_clients();
    bridge->stop();
  }
  io.stop();
  if (exit_code != 0)
    std::fprintf(stderr, "error: %s: %s\n", pod.c_str(), exit_reason.c_str());
  return exit_code;
}

int run_controller(const service_options& o) {
  config::profile_config cfg;
  if (auto err = load_run_file(o.run_config, cfg)) {
    std::fprintf(stderr, "error: %s\n", err->c_str());
    return sc::exit_config;
  }
  (void) log::set_level(cfg.log_level);
  local_pods::controller_options opts;
  opts.spawn_children = false;
  opts.bind_host = "0.0.0.0";
  auto env = system::read_pod_env(system::process_env());
  if (!env) {
    std::fprintf(stderr, "error: %s\n", error_message(env.error()).c_str());
    return sc::exit_config;
  }
  opts.ports = ports_of(env->ports);
  if (auto applied = local_pods::apply_env(opts); !applied) {
    std::fprintf(stderr, "error: %s\n",
                 error_message(applied.error()).c_str());
    return sc::exit_config;
  }
  auto run_id = !o.run_id.empty()  ? o.run_id
                : env->job_id ? *env->job_id
                                    : sc::make_uuid();
  auto plan = sc::make_run_plan(cfg, run_id, config::to_json(cfg, true));
  plan.show_progress = plan.show_progress && isatty(STDERR_FILENO);
  std::error_code ec;
  fs::create_directories(plan.artifact_dir, ec);
  if (ec) {
    std::fprintf(stderr, "error: --output-artifact-dir: cannot create %s: %s\n",
                 plan.artifact_dir.c_str(), ec.message().c_str());
    return sc::exit_config;
  }
  caf::actor_system_config sys_cfg;
  if (auto applied = profile_command::apply_scheduler(sys_cfg, cfg, nullptr);
      !applied) {
    std::fprintf(stderr, "error: %s\n",
                 error_message(applied.error()).c_str());
    return sc::exit_config;
  }
  caf::actor handle;
  std::mutex mtx;
  system::signal_watcher signals{[&](int) {
    std::lock_guard<std::mutex> guard{mtx};
    if (handle)
      caf::anon_send(handle, proto::cancel_atom::value);
  }};
  sc::run_result result;
  {
    caf::actor_system sys{sys_cfg};
    result = local_pods::run_controller(sys, cfg, std::move(plan), opts,
                                        [&](caf::actor h) {
                                          std::lock_guard<std::mutex> g{mtx};
                                          handle = std::move(h);
                                        });
  }
  profile_command::print_result(result);
  return result.exit_code;
}

} // namespace

void add_subcommand(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
    "service", "Run one process of a distributed benchmark: the controller "
               "or a worker pod (started by `profile --worker-pods` or by "
               "the Kubernetes operator)");
  auto o = std::make_shared<service_options>();
  cmd->add_option("--role", o->role, "controller or worker")
    ->required()
    ->check(CLI::IsMember({"controller", "worker"}));
  cmd->add_option("--run-config", o->run_config,
                  "The run file (JSON configuration, no secrets)")
    ->required();
  cmd->add_option("--run-id", o->run_id,
                  "Run id shared by every process (default AIPERF_JOB_ID)");
  cmd->add_option("--pod-index", o->pod_index,
                  "Worker: this pod's index (default AIPERF_POD_INDEX)");
  cmd->add_option("--control-endpoint", o->connect.control,
                  "Worker: controller's control channel (ipc:// or tcp://)");
  cmd->add_option("--credit-endpoint", o->connect.credit,
                  "Worker: controller's credit channel");
  cmd->add_option("--credit-return-endpoint", o->connect.credit_return,
                  "Worker: controller's credit-return channel");
  cmd->add_option("--records-endpoint", o->connect.records,
                  "Worker: controller's records channel");
  cmd->add_option("--api-host", o->api_host,
                  "Worker: host of the controller API (default "
                  "AIPERF_K8S_ZMQ_CONTROLLER_HOST)");
  cmd->add_option("--api-port", o->api_port,
                  "Worker: port of the controller API (default "
                  "AIPERF_K8S_PORT_API)");
  cmd->add_option("--health-port", o->health_port,
                  "Worker: serve /healthz and /readyz here (0 = any free "
                  "port; default AIPERF_K8S_PORT_HEALTH in a pod, none "
                  "otherwise)");
  cmd->add_flag("--local-clock", o->local_clock,
                "Worker: started by `profile --worker-pods` on the "
                "controller's host (clock offset 0; SIGINT left to the "
                "parent)");
  cmd->callback([o, &exit_code] {
    try {
      exit_code = o->role == "worker" ? run_worker(*o) : run_controller(*o);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: internal: %s\n", e.what());
      exit_code = sc::exit_internal;
    }
  });
}

} // namespace aiperf::service_command
