#include "actors/benchmark/records_manager/records_manager.hpp"
#include "proto/benchmark_errors.hpp"

#include "actors/benchmark/exporters/export_names.hpp"
#include "actors/benchmark/exporters/exporters.hpp"
#include "actors/benchmark/metrics/metrics_aggregator.hpp"
#include "actors/benchmark/metrics/timeslices.hpp"
#include "runtime/io/durable_file.hpp"
#include "runtime/log/log.hpp"

#include <caf/all.hpp>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sys/stat.h>

namespace aiperf::records_manager {

using namespace proto;
namespace fs = std::filesystem;

namespace {

using timeout_atom = caf::atom_constant<caf::atom("timeout")>;

using records_manager_impl
  = records_manager_actor::extend<caf::reacts_to<timeout_atom>>;

struct records_state {
  static inline const char* name = "records_manager";
  records_config cfg;
  std::optional<metrics::metrics_aggregator> aggregator;
  /// Set with a slice duration: keeps the profiling records for the
  /// time-sliced exports.
  std::optional<metrics::timeslicer> slicer;
  std::optional<io::durable_writer> jsonl;
  /// The first write error of the JSONL stream: streaming stopped there and
  /// the export reports it (the other exports are still written).
  caf::error jsonl_error;
  /// Hears the JSONL stream's failure (may be null).
  caf::actor listener;
  std::string line;
  records_progress progress;
  /// The failed share crossed --failed-request-threshold and the listener
  /// was told (once).
  bool failed_threshold_sent = false;
  /// Profiling records whose streaming request got one JSON body.
  std::uint64_t stream_ignored = 0;
  // Set by `process`.
  caf::typed_response_promise<export_outcome> promise;
  std::uint64_t expected = 0;
  bool processing = false;
  run_info info;
  /// Members added to profile_export_aiperf.json, by name.
  std::map<std::string, std::string> sections;
};

using actor_ptr = records_manager_impl::stateful_pointer<records_state>;

template <class T>
void prefetch(const std::vector<T>& v) {
  const auto* p = reinterpret_cast<const char*>(v.data());
  for (std::size_t off = 0; off < v.size() * sizeof(T); off += 64)
    __builtin_prefetch(p + off);
}

std::vector<std::string> phase_warnings(const run_info& info) {
  std::vector<std::string> out;
  for (auto& p : info.phases) {
    if (p.phase != phase::profiling)
      continue;
    if (p.skipped_sends > 0)
      out.push_back(std::to_string(p.skipped_sends)
                    + " scheduled sends were skipped: the schedule fell more "
                      "than the catch-up window behind (or no session slot "
                      "was free); the achieved rate is below the target");
    if (p.timed_out)
      out.push_back("requests still running after the grace period were "
                    "cancelled (code 499)");
    if (p.lost > 0)
      out.push_back(std::to_string(p.lost)
                    + " requests were lost with a worker (error records "
                      "WorkerLost)");
  }
  return out;
}

/// Concatenates the processors' raw parts into profile_export_raw.jsonl.
caf::expected<void> merge_raw_parts(const run_info& info,
                                    const fs::path& target) {
  io::durable_writer out{target};
  std::string chunk(1 << 20, '\0');
  for (auto& part : info.raw_parts) {
    if (part.empty())
      continue;
    std::ifstream in{part, std::ios::binary};
    if (!in)
      return io::errno_error(errno != 0 ? errno : ENOENT, "merge", target,
                             "open raw part", part);
    while (in) {
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      if (!out.append(std::string_view{chunk.data(),
                                       static_cast<std::size_t>(in.gcount())}))
        return out.error(); // stop at the first ENOSPC/EIO
    }
    if (in.bad())
      return io::errno_error(errno != 0 ? errno : EIO, "merge", target,
                             "read raw part", part);
  }
  if (auto done = out.commit(); !done)
    return done;
  for (auto& part : info.raw_parts)
    if (!part.empty())
      fs::remove(part);
  return caf::unit;
}

/// run_manifest.json: the run id and the files of this run (names in the
/// run folder), and the ones that could not be written.
std::string render_manifest(const std::string& benchmark_id,
                            const std::vector<std::string>& files,
                            const std::vector<std::string>& failed) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  auto names = [&](const char* key, const std::vector<std::string>& paths) {
    w.Key(key);
    w.StartArray();
    for (auto& p : paths) {
      auto name = fs::path{p}.filename().string();
      w.String(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
    }
    w.EndArray();
  };
  w.StartObject();
  w.Key("benchmark_id");
  w.String(benchmark_id.c_str(),
           static_cast<rapidjson::SizeType>(benchmark_id.size()));
  names("files", files);
  names("failed_files", failed);
  w.EndObject();
  std::string out{buf.GetString(), buf.GetSize()};
  out += '\n';
  return out;
}

/// The JSONL stream failed (ENOSPC, EIO, ...): stop streaming, keep the
/// error for the export.
void stop_streaming(actor_ptr self) {
  auto& st = self->state;
  st.jsonl_error = st.jsonl->error();
  st.jsonl.reset();
  if (st.listener)
    caf::anon_send(st.listener, write_failed_atom::value, st.jsonl_error);
  log::get("records_manager")
    ->error("{}; profile_export.jsonl is not written, the other exports "
            "still are",
            error_message(st.jsonl_error));
}

/// The client's CPU from the self-check's object (run_info carries it as
/// the JSON it exports); nullopt when the run was not measured.
std::optional<metrics::client_cpu>
client_cpu_of(const std::string& self_check_json) {
  if (self_check_json.empty())
    return std::nullopt;
  rapidjson::Document doc;
  doc.Parse(self_check_json.data(), self_check_json.size());
  if (doc.HasParseError() || !doc.IsObject())
    return std::nullopt;
  auto number = [&](const char* key) -> std::optional<double> {
    auto it = doc.FindMember(key);
    if (it == doc.MemberEnd() || !it->value.IsNumber())
      return std::nullopt;
    return it->value.GetDouble();
  };
  auto cores = number("cpu_cores_used");
  auto threads = number("io_threads");
  auto available = number("cores_available");
  if (!cores || !threads || !available)
    return std::nullopt;
  return metrics::client_cpu{
      *cores, static_cast<std::uint32_t>(std::max(1.0, *threads)), *available};
}

void finish(actor_ptr self) {
  auto& st = self->state;
  if (!st.processing)
    return;
  st.processing = false;
  auto logger = log::get("records_manager");
  export_outcome out;
  auto summary
      = st.aggregator->finalize(client_cpu_of(st.info.client_self_check_json));
  if (st.progress.received < st.expected)
    summary.warnings.push_back(
      std::to_string(st.expected - st.progress.received)
      + " records never arrived; counts are incomplete");
  for (auto& w : phase_warnings(st.info))
    summary.warnings.push_back(w);
  for (auto& w : st.info.client_warnings)
    summary.warnings.push_back(w);
  if (st.stream_ignored > 0)
    summary.warnings.push_back(
      std::to_string(st.stream_ignored)
      + " streaming requests were answered with one JSON body, not an SSE "
        "stream: the server ignored \"stream\": true; their TTFT is the "
        "request latency and their ITL 0 (jsonl metadata stream_ignored)");
  const auto& opts = st.cfg.options;
  if (opts.produces_tokens && !opts.use_server_token_count
      && !st.cfg.server_uses_builtin_tokenizer)
    summary.warnings.push_back(
      "ISL/OSL were counted with the built-in tokenizer, not the model's: "
      "they are approximate; pass --use-server-token-count to use the "
      "server's usage counts");
  fs::path dir{st.cfg.artifact_dir};
  const auto names = exporters::make_export_names(st.cfg.export_prefix);
  // Each export on its own, the small and important ones first: one that
  // cannot be written (a full disk, a directory in the way) takes no other
  // with it, and every failure is reported at the end.
  std::vector<std::string> reasons;
  auto written = [&](const fs::path& path, caf::expected<void> done) {
    if (done) {
      out.files.push_back(path.string());
      return;
    }
    logger->error("{}", error_message(done.error()));
    out.failed_files.push_back(path.string());
    reasons.push_back(error_message(done.error()));
  };
  exporters::run_info run{st.cfg.benchmark_id, st.cfg.input_config_json,
                          st.info.was_cancelled};
  auto json_path = dir / names.summary_json;
  if (auto json = exporters::render_profile_json(summary, run); !json) {
    written(json_path,
            make_error(benchmark::errc::export_failed,
                       "cannot render " + json_path.string() + ": "
                         + error_message(json.error())));
  } else {
    if (!st.info.client_self_check_json.empty()) {
      // Our addition to AIPerf's layout: the last member of the object.
      auto close = json->find_last_of('}');
      json->insert(close, ",\"client_self_check\":"
                            + st.info.client_self_check_json);
    }
    for (const auto& [name, member] : st.sections) {
      auto close = json->find_last_of('}');
      json->insert(close, ",\"" + name + "\":" + member);
    }
    written(json_path, io::atomic_write_file(json_path, *json));
  }
  auto csv_path = dir / names.summary_csv;
  written(csv_path, io::atomic_write_file(
                      csv_path, exporters::render_profile_csv(summary)));
  if (st.slicer) {
    // AIPerf writes no time-sliced export for a run without records.
    auto slices = st.slicer->finalize();
    st.slicer.reset();
    if (!slices.empty()) {
      auto ts_json_path = dir / names.timeslices_json;
      if (auto ts_json = exporters::render_timeslices_json(slices, run);
          !ts_json)
        written(ts_json_path,
                make_error(benchmark::errc::export_failed,
                           "cannot render " + ts_json_path.string() + ": "
                             + error_message(ts_json.error())));
      else
        written(ts_json_path, io::atomic_write_file(ts_json_path, *ts_json));
      auto ts_csv_path = dir / names.timeslices_csv;
      written(ts_csv_path,
              io::atomic_write_file(ts_csv_path,
                                    exporters::render_timeslices_csv(slices)));
    }
  }
  if (st.cfg.level != export_level::summary) {
    auto path = dir / names.records_jsonl;
    if (st.jsonl_error)
      written(path, st.jsonl_error);
    else if (st.jsonl)
      written(path, st.jsonl->commit());
    st.jsonl.reset();
  }
  if (st.cfg.level == export_level::raw) {
    auto raw_path = dir / names.raw_jsonl;
    written(raw_path, merge_raw_parts(st.info, raw_path));
  }
  // Last: the marker of a complete run, naming its files.
  std::vector<std::string> run_files;
  if (auto inputs = dir / "inputs.json"; fs::is_regular_file(inputs))
    run_files.push_back(inputs.string()); // earlier runs' were set aside
  run_files.insert(run_files.end(), out.files.begin(), out.files.end());
  auto manifest_path = dir / "run_manifest.json";
  written(manifest_path,
          io::atomic_write_file(manifest_path,
                                render_manifest(st.cfg.benchmark_id, run_files,
                                                out.failed_files)));
  if (!reasons.empty()) {
    std::string msg = std::to_string(reasons.size()) + " export"
                      + (reasons.size() == 1 ? "" : "s")
                      + " could not be written (the others were):";
    for (auto& r : reasons)
      msg += "\n  " + r;
    out.error = make_error(benchmark::errc::export_failed, std::move(msg));
  }
  out.console = exporters::render_console_table(summary);
  out.request_count = st.aggregator->request_count();
  out.error_request_count = st.aggregator->error_request_count();
  out.warnings = summary.warnings;
  for (std::size_t i = 0; i < summary.errors.size() && i < 3; ++i) {
    const auto& e = summary.errors[i];
    out.top_errors.push_back(std::to_string(e.count) + " x "
                             + std::to_string(e.error.code) + " "
                             + e.error.type + ": " + e.error.message);
  }
  st.promise.deliver(std::move(out));
}

} // namespace

bool crosses_failed_threshold(std::uint64_t failed, std::uint64_t records,
                              double threshold, std::uint64_t floor) noexcept {
  if (threshold < 0 || records == 0 || records < floor)
    return false;
  return static_cast<double>(failed) / static_cast<double>(records) > threshold;
}

namespace {

records_manager_impl::behavior_type records_impl(actor_ptr self,
                                                 records_config cfg,
                                                 caf::actor listener) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.listener = std::move(listener);
  st.aggregator.emplace(st.cfg.options);
  if (st.cfg.slice_ns > 0)
    st.slicer.emplace(st.cfg.options, st.cfg.slice_ns);
  if (st.cfg.level != export_level::summary)
    st.jsonl.emplace(
      fs::path{st.cfg.artifact_dir}
      / exporters::make_export_names(st.cfg.export_prefix).records_jsonl);
  return {
    [=](metric_record_batch& batch) {
      auto& st = self->state;
      auto& recs = batch.records;
      for (std::size_t i = 0; i < recs.size(); ++i) {
        auto& rec = recs[i];
        // The gaps were written on the processor's core (or long ago):
        // start loading the next record's while this one is added.
        if (i + 1 < recs.size())
          prefetch(recs[i + 1].inter_chunk_latency);
        ++st.progress.received;
        if (rec.has_error && rec.error.type == "ConnectionError") {
          ++st.progress.connection_errors;
          ++st.progress.connection_errors_in_a_row;
        } else if (!rec.was_cancelled) {
          st.progress.connection_errors_in_a_row = 0;
        }
        st.aggregator->add(rec);
        if (rec.phase == benchmark_phase::profiling) {
          ++(rec.has_error ? st.progress.profiling_errors
                           : st.progress.profiling_valid);
          st.stream_ignored += rec.stream_ignored;
          // Judged at every record, as AIPerf does, so a share that crosses
          // the line for a moment is seen.
          auto records
              = st.progress.profiling_errors + st.progress.profiling_valid;
          if (!st.failed_threshold_sent && st.listener
              && crosses_failed_threshold(st.progress.profiling_errors,
                                          records,
                                          st.cfg.failed_request_threshold,
                                          st.cfg.failed_request_floor)) {
            st.failed_threshold_sent = true;
            caf::anon_send(st.listener, failed_threshold_atom::value,
                           st.progress.profiling_errors, records);
          }
        }
        if (st.jsonl) {
          st.line.clear();
          exporters::append_jsonl_line(st.line, rec);
          if (!st.jsonl->append(st.line))
            stop_streaming(self);
        }
        if (st.slicer)
          st.slicer->add(std::move(rec)); // last use of the record
      }
      if (st.processing && st.progress.received >= st.expected)
        finish(self);
    },
    [=](process_atom, std::uint64_t expected,
        run_info& info) -> caf::result<export_outcome> {
      auto& st = self->state;
      st.promise = self->make_response_promise<export_outcome>();
      st.expected = expected;
      st.info = std::move(info);
      st.processing = true;
      if (st.progress.received >= expected)
        finish(self);
      else
        self->delayed_send(self,
                           std::chrono::milliseconds{st.cfg.drain_timeout_ms},
                           timeout_atom::value);
      return st.promise;
    },
    [=](section_atom, std::string& name, std::string& member) {
      rapidjson::Document doc;
      doc.Parse(member.c_str(), member.size());
      bool plain_name = !name.empty()
                        && name.find_first_of("\"\\") == std::string::npos;
      if (doc.HasParseError() || !plain_name) {
        log::get("records_manager")
          ->error("export section '{}' dropped: {}", name,
                  plain_name ? "its JSON does not parse"
                             : "the name must be non-empty, without quotes "
                               "or backslashes");
        return;
      }
      self->state.sections[std::move(name)] = std::move(member);
    },
    [=](progress_atom) { return self->state.progress; },
    [=](timeout_atom) { finish(self); },
  };
}

} // namespace

std::string utc_stamp(std::chrono::system_clock::time_point t) {
  auto secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

bool is_run_file(const std::string& name) {
  static constexpr const char* exact[]
    = {"profile_export_aiperf.json", "profile_export_aiperf.csv",
       "profile_export.jsonl",       "profile_export_raw.jsonl",
       "inputs.json",                "run_manifest.json",
       "profile_export_aiperf_timeslices.json",
       "profile_export_aiperf_timeslices.csv"};
  for (const char* e : exact)
    if (name == e)
      return true;
  return name.starts_with("profile_export_raw.part")
         || name.find(".tmp.") != std::string::npos;
}

caf::expected<set_aside_files>
set_aside_previous_run(const fs::path& dir, const std::string& stamp) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it{dir, ec}, end; !ec && it != end;
       it.increment(ec)) {
    auto name = it->path().filename().string();
    if (is_run_file(name) && it->symlink_status(ec).type() == fs::file_type::regular)
      names.push_back(name);
  }
  if (ec && ec != std::errc::no_such_file_or_directory)
    return io::errno_error(ec.value(), "set aside the earlier run in", dir,
                           "list the folder");
  if (names.empty())
    return set_aside_files{};
  std::sort(names.begin(), names.end());
  // A second run in the same second gets previous-<stamp>-1, -2, ...
  auto aside = dir / ("previous-" + stamp);
  for (int n = 1; fs::exists(aside, ec); ++n)
    aside = dir / ("previous-" + stamp + "-" + std::to_string(n));
  if (::mkdir(aside.c_str(), 0777) != 0)
    return io::errno_error(errno, "set aside the earlier run in", dir,
                           "create folder", aside);
  for (auto& name : names)
    if (::rename((dir / name).c_str(), (aside / name).c_str()) != 0)
      return io::errno_error(errno, "set aside the earlier run in", dir,
                             "move " + name + " into", aside);
  return set_aside_files{std::move(aside), std::move(names)};
}

records_manager_actor spawn_records_manager(caf::actor_system& sys,
                                            records_config cfg,
                                            caf::actor listener) {
  return caf::actor_cast<records_manager_actor>(
    sys.spawn(records_impl, std::move(cfg), std::move(listener)));
}

} // namespace aiperf::records_manager
