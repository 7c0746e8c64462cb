// Errors of a process's bootstrap: its environment and its node options.
#pragma once

#include "proto/error.hpp"

#include <cstdint>

namespace aiperf::system {

/// Why a process cannot start as configured.
enum class errc : std::uint8_t {
  bad_env = 1, // AIPERF_* variables are invalid or missing (see env.hpp)
  bad_option,  // a node option (scheduler policy) is unusable
  spawn_failed, // a child process could not be started (child_process.hpp)
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::system

// System errors: a system::errc and a message naming every bad variable or
// option and its fix.
AIPERF_ERROR_ENUM(aiperf::system::errc, "system")
