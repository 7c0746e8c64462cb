// The simulated cluster's DNS server: what CoreDNS is to a cluster, on the
// pod network's gateway. It answers from a cache of Services and
// EndpointSlices (and, for a Service no slice names, its Endpoints) that
// it lists and watches over `k8s::api_actor` (so the EndpointSlice
// controller must run), with the records zone.hpp describes:
// Services, pod hostnames, named-port SRV, `kubernetes.default.svc`, pod
// A records and PTR. Names outside the cluster domain are REFUSED (no
// forwarding), so pods resolve cluster names only.
//
// It serves sockets it is given: a bound UDP socket and a listening TCP
// socket, created by the caller inside the pod network's namespace on
// gateway:53 (the server never binds or enters a namespace itself). The
// server owns both fds once start_dns succeeds and closes them on stop.
// UDP answers above 512 octets (or the client's EDNS size) are truncated
// (TC) so that resolvers retry over TCP, where a message has its two-octet
// length prefix and a connection may carry several queries.
//
// Until the first lists are in, every query is answered SERVFAIL (a
// resolver tries again), as CoreDNS does before its caches sync.
#pragma once

#include "k8s/api/api.hpp"
#include "proto/error.hpp"

#include <caf/expected.hpp>
#include <caf/fwd.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace aiperf::k8s::sim::dns {

enum class errc : std::uint8_t {
  bad_socket = 1, // an fd that is not the socket it should be
  bad_config,     // a domain or address that cannot be served
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::k8s::sim::dns

AIPERF_ERROR_ENUM(aiperf::k8s::sim::dns::errc, "k8s_dns")

namespace aiperf::k8s::sim::dns {

struct dns_config {
  /// A bound UDP socket (IPv4 or IPv6); -1 = no UDP.
  int udp_fd = -1;
  /// A listening TCP socket; -1 = no TCP.
  int tcp_fd = -1;
  std::string cluster_domain = "cluster.local";
  /// What `kubernetes.default.svc.<domain>` answers (IPv4); "" = the
  /// `kubernetes` Service's endpoints.
  std::string api_server_address;
  /// The TTL of every record (CoreDNS kubernetes plugin default: 5 s).
  std::uint32_t ttl = 5;
};

/// Counters for tests and the simulator's status.
struct dns_stats {
  std::uint64_t queries = 0;   // well-formed queries answered
  std::uint64_t malformed = 0; // FORMERR answers and dropped datagrams
  std::uint64_t truncated = 0; // UDP answers sent with TC
};

class dns_server {
public:
  struct impl;
  explicit dns_server(std::shared_ptr<impl> p);
  ~dns_server();
  dns_server(const dns_server&) = delete;
  dns_server& operator=(const dns_server&) = delete;

  /// Closes both sockets and every connection, stops the io thread and the
  /// cache actor. Idempotent; the destructor calls it.
  void stop();

  /// Whether the cache has listed Services and EndpointSlices once (before
  /// that every answer is SERVFAIL).
  [[nodiscard]] bool ready() const;

  [[nodiscard]] dns_stats stats() const;

private:
  std::shared_ptr<impl> impl_;
};

/// Starts the server on the sockets of `cfg`. Errors: errc::bad_socket
/// naming the fd when udp_fd is not a bound datagram socket or tcp_fd not a
/// listening stream socket (or both are -1); errc::bad_config for an empty
/// domain or an api_server_address that is not IPv4. On error the fds are
/// left open (they are still the caller's).
[[nodiscard]] caf::expected<std::unique_ptr<dns_server>>
start_dns(caf::actor_system& sys, api_actor api, dns_config cfg);

} // namespace aiperf::k8s::sim::dns
