// clang-format off
#include <utility> // first: Boost 1.74 awaitable.hpp needs std::exchange (g++ 12)
// clang-format on

#include "k8s/sim/http/front.hpp"

#include "k8s/object/status_json.hpp"
#include "k8s/object/wire.hpp"
#include "k8s/sim/http/audit.hpp"
#include "k8s/sim/http/protobuf.hpp"
#include "runtime/http_server/http_server.hpp"
#include "runtime/log/log.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include <atomic>
#include <charconv>
#include <chrono>
#include <deque>
#include <list>
#include <mutex>
#include <random>
#include <thread>
#include <variant>

namespace aiperf::k8s::sim::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
// A connection's executor: a strand of the io_context, type-erased.
using strand_type = asio::any_io_executor;

namespace {

constexpr std::uint32_t header_limit = 1u << 20; // Go's DefaultMaxHeaderBytes

std::int64_t now_unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string new_audit_id() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uint64_t hi = rng();
  std::uint64_t lo = rng();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL; // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL; // variant 1
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff),
                static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

void append_decimal(std::string& out, std::uint64_t value) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
  (void)ec;
  out.append(digits, end);
}

void append_hex(std::string& out, std::uint64_t value) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value, 16);
  (void)ec;
  out.append(digits, end);
}

/// A Warning header value as kube-apiserver writes it: `299 - "text"`, the
/// text's quotes and backslashes escaped (k8s.io/apiserver pkg/warning).
std::string warning_value(std::string_view text) {
  std::string out = "299 - \"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\r' || c == '\n')
      c = ' ';
    out += c;
  }
  out += '"';
  return out;
}

std::string_view sv(beast::string_view s) {
  return {s.data(), s.size()};
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i]))
        != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::string lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Go's JSON encoder writes ill-formed UTF-8 as U+FFFD; a Status naming
/// a query value or path the client sent must stay valid JSON too.
std::string valid_utf8(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  std::size_t i = 0;
  while (i < in.size()) {
    auto c = static_cast<unsigned char>(in[i]);
    std::size_t len = c < 0x80         ? 1
                      : (c >> 5) == 6  ? 2
                      : (c >> 4) == 14 ? 3
                      : (c >> 3) == 30 ? 4
                                       : 0;
    bool ok = len != 0 && i + len <= in.size();
    for (std::size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(in[i + k]) & 0xc0) == 0x80;
    if (ok && len == 2)
      ok = c >= 0xc2;
    if (ok && len == 3) {
      auto c1 = static_cast<unsigned char>(in[i + 1]);
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
    }
    if (ok && len == 4) {
      auto c1 = static_cast<unsigned char>(in[i + 1]);
      ok = c <= 0xf4 && !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
    }
    if (ok) {
      out.append(in.substr(i, len));
      i += len;
    } else {
      out.append("\xef\xbf\xbd");
      ++i;
    }
  }
  return out;
}

/// status_body with every text field made valid UTF-8 first.
std::string safe_status_body(status st) {
  st.message = valid_utf8(st.message);
  st.reason = valid_utf8(st.reason);
  st.details.name = valid_utf8(st.details.name);
  st.details.group = valid_utf8(st.details.group);
  st.details.kind = valid_utf8(st.details.kind);
  st.details.uid = valid_utf8(st.details.uid);
  for (auto& c : st.details.causes) {
    c.message = valid_utf8(c.message);
    c.field = valid_utf8(c.field);
  }
  return status_body(st);
}

/// The Status of an error the store (or the codec) answered; an error
/// without one is an internal error of the simulator.
status status_of_error(const caf::error& err) {
  if (const auto* st = status_of(err))
    return *st;
  status st;
  st.reason = "InternalError";
  st.code = 500;
  st.message = "Internal error occurred: " + error_message(err);
  return st;
}

status make_status(std::string reason, std::int32_t code, std::string message) {
  status st;
  st.reason = std::move(reason);
  st.code = code;
  st.message = std::move(message);
  return st;
}

/// What a fault with a code answers, in kube-apiserver's words
/// (k8s.io/apimachinery pkg/api/errors/errors.go, apiserver APF filter).
status fault_status(const fault& f, const request& req) {
  status st;
  st.code = f.code;
  std::string what = req.ref.resource;
  if (!req.ref.group.empty())
    what += "." + req.ref.group;
  switch (f.code) {
  case 409:
    st.reason = "Conflict";
    st.message = "Operation cannot be fulfilled on " + what + " \""
                 + req.ref.name
                 + "\": the object has been modified; please apply your "
                   "changes to the "
                   "latest version and try again";
    st.details.name = req.ref.name;
    st.details.group = req.ref.group;
    st.details.kind = req.ref.resource;
    break;
  case 429:
    st.reason = "TooManyRequests";
    st.message = "Too many requests, please try again later.";
    break;
  case 500:
    st.reason = "InternalError";
    st.message = "Internal error occurred: injected fault";
    break;
  case 503:
    st.reason = "ServiceUnavailable";
    st.message = "the server is currently unable to handle the request";
    break;
  case 504:
    st.reason = "Timeout";
    st.message = "the server was unable to return a response in the time "
                 "allotted, but may "
                 "still be processing the request";
    break;
  default:
    st.reason = "InternalError";
    st.message = "Internal error occurred: injected fault";
  }
  st.details.retry_after_seconds = f.retry_after_seconds;
  return st;
}

/// The one-shot hand-over of an actor's reply to a connection's coroutine:
/// the actor side stores the value and wakes the coroutine's timer on its
/// strand.
template <class T>
struct reply_slot : std::enable_shared_from_this<reply_slot<T>> {
  explicit reply_slot(strand_type ex) : timer(ex) {}
  std::mutex mutex;
  std::optional<caf::expected<T>> value;
  asio::steady_timer timer;

  void deliver(caf::expected<T> v) {
    {
      std::lock_guard guard{mutex};
      value = std::move(v);
    }
    asio::post(timer.get_executor(),
               [keep = this->shared_from_this()]() { keep->timer.cancel(); });
  }
};

/// A watch's hand-over from its sink actor to the connection's coroutine.
struct watch_channel {
  explicit watch_channel(strand_type ex) : timer(ex) {}
  std::mutex mutex;
  asio::steady_timer timer;
  std::string pending; // newline-delimited events not yet written
  bool wake_posted = false;
  bool established = false;
  std::optional<caf::error> refused;
  bool ended = false;
  caf::error end_reason;
  std::uint64_t id = 0;
  caf::actor sink;

  /// Ends the stream from the front's side (restart, stop): the coroutine
  /// resets its connection and unwatches.
  void cut(const std::shared_ptr<watch_channel>& keep) {
    std::lock_guard guard{mutex};
    ended = true;
    if (!end_reason)
      end_reason
          = make_error(errc::transport, "the simulator closed the connection");
    wake_locked(keep);
  }

  /// Wakes the coroutine once per batch (called with the mutex held).
  template <class Self> void wake_locked(const std::shared_ptr<Self>& keep) {
    if (wake_posted)
      return;
    wake_posted = true;
    asio::post(timer.get_executor(), [keep]() { keep->timer.cancel(); });
  }
};

} // namespace

/// A connection the restart fault and stop() can reset from any thread.
struct connection_entry {
  strand_type strand;
  std::function<void()> reset; // runs on the strand
  std::weak_ptr<watch_channel>
      watch; // the watch it streams, if any (strand only)
};

struct front::impl : std::enable_shared_from_this<front::impl> {
  impl(caf::actor_system& s, store_actor st, front_options o)
      : sys(s), store(std::move(st)), opts(std::move(o)), acceptor(ioc) {}

  caf::actor_system& sys;
  store_actor store;
  front_options opts;
  asio::io_context ioc{1};
  std::optional<asio::ssl::context> ssl;
  tcp::acceptor acceptor;
  tcp::endpoint endpoint;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
      work;
  std::vector<std::thread> threads;
  audit_log audit;
  fault_table faults;
  std::atomic<bool> stopped{false};
  std::uint16_t port = 0;

  std::mutex connections_mutex;
  std::list<std::weak_ptr<connection_entry>> connections;

  // --- setup ---------------------------------------------------------------

  caf::expected<void> open_acceptor() {
    boost::system::error_code ec;
    acceptor.open(endpoint.protocol(), ec);
    if (!ec)
      acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec)
      acceptor.bind(endpoint, ec);
    if (!ec)
      acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      boost::system::error_code ignored;
      acceptor.close(ignored);
      return make_error(
          http_server::errc::bind_failed,
          "cannot listen on " + opts.host + ":"
              + std::to_string(endpoint.port()) + ": " + ec.message()
              + "; pick another --port or stop the process using it");
    }
    endpoint = acceptor.local_endpoint(ec);
    return {};
  }

  void register_connection(const std::shared_ptr<connection_entry>& entry) {
    std::lock_guard guard{connections_mutex};
    for (auto it = connections.begin(); it != connections.end();) {
      if (it->expired())
        it = connections.erase(it);
      else
        ++it;
    }
    connections.push_back(entry);
  }

  std::mutex watches_mutex;
  std::list<std::weak_ptr<watch_channel>> watches;

  void register_watch(const std::shared_ptr<watch_channel>& chan) {
    std::lock_guard guard{watches_mutex};
    for (auto it = watches.begin(); it != watches.end();) {
      if (it->expired())
        it = watches.erase(it);
      else
        ++it;
    }
    watches.push_back(chan);
  }

  /// Ends every watch's sink actor (stop: nothing will read them again).
  void kill_watches() {
    std::lock_guard guard{watches_mutex};
    for (auto& w : watches) {
      if (auto chan = w.lock()) {
        std::uint64_t id;
        {
          std::lock_guard g{chan->mutex};
          id = chan->id;
        }
        if (id != 0)
          caf::anon_send(store, unwatch_atom::value, id);
        caf::anon_send_exit(chan->sink, caf::exit_reason::user_shutdown);
      }
    }
    watches.clear();
  }

  void reset_connections() {
    std::vector<std::shared_ptr<connection_entry>> live;
    {
      std::lock_guard guard{connections_mutex};
      for (auto& w : connections)
        if (auto e = w.lock())
          live.push_back(std::move(e));
      connections.clear();
    }
    for (auto& e : live)
      asio::post(e->strand, [e]() {
        e->reset();
        if (auto chan = e->watch.lock())
          chan->cut(chan);
      });
  }

  // --- accept --------------------------------------------------------------

  asio::awaitable<void> accept_loop() {
    auto self = shared_from_this();
    for (;;) {
      boost::system::error_code ec;
      tcp::socket socket{asio::make_strand(ioc)};
      co_await acceptor.async_accept(
          socket, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        if (!acceptor.is_open() || stopped)
          co_return;
        continue; // EMFILE and friends: keep serving the others
      }
      socket.set_option(tcp::no_delay(true), ec);
      auto ex = socket.get_executor();
      if (ssl) {
        asio::co_spawn(ex, run_tls(self, std::move(socket)), asio::detached);
      } else {
        asio::co_spawn(ex, run_plain(self, std::move(socket)), asio::detached);
      }
    }
  }

  static asio::awaitable<void> run_plain(std::shared_ptr<impl> self,
                                         tcp::socket socket) {
    auto stream = std::make_shared<beast::tcp_stream>(std::move(socket));
    co_await self->session(stream);
  }

  static asio::awaitable<void> run_tls(std::shared_ptr<impl> self,
                                       tcp::socket socket) {
    using ssl_stream = beast::ssl_stream<beast::tcp_stream>;
    auto stream = std::make_shared<ssl_stream>(
        beast::tcp_stream{std::move(socket)}, *self->ssl);
    boost::system::error_code ec;
    beast::get_lowest_layer(*stream).expires_after(std::chrono::seconds(30));
    co_await stream->async_handshake(
        asio::ssl::stream_base::server,
        asio::redirect_error(asio::use_awaitable, ec));
    beast::get_lowest_layer(*stream).expires_never();
    if (ec)
      co_return;
    co_await self->session(stream);
  }

  // --- one connection ------------------------------------------------------

  /// What a served request leaves for its connection.
  enum class after { keep_open, close, reset };

  template <class Stream> static tcp::socket& socket_of(Stream& s) {
    return beast::get_lowest_layer(s).socket();
  }

  template <class Stream> static void hard_reset(Stream& s) {
    boost::system::error_code ec;
    auto& sock = socket_of(s);
    sock.set_option(asio::socket_base::linger(true, 0), ec);
    sock.close(ec);
  }

  template <class Stream>
  asio::awaitable<void> session(std::shared_ptr<Stream> stream) {
    auto entry = std::make_shared<connection_entry>(
        connection_entry{strand_type{socket_of(*stream).get_executor()},
                         [weak = std::weak_ptr<Stream>(stream)]() {
                           if (auto s = weak.lock())
                             hard_reset(*s);
                         }});
    register_connection(entry);
    std::string peer = "127.0.0.1";
    {
      boost::system::error_code ec;
      auto ep = socket_of(*stream).remote_endpoint(ec);
      if (!ec)
        peer = ep.address().to_string();
    }
    beast::flat_buffer buffer;
    buffer.reserve(16 * 1024);
    std::string out;
    for (;;) {
      bhttp::request_parser<bhttp::string_body> parser;
      parser.body_limit(opts.body_limit);
      parser.header_limit(header_limit);
      boost::system::error_code ec;
      co_await bhttp::async_read(*stream, buffer, parser,
                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        if (ec == bhttp::error::end_of_stream || ec == asio::error::eof
            || ec == asio::error::connection_reset
            || ec == asio::error::operation_aborted
            || ec == asio::error::bad_descriptor || !parser.got_some())
          break;
        // A malformed request: Go answers 400 and closes; ours carries a
        // Status so every answer a client sees is one it can decode.
        status st = ec == bhttp::error::body_limit
                        ? make_status("RequestEntityTooLarge", 413,
                                      "Request entity too large: limit is "
                                          + std::to_string(opts.body_limit))
                        : (ec == bhttp::error::header_limit
                               ? make_status("BadRequest", 431,
                                             "Request Header Fields Too Large")
                               : make_status("BadRequest", 400,
                                             "bad request: " + ec.message()));
        out.clear();
        append_response(out, static_cast<unsigned>(st.code), "application/json",
                        safe_status_body(st), new_audit_id(), {}, false);
        co_await write_all(*stream, out);
        break;
      }
      auto& req = parser.get();
      const bool keep_alive = req.keep_alive();
      // Nothing a request carries may take the connection's coroutine
      // down without an answer: an escaped exception is a 500 Status.
      after result = after::close;
      bool threw = false;
      try {
        result = co_await serve(stream, *entry, req, peer, keep_alive, out);
      } catch (const std::exception& e) {
        threw = true;
        log::get("sim_cluster")
            ->error("{} {}: {}", std::string{req.method_string()},
                    std::string{req.target()}, e.what());
      }
      if (threw) {
        out.clear();
        append_response(out, 500, "application/json",
                        safe_status_body(make_status(
                            "InternalError", 500,
                            "Internal error occurred: the simulator "
                            "failed to answer this request")),
                        new_audit_id(), {}, false);
        co_await write_all(*stream, out);
        break;
      }
      if (result == after::reset) {
        hard_reset(*stream);
        co_return;
      }
      if (result == after::close || !keep_alive)
        break;
    }
    boost::system::error_code ec;
    socket_of(*stream).shutdown(tcp::socket::shutdown_send, ec);
    socket_of(*stream).close(ec);
  }

  template <class Stream>
  static asio::awaitable<bool> write_all(Stream& stream,
                                         const std::string& out) {
    boost::system::error_code ec;
    co_await asio::async_write(stream, asio::buffer(out),
                               asio::redirect_error(asio::use_awaitable, ec));
    co_return !ec;
  }

  /// Serializes a complete response (headers + body) into `out`.
  static void append_response(std::string& out, unsigned code,
                              std::string_view content_type,
                              std::string_view body, std::string_view audit_id,
                              const std::vector<std::string>& warnings,
                              bool keep_alive, std::int32_t retry_after = 0,
                              bool nosniff = false) {
    out.append("HTTP/1.1 ");
    append_decimal(out, code);
    out.push_back(' ');
    out.append(reason_phrase(static_cast<std::int32_t>(code)));
    out.append("\r\nAudit-ID: ");
    out.append(audit_id);
    out.append("\r\nCache-Control: no-cache, private\r\nContent-Type: ");
    out.append(content_type);
    if (nosniff)
      out.append("\r\nX-Content-Type-Options: nosniff");
    for (const auto& w : warnings) {
      out.append("\r\nWarning: ");
      out.append(warning_value(w));
    }
    if (retry_after > 0) {
      out.append("\r\nRetry-After: ");
      append_decimal(out, static_cast<std::uint64_t>(retry_after));
    }
    if (!keep_alive)
      out.append("\r\nConnection: close");
    out.append("\r\nContent-Length: ");
    append_decimal(out, body.size());
    out.append("\r\n\r\n");
    out.append(body);
  }

  /// The request's user: the administrator for the admin token (and for no
  /// token over plain HTTP), system:anonymous for no token over HTTPS, else
  /// whatever the store says of the token.
  template <class Stream>
  asio::awaitable<caf::expected<user_info>>
  authenticate(const bhttp::request<bhttp::string_body>& req, Stream& stream) {
    auto it = req.find(bhttp::field::authorization);
    std::string token;
    if (it != req.end()) {
      std::string_view v = sv(it->value());
      if (v.size() > 7 && iequals(v.substr(0, 7), "bearer "))
        token = std::string{v.substr(7)};
      while (!token.empty() && token.front() == ' ')
        token.erase(token.begin());
    }
    if (token.empty()) {
      if (!ssl)
        co_return admin_user();
      co_return user_info{
          "system:anonymous", "", {"system:unauthenticated"}, {}};
    }
    if (!opts.admin_token.empty() && token == opts.admin_token)
      co_return admin_user();
    auto slot = std::make_shared<reply_slot<user_info>>(
        strand_type{socket_of(stream).get_executor()});
    sys.spawn([slot, store = store, token](caf::event_based_actor* self) {
      self->request(store, caf::infinite, authenticate_atom::value, token)
          .then([slot](user_info& u) { slot->deliver(std::move(u)); },
                [slot](caf::error& e) { slot->deliver(std::move(e)); });
    });
    co_return co_await wait_slot(slot);
  }

  template <class T>
  static asio::awaitable<caf::expected<T>>
  wait_slot(std::shared_ptr<reply_slot<T>> slot) {
    for (;;) {
      {
        std::lock_guard guard{slot->mutex};
        if (slot->value)
          co_return std::move(*slot->value);
      }
      slot->timer.expires_at(asio::steady_timer::time_point::max());
      boost::system::error_code ec;
      co_await slot->timer.async_wait(
          asio::redirect_error(asio::use_awaitable, ec));
    }
  }

  template <class Stream>
  asio::awaitable<caf::expected<response>> ask_store(Stream& stream,
                                                     request req) {
    auto slot = std::make_shared<reply_slot<response>>(
        strand_type{socket_of(stream).get_executor()});
    sys.spawn([slot, store = store,
               req = std::move(req)](caf::event_based_actor* self) mutable {
      self->request(store, caf::infinite, std::move(req))
          .then([slot](response& r) { slot->deliver(std::move(r)); },
                [slot](caf::error& e) { slot->deliver(std::move(e)); });
    });
    co_return co_await wait_slot(slot);
  }

  template <class Stream>
  asio::awaitable<caf::expected<response>> ask_discovery(Stream& stream,
                                                         std::string path) {
    auto slot = std::make_shared<reply_slot<response>>(
        strand_type{socket_of(stream).get_executor()});
    sys.spawn([slot, store = store,
               path = std::move(path)](caf::event_based_actor* self) {
      self->request(store, caf::infinite, discovery_atom::value, path)
          .then([slot](response& r) { slot->deliver(std::move(r)); },
                [slot](caf::error& e) { slot->deliver(std::move(e)); });
    });
    co_return co_await wait_slot(slot);
  }

  void write_audit(audit_entry& e, const status* failure) {
    if (!audit.is_open())
      return;
    if (failure != nullptr) {
      e.status_reason = failure->reason;
      e.status_message = failure->message;
    }
    if (e.stage_unix_ns == 0)
      e.stage_unix_ns = now_unix_ns();
    audit.write(e);
  }

  /// Answers one request; the connection's fate is the result.
  template <class Stream>
  asio::awaitable<after>
  serve(std::shared_ptr<Stream> stream, connection_entry& entry,
        bhttp::request<bhttp::string_body>& req, const std::string& peer,
        bool keep_alive, std::string& out) {
    audit_entry ae;
    ae.received_unix_ns = now_unix_ns();
    ae.audit_id = new_audit_id();
    ae.stage = "ResponseComplete";
    ae.source_ip = peer;
    ae.request_uri = std::string{req.target()};
    if (auto ua = req.find(bhttp::field::user_agent); ua != req.end())
      ae.user_agent = std::string{ua->value()};
    const std::string method{req.method_string()};
    std::string_view target = sv(req.target());
    std::string_view path = target.substr(0, target.find('?'));
    out.clear();

    auto send_status = [&](const status& st, std::vector<std::string> warnings
                                             = {}) -> asio::awaitable<after> {
      append_response(out, static_cast<unsigned>(st.code), "application/json",
                      safe_status_body(st), ae.audit_id, warnings, keep_alive,
                      st.details.retry_after_seconds);
      ae.code = st.code;
      write_audit(ae, &st);
      co_return co_await write_all(*stream, out) ? after::keep_open
                                                 : after::close;
    };
    auto send_not_found = [&]() -> asio::awaitable<after> {
      append_response(out, 404, "text/plain; charset=utf-8",
                      "404 page not found\n", ae.audit_id, {}, keep_alive, 0,
                      true);
      ae.code = 404;
      write_audit(ae, nullptr);
      co_return co_await write_all(*stream, out) ? after::keep_open
                                                 : after::close;
    };

    if (path == "/sim/v1" || path.starts_with("/sim/v1/"))
      co_return co_await serve_sim(stream, req, path, keep_alive, out);

    auto user = co_await authenticate(req, *stream);
    if (!user) {
      ae.user
          = user_info{"system:anonymous", "", {"system:unauthenticated"}, {}};
      ae.verb = lower(method);
      co_return co_await send_status(status_of_error(user.error()));
    }
    ae.user = *user;

    if (is_non_resource_path(path)) {
      ae.verb = lower(method);
      if (method != "GET")
        co_return co_await send_not_found();
      if (path == "/healthz" || path == "/readyz" || path == "/livez") {
        append_response(out, 200, "text/plain; charset=utf-8", "ok",
                        ae.audit_id, {}, keep_alive, 0, true);
        write_audit(ae, nullptr);
        co_return co_await write_all(*stream, out) ? after::keep_open
                                                   : after::close;
      }
      auto answer = co_await ask_discovery(*stream, std::string{path});
      if (!answer) {
        const auto* st = status_of(answer.error());
        if (st == nullptr || st->code == 404)
          co_return co_await send_not_found();
        co_return co_await send_status(*st);
      }
      const bool protobuf
          = path == "/openapi/v2" || path == "/swagger-2.0.0.pb-v1";
      append_response(out, static_cast<unsigned>(answer->code),
                      protobuf ? "application/octet-stream"
                               : "application/json",
                      answer->body, ae.audit_id, answer->warnings, keep_alive);
      ae.code = answer->code;
      write_audit(ae, nullptr);
      co_return co_await write_all(*stream, out) ? after::keep_open
                                                 : after::close;
    }

    std::string content_type;
    if (auto ct = req.find(bhttp::field::content_type); ct != req.end())
      content_type = std::string{ct->value()};
    std::string body = std::move(req.body());
    if (content_type.starts_with(protobuf_content_type)
        && (method == "POST" || method == "PUT")) {
      auto decoded = decode_protobuf_object(body);
      if (!decoded) {
        ae.verb = method == "POST" ? "create" : "update";
        co_return co_await send_status(status_of_error(decoded.error()));
      }
      body = decoded->dump();
      content_type = "application/json";
    }
    auto parsed = request_of(method, target, content_type, std::move(body));
    if (!parsed) {
      ae.verb = lower(method);
      const auto* st = status_of(parsed.error());
      if (st == nullptr)
        co_return co_await send_not_found();
      co_return co_await send_status(*st);
    }
    request& r = *parsed;
    r.user = *user;
    r.user_agent = ae.user_agent;
    for (const auto& h : req) {
      if (iequals(sv(h.name_string()), "Impersonate-User"))
        r.impersonate_user = std::string{h.value().data(), h.value().size()};
      else if (iequals(sv(h.name_string()), "Impersonate-Group"))
        r.impersonate_groups.emplace_back(h.value().data(), h.value().size());
    }
    if (auto acc = req.find(bhttp::field::accept); acc != req.end())
      r.as_table = acc->value().find("as=Table") != beast::string_view::npos;
    ae.verb = to_string(r.verb);
    ae.object_ref = r.ref;
    ae.impersonated_user = r.impersonate_user;
    ae.impersonated_groups = r.impersonate_groups;

    if (auto f = faults.take(
            to_string(r.verb), r.ref.resource, r.ref.subresource,
            r.ref.namespace_name.empty() && r.ref.resource == "namespaces"
                ? r.ref.name
                : r.ref.namespace_name,
            r.impersonate_user.empty() ? user->username : r.impersonate_user)) {
      if (f->delay_ms > 0) {
        asio::steady_timer delay{socket_of(*stream).get_executor()};
        delay.expires_after(std::chrono::milliseconds(f->delay_ms));
        boost::system::error_code ec;
        co_await delay.async_wait(
            asio::redirect_error(asio::use_awaitable, ec));
      }
      if (f->reset)
        co_return after::reset;
      if (f->code != 0)
        co_return co_await send_status(fault_status(*f, r));
    }

    if (r.verb == verb::watch)
      co_return co_await serve_watch(stream, entry, std::move(r), ae,
                                     keep_alive, out);

    auto answer = co_await ask_store(*stream, std::move(r));
    if (!answer)
      co_return co_await send_status(status_of_error(answer.error()));
    append_response(out, static_cast<unsigned>(answer->code),
                    "application/json", answer->body, ae.audit_id,
                    answer->warnings, keep_alive);
    ae.code = answer->code;
    write_audit(ae, nullptr);
    co_return co_await write_all(*stream, out) ? after::keep_open
                                               : after::close;
  }

  template <class Stream>
  asio::awaitable<after>
  serve_watch(std::shared_ptr<Stream> stream, connection_entry& entry,
              request r, audit_entry& ae, bool keep_alive, std::string& out) {
    auto chan = std::make_shared<watch_channel>(
        strand_type{socket_of(*stream).get_executor()});
    entry.watch = chan;
    auto sink = sys.spawn([chan, store = store, r = std::move(r)](
                              watch_sink_actor::pointer self) mutable
                          -> watch_sink_actor::behavior_type {
      self->request(store, caf::infinite, watch_atom::value, std::move(r),
                    caf::actor_cast<watch_sink_actor>(self))
          .then(
              [chan](std::uint64_t id) {
                std::lock_guard guard{chan->mutex};
                chan->id = id;
                chan->established = true;
                chan->wake_locked(chan);
              },
              [chan, self](caf::error& e) {
                {
                  std::lock_guard guard{chan->mutex};
                  chan->refused = std::move(e);
                  chan->wake_locked(chan);
                }
                self->quit();
              });
      return {
          [chan](events_atom, std::uint64_t,
                 const std::vector<watch_event>& events) {
            std::lock_guard guard{chan->mutex};
            for (const auto& ev : events) {
              chan->pending.append("{\"type\":\"");
              chan->pending.append(ev.type);
              chan->pending.append("\",\"object\":");
              chan->pending.append(ev.object);
              chan->pending.append("}\n");
            }
            chan->wake_locked(chan);
          },
          [chan, self](watch_end_atom, std::uint64_t, caf::error& reason) {
            {
              std::lock_guard guard{chan->mutex};
              chan->ended = true;
              chan->end_reason = std::move(reason);
              chan->wake_locked(chan);
            }
            self->quit();
          },
      };
    });
    chan->sink = caf::actor_cast<caf::actor>(sink);
    register_watch(chan);
    auto wait = [&]() -> asio::awaitable<void> {
      chan->timer.expires_at(asio::steady_timer::time_point::max());
      boost::system::error_code ec;
      co_await chan->timer.async_wait(
          asio::redirect_error(asio::use_awaitable, ec));
    };
    // Established or refused.
    for (;;) {
      {
        std::lock_guard guard{chan->mutex};
        chan->wake_posted = false;
        if (chan->refused || chan->established)
          break;
      }
      co_await wait();
    }
    std::optional<caf::error> refused;
    {
      std::lock_guard guard{chan->mutex};
      refused = chan->refused;
    }
    if (refused) {
      status st = status_of_error(*refused);
      append_response(out, static_cast<unsigned>(st.code), "application/json",
                      safe_status_body(st), ae.audit_id, {}, keep_alive,
                      st.details.retry_after_seconds);
      ae.code = st.code;
      write_audit(ae, &st);
      co_return co_await write_all(*stream, out) ? after::keep_open
                                                 : after::close;
    }
    out.clear();
    out.append("HTTP/1.1 200 OK\r\nAudit-ID: ");
    out.append(ae.audit_id);
    out.append("\r\nCache-Control: no-cache, private\r\nContent-Type: "
               "application/json\r\n");
    if (!keep_alive)
      out.append("Connection: close\r\n");
    out.append("Transfer-Encoding: chunked\r\n\r\n");
    ae.stage = "ResponseStarted";
    ae.code = 200;
    write_audit(ae, nullptr);
    std::string batch;
    for (;;) {
      bool ended = false;
      caf::error end_reason;
      batch.clear();
      {
        std::lock_guard guard{chan->mutex};
        chan->wake_posted = false;
        batch.swap(chan->pending);
        ended = chan->ended;
        end_reason = chan->end_reason;
      }
      if (!batch.empty()) {
        append_hex(out, batch.size());
        out.append("\r\n");
        out.append(batch);
        out.append("\r\n");
      }
      if (ended) {
        if (end_reason) {
          // Dropped: the connection goes as if the server went away.
          if (!out.empty())
            co_await write_all(*stream, out);
          caf::anon_send(store, unwatch_atom::value, chan->id);
          co_return after::reset;
        }
        out.append("0\r\n\r\n");
        bool ok = co_await write_all(*stream, out);
        out.clear();
        co_return ok ? after::keep_open : after::close;
      }
      if (!out.empty()) {
        bool ok = co_await write_all(*stream, out);
        out.clear();
        if (!ok) {
          std::uint64_t id;
          {
            std::lock_guard guard{chan->mutex};
            id = chan->id;
          }
          caf::anon_send(store, unwatch_atom::value, id);
          co_return after::close;
        }
        continue; // more may have arrived while writing
      }
      if (stopped) {
        caf::anon_send(store, unwatch_atom::value, chan->id);
        co_return after::reset;
      }
      co_await wait();
    }
  }

  // --- /sim/v1 -------------------------------------------------------------

  /// What a /sim/v1 request asks for, decided without waiting on anything.
  struct sim_answer {
    enum class action { reply, drop_watches, restart } what = action::reply;
    unsigned code = 200;
    std::string body;
    std::string resource;          // drop_watches
    std::int64_t down_seconds = 3; // restart
    bool keep_state = true;
  };

  static sim_answer sim_status(const status& st) {
    return {sim_answer::action::reply, static_cast<unsigned>(st.code),
            safe_status_body(st)};
  }

  sim_answer route_sim(bhttp::verb method, std::string_view method_name,
                       std::string_view path, std::string_view authorization,
                       const std::string& raw_body) {
    if (ssl
        && (opts.admin_token.empty()
            || authorization != "Bearer " + opts.admin_token))
      return sim_status(make_status("Forbidden", 403,
                                    "the simulator's fault routes (/sim/v1) "
                                    "are for the admin user only"));
    json body = json::object();
    if (!raw_body.empty()) {
      body = json::parse(raw_body, nullptr, false);
      if (body.is_discarded())
        return sim_status(
            make_status("BadRequest", 400,
                        "the body of " + std::string{path} + " is not JSON"));
    }
    if (path == "/sim/v1/faults" && method == bhttp::verb::post) {
      auto id = faults.add(body);
      if (!id)
        return sim_status(status_of_error(id.error()));
      return {sim_answer::action::reply, 201, json{{"id", *id}}.dump()};
    }
    if (path.starts_with("/sim/v1/faults/") && method == bhttp::verb::delete_) {
      std::string id{path.substr(std::string_view{"/sim/v1/faults/"}.size())};
      if (!faults.remove(id))
        return sim_status(
            make_status("NotFound", 404, "fault \"" + id + "\" not found"));
      return {sim_answer::action::reply, 200, "{}"};
    }
    if (path == "/sim/v1/watches:drop" && method == bhttp::verb::post) {
      sim_answer a;
      a.what = sim_answer::action::drop_watches;
      if (body.is_object() && body.contains("resource")
          && body["resource"].is_string())
        a.resource = body["resource"].get<std::string>();
      return a;
    }
    if (path == "/sim/v1/apiserver:restart" && method == bhttp::verb::post) {
      sim_answer a;
      a.what = sim_answer::action::restart;
      if (body.is_object()) {
        if (auto d = body.find("downSeconds"); d != body.end()) {
          if (!d->is_number_integer() || d->get<std::int64_t>() < 0
              || d->get<std::int64_t>() > 3600)
            return sim_status(
                make_status("BadRequest", 400,
                            "downSeconds must be an integer in [0, 3600]"));
          a.down_seconds = d->get<std::int64_t>();
        }
        if (auto k = body.find("keepState"); k != body.end()) {
          if (!k->is_boolean())
            return sim_status(make_status("BadRequest", 400,
                                          "keepState must be true or false"));
          a.keep_state = k->get<bool>();
        }
      }
      a.body
          = json{{"downSeconds", a.down_seconds}, {"keepState", a.keep_state}}
                .dump();
      return a;
    }
    return sim_status(make_status(
        "NotFound", 404,
        "no simulator route " + std::string{method_name} + " "
            + std::string{path}
            + "; see POST /sim/v1/faults, DELETE /sim/v1/faults/{id}, POST "
              "/sim/v1/watches:drop, POST /sim/v1/apiserver:restart"));
  }

  template <class Stream>
  asio::awaitable<after> serve_sim(std::shared_ptr<Stream> stream,
                                   bhttp::request<bhttp::string_body>& req,
                                   std::string_view path, bool keep_alive,
                                   std::string& out) {
    std::string authorization;
    if (auto it = req.find(bhttp::field::authorization); it != req.end())
      authorization = std::string{it->value()};
    sim_answer a = route_sim(req.method(), sv(req.method_string()), path,
                             authorization, req.body());
    if (a.what == sim_answer::action::drop_watches) {
      auto slot = std::make_shared<reply_slot<std::uint64_t>>(
          socket_of(*stream).get_executor());
      sys.spawn([slot, store = store,
                 resource = a.resource](caf::event_based_actor* self) {
        self->request(store, caf::infinite, drop_watches_atom::value, resource)
            .then([slot](std::uint64_t n) { slot->deliver(n); },
                  [slot](caf::error& e) { slot->deliver(std::move(e)); });
      });
      auto n = co_await wait_slot(slot);
      if (n) {
        a.body = json{{"dropped", *n}}.dump();
      } else {
        a = sim_status(status_of_error(n.error()));
      }
    }
    append_response(out, a.code, "application/json", a.body, new_audit_id(), {},
                    keep_alive);
    const bool ok = co_await write_all(*stream, out);
    if (a.what == sim_answer::action::restart) {
      asio::co_spawn(ioc,
                     restart(shared_from_this(), a.down_seconds, a.keep_state),
                     asio::detached);
      co_return after::reset;
    }
    co_return ok ? after::keep_open : after::close;
  }

  static asio::awaitable<void> restart(std::shared_ptr<impl> self,
                                       std::int64_t down_seconds,
                                       bool keep_state) {
    log::get("sim_cluster")
        ->info("apiserver restart: down for {} s, keep state {}", down_seconds,
               keep_state);
    boost::system::error_code ec;
    self->acceptor.close(ec);
    self->reset_connections();
    auto slot = std::make_shared<reply_slot<std::string>>(
        asio::make_strand(self->ioc));
    self->sys.spawn(
        [slot, store = self->store, keep_state](caf::event_based_actor* a) {
          a->request(store, caf::infinite, reset_atom::value, keep_state)
              .then([slot](std::string& rv) { slot->deliver(std::move(rv)); },
                    [slot](caf::error& e) { slot->deliver(std::move(e)); });
        });
    (void)co_await wait_slot(slot);
    asio::steady_timer timer{self->ioc};
    timer.expires_after(std::chrono::seconds(down_seconds));
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (self->stopped)
      co_return;
    if (auto opened = self->open_acceptor(); !opened) {
      log::get("sim_cluster")
          ->error("apiserver restart: {}", error_message(opened.error()));
      co_return;
    }
    co_await self->accept_loop();
  }
};

front::front(caf::actor_system& sys, store_actor store, front_options opts)
    : impl_(std::make_shared<impl>(sys, std::move(store), std::move(opts))) {}

front::~front() {
  stop();
}

std::uint16_t front::port() const noexcept {
  return impl_->port;
}

fault_table& front::faults() noexcept {
  return impl_->faults;
}

caf::expected<std::uint16_t> front::start() {
  auto& d = *impl_;
  if (d.port != 0)
    return make_error(http_server::errc::already_started,
                      "the simulator's front is already "
                      "serving; start() was called twice");
  boost::system::error_code ec;
  auto address = asio::ip::make_address(d.opts.host, ec);
  if (ec)
    return make_error(http_server::errc::bad_config,
                      "the host '" + d.opts.host
                          + "' is not an IP address; use e.g. 127.0.0.1");
  if (d.opts.threads == 0 || d.opts.threads > 64)
    return make_error(http_server::errc::bad_config,
                      "io threads must be in [1, 64], got "
                          + std::to_string(d.opts.threads));
  if (d.opts.tls) {
    d.ssl.emplace(asio::ssl::context::tls_server);
    d.ssl->set_options(
        asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2
            | asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1
            | asio::ssl::context::no_tlsv1_1,
        ec);
    const auto& id = *d.opts.tls;
    if (!ec)
      d.ssl->use_certificate_chain(asio::buffer(id.server_cert_pem), ec);
    if (!ec)
      d.ssl->use_private_key(asio::buffer(id.server_key_pem),
                             asio::ssl::context::pem, ec);
    if (ec)
      return make_error(http_server::errc::bad_config,
                        "the simulator's TLS certificate was refused: "
                            + ec.message());
  }
  if (!d.opts.audit_log_path.empty())
    if (auto opened = d.audit.open(d.opts.audit_log_path); !opened)
      return opened.error();
  d.endpoint = tcp::endpoint{address, d.opts.port};
  if (auto opened = d.open_acceptor(); !opened)
    return opened.error();
  d.port = d.endpoint.port();
  d.work.emplace(d.ioc.get_executor());
  asio::co_spawn(d.ioc, d.accept_loop(), asio::detached);
  for (unsigned i = 0; i < d.opts.threads; ++i)
    d.threads.emplace_back([&d]() { d.ioc.run(); });
  return d.port;
}

void front::stop() {
  auto& d = *impl_;
  if (d.stopped.exchange(true))
    return;
  if (!d.threads.empty()) {
    asio::post(d.ioc, [&d]() {
      boost::system::error_code ec;
      d.acceptor.close(ec);
    });
    d.reset_connections();
    d.work.reset();
    // Give resets a moment to run, then stop whatever is left (watches
    // waiting on their store).
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    d.ioc.stop();
    for (auto& t : d.threads)
      t.join();
    d.threads.clear();
  }
  d.kill_watches();
  d.audit.close();
}

} // namespace aiperf::k8s::sim::http
