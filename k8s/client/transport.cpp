#include "k8s/client/transport.hpp"

#include "k8s/client/config.hpp"
#include "k8s/object/wire.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <set>
#include <thread>
#include <utility> // before Asio: Boost 1.74's awaitable.hpp needs std::exchange

namespace aiperf::k8s::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using asio::awaitable;

namespace {

auto on_error(beast::error_code& ec) {
  return asio::redirect_error(asio::use_awaitable, ec);
}

struct host_port {
  std::string host; // without brackets
  std::string port;
  std::string authority; // host:port as written in Host / CONNECT
};

caf::expected<host_port> split_authority(std::string_view text,
                                         std::string_view default_port,
                                         std::string_view what) {
  host_port out;
  if (auto at = text.rfind('@'); at != std::string_view::npos)
    text.remove_prefix(at + 1);
  text = text.substr(0, text.find('/'));
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos)
      return make_error(errc::bad_config,
                        std::string{what} + ": unclosed '[' in the host");
    out.host = std::string{text.substr(1, close - 1)};
    if (close + 1 < text.size() && text[close + 1] == ':')
      port = text.substr(close + 2);
  } else if (auto colon = text.rfind(':'); colon != std::string_view::npos) {
    out.host = std::string{text.substr(0, colon)};
    port = text.substr(colon + 1);
  } else {
    out.host = std::string{text};
  }
  if (out.host.empty())
    return make_error(errc::bad_config, std::string{what} + ": no host");
  out.port = port.empty() ? std::string{default_port} : std::string{port};
  bool v6 = out.host.find(':') != std::string::npos;
  out.authority = (v6 ? "[" + out.host + "]" : out.host) + ":" + out.port;
  return out;
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1
         || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string openssl_error() {
  auto code = ERR_get_error();
  if (code == 0)
    return "not PEM";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

struct connection {
  explicit connection(asio::io_context& ioc)
      : plain(std::make_unique<beast::tcp_stream>(ioc)) {
    // nop
  }
  beast::tcp_stream& lowest() { return tls ? tls->next_layer() : *plain; }

  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
};

bool is_stale_connection_error(const beast::error_code& ec) {
  return ec == bhttp::error::end_of_stream
         || ec == asio::error::connection_reset
         || ec == asio::error::broken_pipe || ec == asio::error::eof
         || ec == ssl::error::stream_truncated;
}

} // namespace

class io_runner {
public:
  io_runner() : work_(asio::make_work_guard(ioc_)) {
    thread_ = std::thread{[this] { ioc_.run(); }};
  }
  void stop() {
    work_.reset();
    ioc_.stop();
    if (thread_.joinable())
      thread_.join();
  }
  ~io_runner() { stop(); }
  asio::io_context& context() { return ioc_; }
  bool on_this_thread() const noexcept {
    return thread_.get_id() == std::this_thread::get_id();
  }

private:
  asio::io_context ioc_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
};

class transport_impl : public std::enable_shared_from_this<transport_impl> {
public:
  transport_impl(asio::io_context& ioc, transport_options opts)
      : ioc_(ioc), opts_(std::move(opts)), ctx_(ssl::context::tls_client) {
    // nop
  }

  caf::expected<void> init() {
    std::string_view server = opts_.server;
    if (server.rfind("https://", 0) == 0) {
      tls_ = true;
      server.remove_prefix(8);
    } else if (server.rfind("http://", 0) == 0) {
      server.remove_prefix(7);
    } else {
      return make_error(errc::bad_config,
                        "server " + opts_.server
                            + " is not an http:// or https:// URL: fix "
                              "clusters[].cluster.server");
    }
    auto hp = split_authority(server, tls_ ? "443" : "80",
                              "server " + opts_.server);
    if (!hp)
      return std::move(hp.error());
    server_ = std::move(*hp);
    if (!opts_.proxy_url.empty()) {
      std::string_view p = opts_.proxy_url;
      p.remove_prefix(p.find("://") + 3);
      auto at = p.substr(0, p.find('/')).rfind('@');
      if (at != std::string_view::npos)
        proxy_auth_ = base64_encode(p.substr(0, at));
      auto php = split_authority(p, "80", "proxy " + opts_.proxy_url);
      if (!php)
        return std::move(php.error());
      proxy_ = std::move(*php);
    }
    if (!tls_)
      return {};
    beast::error_code ec;
    ctx_.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2
                     | ssl::context::no_sslv3);
    if (opts_.insecure_skip_tls_verify) {
      ctx_.set_verify_mode(ssl::verify_none);
    } else {
      ctx_.set_verify_mode(ssl::verify_peer);
      if (opts_.ca_pem.empty()) {
        ctx_.set_default_verify_paths(ec);
      } else {
        auto* store = SSL_CTX_get_cert_store(ctx_.native_handle());
        BIO* bio = BIO_new_mem_buf(opts_.ca_pem.data(),
                                   static_cast<int>(opts_.ca_pem.size()));
        int added = 0;
        while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
          X509_STORE_add_cert(store, cert);
          X509_free(cert);
          ++added;
        }
        BIO_free(bio);
        ERR_clear_error();
        if (added == 0)
          return make_error(errc::credentials,
                            "server " + opts_.server
                                + ": the certificate authority holds no PEM "
                                  "certificate: check "
                                  "certificate-authority(-data)");
      }
    }
    if (!opts_.client_cert_pem.empty()) {
      ctx_.use_certificate_chain(asio::buffer(opts_.client_cert_pem), ec);
      if (ec)
        return make_error(
            errc::credentials,
            "server " + opts_.server + ": the client certificate is not PEM ("
                + openssl_error() + "): check client-certificate(-data)");
      ctx_.use_private_key(asio::buffer(opts_.client_key_pem),
                           ssl::context::pem, ec);
      if (ec)
        return make_error(errc::credentials,
                          "server " + opts_.server
                              + ": the client key is not PEM or does not "
                                "match the certificate ("
                              + openssl_error() + "): check client-key(-data)");
    }
    return {};
  }

  void send(http_exchange ex, std::function<void(http_result)> done) {
    auto self = shared_from_this();
    asio::co_spawn(
        ioc_,
        [self, ex = std::move(ex),
         done = std::move(done)]() mutable -> awaitable<void> {
          auto result = co_await self->exchange(ex);
          done(std::move(result));
        },
        asio::detached);
  }

  std::uint64_t open_stream(http_exchange ex, stream_handlers h) {
    auto id = ++next_stream_id_;
    auto self = shared_from_this();
    asio::co_spawn(
        ioc_,
        [self, id, ex = std::move(ex), h = std::move(h)]() mutable
        -> awaitable<void> { co_await self->stream(id, ex, h); },
        asio::detached);
    return id;
  }

  void close_stream(std::uint64_t id) {
    asio::post(ioc_, [self = shared_from_this(), id] {
      self->cancelled_.insert(id);
      if (auto i = self->streams_.find(id); i != self->streams_.end())
        i->second->lowest().close();
    });
  }

  /// Runs after the I/O thread has stopped.
  void drop_connections() {
    idle_.clear();
    streams_.clear();
  }

  std::uint64_t connections_opened() const noexcept { return opened_.load(); }

private:
  std::string where() const {
    return (tls_ ? "https://" : "http://") + server_.authority;
  }

  bhttp::request<bhttp::string_body>
  make_request(const http_exchange& ex) const {
    bhttp::request<bhttp::string_body> req;
    req.method_string(ex.method);
    req.target(ex.target);
    req.version(11);
    req.set(bhttp::field::host, server_.authority);
    for (const auto& [k, v] : ex.headers)
      req.insert(k, v);
    req.body() = ex.body;
    if (!ex.body.empty() || ex.method == "POST" || ex.method == "PUT"
        || ex.method == "PATCH")
      req.prepare_payload();
    return req;
  }

  /// Opens `c` (resolve, connect, CONNECT through the proxy, TLS); an
  /// empty string on success, else why not.
  awaitable<std::string> connect(connection& c) {
    beast::error_code ec;
    const auto& target = proxy_ ? *proxy_ : server_;
    tcp::resolver resolver{ioc_};
    auto results = co_await resolver.async_resolve(target.host, target.port,
                                                   on_error(ec));
    if (ec)
      co_return "resolve " + target.host + ": " + ec.message();
    co_await c.lowest().async_connect(results, on_error(ec));
    if (ec)
      co_return "connect to " + (proxy_ ? "proxy " + opts_.proxy_url : where())
          + ": " + ec.message();
    ++opened_;
    c.lowest().socket().set_option(tcp::no_delay{true}, ec);
    if (proxy_) {
      bhttp::request<bhttp::empty_body> req{bhttp::verb::connect,
                                            server_.authority, 11};
      req.set(bhttp::field::host, server_.authority);
      if (!proxy_auth_.empty())
        req.set(bhttp::field::proxy_authorization, "Basic " + proxy_auth_);
      co_await bhttp::async_write(c.lowest(), req, on_error(ec));
      bhttp::response_parser<bhttp::empty_body> p;
      p.skip(true); // a 2xx answer to CONNECT has no body: the tunnel follows
      if (!ec)
        co_await bhttp::async_read_header(c.lowest(), c.buffer, p,
                                          on_error(ec));
      if (ec)
        co_return "proxy " + opts_.proxy_url + ": CONNECT " + server_.authority
            + ": " + ec.message();
      if (p.get().result_int() != 200)
        co_return "proxy " + opts_.proxy_url + " refused CONNECT "
            + server_.authority + ": " + std::to_string(p.get().result_int())
            + " " + std::string{p.get().reason()};
    }
    if (!tls_)
      co_return std::string{};
    c.tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(
        std::move(*c.plain), ctx_);
    c.plain.reset();
    auto* handle = c.tls->native_handle();
    const auto& name
        = opts_.tls_server_name.empty() ? server_.host : opts_.tls_server_name;
    bool ip = is_ip_literal(name);
    if (!ip) // SNI never carries an IP literal (RFC 6066 section 3)
      SSL_set_tlsext_host_name(handle, name.c_str());
    if (!opts_.insecure_skip_tls_verify) {
      auto* param = SSL_get0_param(handle);
      if (ip)
        X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
      else
        X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
    }
    co_await c.tls->async_handshake(ssl::stream_base::client, on_error(ec));
    if (ec) {
      auto verify = SSL_get_verify_result(handle);
      if (!opts_.insecure_skip_tls_verify && verify != X509_V_OK)
        co_return where()
            + ": TLS handshake failed: certificate verify failed ("
            + X509_verify_cert_error_string(verify)
            + "): set certificate-authority(-data) to the cluster's CA"
            + (verify == X509_V_ERR_HOSTNAME_MISMATCH
                       || verify == X509_V_ERR_IP_ADDRESS_MISMATCH
                   ? " or tls-server-name to a name in its certificate"
                   : "");
      co_return where() + ": TLS handshake failed: " + ec.message();
    }
    co_return std::string{};
  }

  template <class Stream>
  static awaitable<void>
  round_trip(Stream& s, connection& c, bhttp::request<bhttp::string_body>& req,
             bhttp::response_parser<bhttp::string_body>& p,
             beast::error_code& ec, bool& written) {
    co_await bhttp::async_write(s, req, on_error(ec));
    if (ec)
      co_return;
    written = true;
    co_await bhttp::async_read(s, c.buffer, p, on_error(ec));
  }

  void deadline(connection& c, const http_exchange& ex,
                std::chrono::steady_clock::time_point at) {
    if (ex.timeout_ms > 0)
      c.lowest().expires_at(at);
    else
      c.lowest().expires_never();
  }

  awaitable<http_result> exchange(const http_exchange& ex) {
    auto at = std::chrono::steady_clock::now()
              + std::chrono::milliseconds{ex.timeout_ms};
    auto req = make_request(ex);
    http_result out;
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::unique_ptr<connection> c;
      bool reused = false;
      if (!idle_.empty()) {
        c = std::move(idle_.back());
        idle_.pop_back();
        reused = true;
      } else {
        c = std::make_unique<connection>(ioc_);
      }
      deadline(*c, ex, at);
      if (!reused) {
        auto err = co_await connect(*c);
        if (!err.empty()) {
          out.timed_out
              = ex.timeout_ms > 0 && std::chrono::steady_clock::now() >= at;
          out.error = out.timed_out ? where() + ": no answer within "
                                          + std::to_string(ex.timeout_ms)
                                          + " ms (" + err + ")"
                                    : err;
          co_return out;
        }
      }
      bhttp::response_parser<bhttp::string_body> p;
      p.body_limit(std::uint64_t{1} << 30);
      beast::error_code ec;
      bool written = false;
      if (c->tls)
        co_await round_trip(*c->tls, *c, req, p, ec, written);
      else
        co_await round_trip(*c->plain, *c, req, p, ec, written);
      if (ec) {
        if (reused && attempt == 0 && !p.got_some()
            && is_stale_connection_error(ec))
          continue; // the server had closed the idle connection: once more on a
                    // new one
        out.timed_out = ec == beast::error::timeout;
        out.error = out.timed_out
                        ? where() + ": no answer within "
                              + std::to_string(ex.timeout_ms) + " ms"
                        : where() + ": " + (written ? "reading" : "sending")
                              + " " + ex.method + " " + ex.target + ": "
                              + ec.message();
        co_return out;
      }
      auto& msg = p.get();
      out.status = static_cast<std::int32_t>(msg.result_int());
      out.content_type = std::string{msg[bhttp::field::content_type]};
      out.retry_after = std::string{msg[bhttp::field::retry_after]};
      for (auto [i, end] = msg.equal_range(bhttp::field::warning); i != end;
           ++i)
        out.warnings.push_back(
            warning_text({i->value().data(), i->value().size()}));
      out.body = std::move(msg.body());
      if (msg.keep_alive() && idle_.size() < opts_.max_idle_connections) {
        c->lowest().expires_never();
        idle_.push_back(std::move(c));
      }
      co_return out;
    }
    co_return out;
  }

  template <class Stream>
  awaitable<void> stream_body(Stream& s, std::uint64_t id, connection& c,
                              const http_exchange& ex, stream_handlers& h) {
    beast::error_code ec;
    auto req = make_request(ex);
    co_await bhttp::async_write(s, req, on_error(ec));
    bhttp::response_parser<bhttp::buffer_body> p;
    p.body_limit(
        std::numeric_limits<std::uint64_t>::max()); // a watch is unbounded
    if (!ec)
      co_await bhttp::async_read_header(s, c.buffer, p, on_error(ec));
    if (ec) {
      http_result r;
      r.timed_out = ec == beast::error::timeout;
      r.error = cancelled_.count(id)
                    ? "cancelled"
                    : where() + ": watch " + ex.target + ": " + ec.message();
      h.on_refused(std::move(r));
      co_return;
    }
    auto status = static_cast<std::int32_t>(p.get().result_int());
    char chunk[16 * 1024];
    if (status != 200) {
      http_result r;
      r.status = status;
      r.content_type = std::string{p.get()[bhttp::field::content_type]};
      r.retry_after = std::string{p.get()[bhttp::field::retry_after]};
      while (!p.is_done()) {
        p.get().body().data = chunk;
        p.get().body().size = sizeof chunk;
        co_await bhttp::async_read(s, c.buffer, p, on_error(ec));
        if (ec == bhttp::error::need_buffer)
          ec = {};
        r.body.append(chunk, sizeof chunk - p.get().body().size);
        if (ec)
          break;
      }
      h.on_refused(std::move(r));
      co_return;
    }
    c.lowest().expires_never(); // the server's timeoutSeconds bounds a watch
    h.on_open();
    while (!p.is_done()) {
      p.get().body().data = chunk;
      p.get().body().size = sizeof chunk;
      co_await bhttp::async_read_some(s, c.buffer, p, on_error(ec));
      if (ec == bhttp::error::need_buffer)
        ec = {};
      if (auto n = sizeof chunk - p.get().body().size; n > 0)
        h.on_data(std::string_view{chunk, n});
      if (ec)
        break;
    }
    if (cancelled_.count(id))
      h.on_end("cancelled");
    else if (ec)
      h.on_end(where() + ": watch " + ex.target + " broke: " + ec.message());
    else
      h.on_end(std::string{});
  }

  awaitable<void> stream(std::uint64_t id, const http_exchange& ex,
                         stream_handlers& h) {
    auto c = std::make_unique<connection>(ioc_);
    streams_[id] = c.get();
    deadline(*c, ex,
             std::chrono::steady_clock::now()
                 + std::chrono::milliseconds{ex.timeout_ms});
    auto err = co_await connect(*c);
    if (!err.empty() || cancelled_.count(id)) {
      streams_.erase(id);
      http_result r;
      r.error = cancelled_.count(id) ? "cancelled" : err;
      cancelled_.erase(id);
      h.on_refused(std::move(r));
      co_return;
    }
    if (c->tls)
      co_await stream_body(*c->tls, id, *c, ex, h);
    else
      co_await stream_body(*c->plain, id, *c, ex, h);
    streams_.erase(id);
    cancelled_.erase(id);
  }

  asio::io_context& ioc_;
  transport_options opts_;
  ssl::context ctx_;
  bool tls_ = false;
  host_port server_;
  std::optional<host_port> proxy_;
  std::string proxy_auth_;
  std::vector<std::unique_ptr<connection>> idle_;
  std::map<std::uint64_t, connection*> streams_;
  std::set<std::uint64_t> cancelled_;
  std::atomic<std::uint64_t> next_stream_id_{0};
  std::atomic<std::uint64_t> opened_{0};
};

transport::transport() : runner_(std::make_unique<io_runner>()) {
  // nop
}

caf::expected<std::unique_ptr<transport>>
transport::make(transport_options opts) {
  std::unique_ptr<transport> t{new transport()};
  t->impl_ = std::make_shared<transport_impl>(t->runner_->context(),
                                              std::move(opts));
  if (auto r = t->impl_->init(); !r)
    return std::move(r.error());
  return t;
}

transport::~transport() {
  runner_->stop();
  if (impl_)
    impl_->drop_connections();
  impl_.reset();
  runner_.reset();
}

void transport::send(http_exchange ex, std::function<void(http_result)> done) {
  impl_->send(std::move(ex), std::move(done));
}

std::uint64_t transport::open_stream(http_exchange ex,
                                     stream_handlers handlers) {
  return impl_->open_stream(std::move(ex), std::move(handlers));
}

void transport::close_stream(std::uint64_t id) {
  impl_->close_stream(id);
}

bool transport::on_io_thread() const noexcept {
  return runner_->on_this_thread();
}

std::uint64_t transport::connections_opened() const noexcept {
  return impl_->connections_opened();
}

} // namespace aiperf::k8s::client
