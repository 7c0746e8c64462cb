// How a k8s::request travels over HTTP: the client turns it into a method,
// a target (path and query) and headers; the server's front reads them
// back. Both directions live here so that the two can never disagree.
#pragma once

#include "k8s/api/api.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aiperf::k8s {

/// `/api/v1/namespaces/bench/configmaps/c1`, `/apis/batch/v1/jobs`, ...
[[nodiscard]] std::string path_of(const resource_ref& ref);

/// One HTTP request of the API.
struct http_call {
  std::string method;       // GET, POST, PUT, PATCH, DELETE
  std::string target;       // path and query, percent-encoded
  std::string content_type; // empty when there is no body
  std::string accept;
  std::string body;
  std::vector<std::pair<std::string, std::string>>
      headers; // User-Agent, Impersonate-*
};

/// The HTTP request of an API request, with the query parameters in the
/// order kubectl sends them. A watch (verb::watch) adds `watch=true`.
[[nodiscard]] http_call to_http(const request& r);

/// The Accept header asking for a server-side Table (kubectl's).
inline constexpr std::string_view table_accept
    = "application/json;as=Table;v=v1;g=meta.k8s.io,application/"
      "json;as=Table;v=v1beta1;"
      "g=meta.k8s.io,application/json";

/// True for the paths that are not resource requests: discovery (`/api`,
/// `/apis`, `/api/v1`, `/apis/<group>`, `/apis/<group>/<version>`),
/// `/version`, `/openapi/...`, `/healthz`, ... and anything outside `/api`
/// and `/apis`.
[[nodiscard]] bool is_non_resource_path(std::string_view path);

/// The API request an HTTP request carries (the server side). The user is
/// left as admin_user(): the front sets it after authenticating. Errors:
/// k8s::errc::not_found for a path that names no resource (answer the plain
/// `404 page not found`), otherwise a Status error (400 BadRequest for a bad
/// query value, 415 UnsupportedMediaType for a PATCH content type the API
/// does not know, 405 MethodNotAllowed).
[[nodiscard]] caf::expected<request> request_of(std::string_view method,
                                                std::string_view target,
                                                std::string_view content_type,
                                                std::string body);

/// Percent-encoding of a query value (RFC 3986 unreserved characters kept).
[[nodiscard]] std::string url_encode(std::string_view s);

/// Percent-decoding (and `+` as space) of a query value.
[[nodiscard]] std::string url_decode(std::string_view s);


/// The text of a `Warning` header as kube-apiserver writes it
/// (`299 - "unknown field \"spec.x\""`, RFC 7234 section 5.5): the quoted
/// text unescaped. A header of another shape is returned as it is.
[[nodiscard]] std::string warning_text(std::string_view header);

} // namespace aiperf::k8s
