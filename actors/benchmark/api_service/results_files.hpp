// A run's results directory over HTTP, with AIPerf's contract (one
// implementation for the controller's API and `aiperf-node results-sidecar`):
//
//   GET /api/results/list          {"files":[{"name","size"}],"ready":bool}:
//                                  top-level files once the ready marker
//                                  exists, files under checkpoints/ always
//   GET /api/results/files/{path}  one of those files; 400 for a traversal
//                                  or the marker's own name, 404 "Results not
//                                  ready" before the marker (checkpoints/
//                                  excepted), 404 for anything not listable;
//                                  headers Content-Disposition and X-Filename
//
// The marker `.aiperf_results_ready.json` ({"ready": true, "was_cancelled":
// bool}) is written last, after every export file, atomically and durably:
// a reader that sees it sees every export whole. The files are read on the
// server's I/O thread; see api_service.hpp for why that is fine.
#pragma once

// clang-format off
#include <utility> // first: Boost 1.74 awaitable.hpp needs std::exchange (g++ 12)
// clang-format on

#include "runtime/http_server/http_server.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::api_service {

inline constexpr std::string_view ready_marker_name = ".aiperf_results_ready.json";
inline constexpr std::string_view checkpoints_dir_name = "checkpoints";
inline constexpr std::string_view results_list_route = "/api/results/list";
inline constexpr std::string_view results_files_prefix = "/api/results/files/";

/// One listed file: its path relative to the results dir ("/"-separated).
struct result_file {
  std::string name;
  std::uintmax_t size = 0;
  friend bool operator==(const result_file&, const result_file&) = default;
};

/// Whether a listed name is one a client may store under its own directory:
/// relative, no `.` or `..` segment, no backslash.
[[nodiscard]] bool is_safe_result_name(std::string_view name);

/// The route of one listed file: results_files_prefix and the name with
/// each `/`-separated segment percent-encoded (RFC 3986 unreserved
/// characters kept).
[[nodiscard]] std::string result_file_route(std::string_view name);

/// Whether `dir` holds the ready marker.
[[nodiscard]] bool results_ready(const std::filesystem::path& dir);

/// What GET /api/results/list lists, sorted by name; the marker never.
[[nodiscard]] std::vector<result_file> list_results(const std::filesystem::path& dir);

/// The list's JSON.
[[nodiscard]] std::string render_results_list(const std::vector<result_file>& files,
                                              bool ready);

/// The verdict on a requested file.
enum class result_lookup { ok, bad_path, not_ready, not_found };

struct resolved_result {
  result_lookup status = result_lookup::not_found;
  /// The file (ok only).
  std::filesystem::path path;
};

/// Judges the percent-encoded path below /api/results/files/: bad_path for
/// bad encoding, empty, ".", ".." or backslash segments, NULs, or the
/// marker's name; not_ready for a file outside checkpoints/ before the
/// marker; not_found for a missing file, a directory, a nested file outside
/// checkpoints/, or a symlink leading out of `dir`.
[[nodiscard]] resolved_result resolve_result(const std::filesystem::path& dir,
                                             std::string_view encoded);

/// Writes the marker into `dir`, atomically and durably (io::atomic_write_file).
[[nodiscard]] caf::expected<void> write_ready_marker(const std::filesystem::path& dir,
                                                     bool was_cancelled);

/// The directory the sidecar serves for `dir`: `dir` itself, unless it holds
/// no regular file and exactly one directory other than checkpoints/ (a
/// run's exports go to <output dir>/<run name>/): then that one.
[[nodiscard]] std::filesystem::path results_root(const std::filesystem::path& dir);

/// Answers `target` (query stripped) if it is one of the results routes and
/// returns true; false (nothing sent) for any other target.
[[nodiscard]] boost::asio::awaitable<bool>
serve_results(const std::filesystem::path& dir, std::string_view target,
              http_server::request& req, http_server::response_writer& w);

} // namespace aiperf::api_service
