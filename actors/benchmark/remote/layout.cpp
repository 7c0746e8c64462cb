#include "actors/benchmark/remote/layout.hpp"

namespace aiperf::remote {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::bad_layout:
      return "bad_layout";
    case errc::bad_endpoint:
      return "bad_endpoint";
  }
  return "unknown";
}

caf::expected<pod_layout> make_layout(std::uint32_t workers,
                                      std::uint32_t processors,
                                      std::uint32_t pods) {
  if (pods == 0)
    return make_error(errc::bad_layout, "--worker-pods must be at least 1");
  if (workers == 0 || workers % pods != 0)
    return make_error(errc::bad_layout,
                      "--workers-max " + std::to_string(workers)
                        + " does not split evenly over --worker-pods "
                        + std::to_string(pods)
                        + ": use a multiple of the pod count");
  if (processors > pods && processors % pods != 0)
    return make_error(errc::bad_layout,
                      "--record-processors " + std::to_string(processors)
                        + " does not split evenly over --worker-pods "
                        + std::to_string(pods)
                        + ": use a multiple of the pod count");
  pod_layout out;
  out.pods = pods;
  out.workers_per_pod = workers / pods;
  out.processors_per_pod = processors > pods ? processors / pods : 1;
  return out;
}

std::string pod_name(std::uint32_t pod) {
  return "pod" + std::to_string(pod);
}

std::string group_service_id(std::uint32_t pod) {
  return pod_name(pod);
}

std::string worker_service_id(std::uint32_t pod, std::uint32_t local) {
  return pod_name(pod) + "/worker_" + std::to_string(local);
}

std::string processor_service_id(std::uint32_t pod, std::uint32_t local) {
  return pod_name(pod) + "/record_processor_" + std::to_string(local);
}

std::vector<std::string> expected_services(const pod_layout& l) {
  std::vector<std::string> out;
  for (std::uint32_t p = 0; p < l.pods; ++p) {
    out.push_back(group_service_id(p));
    for (std::uint32_t i = 0; i < l.workers_per_pod; ++i)
      out.push_back(worker_service_id(p, i));
    for (std::uint32_t i = 0; i < l.processors_per_pod; ++i)
      out.push_back(processor_service_id(p, i));
  }
  return out;
}

} // namespace aiperf::remote
