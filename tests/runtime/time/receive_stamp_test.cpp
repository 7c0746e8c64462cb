#include "runtime/time/receive_stamp.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

using namespace aiperf;

namespace {

std::int64_t clock_ns(clockid_t id) {
  timespec ts;
  ::clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// A connected loopback TCP pair: `writer` -> `reader`.
struct tcp_pair {
  int reader = -1;
  int writer = -1;
  tcp_pair() {
    int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0
        || ::listen(listener, 1) != 0
        || ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len)
             != 0)
      return;
    writer = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(writer, reinterpret_cast<sockaddr*>(&addr), sizeof(addr))
        == 0)
      reader = ::accept(listener, nullptr, nullptr);
    ::close(listener);
  }
  ~tcp_pair() {
    if (reader >= 0)
      ::close(reader);
    if (writer >= 0)
      ::close(writer);
  }
};

/// Whether stamped reads arrive on `p`. The first socket to enable stamps
/// switches the kernel's receive timestamping on through deferred work, so
/// bytes that arrive before that work has run carry no stamp (the client
/// then stamps the read itself); wait for one stamped read, a bounded time.
bool stamps_flow(const tcp_pair& p) {
  for (int attempt = 0; attempt < 2000; ++attempt) {
    char byte = 'w';
    if (::write(p.writer, &byte, 1) != 1)
      return false;
    iovec iov{&byte, 1};
    auto r = time::read_stamped(p.reader, &iov, 1);
    if (r.bytes != 1)
      return false;
    if (r.received_ns != 0)
      return true;
    timespec pause{0, 1'000'000};
    ::nanosleep(&pause, nullptr);
  }
  return false;
}

} // namespace

// The stamp is taken when the bytes arrive (inside the sender's write on
// loopback), so it lies between the moments around the write, however late
// the reader reads.
TEST(receive_stamp, stamps_the_arrival_of_the_bytes_read) {
  tcp_pair p;
  ASSERT_GE(p.reader, 0);
  ASSERT_TRUE(time::enable_receive_stamps(p.reader));
  ASSERT_TRUE(stamps_flow(p)) << "no stamped read within 2 s of enabling stamps";
  auto before = clock_ns(CLOCK_MONOTONIC);
  ASSERT_EQ(::write(p.writer, "hello", 5), 5);
  auto after = clock_ns(CLOCK_MONOTONIC);
  char buf[16];
  iovec iov{buf, sizeof(buf)};
  auto r = time::read_stamped(p.reader, &iov, 1);
  ASSERT_EQ(r.bytes, 5);
  EXPECT_EQ(std::string(buf, 5), "hello");
  EXPECT_GE(r.received_ns, before);
  EXPECT_LE(r.received_ns, after);
}

TEST(receive_stamp, without_stamps_enabled_a_read_has_no_stamp) {
  tcp_pair p;
  ASSERT_GE(p.reader, 0);
  ASSERT_EQ(::write(p.writer, "x", 1), 1);
  char buf[4];
  iovec iov{buf, sizeof(buf)};
  auto r = time::read_stamped(p.reader, &iov, 1);
  ASSERT_EQ(r.bytes, 1);
  EXPECT_EQ(r.received_ns, 0);
}

TEST(receive_stamp, reports_eagain_and_end_of_stream) {
  tcp_pair p;
  ASSERT_GE(p.reader, 0);
  ASSERT_TRUE(time::enable_receive_stamps(p.reader));
  ::fcntl(p.reader, F_SETFL, ::fcntl(p.reader, F_GETFL) | O_NONBLOCK);
  char buf[4];
  iovec iov{buf, sizeof(buf)};
  auto empty = time::read_stamped(p.reader, &iov, 1);
  EXPECT_EQ(empty.bytes, -1);
  EXPECT_EQ(empty.error, EAGAIN);
  ::shutdown(p.writer, SHUT_WR);
  auto eof = time::read_stamped(p.reader, &iov, 1);
  EXPECT_EQ(eof.bytes, 0);
  auto bad = time::read_stamped(-1, &iov, 1);
  EXPECT_EQ(bad.bytes, -1);
  EXPECT_EQ(bad.error, EBADF);
}

TEST(receive_stamp, converts_realtime_to_monotonic_and_refuses_steps) {
  auto mono_before = clock_ns(CLOCK_MONOTONIC);
  auto real = clock_ns(CLOCK_REALTIME) - 1'000'000; // 1 ms ago
  auto mono = time::realtime_to_monotonic_ns(real);
  auto mono_after = clock_ns(CLOCK_MONOTONIC);
  EXPECT_GE(mono, mono_before - 1'000'000 - 1'000'000);
  EXPECT_LE(mono, mono_after - 1'000'000);
  EXPECT_EQ(time::realtime_to_monotonic_ns(clock_ns(CLOCK_REALTIME)
                                           + 60'000'000'000),
            0)
      << "a stamp in the future means the wall clock was stepped back";
  EXPECT_EQ(time::realtime_to_monotonic_ns(clock_ns(CLOCK_REALTIME)
                                           - 60'000'000'000),
            0);
}

// The real clock is read between two monotonic reads; where exactly in that
// bracket is unknown (a preempted thread widens it), so the conversion takes
// the latest instant the stamp can denote: late by at most the bracket,
// never before the bytes arrived (the fidelity test's causality check).
TEST(receive_stamp, conversion_is_never_earlier_than_the_arrival) {
  // Real read at monotonic 1'000..1'100: the offset is 3'900..4'000, so a
  // stamp 500 ns before the real read denotes monotonic 500..600.
  const time::clock_pair now{1'000, 5'000, 1'100};
  EXPECT_EQ(time::realtime_to_monotonic_ns(4'500, now), 600);
  EXPECT_EQ(time::realtime_to_monotonic_ns(5'000, now), 1'100)
      << "age 0 is the pair's own instant, never later";
  EXPECT_EQ(time::realtime_to_monotonic_ns(5'001, now), 0) << "in the future";
  EXPECT_EQ(time::realtime_to_monotonic_ns(5'000 - 10'000'000'001, now), 0)
      << "older than max_age_s";
}

TEST(receive_stamp, clock_pair_brackets_its_real_read) {
  auto mono_before = clock_ns(CLOCK_MONOTONIC);
  auto pair = time::read_clock_pair();
  auto real_after = clock_ns(CLOCK_REALTIME);
  EXPECT_LE(mono_before, pair.mono_before);
  EXPECT_LE(pair.mono_before, pair.mono_after);
  EXPECT_LE(pair.real, real_after);
}
