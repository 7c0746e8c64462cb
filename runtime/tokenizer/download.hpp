// Fetches a model's tokenizer files from the Hugging Face Hub into the local
// cache, in the layout huggingface_hub itself writes, so the next run (and
// Python tools) find them there:
//   GET ${HF_ENDPOINT:-https://huggingface.co}/ORG/NAME/resolve/REV/FILE
//   (Authorization: Bearer $HF_TOKEN when set; redirects followed)
//   -> HUB/models--ORG--NAME/snapshots/COMMIT/FILE, COMMIT from the
//      X-Repo-Commit header (REV when absent), HUB/.../refs/REV = COMMIT.
// tokenizer.json is required, tokenizer_config.json fetched when present.
#pragma once

#include "proto/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::tokenizer {

/// Downloads `repo`'s (ORG/NAME) tokenizer.json at `revision` under `hub`
/// and returns its path; a failure names the URL and the reason. `tried`
/// receives each URL fetched.
[[nodiscard]] caf::expected<std::filesystem::path>
download_tokenizer_json(std::string_view repo, std::string_view revision,
                        const std::filesystem::path& hub,
                        std::vector<std::string>& tried);

} // namespace aiperf::tokenizer
