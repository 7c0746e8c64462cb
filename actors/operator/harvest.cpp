#include "actors/operator/harvest.hpp"

#include "actors/benchmark/api_service/results_files.hpp"
#include "actors/operator/results_api.hpp"

#include "runtime/http_fetch/http_fetch.hpp"
#include "runtime/io/durable_file.hpp"
#include "runtime/log/log.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace aiperf::op {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::cancelled:
      return "cancelled";
    case errc::results_fetch_failed:
      return "results_fetch_failed";
    case errc::results_store_failed:
      return "results_store_failed";
  }
  return "unknown";
}

namespace {

namespace fs = std::filesystem;

double round_to(double x, double scale) {
  return std::isfinite(x) ? std::round(x * scale) / scale : 0.0;
}

// The metric tags status.summary carries (AIPerf's curated set).
bool curated(const std::string& tag) {
  static const std::set<std::string> tags
      = {"request_throughput",    "output_token_throughput", "output_token_throughput_per_user",
         "request_latency",       "time_to_first_token",     "time_to_second_token",
         "inter_token_latency",   "input_sequence_length",   "output_sequence_length",
         "request_count",         "error_request_count",     "benchmark_duration",
         "goodput",               "good_request_count"};
  return tags.count(tag) > 0 || tag.rfind("http_req_", 0) == 0;
}

bool cancelled(const harvest_request& r) {
  return r.cancelled && r.cancelled->load();
}

struct listing {
  std::uint16_t port = 0;
  std::vector<std::pair<std::string, std::uint64_t>> files;
};

// The ready listing of the controller, else of its sidecar.
caf::expected<listing> list_files(const harvest_request& r, std::chrono::milliseconds timeout) {
  std::string why;
  for (std::uint16_t port : {r.api_port, r.sidecar_port}) {
    auto reply = http_fetch::get({r.controller_host, port},
                                 std::string{api_service::results_list_route}, timeout);
    if (!reply.ok()) {
      why += (why.empty() ? "" : "; ") + std::to_string(port) + ": "
             + (reply.error.empty() ? "HTTP " + std::to_string(reply.status) : reply.error);
      continue;
    }
    auto doc = json::parse(reply.body, nullptr, false);
    if (!doc.is_object() || !doc.value("ready", false)) {
      why += (why.empty() ? "" : "; ") + std::to_string(port) + ": results not ready";
      continue;
    }
    listing out;
    out.port = port;
    for (const auto& f : doc.value("files", json::array()))
      out.files.emplace_back(f.value("name", std::string{}), f.value("size", std::uint64_t{0}));
    return out;
  }
  return make_error(errc::results_fetch_failed,
                    "no results from controller " + r.controller_host + " (" + why + ")");
}

// Retention after a stored run; a run that cannot be removed is logged and
// left (it is retried after the next run).
// The TTL a job's spec sets (spec.resultsTtlDays), else `fallback`.
int ttl_in(const std::string& spec_json, int fallback) {
  auto spec = json::parse(spec_json, nullptr, false);
  if (spec.is_object() && spec.value("resultsTtlDays", 0) > 0)
    return spec.value("resultsTtlDays", 0);
  return fallback;
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void prune(const fs::path& job_dir, const harvest_request& r, const harvest_settings& s) {
  int ttl = ttl_in(r.spec_json, s.ttl_days);
  for (const auto& epoch : runs_to_prune(job_dir, s.retain_runs, ttl, unix_now(), r.epoch)) {
    std::error_code ec;
    fs::remove_all(job_dir / epoch, ec);
    if (ec)
      log::get("operator")->warn("{}/{}: retention could not remove run {}: {}", r.namespace_name,
                                 r.job_name, epoch, ec.message());
    else
      log::get("operator")->info("{}/{}: retention removed run {}", r.namespace_name, r.job_name,
                                 epoch);
  }
}

// The job's TTL: spec.resultsTtlDays of its newest stored run, else `fallback`.
int ttl_of(const fs::path& job_dir, int fallback) {
  auto runs = stored_runs(job_dir);
  if (runs.empty())
    return fallback;
  std::ifstream in{job_dir / runs.front() / "job_spec.json"};
  std::stringstream text;
  text << in.rdbuf();
  return ttl_in(text.str(), fallback);
}

caf::expected<harvest_result> harvest_once(const harvest_request& r,
                                           const harvest_settings& s) {
  auto listed = list_files(r, s.file_timeout);
  if (!listed)
    return listed.error();
  auto job_dir = s.results_dir / r.namespace_name / r.job_name;
  harvest_result out;
  out.path = (job_dir / r.epoch).string();
  std::error_code ec;
  fs::create_directories(out.path, ec);
  if (ec)
    return make_error(errc::results_store_failed, "cannot create " + out.path + ": " + ec.message());
  for (const auto& [name, size] : listed->files) {
    if (cancelled(r))
      return make_error(errc::cancelled, "the AIPerfJob was deleted during the harvest");
    if (!api_service::is_safe_result_name(name))
      return make_error(errc::results_fetch_failed,
                        "the controller listed " + name + ", which would leave the run directory");
    auto reply = http_fetch::get({r.controller_host, listed->port},
                                 api_service::result_file_route(name), s.file_timeout);
    if (!reply.ok())
      return make_error(errc::results_fetch_failed,
                        "GET " + name + " from " + r.controller_host + ": "
                            + (reply.error.empty() ? "HTTP " + std::to_string(reply.status)
                                                   : reply.error));
    if (reply.body.size() != size)
      return make_error(errc::results_fetch_failed,
                        name + ": " + std::to_string(reply.body.size()) + " bytes arrived, "
                            + std::to_string(size) + " listed");
    auto target = fs::path{out.path} / name;
    fs::create_directories(target.parent_path(), ec);
    if (auto ok = io::atomic_write_file(target, reply.body); !ok)
      return make_error(errc::results_store_failed, error_message(ok.error()));
    if (name == "profile_export_aiperf.json")
      out.profile_json = reply.body;
    out.files.push_back(name);
  }
  if (!r.spec_json.empty()) {
    if (auto ok = io::atomic_write_file(fs::path{out.path} / "job_spec.json", r.spec_json); !ok)
      return make_error(errc::results_store_failed, error_message(ok.error()));
    out.files.push_back("job_spec.json");
  }
  // The run is whole: its ready marker, last (the results API serves a
  // run's files only once it is there).
  auto marker = json{{"ready", true}, {"epoch", r.epoch}, {"files", out.files.size()}}.dump();
  if (auto ok = io::atomic_write_file(fs::path{out.path} / std::string{api_service::ready_marker_name},
                                      marker);
      !ok)
    return make_error(errc::results_store_failed, error_message(ok.error()));
  if (cancelled(r))
    return make_error(errc::cancelled, "the AIPerfJob was deleted during the harvest");
  if (auto ok = publish_latest(job_dir, r.epoch); !ok)
    return make_error(errc::results_store_failed, error_message(ok.error()));
  prune(job_dir, r, s);
  // The controller may exit now; it also does when its linger ends.
  (void)http_fetch::post({r.controller_host, r.api_port}, "/api/shutdown", {},
                         std::chrono::seconds{10});
  return out;
}

harvester_actor::behavior_type http_harvester(harvester_actor::pointer, harvest_settings s) {
  return {
      [s](sweep_atom) {
        for (const auto& run : sweep_results(s.results_dir, s.ttl_days, unix_now()))
          log::get("operator")->info("results TTL: removed run {}", run);
      },
      [s](harvest_atom, harvest_request& r) -> caf::result<harvest_result> {
        auto delay = s.retry_delay;
        caf::error last;
        for (int attempt = 0; attempt <= s.max_retries; ++attempt) {
          auto got = harvest_once(r, s);
          if (got)
            return std::move(*got);
          last = std::move(got.error());
          if (is_error(last, errc::cancelled) || is_error(last, errc::results_store_failed))
            break;
          log::get("operator")->info("{}/{}: harvest attempt {} failed: {}", r.namespace_name,
                                     r.job_name, attempt + 1, error_message(last));
          if (attempt < s.max_retries) {
            // Blocking is this detached actor's job; nothing else waits on it.
            std::this_thread::sleep_for(delay);
            delay = std::min<std::chrono::milliseconds>(delay * 2, std::chrono::seconds{30});
          }
        }
        return last;
      },
  };
}

} // namespace

std::vector<std::string> sweep_results(const fs::path& results_dir, int ttl_days,
                                       std::int64_t now_unix) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (const auto& ns : fs::directory_iterator{results_dir, ec}) {
    if (!ns.is_directory(ec) || ns.is_symlink(ec))
      continue;
    for (const auto& job : fs::directory_iterator{ns.path(), ec}) {
      if (!job.is_directory(ec) || job.is_symlink(ec))
        continue;
      int ttl = ttl_of(job.path(), ttl_days);
      for (const auto& epoch : runs_to_prune(job.path(), 0, ttl, now_unix, "")) {
        std::error_code rm;
        fs::remove_all(job.path() / epoch, rm);
        if (!rm)
          removed.push_back(ns.path().filename().string() + "/" + job.path().filename().string()
                            + "/" + epoch);
      }
    }
  }
  return removed;
}

harvester_actor spawn_http_harvester(caf::actor_system& sys, harvest_settings settings) {
  return sys.spawn<caf::detached>(http_harvester, std::move(settings));
}

json summary_of(const json& profile_export) {
  json out = json::object();
  if (!profile_export.is_object())
    return out;
  for (const auto& [tag, value] : profile_export.items()) {
    if (!value.is_object() || !curated(tag))
      continue;
    json entry = json::object();
    for (const auto& [k, v] : value.items())
      entry[k] = v.is_number_float() ? json(round_to(v.get<double>(), 100.0)) : v;
    out[tag] = std::move(entry);
  }
  auto avg = [&](const char* tag) {
    auto it = profile_export.find(tag);
    return it != profile_export.end() && it->is_object() ? it->value("avg", 0.0) : 0.0;
  };
  double ok = avg("request_count");
  double errors = avg("error_request_count");
  double total = ok + errors;
  out["total_requests"] = static_cast<std::uint64_t>(std::llround(total));
  out["error_rate"] = total > 0 ? round_to(errors / total, 1e9) : 0.0;
  return out;
}

caf::expected<bool> publish_latest(const fs::path& job_dir, const std::string& epoch) {
  auto path = job_dir / "latest.txt";
  std::ifstream in{path};
  std::string current;
  std::getline(in, current);
  // Only the whole seconds order runs: a job deleted and submitted again
  // within the same second stores a newer run whose six-digit suffix (from
  // its UID) may be smaller, and it becomes the latest all the same.
  if (is_epoch_key(current) && epoch_seconds(current) > epoch_seconds(epoch))
    return false;
  if (auto ok = io::atomic_write_file(path, epoch + "\n"); !ok)
    return ok.error();
  return true;
}

} // namespace aiperf::op
