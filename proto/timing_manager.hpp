// Typed interfaces of the credit loop: timing_manager <-> workers.
#pragma once

#include "proto/atoms.hpp"
#include "proto/credits.hpp"
#include "proto/timing.hpp"

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <vector>

namespace aiperf::proto {

using configure_atom = caf::atom_constant<caf::atom("configure")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using cancel_atom = caf::atom_constant<caf::atom("cancel")>;
using first_tok_atom = caf::atom_constant<caf::atom("first_tok")>;
using lost_atom = caf::atom_constant<caf::atom("lost")>;
using progress_atom = caf::atom_constant<caf::atom("progress")>;

/// The credit side of a worker (what the timing_manager may send it).
/// - `(credit_batch)`: requests to send; each carries its due time. No reply;
///   every credit comes back exactly once in a `credit_return_batch`.
/// - `(cancel_atom, std::vector<uint64_t> ids)`: cancel these credits (empty
///   = all in flight); they return with outcome `cancelled` (code 499).
using credit_sink_actor = caf::typed_actor<
  caf::reacts_to<credit_batch>,
  caf::reacts_to<cancel_atom, std::vector<std::uint64_t>>>;

/// Live counters of the running phase.
struct timing_progress {
  proto::phase phase = phase::profiling;
  std::uint64_t sent = 0;
  std::uint64_t returned = 0;
  std::uint64_t in_flight = 0;
  std::uint64_t target = 0; // 0 = duration-bounded
  std::int64_t phase_start_ns = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, timing_progress& x) {
  return f(caf::meta::type_name("aiperf::proto::timing_progress"), x.phase,
           x.sent, x.returned, x.in_flight, x.target, x.phase_start_ns);
}

/// timing_manager protocol:
/// - `(configure_atom, timing_config, std::vector<credit_sink_actor>)` from
///   the system_controller: the strategy and the workers (index = worker
///   index in returns). Replies `ok_atom`, or an error naming the setting
///   (`benchmark::errc::invalid_config`; `bad_request` while running).
///   Requesters wait `service_timeouts::control`.
/// - `(start_atom)`: runs the warmup phase (if any) then the profiling
///   phase; the reply arrives when every credit of both phases is back:
///   one `phase_stats` per phase that ran (`bad_request` before configure).
///   The controller waits `service_timeouts::run` (the run's own bound plus
///   a margin); past it the run fails naming the timing_manager.
/// - `(credit_return_batch)` from workers: credits coming back. No reply.
/// - `(first_tok_atom, uint64_t credit_id)` from workers: first token seen
///   (releases a prefill slot). No reply.
/// - `(cancel_atom)` from the controller (SIGINT, failure threshold): stop
///   issuing, cancel everything in flight; `start` then replies with
///   `was_cancelled` set.
/// - `(lost_atom, uint32_t worker_index)` from the worker_group_manager: the
///   worker died; its in-flight credits count as lost, its sessions end,
///   and it gets no more credits. Replies with the lost credits, so the
///   caller can turn them into `WorkerLost` error records (waiting
///   `service_timeouts::control`; past it the reaping is logged as failed).
/// - `(progress_atom)`: replies the live counters.
using timing_manager_actor = caf::typed_actor<
  caf::replies_to<configure_atom, timing_config,
                  std::vector<credit_sink_actor>>::with<caf::ok_atom>,
  caf::replies_to<start_atom>::with<std::vector<phase_stats>>,
  caf::reacts_to<credit_return_batch>,
  caf::reacts_to<first_tok_atom, std::uint64_t>,
  caf::reacts_to<cancel_atom>,
  caf::replies_to<lost_atom, std::uint32_t>::with<credit_batch>,
  caf::replies_to<progress_atom>::with<timing_progress>>;

} // namespace aiperf::proto
