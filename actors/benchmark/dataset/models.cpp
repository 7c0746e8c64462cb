#include "actors/benchmark/dataset/models.hpp"

#include "actors/benchmark/dataset/random.hpp"

namespace aiperf::dataset {

namespace {

// Mixed into --random-seed so the model stream differs from the prompt
// stream that the same seed starts (ASCII "models").
constexpr std::uint64_t model_stream_salt = 0x6d6f'6465'6c73ULL;

} // namespace

std::optional<model_selection> parse_model_selection(std::string_view name) {
  if (name == "round_robin")
    return model_selection::round_robin;
  if (name == "random")
    return model_selection::random;
  return std::nullopt;
}

caf::expected<void> validate(const model_options& opts) {
  for (std::size_t i = 0; i < opts.names.size(); ++i)
    if (opts.names[i].empty())
      return make_error(errc::bad_option,
                        "model_names[" + std::to_string(i)
                          + "]: must not be empty; remove the stray comma in "
                            "--model");
  return caf::unit;
}

void assign_models(dataset& data, const model_options& opts) {
  const auto n = opts.names.size();
  if (n <= 1)
    return;
  rng gen{opts.seed ^ model_stream_salt};
  std::uint64_t k = 0;
  for (auto& conv : data.conversations) {
    for (auto& t : conv.turns) {
      if (!t.model.empty())
        continue;
      const auto pick = opts.strategy == model_selection::round_robin
                            ? k++ % n
                            : uniform_index(gen, n);
      t.model = opts.names[pick];
    }
  }
}

} // namespace aiperf::dataset
