#include "actors/benchmark/api_service/routes.hpp"

#include "actors/benchmark/api_service/results_files.hpp"

#include "runtime/http/url.hpp"
#include "runtime/io/durable_file.hpp"
#include "runtime/log/log.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace aiperf::api_service {

namespace fs = std::filesystem;
namespace http = boost::beast::http;
using boost::asio::awaitable;
using http_server::response_writer;

namespace {

constexpr std::string_view json_type = "application/json";
constexpr std::string_view dataset_prefix = "/api/dataset/";
constexpr std::string_view artifacts_prefix = "/api/artifacts/";
constexpr std::string_view raw_prefix = "/api/raw/";
// Big enough that a multi-GB dataset is few syscalls, small enough per
// connection.
constexpr std::size_t file_block = std::size_t{1} << 20;

double finite_or_zero(double x) {
  return std::isfinite(x) ? x : 0.0;
}

std::string error_json(std::string_view message) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w{sb};
  w.StartObject();
  w.Key("error");
  w.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  w.EndObject();
  return {sb.GetString(), sb.GetSize()};
}

// Takes strings by value: the awaitable is lazy, so a caller may create it
// from temporaries and co_await it later.
awaitable<void> send_error(response_writer& w, unsigned status,
                           std::string message,
                           std::string extra_headers = {}) {
  co_await w.send(status, json_type, error_json(message), extra_headers);
}

// Escapes a Prometheus label value (backslash, quote, newline).
std::string label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"')
      out.push_back('\\');
    if (c == '\n') {
      out.append("\\n");
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::string number(double x) {
  if (std::isnan(x))
    return "NaN";
  if (std::isinf(x))
    return x > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), x);
  return ec == std::errc{} ? std::string{buf, end} : std::string{"NaN"};
}

bool inside(const fs::path& root, const fs::path& p) {
  auto r = root.begin();
  auto q = p.begin();
  for (; r != root.end(); ++r, ++q)
    if (q == p.end() || *r != *q)
      return false;
  return true;
}

struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0)
      ::close(fd);
  }
};

awaitable<void> list_artifacts(response_writer& w, const fs::path& root) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> out{sb};
  out.StartObject();
  out.Key("files");
  out.StartArray();
  std::error_code ec;
  std::vector<std::pair<std::string, std::uintmax_t>> files;
  for (fs::recursive_directory_iterator it{root, ec}, end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_regular_file(ec))
      files.emplace_back(fs::relative(it->path(), root, ec).generic_string(),
                         it->file_size(ec));
  }
  std::sort(files.begin(), files.end());
  for (const auto& [name, size] : files) {
    out.StartObject();
    out.Key("path");
    out.String(name.c_str(), static_cast<rapidjson::SizeType>(name.size()));
    out.Key("bytes");
    out.Uint64(size);
    out.EndObject();
  }
  out.EndArray();
  out.EndObject();
  co_await w.send(200, json_type, {sb.GetString(), sb.GetSize()});
}

awaitable<void> stage_raw(response_writer& w, http_server::request& req,
                          std::string_view pod, status_board& board,
                          const api_config& cfg) {
  const auto& body = req.body();
  // A part is whole lines; a missing final newline means a cut upload.
  if (!body.empty() && body.back() != '\n') {
    co_await send_error(w, 400,
                        "truncated upload: a RAW JSONL part must end with a "
                        "newline; re-send the whole part");
    co_return;
  }
  auto target = cfg.raw_dir / raw_part_file_name(pod);
  io::durable_writer out{target};
  out.append(body);
  if (auto done = out.commit(); !done) {
    auto why = error_message(done.error());
    log::get("api_service")->error("staging RAW part of pod {}: {}", pod, why);
    co_await send_error(w, 500, "cannot stage RAW part: " + why);
    co_return;
  }
  raw_part part{std::string{pod}, body.size(), target.string()};
  board.stage(part);
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> j{sb};
  j.StartObject();
  j.Key("pod");
  j.String(part.pod.c_str(), static_cast<rapidjson::SizeType>(part.pod.size()));
  j.Key("bytes");
  j.Uint64(part.bytes);
  j.Key("path");
  j.String(part.path.c_str(),
           static_cast<rapidjson::SizeType>(part.path.size()));
  j.EndObject();
  co_await w.send(200, json_type, {sb.GetString(), sb.GetSize()});
}

} // namespace

std::string_view content_type_of(const fs::path& p) {
  auto ext = p.extension().string();
  if (ext == ".json")
    return "application/json";
  if (ext == ".jsonl")
    return "application/x-ndjson";
  if (ext == ".parquet")
    return "application/vnd.apache.parquet";
  if (ext == ".csv")
    return "text/csv";
  if (ext == ".txt" || ext == ".log")
    return "text/plain";
  return "application/octet-stream";
}

// Streams a file as a chunked body, one block per write; the client learns
// the size from X-File-Size up front to verify the download.
awaitable<void> send_file(response_writer& w, fs::path path,
                          std::string_view content_type, std::string extra_headers) {
  fd_guard f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  struct stat st {};
  if (f.fd < 0 || ::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    co_await send_error(w, 404,
                        "not found: " + path.filename().string()
                            + " is not a readable file");
    co_return;
  }
  w.begin_chunked(200, content_type,
                  extra_headers + "X-File-Size: " + std::to_string(st.st_size) + "\r\n");
  std::string block(file_block, '\0');
  for (;;) {
    auto n = ::read(f.fd, block.data(), block.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      // Headers are out: returning without end_chunked() leaves the body
      // unterminated, which the client sees as a failed download.
      log::get("api_service")
          ->error("read {} failed: {}", path.string(),
                  std::generic_category().message(errno));
      co_return;
    }
    if (n == 0)
      break;
    w.append_chunk({block.data(), static_cast<std::size_t>(n)});
    co_await w.flush();
    if (w.failed())
      co_return;
  }
  co_await w.end_chunked();
}

awaitable<void> send_json_error(response_writer& w, unsigned status, std::string message) {
  co_await w.send(status, json_type, error_json(message));
}

std::string render_metrics_json(const progress& p, bool ready, const fs::path& artifact_dir) {
  std::string summary;
  if (!artifact_dir.empty()) {
    std::ifstream in{artifact_dir / "profile_export_aiperf.json", std::ios::binary};
    std::ostringstream ss;
    if (in)
      ss << in.rdbuf();
    summary = ss.str();
  }
  // The export is written atomically, so it is whole or absent; an
  // unparsable one is still not passed on as JSON.
  rapidjson::Document check;
  if (summary.empty() || check.Parse(summary.c_str()).HasParseError())
    summary = "null";
  return R"({"progress":)" + render_progress_json(p, ready) + R"(,"summary":)" + summary + "}";
}

std::string render_progress_json(const progress& p, bool ready) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w{sb};
  auto str = [&](std::string_view key, const std::string& v) {
    w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  };
  auto u64 = [&](std::string_view key, std::uint64_t v) {
    w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    w.Uint64(v);
  };
  w.StartObject();
  str("phase", p.phase);
  str("state", p.state);
  u64("requests_sent", p.sent);
  u64("requests_completed", p.completed);
  u64("requests_in_flight", p.in_flight);
  u64("request_errors", p.errors);
  u64("requests_total", p.total);
  w.Key("requests_per_second");
  w.Double(finite_or_zero(p.requests_per_second));
  w.Key("ready");
  w.Bool(ready);
  w.EndObject();
  return {sb.GetString(), sb.GetSize()};
}

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

void write_string(json_writer& w, std::string_view v) {
  w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
}

void write_pod_list(json_writer& w, const std::vector<pod_status>& pods) {
  w.StartArray();
  for (const auto& pod : pods) {
    w.StartObject();
    w.Key("name");
    write_string(w, pod.name);
    w.Key("registered");
    w.Bool(pod.registered);
    w.Key("lost");
    w.Bool(pod.lost);
    if (pod.lost) {
      w.Key("lost_reason");
      write_string(w, pod.lost_reason);
    }
    w.Key("clock");
    if (!pod.clock_reported) {
      w.Null();
    } else {
      w.StartObject();
      w.Key("offset_ns");
      w.Int64(pod.clock_offset_ns);
      w.Key("one_way_samples");
      w.Uint(pod.clock_one_way_samples);
      w.Key("min_rtt_ns");
      if (pod.clock_min_rtt_ns < 0)
        w.Null();
      else
        w.Int64(pod.clock_min_rtt_ns);
      w.Key("local");
      w.Bool(pod.clock_local);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
}

} // namespace

std::string render_pod_list_json(const std::vector<pod_status>& pods) {
  rapidjson::StringBuffer sb;
  json_writer w{sb};
  write_pod_list(w, pods);
  return {sb.GetString(), sb.GetSize()};
}

std::string render_pods_json(const pods_status& p) {
  rapidjson::StringBuffer sb;
  json_writer w{sb};
  std::uint64_t registered = 0;
  std::uint64_t lost = 0;
  for (const auto& pod : p.pods) {
    registered += pod.registered ? 1 : 0;
    lost += pod.lost ? 1 : 0;
  }
  w.StartObject();
  w.Key("registration");
  write_string(w, p.registration);
  w.Key("pods_expected");
  w.Uint(p.pods_expected);
  w.Key("pods_registered");
  w.Uint64(registered);
  w.Key("pods_lost");
  w.Uint64(lost);
  w.Key("missing");
  w.StartArray();
  for (const auto& id : p.missing)
    write_string(w, id);
  w.EndArray();
  w.Key("error");
  write_string(w, p.error);
  w.Key("pods");
  write_pod_list(w, p.pods);
  w.EndObject();
  return {sb.GetString(), sb.GetSize()};
}

std::string render_prometheus(const progress& p, bool ready,
                              std::size_t raw_parts_staged) {
  std::string out;
  out.reserve(1536);
  const auto phase = "{phase=\"" + label_value(p.phase) + "\"}";
  auto metric = [&](std::string_view name, std::string_view type,
                    std::string_view help, std::string_view labels,
                    const std::string& value) {
    out.append("# HELP ").append(name).append(" ").append(help).append("\n");
    out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
    out.append(name).append(labels).append(" ").append(value).append("\n");
  };
  metric("aiperf_requests_sent_total", "counter",
         "Requests sent in the current phase.", phase, std::to_string(p.sent));
  metric("aiperf_requests_completed_total", "counter",
         "Requests completed in the current phase.", phase,
         std::to_string(p.completed));
  metric("aiperf_request_errors_total", "counter",
         "Requests that ended in an error in the current phase.", phase,
         std::to_string(p.errors));
  metric("aiperf_requests_in_flight", "gauge",
         "Requests sent and not yet completed.", phase,
         std::to_string(p.in_flight));
  metric("aiperf_requests_planned", "gauge",
         "Requests planned in the current phase (0 = duration-bound).", phase,
         std::to_string(p.total));
  metric("aiperf_requests_per_second", "gauge",
         "Completed requests per second over the current phase.", phase,
         number(p.requests_per_second));
  metric("aiperf_run_state", "gauge", "The run's state (always 1).",
         "{state=\"" + label_value(p.state) + "\"}", "1");
  metric("aiperf_ready", "gauge", "1 once the controller is ready.", "",
         ready ? "1" : "0");
  metric("aiperf_raw_parts_staged", "gauge",
         "RAW export parts uploaded by pods.", "",
         std::to_string(raw_parts_staged));
  return out;
}

std::optional<fs::path> resolve_under(const fs::path& root,
                                      std::string_view relative) {
  auto decoded = aiperf::http::percent_decode(relative);
  if (!decoded || decoded->empty())
    return std::nullopt;
  fs::path rel;
  std::string_view rest = *decoded;
  while (true) {
    auto slash = rest.find('/');
    auto seg = rest.substr(0, slash);
    if (seg.empty() || seg == "." || seg == ".."
        || seg.find('\\') != std::string_view::npos
        || seg.find('\0') != std::string_view::npos)
      return std::nullopt;
    rel /= std::string{seg};
    if (slash == std::string_view::npos)
      break;
    rest.remove_prefix(slash + 1);
  }
  // Segments are clean; canonical() still catches symlinks leading out.
  std::error_code ec;
  auto canon_root = fs::canonical(root, ec);
  if (ec)
    return std::nullopt;
  auto canon = fs::canonical(canon_root / rel, ec);
  if (ec || !inside(canon_root, canon) || !fs::is_regular_file(canon, ec))
    return std::nullopt;
  return canon;
}

bool valid_pod_name(std::string_view pod) noexcept {
  if (pod.empty() || pod.size() > 63)
    return false;
  return std::all_of(pod.begin(), pod.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
           || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

std::string raw_part_file_name(std::string_view pod) {
  return "profile_export_raw.pod-" + std::string{pod} + ".jsonl";
}

namespace {

// The shared pointers are taken by value so the coroutine frame owns them.
awaitable<void> route(std::shared_ptr<status_board> board,
                      std::shared_ptr<const api_config> cfg,
                      http_server::request& req, response_writer& w) {
  std::string_view target{req.target().data(), req.target().size()};
  if (auto q = target.find('?'); q != std::string_view::npos)
    target = target.substr(0, q);
  const auto method = req.method();
  const bool get = method == http::verb::get;
  auto wrong_method = [&](std::string_view allowed) {
    return send_error(w, 405,
                      "method not allowed on " + std::string{target} + ": use "
                          + std::string{allowed},
                      "Allow: " + std::string{allowed} + "\r\n");
  };

  if (target == "/healthz") {
    if (!get)
      co_return co_await wrong_method("GET");
    co_return co_await w.send(200, json_type, R"({"status":"ok"})");
  }
  if (target == "/readyz") {
    if (!get)
      co_return co_await wrong_method("GET");
    if (board->ready())
      co_return co_await w.send(200, json_type, R"({"ready":true})");
    co_return co_await w.send(503, json_type, R"({"ready":false})");
  }
  if (target == "/api/progress") {
    if (!get)
      co_return co_await wrong_method("GET");
    co_return co_await w.send(
        200, json_type,
        render_progress_json(*board->snapshot(), board->ready()));
  }
  if (target == "/api/pods") {
    if (!get)
      co_return co_await wrong_method("GET");
    co_return co_await w.send(200, json_type, render_pods_json(*board->pods()));
  }
  if (target == "/metrics") {
    if (!get)
      co_return co_await wrong_method("GET");
    co_return co_await w.send(200, "text/plain; version=0.0.4",
                              render_prometheus(*board->snapshot(),
                                                board->ready(),
                                                board->raw_parts().size()));
  }
  if (target == "/api/metrics") {
    if (!get)
      co_return co_await wrong_method("GET");
    co_return co_await w.send(200, json_type,
                              render_metrics_json(*board->snapshot(), board->ready(),
                                                  cfg->artifact_dir));
  }
  if (target == "/api/shutdown") {
    if (method != http::verb::post)
      co_return co_await wrong_method("POST");
    if (!board->request_shutdown())
      co_return co_await send_error(w, 409,
                                    "the benchmark is still running: POST /api/shutdown "
                                    "once it finished (GET /api/progress), or cancel it "
                                    "with SIGTERM");
    co_return co_await w.send(202, json_type, R"({"status":"shutting down"})");
  }
  if (target == "/api/cancel") {
    if (method != http::verb::post)
      co_return co_await wrong_method("POST");
    if (!board->request_cancel())
      co_return co_await send_error(w, 409,
                                    "no benchmark is running here to cancel (GET "
                                    "/api/progress); a finished run's results stay "
                                    "available until POST /api/shutdown");
    co_return co_await w.send(202, json_type, R"({"status":"cancelling"})");
  }
  if (target == results_list_route || target.starts_with(results_files_prefix)) {
    if (!get)
      co_return co_await wrong_method("GET");
    if (cfg->artifact_dir.empty())
      co_return co_await send_error(w, 404, "this controller serves no results");
    if (co_await serve_results(cfg->artifact_dir, target, req, w))
      co_return;
  }
  if (target.starts_with(dataset_prefix)) {
    if (!get)
      co_return co_await wrong_method("GET");
    auto name = target.substr(dataset_prefix.size());
    if (name != "dataset.dat.zst" && name != "index.dat.zst")
      co_return co_await send_error(
          w, 404,
          "unknown dataset file '" + std::string{name}
              + "': use dataset.dat.zst or index.dat.zst");
    if (cfg->dataset_dir.empty())
      co_return co_await send_error(w, 404,
                                    "this controller serves no dataset");
    co_return co_await send_file(w, cfg->dataset_dir / std::string{name},
                                 "application/zstd");
  }
  if (target == "/api/artifacts" || target.starts_with(artifacts_prefix)) {
    if (!get)
      co_return co_await wrong_method("GET");
    if (cfg->artifact_dir.empty())
      co_return co_await send_error(w, 404,
                                    "this controller serves no artifacts");
    if (target == "/api/artifacts" || target == artifacts_prefix)
      co_return co_await list_artifacts(w, cfg->artifact_dir);
    auto file = resolve_under(cfg->artifact_dir,
                              target.substr(artifacts_prefix.size()));
    if (!file)
      co_return co_await send_error(
          w, 404, "no such artifact: use a path listed by GET /api/artifacts");
    co_return co_await send_file(w, *file, content_type_of(*file));
  }
  if (target.starts_with(raw_prefix)) {
    if (method != http::verb::put)
      co_return co_await wrong_method("PUT");
    auto pod = target.substr(raw_prefix.size());
    if (!valid_pod_name(pod))
      co_return co_await send_error(
          w, 400,
          "invalid pod name '" + std::string{pod.substr(0, 64)}
              + "': use 1-63 characters of [A-Za-z0-9_-] (the pod index)");
    if (cfg->raw_dir.empty())
      co_return co_await send_error(
          w, 404, "this controller does not collect RAW parts");
    co_return co_await stage_raw(w, req, pod, *board, *cfg);
  }
  co_await send_error(w, 404, "no route for " + std::string{target});
}

} // namespace

http_server::handler make_handler(std::shared_ptr<status_board> board,
                                  std::shared_ptr<const api_config> cfg) {
  return [board = std::move(board),
          cfg = std::move(cfg)](http_server::request& req, response_writer& w) {
    return route(board, cfg, req, w);
  };
}

} // namespace aiperf::api_service
