#include "runtime/io/mmap_file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace aiperf::io {

caf::expected<mmap_file> mmap_file::open(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno_error(errno, "map", path, "open");
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return errno_error(err, "map", path, "stat");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return errno_error(S_ISDIR(st.st_mode) ? EISDIR : EINVAL, "map", path,
                     "not a regular file (give the path of a file)");
  }
  mmap_file out;
  out.path_ = path;
  out.size_ = static_cast<std::size_t>(st.st_size);
  if (out.size_ > 0) {
    void* addr = ::mmap(nullptr, out.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (addr == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      out.size_ = 0;
      return errno_error(err, "map", path, "mmap");
    }
    out.addr_ = addr;
  }
  // The mapping keeps its own reference to the file.
  ::close(fd);
  return out;
}

mmap_file::mmap_file(mmap_file&& other) noexcept
    : path_(std::move(other.path_)), addr_(std::exchange(other.addr_, nullptr)),
      size_(std::exchange(other.size_, 0)) {
  // nop
}

mmap_file& mmap_file::operator=(mmap_file&& other) noexcept {
  if (this != &other) {
    reset();
    path_ = std::move(other.path_);
    addr_ = std::exchange(other.addr_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

mmap_file::~mmap_file() {
  reset();
}

void mmap_file::reset() noexcept {
  if (addr_ != nullptr)
    ::munmap(addr_, size_);
  addr_ = nullptr;
  size_ = 0;
}

} // namespace aiperf::io
