#include "k8s/sim/store/state_log.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace aiperf::k8s::sim {
namespace {

caf::error io_error(const std::string& path, const char* step, int err) {
  return make_error(errc::unavailable, "state log " + path + ": cannot " + step
                                           + ": " + std::strerror(err));
}

} // namespace

caf::expected<state_log> state_log::open(const std::string& dir,
                                         std::vector<history_event>& replay) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::string path = (std::filesystem::path{dir} / "store.log").string();
  if (ec)
    return make_error(errc::unavailable,
                      "state folder " + dir
                          + ": cannot create it: " + ec.message());
  {
    std::ifstream in{path, std::ios::binary};
    std::string line;
    std::size_t number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.empty())
        continue;
      json rec;
      try {
        rec = json::parse(line);
      } catch (const json::exception&) {
        if (in.peek() == std::char_traits<char>::eof())
          break; // cut short by a crash: never acknowledged
        return make_error(errc::invalid, "state log " + path + ":"
                                             + std::to_string(number)
                                             + ": not a JSON record; remove "
                                               "the folder to start afresh");
      }
      history_event ev;
      ev.rv = rec.value("rv", std::uint64_t{0});
      ev.type = rec.value("type", "");
      ev.storage_key = rec.value("key", "");
      ev.namespace_name = rec.value("namespace", "");
      ev.name = rec.value("name", "");
      ev.object = rec.value("object", json());
      replay.push_back(std::move(ev));
    }
  }
  int fd
      = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return io_error(path, "open", errno);
  return state_log{path, fd};
}

state_log::state_log(state_log&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

state_log& state_log::operator=(state_log&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

state_log::~state_log() {
  if (fd_ >= 0)
    ::close(fd_);
}

caf::expected<void> state_log::append(const std::vector<history_event>& batch) {
  std::string out;
  for (const auto& ev : batch) {
    json rec = {{"rv", ev.rv},           {"type", ev.type},
                {"key", ev.storage_key}, {"namespace", ev.namespace_name},
                {"name", ev.name},       {"object", ev.object}};
    out += rec.dump();
    out += '\n';
  }
  std::size_t done = 0;
  while (done < out.size()) {
    auto n = ::write(fd_, out.data() + done, out.size() - done);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return io_error(path_, "write", errno);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd_) != 0)
    return io_error(path_, "fsync", errno);
  return caf::unit;
}

caf::expected<void> state_log::truncate() {
  if (::ftruncate(fd_, 0) != 0)
    return io_error(path_, "truncate", errno);
  if (::fdatasync(fd_) != 0)
    return io_error(path_, "fsync", errno);
  return caf::unit;
}

} // namespace aiperf::k8s::sim
