// The simulated nodes' kubelet: it runs the pods the scheduler bound to its
// nodes (spec.nodeName) as real processes through the container runtime
// (k8s/sim/sandbox), and reports them in pod status as kubelet does.
//
// It watches pods, ConfigMaps, Secrets, PersistentVolumeClaims and
// PersistentVolumes over `api_actor` (list + watch, relisted when a watch
// ends) and writes pod status (PUT pods/<name>/status with the
// resourceVersion it last saw; a Conflict is read again and retried), Events
// (aggregated: a repeat raises `count`), Node status (Ready, KubeletReady;
// a missing Node is registered) and, for a finished graceful deletion, the
// final DELETE (gracePeriodSeconds 0, uid precondition). Time comes only
// from the actor clock (back-offs, probe periods, grace periods are delayed
// messages), so under the test coordinator with a fake runtime every step
// follows simulated time.
//
// Rules chosen where a node would read image metadata: an image whose name
// contains "aiperf-node" runs as uid/gid 1000 (the product Dockerfile's
// USER), a mapped image as uid 0; runAsUser without runAsGroup runs with
// gid 0. `command` replaces the entrypoint (a bare name is looked up in the
// host's PATH; "aiperf-node" or ".../aiperf-node" is cfg.aiperf_node_path).
//
// Files: `<work_dir>/pods/<uid>/volumes/<volume>` (ConfigMap, Secret,
// projected and downwardAPI volumes in the atomic writer's `..data` layout,
// mounted read-only; emptyDir), `<work_dir>/pods/<uid>/logs/<container>/
// <attempt>.log`, and `<work_dir>/pods/<uid>/etc-hosts`: kubelet's managed
// /etc/hosts with the pod's address, written once create_sandbox answers
// and passed to every container as a mount on /etc/hosts (the sandbox's
// hosts_file, made before the address is known, lacks the pod's line).
// resolv.conf is the sandbox's (ClusterFirst: search <ns>.svc.<domain>
// svc.<domain> <domain>, nameserver cfg.dns_server, ndots:5).
//
// Init containers run in order; a restartable one (restartPolicy Always,
// a sidecar) counts as done once started, restarts whatever the pod's
// policy, and is stopped once the containers have finished.
//
// Not emulated: exec and grpc probes (they succeed); tcpSocket probes are an
// HTTP GET that fails only when the connection does; OOMKilled; service
// links other than the `kubernetes` service's variables; dnsPolicy other
// than ClusterFirst; readiness gates; lifecycle hooks; imagePullPolicy
// (every image is present or unpullable); pod-level activeDeadlineSeconds;
// node heartbeats and leases. The sandbox is removed when the pod is
// deleted, not when it finishes (its logs stay readable while the pod
// exists).
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/sim/sandbox/sandbox.hpp"

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::kubelet {

struct kubelet_config {
  /// The Nodes this kubelet runs (every Node of the simulated cluster).
  std::vector<std::string> nodes = {"sim-node-0"};
  /// What an image whose name contains "aiperf-node" runs.
  std::string aiperf_node_path;
  /// Other images (exact image reference, e.g. "busybox:1.36") mapped to
  /// local executables; any image neither matches is ErrImagePull, then
  /// ImagePullBackOff.
  std::map<std::string, std::string> image_map;
  /// Pod root filesystems, volumes and logs: `<work_dir>/pods/<uid>/…`.
  std::string work_dir;
  /// Persistent volumes' data: `<pv_dir>/<pvc uid>` (the provisioner's).
  std::string pv_dir;
  /// The cluster's DNS server and search domain, for /etc/resolv.conf.
  std::string dns_server;
  std::string cluster_domain = "cluster.local";
  /// Multiplies kubelet's back-offs (CrashLoopBackOff 10 s doubling to
  /// 300 s, image pull 10 s doubling to 300 s); tests use a small factor.
  double backoff_scale = 1.0;
  /// Lifetime of projected service-account tokens (kubelet refreshes them
  /// at 80 % of it); kube-apiserver's default is 3607 s.
  std::int64_t token_expiration_seconds = 3607;
  /// The API server's address on the pod network: the `kubernetes`
  /// service's variables (KUBERNETES_SERVICE_HOST/PORT, KUBERNETES_PORT...)
  /// every container gets; "" = none are set.
  std::string api_host;
  std::uint16_t api_port = 443;
  /// status.hostIP and the Nodes' InternalIP (the pod network's gateway);
  /// "" = api_host.
  std::string host_ip;
  /// Unix seconds the kubelet's wall clock starts from at spawn (then the
  /// actor clock's elapsed time); 0 = the system clock. Tests set it.
  std::int64_t start_unix_seconds = 0;
};

using pod_info_atom = caf::atom_constant<caf::atom("kl_podinfo")>;
using pod_log_atom = caf::atom_constant<caf::atom("kl_podlog")>;
using kill_atom = caf::atom_constant<caf::atom("kl_kill")>;
using partition_atom = caf::atom_constant<caf::atom("kl_partit")>;
using pod_fault_atom = caf::atom_constant<caf::atom("kl_pfault")>;

/// Where a container's log is and whether more may come.
struct pod_log_source {
  std::string path;     // the log file (stdout and stderr, as written)
  bool running = false; // the container still runs: `follow` keeps reading
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, pod_log_source& x) {
  return f(caf::meta::type_name("aiperf::k8s::sim::kubelet::pod_log_source"),
           x.path, x.running);
}

/// The kubelet. Besides its own watches and timers (internal), it answers:
/// - `(pod_info_atom, namespace, name)` -> JSON text
///   `{"pid":…,"podIP":"…","netns":"net:[…]","containers":[{"name":…,
///   "pid":…,"restartCount":…}]}` (pid 0 for a container not running).
///   Error: k8s errc::not_found status when the pod has no sandbox here.
/// - `(pod_log_atom, namespace, name, container, bool previous)` ->
///   pod_log_source. container "" is allowed only for a one-container pod.
///   Errors are the API server's 400 BadRequest statuses, e.g. `a container
///   name must be specified for pod p, choose one of: [a b]`, `container
///   "c" in pod "p" is waiting to start: ContainerCreating`, `previous
///   terminated container "c" in pod "p" not found`; 404 for an unknown pod.
/// - `(kill_atom, namespace, name, std::string signal)` -> void: signals
///   every container of the pod ("KILL", "TERM", "INT", "HUP", "USR1" ...);
///   an unknown signal name is a 400 status.
/// - `(partition_atom, namespace, name, int32 seconds)` -> void: the pod's
///   link is down for that long.
/// - `(pod_fault_atom, std::string fault_json)` -> void: the next `count`
///   pods created after it that match `namespace` and `labelSelector` get
///   `state` ImagePullBackOff | ErrImagePull | CreateContainerConfigError |
///   CrashLoop (exits 1 at once, every restart). A bad document is a 400
///   status naming the field.
using kubelet_actor = caf::typed_actor<
    caf::replies_to<pod_info_atom, std::string, std::string>::with<std::string>,
    caf::replies_to<pod_log_atom, std::string, std::string, std::string,
                    bool>::with<pod_log_source>,
    caf::replies_to<kill_atom, std::string, std::string,
                    std::string>::with<void>,
    caf::replies_to<partition_atom, std::string, std::string,
                    std::int32_t>::with<void>,
    caf::replies_to<pod_fault_atom, std::string>::with<void>>;

/// Starts the kubelet over `api` and `runtime` (it subscribes to the
/// runtime's exits) and marks its Nodes Ready.
[[nodiscard]] kubelet_actor spawn_kubelet(caf::actor_system& sys, api_actor api,
                                          sandbox::runtime_actor runtime,
                                          kubelet_config cfg);

} // namespace aiperf::k8s::sim::kubelet
