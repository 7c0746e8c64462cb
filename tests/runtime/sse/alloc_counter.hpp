// Counts heap allocations of the test process (global operator new is
// replaced in alloc_counter.cpp, a separate TU so that g++ does not flag the
// replacement as a new/free mismatch when it inlines gtest's code).
#pragma once

#include <cstddef>

namespace alloc_counter {

/// Starts counting from zero.
void start() noexcept;

/// Stops counting; returns the allocations since `start()`.
std::size_t stop() noexcept;

} // namespace alloc_counter
