// The ZMQ bridge of one aiperf-node process: the only path between
// processes. One I/O thread owns every zmq socket of the process (libzmq
// sockets are not thread-safe); actors and other threads reach it through
// a mutex'd queue plus an eventfd polled with the sockets.
//
// Protocol with actors:
//   outbound: any thread calls send / send_to / broadcast. The message is
//             encoded (proto/codec) on the caller's thread and queued.
//   inbound:  each frame is decoded on the I/O thread and delivered with
//             caf::anon_send(target, origin, T) where T is the proto type
//             (credit_batch, register_service, ...) and target the actor
//             routed for that message type (else the default route).
//   failures: a targeted send to a departed peer (EHOSTUNREACH under
//             ROUTER_MANDATORY) sends delivery_failure to the failure sink;
//             a frame that does not decode sends frame_rejected.
//   probe:    probe_return_channel() answers the caller with probe_result.
//
// Multiplexing: one socket per channel per process. Each process's DEALERs
// carry the process identity (bridge_config::identity) as their ZMQ routing
// id; the service id of the sending service travels in the codec header
// (origin::sender). The controller learns peers from their inbound frames.
#pragma once

#include "proto/codec.hpp"
#include "runtime/zmq_bridge/settings.hpp"

#include <caf/actor.hpp>
#include <caf/meta/type_name.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace aiperf::zmq_bridge {

/// Where an inbound message came from; first element of every delivery.
struct origin {
  zmq_bridge::channel channel = channel::control;
  /// ZMQ routing id of the sending process on ROUTER channels (use it with
  /// send_to); empty on DEALER and PULL sockets.
  std::string peer;
  /// Service id from the codec header.
  std::string sender;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, origin& x) {
  return f(caf::meta::type_name("aiperf::zmq_bridge::origin"), x.channel,
           x.peer, x.sender);
}

/// A targeted send could not be delivered (sent to the failure sink).
struct delivery_failure {
  zmq_bridge::channel channel = channel::control;
  std::string peer;
  proto::msg_type type = proto::msg_type::command;
  /// errno of the send (EHOSTUNREACH for a departed peer).
  int error_code = 0;
  std::string message;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, delivery_failure& x) {
  return f(caf::meta::type_name("aiperf::zmq_bridge::delivery_failure"),
           x.channel, x.peer, x.type, x.error_code, x.message);
}

/// An inbound frame did not decode (sent to the failure sink).
struct frame_rejected {
  zmq_bridge::channel channel = channel::control;
  std::string peer;
  proto::errc code = proto::errc::truncated;
  std::string message;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, frame_rejected& x) {
  return f(caf::meta::type_name("aiperf::zmq_bridge::frame_rejected"),
           x.channel, x.peer, x.code, x.message);
}

/// Answer to probe_return_channel().
struct probe_result {
  /// A NOBLOCK send of the probe frame was accepted: the credit-return
  /// PUSH has a connected peer.
  bool connected = false;
  std::uint32_t attempts = 0;
  /// Non-empty when the probe degraded open (budget spent or disabled).
  std::string warning;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, probe_result& x) {
  return f(caf::meta::type_name("aiperf::zmq_bridge::probe_result"),
           x.connected, x.attempts, x.warning);
}

struct bridge_config {
  zmq_bridge::role role = role::worker;
  /// ZMQ routing id of this process's DEALERs (worker role). Unique per
  /// process, 1-255 bytes, must not start with a NUL byte.
  std::string identity;

  // Controller role.
  /// Interface of the TCP binds ("0.0.0.0" in a pod, "127.0.0.1" in tests).
  std::string bind_host = "0.0.0.0";
  /// TCP ports of the four channels; 0 = ephemeral (see bound()).
  port_config ports;
  /// Non-empty: every channel is also bound at ipc://<ipc_dir>/<ch>.ipc.
  std::string ipc_dir;

  // Worker role.
  /// Endpoint per channel; a channel with an empty endpoint is not opened.
  endpoints connect;

  // Both.
  /// Send/receive high-water marks per socket.
  int hwm = 100'000;
  /// How long closing sockets may still deliver queued frames.
  std::chrono::milliseconds linger{1000};
  /// How long stop() keeps trying to hand queued frames to libzmq.
  std::chrono::milliseconds flush_timeout{2000};
  /// Controller: answer time_ping on the credit channel with time_pong from
  /// the I/O thread (tight stamps) instead of delivering it.
  bool answer_time_pings = true;
};

/// Counters; read at any time from any thread.
struct bridge_stats {
  std::uint64_t frames_out = 0;
  std::uint64_t frames_in = 0;
  std::uint64_t rejected = 0;
  /// Decoded but no route and no default route.
  std::uint64_t unrouted = 0;
  std::uint64_t delivery_failures = 0;
  /// EHOSTUNREACH swallowed by broadcasts.
  std::uint64_t broadcast_unreachable = 0;
  std::uint64_t time_pongs = 0;
  /// Frames still queued when stop() gave up flushing.
  std::uint64_t dropped_at_stop = 0;
};

class bridge {
public:
  explicit bridge(bridge_config cfg);
  bridge(const bridge&) = delete;
  bridge& operator=(const bridge&) = delete;
  /// Calls stop().
  ~bridge();

  /// Opens the sockets on a new I/O thread and returns once they are bound
  /// or connected (the control ROUTER listens when this returns), or with
  /// an error naming the setting at fault. Call once.
  [[nodiscard]] caf::expected<void> start();

  /// Hands queued frames to libzmq (bounded by flush_timeout), closes the
  /// sockets (bounded by linger) and joins the I/O thread. Idempotent.
  /// Broadcast the shutdown before calling it: the control ROUTER lives
  /// until here.
  void stop();

  /// Controller: the endpoints bound by start().
  [[nodiscard]] const bound_endpoints& bound() const noexcept {
    return bound_;
  }

  /// Inbound frames of `type` go to `target` as (origin, T). Thread-safe,
  /// also before start(); an invalid actor removes the route.
  void route(proto::msg_type type, caf::actor target);
  /// Inbound frames without a route go to `target`.
  void route_default(caf::actor target);
  /// delivery_failure and frame_rejected go to `sink`.
  void set_failure_sink(caf::actor sink);

  /// Worker: sends `msg` from service `sender` on a DEALER or PUSH channel.
  /// Returns an error when the channel is not open for sending here or the
  /// message does not encode. Thread-safe.
  template <class T>
  caf::expected<void> send(channel ch, const T& msg,
                                  std::string_view sender) {
    return enqueue(op_kind::send, ch, {}, proto::msg_type_v<T>,
                   encode(msg, sender));
  }

  /// Controller: sends `msg` to process `peer` (origin::peer) on a ROUTER
  /// channel. A departed peer yields delivery_failure at the sink.
  template <class T>
  caf::expected<void> send_to(channel ch, std::string peer,
                                     const T& msg, std::string_view sender) {
    return enqueue(op_kind::send_to, ch, std::move(peer), proto::msg_type_v<T>,
                   encode(msg, sender));
  }

  /// Controller: sends `msg` to every peer known on a ROUTER channel;
  /// departed peers are skipped silently (and forgotten).
  template <class T>
  caf::expected<void> broadcast(channel ch, const T& msg,
                                       std::string_view sender) {
    return enqueue(op_kind::broadcast, ch, {}, proto::msg_type_v<T>,
                   encode(msg, sender));
  }

  /// Worker: proves the credit-return PUSH has a peer before the worker
  /// declares itself dispatchable: retries a NOBLOCK send (ZMQ_IMMEDIATE=1)
  /// of worker_connected{worker_id} within `budget`, then answers
  /// `reply_to` with probe_result. Degrades open: a spent budget answers
  /// connected=false with a warning, and queued returns still go out once
  /// the peer appears.
  void probe_return_channel(std::string worker_id, probe_budget budget,
                            caf::actor reply_to);

  /// Peers learned on a ROUTER channel (snapshot).
  [[nodiscard]] std::vector<std::string> peers(channel ch) const;

  [[nodiscard]] bridge_stats stats() const noexcept;

  [[nodiscard]] const bridge_config& config() const noexcept { return cfg_; }

private:
  enum class op_kind : std::uint8_t { send, send_to, broadcast };

  struct op {
    op_kind kind = op_kind::send;
    channel ch = channel::control;
    std::string peer;
    proto::msg_type type = proto::msg_type::command;
    std::string frame;
  };

  struct probe_request {
    std::string frame;
    probe_budget budget;
    caf::actor reply_to;
  };

  struct io_state;

  template <class T>
  caf::expected<std::string> encode(const T& msg,
                                          std::string_view sender) {
    return proto::encode_frame(msg, sender);
  }

  caf::expected<void> enqueue(op_kind kind, channel ch,
                                     std::string peer, proto::msg_type type,
                                     caf::expected<std::string> frame);
  void wake() noexcept;
  void run(std::promise<caf::expected<void>>& ready);
  caf::expected<void> open_sockets(io_state& st);
  void flush(io_state& st, std::size_t i);
  void step_probe(io_state& st);
  void drain_inbound(io_state& st, std::size_t i);
  void handle_frame(io_state& st, channel ch, std::string peer,
                    std::string_view bytes);
  void reject(channel ch, const std::string& peer, const caf::error& err);
  void report_send_failure(channel ch, const std::string& peer,
                           proto::msg_type type, int err, bool broadcast);

  bridge_config cfg_;
  bound_endpoints bound_;
  int wakeup_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  bool started_ = false;

  std::mutex queue_mtx_;
  std::vector<op> outbox_;
  std::optional<probe_request> probe_;

  mutable std::mutex routes_mtx_;
  std::array<caf::actor, 32> routes_;
  caf::actor default_route_;
  caf::actor failure_sink_;

  mutable std::mutex peers_mtx_;
  std::array<std::set<std::string>, channel_count> peers_;

  struct counters {
    std::atomic<std::uint64_t> frames_out{0};
    std::atomic<std::uint64_t> frames_in{0};
    std::atomic<std::uint64_t> rejected{0};
    std::atomic<std::uint64_t> unrouted{0};
    std::atomic<std::uint64_t> delivery_failures{0};
    std::atomic<std::uint64_t> broadcast_unreachable{0};
    std::atomic<std::uint64_t> time_pongs{0};
    std::atomic<std::uint64_t> dropped_at_stop{0};
  } counters_;
};

} // namespace aiperf::zmq_bridge
