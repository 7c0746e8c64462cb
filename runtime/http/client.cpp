#include "runtime/http/client.hpp"

#include "runtime/http/fast_head.hpp"
#include "runtime/time/receive_stamp.hpp"

#include <utility> // before Boost.Asio: 1.74 headers use std::exchange

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <ctime>
#include <deque>
#include <future>
#include <list>
#include <optional>
#include <unordered_map>

namespace aiperf::http {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;

std::int64_t now_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

std::string_view to_string(error_category c) noexcept {
  switch (c) {
    case error_category::none:
      return "none";
    case error_category::connect:
      return "connect";
    case error_category::tls:
      return "tls";
    case error_category::timeout:
      return "timeout";
    case error_category::cancelled:
      return "cancelled";
    case error_category::protocol:
      return "protocol";
    case error_category::io:
      return "io";
    case error_category::invalid_url:
      return "invalid_url";
  }
  return "unknown";
}

namespace {

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto x = a[i] >= 'A' && a[i] <= 'Z' ? char(a[i] + 32) : a[i];
    auto y = b[i] >= 'A' && b[i] <= 'Z' ? char(b[i] + 32) : b[i];
    if (x != y)
      return false;
  }
  return true;
}

std::string describe(const endpoint& ep) {
  std::string out = ep.tls ? "https://" : "http://";
  if (ep.host.find(':') != std::string::npos)
    out += '[' + ep.host + ']';
  else
    out += ep.host;
  out += ':';
  out += std::to_string(ep.port);
  return out;
}

error_info make_error(error_category cat, int code, std::string msg) {
  return error_info{cat, code, std::move(msg)};
}

std::string open_files_hint() {
  rlimit rl{};
  ::getrlimit(RLIMIT_NOFILE, &rl);
  return "too many open files (limit " + std::to_string(rl.rlim_cur)
         + "); raise it (ulimit -n, or run with CAP_SYS_RESOURCE) or lower "
           "--concurrency";
}

/// Names the fix for the errors that mean "the host ran out of something".
std::string connect_hint(const error_code& ec) {
  if (ec == asio::error::no_descriptors || ec.value() == ENFILE)
    return open_files_hint();
  if (ec == asio::error::address_in_use || ec.value() == EADDRNOTAVAIL)
    return "no free local port for this source address; spread connections "
           "over more source addresses (127.0.0.x for loopback targets), "
           "widen net.ipv4.ip_local_port_range or lower --concurrency";
  return "is the server running and the URL right?";
}

} // namespace

fd_limit raise_open_file_limit(std::uint64_t wanted) noexcept {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return {};
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < wanted) {
    rlimit up{static_cast<rlim_t>(wanted), static_cast<rlim_t>(wanted)};
    if (::setrlimit(RLIMIT_NOFILE, &up) == 0)
      rl = up;
  }
  if (rl.rlim_cur < rl.rlim_max) {
    rlimit up{rl.rlim_max, rl.rlim_max};
    if (::setrlimit(RLIMIT_NOFILE, &up) == 0)
      rl = up;
  }
  return {static_cast<std::uint64_t>(rl.rlim_cur),
          static_cast<std::uint64_t>(rl.rlim_max)};
}

std::string_view response_head::find(std::string_view name) const noexcept {
  for (auto& f : fields)
    if (iequals(f.name, name))
      return f.value;
  return {};
}

namespace {

/// The response's Content-Encoding when it is not identity ("" if none):
/// the client asks for identity and does not decode bodies.
std::string unsupported_encoding(std::span<const header_view> fields) {
  for (auto& f : fields)
    if (iequals(f.name, "content-encoding") && !f.value.empty()
        && !iequals(f.value, "identity"))
      return std::string{f.value};
  return {};
}

std::string encoding_message(const std::string& encoding, const endpoint& ep) {
  return "the response from " + describe(ep) + " is encoded with '" + encoding
         + "' (Content-Encoding), which the client does not decode; it sent "
           "Accept-Encoding: identity: configure the server (or a proxy in "
           "front of it) not to compress responses";
}

} // namespace

// -- internals ----------------------------------------------------------------

struct pending_request {
  /// The caller's request (submit_here: it outlives the request, like the
  /// sink) or `owned` (submit).
  const request* req = nullptr;
  std::unique_ptr<const request> owned;
  response_sink* sink = nullptr;
  request_id id = 0;
  bool has_deadline = false;
  bool retried = false;
  std::chrono::steady_clock::time_point deadline;
};

struct pool;
class connection;

/// Streams a response into a sink; header fields are views into the read
/// buffer, not a stored `http::fields` (no allocation per field).
class response_parser final : public bhttp::basic_parser<false> {
public:
  response_parser() {
    eager(true);
    // boost::none misbehaves in 1.74 ("body limit exceeded").
    body_limit(std::uint64_t{1} << 62);
    header_limit(static_cast<std::uint32_t>(read_buffer_size));
  }

  response_sink* sink = nullptr;
  std::int64_t ts = 0; // stamp of the read being parsed

  /// Copies the field views taken so far out of the read buffer. Beast may
  /// report fields from a put() that then asks for more bytes (a head cut
  /// just before its last LF), and that buffer is recycled before the head
  /// completes; call this before giving it back.
  void own_fields() {
    for (; owned_ < count_; ++owned_) {
      auto& f = fields_[owned_];
      auto& s = store_.emplace_back();
      s.reserve(f.name.size() + f.value.size());
      s.append(f.name).append(f.value);
      f = header_view{{s.data(), f.name.size()},
                      {s.data() + f.name.size(), f.value.size()}};
    }
    if (!type_owned_) {
      type_owned_ = true;
      head_.content_type = store_.emplace_back(head_.content_type);
    }
  }

private:
  void on_request_impl(bhttp::verb, boost::beast::string_view,
                       boost::beast::string_view, int, error_code&) override {
    // nop: responses only
  }

  void on_response_impl(int code, boost::beast::string_view, int,
                        error_code&) override {
    head_.status = code;
  }

  void on_field_impl(bhttp::field name, boost::beast::string_view name_str,
                     boost::beast::string_view value, error_code&) override {
    std::string_view v{value.data(), value.size()};
    if (name == bhttp::field::content_type) {
      head_.content_type = v;
      type_owned_ = false;
    }
    if (count_ < fields_.size())
      fields_[count_++] = header_view{{name_str.data(), name_str.size()}, v};
  }

  void on_header_impl(error_code& ec) override {
    head_.fields = std::span<const header_view>{fields_.data(), count_};
    encoding = unsupported_encoding(head_.fields);
    if (!encoding.empty()) {
      ec = bhttp::error::bad_field;
      return;
    }
    sink->on_headers(head_, ts);
  }

public:
  /// A Content-Encoding the client cannot read ("" when none): the head
  /// then failed with bad_field and reached no sink.
  std::string encoding;

private:

  void on_body_init_impl(const boost::optional<std::uint64_t>&,
                         error_code&) override {
    // nop
  }

  std::size_t on_body_impl(boost::beast::string_view body,
                           error_code&) override {
    if (!body.empty())
      sink->on_body({body.data(), body.size()}, ts);
    return body.size();
  }

  void on_chunk_header_impl(std::uint64_t, boost::beast::string_view,
                            error_code&) override {
    // nop
  }

  std::size_t on_chunk_body_impl(std::uint64_t, boost::beast::string_view body,
                                 error_code&) override {
    if (!body.empty())
      sink->on_body({body.data(), body.size()}, ts);
    return body.size();
  }

  void on_finish_impl(error_code&) override {
    // nop
  }

  response_head head_;
  std::array<header_view, max_header_fields> fields_;
  std::size_t count_ = 0;
  std::size_t owned_ = 0;  // fields_[0, owned_) point into store_
  bool type_owned_ = true; // head_.content_type is in store_ (or empty)
  // Stable addresses, even for short strings; empty costs no allocation
  // (a deque allocates when made, and a parser is made per request).
  std::list<std::string> store_;
};

/// Which of the fields the client adds itself a request sets already
/// (they are not added twice).
struct field_flags {
  bool host = false;
  bool agent = false;
  bool length = false;
  bool encoding = false;
  void note(std::string_view k) noexcept {
    host = host || iequals(k, "host");
    agent = agent || iequals(k, "user-agent");
    length = length || iequals(k, "content-length");
    encoding = encoding || iequals(k, "accept-encoding");
  }
};

struct pool {
  endpoint ep;
  std::string port_str;
  /// Where to connect: set at creation for IP literals, else by the first
  /// successful resolution (kept for the pool's life).
  std::vector<tcp::endpoint> targets;
  std::size_t next_source = 0; // round-robin over source addresses
  std::vector<std::shared_ptr<connection>> conns; // open or opening
  std::vector<connection*> idle;                  // subset of conns
  std::deque<pending_request> queue;              // waiting for a slot
  /// The start of the last request head built for this endpoint: request
  /// line and shared fields. A caller sends the same method, target and
  /// shared block again and again; only its own fields and the length
  /// differ from one request to the next.
  struct head_start {
    std::string method;
    std::string target;
    std::shared_ptr<const std::vector<std::pair<std::string, std::string>>>
      shared; // kept: its address cannot be reused while it is the key
    std::string text;
    field_flags seen; // set by the shared fields
  };
  std::optional<head_start> head;
  /// "Host: ...\r\n" for this endpoint (built on first use).
  std::string host_line;
};

class client_impl : public std::enable_shared_from_this<client_impl> {
public:
  client_impl(asio::io_context& ioc, client_options opts);

  void on_submit(pending_request&& p);
  void on_cancel(request_id id);
  void shutdown_all();
  /// A connection finished a request or closed: serve the queue.
  void on_slot_free(pool& p);
  /// Starts `p` on an idle or new connection, or queues it.
  void dispatch(pool& pl, pending_request&& p);
  void start_on_new_connection(pool& pl, pending_request&& p);
  void remove(pool& pl, connection* c);
  static void fail_now(pending_request& p, error_info err) {
    p.sink->on_complete(err, now_ns());
  }

  /// A read buffer from the pool (I/O thread only).
  std::unique_ptr<char[]> acquire_buffer() {
    if (free_buffers_.empty()) {
      buffers_allocated_.fetch_add(1, std::memory_order_relaxed);
      return std::make_unique_for_overwrite<char[]>(read_buffer_size);
    }
    auto b = std::move(free_buffers_.back());
    free_buffers_.pop_back();
    return b;
  }

  void release_buffer(std::unique_ptr<char[]> b) {
    free_buffers_.push_back(std::move(b));
  }

  /// The source address for the next connection of `pl` to `target`, if
  /// any (explicit list, or the loopback spread).
  std::optional<asio::ip::address> next_source(pool& pl,
                                               const tcp::endpoint& target) {
    if (!sources_.empty()) {
      for (std::size_t i = 0; i < sources_.size(); ++i) {
        auto& a = sources_[pl.next_source++ % sources_.size()];
        if (a.is_v4() == target.address().is_v4())
          return a;
      }
      return std::nullopt;
    }
    auto per = opts_.loopback_spread_per_address;
    auto max = opts_.max_connections_per_endpoint;
    if (per == 0 || max <= per || !target.address().is_v4()
        || !target.address().is_loopback())
      return std::nullopt;
    auto k = std::min<std::size_t>((max + per - 1) / per, 254);
    auto host = 1 + static_cast<std::uint32_t>(pl.next_source++ % k);
    return asio::ip::address_v4{(127u << 24) | host};
  }

  asio::io_context& ioc_;
  client_options opts_;
  // -- readiness of plain connections -------------------------------------
  // Asio's async_wait re-arms its epoll registration (an epoll_ctl) on
  // every wait, i.e. once per request. Instead every plain connection is
  // registered once, edge-triggered, in this client's own epoll instance;
  // Asio waits on that one descriptor (one re-arm per wake-up, shared by
  // every connection that became readable meanwhile) and on_ready() reads
  // the connections it reports.

  /// Registers `c`'s socket; false when the client cannot (the connection
  /// then waits through Asio, as before).
  bool watch(connection& c);
  /// Forgets `c` (its socket is being closed: the kernel drops it from
  /// the epoll set with the last descriptor).
  void unwatch(std::uint64_t serial) { watched_.erase(serial); }
  /// Makes sure Asio reports the next readiness of the epoll instance.
  void ensure_watching();
  void on_ready(const error_code& ec);

  int ready_fd_ = -1; // owned by ready_desc_ once made
  std::optional<asio::posix::stream_descriptor> ready_desc_;
  bool ready_failed_ = false;
  bool watching_ = false;
  std::uint64_t next_serial_ = 0;
  std::unordered_map<std::uint64_t, connection*> watched_;

  /// The TLS context, made on first use (I/O thread only).
  ssl::context* tls_context();
  std::optional<ssl::context> ssl_ctx_;
  std::string ssl_ctx_error_;
  std::vector<asio::ip::address> sources_;
  std::string sources_error_;
  std::vector<std::unique_ptr<char[]>> free_buffers_;
  /// Field views of the head being reported (the fast path's scratch; only
  /// valid during on_headers, like every head view).
  std::array<header_view, max_header_fields> head_fields_{};
  /// The last shared header block that passed validation (I/O thread only).
  std::shared_ptr<const std::vector<std::pair<std::string, std::string>>>
    valid_shared_headers_;
  std::atomic<std::uint64_t> buffers_allocated_{0};
  std::vector<std::unique_ptr<pool>> pools_;
  std::atomic<request_id> next_id_{0};
  std::atomic<std::uint64_t> opened_{0};
  std::atomic<bool> shut_{false};
};

/// One socket lifetime: connect (+ TLS handshake), then any number of
/// request/response exchanges while the server keeps it alive. A closed
/// connection is dropped from its pool and never reopened, so no handler of
/// an old socket can ever observe a new one. Every handler carries the
/// exchange sequence number it was started for and ignores itself when the
/// connection has moved on (timeout, cancel, close).
class connection : public std::enable_shared_from_this<connection> {
public:
  connection(client_impl& owner, pool& pl)
    : owner_(owner),
      pool_(pl),
      plain_(owner.ioc_),
      timer_(owner.ioc_) {
    if (pl.ep.tls)
      if (auto* ctx = owner.tls_context())
        tls_.emplace(plain_, *ctx);
  }

  bool busy() const noexcept { return busy_; }
  int native_handle() noexcept { return plain_.native_handle(); }
  request_id current_id() const noexcept { return cur_.id; }

  void start(pending_request&& p) {
    cur_ = std::move(p);
    busy_ = true;
    got_bytes_ = false;
    ++seq_;
    if (cur_.req->timeout_ms > 0) {
      if (!cur_.has_deadline) {
        cur_.has_deadline = true;
        cur_.deadline = std::chrono::steady_clock::now()
                        + std::chrono::milliseconds(cur_.req->timeout_ms);
      }
      arm_deadline(cur_.deadline);
    }
    if (open_)
      send();
    else
      connect();
  }

  /// Completes the current request (exactly once) and recycles or closes.
  void finish(const error_info& err, std::int64_t ts, bool keep_alive = false) {
    if (!busy_)
      return;
    auto self = shared_from_this(); // close() may drop the pool's reference
    busy_ = false;
    want_read_ = false;
    ++seq_;
    // The deadline timer stays armed: it re-arms itself for whatever request
    // is running when it fires (see arm_deadline).
    auto* sink = cur_.sink;
    cur_.sink = nullptr;
    drop_buffer();
    if (err.ok() && keep_alive)
      reused_ = true;
    else
      close();
    sink->on_complete(err, ts);
    if (open_)
      pool_.idle.push_back(this);
    owner_.on_slot_free(pool_);
  }

  /// Closes the socket and leaves the pool; pending handlers become stale.
  void close() {
    ++seq_;
    if (closed_)
      return;
    closed_ = true;
    open_ = false;
    want_read_ = false;
    maybe_readable_ = false;
    if (serial_ != 0) {
      owner_.unwatch(serial_);
      serial_ = 0;
    }
    error_code ec;
    if (resolver_)
      resolver_->cancel();
    plain_.close(ec);
    drop_buffer();
    timer_.cancel();
    owner_.remove(pool_, this);
  }

private:
  /// Makes the deadline timer fire no later than `at`. A keep-alive
  /// connection runs request after request with ever later deadlines, so
  /// instead of a cancel and a re-arm per request (a timer-queue insert and
  /// removal, a handler allocation and an aborted completion each) the
  /// timer stays armed for an earlier deadline and, when it fires, re-arms
  /// for the running request's (on_deadline); it is moved only when a
  /// request's deadline comes before the armed one.
  void arm_deadline(std::chrono::steady_clock::time_point at) {
    if (timer_armed_ && timer_at_ <= at)
      return;
    timer_armed_ = true;
    timer_at_ = at;
    timer_.expires_at(at); // a superseded wait completes aborted: ignored
    timer_.async_wait([self = shared_from_this(),
                       gen = ++timer_gen_](error_code ec) {
      self->on_deadline(ec, gen);
    });
  }

  void on_deadline(const error_code& ec, std::uint64_t gen) {
    if (gen != timer_gen_)
      return; // superseded by a re-arm for an earlier deadline
    timer_armed_ = false;
    if (ec || closed_ || !busy_ || !cur_.has_deadline)
      return; // idle: the next request arms it
    if (std::chrono::steady_clock::now() < cur_.deadline) {
      arm_deadline(cur_.deadline); // armed for an earlier request
      return;
    }
    finish(make_error(error_category::timeout, 0,
                      "request to " + describe(pool_.ep) + " timed out after "
                        + std::to_string(cur_.req->timeout_ms)
                        + " ms; raise the request timeout if the server is "
                          "just slow"),
           now_ns());
  }

  void connect() {
    if (pool_.ep.tls && !tls_) {
      finish(make_error(error_category::tls, 0, owner_.ssl_ctx_error_), now_ns());
      return;
    }
    if (!owner_.sources_error_.empty()) {
      finish(make_error(error_category::connect, 0, owner_.sources_error_),
             now_ns());
      return;
    }
    if (!pool_.targets.empty()) {
      connect_to(0);
      return;
    }
    resolver_.emplace(owner_.ioc_);
    resolver_->async_resolve(
      pool_.ep.host, pool_.port_str,
      [self = shared_from_this(), seq = seq_](error_code ec,
                                              tcp::resolver::results_type rs) {
        if (seq != self->seq_)
          return;
        self->resolver_.reset();
        if (ec || rs.empty()) {
          self->finish(make_error(error_category::connect, ec.value(),
                                  "cannot resolve host '" + self->pool_.ep.host
                                    + "': " + ec.message()
                                    + "; check the host name in the URL"),
                       now_ns());
          return;
        }
        if (self->pool_.targets.empty())
          for (auto& r : rs)
            self->pool_.targets.push_back(r.endpoint());
        self->connect_to(0);
      });
  }

  /// Opens a socket (bound to the next source address, if any) and connects
  /// to target `i`, trying the next target on failure.
  void connect_to(std::size_t i) {
    auto target = pool_.targets[i];
    auto fail = [&](const error_code& ec, const std::string& what) {
      finish(make_error(error_category::connect, ec.value(),
                        what + " " + describe(pool_.ep) + ": " + ec.message()
                          + "; " + connect_hint(ec)),
             now_ns());
    };
    error_code ec;
    plain_.close(ec);
    plain_.open(target.protocol(), ec);
    if (ec) {
      fail(ec, "cannot open a socket to");
      return;
    }
    if (auto src = owner_.next_source(pool_, target)) {
      // Defer the port choice to connect(), which only needs the 4-tuple
      // to be unique, instead of reserving a port per source at bind().
      int one = 1;
      ::setsockopt(plain_.native_handle(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT,
                   &one, sizeof one);
      plain_.bind(tcp::endpoint{*src, 0}, ec);
      if (ec) {
        fail(ec, "cannot bind source address " + src->to_string() + " for");
        return;
      }
    }
    plain_.async_connect(
      target, [self = shared_from_this(), seq = seq_, i](error_code ec2) {
        if (seq != self->seq_)
          return;
        if (ec2) {
          if (i + 1 < self->pool_.targets.size()) {
            self->connect_to(i + 1);
            return;
          }
          self->finish(make_error(error_category::connect, ec2.value(),
                                  "cannot connect to " + describe(self->pool_.ep)
                                    + ": " + ec2.message() + "; "
                                    + connect_hint(ec2)),
                       now_ns());
          return;
        }
        self->owner_.opened_.fetch_add(1, std::memory_order_relaxed);
        error_code ignore;
        self->plain_.set_option(tcp::no_delay{true}, ignore);
        // Reads after a readiness wait must never block the I/O thread.
        self->plain_.non_blocking(true, ignore);
        if (self->tls_) {
          self->handshake();
        } else {
          // Plain reads carry the kernel's receive stamp (read_plain).
          time::enable_receive_stamps(self->plain_.native_handle());
          self->owner_.watch(*self);
          self->on_open();
        }
      });
  }

  void handshake() {
    auto* ssl = tls_->native_handle();
    auto& host = pool_.ep.host;
    error_code ec;
    asio::ip::make_address(host, ec);
    auto is_ip = !ec; // SNI must not carry IP literals (RFC 6066 §3)
    if (!is_ip)
      SSL_set_tlsext_host_name(ssl, host.c_str());
    if (!owner_.opts_.tls.insecure) {
      auto* param = SSL_get0_param(ssl);
      if (is_ip)
        X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
      else
        X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
    }
    tls_->async_handshake(
      ssl::stream_base::client,
      [self = shared_from_this(), seq = seq_](error_code ec) {
        if (seq != self->seq_)
          return;
        if (ec) {
          self->finish(self->tls_error(ec), now_ns());
          return;
        }
        self->on_open();
      });
  }

  error_info tls_error(const error_code& ec) {
    auto verify = SSL_get_verify_result(tls_->native_handle());
    if (!owner_.opts_.tls.insecure && verify != X509_V_OK)
      return make_error(error_category::tls, static_cast<int>(verify),
                        "TLS certificate verification failed for "
                          + describe(pool_.ep) + ": "
                          + X509_verify_cert_error_string(verify)
                          + "; pass --ca-file <CA.pem> to trust the server's "
                            "CA, or --insecure to skip verification");
    return make_error(error_category::tls, ec.value(),
                      "TLS handshake with " + describe(pool_.ep)
                        + " failed: " + ec.message()
                        + "; check that the server speaks https on this port");
  }

  void on_open() {
    open_ = true;
    send();
  }

  /// The request line and shared fields of `r`: rebuilt only when the
  /// method, target or shared block differ from the pool's last request.
  const pool::head_start& head_start_of(const request& r) {
    auto& h = pool_.head;
    if (h && h->shared == r.shared_headers && h->method == r.method
        && h->target == r.target)
      return *h;
    h.emplace();
    h->method = r.method;
    h->target = r.target;
    h->shared = r.shared_headers;
    auto& t = h->text;
    t += r.method;
    t += ' ';
    t += r.target.empty() ? std::string_view{"/"} : r.target;
    t += " HTTP/1.1\r\n";
    if (r.shared_headers)
      for (auto& [k, v] : *r.shared_headers) {
        h->seen.note(k);
        t.append(k).append(": ").append(v).append("\r\n");
      }
    return *h;
  }

  void build_head() {
    const auto& r = *cur_.req;
    const auto& start = head_start_of(r);
    head_.assign(start.text);
    field_flags seen = start.seen;
    for (auto& [k, v] : r.headers) {
      seen.note(k);
      head_.append(k).append(": ").append(v).append("\r\n");
    }
    if (!seen.host) {
      auto& line = pool_.host_line;
      if (line.empty()) {
        line = "Host: ";
        if (pool_.ep.host.find(':') != std::string::npos)
          line.append("[").append(pool_.ep.host).append("]");
        else
          line += pool_.ep.host;
        if (pool_.ep.port != (pool_.ep.tls ? 443 : 80))
          line.append(":").append(pool_.port_str);
        line += "\r\n";
      }
      head_ += line;
    }
    if (!seen.agent && !owner_.opts_.user_agent.empty())
      head_.append("User-Agent: ").append(owner_.opts_.user_agent).append("\r\n");
    // Bodies are parsed as sent (SSE, JSON): ask for them uncompressed.
    if (!seen.encoding)
      head_ += "Accept-Encoding: identity\r\n";
    if (!seen.length
        && (!r.body.empty() || r.method == "POST" || r.method == "PUT"
            || r.method == "PATCH")) {
      char digits[24];
      auto end = std::to_chars(digits, digits + sizeof(digits), r.body.size()).ptr;
      head_.append("Content-Length: ").append(digits, end).append("\r\n");
    }
    head_ += "\r\n";
  }

  void send() {
    build_head();
    parser_.emplace();
    parser_->sink = cur_.sink;
    if (cur_.req->method == "HEAD")
      parser_->skip(true);
    fresh_ = cur_.req->method != "HEAD";
    interim_ = true;
    write_error_ = {};
    fast_ = false;
    fast_left_ = 0;
    drop_buffer();
    cur_.sink->on_send(now_ns());
    std::array<asio::const_buffer, 2> bufs{asio::buffer(head_),
                                           asio::buffer(cur_.req->body)};
    auto on_written = [self = shared_from_this(), seq = seq_](error_code ec,
                                                              std::size_t) {
      if (seq != self->seq_)
        return;
      if (ec) {
        // The server may have answered early and closed (413 Payload Too
        // Large, 401): read that answer before reporting the reset.
        if (ec == asio::error::broken_pipe
            || ec == asio::error::connection_reset) {
          self->write_error_ = ec;
          self->read();
          return;
        }
        self->on_io_error(ec, "writing the request");
        return;
      }
      self->read();
    };
    if (tls_)
      asio::async_write(*tls_, bufs, std::move(on_written));
    else
      asio::async_write(plain_, bufs, std::move(on_written));
  }

  void read() {
    auto on_read = [self = shared_from_this(), seq = seq_](error_code ec,
                                                           std::size_t n) {
      if (seq != self->seq_)
        return;
      self->on_read(ec, n);
    };
    if (tls_) {
      take_buffer();
      tls_->async_read_some(
        asio::buffer(buf_.get() + end_, read_buffer_size - end_),
        std::move(on_read));
      return;
    }
    if (serial_ != 0) {
      // The client's epoll instance reports readability (see watch()).
      if (maybe_readable_ || peer_closed_) {
        maybe_readable_ = false;
        read_now();
        return;
      }
      want_read_ = true;
      owner_.ensure_watching();
      return;
    }
    // Wait holding no buffer; borrow one only once there are bytes to read.
    plain_.async_wait(
      tcp::socket::wait_read,
      [self = shared_from_this(), seq = seq_,
       on_read = std::move(on_read)](error_code ec) mutable {
        if (seq != self->seq_)
          return;
        if (ec) {
          on_read(ec, 0);
          return;
        }
        self->take_buffer();
        error_code rec;
        std::int64_t ts = 0;
        auto n = self->read_plain(read_buffer_size - self->end_, rec, ts);
        if (rec == asio::error::would_block || rec == asio::error::try_again) {
          self->give_back_buffer(); // spurious wake-up
          self->read();
          return;
        }
        self->on_read(rec, n, ts);
      });
  }

public:
  /// The client's epoll instance reported the socket readable (or closed).
  void on_readable(std::uint32_t events) {
    // A close or error seen with the bytes before it announces nothing
    // after they are read: read on every wait from now on.
    if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
      peer_closed_ = true;
    if (!want_read_) {
      // Not waiting (the response came before read(), or the server closed
      // an idle connection): the edge is spent, so remember it.
      maybe_readable_ = true;
      return;
    }
    want_read_ = false;
    read_now();
  }

  /// Registration in the client's epoll instance (0 = not registered).
  std::uint64_t serial_ = 0;

private:
  /// One non-blocking read (holding a buffer only for it), then parse.
  void read_now() {
    take_buffer();
    error_code rec;
    std::int64_t ts = 0;
    auto space = read_buffer_size - end_;
    auto n = read_plain(space, rec, ts);
    if (rec == asio::error::would_block || rec == asio::error::try_again) {
      give_back_buffer(); // spurious: wait for the next edge
      want_read_ = true;
      owner_.ensure_watching();
      return;
    }
    // A full buffer may have left bytes behind that no new edge announces.
    if (!rec && n == space)
      maybe_readable_ = true;
    on_read(rec, n, ts);
  }

  /// One non-blocking read of up to `space` bytes into the buffer. `ts` is
  /// when the kernel received them (SO_TIMESTAMPNS), so a response is
  /// stamped with its arrival even when this thread comes to it late; 0
  /// when the read carried no stamp.
  std::size_t read_plain(std::size_t space, error_code& ec, std::int64_t& ts) {
    iovec iov{buf_.get() + end_, space};
    auto r = time::read_stamped(plain_.native_handle(), &iov, 1);
    if (r.bytes < 0) {
      ec = error_code{r.error, boost::system::system_category()};
      return 0;
    }
    if (r.bytes == 0) {
      ec = asio::error::eof;
      return 0;
    }
    ts = r.received_ns;
    return static_cast<std::size_t>(r.bytes);
  }

  /// Borrows a pooled buffer, restoring bytes set aside by give_back_buffer.
  void take_buffer() {
    if (buf_)
      return;
    buf_ = owner_.acquire_buffer();
    begin_ = 0;
    end_ = spill_.size();
    if (!spill_.empty()) {
      std::memcpy(buf_.get(), spill_.data(), spill_.size());
      spill_.clear();
    }
  }

  /// Returns the buffer to the pool, setting unparsed bytes aside.
  void give_back_buffer() {
    if (!buf_)
      return;
    spill_.assign(buf_.get() + begin_, end_ - begin_);
    begin_ = end_ = 0;
    owner_.release_buffer(std::move(buf_));
  }

  /// Returns the buffer and forgets any unparsed bytes.
  void drop_buffer() {
    begin_ = end_ = 0;
    spill_.clear();
    if (buf_)
      owner_.release_buffer(std::move(buf_));
  }

  /// `stamp`: the bytes' kernel receive time, or 0 to stamp them now.
  void on_read(const error_code& ec, std::size_t n, std::int64_t stamp = 0) {
    auto ts = stamp != 0 ? stamp : now_ns();
    if (ec) {
      bool eof = ec == asio::error::eof || ec == ssl::error::stream_truncated;
      if (eof && parser_->is_header_done() && parser_->need_eof()) {
        error_code pec;
        parser_->ts = ts;
        parser_->put_eof(pec);
        if (!pec) {
          finish({}, ts, false);
          return;
        }
      }
      if (write_error_ && !got_bytes_) {
        on_io_error(write_error_, "writing the request");
        return;
      }
      on_io_error(ec, "reading the response");
      return;
    }
    got_bytes_ = true;
    end_ += n;
    parser_->ts = ts;
    if (interim_) {
      switch (skip_interim()) {
        case interim_step::final_response:
          break;
        case interim_step::need_more:
          give_back_buffer();
          read();
          return;
        case interim_step::failed:
          return;
      }
    }
    if (fresh_) {
      // The first read of a response: try the fast head path (fast_head.hpp)
      // once; any other shape, or a head split across reads, goes to Beast.
      fresh_ = false;
      if (auto h = parse_fast_head({buf_.get() + begin_, end_ - begin_},
                                   owner_.head_fields_)) {
        begin_ += h->size;
        fast_ = true;
        fast_left_ = h->content_length;
        response_head head;
        head.status = h->status;
        head.content_type = h->content_type;
        head.fields = {owner_.head_fields_.data(), h->field_count};
        if (auto enc = unsupported_encoding(head.fields); !enc.empty()) {
          finish(make_error(error_category::protocol, 0,
                            encoding_message(enc, pool_.ep)),
                 ts);
          return;
        }
        cur_.sink->on_headers(head, ts);
        if (!busy_)
          return; // the sink finished the request
      }
    }
    if (fast_) {
      // Content-Length body: exactly as Beast's eager parser delivers it,
      // one on_body per read.
      auto n = static_cast<std::size_t>(
        std::min<std::uint64_t>(fast_left_, end_ - begin_));
      if (n > 0) {
        cur_.sink->on_body({buf_.get() + begin_, n}, ts);
        if (!busy_)
          return;
        begin_ += n;
        fast_left_ -= n;
      }
      if (fast_left_ == 0) {
        // Leftover bytes would be pipelining: drop the connection (as below).
        finish({}, ts, begin_ == end_ && !write_error_);
        return;
      }
      give_back_buffer();
      read();
      return;
    }
    while (begin_ < end_ && !parser_->is_done()) {
      error_code pec;
      auto used = parser_->put(asio::buffer(buf_.get() + begin_, end_ - begin_),
                               pec);
      if (!busy_)
        return; // a sink callback finished the request
      begin_ += used;
      if (pec == bhttp::error::need_more)
        break;
      if (pec) {
        if (!parser_->encoding.empty()) {
          finish(make_error(error_category::protocol, 0,
                            encoding_message(parser_->encoding, pool_.ep)),
                 ts);
          return;
        }
        finish(make_error(error_category::protocol, pec.value(),
                          "malformed HTTP response from " + describe(pool_.ep)
                            + ": " + pec.message()),
               ts);
        return;
      }
    }
    if (parser_->is_done()) {
      // Leftover bytes would mean pipelining, which we never do: drop the
      // connection rather than misattribute them to the next request.
      finish({}, ts, parser_->keep_alive() && begin_ == end_ && !write_error_);
      return;
    }
    if (end_ - begin_ == read_buffer_size) {
      finish(make_error(error_category::protocol, 0,
                        "response header from " + describe(pool_.ep)
                          + " does not fit in "
                          + std::to_string(read_buffer_size) + " bytes"),
             ts);
      return;
    }
    if (!parser_->is_header_done())
      parser_->own_fields(); // the views must outlive this buffer
    give_back_buffer();
    read();
  }

  void on_io_error(const error_code& ec, const char* what) {
    // A reused keep-alive connection the server closed while idle fails
    // before any response byte: the request never reached the application,
    // so retry once on a fresh connection.
    if (reused_ && !got_bytes_ && !cur_.retried) {
      auto p = std::move(cur_);
      p.retried = true;
      busy_ = false;
      close();
      owner_.start_on_new_connection(pool_, std::move(p));
      return;
    }
    std::string hint;
    if (!pool_.ep.tls && !got_bytes_
        && (ec == asio::error::eof || ec == asio::error::connection_reset))
      hint = "; the server closed the connection without a response (if it "
             "speaks TLS, use https://)";
    finish(make_error(error_category::io, ec.value(),
                      "I/O error " + std::string{what} + " from "
                        + describe(pool_.ep) + ": " + ec.message() + hint),
           now_ns());
  }

  enum class interim_step { final_response, need_more, failed };

  /// At the start of a response: fails a plain connection answered in TLS,
  /// and skips 1xx interim responses (100 Continue, 103 Early Hints), which
  /// precede the final one on the same exchange.
  interim_step skip_interim() {
    for (;;) {
      std::string_view b{buf_.get() + begin_, end_ - begin_};
      if (b.empty())
        return interim_step::need_more;
      if (!pool_.ep.tls && (b[0] == '\x15' || b[0] == '\x16')) {
        finish(make_error(error_category::protocol, 0,
                          "the server at " + describe(pool_.ep)
                            + " speaks TLS: use https://"),
               now_ns());
        return interim_step::failed;
      }
      // "HTTP/1.x 1": an interim status.
      constexpr std::string_view prefix = "HTTP/1.";
      auto k = std::min(b.size(), prefix.size());
      if (b.substr(0, k) != prefix.substr(0, k))
        break;
      if (b.size() < 10)
        return interim_step::need_more;
      if (b[8] != ' ' || b[9] != '1')
        break;
      auto end = b.find("\r\n\r\n");
      if (end == std::string_view::npos) {
        if (b.size() == read_buffer_size)
          break; // Beast reports the oversized head
        return interim_step::need_more;
      }
      begin_ += end + 4;
    }
    interim_ = false;
    return interim_step::final_response;
  }

  client_impl& owner_;
  pool& pool_;
  tcp::socket plain_;
  // Wraps plain_ when the endpoint is https (one socket, two views).
  std::optional<ssl::stream<tcp::socket&>> tls_;
  std::optional<tcp::resolver> resolver_; // only while resolving
  asio::steady_timer timer_;
  // The deadline the pending timer wait is for, when one is pending, and
  // the number of that wait (older completions are ignored).
  std::chrono::steady_clock::time_point timer_at_;
  bool timer_armed_ = false;
  std::uint64_t timer_gen_ = 0;
  std::unique_ptr<char[]> buf_; // borrowed from owner_ while reading
  std::string spill_;           // unparsed bytes while holding no buffer
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::string head_;
  std::optional<response_parser> parser_;
  pending_request cur_;
  std::uint64_t seq_ = 0;
  bool busy_ = false;
  bool open_ = false;
  bool closed_ = false;
  bool reused_ = false;
  bool got_bytes_ = false;
  // Registered connections: waiting for the client's epoll to report the
  // socket; reported while not waiting (read at once next time).
  bool want_read_ = false;
  bool maybe_readable_ = false;
  bool peer_closed_ = false;
  // The fast head path (fast_head.hpp): not tried yet for this response;
  // taken (then Beast is idle and fast_left_ body bytes remain).
  bool fresh_ = false;
  // No final response head seen yet (1xx responses are skipped).
  bool interim_ = false;
  // Writing the request failed with EPIPE/ECONNRESET: the response (if the
  // server sent one before closing) is read, and the connection not reused.
  error_code write_error_;
  bool fast_ = false;
  std::uint64_t fast_left_ = 0;
};

// -- client_impl --------------------------------------------------------------

client_impl::client_impl(asio::io_context& ioc, client_options opts)
  : ioc_(ioc), opts_(std::move(opts)) {
  if (opts_.max_connections_per_endpoint == 0)
    opts_.max_connections_per_endpoint = 1;
  if (opts_.raise_fd_limit)
    raise_open_file_limit(opts_.max_connections_per_endpoint + 1024);
  for (auto& a : opts_.source_addresses) {
    error_code ec;
    auto addr = asio::ip::make_address(a, ec);
    if (ec) {
      sources_error_ = "source address '" + a
                       + "' is not an IP address; fix the source address "
                         "list (e.g. 127.0.0.2)";
      break;
    }
    sources_.push_back(addr);
  }
}

ssl::context* client_impl::tls_context() {
  // Created on the first https connection: loading the system CA store
  // costs ~240 M instructions, which plain-http runs should not pay.
  if (ssl_ctx_ || !ssl_ctx_error_.empty())
    return ssl_ctx_ ? &*ssl_ctx_ : nullptr;
  ssl_ctx_.emplace(ssl::context::tls_client);
  error_code ec;
  if (opts_.tls.insecure) {
    ssl_ctx_->set_verify_mode(ssl::verify_none, ec);
  } else {
    ssl_ctx_->set_verify_mode(ssl::verify_peer, ec);
    ssl_ctx_->set_default_verify_paths(ec);
    if (!opts_.tls.ca_file.empty()) {
      ssl_ctx_->load_verify_file(opts_.tls.ca_file, ec);
      if (ec) {
        ssl_ctx_error_ = "cannot load CA file '" + opts_.tls.ca_file
                         + "': " + ec.message()
                         + "; check the --ca-file path (PEM format)";
        ssl_ctx_.reset();
      }
    }
  }
  return ssl_ctx_ ? &*ssl_ctx_ : nullptr;
}

bool client_impl::watch(connection& c) {
  if (ready_failed_ || shut_)
    return false;
  if (!ready_desc_) {
    ready_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (ready_fd_ < 0) {
      ready_failed_ = true;
      return false;
    }
    error_code ec;
    ready_desc_.emplace(ioc_);
    ready_desc_->assign(ready_fd_, ec);
    if (ec) {
      ::close(ready_fd_);
      ready_desc_.reset();
      ready_failed_ = true;
      return false;
    }
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
  ev.data.u64 = ++next_serial_;
  if (::epoll_ctl(ready_fd_, EPOLL_CTL_ADD, c.native_handle(), &ev) != 0)
    return false;
  c.serial_ = ev.data.u64;
  watched_.emplace(c.serial_, &c);
  return true;
}

void client_impl::ensure_watching() {
  if (watching_ || !ready_desc_)
    return;
  watching_ = true;
  ready_desc_->async_wait(
    asio::posix::stream_descriptor::wait_read,
    [self = shared_from_this()](error_code ec) { self->on_ready(ec); });
}

void client_impl::on_ready(const error_code& ec) {
  watching_ = false;
  if (ec || shut_)
    return;
  std::array<epoll_event, 64> events;
  auto n = ::epoll_wait(ready_fd_, events.data(),
                        static_cast<int>(events.size()), 0);
  for (int i = 0; i < n; ++i) {
    // Looked up one by one: reading one connection may close another.
    auto it = watched_.find(events[static_cast<std::size_t>(i)].data.u64);
    if (it == watched_.end())
      continue;
    auto keep = it->second->shared_from_this(); // finish() may drop it
    keep->on_readable(events[static_cast<std::size_t>(i)].events);
  }
  // Keep watching: more events than fit, or connections still waiting. A
  // wait with nothing to report costs nothing until a socket has bytes.
  ensure_watching();
}

void client_impl::on_submit(pending_request&& p) {
  if (shut_) {
    fail_now(p, make_error(error_category::cancelled, 0,
                           "client is shut down"));
    return;
  }
  auto bad = [](std::string_view s) {
    // A plain loop: find_first_of with a set costs a search per byte.
    for (char c : s)
      if (c == '\r' || c == '\n')
        return true;
    return false;
  };
  auto bad_header = [&](const std::string& k, const std::string& v) {
    if (k.empty() || bad(k) || bad(v) || k.find(':') != std::string::npos) {
      fail_now(p, make_error(error_category::protocol, 0,
                             "request header '" + k
                               + "' has an empty name, a ':' in the name or a "
                                 "line break; fix the header"));
      return true;
    }
    return false;
  };
  // A shared block is immutable: validated once, then recognised by
  // identity (the kept reference stops its address from being reused).
  if (p.req->shared_headers && p.req->shared_headers != valid_shared_headers_) {
    for (auto& [k, v] : *p.req->shared_headers)
      if (bad_header(k, v))
        return;
    valid_shared_headers_ = p.req->shared_headers;
  }
  for (auto& [k, v] : p.req->headers)
    if (bad_header(k, v))
      return;
  if (p.req->method.empty() || bad(p.req->method) || bad(p.req->target)
      || p.req->method.find(' ') != std::string::npos
      || p.req->target.find(' ') != std::string::npos) {
    fail_now(p, make_error(error_category::protocol, 0,
                           "request method/target '" + p.req->method + " "
                             + p.req->target
                             + "' contains spaces or line breaks; "
                               "percent-encode the target"));
    return;
  }
  pool* pl = nullptr;
  for (auto& x : pools_)
    if (x->ep == p.req->ep) {
      pl = x.get();
      break;
    }
  if (pl == nullptr) {
    auto fresh = std::make_unique<pool>();
    fresh->ep = p.req->ep;
    fresh->port_str = std::to_string(p.req->ep.port);
    error_code ec;
    auto literal = asio::ip::make_address(p.req->ep.host, ec);
    if (!ec)
      fresh->targets.emplace_back(literal, p.req->ep.port);
    pl = fresh.get();
    pools_.push_back(std::move(fresh));
  }
  dispatch(*pl, std::move(p));
}

void client_impl::dispatch(pool& pl, pending_request&& p) {
  if (!pl.idle.empty()) {
    auto* c = pl.idle.back();
    pl.idle.pop_back();
    c->start(std::move(p));
  } else if (pl.conns.size() < opts_.max_connections_per_endpoint) {
    start_on_new_connection(pl, std::move(p));
  } else {
    pl.queue.push_back(std::move(p));
  }
}

void client_impl::start_on_new_connection(pool& pl, pending_request&& p) {
  auto c = std::make_shared<connection>(*this, pl);
  pl.conns.push_back(c);
  c->start(std::move(p));
}

void client_impl::remove(pool& pl, connection* c) {
  for (std::size_t i = 0; i < pl.idle.size(); ++i)
    if (pl.idle[i] == c) {
      pl.idle[i] = pl.idle.back();
      pl.idle.pop_back();
      break;
    }
  for (std::size_t i = 0; i < pl.conns.size(); ++i)
    if (pl.conns[i].get() == c) {
      pl.conns[i] = std::move(pl.conns.back());
      pl.conns.pop_back();
      break;
    }
}

void client_impl::on_slot_free(pool& pl) {
  if (shut_ || pl.queue.empty())
    return;
  if (pl.idle.empty() && pl.conns.size() >= opts_.max_connections_per_endpoint)
    return;
  auto p = std::move(pl.queue.front());
  pl.queue.pop_front();
  dispatch(pl, std::move(p));
}

void client_impl::on_cancel(request_id id) {
  auto cancelled = [id] {
    return make_error(error_category::cancelled, 0,
                      "request " + std::to_string(id) + " was cancelled");
  };
  for (auto& pl : pools_) {
    for (auto& c : pl->conns) {
      if (c->busy() && c->current_id() == id) {
        auto keep = c; // finish() removes it from conns
        keep->finish(cancelled(), now_ns());
        return;
      }
    }
    for (auto i = pl->queue.begin(); i != pl->queue.end(); ++i) {
      if (i->id == id) {
        auto p = std::move(*i);
        pl->queue.erase(i);
        fail_now(p, cancelled());
        return;
      }
    }
  }
}

void client_impl::shutdown_all() {
  shut_ = true;
  if (ready_desc_) {
    error_code ec;
    ready_desc_->close(ec); // completes a pending wait (aborted)
  }
  auto err = make_error(error_category::cancelled, 0,
                        "client shut down before the request completed");
  for (auto& pl : pools_) {
    auto queued = std::move(pl->queue);
    pl->queue.clear();
    for (auto& p : queued)
      fail_now(p, err);
    auto conns = pl->conns; // finish()/close() edit pl->conns
    for (auto& c : conns) {
      if (c->busy())
        c->finish(err, now_ns());
      else
        c->close();
    }
  }
}

// -- client -------------------------------------------------------------------

client::client(asio::io_context& ioc, client_options opts)
  : impl_(std::make_shared<client_impl>(ioc, std::move(opts))) {
  // nop
}

client::client(asio::io_context& ioc)
  // A named default object: g++ 12 warns falsely (maybe-uninitialized) on
  // a value-initialized client_options temporary.
  : impl_(std::make_shared<client_impl>(ioc, [] {
      client_options defaults;
      return defaults;
    }())) {
  // nop
}

client::~client() {
  shutdown();
}

request_id client::submit(request req, response_sink& sink) {
  auto id = impl_->next_id_.fetch_add(1, std::memory_order_relaxed) + 1;
  pending_request p;
  p.owned = std::make_unique<const request>(std::move(req));
  p.req = p.owned.get();
  p.sink = &sink;
  p.id = id;
  asio::post(impl_->ioc_, [impl = impl_, p = std::move(p)]() mutable {
    impl->on_submit(std::move(p));
  });
  return id;
}

void client::submit_here(const request& req, response_sink& sink,
                         request_id& id_out) {
  auto id = impl_->next_id_.fetch_add(1, std::memory_order_relaxed) + 1;
  id_out = id;
  pending_request p;
  p.req = &req;
  p.sink = &sink;
  p.id = id;
  if (impl_->ioc_.get_executor().running_in_this_thread()) {
    impl_->on_submit(std::move(p));
    return;
  }
  asio::post(impl_->ioc_, [impl = impl_, p = std::move(p)]() mutable {
    impl->on_submit(std::move(p));
  });
}

void client::cancel(request_id id) {
  asio::post(impl_->ioc_, [impl = impl_, id] { impl->on_cancel(id); });
}

void client::shutdown() {
  if (impl_->shut_.exchange(true))
    return;
  auto& ioc = impl_->ioc_;
  if (ioc.stopped() || ioc.get_executor().running_in_this_thread()) {
    impl_->shutdown_all();
    return;
  }
  std::promise<void> done;
  auto fut = done.get_future();
  asio::post(ioc, [impl = impl_, &done] {
    impl->shutdown_all();
    done.set_value();
  });
  // The io_context may stop before running our handler (io_pool::stop()).
  while (fut.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
    if (ioc.stopped()) {
      // Our handler will never run; nothing else touches the pools now.
      impl_->shutdown_all();
      return;
    }
  }
}

std::uint64_t client::connections_opened() const noexcept {
  return impl_->opened_.load(std::memory_order_relaxed);
}

std::uint64_t client::read_buffers_allocated() const noexcept {
  return impl_->buffers_allocated_.load(std::memory_order_relaxed);
}

// -- io_pool ------------------------------------------------------------------

bool raise_thread_priority(int nice) noexcept {
  // Linux: PRIO_PROCESS with a thread id sets that thread only.
  return ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), nice) == 0;
}

struct io_pool::slot {
  asio::io_context ioc{1};
  asio::executor_work_guard<asio::io_context::executor_type> guard
    = asio::make_work_guard(ioc);
};

io_pool::io_pool(std::size_t threads, bool raise_priority) {
  if (threads == 0)
    threads = 1;
  for (std::size_t i = 0; i < threads; ++i)
    contexts_.push_back(std::make_unique<slot>());
  for (auto& s : contexts_)
    threads_.emplace_back([ctx = &s->ioc, raise_priority] {
      if (raise_priority)
        raise_thread_priority(io_thread_nice); // best effort, see the header
      ctx->run();
    });
}

io_pool::~io_pool() {
  stop();
}

asio::io_context& io_pool::context(std::size_t i) noexcept {
  return contexts_[i % contexts_.size()]->ioc;
}

void io_pool::stop() {
  for (auto& s : contexts_) {
    s->guard.reset();
    s->ioc.stop();
  }
  for (auto& t : threads_)
    if (t.joinable())
      t.join();
}

} // namespace aiperf::http
