#include "actors/benchmark/worker_group_manager/worker_group_manager.hpp"
#include "proto/benchmark_errors.hpp"

#include "actors/benchmark/worker/worker.hpp"
#include "runtime/log/log.hpp"

#include <caf/all.hpp>

namespace aiperf::worker_group_manager {

using namespace proto;

request_record worker_lost_record(const credit& c, const worker_config& w,
                                  const dataset::dataset& data) {
  request_record rec;
  rec.credit_id = c.id;
  rec.session_num = c.session_num;
  rec.turn_index = c.turn_index;
  rec.phase = c.phase == phase::warmup ? benchmark_phase::warmup
                                       : benchmark_phase::profiling;
  rec.worker_id = w.worker_id;
  rec.x_request_id = w.run_id + "-r" + std::to_string(c.id);
  rec.x_correlation_id = w.run_id + (c.phase == phase::warmup ? "-w" : "-s")
                         + std::to_string(c.session_num);
  rec.credit_issued_ns = worker::monotonic_to_epoch(c.issued_at_ns);
  rec.intended_send_ns = c.due_ns;
  rec.streaming = w.streaming;
  if (c.conversation < data.conversations.size()) {
    const auto& conv = data.conversations[c.conversation];
    rec.conversation_id = conv.session_id;
    if (c.turn_index < conv.turns.size())
      rec.input_tokens = conv.turns[c.turn_index].input_tokens;
  }
  rec.has_error = true;
  rec.error = {0, "WorkerLost",
               "worker " + w.worker_id + " died with this request in flight"};
  return rec;
}

namespace {

struct group_state {
  static inline const char* name = "worker_group_manager";
  group_config cfg;
  group_handles handles;
  std::vector<worker_config> worker_configs;
};

worker_group_manager_actor::behavior_type
group_impl(worker_group_manager_actor::stateful_pointer<group_state> self,
           group_config cfg) {
  auto logger = log::get("worker_group_manager");
  auto& st = self->state;
  st.cfg = std::move(cfg);
  for (std::uint32_t i = 0; i < st.cfg.num_processors; ++i) {
    auto pcfg = st.cfg.processor;
    pcfg.processor_id = st.cfg.id_prefix + "record_processor_" + std::to_string(i);
    if (!st.cfg.raw_part_prefix.empty())
      pcfg.raw_part_path = st.cfg.raw_part_prefix + std::to_string(i)
                           + ".jsonl";
    auto proc = record_processor::spawn_record_processor(
      self->system(), std::move(pcfg), st.cfg.records);
    self->link_to(proc);
    st.handles.processors.push_back(proc);
  }
  std::vector<record_sink_actor> sinks;
  for (auto& proc : st.handles.processors) {
    if (!st.cfg.wrap_record_sink) {
      sinks.push_back(caf::actor_cast<record_sink_actor>(proc));
      continue;
    }
    sinks.push_back(st.cfg.wrap_record_sink(self->system(), proc));
    self->link_to(sinks.back());
  }
  for (std::uint32_t i = 0; i < st.cfg.num_workers; ++i) {
    auto wcfg = st.cfg.worker;
    wcfg.worker_index = st.cfg.worker_index_offset + i;
    wcfg.worker_id = st.cfg.id_prefix + "worker_" + std::to_string(i);
    auto& slot = st.cfg.io[i % st.cfg.io.size()];
    worker::worker_deps deps{
      slot.io, slot.client, st.cfg.data, st.cfg.timing,
      sinks[i % sinks.size()]};
    auto w = worker::spawn_worker(self->system(), wcfg, std::move(deps));
    self->monitor(w);
    st.worker_configs.push_back(std::move(wcfg));
    st.handles.workers.push_back(std::move(w));
  }
  self->set_down_handler([=](caf::down_msg& msg) {
    auto& st = self->state;
    for (std::uint32_t i = 0; i < st.handles.workers.size(); ++i) {
      if (st.handles.workers[i].address() != msg.source)
        continue;
      if (!msg.reason || msg.reason == caf::exit_reason::user_shutdown)
        return;
      logger->warn("{} died ({}); reaping its requests",
                   st.worker_configs[i].worker_id,
                   self->system().render(msg.reason));
      self
        ->request(st.cfg.timing, benchmark::service_timeouts{}.control, lost_atom::value,
                  st.worker_configs[i].worker_index)
        .then(
          [=](credit_batch& lost) {
            auto& st = self->state;
            request_record_batch batch;
            for (auto& c : lost)
              batch.records.push_back(
                worker_lost_record(c, st.worker_configs[i], *st.cfg.data));
            if (!batch.records.empty())
              self->send(st.handles.processors.front(), std::move(batch));
          },
          [=](caf::error& err) {
            logger->error("cannot reap worker {}: {}", i,
                          error_message(benchmark::name_timeout(
                            std::move(err), "timing_manager", "lost (the worker's credits)",
                            benchmark::service_timeouts{}.control)));
          });
      return;
    }
  });
  return {
    [=](caf::get_atom) { return self->state.handles; },
  };
}

} // namespace

worker_group_manager_actor spawn_worker_group_manager(caf::actor_system& sys,
                                                      group_config cfg) {
  return sys.spawn(group_impl, std::move(cfg));
}

} // namespace aiperf::worker_group_manager
