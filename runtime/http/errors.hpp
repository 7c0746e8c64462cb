// The HTTP component's error enum: why a request failed (also the
// category of a request's record) or why a URL was rejected.
#pragma once

#include "proto/error.hpp"

#include <cstdint>
#include <string_view>

namespace aiperf::http {

/// Why a request failed; `none` means it completed with a full response.
enum class error_category : std::uint8_t {
  none,
  connect,   ///< resolve/connect failed (refused, unreachable, DNS)
  tls,       ///< TLS handshake or certificate verification failed
  timeout,   ///< the request deadline passed
  cancelled, ///< cancel() or client shutdown
  protocol,  ///< malformed HTTP from the server
  io,        ///< read/write failed or the server closed mid-response
  invalid_url, ///< parse_url rejected the text (never a request outcome)
};

/// The component's error enum: a failed request or URL as a caf::error is
/// its category with the message and the errno / asio / OpenSSL code.
using errc = error_category;

/// Returns "none", "connect", "tls", ... for logs and records.
[[nodiscard]] std::string_view to_string(error_category c) noexcept;

} // namespace aiperf::http

AIPERF_ERROR_ENUM(aiperf::http::error_category, "http")
