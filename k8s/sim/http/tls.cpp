#include "k8s/sim/http/tls.hpp"

#include "runtime/http_server/http_server.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <memory>

namespace aiperf::k8s::sim::http {

namespace {

struct pkey_free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct x509_free {
  void operator()(X509* p) const { X509_free(p); }
};
struct bio_free {
  void operator()(BIO* p) const { BIO_free(p); }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_free>;
using x509_ptr = std::unique_ptr<X509, x509_free>;

caf::error openssl_error(const char* step) {
  std::string reason;
  if (auto code = ERR_get_error(); code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    reason = buf;
  }
  ERR_clear_error();
  return make_error(http_server::errc::bad_config,
                    std::string{"cannot make the simulator's TLS certificate: "}
                        + step + " failed"
                        + (reason.empty() ? "" : ": " + reason)
                        + "; check the OpenSSL installation");
}

caf::expected<pkey_ptr> make_key() {
  pkey_ptr key{EVP_EC_gen("P-256")};
  if (!key)
    return openssl_error("EC P-256 key generation");
  return key;
}

bool add_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr)
    return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

bool is_ip_address(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1
         || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

/// RFC 1123 labels joined by dots: what a DNS SAN may hold.
bool is_dns_name(const std::string& s) {
  if (s.empty() || s.size() > 253)
    return false;
  std::size_t label = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '.') {
      if (label == 0 || label > 63 || s[i - 1] == '-')
        return false;
      label = 0;
      continue;
    }
    const char c = s[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9') || (c == '-' && label > 0);
    if (!ok)
      return false;
    ++label;
  }
  return true;
}

enum class cert_kind { ca, server, client };

/// A certificate for `key`, signed by `issuer_key` (self-signed when
/// `issuer` is null). A server certificate carries `sans`; a client one the
/// subject's organizations `orgs`, which Kubernetes reads as groups.
caf::expected<x509_ptr> make_cert(EVP_PKEY* key, const std::string& common_name,
                                  X509* issuer, EVP_PKEY* issuer_key,
                                  cert_kind kind, const std::string& sans,
                                  const std::vector<std::string>& orgs = {}) {
  x509_ptr cert{X509_new()};
  if (!cert)
    return openssl_error("X509_new");
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f; // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const auto& org : orgs)
    X509_NAME_add_entry_by_txt(
        name, "O", MBSTRING_UTF8,
        reinterpret_cast<const unsigned char*>(org.c_str()), -1, -1, 0);
  X509_NAME_add_entry_by_txt(
      name, "CN", MBSTRING_UTF8,
      reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  bool ok = true;
  if (kind == cert_kind::ca) {
    ok = add_ext(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE")
         && add_ext(cert.get(), signer, NID_key_usage,
                    "critical,keyCertSign,cRLSign")
         && add_ext(cert.get(), signer, NID_subject_key_identifier, "hash");
  } else {
    ok = add_ext(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE")
         && add_ext(cert.get(), signer, NID_key_usage,
                    "critical,digitalSignature,keyEncipherment")
         && add_ext(cert.get(), signer, NID_ext_key_usage,
                    kind == cert_kind::server ? "serverAuth" : "clientAuth")
         && (kind != cert_kind::server
             || add_ext(cert.get(), signer, NID_subject_alt_name,
                        sans.c_str()))
         && add_ext(cert.get(), signer, NID_authority_key_identifier,
                    "keyid:always");
  }
  if (!ok)
    return openssl_error("adding certificate extensions");
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) == 0)
    return openssl_error("X509_sign");
  return cert;
}

std::string pem_of(X509* cert) {
  std::unique_ptr<BIO, bio_free> bio{BIO_new(BIO_s_mem())};
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  auto len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(len));
}

std::string pem_of(EVP_PKEY* key) {
  std::unique_ptr<BIO, bio_free> bio{BIO_new(BIO_s_mem())};
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr,
                           nullptr);
  char* data = nullptr;
  auto len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(len));
}

} // namespace

caf::expected<tls_identity>
make_tls_identity(const std::vector<std::string>& extra_sans) {
  std::string sans = "IP:127.0.0.1,DNS:localhost";
  for (const auto& san : extra_sans) {
    if (is_ip_address(san)) {
      sans += ",IP:" + san;
    } else if (is_dns_name(san)) {
      sans += ",DNS:" + san;
    } else {
      return make_error(http_server::errc::bad_config,
                        "cannot make the simulator's TLS certificate: the "
                        "subject alternative name '"
                            + san
                            + "' is neither an IP address nor a DNS name");
    }
  }
  auto ca_key = make_key();
  if (!ca_key)
    return ca_key.error();
  auto ca = make_cert(ca_key->get(), "aiperf-sim-ca", nullptr, ca_key->get(),
                      cert_kind::ca, "");
  if (!ca)
    return ca.error();
  auto server_key = make_key();
  if (!server_key)
    return server_key.error();
  auto server = make_cert(server_key->get(), "aiperf-sim", ca->get(),
                          ca_key->get(), cert_kind::server, sans);
  if (!server)
    return server.error();
  return tls_identity{pem_of(ca->get()), pem_of(server->get()),
                      pem_of(server_key->get()), pem_of(ca_key->get())};
}

caf::expected<client_certificate>
make_client_certificate(const tls_identity& id, const std::string& user,
                        const std::vector<std::string>& groups) {
  auto fail = [](const char* what) {
    return make_error(http_server::errc::bad_config,
                      std::string{"cannot make a client certificate: "}
                          + what);
  };
  if (user.empty())
    return fail("the user name (CN) is empty");
  std::unique_ptr<BIO, bio_free> cert_bio{
      BIO_new_mem_buf(id.ca_cert_pem.data(), static_cast<int>(id.ca_cert_pem.size()))};
  x509_ptr ca{PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)};
  std::unique_ptr<BIO, bio_free> key_bio{
      BIO_new_mem_buf(id.ca_key_pem.data(), static_cast<int>(id.ca_key_pem.size()))};
  pkey_ptr ca_key{
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr)};
  if (!ca || !ca_key)
    return fail("the identity holds no CA certificate and key");
  auto key = make_key();
  if (!key)
    return key.error();
  auto cert = make_cert(key->get(), user, ca.get(), ca_key.get(),
                        cert_kind::client, "", groups);
  if (!cert)
    return cert.error();
  return client_certificate{pem_of(cert->get()), pem_of(key->get())};
}

} // namespace aiperf::k8s::sim::http
