#include "k8s/object/status_json.hpp"

#include "proto/utf8.hpp"

#include <cstdio>

namespace aiperf::k8s {

namespace {

// Go's encoding/json string escaping with HTML escaping on, which is what
// the API server's JSON encoder uses.
void append_go_string(std::string& out, std::string_view s) {
  out += '"';
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '<':
      out += "\\u003c";
      break;
    case '>':
      out += "\\u003e";
      break;
    case '&':
      out += "\\u0026";
      break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else if (c < 0x80) {
        out += static_cast<char>(c);
      } else if (auto seq = utf8::decode(
                     reinterpret_cast<const unsigned char*>(s.data()) + i,
                     s.size() - i);
                 !seq.valid) {
        out += "\\ufffd"; // Go writes each ill-formed byte as this escape
      } else if (seq.length == 3 && c == 0xE2
                 && static_cast<unsigned char>(s[i + 1]) == 0x80
                 && (static_cast<unsigned char>(s[i + 2]) == 0xA8
                     || static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
        out += static_cast<unsigned char>(s[i + 2]) == 0xA8 ? "\\u2028"
                                                            : "\\u2029";
        i += 2;
      } else {
        out.append(s.substr(i, seq.length));
        i += seq.length - 1;
      }
    }
  }
  out += '"';
}

void append_field(std::string& out, bool& first, std::string_view key,
                  std::string_view value) {
  if (value.empty())
    return;
  if (!first)
    out += ',';
  first = false;
  append_go_string(out, key);
  out += ':';
  append_go_string(out, value);
}

bool details_empty(const status_details& d) {
  return d.name.empty() && d.group.empty() && d.kind.empty() && d.uid.empty()
         && d.causes.empty() && d.retry_after_seconds == 0;
}

void append_details(std::string& out, const status_details& d) {
  out += '{';
  bool first = true;
  append_field(out, first, "name", d.name);
  append_field(out, first, "group", d.group);
  append_field(out, first, "kind", d.kind);
  append_field(out, first, "uid", d.uid);
  if (!d.causes.empty()) {
    if (!first)
      out += ',';
    first = false;
    out += "\"causes\":[";
    for (std::size_t i = 0; i < d.causes.size(); ++i) {
      if (i)
        out += ',';
      out += '{';
      bool f = true;
      append_field(out, f, "reason", d.causes[i].reason);
      append_field(out, f, "message", d.causes[i].message);
      append_field(out, f, "field", d.causes[i].field);
      out += '}';
    }
    out += ']';
  }
  if (d.retry_after_seconds != 0) {
    if (!first)
      out += ',';
    out += "\"retryAfterSeconds\":" + std::to_string(d.retry_after_seconds);
  }
  out += '}';
}

std::string string_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>()
                                          : std::string{};
}

} // namespace

std::string status_body(const status& st) {
  std::string out
      = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure")";
  bool first = false;
  append_field(out, first, "message", st.message);
  append_field(out, first, "reason", st.reason);
  if (st.details_present || !details_empty(st.details)) {
    out += ",\"details\":";
    append_details(out, st.details);
  }
  if (st.code != 0)
    out += ",\"code\":" + std::to_string(st.code);
  out += "}\n";
  return out;
}

json status_to_json(const status& st) {
  auto body = status_body(st);
  return json::parse(body);
}

std::string success_body(const status_details& details) {
  std::string out
      = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success")";
  out += ",\"details\":";
  append_details(out, details);
  out += "}\n";
  return out;
}

caf::expected<status> parse_status(std::string_view body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || string_at(j, "kind") != "Status")
    return make_error(errc::invalid,
                      "the body is not a Kubernetes Status object");
  status st;
  st.reason = string_at(j, "reason");
  st.message = string_at(j, "message");
  if (auto it = j.find("code"); it != j.end() && it->is_number_integer())
    st.code = it->get<std::int32_t>();
  if (auto it = j.find("details"); it != j.end() && it->is_object()) {
    st.details_present = true;
    const auto& d = *it;
    st.details.name = string_at(d, "name");
    st.details.group = string_at(d, "group");
    st.details.kind = string_at(d, "kind");
    st.details.uid = string_at(d, "uid");
    if (auto r = d.find("retryAfterSeconds");
        r != d.end() && r->is_number_integer())
      st.details.retry_after_seconds = r->get<std::int32_t>();
    if (auto c = d.find("causes"); c != d.end() && c->is_array())
      for (const auto& cause : *c)
        if (cause.is_object())
          st.details.causes.push_back({string_at(cause, "reason"),
                                       string_at(cause, "message"),
                                       string_at(cause, "field")});
  }
  return st;
}

caf::error error_of_response(std::int32_t http_code, std::string_view body,
                             std::string_view what) {
  if (auto st = parse_status(body)) {
    if (st->code == 0)
      st->code = http_code;
    return make_status_error(what, std::move(*st));
  }
  // client-go's newUnstructuredResponseError: reasons and messages by code.
  status st;
  st.code = http_code;
  switch (http_code) {
  case 400:
    st.reason = "BadRequest";
    st.message = "the server rejected our request for an unknown reason";
    break;
  case 401:
    st.reason = "Unauthorized";
    st.message = "the server has asked for the client to provide credentials";
    break;
  case 403:
    st.reason = "Forbidden";
    st.message = "the server does not allow access to the requested resource";
    break;
  case 404:
    st.reason = "NotFound";
    st.message = "the server could not find the requested resource";
    break;
  case 405:
    st.reason = "MethodNotAllowed";
    st.message
        = "the server does not allow this method on the requested resource";
    break;
  case 409:
    st.reason = "Conflict";
    st.message = "the server reported a conflict";
    break;
  case 410:
    st.reason = "Expired";
    st.message = "the server could not find the requested resource";
    break;
  case 415:
    st.reason = "UnsupportedMediaType";
    st.message = "the server responded with the status code 415 but did not "
                 "return more information";
    break;
  case 422:
    st.reason = "Invalid";
    st.message
        = "the server rejected our request due to an error in our request";
    break;
  case 429:
    st.reason = "TooManyRequests";
    st.message = "the server has received too many requests and has asked us "
                 "to try again later";
    break;
  case 500:
    st.reason = "InternalError";
    st.message
        = "an error on the server has prevented the request from succeeding";
    break;
  case 503:
    st.reason = "ServiceUnavailable";
    st.message = "the server is currently unable to handle the request";
    break;
  case 504:
    st.reason = "Timeout";
    st.message = "the server was unable to return a response in the time "
                 "allotted, but may still be processing the request";
    break;
  default:
    st.reason = http_code >= 500 ? "InternalError" : "BadRequest";
    st.message = "the server responded with the status code "
                 + std::to_string(http_code)
                 + " but did not return more information";
  }
  return make_status_error(what, std::move(st));
}

status invalid_patch_status() {
  status st;
  st.reason = "Invalid";
  st.code = 422;
  st.message = "the server rejected our request due to an error in our request";
  st.details_present = true;
  return st;
}

bool is_failed_patch(const status& st) noexcept {
  return st.code == 422 && st.reason == "Invalid" && st.details_present
         && details_empty(st.details);
}

std::string_view reason_phrase(std::int32_t http_code) noexcept {
  switch (http_code) {
  case 200:
    return "OK";
  case 201:
    return "Created";
  case 202:
    return "Accepted";
  case 400:
    return "Bad Request";
  case 401:
    return "Unauthorized";
  case 403:
    return "Forbidden";
  case 404:
    return "Not Found";
  case 405:
    return "Method Not Allowed";
  case 406:
    return "Not Acceptable";
  case 409:
    return "Conflict";
  case 410:
    return "Gone";
  case 413:
    return "Request Entity Too Large";
  case 415:
    return "Unsupported Media Type";
  case 422:
    return "Unprocessable Entity";
  case 429:
    return "Too Many Requests";
  case 500:
    return "Internal Server Error";
  case 503:
    return "Service Unavailable";
  case 504:
    return "Gateway Timeout";
  default:
    return "Unknown";
  }
}

} // namespace aiperf::k8s
