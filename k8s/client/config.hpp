// Where the product client finds its cluster and credentials, the way
// kubectl and client-go find them: an explicit kubeconfig (`--kubeconfig`),
// `$KUBECONFIG` (several files, merged), the pod's service account
// (in-cluster), or `~/.kube/config`. Loading is pure apart from reading
// files: the environment and the service-account directory are parameters,
// so tests point them at temp dirs.
//
// Kubeconfig merge rules (client-go tools/clientcmd/loader.go): the files
// of `$KUBECONFIG` are read in order, a missing file is skipped; for the
// maps (clusters, users, contexts by name) the first file that sets a key
// wins whole; `current-context` comes from the first file that sets it.
// Relative file references (certificate-authority, client-certificate,
// client-key, tokenFile, an exec command containing a '/') are resolved
// against the directory of the file that holds them.
#pragma once

#include "proto/error.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aiperf::k8s::client {

/// Why a configuration or a credential could not be had.
enum class errc : std::uint8_t {
  no_config = 1, // nothing to load: no kubeconfig and not in a pod
  bad_config,    // a kubeconfig or service-account file is invalid
  credentials,   // a token file, certificate or exec plugin failed
  unsupported,   // a legacy auth-provider, a proxy scheme we do not speak
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::k8s::client

AIPERF_ERROR_ENUM(aiperf::k8s::client::errc, "k8s_client")

namespace aiperf::k8s::client {

/// A `users[].user.exec` credential plugin (client.authentication.k8s.io
/// ExecConfig): how EKS, GKE and AKS kubeconfigs log in.
struct exec_config {
  std::string api_version; // client.authentication.k8s.io/v1 or v1beta1
  std::string command; // resolved against the kubeconfig's dir if it has a '/'
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  bool provide_cluster_info = false;
  std::string install_hint;
  /// Where it was configured ("kubeconfig /h/.kube/config, user eks"), for
  /// error messages.
  std::string origin;

  bool operator==(const exec_config&) const = default;
};

/// Everything needed to talk to one API server as one identity.
struct client_config {
  /// "https://10.0.0.1:443"; never with a trailing slash.
  std::string server;
  /// PEM bundle of the cluster CA; empty = the system trust store.
  std::string ca_pem;
  bool insecure_skip_tls_verify = false;
  /// Name checked against the server certificate (and sent as SNI) instead
  /// of the server's host.
  std::string tls_server_name;
  std::string client_cert_pem;
  std::string client_key_pem;
  /// A static bearer token.
  std::string token;
  /// A token file, re-read at most once a minute (projected service-account
  /// tokens rotate). Takes precedence over `token`.
  std::string token_file;
  std::string username; // basic auth, rare
  std::string password;
  std::optional<exec_config> exec;
  /// The default namespace of the context ("default" when unset).
  std::string namespace_name = "default";
  /// "http://proxy:3128" when requests go through an HTTP CONNECT proxy.
  std::string proxy_url;
  /// Where this came from: "kubeconfig /h/.kube/config, context kind-x" or
  /// "in-cluster service account /var/run/secrets/...": the start of every
  /// error message about it.
  std::string origin;
  std::string context_name;
};

/// What the process sees: environment variables, the home directory and
/// the service-account directory. Tests replace each.
struct environment {
  std::function<std::optional<std::string>(std::string_view)> getenv;
  std::string service_account_dir
      = "/var/run/secrets/kubernetes.io/serviceaccount";
};

/// The real process environment.
[[nodiscard]] environment process_environment();

/// An environment made of `vars` only (tests).
[[nodiscard]] environment
fixed_environment(std::vector<std::pair<std::string, std::string>> vars,
                  std::string service_account_dir);

/// What the user chose on the command line; empty = not given.
struct config_selection {
  std::string kubeconfig; // --kubeconfig: this file only, must exist
  std::string context;    // --kube-context
};

/// Loads the configuration as controller-runtime's GetConfig does: an
/// explicit kubeconfig; else `$KUBECONFIG`; else the in-cluster config when
/// KUBERNETES_SERVICE_HOST is set; else `~/.kube/config`. Errors name the
/// file, the key and the fix.
[[nodiscard]] caf::expected<client_config>
load_config(const config_selection& sel, const environment& env);

/// Loads and merges kubeconfig `files` (in precedence order; missing ones
/// are skipped unless `must_exist`) and resolves `context` (empty = the
/// current context).
[[nodiscard]] caf::expected<client_config>
load_kubeconfig(const std::vector<std::string>& files, std::string_view context,
                bool must_exist, const environment& env);

/// Loads the kubeconfig held in `text` as if read from `path` (relative
/// file references resolve against its directory).
[[nodiscard]] caf::expected<client_config>
load_kubeconfig_text(std::string_view text, std::string_view path,
                     std::string_view context, const environment& env);

/// The in-cluster config:
/// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT (IPv6 bracketed),
/// token file, ca.crt and namespace from `env.service_account_dir`.
[[nodiscard]] caf::expected<client_config>
load_in_cluster(const environment& env);

/// The proxy for `server` from HTTPS_PROXY/https_proxy (HTTP_PROXY for an
/// http server) unless NO_PROXY/no_proxy matches the host ("*", a host, a
/// ".domain" or "domain" suffix, an IP, a CIDR); loopback hosts are never
/// proxied (Go's net/http rule). Empty = connect directly.
[[nodiscard]] std::string proxy_from_environment(std::string_view server,
                                                 const environment& env);

/// Decodes standard base64 (padding optional, whitespace ignored); nullopt
/// when `text` is not base64.
[[nodiscard]] std::optional<std::string> base64_decode(std::string_view text);

/// Encodes standard base64 with padding.
[[nodiscard]] std::string base64_encode(std::string_view bytes);

} // namespace aiperf::k8s::client
