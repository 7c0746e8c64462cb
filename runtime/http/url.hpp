// URL parsing for the HTTP client: turns what users type (`--url`,
// `localhost:8000`, `https://api.example.com/v1`) into an endpoint plus a base
// path, or into an error message that names the URL and says how to fix it.
#pragma once

#include "runtime/http/errors.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aiperf::http {

/// Where requests go: one keep-alive connection pool exists per distinct
/// (host, port, tls) triple.
struct endpoint {
  std::string host;   ///< DNS name or IP literal, without brackets.
  std::uint16_t port = 80;
  bool tls = false;   ///< true for https.

  friend bool operator==(const endpoint&, const endpoint&) = default;
};

/// A parsed base URL.
struct url {
  endpoint ep;
  /// Path prefix without a trailing slash ("" for "http://h:1/", "/v1" for
  /// "http://h:1/v1/"); append "/chat/completions" etc. to it.
  std::string base_path;
  /// User-info, percent-decoded; set when the URL had `user[:password]@`.
  std::optional<std::string> user;
  std::string password;
  /// Returns "http" or "https".
  [[nodiscard]] std::string_view scheme() const noexcept {
    return ep.tls ? "https" : "http";
  }
};


/// Parses `text` as http[s]://[user[:password]@]host[:port][/path]. The
/// user-info (up to the last '@', split at its first ':') is percent-decoded;
/// a bad '%' escape is refused. Without a scheme the input
/// is taken as http (AIPerf's default `localhost:8000`). Ports default to
/// 80/443; IPv6 literals need brackets ("http://[::1]:8000"). Query strings
/// and fragments are rejected because they cannot be combined with the
/// endpoint paths appended later.
/// A rejected URL is `errc::invalid_url` naming the input and the fix.
[[nodiscard]] caf::expected<url> parse_url(std::string_view text);

/// `Basic base64(user:password)` for a URL with user-info (what aiohttp
/// sends for such a URL), "" without.
[[nodiscard]] std::string basic_authorization(const url& u);

/// Decodes %XX escapes; std::nullopt for a malformed one.
[[nodiscard]] std::optional<std::string> percent_decode(std::string_view s);

} // namespace aiperf::http
