// Seeded samplers shared by the dataset generator, the sampler and the timing
// schedules.
//
// Why our own transforms: std::mt19937_64 is specified bit-exactly by the
// standard, but std::normal_distribution, std::exponential_distribution,
// std::gamma_distribution, std::uniform_int_distribution and std::shuffle are
// not (libstdc++, libc++ and MSVC produce different sequences). Everything
// below is defined in terms of raw mt19937_64 output, so a seed means the
// same dataset and schedule everywhere (up to last-ulp differences of libm's
// log/cos/sqrt, which never change a rounded token count in practice).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>

namespace aiperf::dataset {

/// The one engine type used for every seeded stream.
using rng = std::mt19937_64;

/// Returns a double uniform in [0, 1) with 53 random bits.
inline double uniform01(rng& gen) noexcept {
  return static_cast<double>(gen() >> 11) * 0x1.0p-53;
}

/// Returns a double uniform in (0, 1]; safe to take the logarithm of.
inline double uniform01_open_low(rng& gen) noexcept {
  return 1.0 - uniform01(gen);
}

/// Returns an index uniform in [0, n) without modulo bias (rejection);
/// n must be > 0.
inline std::uint64_t uniform_index(rng& gen, std::uint64_t n) noexcept {
  // Largest multiple of n that fits, so every residue is equally likely.
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t x = gen();
  while (x >= limit)
    x = gen();
  return x % n;
}

/// Returns a standard normal variate (Box-Muller, one value per two draws;
/// the second value is discarded so the stream stays position-independent).
inline double standard_normal(rng& gen) noexcept {
  const double u1 = uniform01_open_low(gen);
  const double u2 = uniform01(gen);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

/// Returns a normal variate with `mean` and `stddev` (stddev 0 = no draw).
inline double normal(rng& gen, double mean, double stddev) noexcept {
  if (stddev <= 0.0)
    return mean;
  return mean + stddev * standard_normal(gen);
}

/// Returns an exponential variate with the given mean (inverse transform).
inline double exponential(rng& gen, double mean) noexcept {
  return -std::log(uniform01_open_low(gen)) * mean;
}

/// Returns a gamma variate with `shape` > 0 and `scale` > 0
/// (Marsaglia-Tsang; shape < 1 via the u^(1/shape) boost).
inline double gamma(rng& gen, double shape, double scale) noexcept {
  if (shape < 1.0) {
    const double boost = std::pow(uniform01_open_low(gen), 1.0 / shape);
    return gamma(gen, shape + 1.0, scale) * boost;
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x = 0.0;
    double v = 0.0;
    do {
      x = standard_normal(gen);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform01_open_low(gen);
    if (u < 1.0 - 0.0331 * x * x * x * x)
      return d * v * scale;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v)))
      return d * v * scale;
  }
}

/// Returns a positive integer drawn from normal(mean, stddev), rounded.
/// Draws whose rounded value is < 1 are redrawn (a truncated normal, as
/// AIPerf's "positive normal"); after 64 failed draws (mean far below 1) the
/// result is clamped to 1 so the call always terminates.
inline std::uint64_t positive_normal_int(rng& gen, double mean,
                                         double stddev) noexcept {
  for (int attempt = 0; attempt < 64; ++attempt) {
    const double x = std::llround(normal(gen, mean, stddev));
    if (x >= 1.0)
      return static_cast<std::uint64_t>(x);
    if (stddev <= 0.0)
      break;
  }
  return 1;
}

/// Fisher-Yates shuffle driven by uniform_index (portable, unlike
/// std::shuffle).
template <class RandomIt>
void shuffle(RandomIt first, RandomIt last, rng& gen) {
  const auto n = static_cast<std::uint64_t>(last - first);
  for (std::uint64_t i = n; i > 1; --i) {
    const auto j = uniform_index(gen, i);
    using std::swap;
    swap(first[i - 1], first[j]);
  }
}

} // namespace aiperf::dataset
