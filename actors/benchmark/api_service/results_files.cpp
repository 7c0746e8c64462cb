#include "actors/benchmark/api_service/results_files.hpp"

#include "actors/benchmark/api_service/routes.hpp"
#include "runtime/http/url.hpp"
#include "runtime/io/durable_file.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <system_error>

#include <cctype>

namespace aiperf::api_service {

namespace fs = std::filesystem;
namespace http = boost::beast::http;
using boost::asio::awaitable;

namespace {

bool inside(const fs::path& root, const fs::path& p) {
  auto r = root.begin();
  auto q = p.begin();
  for (; r != root.end(); ++r, ++q)
    if (q == p.end() || *r != *q)
      return false;
  return true;
}

// The clean segments of a percent-encoded relative path, or nullopt.
std::optional<std::vector<std::string>> segments_of(std::string_view encoded) {
  auto decoded = aiperf::http::percent_decode(encoded);
  if (!decoded || decoded->empty())
    return std::nullopt;
  std::vector<std::string> out;
  std::string_view rest = *decoded;
  while (true) {
    auto slash = rest.find('/');
    auto seg = rest.substr(0, slash);
    if (seg.empty() || seg == "." || seg == ".." || seg.find('\\') != std::string_view::npos
        || seg.find('\0') != std::string_view::npos)
      return std::nullopt;
    out.emplace_back(seg);
    if (slash == std::string_view::npos)
      break;
    rest.remove_prefix(slash + 1);
  }
  return out;
}

// A filename for a header: no quotes, backslashes or control characters.
std::string header_safe(std::string_view name) {
  std::string out;
  for (char c : name)
    out.push_back(c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 ? '_' : c);
  return out;
}

} // namespace

bool is_safe_result_name(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.find('\\') != std::string_view::npos)
    return false;
  for (const auto& part : fs::path{name})
    if (part == ".." || part == ".")
      return false;
  return true;
}

std::string result_file_route(std::string_view name) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out{results_files_prefix};
  for (unsigned char c : name) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

bool results_ready(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / std::string{ready_marker_name}, ec);
}

std::vector<result_file> list_results(const fs::path& dir) {
  std::vector<result_file> out;
  std::error_code ec;
  if (results_ready(dir))
    for (fs::directory_iterator it{dir, ec}, end; !ec && it != end; it.increment(ec)) {
      auto name = it->path().filename().string();
      std::error_code fe;
      if (name != ready_marker_name && it->is_regular_file(fe))
        out.push_back({name, it->file_size(fe)});
    }
  auto checkpoints = dir / std::string{checkpoints_dir_name};
  if (fs::is_directory(checkpoints, ec))
    for (fs::recursive_directory_iterator it{checkpoints, ec}, end; !ec && it != end;
         it.increment(ec)) {
      std::error_code fe;
      if (it->is_regular_file(fe))
        out.push_back({fs::relative(it->path(), dir, fe).generic_string(), it->file_size(fe)});
    }
  std::sort(out.begin(), out.end(),
            [](const result_file& a, const result_file& b) { return a.name < b.name; });
  return out;
}

std::string render_results_list(const std::vector<result_file>& files, bool ready) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w{sb};
  w.StartObject();
  w.Key("files");
  w.StartArray();
  for (const auto& f : files) {
    w.StartObject();
    w.Key("name");
    w.String(f.name.c_str(), static_cast<rapidjson::SizeType>(f.name.size()));
    w.Key("size");
    w.Uint64(f.size);
    w.EndObject();
  }
  w.EndArray();
  w.Key("ready");
  w.Bool(ready);
  w.EndObject();
  return {sb.GetString(), sb.GetSize()};
}

resolved_result resolve_result(const fs::path& dir, std::string_view encoded) {
  auto segs = segments_of(encoded);
  if (!segs)
    return {result_lookup::bad_path, {}};
  if (std::find(segs->begin(), segs->end(), ready_marker_name) != segs->end())
    return {result_lookup::bad_path, {}};
  bool checkpoint = segs->size() > 1 && segs->front() == checkpoints_dir_name;
  if (!checkpoint && !results_ready(dir))
    return {result_lookup::not_ready, {}};
  if (!checkpoint && segs->size() > 1)
    return {result_lookup::not_found, {}};
  fs::path rel;
  for (const auto& s : *segs)
    rel /= s;
  std::error_code ec;
  auto root = fs::canonical(dir, ec);
  if (ec)
    return {result_lookup::not_found, {}};
  auto file = fs::canonical(root / rel, ec);
  if (ec || !inside(root, file) || !fs::is_regular_file(file, ec))
    return {result_lookup::not_found, {}};
  return {result_lookup::ok, file};
}

caf::expected<void> write_ready_marker(const fs::path& dir, bool was_cancelled) {
  return io::atomic_write_file(dir / std::string{ready_marker_name},
                               was_cancelled ? R"({"ready": true, "was_cancelled": true})"
                                             : R"({"ready": true, "was_cancelled": false})");
}

fs::path results_root(const fs::path& dir) {
  std::error_code ec;
  fs::path only;
  int dirs = 0;
  for (fs::directory_iterator it{dir, ec}, end; !ec && it != end; it.increment(ec)) {
    std::error_code fe;
    if (it->is_regular_file(fe))
      return dir;
    if (it->is_directory(fe) && it->path().filename() != checkpoints_dir_name) {
      only = it->path();
      ++dirs;
    }
  }
  return dirs == 1 ? only : dir;
}

awaitable<bool> serve_results(const fs::path& dir, std::string_view target,
                              http_server::request& req, http_server::response_writer& w) {
  (void) req;
  if (target == results_list_route) {
    co_await w.send(200, "application/json",
                    render_results_list(list_results(dir), results_ready(dir)));
    co_return true;
  }
  if (!target.starts_with(results_files_prefix))
    co_return false;
  auto r = resolve_result(dir, target.substr(results_files_prefix.size()));
  switch (r.status) {
    case result_lookup::bad_path:
      co_await send_json_error(w, 400,
                               "invalid results path: use a name listed by GET "
                               "/api/results/list (no '..', no backslashes, not the "
                               "ready marker)");
      co_return true;
    case result_lookup::not_ready:
      co_await send_json_error(w, 404, "Results not ready");
      co_return true;
    case result_lookup::not_found:
      co_await send_json_error(w, 404,
                               "no such results file: use a name listed by GET "
                               "/api/results/list");
      co_return true;
    case result_lookup::ok:
      break;
  }
  auto name = header_safe(r.path.filename().string());
  co_await send_file(w, r.path, content_type_of(r.path),
                     "Content-Disposition: attachment; filename=\"" + name + "\"\r\nX-Filename: "
                       + name + "\r\n");
  co_return true;
}

} // namespace aiperf::api_service
