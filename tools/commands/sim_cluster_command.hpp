// `aiperf-node sim-cluster`: a simulated Kubernetes API server that kubectl,
// python3-kubernetes and our own client talk to as to a real one.
//
//   aiperf-node sim-cluster [--port N] [--tls] [--kubeconfig FILE]
//                           [--audit-log FILE] [--state-dir DIR]
//
// Stdout carries exactly one line, `listening on http[s]://127.0.0.1:PORT`,
// printed once the kubeconfig (if asked for) is completely written (temp
// file + rename) and the built-in namespaces exist; logs go to stderr.
// SIGTERM/SIGINT flush the audit log and exit 0; a usage error exits 2.
//
// The kubeconfig has one cluster `sim` (with --tls its CA inline), one user
// `admin` (with --tls a bearer token; none over HTTP, where kubectl would
// not send one), one context `sim`, current, with no namespace.
//
//   aiperf-node sim-cluster ctl --kubeconfig FILE faults add '<json>'
//   aiperf-node sim-cluster ctl --kubeconfig FILE faults delete ID
//   aiperf-node sim-cluster ctl --kubeconfig FILE watches drop [--resource R]
//   aiperf-node sim-cluster ctl --kubeconfig FILE restart --down-seconds N
//   [--keep-state]
//
// drive the simulator's /sim/v1 routes as the kubeconfig's user and print
// the answer's body; exit 0 on a 2xx answer, 1 otherwise.
#pragma once

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::sim_cluster_command {

/// Adds the `sim-cluster` subcommand (with `ctl`); its exit code lands in
/// `exit_code`.
void add_subcommand(CLI::App& app, int& exit_code);

} // namespace aiperf::sim_cluster_command
