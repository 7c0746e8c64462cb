// Scratch directories that belong to one process. A process killed with
// SIGKILL runs no destructor, so its directory stays behind; the next one
// that makes a directory with the same prefix removes every such directory
// whose owner is gone.
#pragma once

#include "proto/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace aiperf::system {

/// A directory `<parent>/<prefix>XXXXXX` holding the file `owner.pid` with
/// this process's pid; removed (with its contents) by the destructor.
class owned_dir {
public:
  /// Removes stale directories of `prefix` under `parent` first
  /// (reclaim_stale), then makes a new one; check `path()` (empty on
  /// failure) or use `make`.
  [[nodiscard]] static caf::expected<owned_dir> make(const std::filesystem::path& parent,
                                                     std::string_view prefix);

  owned_dir(owned_dir&& other) noexcept;
  owned_dir& operator=(owned_dir&& other) noexcept;
  owned_dir(const owned_dir&) = delete;
  owned_dir& operator=(const owned_dir&) = delete;
  ~owned_dir();

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

private:
  explicit owned_dir(std::filesystem::path p) : path_(std::move(p)) {}
  std::filesystem::path path_;
};

/// Removes every directory `<parent>/<prefix>*` whose `owner.pid` names a
/// process that no longer exists (or that has no readable owner file and
/// is older than a day); returns how many it removed.
std::size_t reclaim_stale(const std::filesystem::path& parent, std::string_view prefix);

} // namespace aiperf::system
