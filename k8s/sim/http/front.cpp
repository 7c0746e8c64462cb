// clang-format off
#include <utility> // first: Boost 1.74 awaitable.hpp needs std::exchange (g++ 12)
// clang-format on

#include "k8s/sim/http/front.hpp"

#include "k8s/object/status_json.hpp"
#include "k8s/object/wire.hpp"
#include "k8s/sim/auth/rbac.hpp"
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

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <deque>
#include <fcntl.h>
#include <future>
#include <limits>
#include <list>
#include <mutex>
#include <netinet/in.h>
#include <random>
#include <sys/socket.h>
#include <sys/stat.h>
#include <thread>
#include <tuple>
#include <unistd.h>
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

/// A request on the pod network's subresources, read off its path.
struct pod_route {
  enum class kind { pod_log, pod_proxy, service_proxy } what = kind::pod_log;
  std::string namespace_name;
  std::string id;              // "name", "name:port" or "scheme:name:port"
  std::string rest;            // the proxied path ("/v1/models"), "" for none
  bool trailing_slash = false; // ".../proxy/" (rest "/")
};

/// `/api/v1/namespaces/{ns}/pods/{id}/log`,
/// `/api/v1/namespaces/{ns}/pods/{id}/proxy[/...]`,
/// `/api/v1/namespaces/{ns}/services/{id}/proxy[/...]`.
std::optional<pod_route> pod_route_of(std::string_view path) {
  constexpr std::string_view prefix = "/api/v1/namespaces/";
  if (!path.starts_with(prefix))
    return std::nullopt;
  auto tail = path.substr(prefix.size());
  std::string_view seg[4];
  for (auto& s : seg) {
    auto slash = tail.find('/');
    s = tail.substr(0, slash);
    if (s.empty())
      return std::nullopt;
    tail = slash == std::string_view::npos ? std::string_view{}
                                           : tail.substr(slash);
    if (&s != &seg[3]) {
      if (tail.empty())
        return std::nullopt;
      tail.remove_prefix(1);
    }
  }
  pod_route r;
  r.namespace_name = url_decode(seg[0]);
  r.id = url_decode(seg[2]);
  if (seg[1] == "pods" && seg[3] == "log" && tail.empty()) {
    r.what = pod_route::kind::pod_log;
    return r;
  }
  if (seg[3] != "proxy" || (seg[1] != "pods" && seg[1] != "services"))
    return std::nullopt;
  r.what = seg[1] == "pods" ? pod_route::kind::pod_proxy
                            : pod_route::kind::service_proxy;
  r.rest = std::string{tail};
  return r;
}

/// k8s.io/apimachinery pkg/util/net SplitSchemeNamePort.
bool split_scheme_name_port(const std::string& id, std::string& scheme,
                            std::string& name, std::string& port) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    auto colon = id.find(':', start);
    parts.push_back(id.substr(start, colon - start));
    if (colon == std::string::npos)
      break;
    start = colon + 1;
  }
  if (parts.size() == 1) {
    name = parts[0];
  } else if (parts.size() == 2) {
    name = parts[0];
    port = parts[1];
  } else if (parts.size() == 3) {
    scheme = parts[0];
    name = parts[1];
    port = parts[2];
  } else {
    return false;
  }
  return !name.empty()
         && (scheme.empty() || scheme == "http" || scheme == "https");
}

/// The RBAC verb of a proxied method (kube-apiserver's RequestInfo).
std::optional<verb> verb_of_method(bhttp::verb m) {
  switch (m) {
  case bhttp::verb::get:
  case bhttp::verb::head:
    return verb::get;
  case bhttp::verb::post:
    return verb::create;
  case bhttp::verb::put:
    return verb::update;
  case bhttp::verb::patch:
    return verb::patch;
  case bhttp::verb::delete_:
    return verb::remove;
  default:
    return std::nullopt;
  }
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return c >= '0' && c <= '9';
  });
}

/// Go's net.IP.IsGlobalUnicast for an IPv4 text (what the pod proxy
/// accepts as a pod's address).
bool is_global_unicast_v4(const std::string& ip) {
  boost::system::error_code ec;
  auto a = asio::ip::make_address_v4(ip, ec);
  if (ec)
    return false;
  auto b = a.to_bytes();
  return !(a.is_unspecified() || a.is_loopback() || a.is_multicast()
           || (b[0] == 169 && b[1] == 254)
           || a == asio::ip::address_v4::broadcast());
}

/// How Go's dialer words a failed connect (`connect: connection refused`).
std::string dial_failure(const boost::system::error_code& ec) {
  if (ec == asio::error::connection_refused)
    return "connect: connection refused";
  if (ec == asio::error::host_unreachable)
    return "connect: no route to host";
  if (ec == asio::error::network_unreachable)
    return "connect: network is unreachable";
  if (ec == asio::error::timed_out || ec == asio::error::operation_aborted)
    return "i/o timeout";
  return "connect: " + lower(ec.message());
}

/// Go's strconv.ParseBool.
std::optional<bool> parse_go_bool(std::string_view v) {
  if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE"
      || v == "True")
    return true;
  if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE"
      || v == "False")
    return false;
  return std::nullopt;
}

/// What a pods/log request asks for.
struct log_options {
  std::string container;
  bool follow = false;
  bool previous = false;
  std::int64_t tail_lines = -1;  // -1 = everything
  std::int64_t limit_bytes = -1; // -1 = no limit
};

/// The bytes of `path` from `offset` (at most `max`), "" when it cannot be
/// read; `offset` moves past what was read.
std::string read_file_from(const std::string& path, std::uint64_t& offset,
                           std::uint64_t max = 16u << 20) {
  std::string out;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return out;
  char buf[64 * 1024];
  while (out.size() < max) {
    auto want = std::min<std::uint64_t>(sizeof buf, max - out.size());
    auto n = ::pread(fd, buf, want, static_cast<off_t>(offset));
    if (n <= 0)
      break;
    out.append(buf, static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  return out;
}

/// The last `n` lines of `text` (a final line without its newline counts).
std::string last_lines(const std::string& text, std::int64_t n) {
  if (n < 0)
    return text;
  if (n == 0)
    return {};
  std::size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n')
    --end;
  std::size_t pos = end;
  std::int64_t seen = 0;
  while (pos > 0) {
    if (text[pos - 1] == '\n' && ++seen == n)
      return text.substr(pos);
    --pos;
  }
  return text;
}

/// Headers a proxy never forwards (RFC 7230 hop-by-hop ones) or must not
/// (the caller's credentials: kube-apiserver's authentication filter strips
/// them, impersonation's likewise).
bool skip_proxied_header(std::string_view name) {
  static constexpr std::string_view skipped[]
      = {"host",       "authorization",    "connection",
         "keep-alive", "proxy-connection", "proxy-authorization",
         "te",         "trailer",          "transfer-encoding",
         "upgrade",    "content-length"};
  for (auto s : skipped)
    if (iequals(name, s))
      return true;
  return lower(name).starts_with("impersonate-");
}

} // namespace

/// One listening socket: the main one (bound to opts.host:port) or one made
/// elsewhere and handed over as a descriptor (the pod network's gateway).
struct front_listener {
  explicit front_listener(asio::io_context& ioc) : acceptor(ioc) {}
  tcp::acceptor acceptor;
  tcp::endpoint endpoint;
  /// Makes the listening descriptor again (add_listener, and when the
  /// restart fault reopens); unset for the main listener, which binds.
  std::function<caf::expected<int>()> open_fd;
  /// Bumped at every reopen: an accept loop of an older opening ends.
  std::uint64_t generation = 0;
};

/// A connection the restart fault and stop() can reset from any thread.
struct connection_entry {
  strand_type strand;
  std::function<void()> reset; // runs on the strand
  std::weak_ptr<watch_channel>
      watch; // the watch it streams, if any (strand only)
};

struct front::impl : std::enable_shared_from_this<front::impl> {
  impl(caf::actor_system& s, store_actor st, front_options o)
      : sys(s), store(std::move(st)), opts(std::move(o)) {}

  caf::actor_system& sys;
  store_actor store;
  front_options opts;
  asio::io_context ioc{1};
  std::optional<asio::ssl::context> ssl;
  std::mutex listeners_mutex;
  std::vector<std::shared_ptr<front_listener>> listeners;
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

  std::vector<std::shared_ptr<front_listener>> all_listeners() {
    std::lock_guard guard{listeners_mutex};
    return listeners;
  }

  caf::expected<void> open_acceptor(front_listener& l) {
    ++l.generation;
    if (l.open_fd)
      return assign_acceptor(l);
    auto& acceptor = l.acceptor;
    auto& endpoint = l.endpoint;
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

  /// A listener whose socket is made by its owner: it arrives bound and
  /// listening (in another network namespace, where this process cannot
  /// bind by itself).
  static caf::expected<void> assign_acceptor(front_listener& l) {
    auto fd = l.open_fd();
    if (!fd)
      return fd.error();
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(*fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ::close(*fd);
      return make_error(http_server::errc::bind_failed,
                        "the listening socket handed to the simulator's front "
                        "is not a socket; open it with socket(2), bind and "
                        "listen");
    }
    boost::system::error_code ec;
    l.acceptor.assign(addr.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), *fd,
                      ec);
    if (ec) {
      ::close(*fd);
      return make_error(http_server::errc::bind_failed,
                        "cannot serve the listening socket handed to the "
                        "simulator's front: "
                            + ec.message());
    }
    l.endpoint = l.acceptor.local_endpoint(ec);
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

  asio::awaitable<void> accept_loop(std::shared_ptr<front_listener> l) {
    auto self = shared_from_this();
    const auto generation = l->generation;
    for (;;) {
      boost::system::error_code ec;
      tcp::socket socket{asio::make_strand(ioc)};
      co_await l->acceptor.async_accept(
          socket, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        if (!l->acceptor.is_open() || stopped || l->generation != generation)
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
        out.clear();
        if (ec == bhttp::error::body_limit) {
          // kube-apiserver's own limit on the body: a Status.
          append_response(
              out, 413, "application/json",
              safe_status_body(make_status(
                  "RequestEntityTooLarge", 413,
                  "Request entity too large: limit is "
                      + std::to_string(opts.body_limit))),
              new_audit_id(), {}, false);
        } else if (parser.is_header_done()) {
          // The head was read and the body is broken: the handler's read of
          // it fails, and kube-apiserver answers that with a Status.
          append_response(out, 400, "application/json",
                          safe_status_body(make_status(
                              "BadRequest", 400,
                              "bad request: " + ec.message())),
                          new_audit_id(), {}, false);
        } else {
          // A head that cannot be parsed never reaches a handler: Go's
          // net/http answers it in plain text (server.go, conn.serve).
          append_go_error(out, ec == bhttp::error::header_limit
                                   ? "431 Request Header Fields Too Large"
                                   : "400 Bad Request");
        }
        co_await write_all(*stream, out);
        co_await lingering_close(*stream);
        co_return;
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

  /// Go's answer to a request it could not read: status line and body are
  /// the same text, and the connection closes after it.
  static void append_go_error(std::string& out, std::string_view text) {
    out.append("HTTP/1.1 ");
    out.append(text);
    out.append("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: "
               "close\r\nContent-Length: ");
    append_decimal(out, text.size());
    out.append("\r\n\r\n");
    out.append(text);
  }

  /// Closes after an answer to a request whose rest is still unread.
  /// Closing a socket with unread input sends an RST, and a client that
  /// gets it before reading loses the answer; so the sending side ends
  /// first, and what the client still sends is read and dropped until it
  /// closes too or a bound is reached (Go's closeWriteAndWait waits a fixed
  /// 500 ms instead).
  template <class Stream>
  static asio::awaitable<void> lingering_close(Stream& stream) {
    auto& lowest = beast::get_lowest_layer(stream);
    boost::system::error_code ec;
    lowest.socket().shutdown(tcp::socket::shutdown_send, ec);
    lowest.expires_after(std::chrono::milliseconds(500));
    std::array<char, 16 * 1024> sink{};
    std::size_t drained = 0;
    while (!ec && drained < 1024 * 1024) {
      drained += co_await lowest.async_read_some(
          asio::buffer(sink), asio::redirect_error(asio::use_awaitable, ec));
    }
    lowest.socket().close(ec);
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
    // kube-apiserver asks its x509 authenticator before any token one.
    if (auto by_cert = certificate_user(stream))
      co_return std::move(*by_cert);
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

  /// The user of a verified client certificate: CN the name, each O a
  /// group. The handshake already refused a certificate the cluster CA did
  /// not sign, so one that is present here is trusted.
  template <class Stream>
  static std::optional<user_info> certificate_user(Stream& stream) {
    if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>) {
      SSL* handle = stream.native_handle();
      std::unique_ptr<X509, decltype(&X509_free)> peer{
          SSL_get1_peer_certificate(handle), &X509_free};
      if (!peer || SSL_get_verify_result(handle) != X509_V_OK)
        return std::nullopt;
      user_info u;
      X509_NAME* subject = X509_get_subject_name(peer.get());
      for (int i = 0; i < X509_NAME_entry_count(subject); ++i) {
        X509_NAME_ENTRY* e = X509_NAME_get_entry(subject, i);
        int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
        unsigned char* text = nullptr;
        int len = ASN1_STRING_to_UTF8(&text, X509_NAME_ENTRY_get_data(e));
        if (len < 0)
          continue;
        std::string value(reinterpret_cast<char*>(text),
                          static_cast<std::size_t>(len));
        OPENSSL_free(text);
        if (nid == NID_commonName)
          u.username = std::move(value);
        else if (nid == NID_organizationName)
          u.groups.push_back(std::move(value));
      }
      if (u.username.empty())
        return std::nullopt;
      return u;
    } else {
      (void)stream;
      return std::nullopt;
    }
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

    if (auto route = pod_route_of(path))
      co_return co_await serve_pod_route(stream, req, *route, target, *user,
                                         peer, ae, keep_alive, out);

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
    if (!r.impersonate_user.empty())
      ae.impersonated_groups = auth::impersonated_groups(r.impersonate_user,
                                                         r.impersonate_groups);

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

  // --- the pod network -----------------------------------------------------

  std::mutex pods_mutex;
  std::shared_ptr<const pod_network> pods;

  std::shared_ptr<const pod_network> pod_net() {
    std::lock_guard guard{pods_mutex};
    return pods;
  }

  /// What pod routes answer on a simulator without pods.
  static status no_pod_network() {
    return make_status("ServiceUnavailable", 503,
                       "this simulator runs no pods: start aiperf-node "
                       "sim-cluster with --workloads");
  }

  /// Asks `dest` and hands its reply to the connection's coroutine. A reply
  /// of `void` arrives as caf::unit.
  template <class T, class Handle, class... Ts>
  std::shared_ptr<reply_slot<T>> ask_actor(strand_type ex, Handle dest,
                                           std::chrono::seconds timeout,
                                           Ts... xs) {
    auto slot = std::make_shared<reply_slot<T>>(ex);
    sys.spawn([slot, dest, timeout, args = std::make_tuple(std::move(xs)...)](
                  caf::event_based_actor* self) mutable {
      std::apply(
          [&](auto&... a) {
            auto handle = self->request(dest, timeout, std::move(a)...);
            if constexpr (std::is_same_v<T, caf::unit_t>)
              handle.then(
                  [slot]() { slot->deliver(caf::unit); },
                  [slot](caf::error& e) { slot->deliver(std::move(e)); });
            else
              handle.then(
                  [slot](T& v) { slot->deliver(std::move(v)); },
                  [slot](caf::error& e) { slot->deliver(std::move(e)); });
          },
          args);
    });
    return slot;
  }

  template <class Stream>
  asio::awaitable<after> write_status(Stream& stream, const status& st,
                                      audit_entry& ae, bool keep_alive,
                                      std::string& out) {
    out.clear();
    append_response(out, static_cast<unsigned>(st.code), "application/json",
                    safe_status_body(st), ae.audit_id, {}, keep_alive,
                    st.details.retry_after_seconds);
    ae.code = st.code;
    write_audit(ae, &st);
    co_return co_await write_all(stream, out) ? after::keep_open : after::close;
  }

  /// pods/log, pods/proxy, services/proxy: the store authorizes the caller
  /// and answers the object; the kubelet or the pod network does the rest.
  template <class Stream>
  asio::awaitable<after>
  serve_pod_route(std::shared_ptr<Stream> stream,
                  bhttp::request<bhttp::string_body>& req,
                  const pod_route& route, std::string_view target,
                  const user_info& user, const std::string& peer,
                  audit_entry& ae, bool keep_alive, std::string& out) {
    const strand_type ex{socket_of(*stream).get_executor()};
    const bool is_log = route.what == pod_route::kind::pod_log;
    request r;
    r.ref = {"",
             "v1",
             route.what == pod_route::kind::service_proxy ? "services" : "pods",
             route.namespace_name,
             "",
             is_log ? "log" : "proxy"};
    r.user = user;
    r.user_agent = ae.user_agent;
    for (const auto& h : req) {
      if (iequals(sv(h.name_string()), "Impersonate-User"))
        r.impersonate_user = std::string{h.value().data(), h.value().size()};
      else if (iequals(sv(h.name_string()), "Impersonate-Group"))
        r.impersonate_groups.emplace_back(h.value().data(), h.value().size());
    }
    ae.impersonated_user = r.impersonate_user;
    if (!r.impersonate_user.empty())
      ae.impersonated_groups = auth::impersonated_groups(r.impersonate_user,
                                                         r.impersonate_groups);
    auto v = verb_of_method(req.method());
    ae.verb = v ? to_string(*v) : lower(sv(req.method_string()));
    if (!v || (is_log && *v != verb::get)) {
      ae.object_ref = r.ref;
      co_return co_await write_status(
          *stream,
          make_status("MethodNotAllowed", 405,
                      "the server does not allow this method on the "
                      "requested resource"),
          ae, keep_alive, out);
    }
    r.verb = *v;
    std::string scheme, name, port;
    if (is_log) {
      name = route.id;
    } else if (!split_scheme_name_port(route.id, scheme, name, port)) {
      ae.object_ref = r.ref;
      co_return co_await write_status(
          *stream,
          make_status("BadRequest", 400,
                      std::string{"invalid "}
                          + (route.what == pod_route::kind::pod_proxy
                                 ? "pod"
                                 : "service")
                          + " request \"" + route.id + "\""),
          ae, keep_alive, out);
    }
    r.ref.name = name;
    ae.object_ref = r.ref;

    log_options lo;
    if (is_log) {
      if (auto bad = log_options_of(target, lo)) {
        if (bad->code == 422) {
          bad->message
              = "PodLogOptions \"" + name + "\" is invalid: " + bad->message;
          bad->details.name = name;
          bad->details.kind = "PodLogOptions";
        }
        co_return co_await write_status(*stream, *bad, ae, keep_alive, out);
      }
    }

    if (auto f = faults.take(to_string(r.verb), r.ref.resource,
                             r.ref.subresource, r.ref.namespace_name,
                             r.impersonate_user.empty() ? user.username
                                                        : r.impersonate_user)) {
      if (f->delay_ms > 0) {
        asio::steady_timer delay{ex};
        delay.expires_after(std::chrono::milliseconds(f->delay_ms));
        boost::system::error_code ec;
        co_await delay.async_wait(
            asio::redirect_error(asio::use_awaitable, ec));
      }
      if (f->reset)
        co_return after::reset;
      if (f->code != 0)
        co_return co_await write_status(*stream, fault_status(*f, r), ae,
                                        keep_alive, out);
    }

    auto object = co_await wait_slot(
        ask_actor<response>(ex, store, std::chrono::seconds(60), r));
    if (!object)
      co_return co_await write_status(*stream, status_of_error(object.error()),
                                      ae, keep_alive, out);
    auto net = pod_net();
    if (!net)
      co_return co_await write_status(*stream, no_pod_network(), ae, keep_alive,
                                      out);
    if (is_log)
      co_return co_await serve_log(stream, *net, route.namespace_name, name, lo,
                                   ae, keep_alive, out);

    // Where to dial: kube-apiserver's ResourceLocation (pods) and the
    // service REST's (services): pkg/registry/core/pod/strategy.go,
    // pkg/registry/core/service/storage/storage.go.
    auto obj = json::parse(object->body, nullptr, false);
    std::string ip;
    std::string dial_port = port;
    if (route.what == pod_route::kind::pod_proxy) {
      if (obj.is_object()) {
        const auto& st = obj.value("status", json::object());
        if (st.contains("podIPs") && st["podIPs"].is_array()
            && !st["podIPs"].empty() && st["podIPs"][0].is_object())
          ip = st["podIPs"][0].value("ip", "");
        if (ip.empty())
          ip = st.value("podIP", "");
        if (dial_port.empty()) {
          const auto& spec = obj.value("spec", json::object());
          for (const auto& c : spec.value("containers", json::array())) {
            const auto& ports = c.value("ports", json::array());
            if (!ports.empty() && ports[0].contains("containerPort")) {
              dial_port = ports[0]["containerPort"].dump();
              break;
            }
          }
        }
      }
      if (!is_global_unicast_v4(ip))
        co_return co_await write_status(
            *stream, make_status("BadRequest", 400, "address not allowed"), ae,
            keep_alive, out);
      if (dial_port.empty())
        dial_port = "80";
    } else {
      auto target_of = co_await resolve_service(ex, obj, route, name, port);
      if (auto* st = std::get_if<status>(&target_of))
        co_return co_await write_status(*stream, *st, ae, keep_alive, out);
      auto& hp = std::get<std::pair<std::string, std::string>>(target_of);
      ip = hp.first;
      dial_port = hp.second;
    }
    if (scheme == "https")
      co_return co_await write_status(
          *stream,
          make_status("ServiceUnavailable", 503,
                      "error trying to reach service: the simulator's pods "
                      "serve plain HTTP; the https: scheme is not proxied"),
          ae, keep_alive, out);
    if (!all_digits(dial_port) || std::stoul(dial_port) > 65535)
      co_return co_await write_status(
          *stream,
          make_status("ServiceUnavailable", 503,
                      "error trying to reach service: dial tcp: address " + ip
                          + ":" + dial_port + ": unknown port"),
          ae, keep_alive, out);
    // kube-apiserver answers a proxy path without a trailing part with a
    // redirect to the one with a slash (UpgradeAwareHandler).
    if (route.rest.empty()) {
      auto path = target.substr(0, target.find('?'));
      std::string location{path};
      location += "/";
      if (auto q = target.find('?'); q != std::string_view::npos)
        location += target.substr(q);
      out.clear();
      out.append("HTTP/1.1 301 Moved Permanently\r\nAudit-ID: ");
      out.append(ae.audit_id);
      out.append("\r\nLocation: ");
      out.append(location);
      out.append("\r\nContent-Length: 0\r\n");
      if (!keep_alive)
        out.append("Connection: close\r\n");
      out.append("\r\n");
      ae.code = 301;
      write_audit(ae, nullptr);
      co_return co_await write_all(*stream, out) ? after::keep_open
                                                 : after::close;
    }
    std::string forward_target = route.rest;
    if (auto q = target.find('?'); q != std::string_view::npos)
      forward_target += target.substr(q);
    co_return co_await forward(
        stream, *net, req, ip,
        static_cast<std::uint16_t>(std::stoul(dial_port)), forward_target, peer,
        ae, keep_alive, out);
  }

  /// A service's ready endpoint for `port` (a number: the service port of
  /// that number, by its name; a name: the endpoint port of that name), or
  /// the status kube-apiserver answers.
  asio::awaitable<std::variant<status, std::pair<std::string, std::string>>>
  resolve_service(strand_type ex, const json& svc, const pod_route& route,
                  const std::string& name, std::string port) {
    if (all_digits(port)) {
      bool found = false;
      if (svc.is_object())
        for (const auto& p :
             svc.value("spec", json::object()).value("ports", json::array()))
          if (p.value("port", std::int64_t{-1}) == std::stoll(port)) {
            port = p.value("name", "");
            found = true;
            break;
          }
      if (!found)
        co_return make_status("ServiceUnavailable", 503,
                              "no service port " + port
                                  + " found for service \"" + name + "\"");
    }
    request get;
    get.verb = verb::get;
    get.ref = {"", "v1", "endpoints", route.namespace_name, name, ""};
    auto eps = co_await wait_slot(
        ask_actor<response>(ex, store, std::chrono::seconds(60), get));
    if (!eps)
      co_return status_of_error(eps.error());
    auto doc = json::parse(eps->body, nullptr, false);
    json subsets = json::array();
    if (doc.is_object())
      subsets = doc.value("subsets", json::array());
    if (subsets.empty())
      co_return make_status("ServiceUnavailable", 503,
                            "no endpoints available for service \"" + name
                                + "\"");
    thread_local std::mt19937 rng{std::random_device{}()};
    const std::size_t seed = rng() % subsets.size();
    for (std::size_t i = 0; i < subsets.size(); ++i) {
      const auto& ss = subsets[(seed + i) % subsets.size()];
      const auto addresses = ss.value("addresses", json::array());
      if (addresses.empty())
        continue;
      for (const auto& p : ss.value("ports", json::array())) {
        if (p.value("name", "") != port)
          continue;
        const auto& a = addresses[rng() % addresses.size()];
        co_return std::pair<std::string, std::string>{
            a.value("ip", ""), std::to_string(p.value("port", 0))};
      }
    }
    co_return make_status("ServiceUnavailable", 503,
                          "no endpoints available for service \"" + route.id
                              + "\"");
  }

  /// The query of a pods/log request, or the status refusing it.
  static std::optional<status> log_options_of(std::string_view target,
                                              log_options& lo) {
    auto q = target.find('?');
    std::string_view query = q == std::string_view::npos ? std::string_view{}
                                                         : target.substr(q + 1);
    while (!query.empty()) {
      auto amp = query.find('&');
      auto pair = query.substr(0, amp);
      query = amp == std::string_view::npos ? std::string_view{}
                                            : query.substr(amp + 1);
      auto eq = pair.find('=');
      auto key = url_decode(pair.substr(0, eq));
      auto value = eq == std::string_view::npos
                       ? std::string{}
                       : url_decode(pair.substr(eq + 1));
      auto bad = [&](const std::string& why) {
        return make_status("BadRequest", 400, "bad " + key + " " + why);
      };
      if (key == "container") {
        lo.container = value;
      } else if (key == "follow" || key == "previous" || key == "timestamps") {
        auto b
            = value.empty() ? std::optional<bool>{true} : parse_go_bool(value);
        if (!b)
          return bad("\"" + value + "\": must be true or false");
        if (key == "follow")
          lo.follow = *b;
        else if (key == "previous")
          lo.previous = *b;
      } else if (key == "tailLines" || key == "limitBytes") {
        std::int64_t n = 0;
        auto [end, ec]
            = std::from_chars(value.data(), value.data() + value.size(), n);
        if (ec != std::errc{} || end != value.data() + value.size())
          return bad("\"" + value + "\": must be an integer");
        if (key == "tailLines") {
          if (n < 0) {
            auto st = make_status("Invalid", 422,
                                  "tailLines: Invalid value: " + value
                                      + ": must be greater than or equal "
                                        "to 0");
            return st;
          }
          lo.tail_lines = n;
        } else {
          if (n < 1)
            return make_status("Invalid", 422,
                               "limitBytes: Invalid value: " + value
                                   + ": must be greater than 0");
          lo.limit_bytes = n;
        }
      }
    }
    return std::nullopt;
  }

  /// The container's log as kubelet serves it: the file the kubelet names,
  /// tailLines and limitBytes applied, and with `follow` the bytes written
  /// after, for as long as the container runs.
  template <class Stream>
  asio::awaitable<after>
  serve_log(std::shared_ptr<Stream> stream, const pod_network& net,
            std::string ns, std::string name, log_options lo, audit_entry& ae,
            bool keep_alive, std::string& out) {
    const strand_type ex{socket_of(*stream).get_executor()};
    auto source = co_await wait_slot(ask_actor<kubelet::pod_log_source>(
        ex, net.kubelet, std::chrono::seconds(30), kubelet::pod_log_atom::value,
        ns, name, lo.container, lo.previous));
    if (!source)
      co_return co_await write_status(*stream, status_of_error(source.error()),
                                      ae, keep_alive, out);
    std::uint64_t offset = 0;
    std::string text
        = last_lines(read_file_from(source->path, offset), lo.tail_lines);
    std::uint64_t budget = lo.limit_bytes < 0
                               ? std::numeric_limits<std::uint64_t>::max()
                               : static_cast<std::uint64_t>(lo.limit_bytes);
    if (text.size() > budget)
      text.resize(budget);
    budget -= text.size();
    ae.code = 200;
    if (!lo.follow || !source->running || budget == 0) {
      out.clear();
      append_response(out, 200, "text/plain", text, ae.audit_id, {},
                      keep_alive);
      write_audit(ae, nullptr);
      co_return co_await write_all(*stream, out) ? after::keep_open
                                                 : after::close;
    }
    out.clear();
    out.append("HTTP/1.1 200 OK\r\nAudit-ID: ");
    out.append(ae.audit_id);
    out.append("\r\nCache-Control: no-cache, private\r\nContent-Type: "
               "text/plain\r\nTransfer-Encoding: chunked\r\n");
    if (!keep_alive)
      out.append("Connection: close\r\n");
    out.append("\r\n");
    auto add_chunk = [&](const std::string& data) {
      if (data.empty())
        return;
      append_hex(out, data.size());
      out.append("\r\n");
      out.append(data);
      out.append("\r\n");
    };
    add_chunk(text);
    ae.stage = "ResponseStarted";
    write_audit(ae, nullptr);
    asio::steady_timer tick{ex};
    bool running = true;
    for (int round = 1; !stopped; ++round) {
      if (!out.empty()) {
        if (!co_await write_all(*stream, out))
          co_return after::close;
        out.clear();
      }
      if (!running || budget == 0)
        break;
      tick.expires_after(std::chrono::milliseconds(200));
      boost::system::error_code ec;
      co_await tick.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      // Every second: does the container still run (a restart writes
      // another file; kubectl logs -f ends with the container too)?
      if (round % 5 == 0) {
        auto now = co_await wait_slot(ask_actor<kubelet::pod_log_source>(
            ex, net.kubelet, std::chrono::seconds(30),
            kubelet::pod_log_atom::value, ns, name, lo.container, false));
        running = now && now->running && now->path == source->path;
      }
      auto more = read_file_from(source->path, offset,
                                 std::min<std::uint64_t>(budget, 16u << 20));
      budget -= more.size();
      add_chunk(more);
    }
    if (stopped)
      co_return after::reset;
    out.append("0\r\n\r\n");
    co_return co_await write_all(*stream, out) ? after::keep_open
                                               : after::close;
  }

  /// Sends `req` to ip:port over a socket of the pod network and streams the
  /// answer back; the client's connection closes after it.
  template <class Stream>
  asio::awaitable<after>
  forward(std::shared_ptr<Stream> stream, const pod_network& net,
          bhttp::request<bhttp::string_body>& req, const std::string& ip,
          std::uint16_t port, const std::string& forward_target,
          const std::string& peer, audit_entry& ae, bool keep_alive,
          std::string& out) {
    const strand_type ex{socket_of(*stream).get_executor()};
    const std::string where = ip + ":" + std::to_string(port);
    auto unreachable = [&](const std::string& why) {
      return make_status("ServiceUnavailable", 503,
                         "error trying to reach service: " + why);
    };
    auto fd = net.cluster->open_socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (!fd) {
      const status failed
          = unreachable("dial tcp " + where + ": " + error_message(fd.error()));
      co_return co_await write_status(*stream, failed, ae, keep_alive, out);
    }
    tcp::socket backend{ex};
    boost::system::error_code ec;
    backend.assign(tcp::v4(), *fd, ec);
    if (ec) {
      ::close(*fd);
      co_return co_await write_status(
          *stream, unreachable("dial tcp " + where + ": " + ec.message()), ae,
          keep_alive, out);
    }
    // kube-apiserver's proxy dialer gives up after 30 s.
    asio::steady_timer deadline{ex};
    deadline.expires_after(std::chrono::seconds(30));
    auto timed_out = std::make_shared<bool>(false);
    deadline.async_wait([timed_out, &backend](boost::system::error_code e) {
      if (!e) {
        *timed_out = true;
        boost::system::error_code ignored;
        backend.cancel(ignored);
      }
    });
    co_await backend.async_connect(
        tcp::endpoint{asio::ip::make_address_v4(ip, ec), port},
        asio::redirect_error(asio::use_awaitable, ec));
    deadline.cancel();
    std::string why = "i/o timeout";
    if (ec && !*timed_out)
      why = dial_failure(ec);
    if (ec) {
      const status failed = unreachable("dial tcp " + where + ": " + why);
      co_return co_await write_status(*stream, failed, ae, keep_alive, out);
    }
    std::string head;
    head.append(sv(req.method_string()));
    head.append(" ");
    head.append(forward_target);
    head.append(" HTTP/1.1\r\nHost: ");
    head.append(where);
    head.append("\r\n");
    std::string forwarded_for;
    for (const auto& h : req) {
      auto hname = sv(h.name_string());
      if (skip_proxied_header(hname))
        continue;
      if (iequals(hname, "X-Forwarded-For")) {
        forwarded_for = std::string{sv(h.value())} + ", ";
        continue;
      }
      head.append(hname);
      head.append(": ");
      head.append(sv(h.value()));
      head.append("\r\n");
    }
    head.append("X-Forwarded-For: ");
    head.append(forwarded_for + peer);
    head.append("\r\n");
    const auto& body = req.body();
    if (!body.empty() || req.method() == bhttp::verb::post
        || req.method() == bhttp::verb::put
        || req.method() == bhttp::verb::patch) {
      head.append("Content-Length: ");
      append_decimal(head, body.size());
      head.append("\r\n");
    }
    head.append("Connection: close\r\n\r\n");
    head.append(body);
    co_await asio::async_write(backend, asio::buffer(head),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec)
      co_return co_await write_status(
          *stream,
          unreachable("write tcp " + where + ": " + lower(ec.message())), ae,
          keep_alive, out);
    // The answer's head: rewritten for this connection (it closes after).
    std::string in;
    char buf[64 * 1024];
    std::size_t head_end = std::string::npos;
    while (head_end == std::string::npos) {
      auto n = co_await backend.async_read_some(
          asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
      in.append(buf, n);
      head_end = in.find("\r\n\r\n");
      if (ec || in.size() > header_limit)
        break;
    }
    if (head_end == std::string::npos) {
      std::string what = "EOF";
      if (ec)
        what = "read tcp " + where + ": " + lower(ec.message());
      const status failed = unreachable(what);
      co_return co_await write_status(*stream, failed, ae, keep_alive, out);
    }
    out.clear();
    std::size_t line_end = in.find("\r\n");
    std::string_view status_line{in.data(), line_end};
    if (auto sp = status_line.find(' '); sp != std::string_view::npos) {
      std::int32_t code = 0;
      std::from_chars(status_line.data() + sp + 1,
                      status_line.data() + status_line.size(), code);
      ae.code = code;
    }
    out.append(status_line);
    out.append("\r\nAudit-ID: ");
    out.append(ae.audit_id);
    out.append("\r\n");
    std::size_t pos = line_end + 2;
    while (pos < head_end) {
      auto eol = in.find("\r\n", pos);
      std::string_view line{in.data() + pos, eol - pos};
      pos = eol + 2;
      auto colon = line.find(':');
      auto hname = line.substr(0, colon);
      if (iequals(hname, "Connection") || iequals(hname, "Keep-Alive")
          || iequals(hname, "Proxy-Connection"))
        continue;
      out.append(line);
      out.append("\r\n");
    }
    out.append("Connection: close\r\n\r\n");
    out.append(in, head_end + 4);
    write_audit(ae, nullptr);
    if (!co_await write_all(*stream, out))
      co_return after::close;
    for (;;) {
      auto n = co_await backend.async_read_some(
          asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
      if (n > 0) {
        boost::system::error_code wec;
        co_await asio::async_write(
            *stream, asio::buffer(buf, n),
            asio::redirect_error(asio::use_awaitable, wec));
        if (wec)
          break;
      }
      if (ec || stopped)
        break;
    }
    co_return after::close;
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

  /// Over HTTPS only the admin token may use /sim/v1.
  bool forbidden_on_sim(std::string_view authorization) const {
    return ssl
           && (opts.admin_token.empty()
               || authorization != "Bearer " + opts.admin_token);
  }

  sim_answer route_sim(bhttp::verb method, std::string_view method_name,
                       std::string_view path, std::string_view authorization,
                       const std::string& raw_body) {
    if (forbidden_on_sim(authorization))
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
              "/sim/v1/watches:drop, POST /sim/v1/apiserver:restart, POST "
              "/sim/v1/podfaults, GET /sim/v1/namespaces/{ns}/pods/{name}, "
              "POST /sim/v1/namespaces/{ns}/pods/{name}:kill|:partition"));
  }

  /// The /sim/v1 routes of the pod network; nullopt for any other path.
  template <class Stream>
  asio::awaitable<std::optional<sim_answer>>
  route_sim_pods(Stream& stream, bhttp::verb method, std::string_view path,
                 const std::string& raw_body) {
    constexpr std::string_view pods_prefix = "/sim/v1/namespaces/";
    const bool faults_path = path == "/sim/v1/podfaults";
    if (!faults_path && !path.starts_with(pods_prefix))
      co_return std::nullopt;
    auto net = pod_net();
    if (!net)
      co_return sim_status(
          make_status("NotFound", 404,
                      "no pods run in this simulator: start aiperf-node "
                      "sim-cluster with --workloads to use "
                          + std::string{path}));
    const strand_type ex{socket_of(stream).get_executor()};
    json body = json::object();
    if (!raw_body.empty()) {
      body = json::parse(raw_body, nullptr, false);
      if (!body.is_object())
        co_return sim_status(make_status("BadRequest", 400,
                                         "the body of " + std::string{path}
                                             + " is not a JSON object"));
    }
    auto bad = [](std::string why) {
      return sim_status(make_status("BadRequest", 400, std::move(why)));
    };
    auto done = [](unsigned code, std::string text) {
      return sim_answer{sim_answer::action::reply, code, std::move(text)};
    };
    if (faults_path) {
      if (method != bhttp::verb::post)
        co_return sim_status(
            make_status("MethodNotAllowed", 405,
                        "POST /sim/v1/podfaults adds a pod fault"));
      auto text_field = [&](const char* key) -> std::optional<std::string> {
        auto it = body.find(key);
        if (it == body.end())
          return std::string{};
        if (!it->is_string())
          return std::nullopt;
        return it->get<std::string>();
      };
      auto ns = text_field("namespace");
      auto selector = text_field("labelSelector");
      auto state = text_field("state");
      if (!ns || !selector || !state)
        co_return bad("namespace, labelSelector and state of a pod fault are "
                      "strings");
      static constexpr std::string_view states[]
          = {"ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError",
             "Unschedulable", "CrashLoop"};
      if (std::find(std::begin(states), std::end(states), *state)
          == std::end(states))
        co_return bad("state must be one of ImagePullBackOff, ErrImagePull, "
                      "CreateContainerConfigError, Unschedulable, CrashLoop; "
                      "got \""
                      + *state + "\"");
      std::int64_t count = 1;
      if (auto it = body.find("count"); it != body.end()) {
        if (!it->is_number_integer() || it->get<std::int64_t>() < 1
            || it->get<std::int64_t>() > 1'000'000)
          co_return bad("count must be an integer in [1, 1000000]");
        count = it->get<std::int64_t>();
      }
      json echo = {{"namespace", *ns},
                   {"labelSelector", *selector},
                   {"state", *state},
                   {"count", count}};
      caf::expected<caf::unit_t> accepted = caf::unit;
      if (*state == "Unschedulable") {
        if (!net->unschedulable_fault)
          co_return sim_status(make_status(
              "ServiceUnavailable", 503,
              "this simulator has no scheduler to take an Unschedulable "
              "fault"));
        auto slot = std::make_shared<reply_slot<caf::unit_t>>(ex);
        net->unschedulable_fault(*ns, *selector,
                                 static_cast<std::int32_t>(count),
                                 [slot](caf::error err) {
                                   if (err)
                                     slot->deliver(std::move(err));
                                   else
                                     slot->deliver(caf::unit);
                                 });
        accepted = co_await wait_slot(slot);
      } else {
        json forwarded = echo;
        accepted = co_await wait_slot(ask_actor<caf::unit_t>(
            ex, net->kubelet, std::chrono::seconds(30),
            kubelet::pod_fault_atom::value, forwarded.dump()));
      }
      if (!accepted)
        co_return sim_status(status_of_error(accepted.error()));
      co_return done(201, echo.dump());
    }
    // namespaces/{ns}/pods/{name}[:kill|:partition]
    auto tail = path.substr(pods_prefix.size());
    auto slash = tail.find('/');
    if (slash == std::string_view::npos
        || !tail.substr(slash).starts_with("/pods/"))
      co_return std::nullopt;
    std::string ns = url_decode(tail.substr(0, slash));
    auto rest = tail.substr(slash + std::string_view{"/pods/"}.size());
    if (ns.empty() || rest.empty() || rest.find('/') != std::string_view::npos)
      co_return std::nullopt;
    std::string action;
    if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
      action = std::string{rest.substr(colon + 1)};
      rest = rest.substr(0, colon);
    }
    std::string name = url_decode(rest);
    if (action.empty()) {
      if (method != bhttp::verb::get)
        co_return sim_status(make_status(
            "MethodNotAllowed", 405,
            "GET /sim/v1/namespaces/{ns}/pods/{name} reads a pod's processes"));
      auto info = co_await wait_slot(
          ask_actor<std::string>(ex, net->kubelet, std::chrono::seconds(30),
                                 kubelet::pod_info_atom::value, ns, name));
      if (!info)
        co_return sim_status(status_of_error(info.error()));
      co_return done(200, *info);
    }
    if (method != bhttp::verb::post)
      co_return sim_status(
          make_status("MethodNotAllowed", 405,
                      "POST " + std::string{path} + " acts on the pod"));
    caf::expected<caf::unit_t> acted = caf::unit;
    if (action == "kill") {
      std::string signal = "KILL";
      if (auto it = body.find("signal"); it != body.end()) {
        if (!it->is_string())
          co_return bad("signal must be a signal name such as KILL or TERM");
        signal = it->get<std::string>();
      }
      acted = co_await wait_slot(
          ask_actor<caf::unit_t>(ex, net->kubelet, std::chrono::seconds(30),
                                 kubelet::kill_atom::value, ns, name, signal));
    } else if (action == "partition") {
      auto it = body.find("seconds");
      if (it == body.end() || !it->is_number_integer()
          || it->get<std::int64_t>() < 1 || it->get<std::int64_t>() > 86400)
        co_return bad("seconds must be an integer in [1, 86400]");
      acted = co_await wait_slot(ask_actor<caf::unit_t>(
          ex, net->kubelet, std::chrono::seconds(30),
          kubelet::partition_atom::value, ns, name,
          static_cast<std::int32_t>(it->get<std::int64_t>())));
    } else {
      co_return std::nullopt;
    }
    if (!acted)
      co_return sim_status(status_of_error(acted.error()));
    co_return done(200, "{}");
  }

  template <class Stream>
  asio::awaitable<after> serve_sim(std::shared_ptr<Stream> stream,
                                   bhttp::request<bhttp::string_body>& req,
                                   std::string_view path, bool keep_alive,
                                   std::string& out) {
    std::string authorization;
    if (auto it = req.find(bhttp::field::authorization); it != req.end())
      authorization = std::string{it->value()};
    std::optional<sim_answer> pod_answer;
    if (!forbidden_on_sim(authorization))
      pod_answer
          = co_await route_sim_pods(*stream, req.method(), path, req.body());
    sim_answer a = pod_answer ? std::move(*pod_answer)
                              : route_sim(req.method(), sv(req.method_string()),
                                          path, authorization, req.body());
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
    for (auto& l : self->all_listeners())
      l->acceptor.close(ec);
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
    for (auto& l : self->all_listeners()) {
      if (auto opened = self->open_acceptor(*l); !opened) {
        log::get("sim_cluster")
            ->error("apiserver restart: {}", error_message(opened.error()));
        continue;
      }
      asio::co_spawn(self->ioc, self->accept_loop(l), asio::detached);
    }
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
    // Client certificates are optional (tokens are the common case), but
    // one the cluster CA did not sign fails the handshake, as with Go's
    // VerifyClientCertIfGiven.
    if (!ec)
      d.ssl->add_certificate_authority(asio::buffer(id.ca_cert_pem), ec);
    if (!ec)
      d.ssl->set_verify_mode(asio::ssl::verify_peer, ec);
    if (ec)
      return make_error(http_server::errc::bad_config,
                        "the simulator's TLS certificate was refused: "
                            + ec.message());
  }
  if (!d.opts.audit_log_path.empty())
    if (auto opened = d.audit.open(d.opts.audit_log_path); !opened)
      return opened.error();
  auto primary = std::make_shared<front_listener>(d.ioc);
  primary->endpoint = tcp::endpoint{address, d.opts.port};
  if (auto opened = d.open_acceptor(*primary); !opened)
    return opened.error();
  d.port = primary->endpoint.port();
  {
    std::lock_guard guard{d.listeners_mutex};
    d.listeners.push_back(primary);
  }
  d.work.emplace(d.ioc.get_executor());
  asio::co_spawn(d.ioc, d.accept_loop(primary), asio::detached);
  for (unsigned i = 0; i < d.opts.threads; ++i)
    d.threads.emplace_back([&d]() { d.ioc.run(); });
  return d.port;
}

caf::expected<std::uint16_t>
front::add_listener(std::function<caf::expected<int>()> open) {
  auto& d = *impl_;
  if (d.port == 0 || d.stopped)
    return make_error(http_server::errc::bad_config,
                      "add_listener needs a started front; call start() "
                      "first");
  auto l = std::make_shared<front_listener>(d.ioc);
  l->open_fd = std::move(open);
  // The acceptor belongs to the io threads once they serve it: open it
  // there.
  auto opened = std::make_shared<std::promise<caf::expected<void>>>();
  auto done = opened->get_future();
  asio::post(d.ioc,
             [&d, l, opened]() { opened->set_value(d.open_acceptor(*l)); });
  if (auto r = done.get(); !r)
    return r.error();
  {
    std::lock_guard guard{d.listeners_mutex};
    d.listeners.push_back(l);
  }
  asio::co_spawn(d.ioc, d.accept_loop(l), asio::detached);
  return l->endpoint.port();
}

void front::set_pod_network(pod_network net) {
  std::shared_ptr<const pod_network> shared;
  if (net.cluster)
    shared = std::make_shared<const pod_network>(std::move(net));
  std::lock_guard guard{impl_->pods_mutex};
  impl_->pods = std::move(shared);
}

void front::stop() {
  auto& d = *impl_;
  if (d.stopped.exchange(true))
    return;
  if (!d.threads.empty()) {
    asio::post(d.ioc, [&d]() {
      boost::system::error_code ec;
      for (auto& l : d.all_listeners())
        l->acceptor.close(ec);
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
