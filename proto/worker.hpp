// The worker's configuration and the record path's entry point.
#pragma once

#include "proto/records.hpp"
#include "proto/timing_manager.hpp"

#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace aiperf::proto {

enum class endpoint_kind : std::uint8_t { chat = 0, completions = 1, embeddings = 2 };

[[nodiscard]] inline const char* to_string(endpoint_kind x) noexcept {
  switch (x) {
    case endpoint_kind::chat:
      return "chat";
    case endpoint_kind::completions:
      return "completions";
    default:
      return "embeddings";
  }
}

/// Everything a worker needs besides the dataset. Secrets (the api key in
/// `headers`) are filled in by the process that spawns the worker, never
/// read from a shared run file.
struct worker_config {
  std::uint32_t worker_index = 0;
  std::string worker_id;
  /// Prefix of X-Request-ID / X-Correlation-ID, unique per run.
  std::string run_id;
  /// Base URLs; a credit's url_index picks one.
  std::vector<std::string> urls;
  /// Path appended to the URL's base path ("/v1/chat/completions").
  std::string endpoint_path;
  endpoint_kind endpoint = endpoint_kind::chat;
  std::string model;
  bool streaming = false;
  bool include_usage = false;
  bool use_legacy_max_tokens = false;
  /// `--extra-inputs` as one JSON object ("" = none).
  std::string extra_inputs_json;
  /// Extra request headers, "Name: value" each.
  std::vector<std::string> headers;
  /// Whole-request deadline; 0 = none.
  std::int64_t timeout_ms = 0;
  /// Keep payloads, headers and raw responses for the raw export.
  bool export_raw = false;
  /// Report the first token of each request (prefill concurrency).
  bool notify_first_token = false;
  /// `--request-cancellation-rate` as a share in [0, 1] (0 = none) and
  /// `--request-cancellation-delay` in ns: a selected request is cancelled
  /// that long after it was sent. The selection hashes `cancel_seed` with
  /// the credit's phase, session and turn (timing/cancellation.hpp), so it
  /// does not depend on which worker gets the credit.
  double cancel_share = 0;
  std::int64_t cancel_delay_ns = 0;
  std::uint64_t cancel_seed = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_config& x) {
  return f(caf::meta::type_name("aiperf::proto::worker_config"),
           x.worker_index, x.worker_id, x.run_id, x.urls, x.endpoint_path,
           x.endpoint, x.model, x.streaming, x.include_usage,
           x.use_legacy_max_tokens, x.extra_inputs_json, x.headers,
           x.timeout_ms, x.export_raw, x.notify_first_token, x.cancel_share,
           x.cancel_delay_ns, x.cancel_seed);
}

/// The input side of a record_processor: raw records from workers, in
/// batches. No reply.
using record_sink_actor
  = caf::typed_actor<caf::reacts_to<request_record_batch>>;

} // namespace aiperf::proto
