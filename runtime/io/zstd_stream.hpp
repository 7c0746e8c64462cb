// Streaming zstd compression between files, memory buffers and callbacks.
//
// Used to ship a dataset to worker pods: the controller compresses
// dataset.dat/index.dat once and streams the .zst bytes (e.g. as an HTTP
// body, chunk by chunk through a chunk_sink); the pod decompresses them to
// .dat files which its workers mmap. Nothing here holds a whole file in
// memory except the *_buffer helpers.
//
// Every frame is written with zstd's content checksum, so a corrupt or
// truncated .zst is an error, never silently wrong bytes. Files are written
// through durable_writer: a failed (de)compression leaves no partial output
// and keeps any previous file.
//
// Errors are returned, never thrown; each message names the file (or the
// caller-given stream name), the step and the reason.
#pragma once

#include "runtime/io/durable_file.hpp"
#include "runtime/io/mmap_file.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace aiperf::io {

/// Receives output bytes chunk by chunk (the view is valid only during the
/// call). Returns false to stop, e.g. when the HTTP peer went away.
using chunk_sink = std::function<bool(std::string_view)>;

/// Compression level used unless told otherwise: zstd's default (fast, and a
/// text dataset still shrinks several-fold).
inline constexpr int default_zstd_level = 3;

/// No limit on decompressed size.
inline constexpr std::uint64_t unlimited_output
  = std::numeric_limits<std::uint64_t>::max();

/// Succeeds if `level` is a valid zstd level, else fails with
/// `errc::invalid_argument` naming the valid range.
[[nodiscard]] caf::expected<void> check_zstd_level(int level);

/// Push-style compressor producing one zstd frame. Not thread-safe.
///
/// Errors are sticky: after the first failure write() returns false and
/// finish() returns that error.
class zstd_compressor {
public:
  /// `name` labels the stream in error messages ("dataset.dat.zst").
  zstd_compressor(chunk_sink sink, std::string name,
                  int level = default_zstd_level);
  zstd_compressor(zstd_compressor&&) noexcept;
  zstd_compressor& operator=(zstd_compressor&&) noexcept;
  ~zstd_compressor();

  /// Compresses `plain`; compressed bytes reach the sink as zstd emits them.
  bool write(std::string_view plain);

  /// Ends the frame and hands its last bytes to the sink; writing after
  /// finish() is an error (`errc::closed`).
  [[nodiscard]] caf::expected<void> finish();

  /// Returns the first error (empty if none).
  [[nodiscard]] const caf::error& error() const noexcept { return error_; }

  /// Returns the plain bytes accepted so far.
  [[nodiscard]] std::uint64_t bytes_in() const noexcept { return in_; }

  /// Returns the compressed bytes handed to the sink so far.
  [[nodiscard]] std::uint64_t bytes_out() const noexcept { return out_; }

private:
  struct ctx_deleter {
    void operator()(ZSTD_CCtx_s* ctx) const noexcept;
  };

  bool pump(std::string_view plain, bool end);
  void fail(errc code, std::string_view reason);

  chunk_sink sink_;
  std::string name_;
  std::unique_ptr<ZSTD_CCtx_s, ctx_deleter> ctx_;
  std::string out_buf_;
  std::uint64_t in_ = 0;
  std::uint64_t out_ = 0;
  bool finished_ = false;
  caf::error error_;
};

/// Push-style decompressor for one or more concatenated zstd frames. Not
/// thread-safe. Errors are sticky as for zstd_compressor.
class zstd_decompressor {
public:
  /// `name` labels the stream in error messages. Output beyond
  /// `max_output_bytes` is an error (guards a pod's disk against a bogus or
  /// hostile stream).
  zstd_decompressor(chunk_sink sink, std::string name,
                    std::uint64_t max_output_bytes = unlimited_output);
  zstd_decompressor(zstd_decompressor&&) noexcept;
  zstd_decompressor& operator=(zstd_decompressor&&) noexcept;
  ~zstd_decompressor();

  /// Decompresses `compressed`; plain bytes reach the sink as they appear.
  bool write(std::string_view compressed);

  /// Checks that the input ended on a frame boundary (not empty, not cut
  /// short: `errc::corrupt`).
  [[nodiscard]] caf::expected<void> finish();

  /// Returns the first error (empty if none).
  [[nodiscard]] const caf::error& error() const noexcept { return error_; }

  /// Returns the compressed bytes accepted so far.
  [[nodiscard]] std::uint64_t bytes_in() const noexcept { return in_; }

  /// Returns the plain bytes handed to the sink so far.
  [[nodiscard]] std::uint64_t bytes_out() const noexcept { return out_; }

private:
  struct ctx_deleter {
    void operator()(ZSTD_DCtx_s* ctx) const noexcept;
  };

  void fail(errc code, std::string_view reason);

  chunk_sink sink_;
  std::string name_;
  std::uint64_t max_out_;
  std::unique_ptr<ZSTD_DCtx_s, ctx_deleter> ctx_;
  std::string out_buf_;
  std::uint64_t in_ = 0;
  std::uint64_t out_ = 0;
  // zstd's hint after the last call: 0 iff the input ended on a frame end.
  std::size_t pending_ = 0;
  bool finished_ = false;
  caf::error error_;
};

// -- one-call helpers ---------------------------------------------------------

/// Compresses file `in` into `out` (atomically replaced).
[[nodiscard]] caf::expected<void>
compress_file(const std::filesystem::path& in, const std::filesystem::path& out,
              int level = default_zstd_level);

/// Decompresses file `in` into `out` (atomically replaced).
[[nodiscard]] caf::expected<void>
decompress_file(const std::filesystem::path& in,
                const std::filesystem::path& out,
                std::uint64_t max_output_bytes = unlimited_output);

/// Compresses `plain` into the file `out` (atomically replaced).
[[nodiscard]] caf::expected<void>
compress_to_file(std::string_view plain, const std::filesystem::path& out,
                 int level = default_zstd_level);

/// Decompresses `compressed` (named `name` in errors, e.g. the URL it came
/// from) into the file `out` (atomically replaced).
[[nodiscard]] caf::expected<void>
decompress_to_file(std::string_view compressed, std::string_view name,
                   const std::filesystem::path& out,
                   std::uint64_t max_output_bytes = unlimited_output);

/// Compresses file `in` and hands the compressed bytes to `sink` (HTTP
/// streaming of a dataset).
[[nodiscard]] caf::expected<void>
compress_file_to_sink(const std::filesystem::path& in, const chunk_sink& sink,
                      int level = default_zstd_level);

/// Compresses `plain` into memory.
[[nodiscard]] caf::expected<std::string>
compress_buffer(std::string_view plain, int level = default_zstd_level);

/// Decompresses `compressed` (named `name` in errors) into memory.
[[nodiscard]] caf::expected<std::string>
decompress_buffer(std::string_view compressed, std::string_view name,
                  std::uint64_t max_output_bytes = unlimited_output);

} // namespace aiperf::io
