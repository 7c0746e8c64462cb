// The operator's endpoint check at admission (condition EndpointReachable):
// before anything is created for an AIPerfJob, each spec.benchmark.endpoint
// URL is resolved and a TCP connection opened to it from the operator's pod,
// so a job with a mistyped service name fails at once instead of after its
// pods started. A name that does not resolve is permanent (Failed,
// EndpointDNSResolutionFailed); a refused or timed-out connection is not
// (the server may still be starting: the job waits, retried). Skipped with
// spec.skipEndpointCheck.
//
// Protocol: `(probe_atom, url)` → probe_result, within the configured
// timeout (AIPERF_ENDPOINT_CHECK_TIMEOUT, 10 s) plus resolution. Each probe
// runs on a detached actor of its own (blocking resolver and connect), so
// probes of several jobs overlap.
#pragma once

#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <cstdint>
#include <string>

namespace aiperf::op {

enum class probe_outcome : std::uint8_t {
  reachable = 0,
  unreachable, // refused, timed out, no route: retried
  dns_failed,  // the name does not resolve (or the URL is unusable): permanent
};

struct probe_result {
  probe_outcome outcome = probe_outcome::reachable;
  /// What was tried and what happened ("mock.bench.svc.cluster.local:8000:
  /// connection refused").
  std::string message;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, probe_result& x) {
  return f(caf::meta::type_name("aiperf::op::probe_result"), x.outcome, x.message);
}

using probe_atom = caf::atom_constant<caf::atom("opprobe")>;

using prober_actor = caf::typed_actor<caf::replies_to<probe_atom, std::string>::with<probe_result>>;

/// The production prober: getaddrinfo, then a non-blocking connect to the
/// first address that answers, each connect bounded by `timeout`.
[[nodiscard]] prober_actor spawn_endpoint_prober(caf::actor_system& sys,
                                                 std::chrono::milliseconds timeout);

/// One probe, blocking (what each detached probe runs).
[[nodiscard]] probe_result probe_endpoint(const std::string& url,
                                          std::chrono::milliseconds timeout);

} // namespace aiperf::op
