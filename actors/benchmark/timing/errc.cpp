#include "actors/benchmark/timing/errc.hpp"

namespace aiperf::timing {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::bad_option:
      return "bad_option";
    case errc::no_timestamps:
      return "no_timestamps";
    case errc::empty_window:
      return "empty_window";
    case errc::empty_dataset:
      return "empty_dataset";
  }
  return "unknown";
}

} // namespace aiperf::timing
