// What a benchmark sends: conversations of user turns. Built once by the
// dataset manager (synthetic generator or input file), then read-only.
#pragma once

#include "proto/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace aiperf::dataset {

/// Why a dataset could not be built, read or written. The message names the
/// option, file (and line) or field, and the fix.
enum class errc : std::uint8_t {
  io = 1,      // open/read/write/download/mmap/(de)compress failed
  bad_magic,   // not a dataset.dat / index.dat at all
  version,     // written by another format version
  truncated,   // shorter than its header or than the index says
  checksum,    // bytes changed after writing, or files from different runs
  corrupt,     // structure inconsistent (offsets, lengths, counts, flags)
  too_large,   // a string or count does not fit the format's u32 fields
  bad_option,  // a synthetic, model or payload option is unusable
  bad_input,   // an input file has malformed lines (all are listed)
  empty,       // the dataset has no conversation
  cancelled,   // interrupted (SIGINT/SIGTERM) while it was being built
};

/// Returns the enumerator's name ("checksum").
[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::dataset

AIPERF_ERROR_ENUM(aiperf::dataset::errc, "dataset")

namespace aiperf::dataset {

/// One user turn of a conversation.
struct turn {
  /// The user prompt; several prompt pieces (`texts`) are joined with " ".
  std::string text;
  /// Built-in tokenizer count of `text`, i.e. what the ISL metric counts.
  std::uint32_t input_tokens = 0;
  /// Requested output tokens, sent as max_completion_tokens; -1 = none.
  std::int32_t max_output_tokens = -1;
  /// Trace timestamp in ms (trace replay); -1 = none.
  std::int64_t timestamp_ms = -1;
  /// Think time before this turn in ms; -1 = none.
  std::int64_t delay_ms = -1;
  /// The "model" this turn is sent to; "" = payload_options::model. Set by
  /// assign_models (several --model names) or an input file's `model` field;
  /// left empty with one model so bodies stay as before.
  std::string model;

  friend bool operator==(const turn&, const turn&) = default;
};

/// A session: turns sent in order, each after the previous one returned.
struct conversation {
  std::string session_id;
  std::vector<turn> turns;

  friend bool operator==(const conversation&, const conversation&) = default;
};

/// All conversations of a run.
struct dataset {
  std::vector<conversation> conversations;
  /// True iff every conversation's first turn has a timestamp, which is what
  /// a fixed (trace-replay) schedule needs.
  bool has_timestamps = false;

  friend bool operator==(const dataset&, const dataset&) = default;
};

} // namespace aiperf::dataset
