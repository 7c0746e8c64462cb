// Reading and writing Config-v2 documents: JSON and YAML text to one
// nlohmann::ordered_json tree (key order kept both ways), and AIPerf's
// normalization of what its loader accepts (snake_case keys, shorthands)
// into the canonical camelCase form every other function expects.
//
// Life cycle of a `profile -f FILE` or an AIPerfJob spec:
//
//     auto doc = read_document(path);                   // JSON or YAML
//     auto canonical = normalize(*doc, document_kind::config_file);
//     auto ok = validate(*canonical, document_kind::config_file); //
//     validate.hpp auto cfg = to_profile_config(*canonical); // mapping.hpp
//
// Errors are config::errc (config/profile/profile_config.hpp) naming the file
// (and line) or the field path, read back with config::error_flag().
#pragma once

#include "config/benchmark/schema.hpp"
#include "config/profile/profile_config.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace aiperf::config::benchmark {

/// Which document a tree holds.
enum class document_kind : std::uint8_t {
  config_file, ///< AIPerfConfig: what `profile -f FILE` reads
  job_spec,    ///< an AIPerfJob's `spec` (AIPerfConfig + deployment fields)
};

/// The schema of `kind` (config_schema() or job_spec_schema()).
[[nodiscard]] const field& schema_of(document_kind kind);

/// Parses JSON text; errors (errc::invalid) name `source` and the byte
/// offset.
[[nodiscard]] caf::expected<json> parse_json(std::string_view text,
                                             std::string_view source);

/// Parses one YAML document (YAML 1.2 core schema: quoted scalars are
/// strings; plain `true`/`false`, `null`/`~`, integers and floats are typed;
/// `.inf`/`.nan` stay strings because JSON has no such numbers). Errors
/// (errc::invalid) name `source:line:column`.
[[nodiscard]] caf::expected<json> parse_yaml(std::string_view text,
                                             std::string_view source);

/// JSON when the first non-blank character is '{' or '[', else YAML.
[[nodiscard]] caf::expected<json> parse_document(std::string_view text,
                                                 std::string_view source);

/// Reads and parses `path` (errc::unreadable when it cannot be read).
[[nodiscard]] caf::expected<json>
read_document(const std::filesystem::path& path);

/// `doc` as JSON: two-space indent, keys in tree order, a final newline.
/// Writing what parse_json read back gives the same bytes.
[[nodiscard]] std::string write_json(const json& doc);

/// `doc` as block YAML; strings that would read back as another type
/// ("2.0", "true", "") are double-quoted, floats keep their decimal point,
/// so parse_yaml(write_yaml(doc)) == doc.
[[nodiscard]] std::string write_yaml(const json& doc);

/// AIPerf's loader normalization, so that every later step sees one form:
///  - snake_case keys of declared fields become camelCase (AIPerf's models
///    accept both; free-form maps such as `endpoint.extra`, `headers` and
///    `variables` keep their keys);
///  - config files: top-level BenchmarkConfig keys (`model:`, `endpoint:`,
///    `dataset:`, `phases:`, `warmup:`, `profiling:`, ...) move under
///    `benchmark`, as AIPerf's templates write them;
///  - `model` → `models` (a name becomes a one-entry list), `endpoint.url`
///    → `endpoint.urls` (a list), `dataset` → `datasets` (one entry named
///    "default"), a dataset's `isl`/`osl` → `prompts.isl`/`prompts.osl`, a
///    single phase object → a one-entry list named "default", top-level
///    `warmup`/`profiling` → a [warmup, profiling] list, and a phase's
///    `kind` is filled in from its canonical name (or "profiling" for the
///    single-phase shorthand).
/// Idempotent. Errors (errc::conflict) name both spellings when a value is
/// given twice (`model` and `models`, `api_key` and `apiKey`).
[[nodiscard]] caf::expected<json> normalize(json doc, document_kind kind);

/// Looks up an environment variable; std::nullopt when it is not set.
using env_lookup
    = std::function<std::optional<std::string>(const std::string&)>;

/// The process environment (getenv).
[[nodiscard]] env_lookup process_environment();

/// AIPerf's `${VAR}` / `${VAR:default}` substitution in every string of a
/// normalized config file (ai-dynamo/aiperf src/aiperf/config/loader/
/// env_vars.py). A value that was wholly one substitution and lands on a
/// number, integer or boolean field takes that type (`numRuns: ${N:3}` →
/// 3), as AIPerf's models coerce it. Errors (errc::missing) name the field
/// and the variable that is unset and has no default. The operator does not
/// substitute: `kube profile` sends the CR after substitution.
[[nodiscard]] caf::expected<json>
substitute_environment(json doc, document_kind kind, const env_lookup& env);

} // namespace aiperf::config::benchmark
