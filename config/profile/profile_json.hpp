// JSON form of profile_config: the `input_config` block of
// profile_export_aiperf.json and the run file that carries a configuration
// to other processes. Layout (keys are the field names):
//
//   {"endpoint": {...}, "input": {...}, "loadgen": {...},
//    "output": {...}, "runtime": {...}}
//
// Unset optional fields are omitted; non-finite doubles (an infinite grace
// period) are written as the strings "inf", "-inf", "nan".
#pragma once

#include "config/profile/profile_config.hpp"

#include <string>
#include <string_view>

namespace aiperf::config {

/// The text that replaces secrets when redacting.
inline constexpr std::string_view redacted = "<redacted>";

/// Serializes `cfg` as one compact JSON object. With `redact_secrets`, the
/// API key and every header value are written as "<redacted>" (for exports
/// and ConfigMaps; the real values travel through Secrets). The raw
/// command-line text (`cfg.cli`) is never written.
[[nodiscard]] std::string to_json(const profile_config& cfg,
                                  bool redact_secrets);

/// Parses what to_json() wrote: from_json(to_json(c, false)) == c for any
/// finalized c. Missing keys keep their defaults; unknown keys and wrong
/// types are errors naming the JSON path (`input_config.loadgen.concurrency`).
/// The result is checked with validate(), but not finalized (no file access:
/// the input file may live on another machine).
[[nodiscard]] caf::expected<profile_config>
from_json(std::string_view json);

} // namespace aiperf::config
