// The JSON value every Kubernetes object is held in, on both sides of the API
// (the product client and the simulated API server).
//
// nlohmann::ordered_json rather than the RapidJSON the hot path uses: objects
// here are values that are copied, compared, patched (RFC 6902 and RFC 7386
// are built in), walked by schemas and CEL, and written back in the order
// they were read. None of that is on a per-request path of a benchmark.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace aiperf::k8s {

using json = nlohmann::ordered_json;

/// `key` as one JSON Pointer token (RFC 6901: `~` is `~0`, `/` is `~1`), for
/// patch paths such as `/metadata/annotations/aiperf.nvidia.com~1x`.
[[nodiscard]] inline std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

} // namespace aiperf::k8s
