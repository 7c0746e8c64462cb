// The simulated node's container runtime: pods as real processes, each in
// its own network namespace with its own address on a bridge, all inside a
// cluster network namespace and PID namespace that the simulator owns.
//
// Shape (what a test or `ps`/`ip` sees):
// - The cluster: one init process, PID 1 of a new PID namespace, in a new
//   network and mount namespace. It holds the bridge `aiperf0` whose address
//   is the gateway (the first host address of the pod CIDR). Init dies with
//   the simulator (parent-death signal), and the kernel then kills every
//   process of its PID namespace; with the last process of a network
//   namespace gone, its interfaces go too. Nothing is named under
//   /var/run/netns, so after a `kill -9` of the simulator nothing remains.
// - A pod sandbox: a holder process (as kubelet's pause container) in a new
//   network, UTS and IPC namespace, joined to the bridge by a veth pair,
//   with an address from the CIDR and a default route via the gateway.
// - A container: a process that joins its sandbox's namespaces and gets a
//   mount namespace of its own: a root made of the host's read-only system
//   folders, the sandbox's /etc/hosts and /etc/resolv.conf, and the mounts
//   it declares (the only writable places when read_only_root is set); it
//   runs as the uid/gid/groups given, with no_new_privs and the bounding set
//   emptied on request. Stdout and stderr go to its log file.
//
// The host reaches the pod network only through sockets made in the
// cluster's network namespace (cluster::open_socket): the API server's
// listener on the gateway, its pods/services proxy, the DNS server, probes.
#pragma once

#include "proto/error.hpp"

#include <caf/atom.hpp>
#include <caf/expected.hpp>
#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::sandbox {

struct cluster_options {
  /// The pod network; the gateway is its first host address, pods get the
  /// following ones.
  std::string pod_cidr = "10.244.0.0/16";
  /// Where pod root filesystems and logs live (`<work_dir>/pods/<id>/…`).
  std::string work_dir;
  /// The executable whose hidden `sim-pod-init` entry point becomes the
  /// cluster's init (a single-threaded process, so it may fork freely);
  /// "" = /proc/self/exe.
  std::string init_executable;
};

/// The cluster's namespaces and network. Thread-safe; the destructor kills
/// every pod and the init process.
class cluster {
public:
  /// Starts init, the bridge and the gateway address. Errors
  /// (sandbox::errc) name what is missing: root, network namespaces, the
  /// `ip` command, a CIDR that is not an IPv4 prefix of /8-/28.
  [[nodiscard]] static caf::expected<std::shared_ptr<cluster>>
  start(cluster_options opts);

  virtual ~cluster() = default;

  /// "10.244.0.1".
  [[nodiscard]] virtual const std::string& gateway() const = 0;
  /// "10.244.0.0/16".
  [[nodiscard]] virtual const std::string& cidr() const = 0;
  /// The init process's pid as the host sees it.
  [[nodiscard]] virtual std::int32_t init_pid() const = 0;
  /// A socket (socket(2) arguments) made in the cluster's network namespace;
  /// the caller owns the descriptor. Used to listen on the gateway and to
  /// connect to pod addresses.
  [[nodiscard]] virtual caf::expected<int> open_socket(int domain, int type,
                                                       int protocol = 0) const
      = 0;
};

/// One bind mount into a container's filesystem.
struct mount {
  std::string source; // a host path (file or folder)
  std::string target; // the path inside the container
  bool read_only = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, mount& x) {
  return f(caf::meta::type_name("aiperf::k8s::sim::sandbox::mount"), x.source,
           x.target, x.read_only);
}

struct sandbox_spec {
  std::string id;          // the pod's uid
  std::string hostname;    // spec.hostname, else the pod's name
  std::string hosts_file;  // the whole /etc/hosts text
  std::string resolv_conf; // the whole /etc/resolv.conf text
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sandbox_spec& x) {
  return f(caf::meta::type_name("aiperf::k8s::sim::sandbox::sandbox_spec"),
           x.id, x.hostname, x.hosts_file, x.resolv_conf);
}

struct sandbox_info {
  std::string id;
  std::string ip;        // the pod's address, "10.244.0.7"
  std::int32_t pid = 0;  // the holder process, as the host sees it
  std::string netns;     // its network namespace, "net:[4026532712]"
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, sandbox_info& x) {
  return f(caf::meta::type_name("aiperf::k8s::sim::sandbox::sandbox_info"),
           x.id, x.ip, x.pid, x.netns);
}

struct container_spec {
  std::string name;
  /// argv[0] is an absolute path of a host executable (the kubelet resolved
  /// the image to it).
  std::vector<std::string> argv;
  std::vector<std::string> env; // "NAME=value"
  std::string working_dir;      // "" = "/"
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::vector<std::uint32_t> groups; // supplementary (fsGroup, ...)
  bool read_only_root = false;
  bool drop_all_capabilities = false;
  bool no_new_privileges = false;
  std::vector<sandbox::mount> mounts;
  /// Stdout and stderr are appended here (created if missing).
  std::string log_path;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, container_spec& x) {
  return f(caf::meta::type_name("aiperf::k8s::sim::sandbox::container_spec"),
           x.name, x.argv, x.env, x.working_dir, x.uid, x.gid, x.groups,
           x.read_only_root, x.drop_all_capabilities, x.no_new_privileges,
           x.mounts, x.log_path);
}

/// An HTTP GET into the pod network (kubelet's httpGet probe).
struct http_probe {
  std::string ip;
  std::uint16_t port = 0;
  std::string path = "/";
  std::vector<std::pair<std::string, std::string>> headers;
  std::int32_t timeout_ms = 1000;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, http_probe& x) {
  return f(caf::meta::type_name("aiperf::k8s::sim::sandbox::http_probe"),
           x.ip, x.port, x.path, x.headers, x.timeout_ms);
}

using create_sandbox_atom = caf::atom_constant<caf::atom("sbx_create")>;
using start_container_atom = caf::atom_constant<caf::atom("sbx_start")>;
using signal_atom = caf::atom_constant<caf::atom("sbx_signal")>;
using remove_sandbox_atom = caf::atom_constant<caf::atom("sbx_remove")>;
using probe_atom = caf::atom_constant<caf::atom("sbx_probe")>;
using link_atom = caf::atom_constant<caf::atom("sbx_link")>;
using subscribe_atom = caf::atom_constant<caf::atom("sbx_subscr")>;
using exited_atom = caf::atom_constant<caf::atom("sbx_exited")>;

/// Told when a container's process ends:
/// `(exited_atom, sandbox id, container name, pid, exit code)` — the exit
/// status, or 128 + the signal that killed it (137 after SIGKILL). No reply.
using exit_sink_actor = caf::typed_actor<caf::reacts_to<
    exited_atom, std::string, std::string, std::int32_t, std::int32_t>>;

/// The runtime (kubelet's CRI). Requests and replies:
/// - `(create_sandbox_atom, sandbox_spec)` -> sandbox_info: the holder
///   process, its namespaces, veth and address. Error: errc naming the step
///   that failed (the pod then stays in ContainerCreating, as on a node whose
///   CNI fails).
/// - `(start_container_atom, sandbox id, container_spec)` -> pid (host
///   view): the process runs. Errors: unknown sandbox; a mount source that
///   does not exist; an executable that cannot be run (the message is what
///   kubelet reports as the container's waiting message).
/// - `(signal_atom, sandbox id, container name, signal)` -> void: sends the
///   signal to that container's process; a container that is not running is
///   not an error.
/// - `(remove_sandbox_atom, sandbox id)` -> void: SIGKILLs what still runs
///   in it, removes its veth and files; unknown ids are not an error.
/// - `(probe_atom, http_probe)` -> HTTP status code; error when the connect
///   fails or the answer does not come within timeout_ms (the message says
///   which, as kubelet's probe output does).
/// - `(link_atom, sandbox id, bool up)` -> void: takes the pod's link down
///   (a network partition: nothing in or out) or up again.
/// - `(subscribe_atom, exit_sink_actor)` -> void: where exits are reported
///   (one sink; a later call replaces it).
using runtime_actor = caf::typed_actor<
    caf::replies_to<create_sandbox_atom, sandbox_spec>::with<sandbox_info>,
    caf::replies_to<start_container_atom, std::string,
                    container_spec>::with<std::int32_t>,
    caf::replies_to<signal_atom, std::string, std::string,
                    std::int32_t>::with<void>,
    caf::replies_to<remove_sandbox_atom, std::string>::with<void>,
    caf::replies_to<probe_atom, http_probe>::with<std::int32_t>,
    caf::replies_to<link_atom, std::string, bool>::with<void>,
    caf::replies_to<subscribe_atom, exit_sink_actor>::with<void>>;

/// The real runtime over `c`.
[[nodiscard]] runtime_actor spawn_runtime(caf::actor_system& sys,
                                          std::shared_ptr<cluster> c);

/// The hidden `aiperf-node sim-pod-init` entry point: the cluster's init
/// loop, reading its commands from file descriptor `control_fd`. Returns the
/// process's exit code.
int init_main(int control_fd);

} // namespace aiperf::k8s::sim::sandbox
