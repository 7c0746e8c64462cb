// The cluster DNS zone: what the server answers, built from Services and
// EndpointSlices, and the lookup of one question in it. It follows the
// Kubernetes DNS specification (kubernetes/dns docs/specification.md) as
// CoreDNS's kubernetes plugin serves it (plugin/kubernetes), with kubeadm's
// Corefile options (`pods insecure`, ttl 5):
//
// - `<svc>.<ns>.svc.<domain>` A: a headless Service (clusterIP None) → the
//   addresses of its ready endpoints (NXDOMAIN while it has none, as
//   CoreDNS); a ClusterIP Service → the same ready endpoint addresses, since
//   the simulator has no virtual IPs (a deviation: a client sees the pods'
//   addresses, a Service without ready endpoints is NOERROR with no
//   records); an ExternalName Service → a CNAME to its externalName.
// - `<hostname>.<svc>.<ns>.svc.<domain>` A: the ready endpoints whose
//   hostname (or, without one, the address with dashes, `10-1-0-5`) is
//   that label — how pods of a StatefulSet or JobSet find each other.
// - `_<port>._<proto>.<svc>.<ns>.svc.<domain>` SRV for named ports: a
//   ClusterIP Service → one record targeting `<svc>.<ns>.svc.<domain>` with
//   the Service's port; a headless one → one per ready endpoint, targeting
//   its hostname name with the endpoint's port; the targets' A records in
//   the additional section.
// - `kubernetes.default.svc.<domain>` → the API server's address.
// - `<a-b-c-d>.<ns>.pod.<domain>` A → a.b.c.d (`pods insecure`).
// - `<d.c.b.a>.in-addr.arpa` PTR → the endpoint name of a ready endpoint
//   with that address.
// - A known name with no records of the asked type (AAAA: the cluster is
//   IPv4 only) is NOERROR with no answers; an unknown name under the domain
//   is NXDOMAIN; both carry the zone's SOA (`ns.dns.<domain>
//   hostmaster.<domain> serial 7200 1800 86400 <ttl>`) in the authority
//   section. Names outside the domain are REFUSED: there is no upstream
//   forwarding, so nothing but the cluster resolves here (another deviation
//   from kubeadm's Corefile, which forwards to the node's resolv.conf).
// Names compare case-insensitively; answers keep the question's case.
#pragma once

#include "k8s/api/json.hpp"
#include "k8s/sim/dns/codec.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::dns {

struct port_info {
  std::string name;
  std::string protocol; // "TCP", "UDP", "SCTP"
  std::uint16_t port = 0;
};

struct endpoint_info {
  std::string ip;
  std::string hostname; // "" = none
  std::vector<port_info> ports;
};

struct service_info {
  std::string type = "ClusterIP";
  bool headless = false;
  std::string external_name;
  std::vector<port_info> ports;
  std::vector<endpoint_info> endpoints; // ready ones only
};

struct zone_config {
  std::string domain = "cluster.local";
  /// The address `kubernetes.default.svc` answers; "" = the Service's
  /// endpoints, as for any other.
  std::string api_server;
  std::uint32_t ttl = 5;
};

struct zone {
  zone_config config;
  std::map<std::string, service_info> services; // by "ns/name", lower case
  std::uint32_t serial = 1;
};

/// Builds the zone from Service and EndpointSlice objects (by
/// "namespace/name"): a slice belongs to the Service its
/// `kubernetes.io/service-name` label names; an endpoint counts when its
/// `conditions.ready` is not false (the EndpointSlice controller already
/// folds publishNotReadyAddresses into it). A Service no slice names takes
/// the ready `addresses` of its Endpoints object instead, as the
/// EndpointSlice mirroring controller would have copied them for a
/// Service without a selector.
[[nodiscard]] zone
build_zone(const zone_config& cfg, const std::map<std::string, json>& services,
           const std::map<std::string, json>& slices, std::uint32_t serial,
           const std::map<std::string, json>& endpoints = {});

/// The answer to `q` (class IN or ANY; other classes are REFUSED).
[[nodiscard]] answer lookup(const zone& z, const question& q);

} // namespace aiperf::k8s::sim::dns
