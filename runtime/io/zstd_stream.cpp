#include "runtime/io/zstd_stream.hpp"

#include <zstd.h>

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>
#include <utility>

namespace aiperf::io {

namespace {

// Reads `path` in blocks and hands each block to `consume` (which returns
// false to stop early; its own error is then reported by the caller).
caf::expected<void> read_blocks(const std::filesystem::path& path,
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
  return caf::unit;
}

// The first error of a pipeline (empty if none): the writer's own failure
// explains a sink refusal better than "the sink stopped".
caf::error first_error(const caf::error& read_err, const durable_writer& writer,
                       const caf::error& codec_err) {
  if (read_err)
    return read_err;
  if (writer.error())
    return writer.error();
  return codec_err;
}

} // namespace

caf::expected<void> check_zstd_level(int level) {
  if (level < ZSTD_minCLevel() || level > ZSTD_maxCLevel() || level == 0) {
    return make_error(errc::invalid_argument,
                      "zstd level " + std::to_string(level)
                        + " is out of range: use 1.."
                        + std::to_string(ZSTD_maxCLevel())
                        + " (or negative down to "
                        + std::to_string(ZSTD_minCLevel())
                        + " for faster, larger output)");
  }
  return caf::unit;
}

// -- zstd_compressor ----------------------------------------------------------

void zstd_compressor::ctx_deleter::operator()(ZSTD_CCtx_s* ctx) const noexcept {
  ZSTD_freeCCtx(ctx);
}

zstd_compressor::zstd_compressor(chunk_sink sink, std::string name, int level)
    : sink_(std::move(sink)), name_(std::move(name)) {
  if (auto valid = check_zstd_level(level); !valid) {
    error_ = make_error(errc::invalid_argument,
                        "cannot compress " + name_ + ": "
                          + error_message(valid.error()));
    return;
  }
  ctx_.reset(ZSTD_createCCtx());
  if (!ctx_) {
    fail(errc::out_of_memory, "cannot allocate a zstd context");
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
    fail(errc::closed, "write() after finish()");
    return false;
  }
  in_ += plain.size();
  return pump(plain, false);
}

caf::expected<void> zstd_compressor::finish() {
  if (error_)
    return error_;
  if (finished_) {
    fail(errc::closed, "finish() called twice");
    return error_;
  }
  finished_ = true;
  if (!pump({}, true))
    return error_;
  return caf::unit;
}

bool zstd_compressor::pump(std::string_view plain, bool end) {
  ZSTD_inBuffer in{plain.data(), plain.size(), 0};
  auto mode = end ? ZSTD_e_end : ZSTD_e_continue;
  for (;;) {
    ZSTD_outBuffer out{out_buf_.data(), out_buf_.size(), 0};
    auto remaining = ZSTD_compressStream2(ctx_.get(), &out, &in, mode);
    if (ZSTD_isError(remaining)) {
      fail(errc::codec_failed,
           std::string{"zstd: "} + ZSTD_getErrorName(remaining));
      return false;
    }
    if (out.pos > 0) {
      if (!sink_({out_buf_.data(), out.pos})) {
        fail(errc::canceled, "the output sink stopped accepting data");
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

void zstd_compressor::fail(errc code, std::string_view reason) {
  if (!error_)
    error_ = make_error(code, "cannot compress " + name_ + ": "
                                  + std::string{reason});
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
    fail(errc::out_of_memory, "cannot allocate a zstd context");
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
    fail(errc::closed, "write() after finish()");
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
      fail(errc::corrupt,
           std::string{"not valid zstd data (corrupt or not a .zst file): "}
             + ZSTD_getErrorName(ret));
      return false;
    }
    pending_ = ret;
    out_full = out.pos == out.size;
    if (out.pos == 0)
      continue;
    if (out.pos > max_out_ - out_) {
      fail(errc::too_large,
           "decompressed size exceeds the limit of "
             + std::to_string(max_out_)
             + " bytes (raise max_output_bytes if the input is trusted)");
      return false;
    }
    if (!sink_({out_buf_.data(), out.pos})) {
      fail(errc::canceled, "the output sink stopped accepting data");
      return false;
    }
    out_ += out.pos;
  }
  return true;
}

caf::expected<void> zstd_decompressor::finish() {
  if (error_)
    return error_;
  if (finished_) {
    fail(errc::closed, "finish() called twice");
    return error_;
  }
  finished_ = true;
  if (in_ == 0) {
    fail(errc::corrupt, "input is empty (expected at least one zstd frame)");
    return error_;
  }
  if (pending_ != 0) {
    fail(errc::corrupt,
         "truncated: the zstd frame ends early (re-send or re-download the "
         "file)");
    return error_;
  }
  return caf::unit;
}

void zstd_decompressor::fail(errc code, std::string_view reason) {
  if (!error_)
    error_ = make_error(code, "cannot decompress " + name_ + ": "
                                  + std::string{reason});
}

// -- one-call helpers ---------------------------------------------------------

caf::expected<void> compress_file(const std::filesystem::path& in,
                                  const std::filesystem::path& out, int level) {
  durable_writer writer{out};
  if (writer.error())
    return writer.error();
  zstd_compressor zc{[&](std::string_view b) { return writer.append(b); },
                     in.string() + " into " + out.string(), level};
  auto read = read_blocks(in, "compress", [&](std::string_view b) {
    return zc.write(b);
  });
  caf::error codec_err = zc.error();
  if (read) {
    if (auto done = zc.finish(); !done)
      codec_err = done.error();
  }
  if (auto err = first_error(read.error(), writer, codec_err))
    return err;
  return writer.commit();
}

caf::expected<void> decompress_file(const std::filesystem::path& in,
                                    const std::filesystem::path& out,
                                    std::uint64_t max_output_bytes) {
  durable_writer writer{out};
  if (writer.error())
    return writer.error();
  zstd_decompressor zd{[&](std::string_view b) { return writer.append(b); },
                       in.string(), max_output_bytes};
  auto read = read_blocks(in, "decompress", [&](std::string_view b) {
    return zd.write(b);
  });
  caf::error codec_err = zd.error();
  if (read) {
    if (auto done = zd.finish(); !done)
      codec_err = done.error();
  }
  if (auto err = first_error(read.error(), writer, codec_err))
    return err;
  return writer.commit();
}

caf::expected<void> compress_to_file(std::string_view plain,
                                     const std::filesystem::path& out,
                                     int level) {
  durable_writer writer{out};
  if (writer.error())
    return writer.error();
  zstd_compressor zc{[&](std::string_view b) { return writer.append(b); },
                     out.string(), level};
  zc.write(plain);
  auto done = zc.finish();
  if (auto err = first_error({}, writer, done.error()))
    return err;
  return writer.commit();
}

caf::expected<void> decompress_to_file(std::string_view compressed,
                                       std::string_view name,
                                       const std::filesystem::path& out,
                                       std::uint64_t max_output_bytes) {
  durable_writer writer{out};
  if (writer.error())
    return writer.error();
  zstd_decompressor zd{[&](std::string_view b) { return writer.append(b); },
                       std::string{name}, max_output_bytes};
  zd.write(compressed);
  auto done = zd.finish();
  if (auto err = first_error({}, writer, done.error()))
    return err;
  return writer.commit();
}

caf::expected<void> compress_file_to_sink(const std::filesystem::path& in,
                                          const chunk_sink& sink, int level) {
  zstd_compressor zc{sink, in.string(), level};
  auto read = read_blocks(in, "compress", [&](std::string_view b) {
    return zc.write(b);
  });
  if (!read)
    return read;
  return zc.finish();
}

caf::expected<std::string> compress_buffer(std::string_view plain, int level) {
  std::string out;
  out.reserve(ZSTD_compressBound(plain.size()));
  zstd_compressor zc{[&](std::string_view b) {
                       out.append(b);
                       return true;
                     },
                     "in-memory buffer", level};
  zc.write(plain);
  if (auto done = zc.finish(); !done)
    return done.error();
  return out;
}

caf::expected<std::string> decompress_buffer(std::string_view compressed,
                                             std::string_view name,
                                             std::uint64_t max_output_bytes) {
  std::string out;
  zstd_decompressor zd{[&](std::string_view b) {
                         out.append(b);
                         return true;
                       },
                       std::string{name}, max_output_bytes};
  zd.write(compressed);
  if (auto done = zd.finish(); !done)
    return done.error();
  return out;
}

} // namespace aiperf::io
