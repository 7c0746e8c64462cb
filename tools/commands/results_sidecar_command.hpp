// `aiperf-node results-sidecar`: the controller pod's second container. It
// serves the pod's results volume read-only (AIPerf's contract, reference:
// github.com/ai-dynamo/aiperf results sidecar) and outlives a crashed
// controller container, so results can still be salvaged:
//
//   GET /healthz                   {"status":"ok"}
//   GET /api/results/list          see actors/benchmark/api_service/results_files.hpp
//   GET /api/results/files/{path}
//
// Defaults from AIPERF_RESULTS_DIR (/results) and AIPERF_RESULTS_SIDECAR_PORT
// (9091). SIGTERM or SIGINT stops it with exit code 0.
#pragma once

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::results_sidecar_command {

/// Adds the `results-sidecar` subcommand; its exit code lands in `exit_code`.
void add_subcommand(CLI::App& app, int& exit_code);

} // namespace aiperf::results_sidecar_command
