#include "runtime/system/errc.hpp"

namespace aiperf::system {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::bad_env:
      return "bad_env";
    case errc::bad_option:
      return "bad_option";
    case errc::spawn_failed:
      return "spawn_failed";
  }
  return "unknown";
}

} // namespace aiperf::system
