#include "k8s/sim/auth/tokens.hpp"

namespace aiperf::k8s::sim::auth {

const char* to_string(errc x) noexcept {
  switch (x) {
  case errc::malformed:
    return "malformed";
  case errc::wrong_issuer:
    return "wrong_issuer";
  case errc::bad_signature:
    return "bad_signature";
  case errc::expired:
    return "expired";
  case errc::not_yet_valid:
    return "not_yet_valid";
  case errc::wrong_audience:
    return "wrong_audience";
  case errc::invalidated:
    return "invalidated";
  }
  return "unknown";
}

std::string service_account_username(std::string_view ns,
                                     std::string_view name) {
  std::string out{"system:serviceaccount:"};
  out.append(ns).append(":").append(name);
  return out;
}

user_info user_of(const token_claims&) {
  return {};
}
std::string random_signing_key() {
  return std::string(32, '\0');
}
status unauthorized_status() {
  return status{"Unauthorized", 401, "Unauthorized", {}};
}

token_authority::token_authority(std::string key, std::string issuer)
    : key_(std::move(key)), issuer_(std::move(issuer)) {}

std::string token_authority::issue(const token_claims&) const {
  return {};
}

caf::expected<token_claims>
token_authority::verify(std::string_view, std::int64_t,
                        const std::vector<std::string>&) const {
  return make_error(errc::malformed, "not implemented");
}

caf::expected<token_claims>
token_authority::token_request_claims(const json&,
                                      const token_request_context&) const {
  return make_error(errc::malformed, "not implemented");
}

caf::expected<void> check_bound_objects(const token_claims&, const json*,
                                        const json*, std::int64_t) {
  return {};
}

json token_request_response(const json&, std::string_view,
                            const token_claims&) {
  return {};
}

json token_review_response(const json&, const caf::expected<token_claims>&,
                           const std::vector<std::string>&) {
  return {};
}

} // namespace aiperf::k8s::sim::auth
