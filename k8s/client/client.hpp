// The product's Kubernetes client: k8s::api_actor over HTTPS to a real or
// simulated API server (k8s/client/transport.hpp), with the credentials of
// a client_config (k8s/client/config.hpp).
//
// Per request: the request becomes HTTP as k8s/object/wire.hpp maps it; a
// non-2xx answer becomes the caf::error of its Status
// (k8s/object/status_json.hpp); a 429 (or a 5xx) with Retry-After is sent
// again after that many seconds, up to max_retries times, then it is the
// error; a 401 with an exec plugin runs the plugin again and retries once.
// Every attempt is counted in request_metrics.
//
// Watches stream newline-delimited JSON events to the sink in order; the
// end of the stream is watch_end with no error (resume from the last
// resourceVersion), a broken connection watch_end with errc::transport, and
// an unwatch closes the connection and ends with errc::transport
// "unwatched".
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/client/config.hpp"
#include "k8s/client/metrics.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace aiperf::k8s::client {

struct client_options {
  /// Deadline of one attempt (for a watch: until its headers arrive). The
  /// requester's own timeout should be longer than the retries it allows.
  std::chrono::milliseconds request_timeout{30'000};
  /// Retries after a 429/5xx with Retry-After before the error is replied
  /// (client-go: 10).
  int max_retries = 10;
  /// Longest Retry-After honoured; a longer one is cut to this.
  std::chrono::seconds max_retry_after{60};
  /// Where requests are counted; null = not counted.
  std::shared_ptr<request_metrics> metrics;
  /// Sent unless the request sets its own.
  std::string user_agent = "aiperf-node";
  /// Wall-clock nanoseconds, for exec credentials' expirationTimestamp and
  /// the token file's minute (tests move it). Default: the system clock.
  std::function<std::int64_t()> wall_clock_ns;
};

/// Spawns the client. Errors: a server URL, CA, certificate or key that
/// cannot be used (errc::bad_config / errc::credentials, naming it).
[[nodiscard]] caf::expected<api_actor> spawn_client(caf::actor_system& sys,
                                                    client_config cfg,
                                                    client_options opts = {});

/// What a request's error messages start with: "get configmaps/c1",
/// "list pods", "patch aiperfjobs/j1/status".
[[nodiscard]] std::string describe(const request& r);

} // namespace aiperf::k8s::client
