// The kube-controller-manager loops that give Services their endpoints and
// namespaces their service account and CA bundle, written against
// `k8s::api_actor` alone (list + watch + writes), like the garbage
// collector and the namespace controller (k8s/sim/controllers):
//
// - the Endpoints controller (kubernetes pkg/controller/endpoint): for each
//   Service with a selector (not ExternalName) an Endpoints object of the
//   same name and labels (plus `service.kubernetes.io/headless` for
//   clusterIP None): ready pods in `addresses`, the others in
//   `notReadyAddresses` (all in `addresses` with publishNotReadyAddresses),
//   each with ip, nodeName, targetRef (Pod namespace/name/uid) and hostname
//   when the pod's hostname is set and its subdomain is the Service's name;
//   ports from targetPort (a number, or the name of a container port of
//   the same protocol; a pod without it is left out of that port); a
//   headless Service without ports gets port-less subsets. Pods without an
//   IP, Succeeded or Failed, or being deleted (unless
//   publishNotReadyAddresses) are left out. Subsets are repacked as
//   upstream's RepackSubsets does (addresses offering the same ports share a
//   subset); the `endpoints.kubernetes.io/last-change-trigger-time`
//   annotation is the earliest unseen change (a pod's Ready transition, the
//   Service's creation), removed when a sync sees none. The Endpoints
//   object of a deleted Service is deleted (it has no owner reference);
//   one without a Service is deleted once every cache has listed and a GET
//   has confirmed the Service is gone (an Endpoints object written while
//   the controller runs is only taken for a leftover after a restart, as
//   upstream).
// - the EndpointSlice controller (pkg/controller/endpointslice,
//   staging/src/k8s.io/endpointslice): for the same Services, IPv4 slices
//   named `<service>-<5 random>` (generateName), labelled
//   `kubernetes.io/service-name`, `endpointslice.kubernetes.io/managed-by:
//   endpointslice-controller.k8s.io` and the Service's labels, with a
//   controller ownerReference to the Service (the garbage collector removes
//   them with it). Every pod with an IP that is not Succeeded/Failed is an
//   endpoint, terminating ones included, with conditions serving (Ready),
//   terminating (deletionTimestamp) and ready (publishNotReadyAddresses, or
//   serving and not terminating). Endpoints with the same ports share a
//   slice (at most 100 per slice); a Service with none keeps one empty
//   slice, as upstream's placeholder.
// - the ServiceAccount controller (pkg/controller/serviceaccount) and the
//   root CA publisher (pkg/controller/certificates/rootcacertpublisher):
//   every namespace that is not terminating has a `default` ServiceAccount
//   and a `kube-root-ca.crt` ConfigMap whose data is exactly `ca.crt` =
//   the root CA (the store's own object: the same description annotation);
//   either is made again when deleted, and the ConfigMap is put back when
//   changed.
//
// Deviations: Services get no virtual IP, so a ClusterIP Service whose
// spec.clusterIP is empty is not labelled headless (upstream's rule would);
// subsets and slice endpoints are sorted by address rather than by
// upstream's hash order; slices are not packed across port sets the way
// upstream's reconciler minimises churn (one slice per port set); zones and
// topology hints are not set.
//
// Each controller lists and watches what it needs, acts only once every
// list is in, and relists a second after a watch ends. A failed write is
// retried a second later. Time comes only from the actor clock.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/sim/endpoints/watch_set.hpp"

#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <string>

namespace aiperf::k8s::sim {

/// Every controller of this library. It is the sink of its own watches
/// (k8s::watch_sink_actor); `(net::net_relist_atom, uint64_t kind)` is its
/// relist timer and `(net::net_sync_atom, std::string key)` its retry timer
/// for one Service or namespace. Nothing is asked of it, it replies
/// nothing, and it stops when killed.
using network_controller_actor = watch_sink_actor::extend<
    caf::reacts_to<net::net_relist_atom, std::uint64_t>,
    caf::reacts_to<net::net_sync_atom, std::string>>;

/// Starts the Endpoints controller over `api`.
[[nodiscard]] network_controller_actor
spawn_endpoints_controller(caf::actor_system& sys, api_actor api);

/// Starts the EndpointSlice controller over `api`.
[[nodiscard]] network_controller_actor
spawn_endpointslice_controller(caf::actor_system& sys, api_actor api);

/// Starts the ServiceAccount controller (with the root CA publisher) over
/// `api`; `root_ca_pem` is what `kube-root-ca.crt` holds under `ca.crt`
/// ("" for a cluster without TLS, as the store writes it).
[[nodiscard]] network_controller_actor
spawn_serviceaccount_controller(caf::actor_system& sys, api_actor api,
                                std::string root_ca_pem);

} // namespace aiperf::k8s::sim
