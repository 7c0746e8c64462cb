// Typed reading of the AIPERF_* environment of a pod.
//
// A distributed run travels as one serialized run file (JSON, no secrets)
// plus environment variables named like the seed AIPerf's Kubernetes mode:
//
// clang-format off
// variable                                    default  meaning
// AIPERF_K8S_PORT_API                         9090     api_service HTTP (progress, /metrics, files)
// AIPERF_K8S_PORT_HEALTH                      8080     /healthz and /readyz of every pod
// AIPERF_K8S_PORT_CONTROL                     5667     ZMQ control channel (controller ROUTER)
// AIPERF_K8S_PORT_CREDIT                      5668     ZMQ credit dispatch
// AIPERF_K8S_PORT_CREDIT_RETURN               5669     ZMQ credit returns
// AIPERF_K8S_PORT_RECORDS                     5670     ZMQ metric records
// AIPERF_K8S_ZMQ_CONTROLLER_HOST              unset    host worker pods connect to
// AIPERF_POD_INDEX                            unset    this pod's index in its replicated job
// AIPERF_JOB_ID                               unset    the AIPerfJob id (labels, file names)
// AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT  0        abort when more than this % of pods failed
// clang-format on
//
// Ports accept 0 (ephemeral: bind any free port, useful in tests and for
// several nodes on one host). Two non-zero ports may not be equal.
//
// Secrets (API key, header values) never go into the run file: the run file
// only *declares* their names, and each declared NAME is read from
// AIPERF_INJECTED_<NAME>. A declared secret that is missing or empty fails
// closed, because silently benchmarking without an Authorization header
// measures 401s, not the model.
//
// Every error names the variable and the fix. Errors never contain secret
// values. A reader reports every problem it finds at once (so a
// misconfigured pod needs one restart, not six): one bad_env error whose
// message joins them with "; " and whose payload is the
// std::vector<env_error> of each (read it with error_payload).
#pragma once

#include "proto/ports.hpp"
#include "runtime/system/errc.hpp"

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::system {

/// Looks a variable up: its value, or std::nullopt when unset.
using env_lookup
    = std::function<std::optional<std::string>(std::string_view name)>;

/// Returns a lookup over this process's environment (getenv). Reading is
/// safe only while no thread calls setenv, i.e. at startup.
[[nodiscard]] env_lookup process_env();

/// Returns a lookup over a fixed map (tests, and child environments).
[[nodiscard]] env_lookup
map_env(std::map<std::string, std::string, std::less<>> vars);

/// One invalid or missing variable: an element of a bad_env error's
/// std::vector<env_error> payload.
struct env_error {
  /// The variable, e.g. "AIPERF_K8S_PORT_API".
  std::string variable;
  /// What is wrong and how to fix it; starts with the variable name.
  std::string message;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, env_error& x) {
  return f(caf::meta::type_name("aiperf::system::env_error"), x.variable,
           x.message);
}

/// The ports of a pod (see the table above).
using pod_ports = proto::node_ports;

/// The AIPERF_* settings of a pod.
struct pod_env {
  pod_ports ports;
  /// AIPERF_K8S_ZMQ_CONTROLLER_HOST; unset on a local single-process run.
  std::optional<std::string> controller_host;
  /// AIPERF_POD_INDEX.
  std::optional<std::uint32_t> pod_index;
  /// AIPERF_JOB_ID.
  std::optional<std::string> job_id;
  /// AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT, in [0, 100]; default 50, as AIPerf.
  double pod_failure_abort_threshold_percent = 50.0;
};

/// The name of the port variable of `field` ("api" -> AIPERF_K8S_PORT_API).
/// Field names: api, health, control, credit, credit_return, records.
[[nodiscard]] std::optional<std::string> port_variable(std::string_view field);

/// Reads and validates every pod variable from `env`; bad_env lists every
/// problem.
[[nodiscard]] caf::expected<pod_env> read_pod_env(const env_lookup& env);

/// Parses a port value ("0".."65535", decimal digits only). On error (one
/// env_error) the message names `variable`.
[[nodiscard]] caf::expected<std::uint16_t>
parse_port(std::string_view variable, std::string_view text);

/// Secret values by declared name ("API_KEY" -> "sk-..."). Never log it.
struct injected_secrets {
  std::map<std::string, std::string, std::less<>> values;

  /// The value of a declared secret, or nullptr.
  [[nodiscard]] const std::string* find(std::string_view name) const {
    auto i = values.find(name);
    return i == values.end() ? nullptr : &i->second;
  }
};

/// The environment variable of a declared secret name: "AIPERF_INJECTED_"
/// + name.
[[nodiscard]] std::string secret_variable(std::string_view name);

/// Reads every declared secret from AIPERF_INJECTED_<NAME>. Names must match
/// [A-Z0-9_]+ (they become variable names). Fails closed: any missing or
/// empty declared secret is an env_error naming its variable.
[[nodiscard]] caf::expected<injected_secrets>
read_secrets(std::span<const std::string> declared, const env_lookup& env);

} // namespace aiperf::system
