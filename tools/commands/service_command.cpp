#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "tools/commands/service_command.hpp"

#include "tools/commands/http_io.hpp"
#include "tools/commands/profile_command.hpp"

#include "actors/benchmark/api_service/api_service.hpp"
#include "actors/benchmark/dataset/dataset_file.hpp"
#include "runtime/http_fetch/http_fetch.hpp"
#include "actors/benchmark/remote/layout.hpp"
#include "actors/benchmark/remote/pod.hpp"
#include "actors/benchmark/system_controller/system_controller.hpp"
#include "actors/benchmark/worker_group_manager/worker_group_manager.hpp"
#include "config/profile/profile_json.hpp"
#include "runtime/http/client.hpp"
#include "runtime/log/log.hpp"
#include "runtime/system/env.hpp"
#include "runtime/tokenizer/resolve.hpp"
#include "runtime/system/node.hpp"
#include "runtime/system/node_supervisor.hpp"
#include "runtime/system/owned_dir.hpp"
#include "runtime/time/skewed_clock.hpp"
#include "runtime/zmq_bridge/bridge.hpp"
#include "runtime/io/durable_file.hpp"
#include "tools/commands/endpoint_credentials.hpp"
#include "tools/commands/user_files.hpp"
#include "tools/commands/local_pods.hpp"

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

/// Reads and parses the run file; its credentials come from
/// AIPERF_INJECTED_* (endpoint_credentials.hpp). The local files the CLI
/// embedded (artifacts.user_files, user_files.hpp) are written out first
/// and the options pointed at them, so validation sees real paths; both
/// roles do it (worker pods count tokens with the tokenizer).
caf::expected<config::profile_config> load_run_file(const std::string& path) {
  std::ifstream in{path};
  if (!in)
    return make_error(benchmark::errc::invalid_config,
                      "--benchmark-run: cannot read " + path
                        + ": pass the run file (run_config.json) the controller wrote");
  std::stringstream ss;
  ss << in.rdbuf();
  auto text = ss.str();
  auto doc = k8s::json::parse(text, nullptr, false);
  if (!doc.is_discarded() && doc.is_object() && doc.contains("artifacts")) {
    const auto& artifacts = doc["artifacts"];
    if (artifacts.is_object() && artifacts.contains("user_files")) {
      auto files = artifacts["user_files"];
      auto done = user_files::materialize(
          files, fs::temp_directory_path() / "aiperf-user-files", doc);
      if (!done)
        return make_error(benchmark::errc::invalid_config,
                          "--benchmark-run " + path + ": " + error_message(done.error()));
    }
    doc.erase("artifacts");
    text = doc.dump();
  }
  return endpoint_credentials::load_run(text, system::process_env(),
                                        "--benchmark-run " + path);
}

/// Fetches one dataset file, retrying while the controller has not exported
/// it yet (404) or is not listening yet; dataset::errc::io when it cannot.
caf::expected<void> download(const http_fetch::endpoint& api,
                             std::string_view name, const fs::path& to,
                             std::chrono::milliseconds budget) {
  auto deadline = std::chrono::steady_clock::now() + budget;
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = http_fetch::get(api, "/api/dataset/" + std::string{name},
                              std::chrono::duration_cast<std::chrono::seconds>(budget)
                                + std::chrono::seconds{1});
    if (r.ok()) {
      if (auto done = io::atomic_write_file(to, r.body); !done)
        return make_error(dataset::errc::io, error_message(done.error()));
      return caf::unit;
    }
    last = r.error.empty() ? "HTTP " + std::to_string(r.status) : r.error;
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
  return make_error(dataset::errc::io,
                    "dataset download of " + std::string{name} + " from "
                      + api.host + ":" + std::to_string(api.port)
                      + " failed for " + std::to_string(budget.count())
                      + " ms (AIPERF_CONTROLLER_TIMEOUT_MS): " + last
                      + "; is the controller running and reachable there?");
}

/// What a worker pod knows before any of its actors starts.
struct worker_setup {
  config::profile_config cfg;
  std::uint32_t pod_index = 0;
  std::string pod;
  std::string run_id;
  http_fetch::endpoint api{"127.0.0.1", proto::default_port::api};
  zmq_bridge::endpoints connect;
  std::optional<std::uint16_t> health_port;
  bool local_clock = false;
  sc::run_plan plan;
  remote::pod_layout layout;
  time::skewed_clock clock;
  std::optional<std::string> raw_upload_name;
  /// AIPERF_CONTROLLER_TIMEOUT_MS: how long the pod waits for the
  /// controller once running (its heartbeats) and, when set, at start too.
  std::chrono::milliseconds controller_timeout{30'000};
  /// How long the pod retries the dataset download at start: 120 s (a
  /// controller pod may be scheduled after its workers), or
  /// AIPERF_CONTROLLER_TIMEOUT_MS when set.
  std::chrono::milliseconds startup_timeout{120'000};
};

/// Combines the flags, the run file and the pod's environment; a bad
/// combination is invalid_config naming the flag or variable to set.
caf::expected<worker_setup> resolve_worker(service_options o, const commands::test_seams& seams) {
  auto bad = [](std::string msg) {
    return make_error(benchmark::errc::invalid_config, std::move(msg));
  };
  auto cfg = load_run_file(o.run_config);
  if (!cfg)
    return std::move(cfg.error());
  (void) log::set_level(cfg->log_level);
  auto env = system::read_pod_env(system::process_env());
  if (!env)
    return std::move(env.error());
  worker_setup s;
  s.cfg = std::move(*cfg);
  if (!o.pod_index)
    o.pod_index = env->pod_index;
  if (!o.pod_index)
    return bad("no pod index: pass --pod-index or set AIPERF_POD_INDEX");
  s.pod_index = *o.pod_index;
  s.run_id = !o.run_id.empty() ? o.run_id : env->job_id.value_or("");
  if (s.run_id.empty())
    return bad("no run id: pass --run-id or set AIPERF_JOB_ID");
  s.pod = remote::pod_name(s.pod_index);
  // A pod reaches the controller over TCP only when told where it is. The
  // flags win; AIPERF_K8S_ZMQ_CONTROLLER_HOST fills what they leave out. A
  // DNS name (the headless service) stays a name: ZMQ and the HTTP client
  // resolve it when they connect, and again on each reconnect, so a pod
  // started before its controller's DNS record exists still finds it.
  s.connect = o.connect;
  s.health_port = o.health_port;
  if (auto& host = env->controller_host) {
    auto ports = env->ports;
    auto from_env = zmq_bridge::select_worker_endpoints(host, ports, {});
    for (auto ch : {channel::control, channel::credit, channel::credit_return, channel::records})
      if (s.connect[ch].empty())
        s.connect[ch] = from_env[ch];
    s.api.host = *host;
    s.api.port = ports.api;
    if (!s.health_port)
      s.health_port = ports.health;
  }
  if (!o.api_host.empty())
    s.api.host = o.api_host;
  if (o.api_port)
    s.api.port = *o.api_port;
  for (auto ch : {channel::control, channel::credit, channel::credit_return, channel::records})
    if (s.connect[ch].empty())
      return bad(std::string{"no endpoint for the "} + zmq_bridge::to_string(ch)
                 + " channel: set AIPERF_K8S_ZMQ_CONTROLLER_HOST or pass the --*-endpoint flags");
  s.plan = sc::make_run_plan(s.cfg, s.run_id, "{}");
  auto made = remote::make_layout(s.plan.num_workers, s.plan.num_processors,
                                  static_cast<std::uint32_t>(s.cfg.worker_pods));
  if (!made)
    return std::move(made.error());
  s.layout = *made;
  if (s.pod_index >= s.layout.pods)
    return bad("pod index " + std::to_string(s.pod_index) + " is outside this run's "
               + std::to_string(s.layout.pods) + " pods");
  s.local_clock = o.local_clock;
  if (const char* v = std::getenv("AIPERF_CONTROLLER_TIMEOUT_MS"); v && *v) {
    char* end = nullptr;
    auto ms = std::strtoll(v, &end, 10);
    if (*end != '\0' || ms <= 0)
      return bad(std::string{"AIPERF_CONTROLLER_TIMEOUT_MS="} + v
                 + " must be a positive number of milliseconds");
    s.controller_timeout = s.startup_timeout = std::chrono::milliseconds{ms};
  }
  s.clock = time::skewed_clock{seams.clock_skew_ns};
  s.raw_upload_name = seams.raw_upload_name;
  return s;
}

/// Once per pod: downloads the dataset files, decompresses them next to the
/// .zst files and maps them.
caf::expected<std::shared_ptr<const dataset::dataset>>
fetch_dataset(const http_fetch::endpoint& api, const fs::path& scratch,
              std::chrono::milliseconds budget) {
  for (auto name : {dataset::index_zst_file_name, dataset::data_zst_file_name})
    if (auto got = download(api, name, scratch / std::string{name}, budget);
        !got)
      return std::move(got.error());
  auto imported = dataset::import_compressed(scratch);
  if (!imported)
    return make_error(dataset::errc::io, "dataset import: " + error_message(imported.error()));
  return std::make_shared<const dataset::dataset>(std::move(*imported));
}

/// The actors of a pod besides its inbox.
struct pod_services {
  api_service::api_service_actor health;
  proto::timing_manager_actor timing;
  proto::records_manager_actor records;
  worker_group_manager::worker_group_manager_actor group;
  worker_group_manager::group_handles handles;
  std::shared_ptr<std::atomic<std::int64_t>> record_offset
    = std::make_shared<std::atomic<std::int64_t>>(0);
};

/// Spawns the health probes (when a port is set), the controller's proxies
/// and the worker group, and waits for the group's handles.
caf::expected<pod_services> spawn_pod_services(caf::actor_system& sys, caf::scoped_actor& self,
                                               const worker_setup& s,
                                               std::shared_ptr<zmq_bridge::bridge> bridge,
                                               std::shared_ptr<const dataset::dataset> data,
                                               profile_command::http_io& io,
                                               const fs::path& scratch) {
  pod_services out;
  // The pod's probes: /healthz while the process runs, /readyz once every
  // service registered.
  if (s.health_port) {
    api_service::api_config hcfg;
    hcfg.host = "0.0.0.0";
    hcfg.port = *s.health_port;
    auto h = api_service::spawn_api_service(sys, hcfg);
    if (!h)
      return make_error(benchmark::errc::invalid_config,
                        "--health-port: " + error_message(h.error()));
    out.health = h->actor;
    // The pod's documented first stdout line: where its probes answer.
    std::printf("health probes on http://%s:%u\n", hcfg.host.c_str(), unsigned{h->port});
    std::fflush(stdout);
  }
  out.timing = remote::spawn_remote_timing(sys, bridge, s.pod);
  out.records = remote::spawn_remote_records(sys, bridge, s.pod);
  worker_group_manager::group_config g;
  g.worker = s.plan.worker;
  g.num_workers = s.layout.workers_per_pod;
  g.worker_index_offset = s.layout.worker_index(s.pod_index, 0);
  g.id_prefix = s.pod + "/";
  g.processor = s.plan.processor;
  g.num_processors = s.layout.processors_per_pod;
  if (s.plan.worker.export_raw)
    g.raw_part_prefix = (scratch / "raw.part").string();
  g.io = io.slots();
  g.data = std::move(data);
  g.timing = out.timing;
  g.records = out.records;
  g.wrap_record_sink = [offset = out.record_offset](caf::actor_system& sys,
                                                    proto::record_processor_actor p) {
    return remote::spawn_offset_stamper(sys, std::move(p), offset);
  };
  out.group = worker_group_manager::spawn_worker_group_manager(sys, g);
  auto registration = benchmark::service_timeouts{}.registration;
  caf::error failed;
  self->request(out.group, registration, caf::get_atom::value)
    .receive([&](worker_group_manager::group_handles& h) { out.handles = h; },
             [&](caf::error& err) {
               failed = benchmark::name_timeout(std::move(err), "worker_group_manager",
                                                "registration (get handles)", registration);
             });
  if (failed) {
    for (auto h : {caf::actor_cast<caf::actor>(out.group), caf::actor_cast<caf::actor>(out.timing),
                   caf::actor_cast<caf::actor>(out.records), caf::actor_cast<caf::actor>(out.health)})
      if (h)
        self->send_exit(h, caf::exit_reason::user_shutdown);
    sys.clock().cancel_all();
    return failed;
  }
  return out;
}

/// Announces the pod once its return path provably has a peer: clock
/// pings, then one registration per service.
void register_pod(caf::scoped_actor& self, const worker_setup& s, zmq_bridge::bridge& bridge) {
  auto logger = log::get("pod");
  bridge.probe_return_channel(remote::worker_service_id(s.pod_index, 0), {},
                              caf::actor_cast<caf::actor>(self));
  self->receive(
    [&](zmq_bridge::probe_result& r) {
      if (!r.warning.empty())
        logger->warn("{}: return channel probe: {}", s.pod, r.warning);
    },
    caf::after(std::chrono::seconds{30}) >> [&] {
      logger->warn("{}: return channel probe did not answer", s.pod);
    });
  auto wall = [&] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
             .count()
           + s.clock.skew_ns();
  };
  // Spread over ~40 ms rather than a burst: pings sent together queue
  // behind each other, and the clock offset is only as exact as half the
  // smallest round trip (runtime/time/clock_offset_tracker.hpp).
  for (std::uint64_t seq = 0; seq < 9; ++seq) {
    if (seq > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds{5});
    (void) bridge.send(channel::credit, proto::time_ping{seq, wall()}, s.pod);
  }
  auto reg = [&](std::string id, const char* type) {
    proto::register_service r{std::move(id), type, s.pod, static_cast<std::uint32_t>(getpid())};
    (void) bridge.send(channel::control, r, s.pod);
  };
  reg(remote::group_service_id(s.pod_index), "worker_group_manager");
  for (std::uint32_t i = 0; i < s.layout.workers_per_pod; ++i)
    reg(remote::worker_service_id(s.pod_index, i), "worker");
  for (std::uint32_t i = 0; i < s.layout.processors_per_pod; ++i)
    reg(remote::processor_service_id(s.pod_index, i), "record_processor");
  logger->debug("{}: registered", s.pod);
}

struct pod_outcome {
  int exit_code = 0;
  std::string reason;
};

/// Runs the pod's actors until the controller's shutdown or a failed
/// service; fail-closed: a worker or processor that fails takes the pod
/// down (the controller then reaps its credits as lost) instead of leaving
/// a half-working pod the controller cannot see into.
pod_outcome run_pod(const worker_setup& s, std::shared_ptr<zmq_bridge::bridge> bridge,
                    std::shared_ptr<const dataset::dataset> data, profile_command::http_io& io,
                    caf::actor_system_config& sys_cfg, const fs::path& scratch) {
  pod_outcome outcome;
  caf::actor_system sys{sys_cfg};
  caf::scoped_actor self{sys};
  auto services = spawn_pod_services(sys, self, s, bridge, std::move(data), io, scratch);
  if (!services)
    return {sc::exit_internal, "worker group: " + error_message(services.error())};
  auto& sv = *services;
  std::promise<std::pair<int, std::string>> exit_promise;
  auto exit_future = exit_promise.get_future();
  auto once = std::make_shared<std::once_flag>();
  remote::pod_inbox_config icfg;
  icfg.bridge = bridge;
  icfg.pod = s.pod;
  for (std::uint32_t i = 0; i < sv.handles.workers.size(); ++i)
    icfg.workers.emplace(remote::worker_service_id(s.pod_index, i), sv.handles.workers[i]);
  icfg.processors = sv.handles.processors;
  icfg.export_raw = s.plan.worker.export_raw;
  icfg.api = s.api;
  icfg.clock = s.clock;
  icfg.local_clock = s.local_clock;
  icfg.record_offset = sv.record_offset;
  icfg.controller_timeout = s.controller_timeout;
  if (s.raw_upload_name)
    icfg.raw_upload_name = *s.raw_upload_name;
  icfg.on_exit = [&exit_promise, once](int code, std::string why) {
    std::call_once(*once, [&] { exit_promise.set_value({code, std::move(why)}); });
  };
  auto inbox = remote::spawn_pod_inbox(sys, icfg);
  remote::route_pod_inbox(*bridge, inbox);
  auto supervisor = sys.spawn(system::node_supervisor, system::supervision_mode::fail_closed,
                              system::reaper_actor{});
  auto adopt = [&](const auto& h, std::string name) {
    self->send(supervisor, system::adopt_atom::value, caf::actor_cast<caf::actor>(h),
               std::move(name));
  };
  adopt(sv.group, "worker_group_manager");
  adopt(sv.timing, "remote_timing");
  adopt(sv.records, "remote_records");
  adopt(inbox, "pod_inbox");
  for (std::size_t i = 0; i < sv.handles.workers.size(); ++i)
    adopt(sv.handles.workers[i], "worker_" + std::to_string(i));
  for (std::size_t i = 0; i < sv.handles.processors.size(); ++i)
    adopt(sv.handles.processors[i], "record_processor_" + std::to_string(i));
  self->monitor(supervisor);
  register_pod(self, s, *bridge);
  if (sv.health)
    self->send(sv.health, api_service::ready_atom::value, true);
  // Wait for the controller's shutdown, or for the group to fail.
  bool group_down = false;
  while (exit_future.wait_for(std::chrono::milliseconds{0}) != std::future_status::ready
         && !group_down)
    self->receive(
      [&](caf::down_msg& d) {
        group_down = true;
        outcome.exit_code = system::exit_code_for(d.reason);
        if (outcome.exit_code == 0)
          outcome.exit_code = sc::exit_internal;
        outcome.reason = "a service failed: " + error_message(d.reason);
      },
      caf::after(std::chrono::milliseconds{100}) >> [] {});
  if (!group_down) {
    auto [code, why] = exit_future.get();
    outcome = {code, why};
  }
  self->send(supervisor, proto::stop_atom::value);
  if (sv.health)
    self->send(sv.health, proto::stop_atom::value);
  for (auto h : {caf::actor_cast<caf::actor>(sv.group), caf::actor_cast<caf::actor>(sv.timing),
                 caf::actor_cast<caf::actor>(sv.records), inbox})
    self->send_exit(h, caf::exit_reason::user_shutdown);
  io.shutdown_clients();
  bridge->stop();
  // Answered requests leave timeouts in the clock that hold their actors.
  sys.clock().cancel_all();
  return outcome;
}

int run_worker(const service_options& o, const commands::test_seams& seams) {
  // A child of `profile --worker-pods` shares its terminal's process group:
  // Ctrl+C reaches it too, but the parent coordinates the cancellation (it
  // cancels our credits and then sends the shutdown).
  if (o.local_clock)
    std::signal(SIGINT, SIG_IGN);
  auto fail = [&](int code, const std::string& msg) {
    std::fprintf(stderr, "error: %s\n", msg.c_str());
    return code;
  };
  auto setup = resolve_worker(o, seams);
  if (!setup)
    return fail(sc::exit_config, error_message(setup.error()));
  auto& s = *setup;
  // The run file carries the name profile resolved; this process counts
  // OSL and the replies' ISL with the same tokenizer.
  {
    auto tok = tokenizer::any_tokenizer::load(config::effective_tokenizer(s.cfg),
                                              s.cfg.tokenizer_revision);
    if (!tok)
      return fail(sc::exit_config, error_message(tok.error()));
    tokenizer::set_metrics_tokenizer(std::move(*tok));
  }
  // Scratch space: the dataset and the RAW parts before upload.
  // One a killed pod left is reclaimed.
  auto made_scratch = system::owned_dir::make("/tmp", "aiperf-" + s.pod + "-");
  if (!made_scratch)
    return fail(sc::exit_internal, error_message(made_scratch.error()));
  const auto& scratch = made_scratch->path();
  zmq_bridge::bridge_config bcfg;
  bcfg.role = zmq_bridge::role::worker;
  bcfg.identity = s.pod;
  bcfg.connect = s.connect;
  auto bridge = std::make_shared<zmq_bridge::bridge>(bcfg);
  if (auto started = bridge->start(); !started)
    return fail(sc::exit_config, "bridge: " + error_message(started.error()));
  // The dataset comes first: a controller that never answers ends the pod
  // here, naming where it was looked for.
  auto data = fetch_dataset(s.api, scratch, s.startup_timeout);
  if (!data)
    return fail(sc::exit_internal, error_message(data.error()));
  log::get("pod")->debug("{}: dataset with {} conversations", s.pod, (*data)->conversations.size());
  profile_command::http_io io{s.cfg};
  caf::actor_system_config sys_cfg;
  if (auto applied = profile_command::apply_scheduler(sys_cfg, s.cfg, &io); !applied)
    return fail(sc::exit_config, error_message(applied.error()));
  auto outcome = run_pod(s, bridge, std::move(*data), io, sys_cfg, scratch);
  io.stop();
  if (outcome.exit_code != 0)
    std::fprintf(stderr, "error: %s: %s\n", s.pod.c_str(), outcome.reason.c_str());
  return outcome.exit_code;
}

/// AIPERF_K8S_RESULTS_LINGER_SECONDS: how long a controller started by
/// `service` serves its results after the run (default 3600; 0 = exit at
/// once).
caf::expected<std::chrono::seconds> results_linger(const system::env_lookup& env) {
  constexpr std::string_view var = "AIPERF_K8S_RESULTS_LINGER_SECONDS";
  auto v = env(var);
  if (!v || v->empty())
    return std::chrono::seconds{3600};
  char* end = nullptr;
  auto n = std::strtoll(v->c_str(), &end, 10);
  if (*end != '\0' || n < 0 || v->front() == '-' || v->front() == '+')
    return make_error(benchmark::errc::invalid_config,
                      std::string{var} + "=" + *v
                        + " is not a number of seconds: set a whole number >= 0 "
                          "(0 = exit right after the run)");
  return std::chrono::seconds{n};
}

int run_controller(const service_options& o) {
  auto loaded = load_run_file(o.run_config);
  if (!loaded) {
    std::fprintf(stderr, "error: %s\n", error_message(loaded.error()).c_str());
    return sc::exit_config;
  }
  auto cfg = std::move(*loaded);
  (void) log::set_level(cfg.log_level);
  local_pods::controller_options opts;
  opts.spawn_children = false;
  opts.bind_host = "0.0.0.0";
  auto env = system::read_pod_env(system::process_env());
  if (!env) {
    std::fprintf(stderr, "error: %s\n", error_message(env.error()).c_str());
    return sc::exit_config;
  }
  opts.ports = env->ports;
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
  auto linger = results_linger(system::process_env());
  if (!linger) {
    std::fprintf(stderr, "error: %s\n", error_message(linger.error()).c_str());
    return sc::exit_config;
  }
  caf::actor handle;
  std::shared_ptr<api_service::status_board> lingering;
  bool signalled = false;
  std::mutex mtx;
  // A signal cancels the run while it runs and ends the linger after it.
  system::signal_watcher signals{[&](int) {
    std::lock_guard<std::mutex> guard{mtx};
    signalled = true;
    if (handle)
      caf::anon_send(handle, proto::cancel_atom::value);
    else if (lingering)
      lingering->force_shutdown();
  }};
  bool printed = false;
  // The pod keeps serving its results (API and /api/results/...) after the
  // final export, until POST /api/shutdown or the linger passes, so they
  // can be fetched before the pod goes away.
  opts.after_results = [&](const sc::run_result& r,
                           const std::shared_ptr<api_service::status_board>& board) {
    profile_command::print_result(r);
    printed = true;
    {
      std::lock_guard<std::mutex> guard{mtx};
      if (signalled || linger->count() == 0)
        return;
      lingering = board;
    }
    auto logger = log::get("controller");
    logger->info("serving results until POST /api/shutdown or {} s pass "
                 "(AIPERF_K8S_RESULTS_LINGER_SECONDS)",
                 linger->count());
    bool asked = board->wait_shutdown(*linger);
    logger->info("{}: exiting with the run's exit code {}",
                 asked ? "shutdown requested" : "linger over", r.exit_code);
    std::lock_guard<std::mutex> guard{mtx};
    lingering.reset();
  };
  sc::run_result result;
  {
    caf::actor_system sys{sys_cfg};
    result = local_pods::run_controller(sys, cfg, std::move(plan), opts,
                                        [&](caf::actor h) {
                                          std::lock_guard<std::mutex> g{mtx};
                                          handle = std::move(h);
                                        });
  }
  if (!printed)
    profile_command::print_result(result);
  return result.exit_code;
}

} // namespace

void add_subcommand(CLI::App& app, int& exit_code, const commands::test_seams& seams) {
  auto* cmd = app.add_subcommand(
    "service", "Run one process of a distributed benchmark: the controller "
               "or a worker pod (started by `profile --worker-pods` or by "
               "the Kubernetes operator)");
  cmd->footer(
    "Controller: after the final export it writes .aiperf_results_ready.json "
    "into the artifact dir and keeps serving its API (/api/results/list, "
    "/api/results/files/{path}) until POST /api/shutdown or "
    "AIPERF_K8S_RESULTS_LINGER_SECONDS (default 3600; 0 = exit at once) "
    "pass, then exits with the run's exit code.\n"
    "Worker: AIPERF_POD_INDEX and AIPERF_K8S_ZMQ_CONTROLLER_HOST stand in "
    "for --pod-index and the endpoint/--api-host flags left out.");
  auto o = std::make_shared<service_options>();
  cmd->add_option("--role", o->role, "controller or worker")
    ->required()
    ->check(CLI::IsMember({"controller", "worker"}));
  cmd->add_option("--benchmark-run,--run-config", o->run_config,
                  "The run file (run_config.json: the configuration with "
                  "credentials redacted; --run-config is an alias). Its "
                  "credentials come from AIPERF_INJECTED_API_KEY (or "
                  "OPENAI_API_KEY), AIPERF_INJECTED_HEADERS (JSON object) "
                  "and AIPERF_INJECTED_ENDPOINT_URLS (JSON list); a redacted "
                  "one without its variable exits 2")
    ->required();
  cmd->add_option("--run-id", o->run_id,
                  "Run id shared by every process (default AIPERF_JOB_ID)");
  cmd->add_option("--pod-index", o->pod_index,
                  "Worker: this pod's index (default AIPERF_POD_INDEX, which "
                  "a pod gets from its JobSet job-index label)");
  cmd->add_option("--control-endpoint", o->connect.control,
                  "Worker: controller's control channel (ipc:// or tcp://; "
                  "default tcp://$AIPERF_K8S_ZMQ_CONTROLLER_HOST:"
                  "$AIPERF_K8S_PORT_CONTROL, the host a DNS name resolved "
                  "at connect time; likewise for the other channels)");
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
  cmd->callback([o, seams, &exit_code] {
    try {
      exit_code = o->role == "worker" ? run_worker(*o, seams) : run_controller(*o);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: internal: %s\n", e.what());
      exit_code = sc::exit_internal;
    }
  });
}

} // namespace aiperf::service_command
