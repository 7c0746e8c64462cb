// Real sockets on loopback: two bridges in one process over TCP and IPC, a
// raw zmq peer for corrupt frames, and a second process (bridge_peer).
// Every wait is a receive with a bounded deadline, never a sleep.
#include "runtime/zmq_bridge/bridge.hpp"

#include <caf/all.hpp>
#include <gtest/gtest.h>

#include <zmq.hpp>

#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

extern char** environ;

namespace aiperf::zmq_bridge {
namespace {

using namespace std::chrono_literals;

class bridge_test : public ::testing::Test {
protected:
  static caf::actor_system_config& make_cfg() {
    static caf::actor_system_config cfg = [] {
      caf::actor_system_config c;
      c.set("scheduler.max-threads", 2);
      return c;
    }();
    return cfg;
  }

  caf::actor_system sys{make_cfg()};
  caf::scoped_actor ctl{sys};
  caf::scoped_actor wrk{sys};

  static bridge_config controller_cfg(std::string ipc_dir = {}) {
    bridge_config c;
    c.role = role::controller;
    c.bind_host = "127.0.0.1";
    c.ports = {0, 0, 0, 0, 0, 0};
    c.ipc_dir = std::move(ipc_dir);
    c.linger = 0ms;
    return c;
  }

  static bridge_config worker_cfg(std::string identity, endpoints eps) {
    bridge_config c;
    c.identity = std::move(identity);
    c.connect = std::move(eps);
    c.linger = 0ms;
    c.flush_timeout = 100ms;
    return c;
  }

  static caf::actor handle(caf::scoped_actor& a) {
    return caf::actor_cast<caf::actor>(a);
  }

  /// Receives the next (origin, T) within `timeout`.
  template <class T>
  static std::optional<std::pair<origin, T>>
  recv(caf::scoped_actor& self, std::chrono::milliseconds timeout = 10s) {
    std::optional<std::pair<origin, T>> out;
    self->receive([&](origin& o, T& x) { out.emplace(std::move(o), std::move(x)); },
                  caf::after(timeout) >> [] {});
    return out;
  }

  template <class T>
  static std::optional<T> recv_plain(caf::scoped_actor& self,
                                     std::chrono::milliseconds timeout = 10s) {
    std::optional<T> out;
    self->receive([&](T& x) { out.emplace(std::move(x)); },
                  caf::after(timeout) >> [] {});
    return out;
  }

  /// Runs the exchange on every channel between a started controller and
  /// worker "w1".
  void exercise_all_channels(bridge& c, bridge& w) {
    c.route_default(handle(ctl));
    w.route_default(handle(wrk));
    ASSERT_TRUE(w.send(channel::control,
                        proto::register_service{"w1/svc", "worker", "n", 1},
                        "w1/svc"));
    auto reg = recv<proto::register_service>(ctl);
    ASSERT_TRUE(reg);
    EXPECT_EQ(reg->first.channel, channel::control);
    EXPECT_EQ(reg->first.peer, "w1");
    EXPECT_EQ(reg->first.sender, "w1/svc");
    EXPECT_EQ(reg->second.service_type, "worker");
    EXPECT_EQ(c.peers(channel::control), std::vector<std::string>{"w1"});

    ASSERT_TRUE(c.send_to(channel::control, reg->first.peer,
                           proto::registered{"w1/svc", true, ""}, "ctl"));
    auto ok = recv<proto::registered>(wrk);
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok->first.sender, "ctl");
    EXPECT_TRUE(ok->second.accepted);

    // The controller's I/O thread answers pings itself.
    ASSERT_TRUE(w.send(channel::credit, proto::time_ping{7, 1234}, "w1/svc"));
    auto pong = recv<proto::time_pong>(wrk);
    ASSERT_TRUE(pong);
    EXPECT_EQ(pong->second.seq, 7u);
    EXPECT_EQ(pong->second.ping_send_wall_ns, 1234);
    EXPECT_LE(pong->second.recv_wall_ns, pong->second.send_wall_ns);
    EXPECT_EQ(c.stats().time_pongs, 1u);

    proto::credit_batch credits(3);
    for (std::size_t i = 0; i < credits.size(); ++i)
      credits[i].id = 100 + i;
    ASSERT_TRUE(c.send_to(channel::credit, "w1", credits, "tm"));
    auto got = recv<proto::credit_batch>(wrk);
    ASSERT_TRUE(got);
    ASSERT_EQ(got->second.size(), 3u);
    EXPECT_EQ(got->second[2].id, 102u);
    EXPECT_EQ(got->first.channel, channel::credit);

    ASSERT_TRUE(w.send(channel::credit_return,
                        proto::credit_return_batch{{100, 1, {}, false}},
                        "w1/svc"));
    auto ret = recv<proto::credit_return_batch>(ctl);
    ASSERT_TRUE(ret);
    EXPECT_EQ(ret->first.channel, channel::credit_return);
    EXPECT_EQ(ret->first.peer, ""); // PUSH/PULL: the id is in the message
    EXPECT_EQ(ret->first.sender, "w1/svc");
    EXPECT_EQ(ret->second.at(0).credit_id, 100u);

    proto::metric_record_batch records;
    records.records.resize(2);
    records.records[1].x_request_id = "r2";
    ASSERT_TRUE(w.send(channel::records, records, "w1/rp"));
    auto rec = recv<proto::metric_record_batch>(ctl);
    ASSERT_TRUE(rec);
    EXPECT_EQ(rec->first.channel, channel::records);
    EXPECT_EQ(rec->second.records.at(1).x_request_id, "r2");
  }
};

TEST_F(bridge_test, tcp_ephemeral_ports_carry_every_channel) {
  bridge c{controller_cfg()};
  ASSERT_TRUE(c.start());
  for (std::size_t i = 0; i < channel_count; ++i) {
    const auto& ep = c.bound().tcp[static_cast<channel>(i)];
    EXPECT_EQ(ep.rfind("tcp://127.0.0.1:", 0), 0u) << ep;
    EXPECT_NE(ep, "tcp://127.0.0.1:0");
  }
  EXPECT_TRUE(c.bound().ipc.control.empty());
  bridge w{worker_cfg("w1", c.bound().tcp)};
  ASSERT_TRUE(w.start());
  exercise_all_channels(c, w);
  EXPECT_EQ(c.stats().rejected, 0u);
}

TEST_F(bridge_test, ipc_dual_bind_carries_every_channel) {
  auto dir = std::filesystem::temp_directory_path() / "aiperf-bridge-XXXXXX";
  std::string tmpl = dir.string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  {
    bridge c{controller_cfg(tmpl)};
    ASSERT_TRUE(c.start());
    EXPECT_EQ(c.bound().ipc.control, "ipc://" + tmpl + "/control.ipc");
    EXPECT_FALSE(c.bound().tcp.control.empty()); // dual bind
    auto eps = select_worker_endpoints(std::nullopt, {}, c.bound());
    EXPECT_EQ(eps.credit, c.bound().ipc.credit);
    bridge w{worker_cfg("w1", eps)};
    ASSERT_TRUE(w.start());
    exercise_all_channels(c, w);
  }
  std::filesystem::remove_all(tmpl);
}

TEST_F(bridge_test, broadcast_swallows_departed_peers_targeted_send_reports) {
  bridge c{controller_cfg()};
  ASSERT_TRUE(c.start());
  c.route_default(handle(ctl));
  c.set_failure_sink(handle(ctl));
  bridge w1{worker_cfg("w1", c.bound().tcp)};
  ASSERT_TRUE(w1.start());
  w1.route_default(handle(wrk));
  {
    bridge w2{worker_cfg("w2", c.bound().tcp)};
    ASSERT_TRUE(w2.start());
    ASSERT_TRUE(w1.send(channel::control, proto::heartbeat{"a", "up", 0}, "a"));
    ASSERT_TRUE(w2.send(channel::control, proto::heartbeat{"b", "up", 0}, "b"));
    ASSERT_TRUE(recv<proto::heartbeat>(ctl));
    ASSERT_TRUE(recv<proto::heartbeat>(ctl));
    EXPECT_EQ(c.peers(channel::control).size(), 2u);
  } // w2 leaves
  // Until the ROUTER notices w2 left, broadcasts still reach it; once it
  // has, the broadcast hits EHOSTUNREACH and swallows it.
  auto deadline = std::chrono::steady_clock::now() + 10s;
  int sent = 0;
  while (c.stats().broadcast_unreachable == 0
         && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(c.broadcast(channel::control, proto::shutdown{"end", 0}, "ctl"));
    ++sent;
    ASSERT_TRUE(recv<proto::shutdown>(wrk)); // w1 gets every broadcast
  }
  EXPECT_EQ(c.stats().broadcast_unreachable, 1u);
  EXPECT_EQ(c.stats().delivery_failures, 0u);
  EXPECT_EQ(c.peers(channel::control), std::vector<std::string>{"w1"});
  EXPECT_FALSE(recv_plain<delivery_failure>(ctl, 50ms)) << "broadcast leaked";
  // A targeted send to the same departed peer surfaces the error.
  ASSERT_TRUE(c.send_to(channel::control, "w2", proto::command{1, "x", ""},
                         "ctl"));
  auto failure = recv_plain<delivery_failure>(ctl);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->error_code, EHOSTUNREACH);
  EXPECT_EQ(failure->peer, "w2");
  EXPECT_EQ(failure->type, proto::msg_type::command);
  EXPECT_NE(failure->message.find("w2"), std::string::npos);
  EXPECT_GE(sent, 1);
}

TEST_F(bridge_test, return_channel_probe_proves_the_peer) {
  bridge c{controller_cfg()};
  ASSERT_TRUE(c.start());
  c.route(proto::msg_type::worker_connected, handle(ctl));
  bridge w{worker_cfg("w1", c.bound().tcp)};
  ASSERT_TRUE(w.start());
  w.probe_return_channel("w1/worker_0", {200, 10ms}, handle(wrk));
  auto r = recv_plain<probe_result>(wrk);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->connected);
  EXPECT_GE(r->attempts, 1u);
  EXPECT_TRUE(r->warning.empty());
  // The probe frame is a real, idempotent message.
  auto seen = recv<proto::worker_connected>(ctl);
  ASSERT_TRUE(seen);
  EXPECT_EQ(seen->second.worker_id, "w1/worker_0");
}

TEST_F(bridge_test, return_channel_probe_degrades_open_without_a_peer) {
  bridge c{controller_cfg()};
  ASSERT_TRUE(c.start());
  auto eps = c.bound().tcp;
  c.stop(); // nothing listens there any more
  bridge w{worker_cfg("w1", eps)};
  ASSERT_TRUE(w.start());
  w.probe_return_channel("w1/worker_0", {3, 5ms}, handle(wrk));
  auto r = recv_plain<probe_result>(wrk);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->connected);
  EXPECT_EQ(r->attempts, 3u);
  EXPECT_NE(r->warning.find("no peer after 3 attempts"), std::string::npos);
  w.probe_return_channel("w1/worker_0", {0, 5ms}, handle(wrk));
  auto off = recv_plain<probe_result>(wrk);
  ASSERT_TRUE(off);
  EXPECT_FALSE(off->connected);
  EXPECT_NE(off->warning.find("disabled"), std::string::npos);
  // Returns queued while unconnected are counted, not lost silently.
  ASSERT_TRUE(w.send(channel::credit_return, proto::credit_return_batch{},
                      "w1"));
  w.stop();
  EXPECT_EQ(w.stats().dropped_at_stop, 1u);
}

TEST_F(bridge_test, corrupt_and_foreign_version_frames_are_rejected) {
  bridge c{controller_cfg()};
  ASSERT_TRUE(c.start());
  c.route_default(handle(ctl));
  c.set_failure_sink(handle(ctl));
  zmq::context_t ctx;
  zmq::socket_t raw{ctx, zmq::socket_type::dealer};
  raw.set(zmq::sockopt::linger, 0);
  raw.set(zmq::sockopt::routing_id, "raw");
  raw.connect(c.bound().tcp.control);
  auto frame = *proto::encode_frame(proto::heartbeat{"x", "up", 0}, "x");
  constexpr auto other = static_cast<std::uint16_t>(proto::wire_version + 1);
  auto v2 = frame;
  v2[4] = static_cast<char>(other);
  raw.send(zmq::buffer(v2), zmq::send_flags::none);
  auto rej = recv_plain<frame_rejected>(ctl);
  ASSERT_TRUE(rej);
  EXPECT_EQ(rej->code, proto::errc::version_mismatch);
  EXPECT_EQ(rej->peer, "raw");
  EXPECT_NE(rej->message.find("wire version " + std::to_string(other)),
            std::string::npos)
    << rej->message;
  raw.send(zmq::str_buffer("garbage"), zmq::send_flags::none);
  rej = recv_plain<frame_rejected>(ctl);
  ASSERT_TRUE(rej);
  EXPECT_EQ(rej->code, proto::errc::bad_magic);
  // A good frame after bad ones still goes through.
  raw.send(zmq::buffer(frame), zmq::send_flags::none);
  auto hb = recv<proto::heartbeat>(ctl);
  ASSERT_TRUE(hb);
  EXPECT_EQ(hb->first.peer, "raw");
  EXPECT_EQ(c.stats().rejected, 2u);
}

TEST_F(bridge_test, misuse_is_an_error_naming_the_fix) {
  bridge c{controller_cfg()};
  ASSERT_TRUE(c.start());
  auto e = c.send(channel::credit, proto::credit{}, "ctl");
  ASSERT_FALSE(e);
  EXPECT_TRUE(is_error(e.error(), errc::not_open));
  EXPECT_NE(error_message(e.error()).find("send_to"), std::string::npos);
  EXPECT_FALSE(c.send_to(channel::records, "p", proto::credit{}, "ctl"));
  bridge w{worker_cfg("w1", {c.bound().tcp.control, "", "", ""})};
  ASSERT_TRUE(w.start());
  EXPECT_FALSE(w.send_to(channel::control, "p", proto::credit{}, "w"));
  auto no_ep = w.send(channel::records, proto::credit{}, "w");
  ASSERT_FALSE(no_ep);
  EXPECT_TRUE(is_error(no_ep.error(), errc::not_open));
  EXPECT_NE(error_message(no_ep.error()).find("no endpoint"), std::string::npos);

  bridge anonymous{worker_cfg("", c.bound().tcp)};
  auto id_err = anonymous.start();
  ASSERT_FALSE(id_err);
  EXPECT_TRUE(is_error(id_err.error(), errc::bad_config));
  EXPECT_NE(error_message(id_err.error()).find("identity"), std::string::npos);

  // The control port is taken by `c`: the error names the channel and fix.
  auto taken = controller_cfg();
  auto ep = c.bound().tcp.control;
  taken.ports.control
    = static_cast<std::uint16_t>(std::stoi(ep.substr(ep.rfind(':') + 1)));
  bridge clash{taken};
  auto bind_err = clash.start();
  ASSERT_FALSE(bind_err);
  EXPECT_NE(error_message(bind_err.error()).find("bind control"), std::string::npos);
  EXPECT_NE(error_message(bind_err.error()).find("AIPERF_K8S_PORT_"), std::string::npos);
}

TEST_F(bridge_test, second_process_registers_returns_credits_and_exits) {
  bridge c{controller_cfg()};
  ASSERT_TRUE(c.start());
  c.route_default(handle(ctl));
  const auto& eps = c.bound().tcp;
  std::string bin = AIPERF_BRIDGE_PEER_BIN;
  std::vector<std::string> args{bin, "peer1", eps.control, eps.credit,
                                eps.credit_return, eps.records};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawn(&pid, bin.c_str(), nullptr, nullptr, argv.data(),
                          environ),
            0);
  auto probe = recv<proto::worker_connected>(ctl);
  ASSERT_TRUE(probe);
  EXPECT_EQ(probe->second.worker_id, "peer1/worker_0");
  auto reg = recv<proto::register_service>(ctl);
  ASSERT_TRUE(reg);
  EXPECT_EQ(reg->first.peer, "peer1");
  EXPECT_EQ(static_cast<pid_t>(reg->second.pid), pid);
  // The credit DEALER may connect after the control one: retry the
  // first send until the ROUTER knows the peer (bounded).
  c.set_failure_sink(handle(ctl));
  proto::credit_batch credits(100);
  for (std::size_t i = 0; i < credits.size(); ++i)
    credits[i].id = i;
  std::size_t returned = 0;
  auto deadline = std::chrono::steady_clock::now() + 10s;
  bool delivered = false;
  while (!delivered && std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(c.send_to(channel::credit, "peer1", credits, "tm"));
    ctl->receive(
      [&](const origin&, const proto::credit_return_batch& r) {
        returned += r.size();
        delivered = true;
      },
      [&](const delivery_failure&) {}, caf::after(10s) >> [] {});
  }
  ASSERT_TRUE(delivered);
  EXPECT_EQ(returned, 100u);
  ASSERT_TRUE(c.broadcast(channel::control, proto::shutdown{"done", 0}, "ctl"));
  int status = -1;
  deadline = std::chrono::steady_clock::now() + 10s;
  while (::waitpid(pid, &status, WNOHANG) == 0
         && std::chrono::steady_clock::now() < deadline)
    ctl->receive(caf::after(10ms) >> [] {}); // bounded poll, not a timing check
  if (status == -1)
    ::kill(pid, SIGKILL);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

} // namespace
} // namespace aiperf::zmq_bridge
