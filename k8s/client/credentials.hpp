// Credentials that change while the client runs: a projected
// service-account token file (the kubelet rotates it; client-go re-reads it
// at most once a minute, NewCachedFileTokenSource) and exec credential
// plugins (client.authentication.k8s.io ExecCredential: a token or a client
// certificate, valid until its expirationTimestamp, fetched again then or
// after a 401).
#pragma once

#include "k8s/client/config.hpp"

#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace aiperf::k8s::client {

/// How often a token file is read at most.
inline constexpr std::int64_t token_file_period_ns = 60'000'000'000;

/// A bearer token read from a file, cached for token_file_period_ns.
class token_file_source {
public:
  explicit token_file_source(std::string path) : path_(std::move(path)) {
    // nop
  }

  /// The token as of `now_ns` (any monotonic clock): the cached one while
  /// it is younger than a minute, else the file's content (trailing
  /// whitespace dropped). A failed re-read keeps the previous token, as
  /// client-go does; with none yet it is errc::credentials naming the file.
  caf::expected<std::string> token(std::int64_t now_ns);

  /// Forces the next token() to read the file.
  void invalidate() noexcept { read_at_.reset(); }

  const std::string& path() const noexcept { return path_; }

private:
  std::string path_;
  std::string token_;
  std::optional<std::int64_t> read_at_;
};

/// What an exec plugin gave: a token, or a client certificate and key.
struct exec_credential {
  std::string token;
  std::string client_cert_pem;
  std::string client_key_pem;
  /// Unix nanoseconds of status.expirationTimestamp; 0 = never expires.
  std::int64_t expires_unix_ns = 0;

  bool operator==(const exec_credential&) const = default;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, exec_credential& x) {
  return f(caf::meta::type_name("aiperf::k8s::client::exec_credential"),
           x.token, x.client_cert_pem, x.client_key_pem, x.expires_unix_ns);
}

/// True while `c` may be used at `now_unix_ns` (wall clock).
[[nodiscard]] inline bool usable(const exec_credential& c,
                                 std::int64_t now_unix_ns) noexcept {
  return c.expires_unix_ns == 0 || now_unix_ns < c.expires_unix_ns;
}

/// The KUBERNETES_EXEC_INFO the plugin gets: an ExecCredential of the
/// configured apiVersion with spec.interactive=false and, with
/// provideClusterInfo, spec.cluster (server, certificate-authority-data,
/// tls-server-name, insecure-skip-tls-verify, proxy-url).
[[nodiscard]] std::string exec_info(const exec_config& exec,
                                    const client_config& cluster);

/// Reads a plugin's stdout. Errors (errc::credentials) name the plugin:
/// not JSON, another apiVersion than configured, no status, neither token
/// nor certificate, a certificate without its key, a bad timestamp.
[[nodiscard]] caf::expected<exec_credential>
parse_exec_credential(std::string_view text, const exec_config& exec);

/// Runs the plugin (blocking: call it off the actors' threads) with its
/// args, the process environment plus exec.env plus KUBERNETES_EXEC_INFO,
/// stdin closed and stderr passed through, and parses what it prints. A
/// missing binary names the installHint.
[[nodiscard]] caf::expected<exec_credential>
run_exec_plugin(const exec_config& exec, const client_config& cluster);

} // namespace aiperf::k8s::client
