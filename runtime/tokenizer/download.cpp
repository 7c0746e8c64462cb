// clang-format off
#include <utility> // first: Boost 1.74 needs std::exchange (g++ 12)
// clang-format on

#include "runtime/tokenizer/download.hpp"

#include "runtime/tokenizer/hf_tokenizer.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>

namespace aiperf::tokenizer {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace fs = std::filesystem;
using tcp = asio::ip::tcp;

struct target {
  bool tls = false;
  std::string host, port, path;
};

std::optional<target> split_url(std::string_view u) {
  target t;
  if (u.starts_with("https://")) {
    t.tls = true;
    u.remove_prefix(8);
  } else if (u.starts_with("http://")) {
    u.remove_prefix(7);
  } else {
    return std::nullopt;
  }
  auto slash = u.find('/');
  auto hostport = u.substr(0, slash);
  t.path = slash == std::string_view::npos ? "/" : std::string{u.substr(slash)};
  auto colon = hostport.rfind(':');
  if (colon != std::string_view::npos
      && hostport.find(']') == std::string_view::npos) {
    t.host = std::string{hostport.substr(0, colon)};
    t.port = std::string{hostport.substr(colon + 1)};
  } else {
    t.host = std::string{hostport};
    t.port = t.tls ? "443" : "80";
  }
  if (t.host.empty())
    return std::nullopt;
  return t;
}

struct reply {
  unsigned status = 0;
  std::string location, commit, body;
};

template <class Stream>
reply exchange(Stream& stream, const target& t, const std::string& token) {
  bhttp::request<bhttp::empty_body> req{bhttp::verb::get, t.path, 11};
  req.set(bhttp::field::host, t.host);
  req.set(bhttp::field::user_agent, "aiperf-node");
  if (!token.empty())
    req.set(bhttp::field::authorization, "Bearer " + token);
  bhttp::write(stream, req);
  beast::flat_buffer buf;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(1024ull * 1024 * 1024);
  bhttp::read(stream, buf, parser);
  const auto& res = parser.get();
  reply r;
  r.status = res.result_int();
  r.location = std::string{res[bhttp::field::location]};
  r.commit = std::string{res["X-Repo-Commit"]};
  r.body = res.body();
  return r;
}

// One GET, redirects followed; throws on a network error (caught below).
reply get(std::string url, const std::string& token) {
  asio::io_context io;
  std::string commit;
  for (int hop = 0; hop < 6; ++hop) {
    auto t = split_url(url);
    if (!t)
      throw std::runtime_error("not an http(s) URL: " + url);
    tcp::resolver resolver{io};
    auto addrs = resolver.resolve(t->host, t->port);
    reply r;
    if (t->tls) {
      asio::ssl::context ctx{asio::ssl::context::tls_client};
      ctx.set_default_verify_paths();
      ctx.set_verify_mode(asio::ssl::verify_peer);
      beast::ssl_stream<beast::tcp_stream> s{io, ctx};
      SSL_set_tlsext_host_name(s.native_handle(), t->host.c_str());
      s.set_verify_callback(asio::ssl::host_name_verification(t->host));
      beast::get_lowest_layer(s).expires_after(std::chrono::seconds(60));
      beast::get_lowest_layer(s).connect(addrs);
      s.handshake(asio::ssl::stream_base::client);
      r = exchange(s, *t, token);
    } else {
      beast::tcp_stream s{io};
      s.expires_after(std::chrono::seconds(60));
      s.connect(addrs);
      r = exchange(s, *t, token);
    }
    if (commit.empty())
      commit = r.commit;
    if (r.status >= 300 && r.status < 400 && !r.location.empty()) {
      // A relative Location keeps the scheme and host.
      url = r.location.starts_with("/")
                ? std::string{t->tls ? "https://" : "http://"} + t->host + ":"
                      + t->port + r.location
                : r.location;
      continue;
    }
    r.commit = commit;
    return r;
  }
  throw std::runtime_error("more than 5 redirects");
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

} // namespace

caf::expected<fs::path>
download_tokenizer_json(std::string_view repo, std::string_view revision,
                        const fs::path& hub, std::vector<std::string>& tried) {
  auto endpoint = env("HF_ENDPOINT");
  if (endpoint.empty())
    endpoint = "https://huggingface.co";
  while (endpoint.ends_with("/"))
    endpoint.pop_back();
  auto token = env("HF_TOKEN");
  auto base = endpoint + "/" + std::string{repo} + "/resolve/"
              + std::string{revision} + "/";
  auto slash = repo.find('/');
  auto dir = hub
             / ("models--" + std::string{repo.substr(0, slash)} + "--"
                + std::string{repo.substr(slash + 1)});
  reply main_file;
  auto url = base + "tokenizer.json";
  tried.push_back(url);
  try {
    main_file = get(url, token);
  } catch (const std::exception& e) {
    return make_error(errc::not_found, "GET " + url + ": " + e.what());
  }
  if (main_file.status != 200)
    return make_error(errc::not_found,
                      "GET " + url + ": HTTP "
                          + std::to_string(main_file.status)
                          + (main_file.status == 401 || main_file.status == 403
                                 ? " (a gated or private model needs HF_TOKEN)"
                                 : ""));
  auto commit
      = main_file.commit.empty() ? std::string{revision} : main_file.commit;
  auto snap = dir / "snapshots" / commit;
  std::error_code ec;
  fs::create_directories(snap, ec);
  fs::create_directories(dir / "refs", ec);
  {
    std::ofstream out(snap / "tokenizer.json", std::ios::binary);
    out << main_file.body;
    if (!out)
      return make_error(errc::io,
                        "cannot write " + (snap / "tokenizer.json").string());
  }
  try {
    auto config = get(base + "tokenizer_config.json", token);
    if (config.status == 200)
      std::ofstream(snap / "tokenizer_config.json", std::ios::binary)
          << config.body;
  } catch (const std::exception&) {
    // Optional: tokenizer.json alone is enough to count.
  }
  if (commit != revision)
    std::ofstream(dir / "refs" / std::string{revision}) << commit;
  return snap / "tokenizer.json";
}

} // namespace aiperf::tokenizer
