// The worker service: per credit, build the payload, send it at its due
// time on an I/O thread, stamp every SSE event at the read that delivered
// it, and hand a raw record to a record processor.
#pragma once

#include "actors/benchmark/dataset/dataset.hpp"
#include "proto/worker.hpp"

#include <caf/fwd.hpp>

#include <memory>

namespace boost::asio {
class io_context;
} // namespace boost::asio

namespace aiperf::http {
class client;
} // namespace aiperf::http

namespace aiperf::worker {

class backoff_registry;

/// Worker protocol: `proto::credit_sink_actor` (credits and cancels from the
/// timing_manager). For every credit, exactly one `credit_return` goes back
/// to the timing_manager (in batches) and exactly one `request_record`
/// goes to the record processor (in batches); with prefill concurrency the
/// first content event also sends `(first_tok_atom, credit_id)`.
/// I/O threads never touch the actor: they queue finished requests and wake
/// the actor with one message per batch (an actor's state belongs to the
/// thread that runs it; a message can be sent to it from any thread).
/// When the worker exits, requests still in flight are cancelled.
struct worker_deps {
  /// The I/O thread this worker's requests run on, and its HTTP client
  /// (both must outlive the worker and its requests).
  boost::asio::io_context* io = nullptr;
  http::client* client = nullptr;
  std::shared_ptr<const dataset::dataset> data;
  proto::timing_manager_actor timing;
  proto::record_sink_actor records;
  /// The connection backoff per destination, shared with other workers
  /// (null: the one of this process, backoff_registry::process()).
  std::shared_ptr<backoff_registry> backoffs;
};

[[nodiscard]] proto::credit_sink_actor
spawn_worker(caf::actor_system& sys, proto::worker_config cfg,
             worker_deps deps);

/// Spawns the worker linked to `parent` (a death pact: see node_supervisor).
[[nodiscard]] proto::credit_sink_actor
spawn_worker_linked(caf::local_actor* parent, proto::worker_config cfg,
                    worker_deps deps);

/// Converts CLOCK_MONOTONIC ns to epoch ns (offset sampled once per process).
[[nodiscard]] std::int64_t monotonic_to_epoch(std::int64_t mono_ns) noexcept;

} // namespace aiperf::worker
