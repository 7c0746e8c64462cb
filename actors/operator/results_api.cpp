#include "actors/operator/results_api.hpp"

#include "actors/benchmark/api_service/results_files.hpp"
#include "k8s/api/json.hpp"
#include "k8s/object/validation.hpp"
#include "runtime/http/url.hpp"
#include "runtime/io/zstd_stream.hpp"

#include <boost/crc.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>
#include <vector>

namespace aiperf::op {

namespace fs = std::filesystem;
using k8s::json;

namespace {

constexpr std::string_view prefix = "/api/v1/results";

results_reply answer_results_plain(const fs::path& base, std::string_view target);

results_reply detail(int status, const std::string& message) {
  return {status, "application/json", json{{"detail", message}}.dump(), {}};
}

results_reply json_reply(const json& body) {
  return {200, "application/json", body.dump(), {}};
}

bool is_dns_label(std::string_view s) {
  return k8s::is_dns1123_label(s).empty();
}

std::string read_file(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}


} // namespace

std::vector<std::string> stored_runs(const fs::path& job_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator{job_dir, ec}) {
    auto name = e.path().filename().string();
    if (is_epoch_key(name) && e.is_directory(ec) && !e.is_symlink(ec))
      out.push_back(name);
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    auto sa = epoch_seconds(a), sb = epoch_seconds(b);
    return sa != sb ? sa > sb : a > b;
  });
  return out;
}

namespace {

// latest.txt's epoch when that run exists, else null.
json latest_of(const fs::path& job_dir) {
  std::ifstream in{job_dir / "latest.txt"};
  std::string epoch;
  std::getline(in, epoch);
  std::error_code ec;
  if (!is_epoch_key(epoch) || !fs::is_directory(job_dir / epoch, ec))
    return nullptr;
  return epoch;
}

struct listed {
  std::string name;
  std::uintmax_t size = 0;
};

// The run's regular files below it ("/"-separated), the marker left out
// (it is `ready`), symlinks never followed.
std::vector<listed> files_of(const fs::path& run_dir) {
  std::vector<listed> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator{run_dir, ec};
       !ec && it != fs::recursive_directory_iterator{}; it.increment(ec)) {
    if (it->is_symlink(ec) || !it->is_regular_file(ec))
      continue;
    auto rel = fs::relative(it->path(), run_dir, ec).generic_string();
    if (rel == api_service::ready_marker_name)
      continue;
    out.push_back({rel, it->file_size(ec)});
  }
  std::sort(out.begin(), out.end(), [](const listed& a, const listed& b) { return a.name < b.name; });
  return out;
}

std::int64_t mtime_seconds(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  if (ec)
    return 0;
  auto sys = std::chrono::file_clock::to_sys(t);
  return std::chrono::duration_cast<std::chrono::seconds>(sys.time_since_epoch()).count();
}

json run_summary(const fs::path& job_dir, const std::string& epoch, const json& latest) {
  auto files = files_of(job_dir / epoch);
  std::uintmax_t bytes = 0;
  for (const auto& f : files)
    bytes += f.size;
  return {{"epoch", epoch},
          {"mtime_epoch", mtime_seconds(job_dir / epoch)},
          {"file_count", files.size()},
          {"total_size_bytes", bytes},
          {"is_latest", latest.is_string() && latest.get<std::string>() == epoch}};
}

results_reply list_jobs(const fs::path& base) {
  json results = json::array();
  std::error_code ec;
  std::vector<fs::path> job_dirs;
  for (const auto& ns : fs::directory_iterator{base, ec}) {
    if (!ns.is_directory(ec) || !is_dns_label(ns.path().filename().string()))
      continue;
    for (const auto& job : fs::directory_iterator{ns.path(), ec})
      if (job.is_directory(ec) && is_dns_label(job.path().filename().string()))
        job_dirs.push_back(job.path());
  }
  std::sort(job_dirs.begin(), job_dirs.end());
  for (const auto& dir : job_dirs) {
    auto runs = stored_runs(dir);
    if (runs.empty())
      continue;
    results.push_back({{"namespace", dir.parent_path().filename().string()},
                       {"job_id", dir.filename().string()},
                       {"latest_epoch", latest_of(dir)},
                       {"run_count", runs.size()}});
  }
  return json_reply({{"results", results}});
}

// Whether `rel` ("a/b.json", decoded) stays inside `run_dir` without a
// symlink on the way.
bool inside(const fs::path& run_dir, const std::vector<std::string>& segments) {
  fs::path p = run_dir;
  std::error_code ec;
  for (const auto& s : segments) {
    p /= s;
    if (fs::is_symlink(fs::symlink_status(p, ec)))
      return false;
  }
  return true;
}

results_reply serve_file(const fs::path& run_dir, const std::vector<std::string>& segments,
                         const std::string& ns, const std::string& job, const std::string& epoch) {
  if (!inside(run_dir, segments))
    return detail(400, "the path leaves the run directory (a symlink)");
  fs::path p = run_dir;
  std::string name;
  for (const auto& s : segments) {
    p /= s;
    name += (name.empty() ? "" : "/") + s;
  }
  std::error_code ec;
  if (!fs::is_regular_file(p, ec))
    return detail(404, "no file " + name + " in run " + ns + "/" + job + "/" + epoch);
  if (!api_service::results_ready(run_dir))
    return detail(404, "run " + ns + "/" + job + "/" + epoch + " is not ready: "
                           + std::string{api_service::ready_marker_name} + " is missing");
  bool is_json = name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
  return {200, is_json ? "application/json" : "application/octet-stream", read_file(p),
          segments.back()};
}

// A ZIP archive (PKWARE APPNOTE 6.3, method 0 "stored": the exports are
// JSON, CSV and JSONL a client unpacks anyway) of `files` below `run_dir`,
// dated `mtime` (DOS time, UTC). Without ZIP64: more than 65,535 files or
// 4 GiB is refused by the caller.
std::string zip_of(const fs::path& run_dir, const std::vector<listed>& files, std::int64_t mtime) {
  std::string out;
  std::string central;
  auto u16 = [](std::string& s, std::uint32_t v) {
    s += static_cast<char>(v & 0xff);
    s += static_cast<char>((v >> 8) & 0xff);
  };
  auto u32 = [&](std::string& s, std::uint32_t v) {
    u16(s, v & 0xffff);
    u16(s, v >> 16);
  };
  std::time_t t = static_cast<std::time_t>(mtime);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::uint32_t dos_time = (tm.tm_hour << 11) | (tm.tm_min << 5) | (tm.tm_sec / 2);
  std::uint32_t dos_date = (std::max(tm.tm_year - 80, 0) << 9) | ((tm.tm_mon + 1) << 5) | tm.tm_mday;
  for (const auto& f : files) {
    auto data = read_file(run_dir / f.name);
    boost::crc_32_type crc;
    crc.process_bytes(data.data(), data.size());
    auto offset = static_cast<std::uint32_t>(out.size());
    auto size = static_cast<std::uint32_t>(data.size());
    // Local file header.
    u32(out, 0x04034b50);
    u16(out, 20);        // version needed: 2.0
    u16(out, 0x0800);    // flags: UTF-8 names
    u16(out, 0);         // stored
    u16(out, dos_time);
    u16(out, dos_date);
    u32(out, crc.checksum());
    u32(out, size);
    u32(out, size);
    u16(out, static_cast<std::uint32_t>(f.name.size()));
    u16(out, 0);         // no extra field
    out += f.name;
    out += data;
    // Its central directory record.
    u32(central, 0x02014b50);
    u16(central, (3 << 8) | 20); // made by: UNIX, 2.0
    u16(central, 20);
    u16(central, 0x0800);
    u16(central, 0);
    u16(central, dos_time);
    u16(central, dos_date);
    u32(central, crc.checksum());
    u32(central, size);
    u32(central, size);
    u16(central, static_cast<std::uint32_t>(f.name.size()));
    u16(central, 0); // extra
    u16(central, 0); // comment
    u16(central, 0); // disk
    u16(central, 0); // internal attributes
    u32(central, 0100644u << 16); // external: a regular file, rw-r--r--
    u32(central, offset);
    central += f.name;
  }
  auto cd_offset = static_cast<std::uint32_t>(out.size());
  out += central;
  // End of central directory.
  u32(out, 0x06054b50);
  u16(out, 0);
  u16(out, 0);
  u16(out, static_cast<std::uint32_t>(files.size()));
  u16(out, static_cast<std::uint32_t>(files.size()));
  u32(out, static_cast<std::uint32_t>(central.size()));
  u32(out, cd_offset);
  u16(out, 0);
  return out;
}

} // namespace

std::vector<std::string> runs_to_prune(const fs::path& job_dir, int retain_runs, int ttl_days,
                                       std::int64_t now_unix, std::string_view keep) {
  std::vector<std::string> out;
  auto latest = latest_of(job_dir);
  int kept = 0;
  for (const auto& epoch : stored_runs(job_dir)) {
    bool protected_run = epoch == keep || (latest.is_string() && latest.get<std::string>() == epoch)
                         || !api_service::results_ready(job_dir / epoch);
    bool past_count = retain_runs > 0 && kept >= retain_runs;
    bool past_ttl
        = ttl_days > 0 && now_unix - epoch_seconds(epoch) > std::int64_t{ttl_days} * 86400;
    if (!protected_run && (past_count || past_ttl))
      out.push_back(epoch);
    else
      ++kept;
  }
  return out;
}

std::int64_t epoch_seconds(std::string_view epoch) {
  // All digits but the 6-digit suffix of a 15- or 16-digit key.
  auto digits = epoch.size() > 10 ? epoch.substr(0, epoch.size() - 6) : epoch;
  return std::stoll(std::string{digits});
}

bool is_epoch_key(std::string_view s) noexcept {
  if (s.size() != 9 && s.size() != 10 && s.size() != 15 && s.size() != 16)
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool accepts_zstd(std::string_view header) {
  bool star = false;
  while (!header.empty()) {
    auto comma = header.find(',');
    auto item = header.substr(0, comma);
    header = comma == std::string_view::npos ? std::string_view{} : header.substr(comma + 1);
    auto semi = item.find(';');
    auto coding = item.substr(0, semi);
    auto trim = [](std::string_view v) {
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
        v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
        v.remove_suffix(1);
      return v;
    };
    std::string lower{trim(coding)}; // codings are case-insensitive (RFC 9110)
    for (auto& c : lower)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool refused = false;
    if (semi != std::string_view::npos) {
      auto params = trim(item.substr(semi + 1));
      if (params.substr(0, 2) == "q=") {
        auto q = params.substr(2);
        refused = q.find_first_not_of("0.") == std::string_view::npos; // q=0, q=0.0, ...
      }
    }
    if (lower == "zstd")
      return !refused;
    if (lower == "*")
      star = !refused;
  }
  return star;
}

results_reply answer_results(const fs::path& base, std::string_view target,
                             std::string_view accept_encoding) {
  auto reply = answer_results_plain(base, target);
  if (reply.status != 200 || reply.filename.empty() || reply.content_type == "application/zip"
      || !accepts_zstd(accept_encoding))
    return reply;
  std::string packed;
  io::zstd_compressor z{[&packed](std::string_view chunk) {
                          packed.append(chunk);
                          return true;
                        },
                        reply.filename};
  if (!z.write(reply.body) || !z.finish())
    return reply; // identity, then
  reply.body = std::move(packed);
  reply.content_encoding = "zstd";
  return reply;
}

namespace {

results_reply answer_results_plain(const fs::path& base, std::string_view target) {
  std::string_view query;
  if (auto q = target.find('?'); q != std::string_view::npos) {
    query = target.substr(q + 1);
    target = target.substr(0, q);
  }
  if (target.substr(0, prefix.size()) != prefix
      || (target.size() > prefix.size() && target[prefix.size()] != '/'))
    return {0, {}, {}, {}};
  auto rest = target.substr(prefix.size());
  if (rest.empty() || rest == "/")
    return list_jobs(base);
  // Segments, decoded: a `..`, `.`, empty or slash-carrying segment would
  // reach outside the tree.
  std::vector<std::string> seg;
  rest.remove_prefix(1);
  while (true) {
    auto slash = rest.find('/');
    auto raw = rest.substr(0, slash);
    auto d = http::percent_decode(raw);
    if (!d || d->empty() || *d == "." || *d == ".." || d->find('/') != std::string::npos
        || d->find('\\') != std::string::npos)
      return detail(400, "the path leaves the run directory or is not a valid path");
    seg.push_back(std::move(*d));
    if (slash == std::string_view::npos)
      break;
    rest.remove_prefix(slash + 1);
  }
  const auto& ns = seg[0];
  if (!is_dns_label(ns))
    return detail(400, "namespace \"" + ns + "\" is not an RFC 1123 label");
  if (seg.size() == 1)
    return detail(404, "no route: GET /api/v1/results/{namespace}/{job}/runs");
  std::string job = seg[1];
  bool zip = job.size() > 4 && job.compare(job.size() - 4, 4, ".zip") == 0;
  if (zip && seg.size() == 2)
    job.resize(job.size() - 4);
  if (!is_dns_label(job))
    return detail(400, "job \"" + job + "\" is not an RFC 1123 label");
  auto job_dir = base / ns / job;
  if (seg.size() == 2 || seg[2] != "runs")
    return detail(409, "an epoch is required: list the runs with GET /api/v1/results/" + ns + "/"
                           + job + "/runs, then ask for /runs/{epoch}/...");
  auto runs = stored_runs(job_dir);
  auto latest = latest_of(job_dir);
  if (seg.size() == 3) {
    if (runs.empty())
      return detail(404, "no runs of " + ns + "/" + job);
    json list = json::array();
    for (const auto& e : runs)
      list.push_back(run_summary(job_dir, e, latest));
    return json_reply({{"namespace", ns}, {"job_id", job}, {"latest_epoch", latest}, {"runs", list}});
  }
  std::string epoch = seg[3];
  bool run_zip = epoch.size() > 4 && epoch.compare(epoch.size() - 4, 4, ".zip") == 0;
  if (run_zip && seg.size() == 4)
    epoch.resize(epoch.size() - 4);
  if (!is_epoch_key(epoch))
    return detail(422, "epoch \"" + epoch + "\" is not an epoch key (9 or 10 digits of seconds, "
                                            "optionally 6 more)");
  auto run_dir = job_dir / epoch;
  if (std::find(runs.begin(), runs.end(), epoch) == runs.end())
    return detail(404, "no run " + epoch + " of " + ns + "/" + job);
  if (run_zip) {
    if (!api_service::results_ready(run_dir))
      return detail(404, "run " + ns + "/" + job + "/" + epoch + " is not ready: "
                             + std::string{api_service::ready_marker_name} + " is missing");
    auto files = files_of(run_dir);
    std::uintmax_t bytes = 0;
    for (const auto& f : files)
      bytes += f.size + 128 + 2 * f.name.size();
    if (files.size() > 0xffff || bytes >= 0xffffffffu)
      return detail(413, "run " + epoch + " is too large for a zip archive (" +
                             std::to_string(files.size()) + " files): fetch its files one by one");
    auto name = ns + "__" + job + "__" + epoch + ".zip";
    return {200, "application/zip", zip_of(run_dir, files, mtime_seconds(run_dir)), name};
  }
  if (seg.size() == 4) {
    auto files = files_of(run_dir);
    json list = json::array();
    auto has = [&](std::string_view name) {
      return std::any_of(files.begin(), files.end(), [&](const listed& f) { return f.name == name; });
    };
    for (const auto& f : files)
      list.push_back({{"name", f.name}, {"size", f.size}});
    auto optional_name = [&](const char* name) { return has(name) ? json(name) : json(nullptr); };
    return json_reply({{"namespace", ns},
                       {"job_id", job},
                       {"epoch", epoch},
                       {"ready", api_service::results_ready(run_dir)},
                       {"summary_available", has("profile_export_aiperf.json")},
                       {"per_record_filename", optional_name("profile_export.jsonl")},
                       {"server_metrics_filename", optional_name("server_metrics_export.json")},
                       {"files", list}});
  }
  std::vector<std::string> file(seg.begin() + 4, seg.end());
  if (file.size() == 1 && file[0] == "profile_export") {
    if (!query.empty() && query != "format=json")
      return detail(400, "profile_export is served as format=json only");
    return serve_file(run_dir, {"profile_export_aiperf.json"}, ns, job, epoch);
  }
  return serve_file(run_dir, file, ns, job, epoch);
}

} // namespace

} // namespace aiperf::op
