// The api_service's HTTP routes, free of actors: rendering, path checks and
// the request handler the server runs on its I/O threads.
#pragma once

#include "actors/benchmark/api_service/api_service.hpp"
#include "runtime/http_server/http_server.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::api_service {

/// Renders /api/progress: the snapshot's fields plus "ready". Non-finite
/// rates render as 0 (JSON has no NaN).
[[nodiscard]] std::string render_progress_json(const progress& p, bool ready);

/// Renders one entry per pod: name, registered, lost (and lost_reason when
/// lost), and `clock` (null until the pod reported it): offset_ns,
/// one_way_samples, min_rtt_ns (null without a ping round trip), local.
/// The export's `pods` member is this array.
[[nodiscard]] std::string render_pod_list_json(const std::vector<pod_status>& pods);

/// Renders /api/pods: registration, pods_expected, pods_registered,
/// pods_lost, missing (service ids), error ("" unless failed) and `pods`
/// (render_pod_list_json).
[[nodiscard]] std::string render_pods_json(const pods_status& p);

/// Renders /metrics in the Prometheus text format 0.0.4.
[[nodiscard]] std::string render_prometheus(const progress& p, bool ready,
                                            std::size_t raw_parts_staged);

/// Resolves the URL path `relative` (percent-encoded, below
/// /api/artifacts/) to a regular file inside `root`. Returns std::nullopt
/// for anything that is not such a file: bad encoding, empty, "." or ".."
/// segments, backslashes, NULs, or a symlink that leads out of `root`.
[[nodiscard]] std::optional<std::filesystem::path>
resolve_under(const std::filesystem::path& root, std::string_view relative);

/// Whether `pod` may name an uploaded RAW part: 1-63 of [A-Za-z0-9_-].
[[nodiscard]] bool valid_pod_name(std::string_view pod) noexcept;

/// The staged file name of `pod`'s RAW part.
[[nodiscard]] std::string raw_part_file_name(std::string_view pod);

/// The Content-Type of a served file, by extension.
[[nodiscard]] std::string_view content_type_of(const std::filesystem::path& p);

/// Streams the file at `path` (200, chunked, X-File-Size plus
/// `extra_headers`, preformatted lines ending in "\r\n"); 404 when it is not
/// a readable regular file.
[[nodiscard]] boost::asio::awaitable<void>
send_file(http_server::response_writer& w, std::filesystem::path path,
          std::string_view content_type, std::string extra_headers = {});

/// Sends {"error": message} with `status`.
[[nodiscard]] boost::asio::awaitable<void>
send_json_error(http_server::response_writer& w, unsigned status, std::string message);

/// Renders GET /api/metrics: {"progress": render_progress_json,
/// "summary": the run's profile_export_aiperf.json, or null before the
/// export}.
[[nodiscard]] std::string render_metrics_json(const progress& p, bool ready,
                                              const std::filesystem::path& artifact_dir);

/// Returns the request handler (see api_service.hpp for the routes). It
/// shares `board` with the actor and reads `cfg`, which must not change.
[[nodiscard]] http_server::handler
make_handler(std::shared_ptr<status_board> board,
             std::shared_ptr<const api_config> cfg);

} // namespace aiperf::api_service
