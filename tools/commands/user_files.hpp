// Local input files of a cluster run, carried inside run_config.json (as
// AIPerf's `artifacts.user_files`): the CLI embeds them, every pod writes
// them back out before its configuration is validated. Layout:
//
//   "artifacts": {"user_files": [{"option": "input_file" | "ca_file" |
//     "tokenizer", "name": <basename>, "size": <bytes>, "sha256": <hex>,
//     "content_base64": <the bytes>}]}
//
// Unlike AIPerf, which renders them once in the controller, both roles
// materialize them: record processors on worker pods count tokens, so they
// need the tokenizer too.
#pragma once

#include "config/profile/profile_config.hpp"
#include "k8s/api/json.hpp"
#include "proto/error.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace aiperf::user_files {

/// Above this total of the files' sizes they do not travel (a ConfigMap
/// holds at most 1 MiB, and base64 grows them by a third).
inline constexpr std::size_t max_total_bytes = 512 * 1024;

/// Reads the local files `cfg` names (--input-file, --ca-file, and a
/// --tokenizer that is a tokenizer.json or a folder holding one) into
/// user_files entries. A path that does not exist locally is taken as a
/// path inside the pods and left alone, with a line in `warnings` (not for
/// --tokenizer, whose other values are Hugging Face ids). Above
/// max_total_bytes: config::errc::invalid naming each file, its size and
/// the two ways out (mount it, or a URL).
[[nodiscard]] caf::expected<k8s::json> embed(const config::profile_config& cfg,
                                             std::vector<std::string>& warnings);

/// Writes every entry of `user_files` (as embed made them) into
/// `dir/<option>/<name>` (folders 0700, files 0600, written atomically),
/// checks its sha256, and points the option in `run_json` (run_config.json's
/// document) at it. Bad base64, a sha256 mismatch, an unknown option or a
/// name that is not a plain file name is benchmark-config invalid naming
/// the entry.
[[nodiscard]] caf::expected<void> materialize(const k8s::json& user_files,
                                              const std::filesystem::path& dir,
                                              k8s::json& run_json);

} // namespace aiperf::user_files
