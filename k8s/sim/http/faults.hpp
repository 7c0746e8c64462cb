// Faults injected into the simulator's answers, driven over HTTP under
// /sim/v1/faults so a test can make the API server fail the way real ones do
// (429 with Retry-After, 5xx, a 409, a reset connection, a slow answer) for
// exactly the requests it names.
//
//   {"match":{"verb":"patch","resource":"aiperfjobs","subresource":"status",
//             "namespace":"bench","user":"system:serviceaccount:bench:op"},
//    "count":3,"code":429,"retryAfterSeconds":2}
//
// Every match field is optional (absent = any). "count" is how many requests
// the fault hits (-1 = until deleted; default 1). "code" is 409, 429, 500,
// 503, 504 or "reset" (close the connection without an answer); "delayMs"
// instead of (or with) a code delays the request before it is served.
#pragma once

#include "k8s/api/json.hpp"
#include "proto/error.hpp"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::http {

struct fault_match {
  std::string verb, resource, subresource, namespace_name, user;
};

struct fault {
  std::string id;
  fault_match match;
  std::int64_t count = 1; // -1 = forever
  std::int32_t code = 0;  // 0 = none (delay only)
  bool reset = false;
  std::int32_t retry_after_seconds = 0;
  std::int64_t delay_ms = 0;
};

/// The faults in force. Thread-safe: the io threads consult it per request.
class fault_table {
public:
  /// Adds the fault described by `spec` (see the file comment) and returns
  /// its id. Fails (k8s::errc::invalid, with a 400 BadRequest status)
  /// naming the field that is wrong.
  [[nodiscard]] caf::expected<std::string> add(const json& spec);

  /// Removes a fault; false if no such id.
  bool remove(const std::string& id);

  /// The first fault matching the request, its count consumed (a fault
  /// whose count reaches 0 is removed). Empty strings in the request match
  /// only match fields that are absent or equal.
  [[nodiscard]] std::optional<fault> take(std::string_view verb,
                                          std::string_view resource,
                                          std::string_view subresource,
                                          std::string_view namespace_name,
                                          std::string_view user);

  void clear();

private:
  std::mutex mutex_;
  std::vector<fault> faults_;
  std::uint64_t next_id_ = 1;
};

} // namespace aiperf::k8s::sim::http
