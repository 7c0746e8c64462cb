#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "runtime/http_fetch/http_fetch.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace aiperf::http_fetch {

namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = boost::asio::ip::tcp;

reply call(const endpoint& ep, bhttp::verb verb,
                const std::string& target, std::string body,
                std::chrono::milliseconds timeout) {
  reply out;
  auto where = ep.host + ":" + std::to_string(ep.port);
  try {
    boost::asio::io_context io;
    tcp::resolver resolver{io};
    beast::tcp_stream stream{io};
    stream.expires_after(timeout);
    beast::error_code ec;
    auto results = resolver.resolve(ep.host, std::to_string(ep.port), ec);
    if (ec) {
      out.error = "resolve " + where + ": " + ec.message();
      return out;
    }
    stream.connect(results, ec);
    if (ec) {
      out.error = "connect " + where + ": " + ec.message();
      return out;
    }
    bhttp::request<bhttp::string_body> req{verb, target, 11};
    req.set(bhttp::field::host, ep.host);
    req.body() = std::move(body);
    req.prepare_payload();
    bhttp::write(stream, req, ec);
    if (ec) {
      out.error = "send " + target + " to " + where + ": " + ec.message();
      return out;
    }
    beast::flat_buffer buf;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(std::uint64_t{8} << 30);
    bhttp::read(stream, buf, parser, ec);
    if (ec) {
      out.error = "read " + target + " from " + where + ": " + ec.message();
      return out;
    }
    auto res = parser.release();
    out.status = static_cast<int>(res.result_int());
    out.body = std::move(res.body());
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  } catch (const std::exception& e) {
    // Boost throws on allocation failure and a few socket setup paths.
    out.error = where + ": " + e.what();
  }
  return out;
}

} // namespace

reply get(const endpoint& ep, const std::string& target, std::chrono::milliseconds timeout) {
  return call(ep, bhttp::verb::get, target, {}, timeout);
}

reply put(const endpoint& ep, const std::string& target, std::string body,
          std::chrono::milliseconds timeout) {
  return call(ep, bhttp::verb::put, target, std::move(body), timeout);
}

reply post(const endpoint& ep, const std::string& target, std::string body,
           std::chrono::milliseconds timeout) {
  return call(ep, bhttp::verb::post, target, std::move(body), timeout);
}

} // namespace aiperf::http_fetch
