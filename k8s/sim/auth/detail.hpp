// Formatting shared by tokens and RBAC, spelled as Go writes it: the
// messages this library reproduces come from Go's fmt and time packages.
#pragma once

#include "k8s/object/validation.hpp" // go_quote, as messages quote values

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::k8s::sim::auth::detail {

/// fmt's %q of a []string: `["a" "b"]`, `[]` when empty.
[[nodiscard]] std::string go_quote_list(const std::vector<std::string>& list);

/// metav1.Time: "2026-12-02T03:45:00Z".
[[nodiscard]] std::string format_time(std::int64_t unix_seconds);

/// The Unix seconds of an RFC 3339 time ("...Z" or "...+01:00", optional
/// fraction), or nullopt.
[[nodiscard]] std::optional<std::int64_t> parse_time(std::string_view text);

} // namespace aiperf::k8s::sim::auth::detail
