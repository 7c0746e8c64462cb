// What every `aiperf-node kube` command that talks to a cluster shares: the
// common flags (-n/--namespace, --kubeconfig, --kube-context), a connected
// product client (k8s/client), the namespace rule, the last-benchmark file
// and the paths by which the CLI reaches a pod.
//
// The CLI reaches pods only through the API server
// (`/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/...` and `pods/log`):
// the same credentials, TLS and RBAC as every other request, and it works
// from a laptop outside the pod network. Those paths travel as ordinary
// k8s::request subresources ("proxy/api/results/list", "log?container=c"),
// so the client's retries, credentials and error mapping apply to them too.
#pragma once

#include "config/profile/profile_config.hpp"
#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "k8s/client/config.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace CLI {
class App;
} // namespace CLI

namespace aiperf::kube_command {

/// The flags of AIPerf's KubeManageOptions; empty = not given.
struct cluster_flags {
  std::string namespace_name; // -n/--namespace
  std::string kubeconfig;     // --kubeconfig
  std::string context;        // --kube-context
};

/// Adds -n/--namespace, --kubeconfig and --kube-context to `app`.
void add_cluster_flags(CLI::App& app, cluster_flags& flags);

/// The namespace a command works in: --namespace, else the context's, else
/// `default` (also when no kubeconfig can be loaded at all).
[[nodiscard]] std::string
resolve_namespace(const cluster_flags& flags,
                  const k8s::client::config_selection& sel,
                  const k8s::client::environment& env);

/// `~/.aiperf/last_kube_benchmark.json`: which run `kube results`, `logs`,
/// `cancel` and `delete` mean when no name is given.
struct last_benchmark {
  std::string name;
  std::string namespace_name;
  std::string mode; // "direct" or "operator"

  bool operator==(const last_benchmark&) const = default;
};

/// `$HOME/.aiperf/last_kube_benchmark.json` of `env` (HOME unset: the
/// current directory's `.aiperf`).
[[nodiscard]] std::filesystem::path
last_benchmark_path(const k8s::client::environment& env);

/// `{"name","namespace","mode"}`.
[[nodiscard]] std::string to_json_text(const last_benchmark& x);

/// Parses the file's text; errors name the file and the missing key.
[[nodiscard]] caf::expected<last_benchmark>
parse_last_benchmark(std::string_view text, const std::filesystem::path& from);

/// Writes the file atomically (creating `~/.aiperf`).
[[nodiscard]] caf::expected<void>
write_last_benchmark(const std::filesystem::path& path,
                     const last_benchmark& x);

/// Reads it; a missing file is an error saying to name the benchmark.
[[nodiscard]] caf::expected<last_benchmark>
read_last_benchmark(const std::filesystem::path& path);

/// The run a command acts on: the positional name with the resolved
/// namespace, else the last benchmark (its namespace unless -n was given).
struct job_target {
  std::string name;
  std::string namespace_name;
};

[[nodiscard]] caf::expected<job_target>
resolve_target(const std::string& positional, const cluster_flags& flags,
               const k8s::client::config_selection& sel,
               const k8s::client::environment& env);

/// A job id as AIPerf accepts it: a DNS label of at most 35 characters
/// (pod names append `-controller-0-0-xxxxx`). Empty when valid, else the
/// reason naming --name.
[[nodiscard]] std::string validate_job_name(std::string_view name);

/// Object names of a direct-mode run.
[[nodiscard]] std::string jobset_name(std::string_view job);
/// `aiperf.nvidia.com/job-id=<job>`.
[[nodiscard]] std::string job_selector(std::string_view job);

/// Request targets through the API server.
[[nodiscard]] k8s::request pod_proxy(std::string_view ns, std::string_view pod,
                                     int port, std::string_view path);
[[nodiscard]] k8s::request pod_log(std::string_view ns, std::string_view pod,
                                   std::string_view container);

/// A connected client and the namespace it works in. Requests wait for
/// their answer (the CLI does one thing at a time).
class cluster {
public:
  /// Loads the configuration, starts an actor system and the client.
  /// Errors name the kubeconfig and the fix (exit 1).
  static caf::expected<std::unique_ptr<cluster>>
  connect(const cluster_flags& flags, const k8s::client::environment& env);

  ~cluster();

  const std::string& namespace_name() const noexcept {
    return namespace_;
  }
  void set_namespace(std::string ns) {
    namespace_ = std::move(ns);
  }
  const std::string& origin() const noexcept {
    return origin_;
  }

  /// One request, waited for up to `timeout`.
  caf::expected<k8s::response>
  call(k8s::request req,
       std::chrono::milliseconds timeout = std::chrono::seconds{60});

  /// The namespace exists; else the error (exit 2) `namespace "bench" not
  /// found: create it (kubectl create namespace bench) or pass --namespace`.
  /// (a config::errc::missing). Other failures are returned as they are.
  caf::expected<void> check_namespace();

private:
  cluster();
  struct impl;
  std::unique_ptr<impl> impl_;
  std::string namespace_;
  std::string origin_;
};

/// The exit code of a failed command: 2 for a usage error (a config::errc:
/// a bad flag, a missing namespace, no benchmark named), 1 for the rest.
[[nodiscard]] int exit_code_of(const caf::error& err);

/// Prints `error: <message>` to stderr and returns exit_code_of(err).
int report(const caf::error& err);

/// The string at `path` in `j` ("" when a step is missing or not an
/// object, or the value is not a string).
[[nodiscard]] std::string str_at(const k8s::json& j,
                                 std::initializer_list<const char*> path);

} // namespace aiperf::kube_command
