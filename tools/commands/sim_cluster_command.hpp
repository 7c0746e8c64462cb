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
//   aiperf-node sim-cluster --workloads [--nodes FILE] [--aiperf-node PATH]
//       [--image-map IMAGE=PATH]... [--pod-cidr CIDR] [--backoff-scale X]
//       [--token-expiration-seconds N]
//
// runs pods as real processes (k8s/sim/sandbox) in a pod network owned by
// the simulator: the Nodes, the JobSet CRD, a default StorageClass, the
// `kubernetes` Service of `default` (no virtual IPs: its Endpoints and
// EndpointSlice name the API server's listener on the gateway), the Job,
// JobSet, TTL, Deployment, ReplicaSet, volume, Endpoints, EndpointSlice and
// ServiceAccount controllers, the scheduler, the kubelet and a DNS server
// on <gateway>:53. The API server also listens on <gateway>:<port> (the
// same port when free there); with --tls its certificate covers the gateway
// and kubernetes.default.svc[.cluster.local]. Stdout then carries a second
// line, `pod network <CIDR> gateway <ADDR>`, once all of that is up.
// Without root or network namespaces it exits 1 naming what is missing.
// Pod work files live under <state-dir>/workloads, or a temporary folder
// under $TMPDIR (default /tmp) removed at exit; SIGTERM stops the pods with the cluster, and a SIGKILL
// of the simulator takes them down too (the pod network's init dies with
// it).
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
//   aiperf-node sim-cluster ctl --kubeconfig FILE podfaults add '<json>'
//   aiperf-node sim-cluster ctl --kubeconfig FILE pods kill|partition|info
//       [-n NS] POD [--signal S] [--seconds N]
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
