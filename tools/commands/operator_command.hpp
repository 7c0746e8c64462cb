// `aiperf-node operator`: runs AIPerfJobs submitted as custom resources (the
// AIPerfJob reconciler of actors/operator) until SIGTERM or SIGINT (exit 0).
// Connects as controller-runtime does (--kubeconfig, $KUBECONFIG, the
// in-cluster service account, ~/.kube/config) and serves `/healthz` on the
// health port (8080) and on AIPERF_RESULTS_SERVER_PORT (8081), where the
// results server will answer. See docs/kubernetes.md, "The operator".
#pragma once

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::operator_command {

/// Adds the `operator` subcommand; its exit code lands in `exit_code`.
void add_subcommand(CLI::App& app, int& exit_code);

} // namespace aiperf::operator_command
