#include "actors/benchmark/dataset_manager/dataset_manager.hpp"

#include "actors/benchmark/dataset/sampler.hpp"
#include "runtime/log/log.hpp"

#include <caf/all.hpp>

namespace aiperf::dataset_manager {

namespace {

std::vector<proto::session_plan> plans_of(const dataset::dataset& data) {
  std::vector<proto::session_plan> out;
  out.reserve(data.conversations.size());
  for (auto& conv : data.conversations) {
    proto::session_plan p;
    p.num_turns = static_cast<std::uint32_t>(conv.turns.size());
    p.turn_delay_ns.reserve(conv.turns.size());
    for (auto& t : conv.turns)
      p.turn_delay_ns.push_back(t.delay_ms > 0 ? t.delay_ms * 1'000'000 : 0);
    out.push_back(std::move(p));
  }
  return out;
}

} // namespace

caf::expected<dataset_ready> build(const dataset_config& cfg) {
  dataset::dataset data;
  auto stopped = [&cfg] { return cfg.stop && cfg.stop->load(); };
  auto cancelled = [] {
    return make_error(
        dataset::errc::cancelled,
        "stopped while building the dataset; nothing was exported");
  };
  if (!cfg.input_file.empty()) {
    auto file = cfg.file;
    file.stop = cfg.stop.get();
    auto loaded = dataset::load_input_file(cfg.input_file, cfg.file_type, file);
    if (!loaded) {
      // Every bad line, not only the first few the loader's message lists.
      const auto* errors
        = error_payload<std::vector<dataset::load_error>>(loaded.error());
      if (errors == nullptr)
        return std::move(loaded.error());
      std::string msg = "--input-file " + cfg.input_file + ":";
      for (auto& e : *errors)
        msg += "\n  " + e.to_string();
      return make_error(error_code(loaded.error(), dataset::errc::bad_input),
                        std::move(msg), *errors);
    }
    data = std::move(*loaded);
  } else {
    if (auto valid = dataset::validate(cfg.synthetic); !valid)
      return std::move(valid.error());
    auto synthetic = cfg.synthetic;
    synthetic.stop = cfg.stop.get();
    data = dataset::generate_synthetic(synthetic);
    if (stopped())
      return cancelled();
    // One seeded shuffled pass: sessions take conversations in this order.
    // The first pass is a permutation: each conversation is moved once.
    dataset::dataset_sampler sampler{dataset::sampling_strategy::shuffle,
                                     data.conversations.size(),
                                     cfg.sampling_seed};
    dataset::dataset shuffled;
    shuffled.conversations.reserve(data.conversations.size());
    for (std::size_t i = 0; i < data.conversations.size(); ++i)
      shuffled.conversations.push_back(
          std::move(data.conversations[sampler.next()]));
    data = std::move(shuffled);
  }
  if (stopped())
    return cancelled();
  if (data.conversations.empty())
    return make_error(dataset::errc::empty,
                      "the dataset is empty: give --input-file a file with "
                      "at least one request, or a positive "
                      "--num-dataset-entries");
  std::vector<proto::session_plan> sessions;
  if (cfg.fixed_schedule) {
    // Sessions in replay order, each with its offset from the start.
    auto schedule = timing::make_fixed_schedule(data, 0, cfg.schedule);
    if (!schedule)
      return std::move(schedule.error());
    auto& fixed = *schedule;
    dataset::dataset ordered;
    ordered.has_timestamps = true;
    // Each conversation is in the schedule at most once: moved, not copied.
    ordered.conversations.reserve(fixed.first_turns.size());
    for (auto& first : fixed.first_turns)
      ordered.conversations.push_back(
          std::move(data.conversations[first.conversation]));
    sessions = plans_of(ordered);
    for (std::size_t i = 0; i < fixed.first_turns.size(); ++i)
      sessions[i].start_offset_ns = fixed.first_turns[i].due_ns;
    data = std::move(ordered);
  } else {
    sessions = plans_of(data);
  }
  if (auto valid = dataset::validate(cfg.models); !valid)
    return std::move(valid.error());
  dataset::assign_models(data, cfg.models);
  if (!cfg.inputs_json_path.empty())
    if (auto written = dataset::write_inputs_json(
            cfg.inputs_json_path, cfg.payload, data, cfg.stop.get());
        !written)
      return std::move(written.error());
  return dataset_ready{
    std::make_shared<const dataset::dataset>(std::move(data)),
    std::move(sessions)};
}

namespace {

dataset_manager_actor::behavior_type
dataset_manager_impl(dataset_manager_actor::pointer, dataset_config cfg) {
  return {
    [=](proto::configure_atom) -> caf::result<dataset_ready> {
      auto logger = log::get("dataset_manager");
      auto built = build(cfg);
      if (!built) {
        // The dataset::errc or timing::errc of the input as it is: the
        // controller prints its message and exits 2.
        logger->error("{}", error_message(built.error()));
        return std::move(built.error());
      }
      auto& ready = *built;
      logger->debug("dataset ready: {} conversations",
                    ready.data->conversations.size());
      return std::move(ready);
    },
  };
}

} // namespace

dataset_manager_actor spawn_dataset_manager(caf::actor_system& sys,
                                            dataset_config cfg) {
  return sys.spawn(dataset_manager_impl, std::move(cfg));
}

} // namespace aiperf::dataset_manager
