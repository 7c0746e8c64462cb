// Internals shared by the cluster, the runtime actor and the init process:
// the pod CIDR arithmetic, the control channel to init and its messages.
//
// Control channel: one AF_UNIX SOCK_SEQPACKET pair; every packet is one
// JSON document. The runtime sends requests `{"seq":N,"op":...}`; init
// answers each with `{"seq":N,"ok":true,...}` or `{"seq":N,"ok":false,
// "code":"<errc name>","error":"<message>"}`, in order, one at a time.
// Unasked, init sends `{"event":"exited","id":...,"name":...,"code":...}`
// when a container's process ends. A packet that names a process (a
// sandbox's holder, a started or exited container) carries SCM_CREDENTIALS
// with that process's pid: the kernel translates it into the receiver's PID
// namespace, which is how the runtime learns host pids of processes that
// init only knows by their pid in the cluster's PID namespace. Requests:
//   setup  {gateway, prefix}                 lo up, bridge aiperf0, address
//   create {id, hostname, ip, prefix, gateway, veth}  holder + veth; pid
//   start  {id, name, root, argv, env, ...}  a container; pid
//   signal {id, name, signal}                kill(2) of a running container
//   remove {id}                              kills the pod, deletes its veth
//   link   {id, veth, up}                    the veth's host end down/up
#pragma once

#include "k8s/api/json.hpp"
#include "k8s/sim/sandbox/errors.hpp"
#include "k8s/sim/sandbox/sandbox.hpp"

#include <caf/expected.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>

namespace aiperf::k8s::sim::sandbox::detail {

/// An IPv4 prefix, host byte order.
struct ipv4_net {
  std::uint32_t network = 0;
  int prefix = 0;
  /// The number of pod addresses: all but network, gateway and broadcast.
  [[nodiscard]] std::uint32_t pod_slots() const {
    return (std::uint32_t{1} << (32 - prefix)) - 3;
  }
  /// The address of pod slot `i` (0-based): network + 2 + i.
  [[nodiscard]] std::uint32_t pod_address(std::uint32_t i) const {
    return network + 2 + i;
  }
  [[nodiscard]] std::uint32_t gateway() const { return network + 1; }
};

/// "10.244.0.0/16" (host bits are cleared). Error: errc::bad_cidr.
[[nodiscard]] caf::expected<ipv4_net> parse_cidr(std::string_view text);

[[nodiscard]] std::string format_ipv4(std::uint32_t addr);

/// The `ip` executable, "" when there is none.
[[nodiscard]] std::string find_ip_command();

/// One answer of init: its document and the pid of its credentials (the
/// host's view; 0 when the packet named no process).
struct reply {
  json body;
  std::int32_t pid = 0;
};

/// The real cluster: owns init, the control channel and the threads that
/// fork init (its parent-death signal is tied to that thread) and read
/// init's packets.
class cluster_impl final : public cluster {
public:
  using event_handler = std::function<void(const json&, std::int32_t pid)>;

  explicit cluster_impl(cluster_options opts, ipv4_net net);
  ~cluster_impl() override;

  /// Forks init, starts the reader and asks init for the network.
  caf::error boot();

  const std::string& gateway() const override { return gateway_; }
  const std::string& cidr() const override { return cidr_; }
  std::int32_t init_pid() const override { return init_pid_; }
  caf::expected<int> open_socket(int domain, int type,
                                 int protocol) const override;

  /// Sends `req` (its "seq" is set here) and waits for the answer. An
  /// answer with "ok":false becomes the error it names.
  caf::expected<reply> call(json req, std::chrono::milliseconds timeout);

  /// Where init's events go (one handler; a later call replaces it).
  void on_event(event_handler f);

  const ipv4_net& net() const { return net_; }
  const cluster_options& options() const { return opts_; }

private:
  struct slot {
    bool done = false;
    caf::expected<reply> result{reply{}};
  };

  void read_loop();
  void fail_pending(const caf::error& err);

  cluster_options opts_;
  ipv4_net net_;
  std::string gateway_;
  std::string cidr_;
  std::int32_t init_pid_ = 0;
  int ctrl_fd_ = -1;
  int netns_fd_ = -1;

  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t next_seq_ = 1;
  std::map<std::uint64_t, slot> pending_;
  bool dead_ = false;
  event_handler handler_;

  std::mutex owner_mu_;
  std::condition_variable owner_cv_;
  bool stopping_ = false;
  std::thread owner_;
  std::thread reader_;
};

/// Removes what the runtime put in the pod folder `dir` (hosts,
/// resolv.conf, containers/) and the folder itself once it is empty; the
/// kubelet's files there (logs, volumes) stay for it to remove.
void remove_pod_files(const std::string& dir);

/// The probe, blocking (run it off an actor's thread).
[[nodiscard]] caf::expected<std::int32_t> run_probe(const cluster& c,
                                                    const http_probe& p);

} // namespace aiperf::k8s::sim::sandbox::detail
