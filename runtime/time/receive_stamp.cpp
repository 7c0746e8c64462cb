#include "runtime/time/receive_stamp.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <sys/socket.h>

namespace aiperf::time {

namespace {

std::int64_t read_clock(clockid_t id) noexcept {
  timespec ts;
  ::clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

} // namespace

bool enable_receive_stamps(int fd) noexcept {
  int on = 1;
  return ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) == 0;
}

clock_pair read_clock_pair() noexcept {
  clock_pair best;
  for (int attempt = 0; attempt < 3; ++attempt) {
    clock_pair p;
    p.mono_before = read_clock(CLOCK_MONOTONIC);
    p.real = read_clock(CLOCK_REALTIME);
    p.mono_after = read_clock(CLOCK_MONOTONIC);
    if (attempt == 0
        || p.mono_after - p.mono_before < best.mono_after - best.mono_before)
      best = p;
    // A few clock reads apart: nothing came between them.
    if (best.mono_after - best.mono_before <= 1'000)
      break;
  }
  return best;
}

std::int64_t realtime_to_monotonic_ns(std::int64_t realtime_ns,
                                      const clock_pair& now,
                                      std::int64_t max_age_s) noexcept {
  const auto age = now.real - realtime_ns;
  if (age < 0 || age > max_age_s * 1'000'000'000)
    return 0;
  return now.mono_after - age;
}

std::int64_t realtime_to_monotonic_ns(std::int64_t realtime_ns,
                                      std::int64_t max_age_s) noexcept {
  return realtime_to_monotonic_ns(realtime_ns, read_clock_pair(), max_age_s);
}

stamped_read read_stamped(int fd, iovec* iov, int iov_count) noexcept {
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = static_cast<std::size_t>(iov_count);
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  stamped_read out;
  do
    out.bytes = ::recvmsg(fd, &msg, 0);
  while (out.bytes < 0 && errno == EINTR);
  if (out.bytes < 0) {
    out.error = errno;
    return out;
  }
  for (auto* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
      continue;
    timespec stamp;
    std::memcpy(&stamp, CMSG_DATA(c), sizeof(stamp));
    out.received_ns = realtime_to_monotonic_ns(
      static_cast<std::int64_t>(stamp.tv_sec) * 1'000'000'000 + stamp.tv_nsec);
  }
  return out;
}

} // namespace aiperf::time
