// Read-only memory maps of whole files, for data written once and then read
// by many (a worker pod's dataset.dat/index.dat, shared through the page cache
// by every worker process of the pod instead of one heap copy each).
//
// The mapping is private and read-only. It stays valid after the file is
// unlinked or replaced by rename (the old inode lives on), but a file that is
// truncated in place while mapped raises SIGBUS on access: map only files
// that are replaced atomically (durable_writer) or never change.
#pragma once

#include "runtime/io/durable_file.hpp"

#include <cstddef>
#include <filesystem>
#include <string_view>
#include <utility>

namespace aiperf::io {

/// Owns a read-only mapping of one file; move-only, unmaps on destruction.
/// A default-constructed or moved-from object maps nothing (empty bytes()).
/// Const access is thread-safe (the bytes never change).
class mmap_file {
public:
  /// Maps all of `path`. Fails (naming the path, the step and the OS reason)
  /// if the path is missing, unreadable or not a regular file. An empty file
  /// succeeds with empty bytes() (mmap cannot map zero bytes).
  [[nodiscard]] static caf::expected<mmap_file>
  open(const std::filesystem::path& path);

  mmap_file() noexcept = default;
  mmap_file(mmap_file&& other) noexcept;
  mmap_file& operator=(mmap_file&& other) noexcept;
  mmap_file(const mmap_file&) = delete;
  mmap_file& operator=(const mmap_file&) = delete;
  ~mmap_file();

  /// Returns the whole file; valid while this object lives.
  [[nodiscard]] std::string_view bytes() const noexcept {
    return {static_cast<const char*>(addr_), size_};
  }

  /// Returns the file size in bytes.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  /// Returns the path given to open().
  [[nodiscard]] const std::filesystem::path& path() const noexcept {
    return path_;
  }

private:
  void reset() noexcept;

  std::filesystem::path path_;
  void* addr_ = nullptr;
  std::size_t size_ = 0;
};

} // namespace aiperf::io
