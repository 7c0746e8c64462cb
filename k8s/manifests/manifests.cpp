#include "k8s/manifests/manifests.hpp"

namespace aiperf::k8s::manifests {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::invalid_name:
      return "invalid_name";
    case errc::invalid_workers:
      return "invalid_workers";
    case errc::invalid_option:
      return "invalid_option";
    case errc::too_large:
      return "too_large";
  }
  return "unknown";
}

const char* to_string(resource_mode x) noexcept {
  switch (x) {
    case resource_mode::burstable:
      return "burstable";
    case resource_mode::guaranteed:
      return "guaranteed";
    case resource_mode::none:
      return "none";
  }
  return "unknown";
}

std::string jobset_name(std::string_view name) {
  return "aiperf-" + std::string{name};
}

std::string role_name(std::string_view name) {
  return jobset_name(name) + "-role";
}

std::string role_binding_name(std::string_view name) {
  return jobset_name(name) + "-binding";
}

std::string config_map_name(std::string_view name) {
  return jobset_name(name) + "-config";
}

std::string controller_host(std::string_view name, std::string_view ns) {
  auto js = jobset_name(name);
  return js + "-controller-0-0." + js + "." + std::string{ns} + ".svc.cluster.local";
}

} // namespace aiperf::k8s::manifests
