#include "proto/benchmark_errors.hpp"

#include <caf/sec.hpp>

#include <cstdio>

namespace aiperf::benchmark {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::silent_service:
      return "silent_service";
    case errc::bad_request:
      return "bad_request";
    case errc::invalid_config:
      return "invalid_config";
    case errc::export_failed:
      return "export_failed";
    case errc::pod_failed:
      return "pod_failed";
  }
  return "unknown";
}

caf::error silent_service(std::string_view service, std::string_view what,
                          std::chrono::milliseconds after) {
  char secs[32];
  std::snprintf(secs, sizeof(secs), "%g", static_cast<double>(after.count()) / 1000.0);
  return make_error(errc::silent_service, std::string{service} + " did not answer "
                                            + std::string{what} + " within " + secs + " s",
                    std::string{service});
}

caf::error name_timeout(caf::error err, std::string_view service, std::string_view what,
                        std::chrono::milliseconds after) {
  if (err == caf::sec::request_timeout)
    return silent_service(service, what, after);
  return err;
}

} // namespace aiperf::benchmark
