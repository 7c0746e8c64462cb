#include "tests/runtime/http/test_server.hpp"

#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <charconv>
#include <condition_variable>

namespace aiperf::http::testing {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct test_server::conn {
  explicit conn(asio::io_context& ioc) : sock(ioc) {
    // nop
  }
  tcp::socket sock;
  std::atomic<bool> idle{true};
};

struct test_server::impl {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::mutex stall_mtx;
  std::condition_variable stall_cv;
};

test_server::test_server(handler h)
  : handler_(std::move(h)), impl_(std::make_unique<impl>()) {
  tcp::endpoint ep{asio::ip::make_address("127.0.0.1"), 0};
  impl_->acceptor.open(ep.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(ep);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();
  acceptor_thread_ = std::thread{[this] { accept_loop(); }};
}

test_server::~test_server() {
  stopping_ = true;
  boost::system::error_code ec;
  // Closing from another thread does not wake a blocked accept(); shutdown
  // on the listening fd does.
  ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
  acceptor_thread_.join();
  impl_->acceptor.close(ec);
  {
    std::lock_guard<std::mutex> guard{impl_->stall_mtx};
    impl_->stall_cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> guard{mtx_};
    for (auto& c : conns_)
      c->sock.shutdown(tcp::socket::shutdown_both, ec);
  }
  for (auto& t : threads_)
    t.join();
}

int test_server::close_idle_connections() {
  std::lock_guard<std::mutex> guard{mtx_};
  int n = 0;
  for (auto& c : conns_) {
    if (c->idle.load() && c->sock.is_open()) {
      boost::system::error_code ec;
      c->sock.shutdown(tcp::socket::shutdown_both, ec);
      ++n;
    }
  }
  return n;
}

std::string test_server::content_length_response(const std::string& body,
                                                 const std::string& ctype) {
  return "HTTP/1.1 200 OK\r\nContent-Type: " + ctype
         + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n"
         + body;
}

void test_server::accept_loop() {
  while (!stopping_) {
    auto c = std::make_shared<conn>(impl_->ioc);
    boost::system::error_code ec;
    impl_->acceptor.accept(c->sock, ec);
    if (ec || stopping_)
      return;
    ++accepted_;
    c->sock.set_option(tcp::no_delay{true}, ec); // keep scripted writes apart
    std::lock_guard<std::mutex> guard{mtx_};
    conns_.push_back(c);
    threads_.emplace_back([this, c] { serve(c); });
  }
}

void test_server::serve(std::shared_ptr<conn> c) {
  std::string buf;
  char tmp[16384];
  boost::system::error_code ec;
  for (;;) {
    c->idle = buf.empty();
    std::size_t head_end;
    while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
      auto n = c->sock.read_some(asio::buffer(tmp), ec);
      if (ec)
        return;
      c->idle = false;
      buf.append(tmp, n);
    }
    received_request req;
    req.head = buf.substr(0, head_end + 4);
    buf.erase(0, head_end + 4);
    std::size_t length = 0;
    auto lower = req.head;
    for (auto& ch : lower)
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (auto p = lower.find("content-length:"); p != std::string::npos) {
      auto v = p + 15;
      while (lower[v] == ' ')
        ++v;
      std::from_chars(lower.data() + v, lower.data() + lower.size(), length);
    }
    while (buf.size() < length) {
      auto n = c->sock.read_some(asio::buffer(tmp), ec);
      if (ec)
        return;
      buf.append(tmp, n);
    }
    req.body = buf.substr(0, length);
    buf.erase(0, length);
    ++requests_;
    auto reply = handler_(req);
    if (reply.stall) {
      std::unique_lock<std::mutex> guard{impl_->stall_mtx};
      impl_->stall_cv.wait(guard, [this] { return stopping_.load(); });
      return;
    }
    for (auto& w : reply.writes) {
      asio::write(c->sock, asio::buffer(w), ec);
      if (ec)
        return;
    }
    if (reply.close_after) {
      c->sock.shutdown(tcp::socket::shutdown_both, ec);
      return;
    }
  }
}

} // namespace aiperf::http::testing
