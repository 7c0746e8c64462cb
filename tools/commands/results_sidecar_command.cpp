#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "tools/commands/results_sidecar_command.hpp"

#include "actors/benchmark/api_service/results_files.hpp"
#include "actors/benchmark/api_service/routes.hpp"
#include "proto/exit_codes.hpp"
#include "runtime/http_server/http_server.hpp"
#include "runtime/system/env.hpp"
#include "runtime/system/node.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace aiperf::results_sidecar_command {

namespace {

namespace fs = std::filesystem;
namespace http = boost::beast::http;
using boost::asio::awaitable;

struct sidecar_options {
  std::string results_dir;
  std::optional<std::uint16_t> port;
  std::string host = "0.0.0.0";
};

awaitable<void> route(fs::path dir, http_server::request& req, http_server::response_writer& w) {
  std::string_view target{req.target().data(), req.target().size()};
  if (auto q = target.find('?'); q != std::string_view::npos)
    target = target.substr(0, q);
  if (req.method() != http::verb::get) {
    co_await w.send(405, "application/json",
                    R"({"error":"the results sidecar is read-only: use GET"})", "Allow: GET\r\n");
    co_return;
  }
  if (target == "/healthz") {
    co_await w.send(200, "application/json", R"({"status":"ok"})");
    co_return;
  }
  // The run directory may appear after the sidecar started.
  if (co_await api_service::serve_results(api_service::results_root(dir), target, req, w))
    co_return;
  co_await api_service::send_json_error(w, 404,
                                        "no route for " + std::string{target}
                                          + ": use /healthz, /api/results/list or "
                                            "/api/results/files/{path}");
}

int run(const sidecar_options& o) {
  auto env = system::process_env();
  fs::path dir = !o.results_dir.empty() ? fs::path{o.results_dir}
                                        : fs::path{env("AIPERF_RESULTS_DIR").value_or("/results")};
  std::uint16_t port = 9091; // AIPerf's results-sidecar port
  if (o.port) {
    port = *o.port;
  } else if (auto text = env("AIPERF_RESULTS_SIDECAR_PORT"); text && !text->empty()) {
    auto parsed = system::parse_port("AIPERF_RESULTS_SIDECAR_PORT", *text);
    if (!parsed) {
      std::fprintf(stderr, "error: %s\n", error_message(parsed.error()).c_str());
      return proto::exit_config;
    }
    port = *parsed;
  }
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    std::fprintf(stderr,
                 "error: --results-dir %s is not a directory: mount the results volume "
                 "there or set AIPERF_RESULTS_DIR\n",
                 dir.c_str());
    return proto::exit_config;
  }
  // Installed before the server's threads start, so they inherit the mask.
  system::stop_signal stop;
  http_server::options opts;
  opts.host = o.host;
  opts.port = port;
  http_server::server server{opts, [dir](http_server::request& req,
                                         http_server::response_writer& w) {
                               return route(dir, req, w);
                             }};
  auto started = server.start();
  if (!started) {
    std::fprintf(stderr, "error: results-sidecar: %s\n", error_message(started.error()).c_str());
    return proto::exit_config;
  }
  // The documented first stdout line: where it answers.
  std::printf("results-sidecar serving %s on http://%s:%u\n", dir.c_str(), o.host.c_str(),
              unsigned{*started});
  std::fflush(stdout);
  stop.wait();
  server.stop();
  return proto::exit_ok;
}

} // namespace

void add_subcommand(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
    "results-sidecar",
    "Serve a results directory read-only over HTTP (the controller pod's "
    "results-sidecar container): /healthz, /api/results/list, "
    "/api/results/files/{path}; files appear once .aiperf_results_ready.json "
    "exists (checkpoints/ always). Exits 0 on SIGTERM");
  auto o = std::make_shared<sidecar_options>();
  cmd->add_option("--results-dir", o->results_dir,
                  "Directory to serve (default AIPERF_RESULTS_DIR, else /results); "
                  "one holding only a run directory serves that one");
  cmd->add_option("--port", o->port,
                  "Port (default AIPERF_RESULTS_SIDECAR_PORT, else 9091; 0 = any free "
                  "port, named on the first stdout line)");
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

} // namespace aiperf::results_sidecar_command
