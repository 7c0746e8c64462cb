#include "actors/benchmark/dataset/synthetic.hpp"

#include "actors/benchmark/dataset/random.hpp"
#include "runtime/tokenizer/resolve.hpp"
#include "runtime/tokenizer/tokenizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace aiperf::dataset {

namespace {

bool finite_non_negative(double x) {
  return std::isfinite(x) && x >= 0.0;
}

// uuid-v4-shaped id from the seeded stream: unique per seed like AIPerf's
// uuid4 session ids, but reproducible.
std::string session_id(rng& gen) {
  const std::uint64_t hi = gen();
  const std::uint64_t lo = gen();
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-4%03x-%04x-%012llx",
                static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff),
                static_cast<unsigned>(hi & 0x0fff),
                static_cast<unsigned>(0x8000 | ((lo >> 48) & 0x3fff)),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

} // namespace

caf::expected<void> validate(const synthetic_options& opts) {
  constexpr double max_tokens = std::numeric_limits<std::int32_t>::max();
  if (opts.num_conversations == 0)
    return make_error(errc::bad_option, "num_conversations: must be >= 1; set "
                                        "--num-conversations");
  if (!std::isfinite(opts.isl_mean) || opts.isl_mean < 1
      || opts.isl_mean > max_tokens)
    return make_error(errc::bad_option,
                      "isl_mean: must be a number >= 1; set --isl to the "
                      "prompt length in tokens");
  if (!finite_non_negative(opts.isl_stddev))
    return make_error(errc::bad_option,
                      "isl_stddev: must be >= 0; set --isl-stddev");
  if (opts.osl_mean
      && (!std::isfinite(*opts.osl_mean) || *opts.osl_mean < 1
          || *opts.osl_mean > max_tokens))
    return make_error(errc::bad_option,
                      "osl_mean: must be a number >= 1; set --osl or leave it "
                      "unset for no max tokens");
  if (!finite_non_negative(opts.osl_stddev))
    return make_error(errc::bad_option,
                      "osl_stddev: must be >= 0; set --osl-stddev");
  if (!std::isfinite(opts.turn_mean) || opts.turn_mean < 1)
    return make_error(errc::bad_option,
                      "turn_mean: must be >= 1; set --conversation-turn-mean");
  if (!finite_non_negative(opts.turn_stddev))
    return make_error(errc::bad_option, "turn_stddev: must be >= 0; set "
                                        "--conversation-turn-stddev");
  if (!finite_non_negative(opts.turn_delay_mean_ms))
    return make_error(errc::bad_option, "turn_delay_mean_ms: must be >= 0; set "
                                        "--conversation-turn-delay-mean");
  if (!finite_non_negative(opts.turn_delay_stddev_ms))
    return make_error(errc::bad_option,
                      "turn_delay_stddev_ms: must be >= 0; set "
                      "--conversation-turn-delay-stddev");
  if (!finite_non_negative(opts.turn_delay_ratio))
    return make_error(errc::bad_option, "turn_delay_ratio: must be >= 0; set "
                                        "--conversation-turn-delay-ratio");
  return caf::unit;
}

dataset generate_synthetic(const synthetic_options& opts) {
  rng gen{opts.random_seed.value_or(default_seed)};
  static const auto whitespace
      = tokenizer::any_tokenizer::load(tokenizer::whitespace_model_name);
  const tokenizer::any_tokenizer* tok = opts.tokenizer;
  if (tok == nullptr)
    tok = tokenizer::metrics_tokenizer();
  if (tok == nullptr)
    tok = &*whitespace;
  // The corpus is tokenized once here, at dataset build time.
  const prompt_generator prompts{*tok, opts.corpus};
  const bool has_delay
      = opts.turn_delay_mean_ms > 0 || opts.turn_delay_stddev_ms > 0;
  dataset out;
  out.conversations.reserve(opts.num_conversations);
  for (std::uint64_t c = 0; c < opts.num_conversations; ++c) {
    if (opts.stop != nullptr && opts.stop->load(std::memory_order_relaxed))
      break; // the caller drops what was made
    conversation conv;
    conv.session_id = session_id(gen);
    const auto num_turns
        = positive_normal_int(gen, opts.turn_mean, opts.turn_stddev);
    conv.turns.reserve(num_turns);
    for (std::uint64_t t = 0; t < num_turns; ++t) {
      turn tr;
      // A huge stddev can draw past what input_tokens holds: clamp.
      const auto isl = std::min<std::uint64_t>(
          positive_normal_int(gen, opts.isl_mean, opts.isl_stddev),
          std::numeric_limits<std::int32_t>::max());
      auto prompt = prompts.generate(isl, gen);
      tr.text = std::move(prompt.text);
      // The text's own count: the ISL, unless no window re-encoded to it.
      tr.input_tokens = static_cast<std::uint32_t>(std::min<std::uint64_t>(
          prompt.tokens, std::numeric_limits<std::uint32_t>::max()));
      if (opts.osl_mean) {
        const auto osl
            = positive_normal_int(gen, *opts.osl_mean, opts.osl_stddev);
        tr.max_output_tokens
            = static_cast<std::int32_t>(std::min<std::uint64_t>(
                osl, std::numeric_limits<std::int32_t>::max()));
      }
      if (t > 0 && has_delay) {
        const double d
            = normal(gen, opts.turn_delay_mean_ms, opts.turn_delay_stddev_ms)
              * opts.turn_delay_ratio;
        tr.delay_ms = d > 0 ? std::llround(d) : 0;
      }
      conv.turns.push_back(std::move(tr));
    }
    out.conversations.push_back(std::move(conv));
  }
  out.has_timestamps = false;
  return out;
}

} // namespace aiperf::dataset
