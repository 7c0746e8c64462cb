// Blocking HTTP/1.1 calls to services inside the cluster: a worker pod's to
// the controller's api_service (dataset download, RAW part upload), the
// operator's to a controller pod (results harvest, shutdown). Few, large,
// off the hot path, so a plain synchronous Beast client is the right tool.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace aiperf::http_fetch {

struct reply {
  /// 0 when no response arrived (see `error`).
  int status = 0;
  std::string body;
  /// Transport failure ("connect 127.0.0.1:9090: Connection refused").
  std::string error;
  [[nodiscard]] bool ok() const noexcept { return status == 200; }
};

/// Where the service listens.
struct endpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
};

/// GET `target` ("/api/dataset/index.dat.zst").
[[nodiscard]] reply get(const endpoint& ep, const std::string& target,
                        std::chrono::milliseconds timeout);

/// PUT `body` to `target`.
[[nodiscard]] reply put(const endpoint& ep, const std::string& target, std::string body,
                        std::chrono::milliseconds timeout);

/// POST `body` to `target`.
[[nodiscard]] reply post(const endpoint& ep, const std::string& target, std::string body,
                         std::chrono::milliseconds timeout);

} // namespace aiperf::http_fetch
