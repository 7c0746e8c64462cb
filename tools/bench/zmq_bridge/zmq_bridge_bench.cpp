// Bridge benchmark between two processes (this binary re-executes itself as
// the worker): round-trip latency of one credit (controller send_to ->
// worker actor -> credit_return PUSH -> controller actor) and pipelined
// credit throughput, under one CAF scheduler policy; plus codec speed
// against caf::binary_serializer. Prints numbers, asserts nothing.
//
//   zmq_bridge_bench [sharing|stealing] [rtt_iterations] [credits]
#include "runtime/zmq_bridge/bridge.hpp"

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

extern char** environ;

using namespace aiperf;
using namespace aiperf::zmq_bridge;
using clock_type = std::chrono::steady_clock;

namespace {

caf::actor_system_config make_cfg(const std::string& policy) {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  if (policy == "sharing")
    cfg.set("scheduler.policy", caf::atom("sharing"));
  else
    cfg.set("scheduler.policy", caf::atom("stealing"));
  return cfg;
}

int run_worker(const std::string& policy, char** eps) {
  auto cfg = make_cfg(policy);
  caf::actor_system sys{cfg};
  bridge_config bc;
  bc.identity = "bench-worker";
  bc.connect = {eps[0], eps[1], eps[2], eps[3]};
  bridge b{bc};
  if (auto started = b.start(); !started) {
    std::cerr << aiperf::error_message(started.error()) << "\n";
    return 3;
  }
  // An event-based actor echoes credits as returns, like a worker would.
  auto echo = sys.spawn([&b](caf::event_based_actor* self) -> caf::behavior {
    return {
      [&b](const origin&, const proto::credit_batch& credits) {
        proto::credit_return_batch returns;
        returns.reserve(credits.size());
        for (const auto& c : credits)
          returns.push_back({c.id, 0, proto::credit_outcome::ok, false});
        (void) b.send(channel::credit_return, returns, "bench-worker");
      },
      [self](const origin&, const proto::shutdown&) { self->quit(); },
    };
  });
  b.route_default(echo);
  caf::scoped_actor self{sys};
  b.probe_return_channel("bench-worker", {200, std::chrono::milliseconds{10}},
                         caf::actor_cast<caf::actor>(self));
  self->receive([](const probe_result&) {});
  (void) b.send(channel::control, proto::register_service{"bench-worker"},
                "bench-worker");
  self->wait_for(echo);
  b.stop();
  return 0;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

void codec_speed() {
  proto::credit_batch credits(32);
  for (std::size_t i = 0; i < credits.size(); ++i)
    credits[i].id = i;
  constexpr int n = 200'000;
  std::string buf;
  auto t0 = clock_type::now();
  std::size_t sink = 0;
  for (int i = 0; i < n; ++i) {
    (void) proto::encode_frame_into(buf, credits, "worker_0");
    auto f = proto::parse_frame(buf);
    auto d = proto::decode_payload<proto::credit_batch>(*f);
    sink += d->size();
  }
  auto ours = std::chrono::duration<double, std::nano>(clock_type::now() - t0)
                .count() / n;
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  std::vector<char> cbuf;
  t0 = clock_type::now();
  for (int i = 0; i < n; ++i) {
    cbuf.clear();
    caf::binary_serializer s{sys, cbuf};
    (void) s(credits);
    proto::credit_batch out;
    caf::binary_deserializer d{sys, cbuf};
    (void) d(out);
    sink += out.size();
  }
  auto cafs = std::chrono::duration<double, std::nano>(clock_type::now() - t0)
                .count() / n;
  std::printf("codec: credit_batch(32) encode+decode: proto codec %.0f ns "
              "(%zu bytes), caf::binary_serializer %.0f ns (%zu bytes), "
              "ratio %.2f  [%zu]\n",
              ours, buf.size(), cafs, cbuf.size(), cafs / ours, sink % 10);
}

int run_controller(const std::string& policy, int rtt_n, int credits_n,
                   const char* self_path) {
  auto cfg = make_cfg(policy);
  caf::actor_system sys{cfg};
  caf::scoped_actor self{sys};
  bridge_config bc;
  bc.role = role::controller;
  bc.bind_host = "127.0.0.1";
  bc.ports = {0, 0, 0, 0, 0, 0};
  bridge b{bc};
  if (auto started = b.start(); !started) {
    std::cerr << aiperf::error_message(started.error()) << "\n";
    return 3;
  }
  b.route_default(caf::actor_cast<caf::actor>(self));
  auto eps = b.bound().tcp;
  std::vector<std::string> args{self_path, "--worker", policy, eps.control,
                                eps.credit, eps.credit_return, eps.records};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (::posix_spawn(&pid, self_path, nullptr, nullptr, argv.data(), environ)
      != 0) {
    std::perror("posix_spawn");
    return 3;
  }
  std::string peer;
  self->receive([&](const origin& o, const proto::register_service&) {
    peer = o.peer;
  });
  self->receive([](const origin&, const proto::worker_connected&) {},
                caf::after(std::chrono::seconds(5)) >> [] {});
  // Warm the credit path (the DEALER may connect after control).
  bool warm = false;
  while (!warm) {
    (void) b.send_to(channel::credit, peer, proto::credit_batch(1), "tm");
    self->receive([&](const origin&, const proto::credit_return_batch&) {
      warm = true;
    }, caf::after(std::chrono::milliseconds(100)) >> [] {});
  }
  std::vector<double> rtts;
  rtts.reserve(static_cast<std::size_t>(rtt_n));
  proto::credit_batch one(1);
  for (int i = 0; i < rtt_n; ++i) {
    one[0].id = static_cast<std::uint64_t>(i);
    auto t0 = clock_type::now();
    (void) b.send_to(channel::credit, peer, one, "tm");
    self->receive([](const origin&, const proto::credit_return_batch&) {});
    rtts.push_back(
      std::chrono::duration<double, std::micro>(clock_type::now() - t0)
        .count());
  }
  auto throughput = [&](std::size_t batch, std::size_t window) {
    proto::credit_batch credits(batch);
    std::size_t sent = 0, returned = 0, total = static_cast<std::size_t>(
                                                  credits_n);
    auto t0 = clock_type::now();
    while (returned < total) {
      while (sent < total && sent - returned < window * batch) {
        (void) b.send_to(channel::credit, peer, credits, "tm");
        sent += batch;
      }
      self->receive([&](const origin&, const proto::credit_return_batch& r) {
        returned += r.size();
      });
    }
    auto s = std::chrono::duration<double>(clock_type::now() - t0).count();
    return static_cast<double>(returned) / s;
  };
  auto single = throughput(1, 100);
  auto batched = throughput(32, 8);
  std::printf("policy=%-8s rtt(1 credit) p50 %.0f us p99 %.0f us (%.0f "
              "round trips/s); credits/s: 1 per msg window 100: %.0f, 32 per "
              "msg window 8: %.0f\n",
              policy.c_str(), percentile(rtts, 0.5), percentile(rtts, 0.99),
              1e6 / percentile(rtts, 0.5), single, batched);
  (void) b.broadcast(channel::control, proto::shutdown{"bench done", 0}, "ctl");
  int status = 0;
  ::waitpid(pid, &status, 0);
  b.stop();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  if (argc == 7 && std::string{argv[1]} == "--worker")
    return run_worker(argv[2], argv + 3);
  std::string policy = argc > 1 ? argv[1] : "both";
  int rtt_n = argc > 2 ? std::stoi(argv[2]) : 2000;
  int credits_n = argc > 3 ? std::stoi(argv[3]) : 200'000;
  if (policy == "codec") {
    codec_speed();
    return 0;
  }
  if (policy != "both")
    return run_controller(policy, rtt_n, credits_n, argv[0]);
  codec_speed();
  int rc = 0;
  for (int round = 0; round < 2; ++round) // alternate: the VM drifts
    for (const char* p : {"sharing", "stealing"})
      rc |= run_controller(p, rtt_n, credits_n, argv[0]);
  return rc;
}
