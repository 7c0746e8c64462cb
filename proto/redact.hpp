// The one redaction of a URL's user-info, for every layer that prints or
// exports URLs (config exports, the HTTP client's messages, manifests).
#pragma once

#include <string>
#include <string_view>

namespace aiperf::proto {

/// The text that replaces secrets when redacting.
inline constexpr std::string_view redacted = "<redacted>";

/// `url` with its user-info (user:password@, up to the authority's last
/// '@') replaced by "<redacted>" ("http://<redacted>@h:1/v1"); a URL
/// without user-info is returned unchanged.
[[nodiscard]] inline std::string redact_url(std::string_view url) {
  auto scheme = url.find("://");
  auto start = scheme == std::string_view::npos ? 0 : scheme + 3;
  auto end = url.find_first_of("/?#", start);
  auto authority = url.substr(start, end == std::string_view::npos ? end : end - start);
  auto at = authority.rfind('@');
  if (at == std::string_view::npos)
    return std::string{url};
  std::string out{url.substr(0, start)};
  out += redacted;
  out += url.substr(start + at);
  return out;
}

} // namespace aiperf::proto
