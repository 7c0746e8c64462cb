// `aiperf-node mock-server`: a thin CLI over mock_server::server.
#include "runtime/log/log.hpp"
#include "tools/mock_server/mock_server.hpp"

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <memory>
#include <pthread.h>

namespace aiperf::mock_server {

void add_subcommand(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "mock-server", "OpenAI-compatible mock LLM server (chat, completions, "
                     "embeddings; SSE streaming; exact TTFT/ITL)");
  auto opts = std::make_shared<options>();
  auto level = std::make_shared<std::string>("info");
  sub->add_option("--host", opts->host, "address to bind")
      ->capture_default_str();
  sub->add_option("-p,--port", opts->port,
                  "port to bind (0 = ephemeral; the bound port is printed)")
      ->capture_default_str();
  sub->add_option("--ttft", opts->ttft_ms,
                  "time to first token in milliseconds (>= 0)")
      ->capture_default_str();
  sub->add_option("--itl", opts->itl_ms,
                  "inter-token latency in milliseconds (>= 0)")
      ->capture_default_str();
  sub->add_flag("-f,--fast", opts->fast, "zero latency (ignore ttft/itl)");
  sub->add_option("--error-rate", opts->error_rate,
                  "percentage 0-100 of generation requests answered with 500")
      ->capture_default_str();
  sub->add_option("--random-seed", opts->random_seed,
                  "seed for output words and error injection")
      ->capture_default_str();
  sub->add_option("--model-names", opts->model_names,
                  "accepted models, comma separated (default: any)")
      ->delimiter(',');
  sub->add_flag("--stamp-events", opts->stamp_events,
                "precede each SSE event with ': t=<CLOCK_MONOTONIC ns>'");
  sub->add_option("--tokenizer", opts->tokenizer,
                  "tokenizer counting usage tokens: whitespace8, a "
                  "tokenizer.json path, a directory holding one, or a Hugging "
                  "Face model id (as profile --tokenizer)")
      ->capture_default_str();
  sub->add_option("--tokenizer-revision", opts->tokenizer_revision,
                  "Hugging Face revision of --tokenizer")
      ->capture_default_str();
  sub->add_option("--access-log", opts->access_log,
                  "write one Common Log Format line per request to this file "
                  "('-' = stdout)");
  sub->add_option("-w,--workers", opts->workers, "io threads (1-64)")
      ->capture_default_str();
  sub->add_option("--log-level", *level,
                  std::string{"log level: "} + std::string{log::level_names}
                      + " (default info)");
  sub->callback([opts, level, &exit_code] {
    if (!log::set_level(*level)) {
      std::fprintf(stderr, "--log-level must be one of %.*s, got '%s'\n",
                   static_cast<int>(log::level_names.size()),
                   log::level_names.data(), level->c_str());
      exit_code = 2;
      return;
    }
    exit_code = run(*opts);
  });
}

int run(const options& opts) {
  if (auto valid = validate(opts); !valid) {
    std::fprintf(stderr, "mock-server: %s\n",
                 error_message(valid.error()).c_str());
    return 2;
  }
  // Block the stop signals before the io threads exist, so they inherit the
  // mask and only sigwait below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  server srv{opts};
  auto started = srv.start();
  if (!started) {
    std::fprintf(stderr, "mock-server: %s\n",
                 error_message(started.error()).c_str());
    return 1;
  }
  const bool v6 = opts.host.find(':') != std::string::npos;
  std::printf("mock-server listening on http://%s%s%s:%u\n", v6 ? "[" : "",
              opts.host.c_str(), v6 ? "]" : "", *started);
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  log::get("mock_server")->info("signal {}: stopping", sig);
  srv.stop();
  return 0;
}

} // namespace aiperf::mock_server
