// Synthetic datasets: AIPerf's `--isl/--osl/--conversation-turn-*` and
// `--prompt-corpus` options. Prompts are token windows of the corpus in the
// run's tokenizer (prompt_corpus.hpp), so every turn's ISL is the drawn
// length in that tokenizer's tokens.
#pragma once

#include "actors/benchmark/dataset/dataset.hpp"
#include "actors/benchmark/dataset/prompt_corpus.hpp"
#include "actors/benchmark/dataset/random.hpp"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace aiperf::dataset {

/// Mirrors AIPerf's synthetic-input flags; the caller maps its config here.
struct synthetic_options {
  /// Set (by a signal) to stop generating: the result is then incomplete
  /// and must be dropped. Null = never stopped.
  const std::atomic<bool>* stop = nullptr;
  /// `--num-conversations` (AIPerf `--num-dataset-entries` default 100).
  std::uint64_t num_conversations = 100;
  /// `--isl` / `--isl-stddev` (tokens per user turn).
  double isl_mean = 550;
  double isl_stddev = 0;
  /// `--osl` / `--osl-stddev`; unset mean = no max tokens is sent.
  std::optional<double> osl_mean;
  double osl_stddev = 0;
  /// `--conversation-turn-mean` / `-stddev` (turns per conversation).
  double turn_mean = 1;
  double turn_stddev = 0;
  /// `--conversation-turn-delay-mean` / `-stddev` (ms) and `-ratio`.
  double turn_delay_mean_ms = 0;
  double turn_delay_stddev_ms = 0;
  double turn_delay_ratio = 1.0;
  /// `--random-seed`; unset = a fixed default seed (still deterministic).
  std::optional<std::uint64_t> random_seed;
  /// `--prompt-corpus` (AIPerf's default sonnet).
  prompt_corpus corpus = prompt_corpus::sonnet;
  /// The tokenizer prompts are cut and counted in; null = the process's
  /// metrics tokenizer (tokenizer::set_metrics_tokenizer, else whitespace8).
  const tokenizer::any_tokenizer* tokenizer = nullptr;
};

/// Seed used when synthetic_options::random_seed is unset.
inline constexpr std::uint64_t default_seed = 0x5eed'a1fe'0000'0001ULL;

/// Returns bad_option naming the offending field and the fix when `opts` is
/// unusable.
[[nodiscard]] caf::expected<void> validate(const synthetic_options& opts);

/// Generates a dataset; `opts` must have passed validate().
///
/// Each turn's text is a prompt_generator window of the drawn ISL and its
/// input_tokens the text's count in the tokenizer (the ISL exactly, see
/// prompt_corpus.hpp for the one exception). Lengths (ISL, OSL, turns) are
/// rounded draws from a normal redrawn until
/// ≥ 1 (see positive_normal_int). Turn 0 has no delay; later turns get
/// max(0, round(normal(delay_mean, delay_stddev) · ratio)) ms when a delay
/// mean or stddev is set, else -1. Same options → byte-identical dataset.
[[nodiscard]] dataset generate_synthetic(const synthetic_options& opts);

} // namespace aiperf::dataset
