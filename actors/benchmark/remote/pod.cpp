#include "actors/benchmark/remote/pod.hpp"
#include "proto/benchmark_errors.hpp"

#include "runtime/log/log.hpp"

#include <caf/all.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace aiperf::remote {

using namespace proto;
using zmq_bridge::channel;
using zmq_bridge::origin;

namespace {

caf::error controller_only(const char* what) {
  return make_error(benchmark::errc::bad_request, std::string{what}
                           + " is handled by the controller process, not a "
                             "worker pod");
}

struct proxy_state {
  static inline const char* name = "remote_proxy";
};

caf::behavior remote_timing(caf::stateful_actor<proxy_state>*,
                            std::shared_ptr<zmq_bridge::bridge> bridge,
                            std::string pod) {
  auto logger = log::get("pod");
  return {
    [=](credit_return_batch& b) {
      if (auto sent = bridge->send(channel::credit_return, b, pod); !sent)
        logger->error("credit returns: {}", error_message(sent.error()));
    },
    [=](first_tok_atom, std::uint64_t id) {
      if (auto sent = bridge->send(channel::credit_return,
                                  command{id, "first_token", {}}, pod); !sent)
        logger->error("first token: {}", error_message(sent.error()));
    },
    [=](configure_atom, timing_config&,
        std::vector<credit_sink_actor>&) -> caf::result<caf::ok_atom> {
      return controller_only("configure");
    },
    [=](start_atom) -> caf::result<std::vector<phase_stats>> {
      return controller_only("start");
    },
    [=](cancel_atom) {},
    [=](lost_atom, std::uint32_t) -> caf::result<credit_batch> {
      // The controller reaps a pod's workers when the pod is lost; a single
      // worker actor dying inside a live pod ends the pod (see service).
      return controller_only("lost");
    },
    [=](progress_atom) -> caf::result<timing_progress> {
      return controller_only("progress");
    },
  };
}

caf::behavior remote_records(caf::stateful_actor<proxy_state>*,
                             std::shared_ptr<zmq_bridge::bridge> bridge,
                             std::string pod) {
  auto logger = log::get("pod");
  return {
    [=](metric_record_batch& b) {
      if (auto sent = bridge->send(channel::records, b, pod); !sent)
        logger->error("records: {}", error_message(sent.error()));
    },
    [=](section_atom, std::string& name, std::string&) {
      logger->warn("export section '{}' dropped: the controller process "
                   "writes the exports",
                   name);
    },
    [=](process_atom, std::uint64_t, run_info&) -> caf::result<export_outcome> {
      return controller_only("process");
    },
    [=](progress_atom) -> caf::result<records_progress> {
      return controller_only("progress");
    },
  };
}

std::int64_t wall_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

caf::behavior offset_stamper(caf::stateful_actor<proxy_state>*,
                             record_processor_actor processor,
                             offset_slot slot) {
  return {
    [=](request_record_batch& b) {
      auto offset = slot->load(std::memory_order_relaxed);
      for (auto& rec : b.records)
        rec.clock_offset_ns = offset;
      caf::anon_send(processor, std::move(b));
    },
  };
}

struct inbox_state {
  static inline const char* name = "pod_inbox";
  pod_inbox_config cfg;
  time::clock_offset_tracker tracker;
  bool exited = false;
  /// Last frame from the controller on the control channel.
  caf::actor_clock::time_point controller_seen;
};

using inbox_ptr = caf::stateful_actor<inbox_state>*;

void exit_process(inbox_ptr self, int code, std::string why) {
  auto& st = self->state;
  if (st.exited)
    return;
  st.exited = true;
  if (st.cfg.on_exit)
    st.cfg.on_exit(code, std::move(why));
}

/// A heartbeat with the pod's current clock offset estimate.
heartbeat make_heartbeat(const inbox_state& st) {
  heartbeat hb{st.cfg.pod, "running", wall_now_ns()};
  hb.clock_offset_ns = st.tracker.offset_or_zero_ns();
  hb.clock_one_way_samples
    = static_cast<std::uint32_t>(st.tracker.one_way_samples());
  hb.clock_min_rtt_ns = st.tracker.min_rtt_ns().value_or(-1);
  hb.clock_local = st.tracker.local();
  return hb;
}

void send_ack(inbox_ptr self, std::uint64_t id, std::string error) {
  auto& st = self->state;
  ack a{id, error.empty(), std::move(error)};
  if (auto sent = st.cfg.bridge->send(channel::control, a, st.cfg.pod); !sent)
    log::get("pod")->error("ack: {}", error_message(sent.error()));
}

/// Concatenates the processors' RAW parts and uploads them; "" or an error.
std::string upload_raw(const pod_inbox_config& cfg,
                       const std::vector<std::string>& paths) {
  std::string body;
  for (auto& p : paths) {
    if (p.empty())
      continue;
    std::ifstream in{p, std::ios::binary};
    if (!in)
      return "cannot read RAW part " + p;
    std::ostringstream ss;
    ss << in.rdbuf();
    body += ss.str();
  }
  auto size = body.size();
  auto name = cfg.raw_upload_name.empty() ? cfg.pod : cfg.raw_upload_name;
  auto reply = http_fetch::put(cfg.api, "/api/raw/" + name, std::move(body),
                        std::chrono::seconds{120});
  if (!reply.error.empty())
    return "RAW upload: " + reply.error;
  if (reply.status != 200)
    return "RAW upload: HTTP " + std::to_string(reply.status) + ": "
           + reply.body;
  log::get("pod")->info("uploaded {} bytes of RAW records", size);
  return {};
}

void finalize(inbox_ptr self, std::uint64_t command_id) {
  auto& st = self->state;
  auto& t = st.tracker;
  log::get("pod")->info("{}: clock offset estimate {} ns ({} one-way samples, "
                        "min rtt {} ns{})",
                        st.cfg.pod, t.offset_or_zero_ns(), t.one_way_samples(),
                        t.min_rtt_ns().value_or(-1),
                        t.local() ? ", local: pinned to 0" : "");
  // The final estimate reaches the controller before the ack (same socket,
  // in order): the one the run's export reports for this pod.
  if (auto sent = st.cfg.bridge->send(channel::control, make_heartbeat(st),
                                      st.cfg.pod);
      !sent)
    log::get("pod")->error("clock report: {}", error_message(sent.error()));
  auto n = st.cfg.processors.size();
  auto paths = std::make_shared<std::vector<std::string>>(n);
  auto pending = std::make_shared<std::size_t>(n);
  auto failed = std::make_shared<std::string>();
  auto done = [=] {
    if (!failed->empty())
      return send_ack(self, command_id, *failed);
    if (!self->state.cfg.export_raw)
      return send_ack(self, command_id, {});
    send_ack(self, command_id, upload_raw(self->state.cfg, *paths));
  };
  if (n == 0)
    return done();
  for (std::size_t i = 0; i < n; ++i)
    self->request(st.cfg.processors[i], benchmark::service_timeouts{}.finalize,
                  finalize_atom::value)
      .then(
        [=](std::string& path) {
          (*paths)[i] = std::move(path);
          if (--*pending == 0)
            done();
        },
        [=](caf::error& err) {
          *failed = error_message(benchmark::name_timeout(
            std::move(err), "record_processor", "finalize",
            benchmark::service_timeouts{}.finalize));
          if (--*pending == 0)
            done();
        });
}

caf::behavior pod_inbox(inbox_ptr self, pod_inbox_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.tracker = time::clock_offset_tracker{st.cfg.local_clock};
  st.controller_seen = self->clock().now();
  auto logger = log::get("pod");
  self->send(self, heartbeat_atom::value);
  return {
    [=](origin& o, credit_batch& b) {
      auto& st = self->state;
      auto now = st.cfg.clock.now_ns();
      for (auto& c : b)
        st.tracker.add_one_way(now, c.issued_at_ns);
      // Credits carry controller clock times. Our workers run on the real
      // monotonic clock, which is the skewed one minus the injected skew:
      // controller = skewed - estimate = real + skew - estimate.
      auto shift = st.cfg.local_clock ? std::int64_t{0}
                                      : st.tracker.offset_or_zero_ns()
                                          - st.cfg.clock.skew_ns();
      if (st.cfg.record_offset)
        // Record contract: controller_time = worker_time - clock_offset_ns.
        st.cfg.record_offset->store(shift, std::memory_order_relaxed);
      if (shift != 0)
        for (auto& c : b) {
          c.issued_at_ns += shift;
          if (c.due_ns != 0)
            c.due_ns += shift;
        }
      auto i = st.cfg.workers.find(o.sender);
      if (i == st.cfg.workers.end())
        return logger->error("credits for unknown worker '{}' dropped",
                             o.sender);
      self->send(i->second, std::move(b));
    },
    [=](origin& o, command& c) {
      auto& st = self->state;
      if (c.name == "cancel") {
        std::vector<std::uint64_t> ids;
        std::istringstream in{c.body};
        std::string tok;
        while (std::getline(in, tok, ','))
          if (!tok.empty())
            ids.push_back(std::stoull(tok));
        auto i = st.cfg.workers.find(o.sender);
        if (i != st.cfg.workers.end())
          self->send(i->second, cancel_atom::value, std::move(ids));
        return;
      }
      if (c.name == "finalize")
        return finalize(self, c.command_id);
      logger->warn("unknown command '{}' ignored", c.name);
      send_ack(self, c.command_id, "unknown command '" + c.name + "'");
    },
    [=](origin&, heartbeat&) {
      self->state.controller_seen = self->clock().now();
    },
    [=](origin&, registered& r) {
      self->state.controller_seen = self->clock().now();
      if (r.accepted)
        return;
      if (r.final) {
        logger->warn("the controller refused {}: {}; this pod stays out of the run",
                     r.service_id, r.reason);
        return exit_process(self, 0, "registration refused: " + r.reason);
      }
      logger->error("the controller refused {}: {}", r.service_id, r.reason);
      exit_process(self, 1, "registration refused: " + r.reason);
    },
    [=](origin&, shutdown& s) {
      logger->info("shutdown from the controller: {}", s.reason);
      exit_process(self, s.exit_code, s.reason);
    },
    [=](origin&, time_pong& p) {
      auto& st = self->state;
      st.tracker.add_ping_pong(p.ping_send_wall_ns, p.recv_wall_ns,
                               wall_now_ns() + st.cfg.clock.skew_ns());
    },
    [=](caf::get_atom, clock_atom) -> std::int64_t {
      return self->state.tracker.offset_or_zero_ns();
    },
    [=](heartbeat_atom) {
      auto& st = self->state;
      if (st.exited)
        return;
      auto silent = self->clock().now() - st.controller_seen;
      if (st.cfg.controller_timeout.count() > 0
          && silent > st.cfg.controller_timeout) {
        logger->error("{}: nothing from the controller for {} ms: it is "
                      "gone; exiting",
                      st.cfg.pod, st.cfg.controller_timeout.count());
        return exit_process(self, 1, "controller lost");
      }
      (void) st.cfg.bridge->send(channel::control, make_heartbeat(st),
                                 st.cfg.pod);
      self->delayed_send(self, st.cfg.heartbeat_interval,
                         heartbeat_atom::value);
    },
  };
}

} // namespace

timing_manager_actor spawn_remote_timing(caf::actor_system& sys,
                                         std::shared_ptr<zmq_bridge::bridge> bridge,
                                         std::string pod) {
  return caf::actor_cast<timing_manager_actor>(
    sys.spawn(remote_timing, std::move(bridge), std::move(pod)));
}

records_manager_actor
spawn_remote_records(caf::actor_system& sys,
                     std::shared_ptr<zmq_bridge::bridge> bridge,
                     std::string pod) {
  return caf::actor_cast<records_manager_actor>(
    sys.spawn(remote_records, std::move(bridge), std::move(pod)));
}

record_sink_actor spawn_offset_stamper(caf::actor_system& sys,
                                       record_processor_actor processor,
                                       offset_slot slot) {
  return caf::actor_cast<record_sink_actor>(
    sys.spawn(offset_stamper, std::move(processor), std::move(slot)));
}

caf::actor spawn_pod_inbox(caf::actor_system& sys, pod_inbox_config cfg) {
  return sys.spawn(pod_inbox, std::move(cfg));
}

void route_pod_inbox(zmq_bridge::bridge& bridge, const caf::actor& inbox) {
  for (auto t : {msg_type::credit_batch, msg_type::command,
                 msg_type::registered, msg_type::shutdown, msg_type::time_pong,
                 msg_type::heartbeat})
    bridge.route(t, inbox);
}

} // namespace aiperf::remote
