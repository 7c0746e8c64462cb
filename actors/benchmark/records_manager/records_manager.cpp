#include "actors/benchmark/records_manager/records_manager.hpp"
#include "proto/benchmark_errors.hpp"

#include "actors/benchmark/exporters/exporters.hpp"
#include "actors/benchmark/metrics/metrics_aggregator.hpp"
#include "runtime/io/durable_file.hpp"
#include "runtime/log/log.hpp"

#include <caf/all.hpp>
#include <rapidjson/document.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

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
  std::optional<io::durable_writer> jsonl;
  std::string line;
  records_progress progress;
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
      return make_error(io::errc::system, "cannot read raw part " + part,
                        errno);
    while (in) {
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      out.append(std::string_view{chunk.data(),
                                  static_cast<std::size_t>(in.gcount())});
    }
  }
  if (auto done = out.commit(); !done)
    return done;
  for (auto& part : info.raw_parts)
    if (!part.empty())
      fs::remove(part);
  return caf::unit;
}

void finish(actor_ptr self) {
  auto& st = self->state;
  if (!st.processing)
    return;
  st.processing = false;
  auto logger = log::get("records_manager");
  export_outcome out;
  auto summary = st.aggregator->finalize();
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
  auto fail = [&](const std::string& what) {
    logger->error("{}", what);
    st.promise.deliver(make_error(benchmark::errc::export_failed, what));
  };
  exporters::run_info run{st.cfg.benchmark_id, st.cfg.input_config_json,
                          st.info.was_cancelled};
  auto json = exporters::render_profile_json(summary, run);
  if (!json)
    return fail("profile_export_aiperf.json: " + error_message(json.error()));
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
  auto json_path = dir / "profile_export_aiperf.json";
  if (auto done = io::atomic_write_file(json_path, *json); !done)
    return fail(error_message(done.error()));
  out.files.push_back(json_path.string());
  auto csv_path = dir / "profile_export_aiperf.csv";
  if (auto done = io::atomic_write_file(
        csv_path, exporters::render_profile_csv(summary));
      !done)
    return fail(error_message(done.error()));
  out.files.push_back(csv_path.string());
  if (st.jsonl) {
    auto path = st.jsonl->target().string();
    if (auto done = st.jsonl->commit(); !done)
      return fail(error_message(done.error()));
    st.jsonl.reset();
    out.files.push_back(path);
  }
  if (st.cfg.level == export_level::raw) {
    auto raw_path = dir / "profile_export_raw.jsonl";
    if (auto done = merge_raw_parts(st.info, raw_path); !done)
      return fail(error_message(done.error()));
    out.files.push_back(raw_path.string());
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

records_manager_impl::behavior_type records_impl(actor_ptr self,
                                                 records_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.aggregator.emplace(st.cfg.options);
  if (st.cfg.level != export_level::summary)
    st.jsonl.emplace(fs::path{st.cfg.artifact_dir} / "profile_export.jsonl");
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
        st.aggregator->add(rec);
        if (rec.phase == benchmark_phase::profiling) {
          ++(rec.has_error ? st.progress.profiling_errors
                           : st.progress.profiling_valid);
          st.stream_ignored += rec.stream_ignored;
        }
        if (st.jsonl) {
          st.line.clear();
          exporters::append_jsonl_line(st.line, rec);
          st.jsonl->append(st.line);
        }
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

records_manager_actor spawn_records_manager(caf::actor_system& sys,
                                            records_config cfg) {
  return caf::actor_cast<records_manager_actor>(
    sys.spawn(records_impl, std::move(cfg)));
}

} // namespace aiperf::records_manager
