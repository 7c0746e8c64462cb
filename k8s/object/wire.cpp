#include "k8s/object/wire.hpp"

#include "k8s/api/json.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <yaml-cpp/yaml.h>

namespace aiperf::k8s {

namespace {

void add_query(std::string& target, bool& first, std::string_view key,
               std::string_view value) {
  if (value.empty())
    return;
  target += first ? '?' : '&';
  first = false;
  target += key;
  target += '=';
  target += url_encode(value);
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t pos = 0;
  while (pos < path.size()) {
    while (pos < path.size() && path[pos] == '/')
      ++pos;
    auto end = path.find('/', pos);
    if (end == std::string_view::npos)
      end = path.size();
    if (end > pos)
      parts.push_back(path.substr(pos, end - pos));
    pos = end;
  }
  return parts;
}

std::string lower(std::string_view s) {
  std::string out{s};
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
    return static_cast<char>(std::tolower(c));
  });
  return out;
}

caf::error bad_request(std::string message) {
  status st{"BadRequest", 400, message, {}};
  return make_status_error("bad request", std::move(st));
}

caf::expected<std::int64_t> integer_param(std::string_view name,
                                          const std::string& value) {
  std::int64_t out = 0;
  auto [ptr, ec]
      = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc{} || ptr != value.data() + value.size())
    return bad_request("invalid value for " + std::string{name} + ": \"" + value
                       + "\": must be an integer");
  return out;
}

// YAML (an apply patch may be YAML) to JSON text. JSON is valid YAML, so a
// body that already parses as JSON is kept byte for byte.
json yaml_to_json(const YAML::Node& node) {
  switch (node.Type()) {
  case YAML::NodeType::Map: {
    json out = json::object();
    for (const auto& kv : node)
      out[kv.first.as<std::string>()] = yaml_to_json(kv.second);
    return out;
  }
  case YAML::NodeType::Sequence: {
    json out = json::array();
    for (const auto& item : node)
      out.push_back(yaml_to_json(item));
    return out;
  }
  case YAML::NodeType::Scalar: {
    const auto& s = node.Scalar();
    if (node.Tag() == "!")
      return s; // quoted: always a string
    if (s == "true" || s == "True" || s == "TRUE")
      return true;
    if (s == "false" || s == "False" || s == "FALSE")
      return false;
    if (s == "null" || s == "~" || s == "Null" || s == "NULL")
      return nullptr;
    std::int64_t i = 0;
    if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
        ec == std::errc{} && p == s.data() + s.size())
      return i;
    double d = 0;
    if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
        ec == std::errc{} && p == s.data() + s.size() && !s.empty())
      return d;
    return s;
  }
  default:
    return nullptr;
  }
}

} // namespace

std::string url_encode(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string url_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size()
               && std::isxdigit(static_cast<unsigned char>(s[i + 1]))
               && std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(
          std::stoi(std::string{s.substr(i + 1, 2)}, nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string path_of(const resource_ref& ref) {
  std::string path = ref.group.empty()
                         ? "/api/" + ref.version
                         : "/apis/" + ref.group + "/" + ref.version;
  if (!ref.namespace_name.empty())
    path += "/namespaces/" + ref.namespace_name;
  path += "/" + ref.resource;
  if (!ref.name.empty())
    path += "/" + ref.name;
  if (!ref.subresource.empty())
    path += "/" + ref.subresource;
  return path;
}

http_call to_http(const request& r) {
  http_call call;
  switch (r.verb) {
  case verb::get:
  case verb::list:
  case verb::watch:
    call.method = "GET";
    break;
  case verb::create:
    call.method = "POST";
    break;
  case verb::update:
    call.method = "PUT";
    break;
  case verb::patch:
    call.method = "PATCH";
    break;
  case verb::remove:
  case verb::remove_collection:
    call.method = "DELETE";
    break;
  }
  call.target = path_of(r.ref);
  bool first = true;
  add_query(call.target, first, "labelSelector", r.label_selector);
  add_query(call.target, first, "fieldSelector", r.field_selector);
  if (r.limit > 0)
    add_query(call.target, first, "limit", std::to_string(r.limit));
  add_query(call.target, first, "continue", r.continue_token);
  add_query(call.target, first, "resourceVersion", r.resource_version);
  add_query(call.target, first, "resourceVersionMatch",
            r.resource_version_match);
  if (r.verb == verb::watch) {
    if (r.allow_watch_bookmarks)
      add_query(call.target, first, "allowWatchBookmarks", "true");
    if (r.timeout_seconds > 0)
      add_query(call.target, first, "timeoutSeconds",
                std::to_string(r.timeout_seconds));
    add_query(call.target, first, "watch", "true");
  }
  if (r.dry_run)
    add_query(call.target, first, "dryRun", "All");
  add_query(call.target, first, "fieldManager", r.field_manager);
  add_query(call.target, first, "fieldValidation", r.field_validation);
  if (r.force)
    add_query(call.target, first, "force", "true");
  call.accept = r.as_table ? std::string{table_accept} : "application/json";
  if (!r.body.empty()) {
    call.body = r.body;
    switch (r.patch) {
    case patch_type::json:
      call.content_type = "application/json-patch+json";
      break;
    case patch_type::merge:
      call.content_type = "application/merge-patch+json";
      break;
    case patch_type::strategic:
      call.content_type = "application/strategic-merge-patch+json";
      break;
    case patch_type::apply:
      call.content_type = "application/apply-patch+yaml";
      break;
    case patch_type::none:
      call.content_type = "application/json";
      break;
    }
  }
  if (!r.user_agent.empty())
    call.headers.emplace_back("User-Agent", r.user_agent);
  if (!r.impersonate_user.empty())
    call.headers.emplace_back("Impersonate-User", r.impersonate_user);
  for (const auto& g : r.impersonate_groups)
    call.headers.emplace_back("Impersonate-Group", g);
  return call;
}

bool is_non_resource_path(std::string_view path) {
  auto parts = split_path(path);
  if (parts.empty())
    return true;
  if (parts[0] == "api")
    return parts.size() <= 2;
  if (parts[0] == "apis")
    return parts.size() <= 3;
  return true;
}

caf::expected<request> request_of(std::string_view method,
                                  std::string_view target,
                                  std::string_view content_type,
                                  std::string body) {
  auto qpos = target.find('?');
  auto path = target.substr(0, qpos);
  auto query = qpos == std::string_view::npos ? std::string_view{}
                                              : target.substr(qpos + 1);
  if (is_non_resource_path(path))
    return make_error(errc::not_found,
                      "not a resource path: " + std::string{path});
  auto parts = split_path(path);
  request r;
  std::size_t i = 0;
  if (parts[0] == "api") {
    r.ref.version = std::string{parts[1]};
    i = 2;
  } else {
    r.ref.group = std::string{parts[1]};
    r.ref.version = std::string{parts[2]};
    i = 3;
  }
  // The legacy `/api/v1/watch/...` form.
  bool watch_path = false;
  if (i < parts.size() && parts[i] == "watch") {
    watch_path = true;
    ++i;
  }
  std::vector<std::string_view> rest(
      parts.begin() + static_cast<std::ptrdiff_t>(i), parts.end());
  // kubernetes/apiserver pkg/endpoints/request/requestinfo.go: after
  // `namespaces/<ns>` comes a resource unless the next part is one of the
  // namespace's own subresources.
  if (rest.size() >= 2 && rest[0] == "namespaces"
      && !(rest.size() == 3
           && (rest[2] == "status" || rest[2] == "finalize"))) {
    if (rest.size() == 2) {
      r.ref.resource = "namespaces";
      r.ref.name = std::string{rest[1]};
      rest.clear();
    } else {
      r.ref.namespace_name = std::string{rest[1]};
      rest.erase(rest.begin(), rest.begin() + 2);
    }
  }
  if (!rest.empty()) {
    if (rest.size() > 3)
      return make_error(errc::not_found,
                        "not a resource path: " + std::string{path});
    r.ref.resource = std::string{rest[0]};
    if (rest.size() > 1)
      r.ref.name = std::string{rest[1]};
    if (rest.size() > 2)
      r.ref.subresource = std::string{rest[2]};
  }
  if (r.ref.resource.empty())
    return make_error(errc::not_found,
                      "not a resource path: " + std::string{path});

  bool watch = watch_path;
  json delete_query = json::object();
  while (!query.empty()) {
    auto amp = query.find('&');
    auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{}
                                          : query.substr(amp + 1);
    auto eq = pair.find('=');
    auto key = url_decode(pair.substr(0, eq));
    auto value = eq == std::string_view::npos ? std::string{}
                                              : url_decode(pair.substr(eq + 1));
    if (key == "labelSelector") {
      r.label_selector = value;
    } else if (key == "fieldSelector") {
      r.field_selector = value;
    } else if (key == "limit") {
      auto n = integer_param(key, value);
      if (!n)
        return n.error();
      r.limit = *n;
    } else if (key == "continue") {
      r.continue_token = value;
    } else if (key == "resourceVersion") {
      r.resource_version = value;
    } else if (key == "resourceVersionMatch") {
      r.resource_version_match = value;
    } else if (key == "allowWatchBookmarks") {
      r.allow_watch_bookmarks = lower(value) == "true" || value == "1";
    } else if (key == "timeoutSeconds") {
      auto n = integer_param(key, value);
      if (!n)
        return n.error();
      r.timeout_seconds = *n;
    } else if (key == "watch") {
      // Any value but 0/false: python-kubernetes sends watch=True.
      auto v = lower(value);
      watch = v != "0" && v != "false";
    } else if (key == "dryRun") {
      if (value != "All")
        return bad_request("Invalid dry run value: \"" + value + "\"");
      r.dry_run = true;
    } else if (key == "fieldManager") {
      r.field_manager = value;
    } else if (key == "fieldValidation") {
      r.field_validation = value;
    } else if (key == "force") {
      r.force = lower(value) == "true" || value == "1";
    } else if (key == "propagationPolicy") {
      delete_query["propagationPolicy"] = value;
    } else if (key == "gracePeriodSeconds") {
      auto n = integer_param(key, value);
      if (!n)
        return n.error();
      delete_query["gracePeriodSeconds"] = *n;
    } else if (key == "orphanDependents") {
      delete_query["orphanDependents"] = lower(value) == "true";
    }
    // Other parameters (timeout, pretty, ...) are ignored, as servers do.
  }

  auto type = lower(content_type.substr(0, content_type.find(';')));
  type.erase(type.find_last_not_of(' ') + 1);
  const bool named = !r.ref.name.empty();
  if (method == "GET") {
    r.verb = watch ? verb::watch : (named ? verb::get : verb::list);
  } else if (method == "POST") {
    r.verb = verb::create;
  } else if (method == "PUT") {
    r.verb = verb::update;
  } else if (method == "PATCH") {
    r.verb = verb::patch;
    if (type == "application/json-patch+json")
      r.patch = patch_type::json;
    else if (type == "application/merge-patch+json")
      r.patch = patch_type::merge;
    else if (type == "application/strategic-merge-patch+json")
      r.patch = patch_type::strategic;
    else if (type == "application/apply-patch+yaml")
      r.patch = patch_type::apply;
    else
      return make_status_error(
          "patch",
          status{"UnsupportedMediaType",
                 415,
                 "the body of the request was in an unknown format - accepted "
                 "media "
                 "types include: application/json-patch+json, "
                 "application/merge-patch+json, application/apply-patch+yaml",
                 {}});
  } else if (method == "DELETE") {
    r.verb = named ? verb::remove : verb::remove_collection;
  } else {
    return make_status_error(
        lower(method),
        status{"MethodNotAllowed",
               405,
               lower(method) + " is not supported on resources of kind \""
                   + r.ref.resource + "\"",
               {}});
  }
  if ((r.verb == verb::remove || r.verb == verb::remove_collection)
      && !delete_query.empty()) {
    json options
        = body.empty() ? json::object() : json::parse(body, nullptr, false);
    if (options.is_object()) {
      for (auto& [k, v] : delete_query.items())
        if (!options.contains(k))
          options[k] = v;
      body = options.dump();
    }
  }
  if (r.patch == patch_type::apply && !body.empty()) {
    // JSON is YAML: keep JSON bodies as sent, convert the others.
    if (json::parse(body, nullptr, false).is_discarded()) {
      try {
        body = yaml_to_json(YAML::Load(body))
                   .dump(-1, ' ', false, json::error_handler_t::replace);
      } catch (const YAML::Exception& e) {
        return bad_request(std::string{"error converting YAML to JSON: "}
                           + e.what());
      }
    }
  }
  r.body = std::move(body);
  return r;
}


std::string warning_text(std::string_view header) {
  // warn-code SP warn-agent SP quoted-string [SP warn-date]
  auto first = header.find(' ');
  auto second
      = first == std::string_view::npos ? first : header.find(' ', first + 1);
  if (second == std::string_view::npos || second + 1 >= header.size()
      || header[second + 1] != '"')
    return std::string{header};
  std::string out;
  for (auto i = second + 2; i < header.size(); ++i) {
    if (header[i] == '\\' && i + 1 < header.size()) {
      out += header[++i];
    } else if (header[i] == '"') {
      return out;
    } else {
      out += header[i];
    }
  }
  return std::string{header}; // unterminated: not the shape we know
}

} // namespace aiperf::k8s
