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

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace aiperf::io {

/// Why a durable write failed.
struct io_error {
  /// The errno of the failing step.
  std::error_code code;
  /// Names the target path, the failing step and the OS reason, e.g.
  /// "cannot write /r/out.json: open temp file /r/out.json.tmp.1.ab: Not a
  /// directory".
  std::string message;
};

/// The io_error of a failed system call: errno `err` and the message
/// "cannot <verb> <path>: <step>[ <what>]: <OS reason>".
[[nodiscard]] io_error errno_error(int err, std::string_view verb,
                                   const std::filesystem::path& path,
                                   std::string_view step,
                                   const std::filesystem::path& what = {});

/// Writes `contents` to `path` atomically and durably (see file comment).
/// Returns std::nullopt on success.
[[nodiscard]] std::optional<io_error>
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
  /// Returns std::nullopt on success; calling it twice is an error.
  [[nodiscard]] std::optional<io_error> commit();

  /// Removes the temp file without touching the target.
  void abandon() noexcept;

  /// Returns the first error, if any.
  [[nodiscard]] const std::optional<io_error>& error() const noexcept {
    return error_;
  }

  /// Returns whether no error happened so far.
  [[nodiscard]] bool ok() const noexcept { return !error_.has_value(); }

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
  std::optional<io_error> error_;
};

} // namespace aiperf::io
