// How a Kubernetes failure reaches code: a caf::error whose code is a
// k8s::errc and whose context is the message followed by the k8s::status the
// API server answered (the `Status` object of a non-2xx response, or one
// made up by the client for a transport failure or timeout).
//
//   return make_error(errc::conflict, "jobs/demo: the object has been modified",
//                     status{"Conflict", 409, "...", {}});
//   if (const auto* st = status_of(err); st && st->reason == "Conflict") ...
#pragma once

#include "proto/error.hpp"

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace aiperf::k8s {

/// One entry of `status.details.causes` (field-level validation errors).
struct status_cause {
  std::string reason; // "FieldValueInvalid"
  std::string message;
  std::string field; // "spec.replicas"

  bool operator==(const status_cause&) const = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, status_cause& x) {
  return f(caf::meta::type_name("aiperf::k8s::status_cause"), x.reason, x.message, x.field);
}

/// `status.details` of a Kubernetes Status object.
struct status_details {
  std::string name;
  std::string group;
  std::string kind;
  std::string uid;
  std::vector<status_cause> causes;
  /// Seconds the server asks the client to wait (429, 503), 0 if unset.
  std::int32_t retry_after_seconds = 0;

  bool operator==(const status_details&) const = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, status_details& x) {
  return f(caf::meta::type_name("aiperf::k8s::status_details"), x.name, x.group, x.kind, x.uid,
           x.causes, x.retry_after_seconds);
}

/// A Kubernetes `Status` (kind: Status, apiVersion: v1) of a failure.
struct status {
  /// Machine-readable reason: NotFound, AlreadyExists, Conflict, Invalid,
  /// Forbidden, UnsupportedMediaType, Expired (410 Gone), TooManyRequests,
  /// ServiceUnavailable, Timeout, InternalError, ...
  std::string reason;
  /// The HTTP status code (0 when no response arrived).
  std::int32_t code = 0;
  std::string message;
  status_details details;
  /// Whether the body carries `details` although every field of it is
  /// empty: the server's generic responses (e.g. the 422 of a JSON patch
  /// that failed to apply) write `"details":{}`, while most errors omit
  /// the key. This is how a client tells the generic 422 from a schema
  /// 422, whose details name the object and list causes.
  bool details_present = false;

  bool operator==(const status&) const = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, status& x) {
  return f(caf::meta::type_name("aiperf::k8s::status"), x.reason, x.code, x.message, x.details,
           x.details_present);
}

/// What went wrong, coarse enough to decide what to do next.
enum class errc : std::uint8_t {
  not_found = 1,          // 404
  already_exists,         // 409, reason AlreadyExists
  conflict,               // 409, reason Conflict: stale resourceVersion, failed precondition
  invalid,                // 422 (and 400 for a malformed body)
  forbidden,              // 401, 403
  unsupported_media_type, // 415: e.g. a patch type the resource does not take
  gone,                   // 410: a watch's resourceVersion is too old; relist
  too_many_requests,      // 429: back off (details.retry_after_seconds)
  unavailable,            // 500, 503: try again later
  timeout,                // 504, or no answer within the request's deadline
  transport,              // no HTTP answer at all: connect, TLS, a broken stream
};

[[nodiscard]] const char* to_string(errc x) noexcept;

/// The errc of an HTTP status code and Status reason (409 splits on reason).
[[nodiscard]] errc errc_of(std::int32_t http_code, std::string_view reason) noexcept;

/// The Status carried by `err`, or null if it carries none.
[[nodiscard]] inline const status* status_of(const caf::error& err) {
  return error_payload<status>(err);
}

} // namespace aiperf::k8s

AIPERF_ERROR_ENUM(aiperf::k8s::errc, "k8s")

namespace aiperf::k8s {

/// Makes the error of a failed API call: code from `st`, message
/// "<what>: <st.message>", and `st` as the payload.
[[nodiscard]] caf::error make_status_error(std::string_view what, status st);

} // namespace aiperf::k8s
