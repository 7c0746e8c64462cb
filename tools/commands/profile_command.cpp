#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "tools/commands/profile_command.hpp"

#include "proto/redact.hpp"

#include "tools/commands/http_io.hpp"
#include "tools/commands/self_check.hpp"
#include "tools/commands/local_pods.hpp"

#include "actors/benchmark/system_controller/system_controller.hpp"
#include "config/benchmark/mapping.hpp"
#include "config/profile/profile_cli.hpp"
#include "config/profile/profile_json.hpp"
#include "runtime/http/client.hpp"
#include "runtime/log/log.hpp"
#include "runtime/system/node.hpp"
#include "runtime/tokenizer/resolve.hpp"
#include "tools/mock_server/mock_server.hpp"

#include <caf/all.hpp>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <atomic>
#include <memory>
#include <optional>
#include <unistd.h>
#include <vector>

namespace aiperf::profile_command {

namespace {

namespace sc = system_controller;
namespace fs = std::filesystem;

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
                        "cannot reach " + proto::redact_url(u) + ": " + ec.message()
                          + "; is the server running? Check --url");
  }
  return caf::unit;
}

/// Warnings for URLs whose path already holds the endpoint's path (or
/// its `/v1`): the endpoint path is appended to the URL's path, so those
/// requests would go to a doubled path such as /v1/v1/chat/completions.
std::vector<std::string> doubled_path_warnings(const config::profile_config& cfg) {
  std::vector<std::string> out;
  auto endpoint = config::endpoint_path(cfg);
  for (auto& u : cfg.urls) {
    auto parsed = http::parse_url(u);
    if (!parsed || parsed->base_path.empty())
      continue;
    auto& base = parsed->base_path;
    bool whole = base.ends_with(endpoint);
    bool v1 = base.ends_with("/v1") && endpoint.starts_with("/v1/");
    if (!whole && !v1)
      continue;
    auto keep = base.substr(0, base.size() - (whole ? endpoint.size() : 3));
    out.push_back("--url " + proto::redact_url(u) + ": requests go to " + base + endpoint
                  + " (the endpoint path " + endpoint
                  + " is appended to the URL's path); pass "
                  + std::string{parsed->scheme()} + "://"
                  + (parsed->user ? "<redacted>@" : "")
                  + (parsed->ep.host.find(':') != std::string::npos
                       ? "[" + parsed->ep.host + "]"
                       : parsed->ep.host)
                  + ":"
                  + std::to_string(parsed->ep.port) + keep + " instead");
  }
  return out;
}

/// Turns SIGINT/SIGTERM into a cancel of the run's controller. A signal that
/// lands before the controller exists (mock start, reach check, actor system
/// start) is remembered and delivered once it does; dropping it would let
/// the whole run go on after Ctrl+C. Thread-safe.
class signal_gate {
public:
  void on_signal(int signo) {
    stop_->store(true);
    std::lock_guard<std::mutex> guard{mtx_};
    if (first_signal_ == 0)
      first_signal_ = signo;
    if (controller_)
      caf::anon_send(controller_, proto::cancel_atom::value);
    else
      early_ = true;
  }
  /// The controller of the run (null when it is gone).
  void publish(caf::actor controller) {
    std::lock_guard<std::mutex> guard{mtx_};
    controller_ = std::move(controller);
    if (controller_ && early_)
      caf::anon_send(controller_, proto::cancel_atom::value);
  }
  /// A run stopped by a signal: SIGTERM's code is 143, SIGHUP's 129,
  /// SIGINT's 130.
  [[nodiscard]] int exit_code(int run_code) const {
    std::lock_guard<std::mutex> guard{mtx_};
    if (run_code == sc::exit_interrupted && first_signal_ != 0)
      return proto::exit_code_of_signal(first_signal_);
    return run_code;
  }

  /// Set at the first signal: work that cannot take a message (building
  /// the dataset) polls it.
  [[nodiscard]] std::shared_ptr<std::atomic<bool>> stop_flag() const { return stop_; }

private:
  std::shared_ptr<std::atomic<bool>> stop_ = std::make_shared<std::atomic<bool>>(false);
  mutable std::mutex mtx_;
  caf::actor controller_;
  bool early_ = false;
  int first_signal_ = 0;
};

/// The built-in mock server on a free loopback port, when no --url is given;
/// `cfg` then targets it and `recorded` says "builtin-mock". Call after
/// set_metrics_tokenizer.
caf::expected<std::unique_ptr<mock_server::server>>
start_builtin_mock(config::profile_config& cfg, config::profile_config& recorded) {
  mock_server::options opts;
  opts.port = 0;
  // The mock counts usage with the run's tokenizer (a copy shares its
  // tables), so server and client counts agree.
  if (const auto* tok = tokenizer::metrics_tokenizer())
    opts.loaded_tokenizer = std::make_shared<const tokenizer::any_tokenizer>(*tok);
  auto mock = std::make_unique<mock_server::server>(opts);
  auto started = mock->start();
  if (!started)
    return make_error(benchmark::errc::invalid_config,
                      "cannot start the built-in mock server: "
                          + error_message(started.error()));
  auto url = "http://127.0.0.1:" + std::to_string(*started);
  std::printf("no --url given: benchmarking the built-in mock server at %s "
              "(recorded as url: builtin-mock)\n",
              url.c_str());
  std::fflush(stdout);
  cfg.urls = {url};
  recorded.urls = {"builtin-mock"};
  return mock;
}

/// Creates the run's folder; returns the folders it created, deepest first,
/// so that a run that ends before writing anything (bad input file) can
/// leave no empty folders behind.
caf::expected<std::vector<fs::path>> make_artifact_dir(const fs::path& dir) {
  std::vector<fs::path> created;
  for (fs::path p = dir; !p.empty() && !fs::exists(p); p = p.parent_path()) {
    created.push_back(p);
    if (p == p.parent_path())
      break;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return make_error(benchmark::errc::invalid_config, "--output-artifact-dir: cannot create "
                                                         + dir.string() + ": " + ec.message());
  return created;
}

/// Runs the benchmark in an actor system: in this process, or as the
/// controller of `--worker-pods` processes.
sc::run_result run_actors(caf::actor_system_config& sys_cfg, const config::profile_config& cfg,
                          sc::run_plan plan, http_io& io, signal_gate& gate) {
  sc::run_result result;
  caf::actor_system sys{sys_cfg};
  if (cfg.worker_pods > 1) {
    local_pods::controller_options pods;
    if (auto applied = local_pods::apply_env(pods); !applied)
      return {sc::exit_config, error_message(applied.error()), {}, {}, {}};
    return local_pods::run_controller(sys, cfg, std::move(plan), pods,
                                      [&](caf::actor h) { gate.publish(std::move(h)); });
  }
  auto whole_run = plan.timeouts.whole_run();
  auto controller = sc::spawn_system_controller(sys, std::move(plan), io.slots());
  gate.publish(caf::actor_cast<caf::actor>(controller));
  caf::scoped_actor self{sys};
  self->request(controller, whole_run, proto::start_atom::value)
    .receive([&](sc::run_result& r) { result = std::move(r); },
             [&](caf::error& err) {
               result.exit_code = sc::exit_internal;
               result.message = error_message(benchmark::name_timeout(
                 std::move(err), "system_controller", "start (the whole run)", whole_run));
             });
  gate.publish(caf::actor{});
  return result;
}

int run(config::profile_config cfg) {
  // First, before any thread exists: SIGINT/SIGTERM become a callback.
  signal_gate gate;
  system::signal_watcher signals{[&](int signo) { gate.on_signal(signo); }};
  auto fail = [](int code, const caf::error& err) {
    std::fprintf(stderr, "error: %s\n", error_message(err).c_str());
    return code;
  };
  if (auto done = config::finalize(cfg); !done)
    return fail(sc::exit_config, done.error());
  (void) log::set_level(cfg.log_level);
  // Resolved once, before the mock or any request: the dataset's ISL and
  // the record processors' OSL count with it. The name (not the loaded
  // tokenizer) goes to --worker-pods processes, which resolve it again from
  // the same machine's files and Hugging Face cache.
  cfg.tokenizer = config::effective_tokenizer(cfg);
  {
    auto tok = tokenizer::any_tokenizer::load(cfg.tokenizer, cfg.tokenizer_revision);
    if (!tok)
      return fail(sc::exit_config, tok.error());
    tokenizer::set_metrics_tokenizer(std::move(*tok));
  }
  std::unique_ptr<mock_server::server> mock;
  auto recorded = cfg;
  if (config::uses_mock_server(cfg)) {
    auto started = start_builtin_mock(cfg, recorded);
    if (!started)
      return fail(sc::exit_internal, started.error());
    mock = std::move(*started);
  }
  for (auto& w : doubled_path_warnings(cfg))
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (auto reached = check_reachable(cfg.urls); !reached)
    return fail(sc::exit_unreachable, reached.error());
  auto plan = sc::make_run_plan(cfg, sc::make_uuid(), config::to_json(recorded, true));
  // The "approximate counts" warning is for whitespace8 against a real
  // server; a chosen tokenizer.json is taken to be the model's.
  plan.records.server_uses_builtin_tokenizer
    = mock != nullptr || cfg.tokenizer != tokenizer::whitespace_model_name;
  plan.show_progress = plan.show_progress && isatty(STDERR_FILENO);
  auto created_dirs = make_artifact_dir(plan.artifact_dir);
  if (!created_dirs)
    return fail(sc::exit_config, created_dirs.error());
  // I/O threads and one HTTP client per thread. They outlive the actor
  // system (declared first, destroyed last).
  http_io io{cfg};
  if (io.priority_warning())
    std::fprintf(stderr, "warning: %s\n", io.priority_warning()->c_str());
  client_self_check self_check{io.pool()};
  plan.client_self_check_start = [&self_check] { self_check.start(); };
  plan.client_self_check = [&self_check] { return self_check.finish(); };
  plan.release_connections = [&io] { io.shutdown_clients(); };
  plan.dataset.stop = gate.stop_flag();
  caf::actor_system_config sys_cfg;
  if (auto applied = apply_scheduler(sys_cfg, cfg, &io); !applied)
    return fail(sc::exit_config, applied.error());
  auto result = run_actors(sys_cfg, cfg, std::move(plan), io, gate);
  std::error_code ec;
  for (auto& dir : *created_dirs)
    fs::remove(dir, ec); // only if still empty
  io.stop();
  if (mock)
    mock->stop();
  result.exit_code = gate.exit_code(result.exit_code);
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
                     || result.exit_code == proto::exit_hangup
                   ? "interrupted"
                   : "error",
                 result.message.c_str());
  std::fflush(stdout);
}

void add_subcommand(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
    "profile", "Benchmark an OpenAI-compatible server (AIPerf's flags); "
               "without --url, benchmarks the built-in mock server. With "
               "-f FILE, the benchmark comes from an AIPerf Config-v2 file "
               "and flags given on the command line override its values");
  auto cfg = std::make_shared<config::profile_config>();
  config::add_profile_options(*cmd, *cfg);
  auto file = std::make_shared<std::string>();
  auto* file_opt = cmd->add_option(
                          "-f,--config", *file,
                          "AIPerf Config-v2 file (YAML or JSON, AIPerf's camelCase or snake_case "
                          "keys); flags given on the command line override the file's values")
                     ->type_name("FILE")
                     ->group("Config File");
  cmd->callback([cmd, cfg, file, file_opt, &exit_code] {
    try {
      if (!file->empty()) {
        // The file first, then every flag the user typed again on top.
        auto warnings = config::benchmark::apply_file_then_flags(*file, *cmd, *cfg, file_opt);
        if (!warnings) {
          std::fprintf(stderr, "error: %s\n", error_message(warnings.error()).c_str());
          exit_code = sc::exit_config;
          return;
        }
        for (auto& w : *warnings)
          std::fprintf(stderr, "warning: %s\n", w.c_str());
      }
      exit_code = run(*cfg);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: internal: %s\n", e.what());
      exit_code = sc::exit_internal;
    }
  });
}

} // namespace aiperf::profile_command
