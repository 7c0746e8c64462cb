// The worker_group_manager service: one per process (one per pod later).
// Owns its workers and record processors; reaps dead workers.
#pragma once

#include "actors/benchmark/dataset/dataset.hpp"
#include "actors/benchmark/record_processor/record_processor.hpp"
#include "proto/records_path.hpp"
#include "proto/timing_manager.hpp"
#include "proto/worker.hpp"

#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <functional>
#include <memory>
#include <vector>

namespace boost::asio {
class io_context;
} // namespace boost::asio

namespace aiperf::http {
class client;
} // namespace aiperf::http

namespace aiperf::worker_group_manager {

/// One I/O thread: its io_context and the HTTP client bound to it.
struct io_slot {
  boost::asio::io_context* io = nullptr;
  http::client* client = nullptr;
};

struct group_config {
  /// Template for every worker; index and id are filled in per worker.
  proto::worker_config worker;
  std::uint32_t num_workers = 1;
  /// Index of this group's first worker in the whole run: credit returns
  /// name workers by run-wide index (a pod's group starts past the ones
  /// before it). 0 in a single-process run.
  std::uint32_t worker_index_offset = 0;
  /// Prepended to worker and processor ids ("pod1/"), so every record names
  /// the process it came from; empty in a single-process run.
  std::string id_prefix;
  /// Template for every processor; the id and raw part path are filled in.
  record_processor::processor_config processor;
  std::uint32_t num_processors = 1;
  /// `<dir>/profile_export_raw.part<N>.jsonl` at export level raw.
  std::string raw_part_prefix;
  std::vector<io_slot> io;
  std::shared_ptr<const dataset::dataset> data;
  /// Optional: what the workers send their records to instead of processor
  /// i directly (a pod puts a clock-offset stamper in between). The
  /// returned actor is linked to the manager.
  std::function<proto::record_sink_actor(caf::actor_system&,
                                         proto::record_processor_actor)>
    wrap_record_sink;
  proto::timing_manager_actor timing;
  proto::records_manager_actor records;
};

/// The handles of a ready group (index = worker / processor index).
struct group_handles {
  std::vector<proto::credit_sink_actor> workers;
  std::vector<proto::record_processor_actor> processors;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, group_handles& x) {
  return f(caf::meta::type_name("aiperf::worker_group_manager::group_handles"),
           x.workers, x.processors);
}

/// worker_group_manager protocol:
/// - `(caf::get_atom)`: replies the group's handles once every worker and
///   processor is up (they are spawned when the manager starts).
/// A worker that dies abnormally is reaped: the manager asks the
/// timing_manager for its in-flight credits (`lost_atom`), turns each into a
/// `WorkerLost` error record (sent to a record processor, so counts stay
/// exact) and the run goes on. A record processor that dies takes the
/// manager down with it (its records cannot be recovered).
using worker_group_manager_actor = caf::typed_actor<
  caf::replies_to<caf::get_atom>::with<group_handles>>;

[[nodiscard]] worker_group_manager_actor
spawn_worker_group_manager(caf::actor_system& sys, group_config cfg);

/// The error record of a credit whose worker died with it in flight.
[[nodiscard]] proto::request_record
worker_lost_record(const proto::credit& c, const proto::worker_config& w,
                   const dataset::dataset& data);

} // namespace aiperf::worker_group_manager
