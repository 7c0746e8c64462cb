#include "runtime/system/owned_dir.hpp"

#include "runtime/io/durable_file.hpp"
#include "runtime/system/errc.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace aiperf::system {

namespace fs = std::filesystem;

namespace {

constexpr const char* owner_file = "owner.pid";

/// The pid in `dir`'s owner file, or 0.
pid_t owner_of(const fs::path& dir) {
  std::ifstream in{dir / owner_file};
  long pid = 0;
  if (!(in >> pid) || pid <= 0)
    return 0;
  return static_cast<pid_t>(pid);
}

bool alive(pid_t pid) {
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

} // namespace

std::size_t reclaim_stale(const fs::path& parent, std::string_view prefix) {
  std::size_t removed = 0;
  std::error_code ec;
  for (auto& entry : fs::directory_iterator{parent, ec}) {
    auto name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !entry.is_directory(ec))
      continue;
    auto pid = owner_of(entry.path());
    bool stale = false;
    if (pid != 0) {
      stale = !alive(pid);
    } else {
      // No owner file: another writer's, or one killed before it wrote it.
      auto age = fs::file_time_type::clock::now() - fs::last_write_time(entry.path(), ec);
      stale = !ec && age > std::chrono::hours{24};
    }
    if (stale && fs::remove_all(entry.path(), ec) > 0 && !ec)
      ++removed;
  }
  return removed;
}

caf::expected<owned_dir> owned_dir::make(const fs::path& parent, std::string_view prefix) {
  (void) reclaim_stale(parent, prefix);
  auto tmpl = (parent / (std::string{prefix} + "XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    return make_error(errc::bad_option, "cannot create a scratch directory " + tmpl + ": "
                                          + std::strerror(errno) + "; check that "
                                          + parent.string() + " is writable");
  owned_dir dir{fs::path{tmpl}};
  if (auto done = io::atomic_write_file(dir.path_ / owner_file, std::to_string(::getpid()) + "\n");
      !done)
    return std::move(done.error());
  return dir;
}

owned_dir::owned_dir(owned_dir&& other) noexcept : path_(std::move(other.path_)) {
  other.path_.clear();
}

owned_dir& owned_dir::operator=(owned_dir&& other) noexcept {
  if (this != &other) {
    std::error_code ec;
    if (!path_.empty())
      fs::remove_all(path_, ec);
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

owned_dir::~owned_dir() {
  std::error_code ec;
  if (!path_.empty())
    fs::remove_all(path_, ec);
}

} // namespace aiperf::system
