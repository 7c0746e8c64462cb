// Which requests `--request-cancellation-rate` cancels.
//
// AIPerf draws one random number per credit, in the order they are sent, from a
// generator seeded with --random-seed (aiperf/timing/
// request_cancellation_strategy.py, github.com/ai-dynamo/aiperf). Here
// several workers and timing shards see credits in different orders, so the
// draw is a hash of the seed and the request's place in the run (phase,
// session, turn) instead: the same seed cancels the same requests whichever
// worker sends them, and a test can tell from an export which ones had to be.
#pragma once

#include <cstdint>

namespace aiperf::timing {

/// splitmix64's finalizer (Steele, Lea, Flood 2014): every input bit
/// reaches every output bit, so neighbouring sessions draw unrelated values.
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// The request's draw in [0, 1): 53 high bits of the hash, like a double
/// from std::generate_canonical. `phase` is 0 warmup, 1 profiling.
[[nodiscard]] constexpr double cancellation_draw(std::uint64_t seed,
                                                 std::uint8_t phase,
                                                 std::uint32_t session_num,
                                                 std::uint32_t turn_index) noexcept {
  auto h = mix64(seed ^ (std::uint64_t{phase} << 56));
  h = mix64(h ^ ((std::uint64_t{session_num} << 24) ^ turn_index));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

/// Whether the request is cancelled; `share` in [0, 1] (rate % / 100).
/// As AIPerf's `random() < rate`: share 0 never cancels, share 1 always.
[[nodiscard]] constexpr bool should_cancel(double share, std::uint64_t seed,
                                           std::uint8_t phase,
                                           std::uint32_t session_num,
                                           std::uint32_t turn_index) noexcept {
  return share > 0
         && cancellation_draw(seed, phase, session_num, turn_index) < share;
}

} // namespace aiperf::timing
