// Durable, atomic file replacement for results and exports.
//
// A reader (or a crash) must see either the old file or the complete new
// one, never a prefix: contents go to a temp file in the target's directory
// (`<name>.tmp.<pid>.<random>`, same filesystem so rename is atomic), which is
// fsync'ed, renamed over the target, and then the directory is fsync'ed so
// the rename itself survives a power loss. On any failure the temp file is
// removed and the old target is left untouched.
//
// The new file gets mode 0666 & ~umask; the old file's mode is not copied.
#pragma once

#include "proto/error.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace aiperf::io {

/// Why a file operation or a (de)compression failed. Every message names the
/// path (or the stream), the failing step and the reason, e.g. "cannot write
/// /r/out.json: open temp file /r/out.json.tmp.1.ab: Not a directory".
enum class errc : std::uint8_t {
  system = 1,       // a system call failed; the errno follows as an int payload
  invalid_argument, // a path that names no file, a zstd level out of range
  closed,           // commit()/finish() called twice, or write after it
  corrupt,          // not zstd data, a bad checksum, empty or cut short
  too_large,        // decompressed output beyond the caller's limit
  canceled,         // the output sink stopped accepting data
  out_of_memory,    // zstd could not allocate its context
  codec_failed,     // zstd refused to compress (its reason is in the message)
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::io

AIPERF_ERROR_ENUM(aiperf::io::errc, "io")

namespace aiperf::io {

/// The error of a failed system call: code `errc::system`, the message
/// "cannot <verb> <path>: <step>[ <what>]: <OS reason>" and `err` as an int
/// payload (read it with `error_errno`).
[[nodiscard]] caf::error errno_error(int err, std::string_view verb,
                                     const std::filesystem::path& path,
                                     std::string_view step,
                                     const std::filesystem::path& what = {});

/// The errno of an `errc::system` error, or 0 for any other error.
[[nodiscard]] int error_errno(const caf::error& err);

/// Writes `contents` to `path` atomically and durably (see file comment).
[[nodiscard]] caf::expected<void>
atomic_write_file(const std::filesystem::path& path, std::string_view contents);

/// Streams a large file (e.g. a 1M-line JSONL export) to a temp file and
/// atomically replaces `target` with it on `commit()`.
///
/// Errors are sticky and never thrown: after the first failure `append`
/// returns false, `commit` returns that error, and the temp file is gone.
/// Destroying a writer that was not committed removes its temp file, so an
/// abandoned export leaves nothing behind. Not thread-safe.
class durable_writer {
public:
  /// Default size of the write buffer; `append` writes in blocks this big.
  /// 64 KiB: the writers run in actors, which may run on an HTTP I/O thread
  /// (io_scheduler.hpp); a 1 MiB write held it for ~0.4 ms, 64 KiB ~30 µs.
  static constexpr std::size_t default_buffer_bytes = std::size_t{1} << 16;

  /// Creates the temp file next to `target`; check `error()` (or just the
  /// result of `commit()`) to learn whether that worked.
  explicit durable_writer(std::filesystem::path target,
                          std::size_t buffer_bytes = default_buffer_bytes);

  durable_writer(durable_writer&& other) noexcept;
  durable_writer& operator=(durable_writer&& other) noexcept;
  durable_writer(const durable_writer&) = delete;
  durable_writer& operator=(const durable_writer&) = delete;

  /// Removes the temp file unless committed.
  ~durable_writer();

  /// Buffers `bytes`, writing full buffers to the temp file. Returns false
  /// once the writer has failed or was committed.
  bool append(std::string_view bytes);

  /// Flushes, fsyncs, renames over the target and fsyncs the directory.
  /// Calling it twice is an error (`errc::closed`).
  [[nodiscard]] caf::expected<void> commit();

  /// Removes the temp file without touching the target.
  void abandon() noexcept;

  /// Returns the first error (empty if none).
  [[nodiscard]] const caf::error& error() const noexcept { return error_; }

  /// Returns whether no error happened so far.
  [[nodiscard]] bool ok() const noexcept { return !error_; }

  /// Returns the bytes accepted by `append` so far.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

  /// Returns the file this writer replaces.
  [[nodiscard]] const std::filesystem::path& target() const noexcept {
    return target_;
  }

  /// Returns the temp file (empty once committed or abandoned).
  [[nodiscard]] const std::filesystem::path& temp_path() const noexcept {
    return temp_;
  }

private:
  bool flush_buffer();
  void fail(int err, std::string_view step, const std::filesystem::path& what);

  std::filesystem::path target_;
  std::filesystem::path temp_;
  int fd_ = -1;
  bool committed_ = false;
  std::string buffer_;
  std::size_t buffer_bytes_;
  std::uint64_t size_ = 0;
  caf::error error_;
};

} // namespace aiperf::io
