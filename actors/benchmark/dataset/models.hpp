// Per-turn model selection: AIPerf's `--model-selection-strategy` with
// several `--model` names. Like AIPerf's dataset composer, each turn gets its
// model once, when the dataset is built, so inputs.json, the dataset files
// and the bodies sent all agree.
#pragma once

#include "actors/benchmark/dataset/dataset.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::dataset {

/// `--model-selection-strategy`.
enum class model_selection { round_robin, random };

/// Parses "round_robin" | "random".
[[nodiscard]] std::optional<model_selection>
parse_model_selection(std::string_view name);

/// What assign_models needs; the caller maps its config here.
struct model_options {
  /// `--model` names, in command-line order.
  std::vector<std::string> names;
  model_selection strategy = model_selection::round_robin;
  /// `--random-seed`; drives `random` only, through a stream of its own, so
  /// the other seeded streams (prompts, sampling, schedules) are unchanged.
  std::uint64_t seed = 0;
};

/// Returns bad_option naming the field and the fix when `opts` is unusable.
[[nodiscard]] caf::expected<void> validate(const model_options& opts);

/// Sets turn::model of every turn that has none (a model from the input file
/// wins), visiting conversations and their turns in dataset order:
/// round_robin gives the k-th such turn names[k % n]; random draws
/// names[uniform_index(n)] from rng(seed mixed with a fixed salt). With one
/// name or none, nothing is changed: turns keep an empty model, which sends
/// payload_options::model, so single-model output is as before.
void assign_models(dataset& data, const model_options& opts);

} // namespace aiperf::dataset
