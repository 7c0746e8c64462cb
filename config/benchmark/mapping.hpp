// The two-way mapping between a Config-v2 document and `profile`'s flags
// (config::profile_config): every flag is one field of the document and
// back, so `profile -f FILE`, `kube profile` and the operator run the same
// benchmark from the same document.
//
//   flag                                   document field
//   -m/--model, --model-selection-strategy benchmark.models ([names] or
//                                          {strategy: random, items: [{name}]})
//   -u/--url                               benchmark.endpoint.urls
//   --endpoint-type, --endpoint            benchmark.endpoint.type, .path
//   --streaming, --api-key, -H, --extra-inputs
//                                          endpoint.streaming, .apiKey,
//                                          .headers, .extra
//   --request-timeout-seconds              endpoint.timeout
//   --use-legacy-max-tokens, --use-server-token-count
//                                          endpoint.useLegacyMaxTokens,
//                                          .useServerTokenCount
//   --ca-file, --insecure                  endpoint.caFile, .insecure (ours)
//   --input-file, --custom-dataset-type    datasets[0] {type: file, path,
//                                          format}
//   --num-dataset-entries                  datasets[0].entries
//   --isl/--isl-stddev, --osl/--osl-stddev datasets[0].prompts.isl/.osl
//                                          ({mean, stddev})
//   --prompt-corpus                        datasets[0].prompts.corpus
//   --conversation-turn-mean/-stddev       datasets[0].turns
//   --conversation-turn-delay-mean/-stddev datasets[0].turnDelay
//   --conversation-turn-delay-ratio        datasets[0].turnDelayRatio
//   --warmup-request-count                 the warmup phase's requests
//   --concurrency, --request-count, --benchmark-duration,
//   --benchmark-grace-period, --conversation-num, --prefill-concurrency
//                                          the profiling phase's concurrency,
//                                          requests, duration, gracePeriod,
//                                          sessions, prefillConcurrency
//   --request-rate + --arrival-pattern     phase type poisson|gamma|constant
//                                          + rate; --arrival-smoothness:
//                                          smoothness
//   --user-centric-rate + --num-users      phase type user_centric, rate,
//                                          users
//   --fixed-schedule (+ -auto-offset, -start-offset, -end-offset)
//                                          phase type fixed_schedule,
//                                          autoOffset, startOffset, endOffset
//   --failed-request-threshold (ratio)     phase failedRequestThreshold
//                                          (ratio, AIPerf's unit)
//   --random-seed                          randomSeed
//   --goodput                              benchmark.slos
//   --tokenizer                            benchmark.tokenizer.name
//   --tokenizer-revision                   benchmark.tokenizer.revision
//   --output-artifact-dir, --export-level  artifacts.dir; records: false
//                                          (summary) / raw: true (raw)
//   --slice-duration                       artifacts.sliceDuration
//   --ui, --log-level                      runtime.ui, logging.level
//   --workers-max, --record-processors, --workers-per-pod
//                                          runtime.workers,
//                                          .recordProcessors, .workersPerPod
//   --worker-pods, --io-threads, --io-priority, --scheduler-policy,
//   --scheduler-threads                    runtime.workerPods, .ioThreads,
//                                          .ioPriority, .schedulerPolicy,
//                                          .schedulerThreads (ours)
#pragma once

#include "config/benchmark/validate.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace aiperf::config::benchmark {

/// The document of `cfg` (an AIPerfConfig, canonical form): fields whose
/// flag is at its default are left out. Raw `-H`/`--extra-inputs`/
/// `--goodput` text still in `cfg.cli` is parsed first. Fails (errc::invalid,
/// naming the flag) for a value the document cannot hold (`--log-level off`,
/// malformed `--goodput` text).
[[nodiscard]] caf::expected<json>
from_profile_config(const profile_config& cfg);

/// The flags of a normalized, validated AIPerfConfig (or AIPerfJob spec)
/// document, not yet finalized. Fails (errc::invalid, naming the field path)
/// for a value the flags cannot hold (a fractional token mean).
[[nodiscard]] caf::expected<profile_config> to_profile_config(const json& doc);

/// `cfg` with the raw `cfg.cli` text parsed into headers, extra inputs and
/// goodput (what finalize() does first).
[[nodiscard]] caf::expected<profile_config>
with_cli_text_parsed(profile_config cfg);

/// Reads, normalizes and validates the config file `path`, and maps it
/// into flags. Returns the validation's warnings ("<path>: <message>").
[[nodiscard]] caf::expected<std::vector<std::string>>
load_profile_file(const std::filesystem::path& path, profile_config& cfg);

/// `profile -f FILE`: `cfg` becomes the file's flags, then every option of
/// `cmd` given on the command line (other than `skip`, the -f option
/// itself) is applied again, so explicit flags override the file. Call
/// after a successful parse. Returns the file's warnings.
[[nodiscard]] caf::expected<std::vector<std::string>>
apply_file_then_flags(const std::filesystem::path& path, CLI::App& cmd,
                      profile_config& cfg, const CLI::Option* skip);

} // namespace aiperf::config::benchmark
