// Builds request records the way AIPerf's unit tests do
// (`create_record(start, responses, tokens_per_response)`), with small ns
// timestamps; the wall clock equals the monotonic clock.
#pragma once

#include "proto/records.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace aiperf::test {

inline proto::request_record make_record(std::int64_t start,
                                         std::vector<std::int64_t> responses,
                                         int tokens_per_response = 1,
                                         bool streaming = true) {
  proto::request_record r;
  r.x_request_id = "req";
  r.worker_id = "worker_0";
  r.http_status = 200;
  r.streaming = streaming;
  r.request_start_ns = start;
  r.request_start_wall_ns = start;
  r.request_end_ns = responses.empty() ? start : responses.back();
  r.response_is_reasoning.assign(responses.size(), 0);
  for (std::size_t i = 0; i < responses.size(); ++i)
    for (int t = 0; t < tokens_per_response; ++t)
      r.output_text += " w"; // one built-in-tokenizer token each
  r.response_ts_ns = std::move(responses);
  return r;
}

/// A record with `osl` output tokens in one response.
inline proto::request_record make_osl_record(std::int64_t start,
                                             std::int64_t end, int osl) {
  return make_record(start, {end}, osl);
}

} // namespace aiperf::test
