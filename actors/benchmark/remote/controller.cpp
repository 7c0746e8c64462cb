#include <utility> // before Boost.Asio (g++ 12 + Boost 1.74)

#include "actors/benchmark/remote/controller.hpp"
#include "proto/benchmark_errors.hpp"

#include "actors/benchmark/api_service/routes.hpp"

#include "actors/benchmark/dataset/dataset_file.hpp"
#include "actors/benchmark/metrics/compute_metrics.hpp"
#include "runtime/log/log.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace aiperf::remote {

using namespace proto;
namespace wgm = worker_group_manager;
using zmq_bridge::channel;
using zmq_bridge::origin;

namespace {

constexpr auto check_interval = std::chrono::milliseconds{250};

// -- proxies ------------------------------------------------------------------

struct remote_worker_state {
  static inline const char* name = "remote_worker";
};

/// Stands for one worker of a pod: credits and cancels travel to the pod on
/// the credit channel, in order, addressed by the worker id.
caf::behavior remote_worker(caf::stateful_actor<remote_worker_state>*,
                            std::shared_ptr<zmq_bridge::bridge> bridge,
                            std::string peer, std::string worker_id) {
  return {
    [=](credit_batch& b) {
      if (auto sent = bridge->send_to(channel::credit, peer, b, worker_id); !sent)
        log::get("remote_group")->error("credits for {}: {}", worker_id, error_message(sent.error()));
    },
    [=](cancel_atom, std::vector<std::uint64_t>& ids) {
      command c;
      c.name = "cancel";
      for (auto id : ids)
        c.body += std::to_string(id) + ",";
      if (auto sent = bridge->send_to(channel::credit, peer, c, worker_id); !sent)
        log::get("remote_group")->error("cancel for {}: {}", worker_id, error_message(sent.error()));
    },
  };
}

struct remote_processor_state {
  static inline const char* name = "remote_processor";
};

/// Stands for one record processor of a pod; only finalize is meaningful
/// (workers are remote, so no record batches come here).
caf::behavior remote_processor(caf::stateful_actor<remote_processor_state>* self,
                               caf::actor group, std::uint32_t pod,
                               std::uint32_t index) {
  return {
    [=](request_record_batch&) {
      log::get("remote_group")
        ->warn("record batch for a remote processor dropped: records of "
               "remote workers are processed in their pod");
    },
    [=](finalize_atom) -> caf::result<std::string> {
      auto rp = self->make_response_promise<std::string>();
      self->request(group, benchmark::service_timeouts{}.finalize, finalize_pod_atom::value, pod,
                    index)
        .then([=](std::string& path) mutable { rp.deliver(std::move(path)); },
              [=](caf::error& err) mutable {
                rp.deliver(benchmark::name_timeout(std::move(err), "remote worker group",
                                                   "finalize of " + pod_name(pod),
                                                   benchmark::service_timeouts{}.finalize));
              });
      return rp;
    },
  };
}

// -- inbox --------------------------------------------------------------------

struct inbox_state {
  static inline const char* name = "controller_inbox";
};

/// Bridge deliveries of the data channels, handed to the local service.
caf::behavior controller_inbox(caf::stateful_actor<inbox_state>* self,
                               timing_manager_actor timing,
                               records_manager_actor records) {
  return {
    [=](origin&, credit_return_batch& b) { self->send(timing, std::move(b)); },
    [=](origin&, metric_record_batch& b) { self->send(records, std::move(b)); },
    [=](origin&, command& c) {
      // First tokens ride the credit-return channel as commands (no wire
      // type of their own: rare, and only with prefill concurrency).
      if (c.name == "first_token")
        self->send(timing, first_tok_atom::value, c.command_id);
    },
    [=](origin&, worker_connected&) {
      // The readiness probe's frame; registration is what counts.
    },
  };
}

// -- remote group ---------------------------------------------------------------

struct pod_state {
  std::string peer;
  /// Kubernetes: the pod watch's last word on the pod.
  bool k8s_ready = false;
  std::string k8s_name;
  bool lost = false;
  std::string lost_reason;
  /// The last heartbeat with the pod's clock estimate.
  std::optional<heartbeat> clock;
  caf::actor_clock::time_point last_seen;
  bool finalize_sent = false;
  std::uint64_t finalize_command = 0;
  /// Set once the pod acked (or was lost): the path per processor, or error.
  std::optional<caf::expected<std::vector<std::string>>> finalized;
  std::vector<std::pair<std::uint32_t, caf::typed_response_promise<std::string>>>
    finalize_waiters;
};

struct group_state {
  static inline const char* name = "remote_group";
  remote_group_config cfg;
  wgm::group_config group;
  std::set<std::string> missing;
  std::vector<pod_state> pods;
  std::vector<caf::typed_response_promise<wgm::group_handles>> waiters;
  bool ready = false;
  std::optional<caf::error> failed;
  wgm::group_handles handles;
  caf::actor_clock::time_point deadline;
  bool exported = false;
  std::uint64_t next_command = 1;
  std::uint64_t ticks = 0;
  /// Something /api/pods shows changed since the last publish.
  bool status_dirty = false;
  /// The export's `pods` section went to the records_manager.
  bool pods_reported = false;
};

using group_ptr = caf::stateful_actor<group_state>*;

std::optional<std::uint32_t> pod_of_service(group_ptr self,
                                            const std::string& id);

/// The pods as /api/pods and the export's `pods` section show them.
std::vector<api_service::pod_status> pod_statuses(group_ptr self) {
  auto& st = self->state;
  std::vector<api_service::pod_status> out(st.pods.size());
  for (std::uint32_t p = 0; p < st.pods.size(); ++p) {
    auto& pod = st.pods[p];
    auto& s = out[p];
    s.name = pod_name(p);
    s.registered = true;
    s.lost = pod.lost;
    s.lost_reason = pod.lost_reason;
    if (pod.clock) {
      s.clock_reported = true;
      s.clock_offset_ns = pod.clock->clock_offset_ns;
      s.clock_one_way_samples = pod.clock->clock_one_way_samples;
      s.clock_min_rtt_ns = pod.clock->clock_min_rtt_ns;
      s.clock_local = pod.clock->clock_local;
    }
  }
  for (auto& id : st.missing)
    if (auto p = pod_of_service(self, id))
      out[*p].registered = false;
  return out;
}

/// Tells the api_service what /api/pods serves.
void publish_status(group_ptr self) {
  auto& st = self->state;
  st.status_dirty = false;
  if (!st.cfg.api && !st.cfg.on_status)
    return;
  api_service::pods_status status;
  status.registration = st.failed  ? "failed"
                        : st.ready ? "complete"
                                   : "waiting";
  status.pods_expected = st.cfg.layout.pods;
  status.missing.assign(st.missing.begin(), st.missing.end());
  if (st.failed)
    status.error = error_message(*st.failed);
  status.pods = pod_statuses(self);
  if (st.cfg.on_status)
    st.cfg.on_status(status);
  if (st.cfg.api)
    self->send(st.cfg.api, api_service::pods_atom::value, std::move(status));
}

void answer_waiters(group_ptr self) {
  auto& st = self->state;
  for (auto& w : st.waiters) {
    if (st.failed)
      w.deliver(*st.failed);
    else
      w.deliver(st.handles);
  }
  st.waiters.clear();
}

void fail_registration(group_ptr self, std::string message) {
  auto& st = self->state;
  if (st.ready || st.failed)
    return;
  log::get("remote_group")->error("{}", message);
  st.failed = make_error(benchmark::errc::pod_failed, std::move(message));
  publish_status(self);
  answer_waiters(self);
}

void become_ready(group_ptr self) {
  auto& st = self->state;
  auto& l = st.cfg.layout;
  caf::actor me = caf::actor_cast<caf::actor>(self);
  for (std::uint32_t p = 0; p < l.pods; ++p) {
    for (std::uint32_t i = 0; i < l.workers_per_pod; ++i)
      st.handles.workers.push_back(caf::actor_cast<credit_sink_actor>(
        self->spawn(remote_worker, st.cfg.bridge, st.pods[p].peer,
                    worker_service_id(p, i))));
    for (std::uint32_t i = 0; i < l.processors_per_pod; ++i)
      st.handles.processors.push_back(caf::actor_cast<record_processor_actor>(
        self->spawn(remote_processor, me, p, i)));
  }
  for (auto& w : st.handles.workers)
    self->link_to(w);
  for (auto& pr : st.handles.processors)
    self->link_to(pr);
  st.ready = true;
  log::get("remote_group")
    ->info("{} pods registered ({} workers, {} record processors)", l.pods,
           st.handles.workers.size(), st.handles.processors.size());
  publish_status(self);
  answer_waiters(self);
}

/// The pods the pod watch has not reported Running and Ready ("" when the
/// group does not wait for readiness).
std::string pods_not_ready(group_ptr self) {
  auto& st = self->state;
  std::string names;
  if (!st.cfg.await_pods_ready)
    return names;
  for (std::uint32_t p = 0; p < st.pods.size(); ++p)
    if (!st.pods[p].k8s_ready)
      names += (names.empty() ? "" : ", ") + pod_name(p);
  return names;
}

/// The start gate: every expected service registered and, in Kubernetes,
/// every pod Running and Ready.
void maybe_become_ready(group_ptr self) {
  auto& st = self->state;
  if (st.ready || st.failed || !st.missing.empty())
    return;
  if (auto waiting = pods_not_ready(self); !waiting.empty()) {
    log::get("remote_group")
      ->info("every service registered; waiting until {} Running and Ready", waiting);
    return;
  }
  become_ready(self);
}

/// Before the run starts, a pod whose process went away must register
/// again: its services count as missing.
void forget_registration(group_ptr self, std::uint32_t p) {
  auto& st = self->state;
  for (auto& id : expected_services(st.cfg.layout))
    if (pod_of_service(self, id) == p)
      st.missing.insert(id);
  st.pods[p].peer.clear();
  st.pods[p].clock.reset();
  st.status_dirty = true;
}

void settle_finalize(group_ptr self, std::uint32_t p,
                     caf::expected<std::vector<std::string>> outcome) {
  auto& st = self->state;
  auto& pod = st.pods[p];
  if (pod.finalized)
    return;
  pod.finalized = std::move(outcome);
  // Once every pod is done, and before the last finalize answer lets the
  // system_controller ask for the export: the pods' final state.
  bool all = std::all_of(st.pods.begin(), st.pods.end(),
                         [](const pod_state& x) { return x.finalized.has_value(); });
  if (all && !st.pods_reported && st.group.records) {
    st.pods_reported = true;
    self->send(st.group.records, section_atom::value, std::string{"pods"},
               api_service::render_pod_list_json(pod_statuses(self)));
  }
  for (auto& [index, rp] : pod.finalize_waiters) {
    if (*pod.finalized)
      rp.deliver((**pod.finalized)[index]);
    else
      rp.deliver(pod.finalized->error());
  }
  pod.finalize_waiters.clear();
}

void lose_pod(group_ptr self, std::uint32_t p, const std::string& why) {
  auto& st = self->state;
  auto& pod = st.pods[p];
  if (pod.lost)
    return;
  pod.lost = true;
  pod.lost_reason = why;
  st.status_dirty = true;
  auto logger = log::get("remote_group");
  if (!st.ready) {
    fail_registration(self, "registration: " + pod_name(p)
                              + " was lost before it registered: " + why);
    return;
  }
  auto lost = st.cfg.monitor->add_lost_pod(pod_name(p) + " (" + why + ")");
  logger->warn("{} lost ({}): its in-flight requests become WorkerLost "
               "records",
               pod_name(p), why);
  auto& l = st.cfg.layout;
  for (std::uint32_t i = 0; i < l.workers_per_pod; ++i) {
    auto index = l.worker_index(p, i);
    auto wcfg = st.group.worker;
    wcfg.worker_index = index;
    wcfg.worker_id = worker_service_id(p, i);
    self->request(st.group.timing, benchmark::service_timeouts{}.control, lost_atom::value,
                  index)
      .then(
        [=](credit_batch& credits) {
          auto& st = self->state;
          metric_record_batch batch;
          for (auto& c : credits)
            batch.records.push_back(metrics::compute_metrics(
              wgm::worker_lost_record(c, wcfg, *st.group.data),
              st.group.processor.options, "controller"));
          if (!batch.records.empty())
            self->send(st.group.records, std::move(batch));
        },
        [=](caf::error& err) {
          log::get("remote_group")
            ->error("cannot reap {}: {}", wcfg.worker_id,
                    error_message(benchmark::name_timeout(
                      std::move(err), "timing_manager", "lost (the worker's credits)",
                      benchmark::service_timeouts{}.control)));
        });
  }
  // Its processors' records so far are in; nothing more will come.
  settle_finalize(self, p,
                  std::vector<std::string>(l.processors_per_pod, std::string{}));
  double pct = 100.0 * lost / l.pods;
  if (pct > st.cfg.abort_threshold_percent) {
    logger->error("{} of {} pods lost ({:.1f}%), above "
                  "AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT {:.1f}%: "
                  "cancelling the run",
                  lost, l.pods, pct, st.cfg.abort_threshold_percent);
    st.cfg.monitor->aborted = true;
    if (auto ctl = st.cfg.monitor->controller())
      caf::anon_send(ctl, cancel_atom::value);
  }
}

std::optional<std::uint32_t> pod_of_peer(group_ptr self,
                                         const std::string& peer) {
  auto& pods = self->state.pods;
  for (std::uint32_t p = 0; p < pods.size(); ++p)
    if (!peer.empty() && pods[p].peer == peer)
      return p;
  return std::nullopt;
}

/// "pod3/worker_1" -> 3; nullopt when the id names no pod of this run.
std::optional<std::uint32_t> pod_of_service(group_ptr self,
                                            const std::string& id) {
  auto name = id.substr(0, id.find('/'));
  for (std::uint32_t p = 0; p < self->state.pods.size(); ++p)
    if (name == pod_name(p))
      return p;
  return std::nullopt;
}

void export_dataset(group_ptr self) {
  auto& st = self->state;
  if (st.exported)
    return;
  st.exported = true;
  std::error_code ec;
  std::filesystem::create_directories(st.cfg.dataset_dir, ec);
  if (auto done = dataset::export_compressed(*st.group.data, st.cfg.dataset_dir);
      !done)
    fail_registration(self, "dataset export for the pods: "
                              + error_message(done.error()));
}

caf::behavior remote_group(group_ptr self, remote_group_config cfg,
                           wgm::group_config group) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  st.group = std::move(group);
  st.pods.resize(st.cfg.layout.pods);
  for (auto& id : expected_services(st.cfg.layout))
    st.missing.insert(id);
  st.deadline = self->clock().now() + st.cfg.registration_timeout;
  auto inbox = self->spawn(controller_inbox, st.group.timing, st.group.records);
  self->link_to(inbox);
  auto me = caf::actor_cast<caf::actor>(self);
  auto& br = *st.cfg.bridge;
  br.route(msg_type::credit_return_batch, inbox);
  br.route(msg_type::metric_record_batch, inbox);
  br.route(msg_type::command, inbox);
  br.route(msg_type::worker_connected, inbox);
  br.route(msg_type::register_service, me);
  br.route(msg_type::heartbeat, me);
  br.route(msg_type::ack, me);
  br.set_failure_sink(me);
  st.cfg.monitor->set_group(me);
  if (st.cfg.watch) {
    auto wcfg = *st.cfg.watch;
    wcfg.sink = me;
    auto watch = pod_watch::spawn_pod_watch(self->system(), std::move(wcfg));
    // Not linked: a watch that dies must not fail the run; without its
    // reports the Ready gate times out naming the pods.
    self->attach_functor([watch] { caf::anon_send_exit(watch, caf::exit_reason::user_shutdown); });
  }
  self->delayed_send(self, check_interval, check_atom::value);
  auto logger = log::get("remote_group");
  return {
    [=](caf::get_atom) -> caf::result<wgm::group_handles> {
      auto& st = self->state;
      export_dataset(self);
      publish_status(self);
      if (st.failed)
        return *st.failed;
      if (st.ready)
        return st.handles;
      auto rp = self->make_response_promise<wgm::group_handles>();
      st.waiters.push_back(rp);
      return rp;
    },
    [=](origin& o, register_service& r) {
      auto& st = self->state;
      auto p = pod_of_service(self, r.service_id);
      registered answer{r.service_id, true, {}};
      if (!p) {
        answer.accepted = false;
        answer.reason = "unknown service id '" + r.service_id
                        + "': this run expects pods pod0..pod"
                        + std::to_string(st.pods.size() - 1);
      } else if (st.pods[*p].lost) {
        answer.accepted = false;
        answer.reason = pod_name(*p) + " was declared lost";
        answer.final = true;
      } else if (!st.pods[*p].peer.empty() && st.pods[*p].peer != o.peer) {
        answer.accepted = false;
        answer.reason = pod_name(*p) + " is already registered by another "
                        "process: give every pod a distinct AIPERF_POD_INDEX";
      } else if (!st.missing.contains(r.service_id)) {
        // Services register once per process: this is a new process in
        // the pod (its container restarted in place).
        if (st.ready) {
          lose_pod(self, *p, "its process restarted (" + r.service_id + " registered again)");
          answer.accepted = false;
          answer.reason = pod_name(*p) + " was declared lost: a pod cannot rejoin a running "
                          "benchmark";
          answer.final = true;
        } else {
          logger->warn("{} registered again before the run started: its process restarted; "
                       "waiting for every service of it",
                       r.service_id);
          forget_registration(self, *p);
        }
      }
      if (!answer.accepted) {
        ++st.cfg.monitor->registrations_refused;
        logger->warn("registration of {} refused: {}", r.service_id,
                     answer.reason);
      } else {
        auto& pod = st.pods[*p];
        pod.peer = o.peer;
        pod.last_seen = self->clock().now();
        st.missing.erase(r.service_id);
        st.status_dirty = true;
        logger->debug("registered {} ({} on {}, pid {})", r.service_id,
                      r.service_type, r.node, r.pid);
      }
      (void) st.cfg.bridge->send_to(channel::control, o.peer, answer,
                                    "controller");
      maybe_become_ready(self);
      if (st.status_dirty)
        publish_status(self);
    },
    [=](origin& o, heartbeat& hb) {
      auto& st = self->state;
      if (auto p = pod_of_peer(self, o.peer)) {
        st.pods[*p].last_seen = self->clock().now();
        st.pods[*p].clock = std::move(hb);
        st.status_dirty = true;
      }
    },
    [=](origin& o, ack& a) {
      auto& st = self->state;
      auto p = pod_of_peer(self, o.peer);
      if (!p || st.pods[*p].finalize_command != a.command_id)
        return;
      auto n = st.cfg.layout.processors_per_pod;
      if (!a.ok)
        return settle_finalize(
          self, *p,
          make_error(benchmark::errc::pod_failed,
                     pod_name(*p) + " failed to finalize: " + a.error));
      if (!st.group.worker.export_raw)
        return settle_finalize(self, *p, std::vector<std::string>(n));
      auto pod = *p;
      self->request(st.cfg.api, benchmark::service_timeouts{}.control, caf::get_atom::value,
                    api_service::raw_atom::value)
        .then(
          [=](std::vector<api_service::raw_part>& parts) {
            for (auto& part : parts) {
              if (part.pod != pod_name(pod))
                continue;
              std::vector<std::string> paths(n);
              paths[0] = part.path;
              return settle_finalize(self, pod, std::move(paths));
            }
            settle_finalize(self, pod,
                            make_error(benchmark::errc::export_failed,
                                       pod_name(pod)
                                              + " acked FINALIZE but the API "
                                                "holds no RAW part of it"));
          },
          [=](caf::error& err) {
            settle_finalize(self, pod,
                            benchmark::name_timeout(std::move(err), "api_service",
                                                    "get (RAW parts)",
                                                    benchmark::service_timeouts{}.control));
          });
    },
    [=](finalize_pod_atom, std::uint32_t p,
        std::uint32_t index) -> caf::result<std::string> {
      auto& st = self->state;
      auto& pod = st.pods.at(p);
      if (pod.finalized) {
        if (*pod.finalized)
          return (**pod.finalized)[index];
        return pod.finalized->error();
      }
      auto rp = self->make_response_promise<std::string>();
      pod.finalize_waiters.emplace_back(index, rp);
      if (!pod.finalize_sent) {
        pod.finalize_sent = true;
        pod.finalize_command = st.next_command++;
        command c{pod.finalize_command, "finalize", {}};
        if (auto sent = st.cfg.bridge->send_to(channel::control, pod.peer, c,
                                              "controller"); !sent)
          settle_finalize(self, p,
                          make_error(benchmark::errc::pod_failed,
                                     "FINALIZE to " + pod_name(p) + ": "
                                            + error_message(sent.error())));
      }
      return rp;
    },
    [=](pod_lost_atom, std::string& pod, std::string& why) {
      for (std::uint32_t p = 0; p < self->state.pods.size(); ++p)
        if (pod_name(p) == pod)
          lose_pod(self, p, why);
    },
    [=](pod_watch::pod_report_atom, pod_watch::pod_report& r) {
      auto& st = self->state;
      auto p = pod_of_service(self, r.pod);
      if (!p)
        return; // a worker pod beyond this run's layout: not ours to judge
      auto& pod = st.pods[*p];
      pod.k8s_name = r.k8s_name;
      pod.k8s_ready = r.ready;
      if (r.gone && !pod.lost) {
        if (st.ready)
          lose_pod(self, *p, "pod " + r.k8s_name + " " + r.reason);
        else
          // Its next process registers again, which resets the pod's
          // registration (in whichever order the two news arrive).
          logger->warn("{} (pod {}) {} before the run started", pod_name(*p), r.k8s_name,
                       r.reason);
      }
      maybe_become_ready(self);
      if (st.status_dirty)
        publish_status(self);
    },
    [=](zmq_bridge::delivery_failure& f) {
      if (auto p = pod_of_peer(self, f.peer))
        lose_pod(self, *p,
                 f.channel == channel::control
                   ? "its control connection dropped (" + f.message + ")"
                   : std::string{"send on "} + zmq_bridge::to_string(f.channel)
                       + " failed: " + f.message);
    },
    [=](zmq_bridge::frame_rejected& f) {
      logger->warn("rejected a frame on {} from '{}': {}",
                   zmq_bridge::to_string(f.channel), f.peer, f.message);
    },
    [=](check_atom) {
      auto& st = self->state;
      auto now = self->clock().now();
      if (!st.ready && !st.failed && now >= st.deadline) {
        std::string names;
        std::size_t shown = 0;
        for (auto& id : st.missing) {
          if (shown++ == 8) {
            names += ", ... (" + std::to_string(st.missing.size()) + " in all)";
            break;
          }
          names += (names.empty() ? "" : ", ") + id;
        }
        auto waiting = pods_not_ready(self);
        fail_registration(
          self, names.empty() && !waiting.empty()
                  ? "registration timed out after "
                      + std::to_string(st.cfg.registration_timeout.count())
                      + " ms: every service registered, but not Running and Ready: " + waiting
                      + " (kubectl describe pod shows why)"
                  : "registration timed out after "
                      + std::to_string(st.cfg.registration_timeout.count())
                      + " ms; missing: " + names
                      + " (did those worker processes start and reach the "
                        "controller?)");
      }
      // Pods without a parent process (Kubernetes) learn that we are gone
      // from the silence. While the run goes on, each pod's heartbeat is a
      // targeted send: a pod whose control connection dropped fails it
      // (delivery_failure) within one tick.
      ++st.ticks;
      if (st.ready) {
        for (auto& pod : st.pods)
          if (!pod.lost && !pod.peer.empty())
            (void) st.cfg.bridge->send_to(channel::control, pod.peer,
                                          heartbeat{"controller", "running", 0}, "controller");
      } else if (st.ticks % 4 == 0) {
        (void) st.cfg.bridge->broadcast(channel::control,
                                        heartbeat{"controller", "running", 0},
                                        "controller");
      }
      if (st.ready) {
        for (std::uint32_t p = 0; p < st.pods.size(); ++p) {
          auto& pod = st.pods[p];
          if (!pod.lost && now - pod.last_seen > st.cfg.heartbeat_timeout)
            lose_pod(self, p,
                     "no heartbeat for "
                       + std::to_string(st.cfg.heartbeat_timeout.count())
                       + " ms");
        }
      }
      if (st.status_dirty)
        publish_status(self);
      self->delayed_send(self, check_interval, check_atom::value);
    },
  };
}

} // namespace

system_controller::group_factory
make_remote_group_factory(remote_group_config cfg) {
  return [cfg](caf::actor_system& sys, wgm::group_config group) {
    return caf::actor_cast<wgm::worker_group_manager_actor>(
      sys.spawn(remote_group, cfg, std::move(group)));
  };
}

} // namespace aiperf::remote
