// The simulator's HTTPS identity: a certificate authority and a server
// certificate made fresh at every start, so no key ever lives in the tree.
// The CA goes inline into the kubeconfig (certificate-authority-data), which
// is how kubectl, python3-kubernetes and our own client trust the server
// without --insecure-skip-tls-verify.
#pragma once

#include "proto/error.hpp"

#include <string>

namespace aiperf::k8s::sim::http {

/// PEM texts of a CA certificate and of a server certificate (with its
/// private key) that CA signed.
struct tls_identity {
  std::string ca_cert_pem;
  std::string server_cert_pem;
  std::string server_key_pem;
};

/// Makes a self-signed CA ("aiperf-sim-ca") and a server certificate for the
/// subject alternative names 127.0.0.1 and localhost, both EC P-256 keys,
/// valid from one hour ago for ten years. Fails (http_server::errc::bad_config)
/// only if OpenSSL refuses a step, naming it.
[[nodiscard]] caf::expected<tls_identity> make_tls_identity();

} // namespace aiperf::k8s::sim::http
