// Endpoint credentials of a distributed run, with AIPerf's transport: the run
// file (a ConfigMap in Kubernetes) holds only "<redacted>" placeholders, and
// each process restores the real values from Secret-backed environment
// variables at startup (github.com/ai-dynamo/aiperf,
// aiperf/common/endpoint_credentials.py):
//
//   AIPERF_INJECTED_API_KEY        the API key (OPENAI_API_KEY is accepted
//                                  too, but only for a redacted key)
//   AIPERF_INJECTED_HEADERS        JSON object of header name -> value
//                                  strings; overrides same-named headers
//                                  (case-insensitive), adds the others
//   AIPERF_INJECTED_ENDPOINT_URLS  JSON list of URL strings; replaces the
//                                  run file's URL list
//
// Fail closed: a placeholder left after the overlay is an error naming the
// variable and how to map it from a Secret, because a run without its
// Authorization header measures 401s, not the model. Errors never contain
// secret values.
#pragma once

#include "config/profile/profile_config.hpp"
#include "runtime/system/env.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aiperf::endpoint_credentials {

inline constexpr std::string_view api_key_variable = "AIPERF_INJECTED_API_KEY";
inline constexpr std::string_view openai_api_key_variable = "OPENAI_API_KEY";
inline constexpr std::string_view headers_variable = "AIPERF_INJECTED_HEADERS";
inline constexpr std::string_view urls_variable = "AIPERF_INJECTED_ENDPOINT_URLS";

/// The environment that carries `cfg`'s real credentials to a process that
/// reads a redacted run file: the API key, every header (a JSON object) and,
/// when a URL carries user-info, the URL list. Empty without credentials.
[[nodiscard]] std::vector<std::pair<std::string, std::string>>
child_env(const config::profile_config& cfg);

/// Parses a run file (`config::to_json` text, secrets redacted) and restores
/// its credentials from `env`. Errors are benchmark::errc::invalid_config:
/// a bad run file names `source` (the flag and path), a bad or missing
/// variable names the variable and the fix.
[[nodiscard]] caf::expected<config::profile_config>
load_run(std::string_view json, const system::env_lookup& env, std::string_view source);

} // namespace aiperf::endpoint_credentials
