#include "runtime/io/zstd_stream.hpp"

#include <zstd.h>

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>
#include <utility>

namespace aiperf::io {

namespace {

io_error make_io_error(std::errc code, std::string msg) {
  return io_error{std::make_error_code(code), std::move(msg)};
}

// Reads `path` in blocks and hands each block to `consume` (which returns
// false to stop early; its own error is then reported by the caller).
std::optional<io_error> read_blocks(const std::filesystem::path& path,
                                    std::string_view verb,
                                    const std::function<bool(std::string_view)>&
                                      consume) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno_error(errno, verb, path, "open");
  std::string buf(ZSTD_CStreamInSize(), '\0');
  for (;;) {
    auto n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      ::close(fd);
      return errno_error(err, verb, path, "read");
    }
    if (n == 0)
      break;
    if (!consume({buf.data(), static_cast<std::size_t>(n)}))
      break;
  }
  ::close(fd);
  return std::nullopt;
}

// The first error of a pipeline: the writer's own failure explains a sink
// refusal better than "the sink stopped".
std::optional<io_error> first_error(const std::optional<io_error>& read_err,
                                    const durable_writer& writer,
                                    const std::optional<io_error>& codec_err) {
  if (read_err)
    return read_err;
  if (writer.error())
    return writer.error();
  return codec_err;
}

} // namespace

std::optional<io_error> check_zstd_level(int level) {
  if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel() || level == 0) {
    return make_io_error(std::errc::invalid_argument,
                         "zstd level " + std::to_string(level)
                           + " is out of range: use 1.."
                           + std::to_string(ZSTD_maxCLevel())
                           + " (or negative down to "
                           + std::to_string(ZSTD_minCLevel())
                           + " for faster, larger output)");
  }
  return std::nullopt;
}

// -- zstd_compressor ----------------------------------------------------------

void zstd_compressor::ctx_deleter::operator()(ZSTD_CCtx_s* ctx) const noexcept {
  ZSTD_freeCCtx(ctx);
}

zstd_compressor::zstd_compressor(chunk_sink sink, std::string name, int level)
    : sink_(std::move(sink)), name_(std::move(name)) {
  if (auto err = check_zstd_level(level)) {
    error_ = make_io_error(std::errc::invalid_argument,
                           "cannot compress " + name_ + ": " + err->message);
    return;
  }
  ctx_.reset(ZSTD_createCCtx());
  if (!ctx_) {
    fail(std::errc::not_enough_memory, "cannot allocate a zstd context");
    return;
  }
  ZSTD_CCtx_setParameter(ctx_.get(), ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(ctx_.get(), ZSTD_c_checksumFlag, 1);
  out_buf_.resize(ZSTD_CStreamOutSize());
}

zstd_compressor::zstd_compressor(zstd_compressor&&) noexcept = default;
zstd_compressor&
zstd_compressor::operator=(zstd_compressor&&) noexcept = default;
zstd_compressor::~zstd_compressor() = default;

bool zstd_compressor::write(std::string_view plain) {
  if (error_)
    return false;
  if (finished_) {
    fail(std::errc::invalid_argument, "write() after finish()");
    return false;
  }
  in_ += plain.size();
  return pump(plain, false);
}

std::optional<io_error> zstd_compressor::finish() {
  if (error_)
    return error_;
  if (finished_) {
    fail(std::errc::invalid_argument, "finish() called twice");
    return error_;
  }
  finished_ = true;
  if (!pump({}, true))
    return error_;
  return std::nullopt;
}

bool zstd_compressor::pump(std::string_view plain, bool end) {
  ZSTD_inBuffer in{plain.data(), plain.size(), 0};
  auto mode = end ? ZSTD_e_end : ZSTD_e_continue;
  for (;;) {
    ZSTD_outBuffer out{out_buf_.data(), out_buf_.size(), 0};
    auto remaining = ZSTD_compressStream2(ctx_.get(), &out, &in, mode);
    if (ZSTD_isError(remaining)) {
      fail(std::errc::io_error,
           std::string{"zstd: "} + ZSTD_getErrorName(remaining));
      return false;
    }
    if (out.pos > 0) {
      if (!sink_({out_buf_.data(), out.pos})) {
        fail(std::errc::operation_canceled,
             "the output sink stopped accepting data");
        return false;
      }
      out_ += out.pos;
    }
    // Continue mode is done once the input is consumed; end mode once zstd
    // has nothing left to flush.
    if (end ? remaining == 0 : in.pos == in.size)
      return true;
  }
}

void zstd_compressor::fail(std::errc code, std::string_view reason) {
  if (!error_) {
    error_ = make_io_error(code, "cannot compress " + name_ + ": "
                                   + std::string{reason});
  }
}

// -- zstd_decompressor --------------------------------------------------------

void zstd_decompressor::ctx_deleter::operator()(
  ZSTD_DCtx_s* ctx) const noexcept {
  ZSTD_freeDCtx(ctx);
}

zstd_decompressor::zstd_decompressor(chunk_sink sink, std::string name,
                                     std::uint64_t max_output_bytes)
    : sink_(std::move(sink)), name_(std::move(name)),
      max_out_(max_output_bytes) {
  ctx_.reset(ZSTD_createDCtx());
  if (!ctx_) {
    fail(std::errc::not_enough_memory, "cannot allocate a zstd context");
    return;
  }
  out_buf_.resize(ZSTD_DStreamOutSize());
}

zstd_decompressor::zstd_decompressor(zstd_decompressor&&) noexcept = default;
zstd_decompressor&
zstd_decompressor::operator=(zstd_decompressor&&) noexcept = default;
zstd_decompressor::~zstd_decompressor() = default;

bool zstd_decompressor::write(std::string_view compressed) {
  if (error_)
    return false;
  if (finished_) {
    fail(std::errc::invalid_argument, "write() after finish()");
    return false;
  }
  in_ += compressed.size();
  ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
  // A full output buffer may leave data inside zstd even with all input
  // consumed, so keep going until zstd returns with room to spare or says
  // the frame is done (called again after a frame end, zstd would answer
  // with the next frame's header size, which is not "unfinished").
  bool out_full = false;
  while (in.pos < in.size || (out_full && pending_ != 0)) {
    ZSTD_outBuffer out{out_buf_.data(), out_buf_.size(), 0};
    auto ret = ZSTD_decompressStream(ctx_.get(), &out, &in);
    if (ZSTD_isError(ret)) {
      fail(std::errc::illegal_byte_sequence,
           std::string{"not valid zstd data (corrupt or not a .zst file): "}
             + ZSTD_getErrorName(ret));
      return false;
    }
    pending_ = ret;
    out_full = out.pos == out.size;
    if (out.pos == 0)
      continue;
    if (out.pos > max_out_ - out_) {
      fail(std::errc::file_too_large,
           "decompressed size exceeds the limit of "
             + std::to_string(max_out_)
             + " bytes (raise max_output_bytes if the input is trusted)");
      return false;
    }
    if (!sink_({out_buf_.data(), out.pos})) {
      fail(std::errc::operation_canceled,
           "the output sink stopped accepting data");
      return false;
    }
    out_ += out.pos;
  }
  return true;
}

std::optional<io_error> zstd_decompressor::finish() {
  if (error_)
    return error_;
  if (finished_) {
    fail(std::errc::invalid_argument, "finish() called twice");
    return error_;
  }
  finished_ = true;
  if (in_ == 0) {
    fail(std::errc::illegal_byte_sequence,
         "input is empty (expected at least one zstd frame)");
    return error_;
  }
  if (pending_ != 0) {
    fail(std::errc::illegal_byte_sequence,
         "truncated: the zstd frame ends early (re-send or re-download the "
         "file)");
    return error_;
  }
  return std::nullopt;
}

void zstd_decompressor::fail(std::errc code, std::string_view reason) {
  if (!error_) {
    error_ = make_io_error(code, "cannot decompress " + name_ + ": "
                                   + std::string{reason});
  }
}

// -- one-call helpers ---------------------------------------------------------

std::optional<io_error> compress_file(const std::filesystem::path& in,
                                      const std::filesystem::path& out,
                                      int level) {
  durable_writer writer{out};
  if (writer.error())
    return writer.error();
  zstd_compressor zc{[&](std::string_view b) { return writer.append(b); },
                     in.string() + " into " + out.string(), level};
  auto read_err = read_blocks(in, "compress", [&](std::string_view b) {
    return zc.write(b);
  });
  auto zerr = read_err ? std::nullopt : zc.finish();
  if (auto err = first_error(read_err, writer, zerr ? zerr : zc.error()))
    return err;
  return writer.commit();
}

std::optional<io_error> decompress_file(const std::filesystem::path& in,
                                        const std::filesystem::path& out,
                                        std::uint64_t max_output_bytes) {
  durable_writer writer{out};
  if (writer.error())
    return writer.error();
  zstd_decompressor zd{[&](std::string_view b) { return writer.append(b); },
                       in.string(), max_output_bytes};
  auto read_err = read_blocks(in, "decompress", [&](std::string_view b) {
    return zd.write(b);
  });
  auto zerr = read_err ? std::nullopt : zd.finish();
  if (auto err = first_error(read_err, writer, zerr ? zerr : zd.error()))
    return err;
  return writer.commit();
}

std::optional<io_error> compress_to_file(std::string_view plain,
                                         const std::filesystem::path& out,
                                         int level) {
  durable_writer writer{out};
  if (writer.error())
    return writer.error();
  zstd_compressor zc{[&](std::string_view b) { return writer.append(b); },
                     out.string(), level};
  zc.write(plain);
  auto zerr = zc.finish();
  if (auto err = first_error(std::nullopt, writer, zerr))
    return err;
  return writer.commit();
}

std::optional<io_error> decompress_to_file(std::string_view compressed,
                                           std::string_view name,
                                           const std::filesystem::path& out,
                                           std::uint64_t max_output_bytes) {
  durable_writer writer{out};
  if (writer.error())
    return writer.error();
  zstd_decompressor zd{[&](std::string_view b) { return writer.append(b); },
                       std::string{name}, max_output_bytes};
  zd.write(compressed);
  auto zerr = zd.finish();
  if (auto err = first_error(std::nullopt, writer, zerr))
    return err;
  return writer.commit();
}

std::optional<io_error> compress_file_to_sink(const std::filesystem::path& in,
                                              const chunk_sink& sink,
                                              int level) {
  zstd_compressor zc{sink, in.string(), level};
  auto read_err = read_blocks(in, "compress", [&](std::string_view b) {
    return zc.write(b);
  });
  if (read_err)
    return read_err;
  return zc.finish();
}

io_result<std::string> compress_buffer(std::string_view plain, int level) {
  std::string out;
  out.reserve(ZSTD_compressBound(plain.size()));
  zstd_compressor zc{[&](std::string_view b) {
                       out.append(b);
                       return true;
                     },
                     "in-memory buffer", level};
  zc.write(plain);
  if (auto err = zc.finish())
    return *err;
  return out;
}

io_result<std::string> decompress_buffer(std::string_view compressed,
                                         std::string_view name,
                                         std::uint64_t max_output_bytes) {
  std::string out;
  zstd_decompressor zd{[&](std::string_view b) {
                         out.append(b);
                         return true;
                       },
                       std::string{name}, max_output_bytes};
  zd.write(compressed);
  if (auto err = zd.finish())
    return *err;
  return out;
}

} // namespace aiperf::io
