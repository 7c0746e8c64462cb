#include "runtime/io/durable_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace aiperf::io {

namespace {

// `<dir>/<name>.tmp.<pid>.<random hex>`: unique across processes and across
// writers in one process, and in the target's directory so rename is atomic.
std::filesystem::path temp_name(const std::filesystem::path& target) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), ".tmp.%ld.%016llx",
                static_cast<long>(::getpid()),
                static_cast<unsigned long long>(rng()));
  auto name = target.filename();
  name += suffix;
  return target.parent_path() / name;
}

std::filesystem::path directory_of(const std::filesystem::path& target) {
  auto dir = target.parent_path();
  return dir.empty() ? std::filesystem::path{"."} : dir;
}

int write_all(int fd, const char* data, std::size_t len) {
  while (len > 0) {
    auto n = ::write(fd, data, len);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return errno;
    }
    data += n;
    len -= static_cast<std::size_t>(n);
  }
  return 0;
}

int fsync_directory(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return errno;
  int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

} // namespace

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::system:
      return "system";
    case errc::invalid_argument:
      return "invalid_argument";
    case errc::closed:
      return "closed";
    case errc::corrupt:
      return "corrupt";
    case errc::too_large:
      return "too_large";
    case errc::canceled:
      return "canceled";
    case errc::out_of_memory:
      return "out_of_memory";
    case errc::codec_failed:
      return "codec_failed";
  }
  return "unknown";
}

caf::expected<void> atomic_write_file(const std::filesystem::path& path,
                                      std::string_view contents) {
  // A zero-size buffer makes append write `contents` straight from the view.
  durable_writer writer{path, 0};
  writer.append(contents);
  return writer.commit();
}

durable_writer::durable_writer(std::filesystem::path target,
                               std::size_t buffer_bytes)
    : target_(std::move(target)), buffer_bytes_(buffer_bytes) {
  auto name = target_.filename();
  if (target_.empty() || name.empty() || name == "." || name == "..") {
    error_ = make_error(errc::invalid_argument,
                        "cannot write '" + target_.string()
                          + "': path must name a file, not be empty or a "
                            "directory");
    return;
  }
  // O_EXCL: never adopt a file someone else created; retry another name.
  for (int attempt = 0; attempt < 16; ++attempt) {
    auto candidate = temp_name(target_);
    fd_ = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                 0666);
    if (fd_ >= 0) {
      temp_ = std::move(candidate);
      buffer_.reserve(buffer_bytes_);
      return;
    }
    if (errno != EEXIST) {
      fail(errno, "open temp file", candidate);
      return;
    }
  }
  fail(EEXIST, "open temp file (16 names taken) in", directory_of(target_));
}

durable_writer::durable_writer(durable_writer&& other) noexcept
    : target_(std::move(other.target_)), temp_(std::exchange(other.temp_, {})),
      fd_(std::exchange(other.fd_, -1)), committed_(other.committed_),
      buffer_(std::move(other.buffer_)), buffer_bytes_(other.buffer_bytes_),
      size_(other.size_), error_(std::move(other.error_)) {
  // nop
}

durable_writer& durable_writer::operator=(durable_writer&& other) noexcept {
  if (this != &other) {
    if (!committed_)
      abandon();
    target_ = std::move(other.target_);
    temp_ = std::exchange(other.temp_, {});
    fd_ = std::exchange(other.fd_, -1);
    committed_ = other.committed_;
    buffer_ = std::move(other.buffer_);
    buffer_bytes_ = other.buffer_bytes_;
    size_ = other.size_;
    error_ = std::move(other.error_);
  }
  return *this;
}

durable_writer::~durable_writer() {
  if (!committed_)
    abandon();
}

bool durable_writer::append(std::string_view bytes) {
  if (error_ || committed_ || fd_ < 0)
    return false;
  size_ += bytes.size();
  if (buffer_.size() + bytes.size() < buffer_bytes_) {
    buffer_.append(bytes);
    return true;
  }
  if (!flush_buffer())
    return false;
  if (bytes.size() < buffer_bytes_) {
    buffer_.append(bytes);
    return true;
  }
  // Big enough to go straight to the kernel without a copy.
  if (int err = write_all(fd_, bytes.data(), bytes.size()); err != 0) {
    fail(err, "write temp file", temp_);
    return false;
  }
  return true;
}

caf::expected<void> durable_writer::commit() {
  if (error_)
    return error_;
  if (committed_ || fd_ < 0) {
    return make_error(errc::closed,
                      "cannot write " + target_.string()
                        + ": commit() called twice or after abandon()");
  }
  if (!flush_buffer())
    return error_;
  if (::fsync(fd_) != 0) {
    fail(errno, "fsync temp file", temp_);
    return error_;
  }
  int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) {
    fail(errno, "close temp file", temp_);
    return error_;
  }
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    fail(errno, "rename temp file over it from", temp_);
    return error_;
  }
  temp_.clear();
  committed_ = true;
  // The new file is in place; a failing directory fsync only means the
  // rename might not survive a power loss, which the caller must still hear.
  if (int err = fsync_directory(directory_of(target_)); err != 0) {
    error_ = errno_error(err, "write", target_, "fsync directory",
                         directory_of(target_));
    return error_;
  }
  return caf::unit;
}

void durable_writer::abandon() noexcept {
  if (fd_ >= 0)
    ::close(std::exchange(fd_, -1));
  if (!temp_.empty()) {
    ::unlink(temp_.c_str());
    temp_.clear();
  }
  buffer_.clear();
}

bool durable_writer::flush_buffer() {
  if (buffer_.empty())
    return true;
  if (int err = write_all(fd_, buffer_.data(), buffer_.size()); err != 0) {
    fail(err, "write temp file", temp_);
    return false;
  }
  buffer_.clear();
  return true;
}

void durable_writer::fail(int err, std::string_view step,
                          const std::filesystem::path& what) {
  if (!error_)
    error_ = errno_error(err, "write", target_, step, what);
  abandon();
}

caf::error errno_error(int err, std::string_view verb,
                       const std::filesystem::path& path, std::string_view step,
                       const std::filesystem::path& what) {
  std::string msg = "cannot ";
  msg += verb;
  msg += ' ';
  msg += path.string();
  msg += ": ";
  msg += step;
  if (!what.empty()) {
    msg += ' ';
    msg += what.string();
  }
  msg += ": ";
  msg += std::strerror(err);
  return make_error(errc::system, std::move(msg), err);
}

int error_errno(const caf::error& err) {
  if (!is_error(err, errc::system))
    return 0;
  const auto* no = error_payload<int>(err);
  return no != nullptr ? *no : 0;
}

} // namespace aiperf::io
