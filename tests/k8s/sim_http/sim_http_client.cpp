// clang-format off
#include <utility> // first: Boost 1.74 needs std::exchange (g++ 12)
// clang-format on

#include "tests/k8s/sim_http/sim_http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace aiperf::k8s::sim::http::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

namespace {

template <class Stream>
reply exchange(Stream& stream, const std::string& method,
               const std::string& target, const std::string& body,
               const header_list& headers) {
  bhttp::request<bhttp::string_body> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  req.set(bhttp::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers)
    req.insert(k, v);
  if (!body.empty() || method == "POST" || method == "PUT"
      || method == "PATCH") {
    req.body() = body;
    req.prepare_payload();
  }
  reply out;
  boost::system::error_code ec;
  bhttp::write(stream, req, ec);
  if (ec)
    return out;
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(64u << 20);
  bhttp::read(stream, buffer, parser, ec);
  if (ec && !parser.is_header_done())
    return out;
  auto& res = parser.get();
  out.status = res.result_int();
  for (const auto& h : res) {
    std::string name{h.name_string()};
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) {
      return static_cast<char>(std::tolower(c));
    });
    auto& slot = out.headers[name];
    slot += (slot.empty() ? "" : "\n") + std::string{h.value()};
  }
  out.body = res.body();
  return out;
}

} // namespace

reply fetch(std::uint16_t port, const std::string& method,
            const std::string& target, const std::string& body,
            const header_list& headers, const std::string& ca_pem,
            const client_identity& client) {
  asio::io_context ioc;
  tcp::endpoint ep{asio::ip::make_address("127.0.0.1"), port};
  boost::system::error_code ec;
  if (ca_pem.empty()) {
    tcp::socket sock{ioc};
    sock.connect(ep, ec);
    if (ec)
      return {};
    return exchange(sock, method, target, body, headers);
  }
  asio::ssl::context ctx{asio::ssl::context::tls_client};
  ctx.add_certificate_authority(asio::buffer(ca_pem), ec);
  if (ec)
    return {};
  ctx.set_verify_mode(asio::ssl::verify_peer);
  if (!client.cert_pem.empty()) {
    ctx.use_certificate_chain(asio::buffer(client.cert_pem), ec);
    if (!ec)
      ctx.use_private_key(asio::buffer(client.key_pem),
                          asio::ssl::context::pem, ec);
    if (ec)
      return {};
  }
  asio::ssl::stream<tcp::socket> stream{ioc, ctx};
  stream.set_verify_callback(asio::ssl::host_name_verification("127.0.0.1"));
  stream.next_layer().connect(ep, ec);
  if (ec)
    return {};
  stream.handshake(asio::ssl::stream_base::client, ec);
  if (ec)
    return {};
  return exchange(stream, method, target, body, headers);
}

namespace {

int connect_plain(std::uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    auto n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0)
      return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

} // namespace

std::string raw_exchange(std::uint16_t port, const std::string& bytes,
                         std::chrono::milliseconds timeout) {
  int fd = connect_plain(port);
  if (fd < 0)
    return {};
  std::string out;
  if (send_all(fd, bytes)) {
    ::shutdown(fd, SHUT_WR);
    auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[16384];
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        break;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0)
        break;
      auto n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0)
        break;
      out.append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

stream_reader::stream_reader(std::uint16_t port, const std::string& target,
                             const header_list& headers) {
  fd_ = connect_plain(port);
  if (fd_ < 0) {
    closed_ = true;
    return;
  }
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const auto& [k, v] : headers)
    req += k + ": " + v + "\r\n";
  req += "\r\n";
  send_all(fd_, req);
  thread_ = std::thread([this] { run(); });
}

stream_reader::~stream_reader() {
  if (fd_ >= 0)
    ::shutdown(fd_, SHUT_RDWR);
  if (thread_.joinable())
    thread_.join();
  if (fd_ >= 0)
    ::close(fd_);
}

void stream_reader::run() {
  char buf[16384];
  for (;;) {
    auto n = ::recv(fd_, buf, sizeof buf, 0);
    std::lock_guard guard{mutex_};
    if (n <= 0) {
      closed_ = true;
      return;
    }
    raw_.append(buf, static_cast<std::size_t>(n));
  }
}

std::string dechunk(const std::string& raw, bool* complete) {
  *complete = false;
  auto pos = raw.find("\r\n\r\n");
  if (pos == std::string::npos)
    return {};
  pos += 4;
  std::string body;
  while (pos < raw.size()) {
    auto eol = raw.find("\r\n", pos);
    if (eol == std::string::npos)
      break;
    std::size_t size = std::stoul(raw.substr(pos, eol - pos), nullptr, 16);
    if (size == 0) {
      *complete = true;
      break;
    }
    if (eol + 2 + size > raw.size())
      break;
    body.append(raw, eol + 2, size);
    pos = eol + 2 + size + 2;
  }
  return body;
}

std::vector<std::string>
stream_reader::wait_lines(std::size_t n, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    std::vector<std::string> lines;
    bool closed = false;
    {
      std::lock_guard guard{mutex_};
      bool complete = false;
      auto body = dechunk(raw_, &complete);
      std::size_t start = 0;
      for (auto nl = body.find('\n'); nl != std::string::npos;
           nl = body.find('\n', start)) {
        lines.push_back(body.substr(start, nl - start));
        start = nl + 1;
      }
      closed = closed_;
    }
    if (lines.size() >= n || closed
        || std::chrono::steady_clock::now() > deadline)
      return lines;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool stream_reader::wait_closed(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    {
      std::lock_guard guard{mutex_};
      if (closed_)
        return true;
    }
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string stream_reader::raw() {
  std::lock_guard guard{mutex_};
  return raw_;
}

bool stream_reader::clean_end() {
  std::lock_guard guard{mutex_};
  bool complete = false;
  dechunk(raw_, &complete);
  return complete;
}

} // namespace aiperf::k8s::sim::http::testing
