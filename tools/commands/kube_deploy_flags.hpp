// The deployment flags of the `kube` commands that submit a benchmark
// (`kube generate`, `kube profile`): AIPerf's KubeOptions with its names,
// types and defaults (github.com/ai-dynamo/aiperf, src/aiperf/kubernetes),
// turned into the k8s::manifests::deployment every builder takes; plus the
// benchmark flags (`profile`'s, and `-f/--config`), and the rule that keeps
// endpoint secrets out of the ConfigMap.
//
// The mapping flags (`--env-vars`, `--labels`, `--annotations`,
// `--env-from-secrets`, `--node-selector`) take three spellings, repeatable
// and accumulating: `--x.KEY v`, `--x KEY=v`, `--x '{"KEY":"v"}'`. CLI11
// cannot match an option name it was not given (`--labels.team`), so a
// command's arguments are normalised before CLI11 sees them: such commands
// are added with add_normalised_command(), which parses them itself.
#pragma once

#include "config/profile/profile_config.hpp"
#include "k8s/api/json.hpp"
#include "k8s/client/config.hpp"
#include "k8s/manifests/manifests.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
} // namespace CLI

namespace aiperf::kube_command {

/// The mapping flags, as typed ("--env-vars", ...).
[[nodiscard]] const std::vector<std::string>& mapping_flags();

/// AIPerf's normalize_mapping_flag_tokens: `--x.KEY v` and `--x.KEY=v` of a
/// mapping flag become `--x KEY=v`; every other token is kept, and nothing
/// after `--` is touched. Errors (config::errc::invalid, naming the flag and
/// the three spellings): an empty KEY, or `--x.KEY` as the last token.
[[nodiscard]] caf::expected<std::vector<std::string>>
normalize_mapping_flag_tokens(std::vector<std::string> args);

/// The values one mapping flag received, in order, as pairs: each value is
/// `KEY=v` (split at the first '=') or a JSON object of string (or number,
/// boolean) values. A key given again keeps its first place and takes the
/// later value. Anything else is config::errc::invalid naming `flag` and
/// the three spellings.
[[nodiscard]] caf::expected<k8s::manifests::string_pairs>
parse_mapping(std::string_view flag, const std::vector<std::string>& values);

/// The deployment flags as given; empty/unset = not given.
struct deploy_flags {
  std::string name;                         // --name
  std::string image;                        // --image
  std::string image_pull_policy;            // --image-pull-policy
  std::optional<int> total_workers;         // --total-workers
  std::optional<std::int64_t> ttl_seconds;  // --ttl-seconds
  std::vector<std::string> node_selector;   // --node-selector (mapping)
  std::vector<std::string> tolerations;     // --tolerations (JSON object/array)
  std::vector<std::string> image_pull_secrets; // --image-pull-secrets
  std::vector<std::string> secret_mounts;   // --secret-mounts (JSON obj/array)
  std::string service_account;              // --service-account
  std::string queue_name;                   // --queue-name
  std::string priority_class;               // --priority-class
  bool skip_endpoint_check = false;         // --skip-endpoint-check
  std::vector<std::string> env_vars;        // --env-vars (mapping)
  std::vector<std::string> labels;          // --labels (mapping)
  std::vector<std::string> annotations;     // --annotations (mapping)
  std::vector<std::string> env_from_secrets; // --env-from-secrets (mapping)
};

/// Adds every deployment flag to `cmd` (not -n/--kubeconfig/--kube-context,
/// and not --workers-per-pod, which `profile`'s flags already have).
void add_deploy_flags(CLI::App& cmd, deploy_flags& flags);

/// AIPerf's automatic job name: `<model>-<endpoint-type>-<phase-type>` as
/// a DNS label (lowercase, runs of other characters one '-'), cut to
/// k8s::manifests::max_name_length.
[[nodiscard]] std::string default_job_name(const config::profile_config& run);

/// The deployment of `flags` for `typed` (the benchmark as given, not
/// finalized: finalize() sizes workers for this machine, not for the pods)
/// in namespace `ns`, checked with k8s::manifests::validate (errors name the
/// flag). --workers-per-pod comes from `typed`; --total-workers falls back
/// to `--workers-max` (AIPerf's older name) when only that is given.
[[nodiscard]] caf::expected<k8s::manifests::deployment>
to_deployment(const deploy_flags& flags, const config::profile_config& typed, std::string ns);

/// Endpoint secrets never enter the ConfigMap (or an AIPerfJob): an API
/// key needs `--env-from-secrets` of OPENAI_API_KEY or
/// AIPERF_INJECTED_API_KEY, a credential header (Authorization,
/// Proxy-Authorization, X-Api-Key, Api-Key, Cookie) one of
/// AIPERF_INJECTED_HEADERS, a URL with user-info one of
/// AIPERF_INJECTED_ENDPOINT_URLS; else config::errc::missing with the
/// command that creates the Secret. Other headers, when no
/// AIPERF_INJECTED_HEADERS mapping exists, are added to `d.env` as
/// AIPERF_INJECTED_HEADERS (a JSON object): the run file holds every header
/// redacted, and the pods restore them from there.
[[nodiscard]] caf::expected<void> apply_secret_rule(const config::profile_config& run,
                                                    k8s::manifests::deployment& d);

/// The benchmark: `profile`'s flags and `-f/--config FILE`.
struct benchmark_flags {
  config::profile_config run;   // finalized by resolve_benchmark
  config::profile_config typed; // as given (file + flags), not finalized
  std::string config_file;
  CLI::Option* config_option = nullptr;
};

/// Adds `profile`'s flags and -f/--config to `cmd`.
void add_benchmark_flags(CLI::App& cmd, benchmark_flags& flags);

/// After a successful parse: the file (when given) under the flags typed,
/// then `typed` (raw -H/--extra-inputs/--goodput text parsed), then
/// finalize() of `run`. `--url` is required (the pods benchmark a server they
/// can reach). Returns the file's warnings; errors are config::errc.
[[nodiscard]] caf::expected<std::vector<std::string>> resolve_benchmark(CLI::App& cmd,
                                                                        benchmark_flags& flags);

/// The namespace: `explicit_ns`, else the kubeconfig context's, else
/// `default` (also when no kubeconfig can be loaded: generate needs none).
/// When --kubeconfig or --kube-context was given and cannot be loaded,
/// `warning` (if not null) says so and why.
[[nodiscard]] std::string namespace_of(const std::string& explicit_ns,
                                       const k8s::client::config_selection& sel,
                                       const k8s::client::environment& env,
                                       std::string* warning = nullptr);

/// The body of a normalised command: runs after a successful parse of `cmd`
/// and returns the exit code.
using command_body = std::function<int(CLI::App& cmd)>;

/// Adds subcommand `name` to `parent`. When it is invoked, its arguments
/// are normalised (normalize_mapping_flag_tokens) and parsed by a fresh
/// CLI::App named `<parent> <name>` that `define` fills (registering flags
/// bound to state it owns) and whose body it returns. Usage errors print
/// `error: ...` and store exit code 2; `--help` prints the flags (exit 0).
CLI::App* add_normalised_command(CLI::App& parent, const std::string& name,
                                 const std::string& description,
                                 std::function<command_body(CLI::App& cmd)> define,
                                 int& exit_code);

} // namespace aiperf::kube_command
