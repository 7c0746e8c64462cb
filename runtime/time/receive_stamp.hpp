// Kernel receive timestamps for stream sockets.
//
// With SO_TIMESTAMPNS set, every recvmsg() on a TCP socket also returns when
// the kernel received the last bytes it hands over. A timestamp taken that way
// does not grow with the reader's own delays (a busy event loop, a descheduled
// thread, a wake-up from idle): it is the arrival, which is what a latency
// measurement means. The kernel stamps in CLOCK_REALTIME; the functions here
// convert to CLOCK_MONOTONIC, the clock every other timestamp of ours uses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sys/types.h>
#include <sys/uio.h>

namespace aiperf::time {

/// Asks the kernel to stamp what `fd` receives. False if it refused (then
/// reads carry no stamp and callers fall back to their own clock).
bool enable_receive_stamps(int fd) noexcept;

/// One recvmsg() into `iov`.
struct stamped_read {
  /// Bytes read; 0 at end of stream; -1 on error (see `error`).
  ssize_t bytes = -1;
  /// errno of a failed read (EAGAIN when nothing is there yet).
  int error = 0;
  /// CLOCK_MONOTONIC ns at which the kernel received the bytes read; 0 when
  /// the read carried no stamp (stamps not enabled, or a wall-clock step
  /// made the stamp unusable).
  std::int64_t received_ns = 0;
};

/// Reads like readv() (retrying EINTR) and returns the kernel's receive
/// stamp with the bytes.
stamped_read read_stamped(int fd, iovec* iov, int iov_count) noexcept;

/// Both clocks read together: CLOCK_REALTIME between two CLOCK_MONOTONIC
/// reads, so the real read happened at a monotonic time in
/// [mono_before, mono_after].
struct clock_pair {
  std::int64_t mono_before = 0;
  std::int64_t real = 0;
  std::int64_t mono_after = 0;
};

/// Reads a clock_pair; of up to three tries, the narrowest (a thread
/// preempted between the reads widens one).
[[nodiscard]] clock_pair read_clock_pair() noexcept;

/// Converts a CLOCK_REALTIME stamp to CLOCK_MONOTONIC ns with `now`: the
/// latest instant the stamp can denote (now.mono_after − its age), so the
/// result is late by at most the pair's width and never early — a stamp
/// never precedes the bytes it stamps, nor lies after now. 0 when the stamp
/// lies in the future or more than `max_age_s` in the past (the wall clock
/// was stepped).
[[nodiscard]] std::int64_t
realtime_to_monotonic_ns(std::int64_t realtime_ns, const clock_pair& now,
                         std::int64_t max_age_s = 10) noexcept;

/// The same with a fresh read_clock_pair().
[[nodiscard]] std::int64_t
realtime_to_monotonic_ns(std::int64_t realtime_ns,
                         std::int64_t max_age_s = 10) noexcept;

} // namespace aiperf::time
