#include "runtime/stats/sample_accumulator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include <sys/mman.h>

namespace aiperf::stats {

namespace {

/// Whether `v` (a value of type T made double) counts: integers always do,
/// with no per-value check.
template <class T>
constexpr bool finite(double v) noexcept {
  return !std::is_floating_point_v<T> || std::isfinite(v);
}

} // namespace

void sample_accumulator::reserve_samples() {
  samples_.reserve(budget_);
  // Huge pages for what lies past the first 4 MiB: a run that fills the
  // 32 MiB of inter-chunk latencies takes 8k page faults on small pages
  // (~0.2 µs per request of a 200k-request run on a VM), while a short run
  // stays on small pages and touches only what it uses. A hint: ignored
  // where transparent huge pages are off.
  constexpr std::uintptr_t small = 4u << 20;
  constexpr std::uintptr_t huge = 2u << 20;
  auto first = reinterpret_cast<std::uintptr_t>(samples_.data());
  auto last = first + budget_ * sizeof(double);
  auto from = (first + small + huge - 1) & ~(huge - 1);
  if (from < last)
    ::madvise(reinterpret_cast<void*>(from), last - from, MADV_HUGEPAGE);
}

void sample_accumulator::moments::add(double x) noexcept {
  if (n == 0) {
    min = max = x;
  } else {
    min = std::min(min, x);
    max = std::max(max, x);
  }
  ++n;
  auto delta = x - mean;
  mean += delta / static_cast<double>(n);
  m2 += delta * (x - mean);
  sum.add(x);
}

void sample_accumulator::moments::merge(const moments& other) noexcept {
  if (other.n == 0)
    return;
  if (n == 0) {
    *this = other;
    return;
  }
  // Chan et al.: combine two (n, mean, M2) triples without the samples.
  auto na = static_cast<double>(n);
  auto nb = static_cast<double>(other.n);
  auto delta = other.mean - mean;
  auto total = na + nb;
  mean += delta * nb / total;
  m2 += other.m2 + delta * delta * na * nb / total;
  n += other.n;
  sum.add(other.sum);
  min = std::min(min, other.min);
  max = std::max(max, other.max);
}

sample_accumulator::moments sample_accumulator::current_moments() const {
  count_kept();
  if (!exact_)
    return moments_;
  moments m;
  if (samples_.empty())
    return m;
  // Two passes (mean, then deviations): exact-mode numbers match numpy.
  m.n = samples_.size();
  auto [mn, mx] = std::minmax_element(samples_.begin(), samples_.end());
  m.min = *mn;
  m.max = *mx;
  for (auto v : samples_)
    m.sum.add(v);
  m.mean = m.sum.value() / static_cast<double>(m.n);
  compensated_sum sq;
  for (auto v : samples_)
    sq.add((v - m.mean) * (v - m.mean));
  m.m2 = sq.value();
  return m;
}

void sample_accumulator::spill() {
  if (!exact_)
    return;
  exact_ = false;
  kept_next_ = 0;
  count_kept(spill_slice);
}

void sample_accumulator::count_kept(std::size_t max) const {
  if (exact_)
    return;
  if (kept_next_ < samples_.size()) {
    // Each slice is one batch: moments and histogram counts in the batch
    // path's two passes.
    auto n = std::min(max, samples_.size() - kept_next_);
    count_batch(std::span<const double>{samples_.data() + kept_next_, n});
    kept_next_ += n;
  }
  // Freed when a result is asked for, not by the add that counts the last
  // slice: returning 32 MiB of touched pages takes milliseconds.
  if (max == all_kept && kept_next_ == samples_.size() && !samples_.empty()) {
    std::vector<double>{}.swap(samples_);
    kept_next_ = 0;
  }
}

template <class T>
void sample_accumulator::add_batch(std::span<const T> values) {
  if (exact_ && samples_.size() + values.size() <= budget_) {
    if (samples_.capacity() == 0)
      reserve_samples();
    for (auto x : values)
      if (auto v = static_cast<double>(x); finite<T>(v))
        samples_.push_back(v);
    return;
  }
  if (exact_)
    spill();
  else
    count_kept(spill_slice);
  count_batch(values);
}

template <class T>
void sample_accumulator::count_batch(std::span<const T> values) const {
  // Moments of the batch in two passes, then one Chan merge. The sum is
  // the same Neumaier sum, written so that it compiles without branches;
  // the histogram buckets are counted in the same pass, in the shadow of
  // the sum's dependency chain.
  moments batch;
  double sum = 0;
  double comp = 0;
  double lo = 0;
  double hi = 0;
  for (auto x : values) {
    auto v = static_cast<double>(x);
    if (!finite<T>(v))
      continue;
    lo = batch.n == 0 || v < lo ? v : lo;
    hi = batch.n == 0 || v > hi ? v : hi;
    ++batch.n;
    histogram_.count_finite(v);
    auto t = sum + v;
    auto big = std::abs(sum) >= std::abs(v) ? sum : v;
    auto small = std::abs(sum) >= std::abs(v) ? v : sum;
    comp += (big - t) + small;
    sum = t;
  }
  histogram_.note_counted(batch.n, lo, hi);
  if (batch.n == 0)
    return;
  batch.min = lo;
  batch.max = hi;
  batch.sum.add(sum);
  batch.sum.add(comp);
  batch.mean = (sum + comp) / static_cast<double>(batch.n);
  for (auto x : values)
    if (auto v = static_cast<double>(x); finite<T>(v))
      batch.m2 += (v - batch.mean) * (v - batch.mean);
  moments_.merge(batch);
}

void sample_accumulator::add_all(std::span<const double> values) {
  add_batch(values);
}

void sample_accumulator::add_all(std::span<const std::int64_t> values) {
  add_batch(values);
}

void sample_accumulator::merge(const sample_accumulator& other) {
  if (exact_ && other.exact_
      && samples_.size() + other.samples_.size() <= budget_) {
    samples_.insert(samples_.end(), other.samples_.begin(),
                    other.samples_.end());
    return;
  }
  spill();
  count_kept();
  moments_.merge(other.current_moments());
  if (other.exact_) {
    for (auto v : other.samples_)
      histogram_.record(v);
  } else {
    histogram_.merge(other.histogram_);
  }
}

std::uint64_t sample_accumulator::count() const noexcept {
  // Spilled: the kept samples not counted yet count too.
  return exact_ ? samples_.size()
                : moments_.n + (samples_.size() - kept_next_);
}

double sample_accumulator::sum() const {
  count_kept();
  if (!exact_)
    return moments_.sum.value();
  // Only the sum: the full moments would take two more passes.
  compensated_sum sum;
  for (auto v : samples_)
    sum.add(v);
  return sum.value();
}

double sample_accumulator::mean() const {
  return current_moments().mean;
}

double sample_accumulator::variance() const {
  auto m = current_moments();
  return m.n == 0 ? 0.0 : std::max(0.0, m.m2) / static_cast<double>(m.n);
}

double sample_accumulator::min() const {
  return current_moments().min;
}

double sample_accumulator::max() const {
  return current_moments().max;
}

std::optional<summary> sample_accumulator::summarize() const {
  if (exact_)
    return stats::summarize(samples_);
  count_kept();
  if (moments_.n == 0)
    return std::nullopt;
  summary s;
  s.count = moments_.n;
  s.sum = moments_.sum.value();
  s.avg = s.sum / static_cast<double>(s.count);
  s.min = moments_.min;
  s.max = moments_.max;
  s.std = std::sqrt(std::max(0.0, moments_.m2) / static_cast<double>(s.count));
  for (std::size_t i = 0; i < percentile_levels.size(); ++i)
    s.pct[i] = histogram_.percentile(percentile_levels[i]);
  s.exact = false;
  return s;
}

} // namespace aiperf::stats
