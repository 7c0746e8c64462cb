// How a run's workers and record processors are split over worker pods, and
// the ids services use on the wire. Pure, unit-tested.
#pragma once

#include "proto/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace aiperf::remote {

/// Why a distributed run cannot be laid out.
enum class errc : std::uint8_t {
  bad_layout = 1, // workers or processors do not split evenly over the pods
  bad_endpoint,   // a bridge endpoint is not the bound tcp://host:port expected
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::remote

// Remote-run errors: a remote::errc and a message naming the flag and the
// fix.
AIPERF_ERROR_ENUM(aiperf::remote::errc, "remote")

namespace aiperf::remote {

/// The split of one run over its pods (every pod gets the same share).
struct pod_layout {
  std::uint32_t pods = 1;
  std::uint32_t workers_per_pod = 1;
  std::uint32_t processors_per_pod = 1;

  /// Run-wide index of worker `local` of pod `pod`.
  [[nodiscard]] std::uint32_t worker_index(std::uint32_t pod,
                                           std::uint32_t local) const noexcept {
    return pod * workers_per_pod + local;
  }
  /// The pod that owns run-wide worker `index`.
  [[nodiscard]] std::uint32_t pod_of_worker(std::uint32_t index) const noexcept {
    return index / workers_per_pod;
  }
};

/// Splits `workers` and `processors` (run totals) over `pods`. Fails with
/// bad_layout naming the flag when they do not divide evenly (the CLI already
/// checks this; the run file may come from elsewhere). Every pod gets at
/// least one processor.
[[nodiscard]] caf::expected<pod_layout> make_layout(std::uint32_t workers,
                                                  std::uint32_t processors,
                                                  std::uint32_t pods);

/// "pod<i>": the ZMQ identity, service-id prefix and RAW part name of pod i.
[[nodiscard]] std::string pod_name(std::uint32_t pod);

/// Service ids of pod `pod`, as registered: the pod's worker_group_manager
/// ("pod1"), its workers ("pod1/worker_0", ...) and its processors
/// ("pod1/record_processor_0", ...).
[[nodiscard]] std::string group_service_id(std::uint32_t pod);
[[nodiscard]] std::string worker_service_id(std::uint32_t pod,
                                            std::uint32_t local);
[[nodiscard]] std::string processor_service_id(std::uint32_t pod,
                                               std::uint32_t local);

/// Every service id the controller's registration gate waits for.
[[nodiscard]] std::vector<std::string> expected_services(const pod_layout& l);

} // namespace aiperf::remote
