#include "runtime/http/url.hpp"

#include "proto/redact.hpp"

#include <openssl/evp.h>

#include <charconv>
#include <optional>

namespace aiperf::http {

namespace {

caf::error fail(std::string_view text, std::string_view what) {
  std::string message = "invalid URL '";
  message += proto::redact_url(text);
  message += "': ";
  message += what;
  return make_error(errc::invalid_url, std::move(message));
}

bool ascii_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto x = a[i] >= 'A' && a[i] <= 'Z' ? char(a[i] + 32) : a[i];
    if (x != b[i])
      return false;
  }
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

} // namespace

std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size())
      return std::nullopt;
    int hi = hex_value(s[i + 1]);
    int lo = hex_value(s[i + 2]);
    if (hi < 0 || lo < 0)
      return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::string basic_authorization(const url& u) {
  if (!u.user)
    return {};
  auto plain = *u.user + ":" + u.password;
  std::string b64(4 * ((plain.size() + 2) / 3) + 1, '\0');
  auto n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()),
                           reinterpret_cast<const unsigned char*>(plain.data()),
                           static_cast<int>(plain.size()));
  b64.resize(static_cast<std::size_t>(n));
  return "Basic " + b64;
}

caf::expected<url> parse_url(std::string_view text) {
  auto rest = text;
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t'))
    rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t'))
    rest.remove_suffix(1);
  if (rest.empty())
    return fail(text, "empty; use e.g. http://localhost:8000");
  url out;
  if (auto pos = rest.find("://"); pos != std::string_view::npos) {
    auto scheme = rest.substr(0, pos);
    if (ascii_iequals(scheme, "http")) {
      out.ep.tls = false;
    } else if (ascii_iequals(scheme, "https")) {
      out.ep.tls = true;
    } else {
      return fail(text, "unsupported scheme '" + std::string{scheme}
                          + "'; use http:// or https://");
    }
    rest.remove_prefix(pos + 3);
  }
  out.ep.port = out.ep.tls ? 443 : 80;
  auto path_pos = rest.find('/');
  auto authority = rest.substr(0, path_pos);
  auto path = path_pos == std::string_view::npos ? std::string_view{}
                                                 : rest.substr(path_pos);
  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    auto info = authority.substr(0, at);
    auto colon = info.find(':');
    auto user = percent_decode(info.substr(0, colon));
    auto password = colon == std::string_view::npos ? std::optional<std::string>{""}
                                                    : percent_decode(info.substr(colon + 1));
    if (!user || !password)
      return fail(text, "a '%' in the user info is no %XX escape; write '%' as %25");
    out.user = std::move(*user);
    out.password = std::move(*password);
    authority.remove_prefix(at + 1);
  }
  if (path.find_first_of("?#") != std::string_view::npos
      || authority.find_first_of("?#") != std::string_view::npos)
    return fail(text, "query strings and fragments are not supported in the "
                      "base URL; remove everything from '?' or '#'");
  std::string_view host;
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos)
      return fail(text, "unterminated IPv6 literal; write it as [::1]");
    host = authority.substr(1, close - 1);
    auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':')
        return fail(text, "unexpected characters after ']'; expected ':port'");
      port_text = after.substr(1);
      if (port_text.empty())
        return fail(text, "empty port after ':'; give a port number or drop ':'");
    }
  } else {
    auto colon = authority.find(':');
    host = authority.substr(0, colon);
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty())
        return fail(text, "empty port after ':'; give a port number or drop ':'");
      if (port_text.find(':') != std::string_view::npos)
        return fail(text, "too many ':'; IPv6 addresses need brackets, e.g. "
                          "http://[::1]:8000");
    }
  }
  if (host.empty())
    return fail(text, "missing host; use e.g. http://localhost:8000");
  for (char c : host) {
    if (c == ' ' || c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x21)
      return fail(text, "invalid character in host name");
  }
  if (!port_text.empty()) {
    unsigned value = 0;
    auto [ptr, ec] = std::from_chars(port_text.data(),
                                     port_text.data() + port_text.size(), value);
    if (ec != std::errc{} || ptr != port_text.data() + port_text.size()
        || value == 0 || value > 65535)
      return fail(text, "port '" + std::string{port_text}
                          + "' is not a number in 1..65535");
    out.ep.port = static_cast<std::uint16_t>(value);
  }
  out.ep.host.assign(host);
  while (!path.empty() && path.back() == '/')
    path.remove_suffix(1);
  out.base_path.assign(path);
  return out;
}

} // namespace aiperf::http
