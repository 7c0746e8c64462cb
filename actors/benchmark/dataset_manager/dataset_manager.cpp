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

std::variant<dataset_ready, std::string> build(const dataset_config& cfg) {
  dataset::dataset data;
  if (!cfg.input_file.empty()) {
    auto loaded
      = dataset::load_input_file(cfg.input_file, cfg.file_type, cfg.file);
    if (!loaded.data) {
      std::string msg = "--input-file " + cfg.input_file + ":";
      for (auto& e : loaded.errors)
        msg += "\n  " + e.to_string();
      return msg;
    }
    data = std::move(*loaded.data);
  } else {
    if (auto err = dataset::validate(cfg.synthetic))
      return *err;
    data = dataset::generate_synthetic(cfg.synthetic);
    // One seeded shuffled pass: sessions take conversations in this order.
    dataset::dataset_sampler sampler{dataset::sampling_strategy::shuffle,
                                     data.conversations.size(),
                                     cfg.sampling_seed};
    dataset::dataset shuffled;
    for (std::size_t i = 0; i < data.conversations.size(); ++i)
      shuffled.conversations.push_back(data.conversations[sampler.next()]);
    data = std::move(shuffled);
  }
  if (data.conversations.empty())
    return std::string{"the dataset is empty: give --input-file a file with "
                       "at least one request, or a positive "
                       "--num-dataset-entries"};
  std::vector<proto::session_plan> sessions;
  if (cfg.fixed_schedule) {
    // Sessions in replay order, each with its offset from the start.
    auto schedule = timing::make_fixed_schedule(data, 0, cfg.schedule);
    if (auto* err = std::get_if<std::string>(&schedule))
      return *err;
    auto& fixed = std::get<timing::fixed_schedule>(schedule);
    dataset::dataset ordered;
    ordered.has_timestamps = true;
    for (auto& first : fixed.first_turns)
      ordered.conversations.push_back(data.conversations[first.conversation]);
    sessions = plans_of(ordered);
    for (std::size_t i = 0; i < fixed.first_turns.size(); ++i)
      sessions[i].start_offset_ns = fixed.first_turns[i].due_ns;
    data = std::move(ordered);
  } else {
    sessions = plans_of(data);
  }
  if (auto err = dataset::validate(cfg.models))
    return *err;
  dataset::assign_models(data, cfg.models);
  if (!cfg.inputs_json_path.empty())
    if (auto err = dataset::write_inputs_json(cfg.inputs_json_path,
                                              cfg.payload, data))
      return *err;
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
      if (auto* err = std::get_if<std::string>(&built)) {
        logger->error("{}", *err);
        return caf::make_error(caf::sec::invalid_argument, *err);
      }
      auto& ready = std::get<dataset_ready>(built);
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
