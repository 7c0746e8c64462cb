#include "runtime/http_server/http_server.hpp"

#include "runtime/log/log.hpp"
#include "runtime/time/receive_stamp.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <list>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <thread>

namespace aiperf::http_server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

using reuse_port
    = asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;

// Request headers beyond this are refused with 431; chat prompts go in the
// body, so 16 KiB of headers is generous.
constexpr std::uint32_t header_limit = 16 * 1024;
// One read should take a whole request: an unreserved flat_buffer makes Beast
// read 512 bytes at a time.
constexpr std::size_t read_buffer_size = 64 * 1024;

void append_decimal(std::string& out, std::uint64_t value) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value);
  (void)ec; // 24 bytes always fit a uint64
  out.append(digits, end);
}

void append_hex(std::string& out, std::uint64_t value) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), value, 16);
  (void)ec;
  out.append(digits, end);
}

std::string plain_error_json(std::string_view message, std::string_view type) {
  std::string out = R"({"error":{"message":")";
  out.append(message);
  out.append(R"(","type":")");
  out.append(type);
  out.append(R"(","param":null,"code":null}})");
  return out;
}

/// The read side of a connection for Beast, through recvmsg so that each read
/// also returns the kernel's receive timestamp of the bytes (SO_TIMESTAMPNS).
/// A request's arrival is then the time its last bytes reached the socket,
/// not the later moment this loop got round to reading them: a server busy
/// with other connections does not add its own queueing to what it reports.
class stamped_reader {
public:
  using executor_type = tcp::socket::executor_type;

  explicit stamped_reader(tcp::socket& socket) : socket_(socket) {
    time::enable_receive_stamps(socket_.native_handle());
    boost::system::error_code ignored;
    socket_.non_blocking(true, ignored);
  }

  executor_type get_executor() { return socket_.get_executor(); }

  /// CLOCK_MONOTONIC time at which the kernel received the bytes of the
  /// last read; now() when the kernel gave no stamp.
  [[nodiscard]] clock::time_point last_received() const noexcept {
    return last_received_;
  }

  /// AsyncReadStream: a speculative recvmsg, then wait for readability.
  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return asio::async_initiate<Token,
                                void(boost::system::error_code, std::size_t)>(
        [this](auto handler, const MutableBuffers& bufs) {
          boost::system::error_code ec;
          std::size_t n = 0;
          if (try_read(bufs, ec, n)) {
            // Done now, but a handler must not run inside its initiation.
            asio::post(socket_.get_executor(),
                       [h = std::move(handler), ec, n]() mutable { h(ec, n); });
            return;
          }
          wait_then_read(std::move(handler), bufs);
        },
        token, buffers);
  }

private:
  template <class Handler, class MutableBuffers>
  void wait_then_read(Handler handler, const MutableBuffers& bufs) {
    socket_.async_wait(
        tcp::socket::wait_read,
        [this, h = std::move(handler), bufs](boost::system::error_code ec) mutable {
          std::size_t n = 0;
          if (!ec && !try_read(bufs, ec, n)) {
            wait_then_read(std::move(h), bufs); // woken without data
            return;
          }
          h(ec, n);
        });
  }

  /// False when nothing can be read yet (EAGAIN); otherwise sets `ec`/`n`.
  template <class MutableBuffers>
  bool try_read(const MutableBuffers& bufs, boost::system::error_code& ec,
                std::size_t& n) {
    iovec iov[8];
    int count = 0;
    for (auto it = asio::buffer_sequence_begin(bufs);
         it != asio::buffer_sequence_end(bufs) && count < 8; ++it) {
      asio::mutable_buffer b = *it;
      iov[count++] = iovec{b.data(), b.size()};
    }
    auto r = time::read_stamped(socket_.native_handle(), iov, count);
    if (r.bytes < 0) {
      if (r.error == EAGAIN || r.error == EWOULDBLOCK)
        return false;
      ec = boost::system::error_code{r.error, boost::system::system_category()};
      return true;
    }
    if (r.bytes == 0) {
      ec = asio::error::eof;
      return true;
    }
    n = static_cast<std::size_t>(r.bytes);
    last_received_
        = r.received_ns != 0
              ? clock::time_point{std::chrono::nanoseconds{r.received_ns}}
              : clock::now();
    return true;
  }

  tcp::socket& socket_;
  clock::time_point last_received_{};
};

} // namespace

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::bind_failed:
      return "bind_failed";
    case errc::bad_config:
      return "bad_config";
    case errc::already_started:
      return "already_started";
  }
  return "unknown";
}

std::string_view reason_phrase(unsigned status) noexcept {
  switch (status) {
  case 200:
    return "OK";
  case 201:
    return "Created";
  case 204:
    return "No Content";
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
  case 409:
    return "Conflict";
  case 413:
    return "Payload Too Large";
  case 415:
    return "Unsupported Media Type";
  case 422:
    return "Unprocessable Entity";
  case 429:
    return "Too Many Requests";
  case 431:
    return "Request Header Fields Too Large";
  case 500:
    return "Internal Server Error";
  case 502:
    return "Bad Gateway";
  case 503:
    return "Service Unavailable";
  default:
    return "Unknown";
  }
}

// -- response_writer ----------------------------------------------------------

response_writer::response_writer(tcp::socket& socket, asio::steady_timer& timer,
                                 std::string& buffer, bool keep_alive,
                                 clock::time_point received)
    : socket_(socket), timer_(timer), out_(buffer), keep_alive_(keep_alive),
      received_(received == clock::time_point{} ? clock::now() : received) {
  out_.clear();
}

void response_writer::append_head(unsigned status,
                                  std::string_view content_type,
                                  std::string_view extra_headers) {
  status_ = status;
  out_.append("HTTP/1.1 ");
  append_decimal(out_, status);
  out_.push_back(' ');
  out_.append(reason_phrase(status));
  out_.append("\r\nServer: aiperf-node\r\nContent-Type: ");
  out_.append(content_type);
  out_.append("\r\n");
  if (!keep_alive_)
    out_.append("Connection: close\r\n");
  out_.append(extra_headers);
}

std::string response_writer::peer_address() const {
  boost::system::error_code ec;
  auto ep = socket_.remote_endpoint(ec);
  if (ec)
    return "-";
  auto a = ep.address();
  // An IPv4 client on a dual-stack socket shows as ::ffff:a.b.c.d.
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, a.to_v6()).to_string();
  return a.to_string();
}

asio::awaitable<void> response_writer::send(unsigned status,
                                            std::string_view content_type,
                                            std::string_view body,
                                            std::string_view extra_headers) {
  append_head(status, content_type, extra_headers);
  out_.append("Content-Length: ");
  append_decimal(out_, body.size());
  out_.append("\r\n\r\n");
  out_.append(body);
  done_ = true;
  co_await flush();
}

void response_writer::begin_chunked(unsigned status,
                                    std::string_view content_type,
                                    std::string_view extra_headers) {
  append_head(status, content_type, extra_headers);
  out_.append("Transfer-Encoding: chunked\r\n\r\n");
}

void response_writer::append_chunk(std::string_view data) {
  if (data.empty())
    return;
  append_hex(out_, data.size());
  out_.append("\r\n");
  out_.append(data);
  out_.append("\r\n");
}

namespace {

/// Running average (1/16) of how late this io thread wakes after a timer
/// expires; one per thread because each thread has its own epoll loop.
thread_local clock::duration wake_margin{};
constexpr clock::duration max_wake_margin = std::chrono::microseconds{100};

} // namespace

asio::awaitable<void> response_writer::wait_until(clock::time_point deadline) {
  if (deadline <= clock::now() || failed_)
    co_return;
  co_await flush();
  const auto armed = deadline - wake_margin;
  if (armed > clock::now()) {
    timer_.expires_at(armed);
    boost::system::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) { // cancelled: the server is stopping
      failed_ = true;
      co_return;
    }
    auto late = std::clamp<clock::duration>(clock::now() - armed,
                                            clock::duration::zero(),
                                            max_wake_margin);
    wake_margin += (late - wake_margin) / 16;
  }
  while (clock::now() < deadline) // at most the margin armed with
    ;
}

asio::awaitable<void> response_writer::flush() {
  if (out_.empty())
    co_return;
  if (failed_) {
    out_.clear();
    co_return;
  }
  boost::system::error_code ec;
  co_await asio::async_write(socket_, asio::buffer(out_),
                             asio::redirect_error(asio::use_awaitable, ec));
  out_.clear();
  if (ec)
    failed_ = true;
}

asio::awaitable<void> response_writer::end_chunked() {
  out_.append("0\r\n\r\n");
  done_ = true;
  co_await flush();
}

// -- server -------------------------------------------------------------------

// Owned by one io thread; everything in it is touched only from that thread
// (start() and stop() reach it through asio::post).
struct server::worker {
  struct connection {
    explicit connection(tcp::socket s) : socket(std::move(s)) {}
    tcp::socket socket;
    bool idle = true; // no request being answered: safe to close on stop
  };

  worker(const options& o, const handler& h,
         std::shared_ptr<std::atomic<std::size_t>> count)
      : ioc(1), acceptor(ioc), opts(o), on_request(h),
        connections(std::move(count)) {}

  asio::io_context ioc;
  tcp::acceptor acceptor;
  const options& opts;
  const handler& on_request;
  std::shared_ptr<std::atomic<std::size_t>> connections;
  std::list<connection> open;
  bool stopping = false;
  std::thread thread;

  std::string bind(const tcp::endpoint& ep) {
    boost::system::error_code ec;
    acceptor.open(ep.protocol(), ec);
    if (!ec)
      acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec)
      acceptor.set_option(reuse_port(true), ec);
    if (!ec)
      acceptor.bind(ep, ec);
    if (!ec)
      acceptor.listen(asio::socket_base::max_listen_connections, ec);
    return ec ? ec.message() : std::string{};
  }

  asio::awaitable<void> accept_loop() {
    asio::steady_timer backoff{ioc};
    for (;;) {
      boost::system::error_code ec;
      tcp::socket socket{ioc};
      co_await acceptor.async_accept(
          socket, asio::redirect_error(asio::use_awaitable, ec));
      if (stopping || ec == asio::error::operation_aborted)
        co_return;
      if (ec) {
        // EMFILE and friends: keep serving the connections we have.
        log::get("http_server")->warn("accept failed: {}", ec.message());
        backoff.expires_after(std::chrono::milliseconds(10));
        co_await backoff.async_wait(
            asio::redirect_error(asio::use_awaitable, ec));
        continue;
      }
      socket.set_option(tcp::no_delay(true), ec);
      open.emplace_back(std::move(socket));
      connections->fetch_add(1, std::memory_order_relaxed);
      asio::co_spawn(ioc, session(std::prev(open.end())), asio::detached);
    }
  }

  static asio::awaitable<void> reject(tcp::socket& socket,
                                      asio::steady_timer& timer,
                                      std::string& out, unsigned status,
                                      std::string_view message) {
    response_writer w{socket, timer, out, false};
    co_await w.send(status, "application/json",
                    plain_error_json(message, "invalid_request_error"));
  }

  asio::awaitable<void> session(std::list<connection>::iterator it) {
    tcp::socket& socket = it->socket;
    stamped_reader reader{socket};
    beast::flat_buffer buffer;
    buffer.reserve(read_buffer_size);
    asio::steady_timer timer{ioc};
    std::string out;
    out.reserve(16 * 1024);
    for (;;) {
      it->idle = true;
      http::request_parser<http::string_body> parser;
      parser.header_limit(header_limit);
      parser.body_limit(opts.body_limit);
      boost::system::error_code ec;
      co_await http::async_read_header(
          reader, buffer, parser,
          asio::redirect_error(asio::use_awaitable, ec));
      if (!ec && !parser.is_done()) {
        // curl sends `Expect: 100-continue` for bodies over 1 KiB and waits
        // a second for this interim answer before sending the body.
        auto expect = parser.get()[http::field::expect];
        if (beast::iequals(expect, "100-continue")) {
          static constexpr std::string_view go_on
              = "HTTP/1.1 100 Continue\r\n\r\n";
          co_await asio::async_write(
              socket, asio::buffer(go_on.data(), go_on.size()),
              asio::redirect_error(asio::use_awaitable, ec));
        }
        if (!ec)
          co_await http::async_read(
              reader, buffer, parser,
              asio::redirect_error(asio::use_awaitable, ec));
      }
      if (ec) {
        if (ec == http::error::body_limit)
          co_await reject(socket, timer, out, 413,
                          "request body exceeds the server's body limit");
        else if (ec == http::error::header_limit)
          co_await reject(socket, timer, out, 431, "request headers too large");
        else if (ec.category()
                     == http::make_error_code(http::error::end_of_stream)
                            .category()
                 && ec != http::error::end_of_stream
                 && ec != http::error::partial_message)
          co_await reject(socket, timer, out, 400, "malformed HTTP request");
        break; // peer closed, reset, or we are stopping
      }
      it->idle = false;
      request req = parser.release();
      response_writer w{socket, timer, out, req.keep_alive() && !stopping,
                        reader.last_received()};
      bool handler_failed = false;
      try {
        co_await on_request(req, w);
      } catch (const std::exception& e) {
        log::get("http_server")->error("handler threw: {}", e.what());
        handler_failed = true;
      }
      if (!w.done() && !w.failed() && handler_failed)
        co_await w.send(
            500, "application/json",
            plain_error_json("internal server error", "server_error"));
      else if (!w.done() && !w.failed())
        co_await w.send(
            500, "application/json",
            plain_error_json("handler produced no response", "server_error"));
      if (w.failed() || !w.keep_alive() || stopping)
        break;
    }
    boost::system::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_send, ignored);
    socket.close(ignored);
    open.erase(it);
    connections->fetch_sub(1, std::memory_order_relaxed);
  }

  // Runs on the io thread.
  void begin_stop() {
    stopping = true;
    boost::system::error_code ignored;
    acceptor.close(ignored);
    for (auto& c : open)
      if (c.idle)
        c.socket.close(ignored);
  }
};

server::server(options opts, handler h)
    : opts_(std::move(opts)), handler_(std::move(h)),
      connections_(std::make_shared<std::atomic<std::size_t>>(0)) {}

server::~server() {
  stop();
}

caf::expected<std::uint16_t> server::start() {
  if (started_)
    return make_error(errc::already_started, "http server already started");
  if (opts_.threads == 0 || opts_.threads > 256)
    return make_error(errc::bad_config,
                      "threads must be between 1 and 256, got "
                          + std::to_string(opts_.threads));
  boost::system::error_code ec;
  auto address = asio::ip::make_address(opts_.host, ec);
  if (ec)
    return make_error(errc::bad_config,
                      "host '" + opts_.host
                          + "' is not an IP address (use e.g. 127.0.0.1 or ::1)");
  std::uint16_t port = opts_.port;
  if (port != 0) {
    // SO_REUSEPORT would let us silently share a port that another of our
    // servers holds; a plain bind first makes "address in use" visible.
    asio::io_context probe_ctx;
    tcp::acceptor probe{probe_ctx};
    tcp::endpoint ep{address, port};
    probe.open(ep.protocol(), ec);
    if (!ec)
      probe.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec)
      probe.bind(ep, ec);
    if (ec)
      return make_error(errc::bind_failed,
                        "cannot listen on " + opts_.host + ":"
                            + std::to_string(port) + ": " + ec.message()
                            + " (pick another --port, or 0 for a free one)");
  }
  for (unsigned i = 0; i < opts_.threads; ++i) {
    auto w = std::make_unique<worker>(opts_, handler_, connections_);
    if (auto err = w->bind(tcp::endpoint{address, port}); !err.empty()) {
      workers_.clear();
      return make_error(errc::bind_failed, "cannot listen on " + opts_.host
                                               + ":" + std::to_string(port)
                                               + ": " + err);
    }
    // Later listeners share the port the first one got (port 0 case).
    port = w->acceptor.local_endpoint(ec).port();
    workers_.push_back(std::move(w));
  }
  for (auto& w : workers_) {
    asio::co_spawn(w->ioc, w->accept_loop(), asio::detached);
    w->thread = std::thread{[raw = w.get(), nice = opts_.thread_nice] {
      if (nice != 0) // best effort: without the capability, keep priority
        ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), nice);
      raw->ioc.run();
    }};
  }
  started_ = true;
  port_ = port;
  return port;
}

void server::stop() {
  if (!started_ || stopped_)
    return;
  stopped_ = true;
  for (auto& w : workers_)
    asio::post(w->ioc, [raw = w.get()] { raw->begin_stop(); });
  // Busy connections close themselves after their response.
  const auto deadline = clock::now() + opts_.stop_grace;
  while (connections_->load(std::memory_order_relaxed) > 0
         && clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (auto& w : workers_)
    w->ioc.stop();
  for (auto& w : workers_)
    if (w->thread.joinable())
      w->thread.join();
  workers_.clear();
}

} // namespace aiperf::http_server
