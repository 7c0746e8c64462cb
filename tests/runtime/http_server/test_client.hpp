// A minimal blocking HTTP/1.1 client for loopback tests of our servers
// (Beast, synchronous). Not for production: no timeouts beyond the socket's.
#pragma once

// clang-format off
#include <utility> // first: Boost 1.74 awaitable.hpp needs std::exchange (g++ 12)
// clang-format on

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace aiperf::test {

/// One response, body de-chunked.
struct http_reply {
  unsigned status = 0;
  std::string body;
  std::string content_type;
  bool chunked = false;
  bool keep_alive = false;
};

/// One keep-alive connection to 127.0.0.1:port.
class http_test_client {
public:
  explicit http_test_client(std::uint16_t port) : socket_(ioc_) {
    socket_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  }

  /// Sends a request and reads the whole response.
  http_reply request(boost::beast::http::verb method, std::string_view target,
                     std::string_view body = {},
                     std::string_view content_type = "application/json") {
    namespace http = boost::beast::http;
    using bsv = boost::beast::string_view; // boost's, not std's, in 1.74
    http::request<http::string_body> req{method,
                                         bsv{target.data(), target.size()}, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!content_type.empty() && method == http::verb::post)
      req.set(http::field::content_type,
              bsv{content_type.data(), content_type.size()});
    req.body() = std::string{body};
    req.prepare_payload();
    http::write(socket_, req);
    return read();
  }

  /// Writes raw bytes (for malformed requests).
  void write_raw(std::string_view bytes) {
    boost::asio::write(socket_,
                       boost::asio::buffer(bytes.data(), bytes.size()));
  }

  /// Reads one response.
  http_reply read() {
    namespace http = boost::beast::http;
    http::response_parser<http::string_body> parser;
    parser.body_limit(1ull << 30);
    http::read(socket_, buffer_, parser);
    auto res = parser.release();
    http_reply r;
    r.status = res.result_int();
    r.body = std::move(res.body());
    r.content_type = std::string{res[http::field::content_type]};
    r.chunked = res.chunked();
    r.keep_alive = res.keep_alive();
    return r;
  }

  /// Reads (and drops) bytes until the connection ends; true when the server
  /// closed it (EOF or reset).
  bool closed_by_peer() {
    boost::system::error_code ec;
    char scratch[4096];
    while (!ec)
      socket_.read_some(boost::asio::buffer(scratch), ec);
    return ec == boost::asio::error::eof
           || ec == boost::asio::error::connection_reset;
  }

private:
  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

/// One request on a fresh connection.
inline http_reply
http_fetch(std::uint16_t port, boost::beast::http::verb m,
           std::string_view target, std::string_view body = {},
           std::string_view content_type = "application/json") {
  http_test_client c{port};
  return c.request(m, target, body, content_type);
}

} // namespace aiperf::test
