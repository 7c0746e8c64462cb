// Blocking HTTP/1.1 calls a worker pod makes to the controller's api_service
// (dataset download, RAW part upload). Few, large, off the hot path, so a
// plain synchronous Beast client is the right tool.
#pragma once

#include "proto/ports.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace aiperf::remote {

struct http_reply {
  /// 0 when no response arrived (see `error`).
  int status = 0;
  std::string body;
  /// Transport failure ("connect 127.0.0.1:9090: Connection refused").
  std::string error;
  [[nodiscard]] bool ok() const noexcept { return status == 200; }
};

/// Where the controller's api_service listens.
struct api_endpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = proto::default_port::api;
};

/// GET `target` ("/api/dataset/index.dat.zst").
[[nodiscard]] http_reply http_get(const api_endpoint& ep,
                                  const std::string& target,
                                  std::chrono::milliseconds timeout);

/// PUT `body` to `target`.
[[nodiscard]] http_reply http_put(const api_endpoint& ep,
                                  const std::string& target, std::string body,
                                  std::chrono::milliseconds timeout);

} // namespace aiperf::remote
