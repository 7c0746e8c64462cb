// The system_controller service: drives one run through its lifecycle
//   register -> configure -> start -> credits complete -> process records
//   -> export -> shutdown.
#pragma once

#include "actors/benchmark/system_controller/run_plan.hpp"
#include "actors/benchmark/worker_group_manager/worker_group_manager.hpp"
#include "proto/atoms.hpp"
#include "proto/exit_codes.hpp"
#include "proto/timing_manager.hpp"

#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace aiperf::system_controller {

using proto::exit_code;
using enum proto::exit_code;

struct run_result {
  int exit_code = exit_ok;
  /// Why the run failed ("" when it did not).
  std::string message;
  /// Console table, written files and warnings of the export.
  std::string console;
  std::vector<std::string> files;
  std::vector<std::string> warnings;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, run_result& x) {
  return f(caf::meta::type_name("aiperf::system_controller::run_result"),
           x.exit_code, x.message, x.console, x.files, x.warnings);
}

/// system_controller protocol:
/// - `(proto::start_atom)` from main: runs the whole benchmark and replies
///   `run_result` once the exports are written (or the run failed). Main
///   waits at most `run_plan::timeouts.whole_run()`.
/// - `(proto::cancel_atom)` from main (SIGINT/SIGTERM): stops sending
///   credits, cancels in-flight requests (code 499), still writes every
///   export (`was_cancelled: true`); the reply then carries exit code 130
///   (main turns it into 143 for SIGTERM).
/// A run whose failed share crosses `--failed-request-threshold` (the
/// records_manager's failed_threshold_atom) stops like a cancel and exits 4
/// with failed_threshold_message.
/// Every service it spawns is linked to it: a service that fails ends the
/// run with exit code 1 and the service's error. Each request to a service
/// waits at most its `run_plan::timeouts` entry (dataset, registration,
/// control, run, finalize, exports); a service that does not answer in time
/// ends the run with exit code 1 and `benchmark::errc::silent_service`
/// naming it ("timing_manager did not answer configure within 30 s").
using system_controller_actor = caf::typed_actor<
  caf::replies_to<proto::start_atom>::with<run_result>,
  caf::reacts_to<proto::cancel_atom>>;

/// Creates the run's worker group: by default the local
/// worker_group_manager; the distributed runtime passes a factory whose
/// group stands for the worker processes (same protocol).
using group_factory
  = std::function<worker_group_manager::worker_group_manager_actor(
    caf::actor_system&, worker_group_manager::group_config)>;

/// The message of a run stopped by `--failed-request-threshold`
/// (`threshold` a ratio): "aborted: 12 of the first 14 profiling requests
/// failed (85.71%), above --failed-request-threshold 0.5 (50%); check the
/// server's logs".
[[nodiscard]] std::string failed_threshold_message(std::uint64_t failed,
                                                   std::uint64_t records,
                                                   double threshold);

[[nodiscard]] system_controller_actor
spawn_system_controller(caf::actor_system& sys, run_plan plan,
                        std::vector<worker_group_manager::io_slot> io,
                        group_factory make_group = {});

} // namespace aiperf::system_controller
