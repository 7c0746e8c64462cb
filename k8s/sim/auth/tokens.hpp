// Service-account tokens of the simulated API server: the JWTs a
// kube-apiserver signs for TokenRequest (`kubectl create token`, projected
// volumes), their verification, and the `authentication.k8s.io/v1`
// TokenRequest and TokenReview bodies built from them.
//
// The claims are those of a bound service-account token
// (kubernetes/kubernetes pkg/serviceaccount/claims.go): iss, sub
// "system:serviceaccount:<ns>:<sa>", aud[], exp, iat, nbf, jti and the
// private claim "kubernetes.io" {namespace, serviceaccount {name, uid},
// pod {name, uid}, node {name, uid}}. Only the signature differs from a
// real cluster: HS256 with the simulator's key instead of RS256/ES256, as
// nothing outside the simulator verifies these tokens offline.
//
// Pure code, no actor: the store calls it on every authenticated request
// and owns the objects (service accounts, pods) a token is bound to.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "k8s/errors/errors.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::k8s::sim::auth {

/// Why a token was refused. Each error's message is the text
/// kube-apiserver's authenticator gives for the same failure.
enum class errc : std::uint8_t {
  malformed = 1,  // not a compact JWS, bad base64url or JSON, missing claims
  wrong_issuer,   // `iss` is not the simulator's
  bad_signature,  // the HS256 signature does not verify with the key
  expired,        // now >= exp: "service account token has expired"
  not_yet_valid,  // now < nbf: "service account token is not valid yet"
  wrong_audience, // no audience in common with the expected ones
  invalidated,    // the bound service account or pod is gone or replaced
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::k8s::sim::auth

AIPERF_ERROR_ENUM(aiperf::k8s::sim::auth::errc, "k8s_auth")

namespace aiperf::k8s::sim::auth {

/// The `iss` (and API audience) of kubeadm clusters, which client tools
/// and in-cluster code expect to see in `iss`/`aud`.
inline constexpr std::string_view default_issuer
    = "https://kubernetes.default.svc.cluster.local";

/// Keys of `user.extra` for a pod-bound token
/// (k8s.io/apiserver pkg/authentication/serviceaccount).
inline constexpr std::string_view pod_name_key
    = "authentication.kubernetes.io/pod-name";
inline constexpr std::string_view pod_uid_key
    = "authentication.kubernetes.io/pod-uid";
inline constexpr std::string_view node_name_key
    = "authentication.kubernetes.io/node-name";
inline constexpr std::string_view node_uid_key
    = "authentication.kubernetes.io/node-uid";
inline constexpr std::string_view credential_id_key
    = "authentication.kubernetes.io/credential-id";

/// What a token says. Times are Unix seconds.
struct token_claims {
  std::string issuer; // `iss`; "" = the authority's, when signing
  std::string namespace_name;
  std::string service_account;
  std::string service_account_uid;
  std::string pod_name; // "" = not bound to a pod
  std::string pod_uid;
  std::string node_name; // the bound pod's node, "" if unscheduled
  std::string node_uid;
  std::string token_id; // jti; "" = none
  /// kubernetes.io.warnafter: a projected token's requested lifetime, past
  /// which it still works (exp is a year out) but counts as stale; 0 = none.
  std::int64_t warn_after = 0;
  std::vector<std::string> audiences;
  std::int64_t issued_at = 0;  // iat
  std::int64_t not_before = 0; // nbf; 0 = iat, when signing
  std::int64_t expires_at = 0; // exp

  bool operator==(const token_claims&) const = default;
};

/// "system:serviceaccount:<ns>:<name>".
[[nodiscard]] std::string service_account_username(std::string_view ns,
                                                   std::string_view name);

/// The identity a verified token authenticates as: username
/// "system:serviceaccount:<ns>:<sa>", uid the service account's, groups
/// system:serviceaccounts, system:serviceaccounts:<ns>, system:authenticated,
/// extra pod-name/pod-uid (both set only for a pod-bound token), node-name/
/// node-uid, and credential-id "JTI=<jti>".
[[nodiscard]] user_info user_of(const token_claims& claims);

/// A request without credentials, where anonymous access is on:
/// system:anonymous in group system:unauthenticated (RBAC then grants only
/// system:public-info-viewer's paths).
[[nodiscard]] user_info anonymous_user();

/// A 32-byte key from OpenSSL's RAND_bytes, for a store without a
/// configured signing key.
[[nodiscard]] std::string random_signing_key();

/// The 401 Status of a refused credential, as kube-apiserver writes it
/// (message and reason "Unauthorized"): the store's answer to any failure
/// of authentication, whatever the cause (the cause goes to its log).
[[nodiscard]] status unauthorized_status();

/// What the store looked up for a TokenRequest
/// (`POST .../serviceaccounts/<name>/token`).
struct token_request_context {
  std::string namespace_name;
  std::string service_account;
  std::string service_account_uid;
  /// The pod named by spec.boundObjectRef (kind Pod) as stored, or null
  /// when none is named or it does not exist (then the request is 404).
  const json* bound_pod = nullptr;
  /// The Node the bound pod runs on (its spec.nodeName) as stored, or null:
  /// its name and uid go into the token (node name alone when it is not
  /// stored), as kube-apiserver 1.30+ does.
  const json* bound_pod_node = nullptr;
  std::int64_t now_unix = 0;
  /// The jti of the new token: a fresh UUID.
  std::string token_id;
};

/// Signs and verifies the simulator's service-account tokens.
class token_authority {
public:
  /// `key`: the HMAC-SHA256 key (any bytes; "" is refused by nothing but
  /// makes every token forgeable, so callers pass random_signing_key()).
  /// `issuer`: the `iss` of its tokens and the only one accepted; also the API
  /// server's audience (what a token used against the API must carry).
  explicit token_authority(std::string key,
                           std::string issuer = std::string{default_issuer});

  [[nodiscard]] const std::string& issuer() const noexcept { return issuer_; }

  /// The audiences a request to the API server itself expects: the `iss`.
  [[nodiscard]] std::vector<std::string> api_audiences() const {
    return {issuer_};
  }

  /// The compact JWS `header.payload.signature` of `claims` (`iss` filled
  /// in when empty, nbf = iat when 0).
  [[nodiscard]] std::string issue(const token_claims& claims) const;

  /// Checks form, `iss`, signature, expiry (exp, nbf) and audience: the
  /// token must share one audience with `audiences` (empty = the API
  /// audiences; a token without `aud` counts as carrying the API audiences,
  /// as legacy tokens do). Errors: auth::errc with upstream's message, e.g.
  /// expired "service account token has expired", wrong_audience
  /// `token audiences ["x"] is invalid for the target audiences ["y"]`.
  /// Does not look at the bound objects: see check_bound_objects.
  [[nodiscard]] caf::expected<token_claims>
  verify(std::string_view token, std::int64_t now_unix,
         const std::vector<std::string>& audiences = {}) const;

  /// The claims of a TokenRequest's token. `token_request` is the body
  /// (spec.audiences: default the API audiences; spec.expirationSeconds:
  /// default 3600, at least 600; spec.boundObjectRef: a Pod of the same
  /// service account, or none). A pod-bound request for 3607 s of the API
  /// audiences — what the kubelet asks for projected volumes — gets a token
  /// valid for a year with warnafter at 3607 s (kube-apiserver's
  /// --service-account-extend-token-expiration, on by default). Errors are
  /// k8s status errors as the real server answers: 422 Invalid for a
  /// too-short expiration or a metadata name/namespace other than the
  /// account's, 400 for a bound object that is not a Pod or a pod of another
  /// service account, 404 `pods "<name>" not found`, 409 when
  /// boundObjectRef.uid is not the pod's.
  [[nodiscard]] caf::expected<token_claims>
  token_request_claims(const json& token_request,
                       const token_request_context& ctx) const;

private:
  std::string key_;
  std::string issuer_;
};

/// Upstream's second check of a verified token (pkg/serviceaccount/
/// claims.go Validate): the service account must exist with the claimed uid
/// and not be deleted for more than 60 s; a pod-bound token's pod likewise.
/// `service_account`/`pod`: the stored objects, null if absent (`pod` is
/// ignored for a token not bound to a pod). Errors: errc::invalidated with
/// upstream's message ("service account token has been invalidated",
/// "pod UID (a) does not match service account pod ref claim (b)", ...).
[[nodiscard]] caf::expected<void>
check_bound_objects(const token_claims& claims, const json* service_account,
                    const json* pod, std::int64_t now_unix);

/// The `authentication.k8s.io/v1` TokenRequest the API server answers:
/// the request's spec (audiences and expirationSeconds as applied,
/// boundObjectRef) and status {token, expirationTimestamp}.
[[nodiscard]] json token_request_response(const json& token_request,
                                          std::string_view token,
                                          const token_claims& claims);

/// The `authentication.k8s.io/v1` TokenReview the API server answers for
/// `review` (spec.token, spec.audiences), given the outcome of verify +
/// check_bound_objects: on success status {authenticated: true, user
/// {username, uid, groups, extra}, audiences (the token's audiences that the
/// review asked for, or the API audiences)}; on failure status {user: {},
/// error} with the text kube-apiserver writes, e.g.
/// "[invalid bearer token, service account token has expired]".
[[nodiscard]] json
token_review_response(const json& review,
                      const caf::expected<token_claims>& outcome,
                      const std::vector<std::string>& api_audiences);

/// How the store hands its objects to the checks below: the stored object
/// of a core-group resource ("serviceaccounts", "pods", "nodes") by
/// namespace ("" for nodes) and name, or null when there is none.
using object_lookup = std::function<const json*(std::string_view resource,
                                                std::string_view namespace_name,
                                                std::string_view name)>;

/// The whole check of a bearer token that is not the admin's: verify
/// against `audiences` (empty = the API audiences), then
/// check_bound_objects with the service account and pod from `lookup`.
[[nodiscard]] caf::expected<token_claims>
authenticate_token(const token_authority& authority, std::string_view token,
                   std::int64_t now_unix, const object_lookup& lookup,
                   const std::vector<std::string>& audiences = {});

/// A TokenReview (`POST /apis/authentication.k8s.io/v1/tokenreviews`)
/// answered: authenticate_token against spec.audiences, then
/// token_review_response.
[[nodiscard]] json token_review(const token_authority& authority,
                                const json& review, std::int64_t now_unix,
                                const object_lookup& lookup);

/// A TokenRequest (`POST .../serviceaccounts/<name>/token`) answered:
/// the claims (the pod and its node from `lookup`), the signed token and
/// the response body; errors as token_request_claims.
[[nodiscard]] caf::expected<json>
token_request(const token_authority& authority, const json& token_request,
              const json& service_account, std::int64_t now_unix,
              const object_lookup& lookup, std::string token_id);

/// A SelfSubjectReview (`kubectl auth whoami`,
/// `POST /apis/authentication.k8s.io/v1/selfsubjectreviews`): a new object
/// with metadata.creationTimestamp `now` and status.userInfo {username,
/// uid, groups, extra} of `user`.
[[nodiscard]] json self_subject_review(const user_info& user,
                                       std::int64_t now_unix);

} // namespace aiperf::k8s::sim::auth
