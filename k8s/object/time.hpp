// The two time formats of the Kubernetes API: metav1.Time (RFC 3339, whole
// seconds, UTC: "2026-11-29T10:27:27Z") for creationTimestamp and most
// fields, metav1.MicroTime (six fractional digits) for Leases, Events and
// the audit log.
#pragma once

#include "proto/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace aiperf::k8s {

[[nodiscard]] std::string format_time(std::int64_t unix_seconds);

[[nodiscard]] std::string format_micro_time(std::int64_t unix_ns);

/// Parses either format (and any RFC 3339 offset or fraction) into
/// nanoseconds since the epoch. Error k8s::errc::invalid naming the text.
[[nodiscard]] caf::expected<std::int64_t> parse_time(std::string_view text);

} // namespace aiperf::k8s
