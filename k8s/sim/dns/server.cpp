#include "k8s/sim/dns/codec.hpp"
#include "k8s/sim/dns/dns.hpp"
#include "k8s/sim/dns/zone.hpp"
#include "k8s/sim/endpoints/watch_set.hpp"

#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <arpa/inet.h>
#include <array>
#include <atomic>
#include <mutex>
#include <sys/socket.h>
#include <thread>
#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

namespace aiperf::k8s::sim::dns {

const char* to_string(errc x) noexcept {
  switch (x) {
  case errc::bad_socket:
    return "bad_socket";
  case errc::bad_config:
    return "bad_config";
  }
  return "unknown";
}

namespace {

namespace asio = boost::asio;
using udp = asio::ip::udp;
using tcp = asio::ip::tcp;

/// A TCP connection with nothing to read for this long is closed.
constexpr auto tcp_idle = std::chrono::seconds{10};
/// More connections than this at once are closed at accept.
constexpr std::size_t max_connections = 128;

/// The zone the io thread answers from; the cache actor replaces it.
struct zone_slot {
  std::mutex mutex;
  std::shared_ptr<const zone> current; // null until the caches synced

  std::shared_ptr<const zone> get() {
    std::lock_guard guard{mutex};
    return current;
  }
  void set(std::shared_ptr<const zone> z) {
    std::lock_guard guard{mutex};
    current = std::move(z);
  }
};

// --- The cache actor -------------------------------------------------------

/// Lists and watches Services, EndpointSlices and Endpoints and publishes a new
/// zone after every batch of changes. It is the sink of its own watches;
/// `(net_relist_atom, kind)` is its relist timer. No requests, no replies.
using dns_cache_actor = watch_sink_actor::extend<
    caf::reacts_to<net::net_relist_atom, std::uint64_t>>;

struct cache_state {
  // Not an aggregate: CAF would build the state from the actor pointer.
  cache_state() = default;

  api_actor api;
  net::watch_set ws;
  zone_config config;
  std::shared_ptr<zone_slot> slot;
  std::size_t services = 0;
  std::size_t slices = 0;
  std::size_t endpoints = 0;
  std::uint32_t serial = 0;
  bool dirty = false;
  static inline const char* name = "k8s_dns_cache";
};

using cache_ptr = dns_cache_actor::stateful_pointer<cache_state>;

void publish(cache_ptr self) {
  auto& st = self->state;
  st.dirty = false;
  if (!st.ws.all_synced())
    return;
  auto z = std::make_shared<zone>(build_zone(
      st.config, st.ws.objects(st.services), st.ws.objects(st.slices),
      ++st.serial, st.ws.objects(st.endpoints)));
  st.slot->set(std::move(z));
}

dns_cache_actor::behavior_type cache_impl(cache_ptr self, api_actor api,
                                          zone_config config,
                                          std::shared_ptr<zone_slot> slot,
                                          std::uint32_t first_serial) {
  auto& st = self->state;
  st.api = std::move(api);
  st.config = std::move(config);
  st.slot = std::move(slot);
  st.serial = first_serial;
  st.services = st.ws.add({"", "v1", "services", "", "", ""});
  st.slices
      = st.ws.add({"discovery.k8s.io", "v1", "endpointslices", "", "", ""});
  st.endpoints = st.ws.add({"", "v1", "endpoints", "", "", ""});
  st.ws.on_change = [self](std::size_t, const std::string&, const json*,
                           const json*) { self->state.dirty = true; };
  st.ws.on_synced = [self] { publish(self); };
  for (std::size_t i = 0; i < st.ws.kinds.size(); ++i)
    st.ws.start(self, i, st.api);
  return {
      [self](events_atom, std::uint64_t id, std::vector<watch_event>& evs) {
        self->state.ws.on_events(self, id, evs, self->state.api);
        if (self->state.dirty)
          publish(self);
      },
      [self](watch_end_atom, std::uint64_t id, caf::error&) {
        self->state.ws.on_end(self, id);
      },
      [self](net::net_relist_atom, std::uint64_t kind) {
        if (kind < self->state.ws.kinds.size())
          self->state.ws.start(self, kind, self->state.api);
      },
  };
}

// --- The io side -------------------------------------------------------

struct counters {
  std::atomic<std::uint64_t> queries{0};
  std::atomic<std::uint64_t> malformed{0};
  std::atomic<std::uint64_t> truncated{0};
};

/// The answer to one message, or nothing to send.
std::vector<std::uint8_t> respond(const std::shared_ptr<zone_slot>& slot,
                                  counters& count, const std::uint8_t* data,
                                  std::size_t size, bool over_tcp) {
  auto parsed = parse_query(data, size);
  switch (parsed.outcome) {
  case parse_outcome::drop:
    ++count.malformed;
    return {};
  case parse_outcome::formerr:
    ++count.malformed;
    return encode_error(parsed.value, rcode::formerr);
  case parse_outcome::notimp:
    return encode_error(parsed.value, rcode::notimp);
  case parse_outcome::ok:
    break;
  }
  ++count.queries;
  const auto& q = parsed.value;
  auto z = slot->get();
  answer a;
  if (z == nullptr) {
    a.code = rcode::servfail;
    a.authoritative = false;
  } else {
    a = lookup(*z, q.q);
  }
  auto limit = over_tcp ? std::size_t{65535} : q.udp_limit();
  auto out = encode_response(q, a, limit);
  if (!over_tcp && out.size() >= 4 && (out[2] & 0x02) != 0)
    ++count.truncated;
  return out;
}

struct tcp_connection : std::enable_shared_from_this<tcp_connection> {
  tcp_connection(tcp::socket s, std::shared_ptr<zone_slot> z, counters& c,
                 std::atomic<std::size_t>& open)
      : socket(std::move(s)), timer(socket.get_executor()), slot(std::move(z)),
        count(c), open_count(open) {
    ++open_count;
  }
  ~tcp_connection() { --open_count; }

  tcp::socket socket;
  asio::steady_timer timer;
  std::shared_ptr<zone_slot> slot;
  counters& count;
  std::atomic<std::size_t>& open_count;
  std::array<std::uint8_t, 2> length{};
  std::vector<std::uint8_t> body;
  std::vector<std::uint8_t> out;

  void arm() {
    timer.expires_after(tcp_idle);
    timer.async_wait([keep = shared_from_this()](boost::system::error_code ec) {
      if (!ec) {
        boost::system::error_code ignored;
        keep->socket.close(ignored);
      }
    });
  }

  void read_next() {
    arm();
    asio::async_read(
        socket, asio::buffer(length),
        [keep = shared_from_this()](boost::system::error_code ec, std::size_t) {
          if (ec)
            return keep->close();
          std::size_t n = (keep->length[0] << 8) | keep->length[1];
          if (n == 0)
            return keep->close();
          keep->body.resize(n);
          keep->read_body();
        });
  }

  void read_body() {
    asio::async_read(
        socket, asio::buffer(body),
        [keep = shared_from_this()](boost::system::error_code ec, std::size_t) {
          if (ec)
            return keep->close();
          auto answer = respond(keep->slot, keep->count, keep->body.data(),
                                keep->body.size(), true);
          if (answer.empty())
            return keep->close();
          keep->out.clear();
          keep->out.push_back(static_cast<std::uint8_t>(answer.size() >> 8));
          keep->out.push_back(static_cast<std::uint8_t>(answer.size() & 0xFF));
          keep->out.insert(keep->out.end(), answer.begin(), answer.end());
          asio::async_write(keep->socket, asio::buffer(keep->out),
                            [keep](boost::system::error_code ec2, std::size_t) {
                              if (ec2)
                                return keep->close();
                              keep->read_next();
                            });
        });
  }

  void close() {
    boost::system::error_code ignored;
    timer.cancel();
    socket.close(ignored);
  }
};

} // namespace

struct dns_server::impl {
  // Connections still queued in the io_context when it is destroyed touch
  // these: they are declared first so that they go last.
  counters count;
  std::atomic<std::size_t> open_connections{0};
  std::shared_ptr<zone_slot> slot = std::make_shared<zone_slot>();
  asio::io_context ioc{1};
  std::optional<udp::socket> udp_socket;
  std::optional<tcp::acceptor> acceptor;
  asio::steady_timer accept_retry{ioc};
  std::array<std::uint8_t, 65536> datagram{};
  udp::endpoint sender;
  std::thread thread;
  caf::actor cache;
  std::mutex stop_mutex;
  bool stopped = false;

  void receive() {
    udp_socket->async_receive_from(
        asio::buffer(datagram), sender,
        [this](boost::system::error_code ec, std::size_t n) {
          if (ec == asio::error::operation_aborted || !udp_socket->is_open())
            return;
          if (!ec) {
            auto out = respond(slot, count, datagram.data(), n, false);
            if (!out.empty()) {
              boost::system::error_code ignored;
              udp_socket->send_to(asio::buffer(out), sender, 0, ignored);
            }
          }
          receive();
        });
  }

  void accept() {
    acceptor->async_accept(
        [this](boost::system::error_code ec, tcp::socket socket) {
          if (ec == asio::error::operation_aborted || !acceptor->is_open())
            return;
          if (ec) {
            // Out of descriptors and the like: try again shortly rather than
            // spin.
            accept_retry.expires_after(std::chrono::milliseconds{100});
            accept_retry.async_wait([this](boost::system::error_code e) {
              if (!e)
                accept();
            });
            return;
          }
          if (open_connections.load() >= max_connections) {
            boost::system::error_code ignored;
            socket.close(ignored);
          } else {
            std::make_shared<tcp_connection>(std::move(socket), slot, count,
                                             open_connections)
                ->read_next();
          }
          accept();
        });
  }

  void stop() {
    std::lock_guard guard{stop_mutex};
    if (stopped)
      return;
    stopped = true;
    asio::post(ioc, [this] {
      boost::system::error_code ignored;
      if (udp_socket)
        udp_socket->close(ignored);
      if (acceptor)
        acceptor->close(ignored);
      accept_retry.cancel();
    });
    // Pending connections hold no reference to this; stopping the context
    // drops their handlers.
    ioc.stop();
    if (thread.joinable())
      thread.join();
    boost::system::error_code ignored;
    if (udp_socket && udp_socket->is_open())
      udp_socket->close(ignored);
    if (acceptor && acceptor->is_open())
      acceptor->close(ignored);
    if (cache)
      caf::anon_send_exit(cache, caf::exit_reason::user_shutdown);
  }
};

dns_server::dns_server(std::shared_ptr<impl> p) : impl_(std::move(p)) {}

dns_server::~dns_server() {
  stop();
}

void dns_server::stop() {
  if (impl_)
    impl_->stop();
}

bool dns_server::ready() const {
  return impl_ && impl_->slot->get();
}

dns_stats dns_server::stats() const {
  dns_stats s;
  if (!impl_)
    return s;
  s.queries = impl_->count.queries.load();
  s.malformed = impl_->count.malformed.load();
  s.truncated = impl_->count.truncated.load();
  return s;
}

namespace {

int socket_type(int fd) {
  int type = 0;
  socklen_t len = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
    return -1;
  return type;
}

int socket_family(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    return -1;
  return addr.ss_family;
}

bool listening(int fd) {
  int on = 0;
  socklen_t len = sizeof on;
  return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on != 0;
}

} // namespace

caf::expected<std::unique_ptr<dns_server>>
start_dns(caf::actor_system& sys, api_actor api, dns_config cfg) {
  if (cfg.udp_fd < 0 && cfg.tcp_fd < 0)
    return make_error(errc::bad_socket,
                      "DNS server: neither a UDP nor a TCP socket was given: "
                      "pass the fds of sockets bound to the gateway's port 53");
  if (cfg.udp_fd >= 0
      && (socket_type(cfg.udp_fd) != SOCK_DGRAM
          || (socket_family(cfg.udp_fd) != AF_INET
              && socket_family(cfg.udp_fd) != AF_INET6)))
    return make_error(errc::bad_socket,
                      "DNS server: fd " + std::to_string(cfg.udp_fd)
                          + " is not a bound UDP socket: pass the fd of a "
                            "datagram socket bound to the gateway's port 53");
  if (cfg.tcp_fd >= 0
      && (socket_type(cfg.tcp_fd) != SOCK_STREAM || !listening(cfg.tcp_fd)))
    return make_error(errc::bad_socket,
                      "DNS server: fd " + std::to_string(cfg.tcp_fd)
                          + " is not a listening TCP socket: pass the fd of a "
                            "stream socket that listen() was called on");
  if (cfg.cluster_domain.empty())
    return make_error(errc::bad_config,
                      "DNS server: the cluster domain is empty: use "
                      "cluster.local");
  if (!cfg.api_server_address.empty()
      && !a_record("x", cfg.api_server_address, 0))
    return make_error(errc::bad_config,
                      "DNS server: the API server address '"
                          + cfg.api_server_address
                          + "' is not an IPv4 address: pass the gateway's "
                            "address");
  auto p = std::make_shared<dns_server::impl>();
  boost::system::error_code ec;
  if (cfg.udp_fd >= 0) {
    p->udp_socket.emplace(p->ioc);
    auto family = socket_family(cfg.udp_fd) == AF_INET ? udp::v4() : udp::v6();
    p->udp_socket->assign(family, cfg.udp_fd, ec);
    if (ec) {
      p->udp_socket->release(ec);
      return make_error(errc::bad_socket, "DNS server: cannot use UDP fd "
                                              + std::to_string(cfg.udp_fd)
                                              + ": " + ec.message());
    }
  }
  if (cfg.tcp_fd >= 0) {
    p->acceptor.emplace(p->ioc);
    auto family = socket_family(cfg.tcp_fd) == AF_INET ? tcp::v4() : tcp::v6();
    p->acceptor->assign(family, cfg.tcp_fd, ec);
    if (ec) {
      if (p->udp_socket)
        p->udp_socket->release(ec);
      return make_error(errc::bad_socket, "DNS server: cannot use TCP fd "
                                              + std::to_string(cfg.tcp_fd)
                                              + ": " + ec.message());
    }
  }
  zone_config zc;
  zc.domain = cfg.cluster_domain;
  while (!zc.domain.empty() && zc.domain.back() == '.')
    zc.domain.pop_back();
  zc.api_server = cfg.api_server_address;
  zc.ttl = cfg.ttl;
  // CoreDNS's serial is the Unix time of the last change; a count from the
  // start time keeps it increasing without reading a clock per change.
  auto first_serial = static_cast<std::uint32_t>(
      std::chrono::duration_cast<std::chrono::seconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  auto cache = sys.spawn(cache_impl, std::move(api), zc, p->slot, first_serial);
  p->cache = caf::actor_cast<caf::actor>(cache);
  if (p->udp_socket)
    p->receive();
  if (p->acceptor)
    p->accept();
  p->thread = std::thread([raw = p.get()] {
    boost::system::error_code ignored;
    raw->ioc.run(ignored);
  });
  return std::make_unique<dns_server>(std::move(p));
}

} // namespace aiperf::k8s::sim::dns
