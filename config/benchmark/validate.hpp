// The one validation of a Config-v2 document, shared by `profile -f`,
// `kube profile` and the operator (which validates an AIPerfJob's spec with
// the same code, as AIPerf's operator re-runs its config validators).
//
// Expects a normalized document (document.hpp). Checks, in order: the model
// (types, enums, bounds, required fields, unknown keys), fields aiperf-node
// does not implement (refused with "not supported by aiperf-node"), the CEL
// rules of the CRD (cel_rules.hpp, with their messages), and AIPerf's
// cross-field rules for phases and datasets. Every problem names the field's
// path ("benchmark.phases[1].gracePeriod") and the fix.
#pragma once

#include "config/benchmark/document.hpp"

#include <string>
#include <vector>

namespace aiperf::config::benchmark {

/// One finding of check().
struct problem {
  errc code = errc::invalid;
  std::string path;     ///< "benchmark.endpoint.urls[0]"
  std::string message;  ///< what is wrong and the fix (without the path)
  bool warning = false; ///< accepted, but the user should know
  bool operator==(const problem&) const = default;
};

/// "<path>: <message>".
[[nodiscard]] std::string to_string(const problem& p);

/// Every problem of `doc`, errors and warnings, in document order.
[[nodiscard]] std::vector<problem> check(const json& doc, document_kind kind);

/// The first error of check() as a config::errc error ("<path>: <message>",
/// plus " (and N more problems)" when there are more), with the path as
/// payload (config::error_flag()); warnings do not fail.
[[nodiscard]] caf::expected<void> validate(const json& doc, document_kind kind);

/// The transition rules of an AIPerfJob spec update (immutability of every
/// top-level field but `cancel` and `timeoutSeconds`), with the CRD's
/// messages.
[[nodiscard]] caf::expected<void> validate_update(const json& old_spec,
                                                  const json& new_spec);

/// Seconds of an AIPerf duration: a number, or text "30", "30s", "5m", "2h",
/// "1.5h", "500ms"; "inf" when `allow_inf`. std::nullopt when malformed.
[[nodiscard]] std::optional<double> parse_duration(const json& value,
                                                   bool allow_inf);

} // namespace aiperf::config::benchmark
