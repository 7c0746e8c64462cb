#include "k8s/sim/auth/tokens.hpp"

#include "k8s/sim/auth/detail.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

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

namespace {

// go-jose's DefaultLeeway: exp and nbf are checked with a minute's slack,
// and objects deleted less than a minute ago still back a token.
constexpr std::int64_t leeway_seconds = 60;

constexpr std::string_view b64url_alphabet
    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string base64url_encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() * 4 + 2) / 3);
  std::size_t i = 0;
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(in[k]); };
  for (; i + 2 < in.size(); i += 3) {
    std::uint32_t v = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out += b64url_alphabet[(v >> 18) & 63];
    out += b64url_alphabet[(v >> 12) & 63];
    out += b64url_alphabet[(v >> 6) & 63];
    out += b64url_alphabet[v & 63];
  }
  if (in.size() - i == 1) {
    std::uint32_t v = byte(i) << 16;
    out += b64url_alphabet[(v >> 18) & 63];
    out += b64url_alphabet[(v >> 12) & 63];
  } else if (in.size() - i == 2) {
    std::uint32_t v = (byte(i) << 16) | (byte(i + 1) << 8);
    out += b64url_alphabet[(v >> 18) & 63];
    out += b64url_alphabet[(v >> 12) & 63];
    out += b64url_alphabet[(v >> 6) & 63];
  }
  return out;
}

// Unpadded base64url only (RFC 7515 §2), as Go's RawURLEncoding.
std::optional<std::string> base64url_decode(std::string_view in) {
  if (in.size() % 4 == 1)
    return std::nullopt;
  std::string out;
  out.reserve(in.size() * 3 / 4);
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    auto pos = b64url_alphabet.find(c);
    if (pos == std::string_view::npos)
      return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  // Leftover bits must be zero, as Go's strict decoder requires.
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0)
    return std::nullopt;
  return out;
}

std::string hmac_sha256(std::string_view key, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(),
       mac.data(), &len);
  return std::string(reinterpret_cast<const char*>(mac.data()), len);
}

std::string sha256(std::string_view data) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> md{};
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(),
         md.data());
  return std::string(reinterpret_cast<const char*>(md.data()), md.size());
}

std::string string_at(const json& obj, std::string_view key) {
  if (!obj.is_object())
    return {};
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string())
    return {};
  return it->get<std::string>();
}

const json& object_or_empty(const json& obj, std::string_view key) {
  static const json empty = json::object();
  if (!obj.is_object())
    return empty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : empty;
}

std::int64_t int_at(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number())
    return 0;
  if (it->is_number_float())
    return static_cast<std::int64_t>(it->get<double>());
  return it->get<std::int64_t>();
}

json ref_json(std::string_view name, std::string_view uid) {
  json ref = json::object();
  if (!name.empty())
    ref["name"] = name;
  if (!uid.empty())
    ref["uid"] = uid;
  return ref;
}

// Keys in the order go-jose writes them: it merges the public and private
// claims through a map, so every level comes out sorted.
json payload_of(const token_claims& c) {
  json p = json::object();
  p["aud"] = c.audiences;
  p["exp"] = c.expires_at;
  p["iat"] = c.issued_at;
  p["iss"] = c.issuer;
  if (!c.token_id.empty())
    p["jti"] = c.token_id;
  json k8s = json::object();
  k8s["namespace"] = c.namespace_name;
  if (!c.node_name.empty() || !c.node_uid.empty())
    k8s["node"] = ref_json(c.node_name, c.node_uid);
  if (!c.pod_name.empty() || !c.pod_uid.empty())
    k8s["pod"] = ref_json(c.pod_name, c.pod_uid);
  k8s["serviceaccount"] = ref_json(c.service_account, c.service_account_uid);
  if (c.warn_after != 0)
    k8s["warnafter"] = c.warn_after;
  p["kubernetes.io"] = std::move(k8s);
  p["nbf"] = c.not_before != 0 ? c.not_before : c.issued_at;
  p["sub"] = service_account_username(c.namespace_name, c.service_account);
  return p;
}

caf::error malformed(std::string why) {
  return make_error(errc::malformed,
                    "malformed service account token: " + std::move(why));
}

caf::expected<token_claims> claims_of(const json& p) {
  if (!p.is_object())
    return malformed("the payload is not a JSON object");
  token_claims c;
  c.issuer = string_at(p, "iss");
  if (auto aud = p.find("aud"); aud != p.end()) {
    // jwt.Audience takes a single string or a list.
    if (aud->is_string()) {
      c.audiences.push_back(aud->get<std::string>());
    } else if (aud->is_array()) {
      for (const auto& a : *aud) {
        if (!a.is_string())
          return malformed("aud holds a non-string");
        c.audiences.push_back(a.get<std::string>());
      }
    } else if (!aud->is_null()) {
      return malformed("aud is neither a string nor a list");
    }
  }
  c.issued_at = int_at(p, "iat");
  c.not_before = int_at(p, "nbf");
  c.expires_at = int_at(p, "exp");
  c.token_id = string_at(p, "jti");
  auto k = p.find("kubernetes.io");
  if (k == p.end() || !k->is_object())
    return malformed("no \"kubernetes.io\" claim");
  c.namespace_name = string_at(*k, "namespace");
  if (auto sa = k->find("serviceaccount"); sa != k->end()) {
    c.service_account = string_at(*sa, "name");
    c.service_account_uid = string_at(*sa, "uid");
  }
  if (auto pod = k->find("pod"); pod != k->end()) {
    c.pod_name = string_at(*pod, "name");
    c.pod_uid = string_at(*pod, "uid");
  }
  if (auto node = k->find("node"); node != k->end()) {
    c.node_name = string_at(*node, "name");
    c.node_uid = string_at(*node, "uid");
  }
  c.warn_after = int_at(*k, "warnafter");
  if (c.namespace_name.empty() || c.service_account.empty())
    return malformed(
        "no namespace or service account in the \"kubernetes.io\" claim");
  if (string_at(p, "sub")
      != service_account_username(c.namespace_name, c.service_account))
    return malformed(
        "sub does not name the service account of the \"kubernetes.io\" claim");
  return c;
}

std::vector<std::string> intersect(const std::vector<std::string>& a,
                                   const std::vector<std::string>& b) {
  std::vector<std::string> out;
  for (const auto& x : a)
    if (std::find(b.begin(), b.end(), x) != b.end()
        && std::find(out.begin(), out.end(), x) == out.end())
      out.push_back(x);
  return out;
}

status status_of_failure(std::string reason, std::int32_t code,
                         std::string message, std::string name = {},
                         std::string group = {}, std::string kind = {}) {
  status st{std::move(reason), code, std::move(message), {}};
  st.details.name = std::move(name);
  st.details.group = std::move(group);
  st.details.kind = std::move(kind);
  return st;
}

caf::error bad_request(std::string message) {
  auto st = status_of_failure("BadRequest", 400, message);
  return make_error(k8s::errc::invalid, std::move(message), std::move(st));
}

} // namespace

std::string service_account_username(std::string_view ns,
                                     std::string_view name) {
  std::string out{"system:serviceaccount:"};
  out.append(ns).append(":").append(name);
  return out;
}

user_info user_of(const token_claims& c) {
  user_info u;
  u.username = service_account_username(c.namespace_name, c.service_account);
  u.uid = c.service_account_uid;
  u.groups
      = {"system:serviceaccounts", "system:serviceaccounts:" + c.namespace_name,
         "system:authenticated"};
  if (!c.pod_name.empty() && !c.pod_uid.empty()) {
    u.extra[std::string{pod_name_key}] = {c.pod_name};
    u.extra[std::string{pod_uid_key}] = {c.pod_uid};
  }
  if (!c.token_id.empty())
    u.extra[std::string{credential_id_key}] = {"JTI=" + c.token_id};
  if (!c.node_name.empty())
    u.extra[std::string{node_name_key}] = {c.node_name};
  if (!c.node_uid.empty())
    u.extra[std::string{node_uid_key}] = {c.node_uid};
  return u;
}

user_info anonymous_user() {
  return user_info{"system:anonymous", "", {"system:unauthenticated"}, {}};
}

std::string random_signing_key() {
  std::string key(32, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()),
                 static_cast<int>(key.size()))
      != 1) {
    // No entropy source: fall back to the address-space layout and clock, a
    // weak key, but the simulator's tokens only need to be unguessable by
    // tests that do not try.
    auto seed
        = std::to_string(reinterpret_cast<std::uintptr_t>(&key))
          + std::to_string(
              std::chrono::steady_clock::now().time_since_epoch().count());
    key = sha256(seed);
  }
  return key;
}

status unauthorized_status() {
  return status{"Unauthorized", 401, "Unauthorized", {}};
}

token_authority::token_authority(std::string key, std::string issuer)
    : key_(std::move(key)), issuer_(std::move(issuer)) {}

std::string token_authority::issue(const token_claims& claims) const {
  auto c = claims;
  if (c.issuer.empty())
    c.issuer = issuer_;
  json header = json::object();
  header["alg"] = "HS256";
  // A key id that names the key without revealing it (as upstream derives
  // kid from a hash of the public key).
  header["kid"] = base64url_encode(sha256("aiperf-sim-sa-key:" + key_));
  auto signing_input = base64url_encode(header.dump()) + "."
                       + base64url_encode(payload_of(c).dump());
  auto signature = base64url_encode(hmac_sha256(key_, signing_input));
  return signing_input + "." + signature;
}

caf::expected<token_claims>
token_authority::verify(std::string_view token, std::int64_t now_unix,
                        const std::vector<std::string>& audiences) const {
  auto dot1 = token.find('.');
  auto dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos
      || token.find('.', dot2 + 1) != std::string_view::npos)
    return malformed("not a compact JWS (header.payload.signature)");
  auto header_text = base64url_decode(token.substr(0, dot1));
  auto payload_text = base64url_decode(token.substr(dot1 + 1, dot2 - dot1 - 1));
  auto signature = base64url_decode(token.substr(dot2 + 1));
  if (!header_text || !payload_text || !signature)
    return malformed("a part is not unpadded base64url");
  auto header = json::parse(*header_text, nullptr, false);
  auto payload = json::parse(*payload_text, nullptr, false);
  if (header.is_discarded() || payload.is_discarded() || !header.is_object())
    return malformed("a part is not JSON");
  // Upstream reads `iss` before anything else: a token signed elsewhere is
  // not this authenticator's at all.
  auto iss = string_at(payload, "iss");
  if (iss != issuer_)
    return make_error(errc::wrong_issuer,
                      "token issuer \"" + iss + "\" is invalid");
  auto expected_signature = hmac_sha256(key_, token.substr(0, dot2));
  if (string_at(header, "alg") != "HS256"
      || signature->size() != expected_signature.size()
      || CRYPTO_memcmp(signature->data(), expected_signature.data(),
                       expected_signature.size())
             != 0)
    return make_error(errc::bad_signature,
                      "go-jose/go-jose: error in cryptographic primitive");
  auto claims = claims_of(payload);
  if (!claims)
    return std::move(claims.error());
  auto token_auds
      = claims->audiences.empty() ? api_audiences() : claims->audiences;
  auto target = audiences.empty() ? api_audiences() : audiences;
  if (intersect(token_auds, target).empty())
    return make_error(errc::wrong_audience,
                      "token audiences " + detail::go_quote_list(token_auds)
                          + " is invalid for the target audiences "
                          + detail::go_quote_list(target));
  if (claims->expires_at != 0 && now_unix - leeway_seconds > claims->expires_at)
    return make_error(errc::expired, "service account token has expired");
  if (claims->not_before != 0 && now_unix + leeway_seconds < claims->not_before)
    return make_error(errc::not_yet_valid,
                      "service account token is not valid yet");
  return claims;
}

caf::expected<token_claims>
token_authority::token_request_claims(const json& token_request,
                                      const token_request_context& ctx) const {
  const json empty = json::object();
  const json& spec = token_request.is_object() && token_request.contains("spec")
                             && token_request["spec"].is_object()
                         ? token_request["spec"]
                         : empty;
  auto invalid = [](std::string name, std::string field, std::string value,
                    std::string why) {
    auto cause_message = "Invalid value: " + value + ": " + why;
    auto message = "TokenRequest.authentication.k8s.io \"" + name
                   + "\" is invalid: " + field + ": " + cause_message;
    auto st = status_of_failure("Invalid", 422, message, name,
                                "authentication.k8s.io", "TokenRequest");
    st.details.causes.push_back({"FieldValueInvalid", cause_message, field});
    return make_error(k8s::errc::invalid, std::move(message), std::move(st));
  };
  const auto& meta = object_or_empty(token_request, "metadata");
  if (auto name = string_at(meta, "name");
      !name.empty() && name != ctx.service_account)
    return invalid(ctx.service_account, "metadata.name", k8s::go_quote(name),
                   "must match the service account name if specified");
  if (auto ns = string_at(meta, "namespace");
      !ns.empty() && ns != ctx.namespace_name)
    return invalid(ctx.service_account, "metadata.namespace",
                   k8s::go_quote(ns),
                   "must match the service account namespace if specified");
  token_claims c;
  c.issuer = issuer_;
  c.namespace_name = ctx.namespace_name;
  c.service_account = ctx.service_account;
  c.service_account_uid = ctx.service_account_uid;
  c.token_id = ctx.token_id;
  if (auto auds = spec.find("audiences");
      auds != spec.end() && auds->is_array())
    for (const auto& a : *auds)
      if (a.is_string())
        c.audiences.push_back(a.get<std::string>());
  if (c.audiences.empty())
    c.audiences = api_audiences();
  // pkg/apis/authentication/v1 defaults: an hour.
  std::int64_t seconds = spec.contains("expirationSeconds")
                             ? int_at(spec, "expirationSeconds")
                             : 3600;
  // Static validation names no object (NewInvalid with name "").
  if (seconds < 600)
    return invalid("", "spec.expirationSeconds", std::to_string(seconds),
                   "may not specify a duration less than 10 minutes");
  if (seconds > (std::int64_t{1} << 32))
    return invalid("", "spec.expirationSeconds", std::to_string(seconds),
                   "may not specify a duration larger than 2^32 seconds");
  c.issued_at = ctx.now_unix;
  c.not_before = ctx.now_unix;
  c.expires_at = ctx.now_unix + seconds;
  if (auto ref = spec.find("boundObjectRef");
      ref != spec.end() && ref->is_object()) {
    auto kind = string_at(*ref, "kind");
    auto api_version = string_at(*ref, "apiVersion");
    auto name = string_at(*ref, "name");
    auto uid = string_at(*ref, "uid");
    if (kind != "Pod" || (!api_version.empty() && api_version != "v1")) {
      auto group = api_version.find('/') == std::string::npos
                       ? std::string{}
                       : api_version.substr(0, api_version.find('/'));
      auto version
          = api_version.substr(api_version.find('/') == std::string::npos
                                   ? 0
                                   : api_version.find('/') + 1);
      return bad_request("cannot bind token to object of type " + group + "/"
                         + version + ", Kind=" + kind);
    }
    if (ctx.bound_pod == nullptr) {
      auto message = "pods \"" + name + "\" not found";
      auto st = status_of_failure("NotFound", 404, message, name, "", "pods");
      return make_error(k8s::errc::not_found, std::move(message),
                        std::move(st));
    }
    const auto& pod = *ctx.bound_pod;
    auto pod_meta = object_or_empty(pod, "metadata");
    auto pod_uid = string_at(pod_meta, "uid");
    if (!uid.empty() && uid != pod_uid) {
      auto message = "Operation cannot be fulfilled on Pod \"" + name
                     + "\": the UID in the bound object reference (" + uid
                     + ") does not match the UID in record. The object might "
                       "have been deleted "
                       "and then recreated";
      auto st = status_of_failure("Conflict", 409, message, name, "", "Pod");
      return make_error(k8s::errc::conflict, std::move(message), std::move(st));
    }
    auto pod_sa = string_at(object_or_empty(pod, "spec"), "serviceAccountName");
    if (pod_sa.empty())
      pod_sa = "default";
    if (pod_sa != ctx.service_account)
      return bad_request(
          "cannot bind token for serviceaccount \"" + ctx.service_account
          + "\" to pod running with different serviceaccount name.");
    c.pod_name = name;
    c.pod_uid = pod_uid;
    if (auto node = string_at(object_or_empty(pod, "spec"), "nodeName");
        !node.empty()) {
      c.node_name = node;
      if (ctx.bound_pod_node != nullptr)
        c.node_uid = string_at(object_or_empty(*ctx.bound_pod_node, "metadata"),
                               "uid");
    }
    // The kubelet's projected tokens: valid for a year, stale after 3607 s.
    bool api_only = std::all_of(c.audiences.begin(), c.audiences.end(),
                                [&](const auto& a) { return a == issuer_; });
    if (seconds == 3607 && api_only) {
      c.warn_after = ctx.now_unix + seconds;
      c.expires_at = ctx.now_unix + std::int64_t{24} * 365 * 60 * 60;
    }
  }
  return c;
}

caf::expected<void> check_bound_objects(const token_claims& claims,
                                        const json* service_account,
                                        const json* pod,
                                        std::int64_t now_unix) {
  auto deleted_long_ago = [&](const json& obj) {
    auto meta = object_or_empty(obj, "metadata");
    auto ts = string_at(meta, "deletionTimestamp");
    if (ts.empty())
      return false;
    auto t = detail::parse_time(ts);
    return t && *t < now_unix - leeway_seconds;
  };
  if (service_account == nullptr)
    return make_error(errc::invalidated, "serviceaccounts \""
                                             + claims.service_account
                                             + "\" not found");
  if (deleted_long_ago(*service_account))
    return make_error(errc::invalidated,
                      "service account " + claims.namespace_name + "/"
                          + claims.service_account + " has been deleted");
  auto sa_uid = string_at(object_or_empty(*service_account, "metadata"), "uid");
  if (sa_uid != claims.service_account_uid)
    return make_error(errc::invalidated, "service account UID (" + sa_uid
                                             + ") does not match claim ("
                                             + claims.service_account_uid
                                             + ")");
  if (claims.pod_name.empty())
    return {};
  if (pod == nullptr || deleted_long_ago(*pod))
    return make_error(errc::invalidated,
                      "service account token has been invalidated");
  auto pod_uid = string_at(object_or_empty(*pod, "metadata"), "uid");
  if (pod_uid != claims.pod_uid)
    return make_error(errc::invalidated,
                      "pod UID (" + pod_uid
                          + ") does not match service account pod ref claim ("
                          + claims.pod_uid + ")");
  return {};
}

json token_request_response(const json& token_request, std::string_view token,
                            const token_claims& claims) {
  json out = json::object();
  out["kind"] = "TokenRequest";
  out["apiVersion"] = "authentication.k8s.io/v1";
  json meta = token_request.is_object()
                  ? token_request.value("metadata", json::object())
                  : json::object();
  if (!meta.is_object())
    meta = json::object();
  if (!meta.contains("name"))
    meta["name"] = claims.service_account;
  if (!meta.contains("namespace"))
    meta["namespace"] = claims.namespace_name;
  meta["creationTimestamp"] = detail::format_time(claims.issued_at);
  out["metadata"] = std::move(meta);
  // The lifetime asked for: a projected token's exp lies a year out, its
  // expirationTimestamp does not.
  auto lifetime
      = (claims.warn_after != 0 ? claims.warn_after : claims.expires_at)
        - claims.issued_at;
  json spec = json::object();
  spec["audiences"] = claims.audiences;
  spec["expirationSeconds"] = lifetime;
  const auto& ref = object_or_empty(object_or_empty(token_request, "spec"),
                                    "boundObjectRef");
  spec["boundObjectRef"] = ref.empty() ? json(nullptr) : ref;
  out["spec"] = std::move(spec);
  out["status"] = json{{"token", token},
                       {"expirationTimestamp",
                        detail::format_time(claims.issued_at + lifetime)}};
  return out;
}

json token_review_response(const json& review,
                           const caf::expected<token_claims>& outcome,
                           const std::vector<std::string>& api_audiences) {
  json out = json::object();
  out["kind"] = "TokenReview";
  out["apiVersion"] = "authentication.k8s.io/v1";
  json meta = review.is_object() ? review.value("metadata", json::object())
                                 : json::object();
  if (!meta.is_object())
    meta = json::object();
  if (!meta.contains("creationTimestamp"))
    meta["creationTimestamp"] = nullptr;
  out["metadata"] = std::move(meta);
  json spec = review.is_object() ? review.value("spec", json::object())
                                 : json::object();
  if (!spec.is_object())
    spec = json::object();
  out["spec"] = spec;
  json st = json::object();
  if (outcome) {
    std::vector<std::string> asked;
    if (auto a = spec.find("audiences"); a != spec.end() && a->is_array())
      for (const auto& x : *a)
        if (x.is_string())
          asked.push_back(x.get<std::string>());
    if (asked.empty())
      asked = api_audiences;
    auto token_auds
        = outcome->audiences.empty() ? api_audiences : outcome->audiences;
    auto u = user_of(*outcome);
    st["authenticated"] = true;
    json user = json::object();
    user["username"] = u.username;
    if (!u.uid.empty())
      user["uid"] = u.uid;
    user["groups"] = u.groups;
    if (!u.extra.empty()) {
      json extra = json::object();
      for (const auto& [k, v] : u.extra)
        extra[k] = v;
      user["extra"] = std::move(extra);
    }
    st["user"] = std::move(user);
    auto auds = intersect(token_auds, asked);
    if (!auds.empty())
      st["audiences"] = auds;
  } else {
    st["user"] = json::object();
    const auto& err = outcome.error();
    // The request authenticator's words: "invalid bearer token" when no
    // token authenticator recognised the token, else that one's reason
    // after it, aggregated as Go's utilerrors print a list.
    if (is_error(err, errc::malformed) || is_error(err, errc::wrong_issuer))
      st["error"] = "invalid bearer token";
    else
      st["error"] = "[invalid bearer token, " + error_message(err) + "]";
  }
  out["status"] = std::move(st);
  return out;
}

caf::expected<token_claims>
authenticate_token(const token_authority& authority, std::string_view token,
                   std::int64_t now_unix, const object_lookup& lookup,
                   const std::vector<std::string>& audiences) {
  auto claims = authority.verify(token, now_unix, audiences);
  if (!claims)
    return claims;
  const json* sa = lookup("serviceaccounts", claims->namespace_name,
                          claims->service_account);
  const json* pod
      = claims->pod_name.empty()
            ? nullptr
            : lookup("pods", claims->namespace_name, claims->pod_name);
  if (auto ok = check_bound_objects(*claims, sa, pod, now_unix); !ok)
    return std::move(ok.error());
  return claims;
}

json token_review(const token_authority& authority, const json& review,
                  std::int64_t now_unix, const object_lookup& lookup) {
  const auto& spec = object_or_empty(review, "spec");
  std::vector<std::string> audiences;
  if (auto a = spec.find("audiences"); a != spec.end() && a->is_array())
    for (const auto& x : *a)
      if (x.is_string())
        audiences.push_back(x.get<std::string>());
  auto outcome = authenticate_token(authority, string_at(spec, "token"),
                                    now_unix, lookup, audiences);
  return token_review_response(review, outcome, authority.api_audiences());
}

caf::expected<json> token_request(const token_authority& authority,
                                  const json& body, const json& service_account,
                                  std::int64_t now_unix,
                                  const object_lookup& lookup,
                                  std::string token_id) {
  const auto& meta = object_or_empty(service_account, "metadata");
  token_request_context ctx;
  ctx.namespace_name = string_at(meta, "namespace");
  ctx.service_account = string_at(meta, "name");
  ctx.service_account_uid = string_at(meta, "uid");
  ctx.now_unix = now_unix;
  ctx.token_id = std::move(token_id);
  const auto& ref
      = object_or_empty(object_or_empty(body, "spec"), "boundObjectRef");
  if (string_at(ref, "kind") == "Pod") {
    ctx.bound_pod = lookup("pods", ctx.namespace_name, string_at(ref, "name"));
    if (ctx.bound_pod != nullptr) {
      auto node
          = string_at(object_or_empty(*ctx.bound_pod, "spec"), "nodeName");
      if (!node.empty())
        ctx.bound_pod_node = lookup("nodes", "", node);
    }
  }
  auto claims = authority.token_request_claims(body, ctx);
  if (!claims)
    return std::move(claims.error());
  return token_request_response(body, authority.issue(*claims), *claims);
}

json self_subject_review(const user_info& user, std::int64_t now_unix) {
  json info = json::object();
  info["username"] = user.username;
  if (!user.uid.empty())
    info["uid"] = user.uid;
  if (!user.groups.empty())
    info["groups"] = user.groups;
  if (!user.extra.empty()) {
    json extra = json::object();
    for (const auto& [k, v] : user.extra)
      extra[k] = v;
    info["extra"] = std::move(extra);
  }
  return json{
      {"kind", "SelfSubjectReview"},
      {"apiVersion", "authentication.k8s.io/v1"},
      {"metadata", {{"creationTimestamp", detail::format_time(now_unix)}}},
      {"status", {{"userInfo", std::move(info)}}}};
}

} // namespace aiperf::k8s::sim::auth
