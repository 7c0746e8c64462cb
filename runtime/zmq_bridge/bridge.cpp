#include "runtime/zmq_bridge/bridge.hpp"

#include "runtime/log/log.hpp"

#include <caf/send.hpp>

#include <sys/eventfd.h>
#include <unistd.h>

#include <zmq.hpp>

#include <cerrno>
#include <cstring>
#include <variant>

namespace aiperf::zmq_bridge {

namespace {

bool is_router_channel(channel ch) noexcept {
  return ch == channel::control || ch == channel::credit;
}

std::int64_t wall_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

/// At most this many inbound frames per socket per loop turn, so a flood on
/// one channel cannot starve the outbox or the other sockets.
constexpr int inbound_burst = 4096;

} // namespace

struct bridge::io_state {
  struct pending {
    std::string peer;
    proto::msg_type type = proto::msg_type::command;
    std::shared_ptr<const std::string> frame;
    bool broadcast = false;
  };

  zmq::context_t ctx{1};
  std::array<std::optional<zmq::socket_t>, channel_count> socks;
  /// Frames libzmq did not take yet (EAGAIN: HWM reached, or no peer on an
  /// IMMEDIATE socket), in order, per channel.
  std::array<std::deque<pending>, channel_count> backlog;
  std::optional<probe_request> probe;
  std::optional<probe_schedule> probe_sched;
  std::string pong_buf;
};

bridge::bridge(bridge_config cfg) : cfg_(std::move(cfg)) {}

bridge::~bridge() {
  stop();
  if (wakeup_fd_ >= 0)
    ::close(wakeup_fd_);
}

caf::expected<void> bridge::start() {
  if (started_)
    return make_error(errc::not_running, "bridge::start called twice");
  if (cfg_.role == role::worker) {
    if (cfg_.identity.empty() || cfg_.identity.size() > 255
        || cfg_.identity.front() == '\0')
      return make_error(errc::bad_config,
                        "bridge identity \"" + cfg_.identity
                          + "\" is not a valid ZMQ routing id: use 1-255 bytes not "
                            "starting with NUL, unique per process");
  }
  wakeup_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wakeup_fd_ < 0)
    return make_error(errc::os_error, std::string{"eventfd failed: "} + std::strerror(errno));
  std::promise<caf::expected<void>> ready;
  auto result = ready.get_future();
  thread_ = std::thread{[this, &ready] { run(ready); }};
  auto opened = result.get();
  if (!opened) {
    thread_.join();
    return opened;
  }
  started_ = true;
  return caf::unit;
}

void bridge::stop() {
  if (!thread_.joinable())
    return;
  stopping_ = true;
  wake();
  thread_.join();
}

void bridge::wake() noexcept {
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wakeup_fd_, &one, sizeof(one));
}

void bridge::route(proto::msg_type type, caf::actor target) {
  std::lock_guard<std::mutex> guard{routes_mtx_};
  routes_[static_cast<std::size_t>(type) % routes_.size()] = std::move(target);
}

void bridge::route_default(caf::actor target) {
  std::lock_guard<std::mutex> guard{routes_mtx_};
  default_route_ = std::move(target);
}

void bridge::set_failure_sink(caf::actor sink) {
  std::lock_guard<std::mutex> guard{routes_mtx_};
  failure_sink_ = std::move(sink);
}

std::vector<std::string> bridge::peers(channel ch) const {
  std::lock_guard<std::mutex> guard{peers_mtx_};
  const auto& set = peers_[static_cast<std::size_t>(ch)];
  return {set.begin(), set.end()};
}

bridge_stats bridge::stats() const noexcept {
  bridge_stats s;
  s.frames_out = counters_.frames_out.load();
  s.frames_in = counters_.frames_in.load();
  s.rejected = counters_.rejected.load();
  s.unrouted = counters_.unrouted.load();
  s.delivery_failures = counters_.delivery_failures.load();
  s.broadcast_unreachable = counters_.broadcast_unreachable.load();
  s.time_pongs = counters_.time_pongs.load();
  s.dropped_at_stop = counters_.dropped_at_stop.load();
  return s;
}

caf::expected<void>
bridge::enqueue(op_kind kind, channel ch, std::string peer,
                proto::msg_type type, caf::expected<std::string> frame) {
  if (!frame)
    return std::move(frame.error());
  bool router = is_router_channel(ch);
  if (cfg_.role == role::controller) {
    if (!router)
      return make_error(errc::not_open, std::string{"channel "} + to_string(ch)
                                          + " is receive-only on the controller");
    if (kind == op_kind::send)
      return make_error(errc::not_open,
                        std::string{"the controller's "} + to_string(ch)
                          + " channel is a ROUTER: use send_to(peer) or broadcast");
  } else {
    if (kind != op_kind::send)
      return make_error(errc::not_open,
                        std::string{"send_to and broadcast need a ROUTER; a worker's "}
                          + to_string(ch) + " channel only sends to the controller");
    if (cfg_.connect[ch].empty())
      return make_error(errc::not_open, std::string{"channel "} + to_string(ch)
                                          + " has no endpoint in bridge_config::connect");
  }
  if (!started_ || stopping_)
    return make_error(errc::not_running, "bridge is not running");
  bool was_empty;
  {
    std::lock_guard<std::mutex> guard{queue_mtx_};
    was_empty = outbox_.empty();
    outbox_.push_back(op{kind, ch, std::move(peer), type, std::move(*frame)});
  }
  if (was_empty) // one wakeup per batch, not per message
    wake();
  return caf::unit;
}

void bridge::probe_return_channel(std::string worker_id, probe_budget budget,
                                  caf::actor reply_to) {
  auto frame = proto::encode_frame(proto::worker_connected{worker_id},
                                   worker_id);
  if (!frame) {
    caf::anon_send(reply_to, probe_result{false, 0, error_message(frame.error())});
    return;
  }
  {
    std::lock_guard<std::mutex> guard{queue_mtx_};
    probe_ = probe_request{std::move(*frame), budget, std::move(reply_to)};
  }
  wake();
}

caf::expected<void> bridge::open_sockets(io_state& st) {
  auto fail = [](channel ch, const std::string& what, const std::string& ep,
                 const zmq::error_t& e, const char* fix) {
    return make_error(errc::bad_config, std::string{what} + " " + to_string(ch) + " on "
                                          + ep + " failed: " + e.what() + fix);
  };
  for (std::size_t i = 0; i < channel_count; ++i) {
    auto ch = static_cast<channel>(i);
    bool router = is_router_channel(ch);
    if (cfg_.role == role::worker && cfg_.connect[ch].empty())
      continue;
    zmq::socket_type type;
    if (cfg_.role == role::controller)
      type = router ? zmq::socket_type::router : zmq::socket_type::pull;
    else
      type = router ? zmq::socket_type::dealer : zmq::socket_type::push;
    auto& s = st.socks[i].emplace(st.ctx, type);
    s.set(zmq::sockopt::linger, static_cast<int>(cfg_.linger.count()));
    s.set(zmq::sockopt::sndhwm, cfg_.hwm);
    s.set(zmq::sockopt::rcvhwm, cfg_.hwm);
    if (cfg_.role == role::controller) {
      if (router) // a send to a departed peer must fail, not vanish
        s.set(zmq::sockopt::router_mandatory, 1);
      auto port = port_of(cfg_.ports, ch);
      auto ep = "tcp://" + cfg_.bind_host + ":"
                + (port == 0 ? std::string{"*"} : std::to_string(port));
      try {
        s.bind(ep);
      } catch (const zmq::error_t& e) {
        return fail(ch, "bind", ep, e,
                    ": pick a free port (0 = ephemeral) with the port flag or "
                    "AIPERF_K8S_PORT_<CHANNEL>, or fix bind_host");
      }
      bound_.tcp[ch] = s.get(zmq::sockopt::last_endpoint);
      if (!cfg_.ipc_dir.empty()) {
        auto ipc = ipc_endpoint(cfg_.ipc_dir, ch);
        if (!ipc)
          return std::move(ipc.error());
        try {
          s.bind(*ipc);
        } catch (const zmq::error_t& e) {
          return fail(ch, "bind", *ipc, e,
                      ": ipc_dir must be an existing writable directory");
        }
        bound_.ipc[ch] = s.get(zmq::sockopt::last_endpoint);
      }
    } else {
      if (router)
        s.set(zmq::sockopt::routing_id, cfg_.identity);
      if (ch == channel::credit_return) // the readiness probe relies on it
        s.set(zmq::sockopt::immediate, 1);
      try {
        s.connect(cfg_.connect[ch]);
      } catch (const zmq::error_t& e) {
        return fail(ch, "connect", cfg_.connect[ch], e,
                    ": check the endpoint the controller reported");
      }
    }
  }
  return caf::unit;
}

void bridge::run(std::promise<caf::expected<void>>& ready) {
  io_state st;
  if (auto opened = open_sockets(st); !opened) {
    ready.set_value(std::move(opened));
    return;
  }
  ready.set_value(caf::unit); // `ready` dies with start()'s frame now
  auto log = log::get("zmq_bridge");
  std::vector<zmq_pollitem_t> items;
  std::vector<std::size_t> item_channel;
  std::vector<op> batch;
  std::optional<std::chrono::steady_clock::time_point> flush_deadline;
  for (;;) {
    items.clear();
    item_channel.clear();
    items.push_back({nullptr, wakeup_fd_, ZMQ_POLLIN, 0});
    for (std::size_t i = 0; i < channel_count; ++i) {
      if (!st.socks[i])
        continue;
      short events = 0;
      bool push = cfg_.role == role::worker && !is_router_channel(channel(i));
      if (!push)
        events |= ZMQ_POLLIN;
      if (!st.backlog[i].empty())
        events |= ZMQ_POLLOUT;
      items.push_back({st.socks[i]->handle(), 0, events, 0});
      item_channel.push_back(i);
    }
    long timeout_ms = -1;
    auto now = std::chrono::steady_clock::now();
    auto until = [&](std::chrono::steady_clock::time_point t) {
      auto ms = std::chrono::ceil<std::chrono::milliseconds>(t - now).count();
      return std::max<long>(0, ms);
    };
    if (st.probe_sched)
      timeout_ms = until(st.probe_sched->next_attempt());
    if (flush_deadline) {
      auto t = until(*flush_deadline);
      timeout_ms = timeout_ms < 0 ? t : std::min(timeout_ms, t);
    }
    if (zmq_poll(items.data(), static_cast<int>(items.size()), timeout_ms) < 0
        && zmq_errno() != EINTR) {
      log->error("zmq_poll failed: {}", zmq_strerror(zmq_errno()));
      break;
    }
    // Read the eventfd before taking the outbox: a producer that saw a
    // non-empty outbox did not write it, and its op is in this swap.
    if (items[0].revents & ZMQ_POLLIN) {
      std::uint64_t ignored;
      [[maybe_unused]] auto n = ::read(wakeup_fd_, &ignored, sizeof(ignored));
    }
    {
      std::lock_guard<std::mutex> guard{queue_mtx_};
      batch.swap(outbox_);
      if (probe_) {
        st.probe = std::move(probe_);
        probe_.reset();
        st.probe_sched.emplace(st.probe->budget,
                               std::chrono::steady_clock::now());
      }
    }
    for (auto& o : batch) {
      auto i = static_cast<std::size_t>(o.ch);
      if (!st.socks[i])
        continue;
      auto frame = std::make_shared<const std::string>(std::move(o.frame));
      if (o.kind == op_kind::broadcast) {
        for (auto& p : peers(o.ch))
          st.backlog[i].push_back({std::move(p), o.type, frame, true});
      } else {
        st.backlog[i].push_back({std::move(o.peer), o.type, frame, false});
      }
    }
    batch.clear();
    for (std::size_t i = 0; i < channel_count; ++i)
      if (st.socks[i] && !st.backlog[i].empty())
        flush(st, i);
    if (st.probe)
      step_probe(st);
    for (std::size_t k = 0; k < item_channel.size(); ++k)
      if (items[k + 1].revents & ZMQ_POLLIN)
        drain_inbound(st, item_channel[k]);
    if (stopping_) {
      if (!flush_deadline)
        flush_deadline = std::chrono::steady_clock::now() + cfg_.flush_timeout;
      bool empty = true;
      {
        std::lock_guard<std::mutex> guard{queue_mtx_};
        empty = outbox_.empty();
      }
      for (auto& q : st.backlog)
        empty = empty && q.empty();
      if (empty || std::chrono::steady_clock::now() >= *flush_deadline)
        break;
    }
  }
  std::uint64_t dropped = 0;
  for (auto& q : st.backlog)
    dropped += q.size();
  {
    std::lock_guard<std::mutex> guard{queue_mtx_};
    dropped += outbox_.size();
    outbox_.clear();
    if (probe_)
      st.probe = std::move(probe_);
  }
  if (dropped > 0) {
    counters_.dropped_at_stop += dropped;
    log->warn("{} frames still queued at stop (no peer took them within {} ms)",
              dropped, cfg_.flush_timeout.count());
  }
  if (st.probe)
    caf::anon_send(st.probe->reply_to,
                   probe_result{false, st.probe_sched
                                         ? st.probe_sched->attempts()
                                         : 0u,
                                "bridge stopped before the return-channel "
                                "probe finished"});
}

void bridge::flush(io_state& st, std::size_t i) {
  auto& q = st.backlog[i];
  auto* sock = st.socks[i]->handle();
  auto ch = static_cast<channel>(i);
  bool router = cfg_.role == role::controller;
  while (!q.empty()) {
    auto& p = q.front();
    if (router) {
      if (zmq_send(sock, p.peer.data(), p.peer.size(),
                   ZMQ_DONTWAIT | ZMQ_SNDMORE)
          < 0) {
        auto err = zmq_errno();
        if (err == EAGAIN)
          return; // HWM: retried on POLLOUT
        report_send_failure(ch, p.peer, p.type, err, p.broadcast);
        q.pop_front();
        continue;
      }
    }
    if (zmq_send(sock, p.frame->data(), p.frame->size(), ZMQ_DONTWAIT) < 0) {
      auto err = zmq_errno();
      if (err == EAGAIN && !router)
        return; // no peer (IMMEDIATE) or HWM: retried on POLLOUT
      report_send_failure(ch, p.peer, p.type, err, p.broadcast);
      q.pop_front();
      continue;
    }
    ++counters_.frames_out;
    q.pop_front();
  }
}

void bridge::report_send_failure(channel ch, const std::string& peer,
                                 proto::msg_type type, int err,
                                 bool broadcast) {
  if (err == EHOSTUNREACH) {
    std::lock_guard<std::mutex> guard{peers_mtx_};
    peers_[static_cast<std::size_t>(ch)].erase(peer);
  }
  // Teardown broadcasts reach services that already left; that is expected.
  if (broadcast && err == EHOSTUNREACH) {
    ++counters_.broadcast_unreachable;
    return;
  }
  ++counters_.delivery_failures;
  delivery_failure f{ch, peer, type, err,
                     std::string{"send of "} + proto::to_string(type) + " on "
                       + to_string(ch) + " to peer \"" + peer
                       + "\" failed: " + zmq_strerror(err)};
  caf::actor sink;
  {
    std::lock_guard<std::mutex> guard{routes_mtx_};
    sink = failure_sink_;
  }
  if (sink)
    caf::anon_send(sink, std::move(f));
  else
    log::get("zmq_bridge")->warn("{}", f.message);
}

void bridge::step_probe(io_state& st) {
  auto& sched = *st.probe_sched;
  auto now = std::chrono::steady_clock::now();
  auto answer = [&](probe_result r) {
    if (!r.warning.empty())
      log::get("zmq_bridge")->warn("{}", r.warning);
    caf::anon_send(st.probe->reply_to, std::move(r));
    st.probe.reset();
    st.probe_sched.reset();
  };
  auto i = static_cast<std::size_t>(channel::credit_return);
  if (cfg_.role != role::worker || !st.socks[i])
    return answer({false, 0,
                   "return-channel probe needs a worker bridge with a "
                   "credit_return endpoint"});
  if (sched.budget().attempts == 0)
    return answer({false, 0,
                   "return-channel probe disabled (budget 0): declaring the "
                   "worker dispatchable unproven"});
  if (!sched.due(now))
    return;
  const auto& frame = st.probe->frame;
  if (zmq_send(st.socks[i]->handle(), frame.data(), frame.size(), ZMQ_DONTWAIT)
      >= 0) {
    ++counters_.frames_out;
    return answer({true, sched.attempts() + 1, {}});
  }
  auto err = zmq_errno();
  if (err != EAGAIN || sched.failed_attempt(now))
    answer({false, sched.attempts(),
            "credit-return channel to " + cfg_.connect.credit_return
              + " has no peer after " + std::to_string(sched.attempts())
              + " attempts "
              + (err == EAGAIN ? std::string{}
                               : std::string{"("} + zmq_strerror(err) + ") ")
              + "; continuing, returns are queued until it connects"});
}

void bridge::drain_inbound(io_state& st, std::size_t i) {
  auto* sock = st.socks[i]->handle();
  auto ch = static_cast<channel>(i);
  bool router = cfg_.role == role::controller && is_router_channel(ch);
  zmq::message_t part;
  for (int n = 0; n < inbound_burst; ++n) {
    if (zmq_msg_recv(part.handle(), sock, ZMQ_DONTWAIT) < 0)
      return;
    std::string peer;
    if (router) {
      peer.assign(part.data<char>(), part.size());
      if (!part.more()) {
        reject(ch, peer, make_error(proto::errc::truncated,
                          "ROUTER frame without a body"));
        continue;
      }
      // Parts of one message arrive together: this does not block.
      if (zmq_msg_recv(part.handle(), sock, 0) < 0)
        return;
    }
    ++counters_.frames_in;
    if (part.more()) {
      do {
        if (zmq_msg_recv(part.handle(), sock, 0) < 0)
          break;
      } while (part.more());
      reject(ch, peer, make_error(proto::errc::trailing_bytes,
                        "multipart message; the bridge sends one frame"));
      continue;
    }
    std::string_view bytes{part.data<char>(), part.size()};
    handle_frame(st, ch, std::move(peer), bytes);
  }
}

void bridge::handle_frame(io_state& st, channel ch, std::string peer,
                          std::string_view bytes) {
  auto frame = proto::parse_frame(bytes);
  if (!frame)
    return reject(ch, peer, frame.error());
  if (!peer.empty()) {
    std::lock_guard<std::mutex> guard{peers_mtx_};
    peers_[static_cast<std::size_t>(ch)].insert(peer);
  }
  if (cfg_.role == role::controller && cfg_.answer_time_pings
      && ch == channel::credit
      && frame->header.type == proto::msg_type::time_ping) {
    auto recv = wall_ns();
    auto ping = proto::decode_payload<proto::time_ping>(*frame);
    if (!ping)
      return reject(ch, peer, ping.error());
    proto::time_pong pong{ping->seq, ping->send_wall_ns, recv, wall_ns()};
    if (!proto::encode_frame_into(st.pong_buf, pong, "controller"))
      return;
    auto i = static_cast<std::size_t>(ch);
    st.backlog[i].push_back(
      {std::move(peer), proto::msg_type::time_pong,
       std::make_shared<const std::string>(st.pong_buf), false});
    ++counters_.time_pongs;
    flush(st, i);
    return;
  }
  auto msg = proto::decode_any(*frame);
  if (!msg)
    return reject(ch, peer, msg.error());
  caf::actor target;
  {
    std::lock_guard<std::mutex> guard{routes_mtx_};
    target = routes_[static_cast<std::size_t>(frame->header.type)
                     % routes_.size()];
    if (!target)
      target = default_route_;
  }
  if (!target) {
    ++counters_.unrouted;
    return;
  }
  origin o{ch, std::move(peer), std::string{frame->header.sender}};
  std::visit(
    [&](auto& m) { caf::anon_send(target, std::move(o), std::move(m)); },
    *msg);
}

void bridge::reject(channel ch, const std::string& peer, const caf::error& err) {
  ++counters_.rejected;
  caf::actor sink;
  {
    std::lock_guard<std::mutex> guard{routes_mtx_};
    sink = failure_sink_;
  }
  auto text = std::string{"rejected frame on "} + to_string(ch)
              + (peer.empty() ? std::string{} : " from \"" + peer + "\"")
              + ": " + error_message(err);
  if (sink)
    caf::anon_send(sink, frame_rejected{ch, peer, error_code(err, proto::errc::bad_value),
                                        std::move(text)});
  else
    log::get("zmq_bridge")->warn("{}", text);
}

} // namespace aiperf::zmq_bridge
