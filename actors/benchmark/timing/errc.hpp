// Errors of the schedule code (gaps, trace replay, user-centric timing) and
// of the timing_manager's configuration check.
#pragma once

#include "proto/error.hpp"

#include <cstdint>

namespace aiperf::timing {

/// Why a schedule cannot be built.
enum class errc : std::uint8_t {
  bad_option = 1,  // an option is out of range or contradicts another
  no_timestamps,   // trace replay over a dataset without timestamps
  empty_window,    // the replay offsets keep no request
  empty_dataset,   // nothing to schedule (no session plans)
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::timing

// Timing errors: a timing::errc and a message naming the option (its flag)
// and the fix.
AIPERF_ERROR_ENUM(aiperf::timing::errc, "timing")
