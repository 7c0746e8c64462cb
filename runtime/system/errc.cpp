#include "runtime/system/errc.hpp"

namespace aiperf::system {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::bad_env:
      return "bad_env";
    case errc::bad_option:
      return "bad_option";
  }
  return "unknown";
}

} // namespace aiperf::system
