// Kubernetes `Status` bodies: what an API server writes for a failure (and
// for a delete that removed its object), and how a client reads one back
// into a typed k8s::status. Clients decide on structure (reason, code,
// details.causes), never on message text.
#pragma once

#include "k8s/api/json.hpp"
#include "k8s/errors/errors.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace aiperf::k8s {

/// The exact bytes kube-apiserver writes for a failure: Go's field order
/// (kind, apiVersion, metadata, status, message, reason, details, code),
/// empty fields omitted, Go's string escaping (`<`, `>`, `&` as \u003c,
/// \u003e, \u0026), and the encoder's trailing "\n".
[[nodiscard]] std::string status_body(const status& st);

/// The same Status as a JSON value (watch ERROR events embed it).
[[nodiscard]] json status_to_json(const status& st);

/// The body of a delete that removed its object at once:
/// `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success",
/// "details":{"name":…,"group":…,"kind":<plural>,"uid":…}}` + "\n".
[[nodiscard]] std::string success_body(const status_details& details);

/// Reads a Status object (a JSON body with kind Status). Error
/// k8s::errc::invalid when the body is not one.
[[nodiscard]] caf::expected<status> parse_status(std::string_view body);

/// The error of a non-2xx response: its Status when the body is one; for
/// anything else (the plain-text `404 page not found` of an unknown path, a
/// proxy's HTML page) a Status made up as client-go does, e.g. NotFound
/// "the server could not find the requested resource". `what` starts the
/// message ("get configmaps/c1").
[[nodiscard]] caf::error error_of_response(std::int32_t http_code,
                                           std::string_view body,
                                           std::string_view what);

/// The 422 a server answers when a JSON patch fails to apply (a failed
/// `test` included): Go's NewGenericServerResponse drops the patch
/// library's message, so the body is the same for every such failure.
[[nodiscard]] status invalid_patch_status();

/// True for the 422 of a JSON patch that failed to apply (a failed `test`
/// op included): reason Invalid with an empty `details` object. A schema,
/// CEL or built-in validation 422 names the object and lists causes. The
/// fences of the operator depend on telling the two apart — a failed
/// `test` means "someone else won the race", a validation failure means
/// the write itself is wrong — so this reads the structure, never the text.
[[nodiscard]] bool is_failed_patch(const status& st) noexcept;

/// HTTP reason phrases a client shows: 404 -> "Not Found".
[[nodiscard]] std::string_view reason_phrase(std::int32_t http_code) noexcept;

} // namespace aiperf::k8s
