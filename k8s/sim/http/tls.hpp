// The simulator's HTTPS identity: a certificate authority and a server
// certificate made fresh at every start, so no key ever lives in the tree.
// The CA goes inline into the kubeconfig (certificate-authority-data), which
// is how kubectl, python3-kubernetes and our own client trust the server
// without --insecure-skip-tls-verify.
#pragma once

#include "proto/error.hpp"

#include <string>
#include <vector>

namespace aiperf::k8s::sim::http {

/// PEM texts of a CA certificate (with its key, which signs client
/// certificates) and of a server certificate (with its private key) that CA
/// signed.
struct tls_identity {
  std::string ca_cert_pem;
  std::string server_cert_pem;
  std::string server_key_pem;
  std::string ca_key_pem;
};

/// A client certificate and its private key (PEM).
struct client_certificate {
  std::string cert_pem;
  std::string key_pem;
};

/// Makes a self-signed CA ("aiperf-sim-ca") and a server certificate for the
/// subject alternative names 127.0.0.1 and localhost plus `extra_sans`
/// (each an IPv4/IPv6 address, written as an IP SAN, or a DNS name: the pod
/// network's gateway and `kubernetes.default.svc...`, which pods dial), both
/// EC P-256 keys, valid from one hour ago for ten years. Fails
/// (http_server::errc::bad_config) if OpenSSL refuses a step, naming it, or
/// for a SAN that is neither an address nor a DNS name.
[[nodiscard]] caf::expected<tls_identity>
make_tls_identity(const std::vector<std::string>& extra_sans = {});

/// A client certificate signed by `id`'s CA, as kube-apiserver's x509
/// authenticator reads one: the subject's CN is the user name, each O a
/// group (`system:masters` is the administrators' group). EC P-256, usage
/// clientAuth, valid for ten years. Fails (http_server::errc::bad_config)
/// for an empty user or an identity without its CA key.
[[nodiscard]] caf::expected<client_certificate>
make_client_certificate(const tls_identity& id, const std::string& user,
                        const std::vector<std::string>& groups);

} // namespace aiperf::k8s::sim::http
