// Pulls what the metrics need out of one OpenAI-compatible response message
// (an SSE event's data or a whole non-streaming body): the content and
// reasoning text, `usage`, and whether the server reported an error.
#pragma once

#include "proto/records.hpp"
#include "proto/worker.hpp"

#include <string>
#include <string_view>

namespace aiperf::worker {

/// What one message carried. The views point into the parser's scratch
/// buffer and are valid until the next parse().
struct message_fields {
  std::string_view content;
  std::string_view reasoning;
  bool has_usage = false;
  proto::usage_counts usage;
  /// `{"error": ...}` object; `error_message` holds its message.
  bool is_error = false;
  std::string_view error_message;
  /// Embeddings: the body had a `data` array (a response, without text).
  bool has_embedding = false;
};

/// Reusable parser (one per request context; not thread-safe). Chat reads
/// `choices[0].delta` (streaming) or `choices[0].message` (`content`, and
/// `reasoning_content` or `reasoning`); completions read `choices[0].text`;
/// `usage` is read at the top level for every kind.
class response_parser {
public:
  /// Parses `json`. Returns false when it is not valid JSON (the caller
  /// records a protocol error naming the bad message).
  [[nodiscard]] bool parse(std::string_view json, proto::endpoint_kind kind,
                           message_fields& out);

private:
  std::string scratch_;
};

} // namespace aiperf::worker
