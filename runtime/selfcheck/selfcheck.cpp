#include "runtime/selfcheck/selfcheck.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sched.h>
#include <sys/resource.h>
#include <time.h>

namespace aiperf::selfcheck {

namespace {

std::int64_t to_ns(const timeval& tv) noexcept {
  return static_cast<std::int64_t>(tv.tv_sec) * 1'000'000'000
         + static_cast<std::int64_t>(tv.tv_usec) * 1'000;
}

std::int64_t to_ns(const timespec& ts) noexcept {
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// "3.2 ms" with two significant decimals below 10 ms, one above: the
// warning is read by people, the JSON carries the exact numbers.
std::string format_ms(double ns) {
  char buf[32];
  auto ms = ns / 1e6;
  std::snprintf(buf, sizeof buf, ms < 10 ? "%.2f ms" : "%.1f ms", ms);
  return buf;
}

std::string format_cores(double cores) {
  char buf[32];
  if (cores == static_cast<double>(static_cast<long>(cores)))
    std::snprintf(buf, sizeof buf, "%ld core%s", static_cast<long>(cores),
                  cores == 1 ? "" : "s");
  else
    std::snprintf(buf, sizeof buf, "%.2f cores", cores);
  return buf;
}

std::string format_percent(double fraction) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", fraction * 100);
  return buf;
}

std::optional<double> read_cpu_max(const std::string& path) {
  std::ifstream in{path};
  if (!in)
    return std::nullopt;
  std::string line;
  std::getline(in, line);
  return parse_cgroup_cpu_max(line);
}

} // namespace

double cpu_usage::cores_used() const noexcept {
  if (wall_ns <= 0)
    return 0;
  return static_cast<double>(user_ns + system_ns)
         / static_cast<double>(wall_ns);
}

double cpu_usage::saturation() const noexcept {
  return cores_available > 0 ? cores_used() / cores_available : 0;
}

verdict judge(const lag_stats& lag, const cpu_usage& cpu,
              std::optional<double> io_thread_busy, const thresholds& limits) {
  verdict v;
  v.lag = lag;
  v.cpu = cpu;
  v.io_thread_busy = io_thread_busy;
  // A handful of samples from a sub-second run says nothing about p99, and
  // a p99 above the line must be more than two or three late samples.
  const auto lag_line = static_cast<double>(limits.lag_p99.count());
  v.idle = cpu.cores_used() < limits.min_busy_cores
           && (!io_thread_busy || *io_thread_busy < limits.min_busy_cores);
  v.lag_limited = !v.idle && lag.samples >= limits.min_lag_samples
                  && lag.p99_ns > lag_line && lag.fifth_largest_ns > lag_line;
  v.cpu_limited = cpu.wall_ns > 0 && cpu.saturation() >= limits.cpu_saturation;
  v.io_thread_limited
      = io_thread_busy && *io_thread_busy >= limits.io_thread_busy;
  v.client_limited = v.lag_limited || v.cpu_limited || v.io_thread_limited;

  std::string cpu_text = "CPU " + format_percent(cpu.saturation()) + " of "
                         + format_cores(cpu.cores_available);
  std::string io_text
      = io_thread_busy
            ? "I/O thread " + format_percent(*io_thread_busy) + " busy"
            : std::string{};

  v.summary = "client self-check: loop lag p50 " + format_ms(lag.p50_ns)
              + " p99 " + format_ms(lag.p99_ns) + " max "
              + format_ms(lag.max_ns) + " (" + std::to_string(lag.samples)
              + " samples), " + cpu_text;
  if (io_thread_busy)
    v.summary += ", " + io_text;
  if (v.idle)
    v.summary += " (idle: lag not judged)";
  return v;
}

std::chrono::nanoseconds lag_p99_from_env(const char* env) noexcept {
  const auto fallback = thresholds{}.lag_p99;
  if (env == nullptr || *env == '\0')
    return fallback;
  std::int64_t us = 0;
  const char* end = env + std::char_traits<char>::length(env);
  auto [p, ec] = std::from_chars(env, end, us);
  if (ec != std::errc{} || p != end || us < 0 || us > 60'000'000)
    return fallback;
  return std::chrono::microseconds{us};
}

verdict combine(const std::vector<verdict>& threads) {
  if (threads.empty())
    return {};
  // The thread to quote: the most lagging of those over a line, else the
  // most lagging of all.
  const verdict* worst = nullptr;
  for (const auto& v : threads) {
    if (worst == nullptr || (v.client_limited && !worst->client_limited)
        || (v.client_limited == worst->client_limited
            && v.lag.p99_ns > worst->lag.p99_ns))
      worst = &v;
  }
  return *worst;
}

void read_counts::add_gaps(const std::vector<std::int64_t>& gaps) noexcept {
  if (gaps.empty())
    return;
  // A read is a run of events sharing a stamp: the first event opens it,
  // every 0 gap extends it, every other gap opens the next one.
  ++reads;
  bool in_merged = false;
  for (auto g : gaps) {
    if (g == 0) {
      ++lost_gaps;
      if (!in_merged)
        ++merged_reads;
      in_merged = true;
    } else {
      ++reads;
      in_merged = false;
    }
  }
}

void read_counts::merge(const read_counts& other) noexcept {
  reads += other.reads;
  merged_reads += other.merged_reads;
  lost_gaps += other.lost_gaps;
}

double read_counts::merged_share() const noexcept {
  return reads == 0
             ? 0.0
             : static_cast<double>(merged_reads) / static_cast<double>(reads);
}

std::string merged_reads_warning(const read_counts& counts, double share) {
  if (counts.reads == 0 || !(counts.merged_share() > share))
    return {};
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "%.1f%% of the SSE reads (%llu of %llu) carried two or more events: "
      "%llu inter-chunk gaps read 0 ms and are lost from inter_chunk_latency "
      "(its low percentiles read 0). The client read later than the server's "
      "next write (loop lag above the gap between two writes) or the server "
      "wrote them together; at most %.0f%% is not warned about",
      counts.merged_share() * 100,
      static_cast<unsigned long long>(counts.merged_reads),
      static_cast<unsigned long long>(counts.reads),
      static_cast<unsigned long long>(counts.lost_gaps), share * 100);
  return buf;
}

std::string send_lag_warning(std::uint64_t sends, double send_lag_p99_ns,
                             double request_rate, double fraction) {
  if (sends < send_lag_min_sends || !(request_rate > 0)
      || !std::isfinite(request_rate))
    return {};
  const double gap_ns = 1e9 / request_rate;
  if (!(send_lag_p99_ns > fraction * gap_ns))
    return {};
  char buf[512];
  std::snprintf(
      buf, sizeof buf,
      "send lag p99 %s is %.0f%% of the scheduled inter-arrival time (%s at "
      "--request-rate %g), above %.0f%%: the client sent scheduled requests "
      "late, so the server saw another arrival process than the one asked "
      "for; the *_from_intended latencies include the lag",
      format_ms(send_lag_p99_ns).c_str(), 100 * send_lag_p99_ns / gap_ns,
      format_ms(gap_ns).c_str(), request_rate, fraction * 100);
  return buf;
}

cpu_reading read_process_cpu() noexcept {
  cpu_reading r;
  rusage ru{};
  if (getrusage(RUSAGE_SELF, &ru) == 0) {
    r.user_ns = to_ns(ru.ru_utime);
    r.system_ns = to_ns(ru.ru_stime);
  }
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  r.wall_ns = to_ns(ts);
  return r;
}

std::int64_t thread_cpu_ns() noexcept {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0;
  return to_ns(ts);
}

cpu_usage usage_between(const cpu_reading& from, const cpu_reading& to,
                        double cores_available) noexcept {
  cpu_usage u;
  u.cores_available = cores_available > 0 ? cores_available : 1;
  if (to.wall_ns <= from.wall_ns)
    return u;
  u.wall_ns = to.wall_ns - from.wall_ns;
  u.user_ns = std::max<std::int64_t>(0, to.user_ns - from.user_ns);
  u.system_ns = std::max<std::int64_t>(0, to.system_ns - from.system_ns);
  return u;
}

std::optional<double> parse_cgroup_cpu_max(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.remove_suffix(1);
  auto space = text.find(' ');
  if (space == std::string_view::npos)
    return std::nullopt;
  auto quota = text.substr(0, space);
  auto period = text.substr(space + 1);
  if (quota == "max")
    return std::nullopt;
  long q = 0;
  long p = 0;
  auto [qe, qerr]
      = std::from_chars(quota.data(), quota.data() + quota.size(), q);
  auto [pe, perr]
      = std::from_chars(period.data(), period.data() + period.size(), p);
  if (qerr != std::errc{} || perr != std::errc{}
      || qe != quota.data() + quota.size()
      || pe != period.data() + period.size() || q <= 0 || p <= 0)
    return std::nullopt;
  return static_cast<double>(q) / static_cast<double>(p);
}

double available_cores() {
  double cores = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    cores = std::max(1, CPU_COUNT(&set));
  // The process's own cgroup first ("0::/path" in cgroup v2), then the root.
  std::optional<double> quota;
  std::ifstream cg{"/proc/self/cgroup"};
  std::string line;
  while (std::getline(cg, line)) {
    if (line.rfind("0::", 0) == 0) {
      quota = read_cpu_max("/sys/fs/cgroup" + line.substr(3) + "/cpu.max");
      break;
    }
  }
  if (!quota)
    quota = read_cpu_max("/sys/fs/cgroup/cpu.max");
  if (quota && *quota < cores)
    cores = std::max(*quota, 0.01);
  return cores;
}

} // namespace aiperf::selfcheck
