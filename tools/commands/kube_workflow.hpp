// The pieces of the kube workflow commands that `kube profile` reuses and
// tests call directly (kube_workflow_command.cpp, kube_profile_command.cpp).
#pragma once

#include "k8s/api/json.hpp"
#include "tools/commands/kube_cluster.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::kube_command {

/// `kube profile` (kube_profile_command.cpp).
void add_profile(CLI::App& kube, int& exit_code);

/// The run's controller pod (a Running one when there is one). Error
/// k8s::errc::not_found naming the JobSet when it has none.
[[nodiscard]] caf::expected<std::string> controller_pod(cluster& c,
                                                        const std::string& job);

/// What download_results fetched.
struct results_summary {
  std::string pod;
  int port = 0; // 9090 (controller API) or 9091 (results sidecar)
  std::vector<std::string> files;
  std::uint64_t bytes = 0;
};

/// Lists `/api/results/list` of the controller pod through the pods proxy
/// (the results sidecar on 9091 when the controller does not answer) and
/// writes each file atomically under `out_dir`. A listed name that would
/// leave `out_dir` (absolute, `..`) or a size that differs is an error.
[[nodiscard]] caf::expected<results_summary>
download_results(cluster& c, const std::string& job,
                 const std::filesystem::path& out_dir);

/// POSTs `route` to the controller API (port 9090); the HTTP status.
[[nodiscard]] caf::expected<int>
post_controller(cluster& c, const std::string& job, const std::string& route);

/// The kinds `kube delete` removes by the job label, in deletion order.
[[nodiscard]] const std::vector<k8s::resource_ref>& labelled_kinds();

/// One line of `kube list`.
struct jobset_row {
  std::string name;
  std::string namespace_name;
  std::string phase;
  std::string age;

  bool operator==(const jobset_row&) const = default;
};

/// The row of a JobSet: name from the job-id label, phase from its
/// conditions (Completed, Failed), `suspend` (Suspended), else Running with
/// the controller's progress-phase annotation when present.
[[nodiscard]] jobset_row row_of(const k8s::json& jobset, std::int64_t now_unix);

/// The row of an AIPerfJob (operator mode): its status.phase ("Pending"
/// before the operator wrote one), with the subPhase while it runs.
[[nodiscard]] jobset_row row_of_aiperfjob(const k8s::json& job, std::int64_t now_unix);

/// "45s", "3m12s", "42m", "5h3m", "3d" (kubectl's style).
[[nodiscard]] std::string format_age(std::int64_t seconds);

/// The table with a header line, columns padded by three spaces.
[[nodiscard]] std::string format_rows(const std::vector<jobset_row>& rows);

} // namespace aiperf::kube_command
