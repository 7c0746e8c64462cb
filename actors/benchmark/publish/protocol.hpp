// The publication protocol between a benchmark's controller pod (client) and
// the operator's results server (port 8081): how a run's artifacts reach
// durable storage before the controller announces `benchmark-complete`.
// Routes are ours (AIPerf pulls instead); bodies are JSON, errors
// {"detail": "<message>"}.
//
// Every request carries `Authorization: Bearer <token>`: the controller
// container's projected service-account token of audience `aiperf-results`
// (AIPERF_RESULTS_TOKEN_FILE). The server reviews it (TokenReview) and checks
// the pod it is bound to on every request; see actors/operator/publication.hpp.
//
// P = /api/v1/publish/{ns}/{job}/runs/{epoch}
//
//   PUT  P/files/{name}             the whole file, at most inline_limit bytes,
//                                   header X-Content-SHA256 (lower-case hex)
//                                   → 201 receipt {"name","size","sha256"}
//   POST P/uploads                  {"name","size","sha256","chunkSize"}
//                                   → 201 {"uploadId","name","size","sha256",
//                                   "chunkSize","chunks"} (chunks = how many)
//   PUT  P/uploads/{id}/chunks/{n}  chunk n (0-based): chunkSize bytes, the
//                                   last one the rest; X-Content-SHA256 of
//                                   the chunk → 200 {"uploadId","chunk","size"}
//   GET  P/uploads/{id}             the upload and "received": [n, ...], the
//                                   chunks the server holds (a client resumes
//                                   from the first one missing)
//   POST P/uploads/{id}/complete    {"size","sha256"} of the whole file
//                                   → 201 receipt
//   POST P/commit                   {"files":[{"name","size","sha256"}, ...]}
//                                   → 201 {"epoch","committed":true,"files":[receipts]}
//
// A receipt is answered only once the file is stored durably under its name
// and its length and SHA-256 were verified. The commit is answered only once
// every listed file holds a receipt of the same size and digest, and the
// run's ready marker is written: the controller sets benchmark-complete only
// after it. Repeating any request of a publication returns the same answer
// (an upload's id derives from its fields, so a repeated POST P/uploads gets
// the same id). Refusals: 400 damaged input (digest, length, chunk index or
// size, a missing chunk, a bad name), 403 identity (the body says why), 404
// an unknown upload, 409 a name already committed with other content or a
// second commit listing other files, 413 a PUT P/files body above
// inline_limit, 503 the API server could not be asked (retry later).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace aiperf::publish {

/// The largest file sent in one request.
inline constexpr std::uint64_t inline_limit = 256 * 1024;
/// The chunk sizes a server accepts, and the one our client uses.
inline constexpr std::uint64_t min_chunk_size = 64 * 1024;
inline constexpr std::uint64_t max_chunk_size = 8 * 1024 * 1024;
inline constexpr std::uint64_t default_chunk_size = 4 * 1024 * 1024;

/// The token's audience (ours), and where the controller container finds it.
inline constexpr std::string_view token_audience = "aiperf-results";
inline constexpr std::string_view default_token_file
    = "/var/run/secrets/aiperf.nvidia.com/results/token";
/// The projected volume's name in the controller pod.
inline constexpr std::string_view token_volume_name = "aiperf-results-token";
inline constexpr std::string_view token_mount_path = "/var/run/secrets/aiperf.nvidia.com/results";
/// The token's lifetime the pod asks for (the kubelet refreshes it).
inline constexpr std::int64_t token_expiration_seconds = 3600;

inline constexpr std::string_view sha256_header = "X-Content-SHA256";
inline constexpr std::string_view route_prefix = "/api/v1/publish/";

/// P for one run: "/api/v1/publish/<ns>/<job>/runs/<epoch>".
[[nodiscard]] inline std::string run_route(std::string_view ns, std::string_view job,
                                           std::string_view epoch) {
  std::string out{route_prefix};
  out.append(ns).append("/").append(job).append("/runs/").append(epoch);
  return out;
}

} // namespace aiperf::publish
