#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "tools/commands/profile_command.hpp"

#include "tools/commands/http_io.hpp"
#include "tools/commands/self_check.hpp"
#include "tools/commands/local_pods.hpp"

#include "actors/benchmark/system_controller/system_controller.hpp"
#include "config/profile/profile_cli.hpp"
#include "config/profile/profile_json.hpp"
#include "runtime/http/client.hpp"
#include "runtime/log/log.hpp"
#include "runtime/system/node.hpp"
#include "tools/mock_server/mock_server.hpp"

#include <caf/all.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <unistd.h>
#include <vector>

namespace aiperf::profile_command {

namespace {

namespace sc = system_controller;

/// Connects once to every URL (5 s budget) so that a wrong --url fails
/// fast with exit code 3 instead of a run of connection errors: the URL's
/// http::errc (invalid_url, or connect naming the URL and the fix).
caf::expected<void> check_reachable(const std::vector<std::string>& urls) {
  for (auto& u : urls) {
    auto parsed = http::parse_url(u);
    if (!parsed)
      return make_error(error_code(parsed.error(), http::errc::invalid_url),
                        "--url: " + error_message(parsed.error()));
    boost::asio::io_context io;
    boost::asio::ip::tcp::resolver resolver{io};
    boost::system::error_code ec;
    auto endpoints = resolver.resolve(parsed->ep.host,
                                      std::to_string(parsed->ep.port),
                                      ec);
    if (!ec) {
      boost::asio::ip::tcp::socket socket{io};
      boost::asio::connect(socket, endpoints, ec);
    }
    if (ec)
      return make_error(http::errc::connect,
                        "cannot reach " + u + ": " + ec.message()
                          + "; is the server running? Check --url");
  }
  return caf::unit;
}

int run(config::profile_config cfg) {
  // First, before any thread exists: SIGINT/SIGTERM become a callback.
  // A signal that lands before the controller exists (mock start, reach
  // check, actor system start) is remembered and delivered once it does;
  // dropping it would let the whole run go on after Ctrl+C.
  caf::actor controller_handle;
  bool interrupted_early = false;
  int first_signal = 0; // guarded by handle_mtx
  std::mutex handle_mtx;
  system::signal_watcher signals{[&](int signo) {
    std::lock_guard<std::mutex> guard{handle_mtx};
    if (first_signal == 0)
      first_signal = signo;
    if (controller_handle)
      caf::anon_send(controller_handle, proto::cancel_atom::value);
    else
      interrupted_early = true;
  }};
  if (auto done = config::finalize(cfg); !done) {
    std::fprintf(stderr, "error: %s\n", error_message(done.error()).c_str());
    return sc::exit_config;
  }
  (void) log::set_level(cfg.log_level);
  auto logger = log::get("profile");

  // The built-in mock server when no --url is given.
  std::unique_ptr<mock_server::server> mock;
  auto recorded = cfg;
  if (config::uses_mock_server(cfg)) {
    mock_server::options opts;
    opts.port = 0;
    mock = std::make_unique<mock_server::server>(opts);
    auto started = mock->start();
    if (!started.ok()) {
      std::fprintf(stderr, "error: cannot start the built-in mock server: %s\n",
                   started.error.c_str());
      return sc::exit_internal;
    }
    auto url = "http://127.0.0.1:" + std::to_string(started.port);
    std::printf("no --url given: benchmarking the built-in mock server at %s "
                "(recorded as url: builtin-mock)\n",
                url.c_str());
    std::fflush(stdout);
    cfg.urls = {url};
    recorded.urls = {"builtin-mock"};
  }
  if (auto reached = check_reachable(cfg.urls); !reached) {
    std::fprintf(stderr, "error: %s\n",
                 error_message(reached.error()).c_str());
    return sc::exit_unreachable;
  }

  auto run_id = sc::make_uuid();
  auto plan = sc::make_run_plan(cfg, run_id, config::to_json(recorded, true));
  plan.records.server_uses_builtin_tokenizer = mock != nullptr;
  plan.show_progress = plan.show_progress && isatty(STDERR_FILENO);
  // The folders this run creates, deepest first, so that a run that ends
  // before writing anything (bad input file) leaves no empty folders.
  std::vector<std::filesystem::path> created_dirs;
  for (std::filesystem::path p = plan.artifact_dir;
       !p.empty() && !std::filesystem::exists(p); p = p.parent_path()) {
    created_dirs.push_back(p);
    if (p == p.parent_path())
      break;
  }
  std::error_code ec;
  std::filesystem::create_directories(plan.artifact_dir, ec);
  if (ec) {
    std::fprintf(stderr,
                 "error: --output-artifact-dir: cannot create %s: %s\n",
                 plan.artifact_dir.c_str(), ec.message().c_str());
    return sc::exit_config;
  }

  // I/O threads and one HTTP client per thread. They outlive the actor
  // system (declared first, destroyed last).
  http_io io{cfg};
  if (io.priority_warning())
    std::fprintf(stderr, "warning: %s\n", io.priority_warning()->c_str());
  client_self_check self_check{io.pool()};
  plan.client_self_check_start = [&self_check] { self_check.start(); };
  plan.client_self_check = [&self_check] { return self_check.finish(); };

  caf::actor_system_config sys_cfg;
  if (auto applied = apply_scheduler(sys_cfg, cfg, &io); !applied) {
    std::fprintf(stderr, "error: %s\n",
                 error_message(applied.error()).c_str());
    return sc::exit_config;
  }
  sc::run_result result;
  {
    caf::actor_system sys{sys_cfg};
    if (cfg.worker_pods > 1) {
      // Local multi-process mode: this process is the controller.
      local_pods::controller_options pods;
      if (auto applied = local_pods::apply_env(pods); !applied) {
        std::fprintf(stderr, "error: %s\n",
                     error_message(applied.error()).c_str());
        return sc::exit_config;
      }
      result = local_pods::run_controller(
        sys, cfg, std::move(plan), pods, [&](caf::actor h) {
          std::lock_guard<std::mutex> guard{handle_mtx};
          controller_handle = std::move(h);
          if (controller_handle && interrupted_early)
            caf::anon_send(controller_handle, proto::cancel_atom::value);
        });
    } else {
    auto whole_run = plan.timeouts.whole_run();
    auto controller = sc::spawn_system_controller(sys, std::move(plan), io.slots());
    {
      std::lock_guard<std::mutex> guard{handle_mtx};
      controller_handle = caf::actor_cast<caf::actor>(controller);
      if (interrupted_early)
        caf::anon_send(controller_handle, proto::cancel_atom::value);
    }
    caf::scoped_actor self{sys};
    self->request(controller, whole_run, proto::start_atom::value)
      .receive([&](sc::run_result& r) { result = std::move(r); },
               [&](caf::error& err) {
                 result.exit_code = sc::exit_internal;
                 result.message = error_message(benchmark::name_timeout(
                   std::move(err), "system_controller", "start (the whole run)", whole_run));
               });
    std::lock_guard<std::mutex> guard{handle_mtx};
    controller_handle = nullptr;
    }
  }
  for (auto& dir : created_dirs)
    std::filesystem::remove(dir, ec); // only if still empty
  io.stop();
  if (mock)
    mock->stop();

  // Stopped by a signal: SIGTERM's code is 143, SIGINT's 130.
  if (result.exit_code == sc::exit_interrupted) {
    std::lock_guard<std::mutex> guard{handle_mtx};
    if (first_signal != 0)
      result.exit_code = proto::exit_code_of_signal(first_signal);
  }
  print_result(result);
  return result.exit_code;
}

} // namespace

void print_result(const sc::run_result& result) {
  if (!result.console.empty())
    std::printf("%s\n", result.console.c_str());
  if (!result.files.empty()) {
    std::printf("Exports:\n");
    for (auto& f : result.files)
      std::printf("  %s\n", f.c_str());
  }
  for (auto& w : result.warnings)
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (!result.message.empty())
    std::fprintf(stderr, "%s: %s\n",
                 result.exit_code == sc::exit_interrupted
                     || result.exit_code == sc::exit_terminated
                   ? "interrupted"
                   : "error",
                 result.message.c_str());
  std::fflush(stdout);
}

void add_subcommand(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
    "profile", "Benchmark an OpenAI-compatible server (AIPerf's flags); "
               "without --url, benchmarks the built-in mock server");
  auto cfg = std::make_shared<config::profile_config>();
  config::add_profile_options(*cmd, *cfg);
  cmd->callback([cfg, &exit_code] {
    try {
      exit_code = run(*cfg);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: internal: %s\n", e.what());
      exit_code = sc::exit_internal;
    }
  });
}

} // namespace aiperf::profile_command
