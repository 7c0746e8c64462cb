#include "tests/k8s/client/canned_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <arpa/inet.h>
#include <cstdlib>
#include <fstream>
#include <netinet/in.h>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>

namespace aiperf::k8s::client::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in{path};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out{path};
  out << text;
  out.close();
  return static_cast<bool>(out);
}

bool run(const std::string& cmd) {
  return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
}

template <class Stream> class stream_exchange final : public exchange {
public:
  stream_exchange(canned_server& server, Stream& s, tcp::socket& sock,
                  bool keep_alive)
      : server_(server), s_(s), sock_(sock), keep_alive_(keep_alive) {
    // nop
  }

  void
  reply(int status, std::string body,
        std::vector<std::pair<std::string, std::string>> headers) override {
    bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(status),
                                            11};
    res.set(bhttp::field::content_type, "application/json");
    for (auto& [k, v] : headers)
      res.insert(k, v);
    res.body() = std::move(body);
    res.keep_alive(keep_alive_);
    res.prepare_payload();
    beast::error_code ec;
    bhttp::write(s_, res, ec);
    closed_ = closed_ || ec || !keep_alive_;
  }

  void stream() override {
    bhttp::response<bhttp::empty_body> res{bhttp::status::ok, 11};
    res.set(bhttp::field::content_type, "application/json");
    res.chunked(true);
    bhttp::response_serializer<bhttp::empty_body> sr{res};
    beast::error_code ec;
    bhttp::write_header(s_, sr, ec);
    if (ec) {
      closed_ = true;
      return;
    }
    server_.stream_opened(true);
    canned_server::feed_item item;
    while (server_.next_item(item)) {
      if (item.kind == canned_server::feed_item::line
          || item.kind == canned_server::feed_item::raw) {
        if (item.kind == canned_server::feed_item::line)
          item.text += '\n';
        asio::write(s_, bhttp::make_chunk(asio::buffer(item.text)), ec);
        if (ec)
          break;
        continue;
      }
      if (item.kind == canned_server::feed_item::end) {
        asio::write(s_, bhttp::make_chunk_last(), ec);
        break;
      }
      drop();
      break;
    }
    server_.stream_opened(false);
    closed_ = true; // one stream per connection, as watches are
  }

  void drop() override {
    beast::error_code ec;
    sock_.shutdown(tcp::socket::shutdown_both, ec);
    closed_ = true;
  }

  bool closed() const { return closed_; }

private:
  canned_server& server_;
  Stream& s_;
  tcp::socket& sock_;
  bool keep_alive_;
  bool closed_ = false;
};

template <class Stream>
void serve(canned_server& server, Stream& s, tcp::socket& sock,
           int connection) {
  beast::flat_buffer buf;
  for (;;) {
    bhttp::request<bhttp::string_body> req;
    beast::error_code ec;
    bhttp::read(s, buf, req, ec);
    if (ec)
      return;
    canned_request r;
    r.method = std::string{req.method_string()};
    r.target = std::string{req.target()};
    r.body = req.body();
    r.connection = connection;
    for (const auto& f : req) {
      std::string name{f.name_string()};
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      r.headers[name] = std::string{f.value()};
    }
    server.record(r);
    stream_exchange<Stream> ex{server, s, sock, req.keep_alive()};
    server.handle(r, ex);
    if (ex.closed())
      return;
  }
}

} // namespace

std::string pki::ca_pem() const {
  return slurp(dir + "/ca.pem");
}
std::string pki::client_cert_pem() const {
  return slurp(dir + "/client.pem");
}
std::string pki::client_key_pem() const {
  return slurp(dir + "/client.key");
}

bool make_pki(const std::string& dir) {
  auto ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  auto cd = "cd " + dir + " && ";
  return run(cd + "openssl req -x509" + ec
             + " -keyout ca.key -out ca.pem -days 2 -subj /CN=test-ca")
         && run(
             cd + "openssl req" + ec
             + " -keyout server.key -out server.csr -subj /CN=kube-apiserver")
         && write_file(
             dir + "/san.ext",
             "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:api.internal\n")
         && run(cd
                + "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key "
                  "-CAcreateserial "
                  "-out server.pem -days 2 -extfile san.ext")
         && run(cd + "openssl req" + ec
                + " -keyout client.key -out client.csr -subj "
                  "/CN=system:admin/O=system:masters")
         && run(cd
                + "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key "
                  "-CAcreateserial "
                  "-out client.pem -days 2");
}

canned_server::canned_server(options opts, handler h)
    : handle(std::move(h)), opts_(opts) {
  if (opts_.tls) {
    auto* ctx = new ssl::context{ssl::context::tls_server};
    ctx->use_certificate_chain_file(opts_.pki_dir + "/server.pem");
    ctx->use_private_key_file(opts_.pki_dir + "/server.key", ssl::context::pem);
    if (opts_.require_client_cert) {
      ctx->load_verify_file(opts_.pki_dir + "/ca.pem");
      ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    }
    ssl_ctx_ = ctx;
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::listen(listen_fd_, 64);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread{[this] { accept_loop(); }};
}

canned_server::~canned_server() {
  {
    std::lock_guard guard{mtx_};
    stopping_ = true;
    for (int fd : fds_)
      ::shutdown(fd, SHUT_RDWR);
  }
  cv_.notify_all();
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  for (auto& t : workers_)
    t.join();
  delete static_cast<ssl::context*>(ssl_ctx_);
}

std::string canned_server::url() const {
  return std::string{opts_.tls ? "https" : "http"}
         + "://127.0.0.1:" + std::to_string(port_);
}

void canned_server::accept_loop() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      return;
    std::lock_guard guard{mtx_};
    if (stopping_) {
      ::close(fd);
      return;
    }
    int connection = ++connections_;
    fds_.push_back(fd);
    workers_.emplace_back([this, fd, connection] {
      asio::io_context ioc;
      tcp::socket sock{ioc};
      sock.assign(tcp::v4(), fd);
      if (opts_.tls) {
        ssl::stream<tcp::socket&> s{sock,
                                    *static_cast<ssl::context*>(ssl_ctx_)};
        beast::error_code ec;
        s.handshake(ssl::stream_base::server, ec);
        if (!ec)
          serve(*this, s, sock, connection);
      } else {
        serve(*this, sock, sock, connection);
      }
      std::lock_guard guard{mtx_};
      fds_.erase(std::remove(fds_.begin(), fds_.end(), fd), fds_.end());
    });
  }
}

std::vector<canned_request> canned_server::requests() const {
  std::lock_guard guard{mtx_};
  return requests_;
}

bool canned_server::wait_requests(std::size_t n) {
  std::unique_lock guard{mtx_};
  return cv_.wait_for(guard, 20s, [&] { return requests_.size() >= n; });
}

int canned_server::connections() const {
  std::lock_guard guard{mtx_};
  return connections_;
}

void canned_server::record(canned_request r) {
  {
    std::lock_guard guard{mtx_};
    requests_.push_back(std::move(r));
  }
  cv_.notify_all();
}

void canned_server::push_line(std::string line) {
  {
    std::lock_guard guard{mtx_};
    feed_.push_back({feed_item::line, std::move(line)});
  }
  cv_.notify_all();
}

void canned_server::push_raw(std::string bytes) {
  {
    std::lock_guard guard{mtx_};
    feed_.push_back({feed_item::raw, std::move(bytes)});
  }
  cv_.notify_all();
}

void canned_server::end_streams() {
  {
    std::lock_guard guard{mtx_};
    feed_.push_back({feed_item::end, {}});
  }
  cv_.notify_all();
}

void canned_server::drop_streams() {
  {
    std::lock_guard guard{mtx_};
    feed_.push_back({feed_item::drop, {}});
  }
  cv_.notify_all();
}

bool canned_server::next_item(feed_item& out) {
  std::unique_lock guard{mtx_};
  cv_.wait(guard, [&] { return stopping_ || !feed_.empty(); });
  if (stopping_)
    return false;
  out = std::move(feed_.front());
  feed_.pop_front();
  return true;
}

void canned_server::stream_opened(bool open) {
  {
    std::lock_guard guard{mtx_};
    open_streams_ += open ? 1 : -1;
  }
  cv_.notify_all();
}

bool canned_server::wait_stream() {
  std::unique_lock guard{mtx_};
  return cv_.wait_for(guard, 20s, [&] { return open_streams_ > 0; });
}

} // namespace aiperf::k8s::client::test
