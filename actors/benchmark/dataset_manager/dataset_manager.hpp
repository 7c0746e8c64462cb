// The dataset_manager service: builds the run's dataset once (synthetic or
// from --input-file), writes inputs.json, and derives the session plans the
// timing_manager schedules.
#pragma once

#include "actors/benchmark/dataset/dataset.hpp"
#include "actors/benchmark/dataset/input_file.hpp"
#include "actors/benchmark/dataset/models.hpp"
#include "actors/benchmark/dataset/payload.hpp"
#include "actors/benchmark/dataset/synthetic.hpp"
#include "actors/benchmark/timing/fixed_schedule.hpp"
#include "proto/timing_manager.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace aiperf::dataset_manager {

struct dataset_config {
  /// Synthetic prompts, unless `input_file` is set.
  dataset::synthetic_options synthetic;
  std::string input_file;
  dataset::input_file_type file_type = dataset::input_file_type::single_turn;
  dataset::file_options file;
  /// Replay first turns at their trace timestamps.
  bool fixed_schedule = false;
  timing::fixed_schedule_options schedule;
  /// Synthetic datasets are visited in a seeded shuffled order (AIPerf's
  /// default sampling); traces keep file order.
  std::uint64_t sampling_seed = 0;
  dataset::payload_options payload;
  /// Per-turn models (several --model names), assigned over the final
  /// session order, so round_robin alternates in inputs.json and in the
  /// order sessions are started.
  dataset::model_options models;
  /// Where inputs.json goes ("" = not written).
  std::string inputs_json_path;
  /// Set by SIGINT/SIGTERM: generation stops and build() fails with
  /// dataset::errc::cancelled (the controller's cancel waits behind it).
  std::shared_ptr<std::atomic<bool>> stop;
};

/// The built dataset (immutable, shared read-only with the workers of this
/// process) and one plan per conversation, in session order.
struct dataset_ready {
  std::shared_ptr<const dataset::dataset> data;
  std::vector<proto::session_plan> sessions;
};

/// Builds everything `dataset_ready` holds. Fails with a dataset::errc
/// (bad_input: the message lists every bad line of --input-file, the
/// std::vector<dataset::load_error> is its payload) or a timing::errc (the
/// fixed schedule); messages name the file, line and field (bad input is
/// exit code 2 for the caller).
[[nodiscard]] caf::expected<dataset_ready> build(const dataset_config& cfg);

} // namespace aiperf::dataset_manager

// Local only: a pointer to immutable data never crosses a process (the
// distributed runtime ships the dataset as files).
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(aiperf::dataset_manager::dataset_ready)

namespace aiperf::dataset_manager {

/// dataset_manager protocol:
/// - `(proto::configure_atom)` from the system_controller: builds the
///   dataset and writes inputs.json; replies `dataset_ready`, or the
///   dataset::errc / timing::errc of the bad input (its message names the
///   flag, file or line). The controller waits `service_timeouts::dataset`;
///   past it the run fails naming this service.
using dataset_manager_actor = caf::typed_actor<
  caf::replies_to<proto::configure_atom>::with<dataset_ready>>;

[[nodiscard]] dataset_manager_actor
spawn_dataset_manager(caf::actor_system& sys, dataset_config cfg);

} // namespace aiperf::dataset_manager
