#include "k8s/sim/auth/tokens.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::auth {
namespace {

constexpr std::int64_t now = 1796184000; // 2026-12-02T04:00:00Z
const std::string api_audience{default_issuer};

// Base64url without padding, decoded with OpenSSL's plain base64 so that
// the test does not trust the code under test.
std::string unbase64url(std::string s) {
  for (auto& c : s)
    c = c == '-' ? '+' : c == '_' ? '/' : c;
  while (s.size() % 4 != 0)
    s += '=';
  std::string out(s.size(), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(s.data()),
                          static_cast<int>(s.size()));
  EXPECT_GE(n, 0);
  out.resize(static_cast<std::size_t>(n) - std::count(s.begin(), s.end(), '='));
  return out;
}

std::string part(const std::string& token, int index) {
  auto a = token.find('.');
  auto b = token.find('.', a + 1);
  if (index == 0)
    return token.substr(0, a);
  if (index == 1)
    return token.substr(a + 1, b - a - 1);
  return token.substr(b + 1);
}

token_claims pod_bound_claims() {
  token_claims c;
  c.namespace_name = "bench";
  c.service_account = "default";
  c.service_account_uid = "sa-uid-1";
  c.pod_name = "aiperf-j1-controller-0";
  c.pod_uid = "pod-uid-1";
  c.token_id = "jti-1";
  c.audiences = {api_audience, "aiperf-results"};
  c.issued_at = now;
  c.expires_at = now + 3600;
  return c;
}

json service_account(std::string uid, std::string deletion = {}) {
  json sa = {{"apiVersion", "v1"},
             {"kind", "ServiceAccount"},
             {"metadata",
              {{"name", "default"}, {"namespace", "bench"}, {"uid", uid}}}};
  if (!deletion.empty())
    sa["metadata"]["deletionTimestamp"] = deletion;
  return sa;
}

json pod(std::string uid, std::string sa = "default",
         std::string deletion = {}) {
  json p
      = {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata",
          {{"name", "aiperf-j1-controller-0"},
           {"namespace", "bench"},
           {"uid", uid}}},
         {"spec", {{"serviceAccountName", sa}, {"containers", json::array()}}}};
  if (!deletion.empty())
    p["metadata"]["deletionTimestamp"] = deletion;
  return p;
}

TEST(k8s_sim_auth_tokens, the_username_of_a_service_account) {
  EXPECT_EQ(service_account_username("bench", "default"),
            "system:serviceaccount:bench:default");
}

TEST(k8s_sim_auth_tokens,
     a_token_is_a_hs256_jws_with_the_claims_of_a_bound_token) {
  token_authority authority{"k1"};
  auto token = authority.issue(pod_bound_claims());
  EXPECT_EQ(std::count(token.begin(), token.end(), '.'), 2);
  auto header = json::parse(unbase64url(part(token, 0)));
  EXPECT_EQ(header["alg"], "HS256");
  EXPECT_FALSE(header["kid"].get<std::string>().empty());
  // Keys sorted at every level, as go-jose writes them.
  EXPECT_EQ(
      unbase64url(part(token, 1)),
      R"({"aud":["https://kubernetes.default.svc.cluster.local","aiperf-results"],)"
      R"("exp":1796187600,"iat":1796184000,)"
      R"("iss":"https://kubernetes.default.svc.cluster.local","jti":"jti-1",)"
      R"("kubernetes.io":{"namespace":"bench",)"
      R"("pod":{"name":"aiperf-j1-controller-0","uid":"pod-uid-1"},)"
      R"("serviceaccount":{"name":"default","uid":"sa-uid-1"}},)"
      R"("nbf":1796184000,"sub":"system:serviceaccount:bench:default"})");
  EXPECT_EQ(part(token, 2).find('='), std::string::npos);
}

TEST(k8s_sim_auth_tokens, verify_returns_the_claims_it_was_given) {
  token_authority authority{"k1"};
  auto claims = pod_bound_claims();
  auto verified = authority.verify(authority.issue(claims), now + 10);
  ASSERT_TRUE(verified) << error_message(verified.error());
  claims.issuer = api_audience;
  claims.not_before = now;
  EXPECT_EQ(*verified, claims);
}

TEST(k8s_sim_auth_tokens,
     an_expired_token_is_refused_after_a_minute_of_leeway) {
  token_authority authority{"k1"};
  auto token = authority.issue(pod_bound_claims());
  EXPECT_TRUE(authority.verify(token, now + 3600 + 60));
  auto late = authority.verify(token, now + 3600 + 61);
  ASSERT_FALSE(late);
  EXPECT_TRUE(is_error(late.error(), errc::expired));
  EXPECT_EQ(error_message(late.error()), "service account token has expired");
}

TEST(k8s_sim_auth_tokens, a_token_before_its_nbf_is_not_valid_yet) {
  token_authority authority{"k1"};
  auto claims = pod_bound_claims();
  claims.not_before = now + 1000;
  auto early = authority.verify(authority.issue(claims), now);
  ASSERT_FALSE(early);
  EXPECT_TRUE(is_error(early.error(), errc::not_yet_valid));
  EXPECT_EQ(error_message(early.error()),
            "service account token is not valid yet");
}

TEST(k8s_sim_auth_tokens,
     a_token_for_another_audience_is_refused_with_upstreams_words) {
  token_authority authority{"k1"};
  auto claims = pod_bound_claims();
  claims.audiences = {"aiperf-results"};
  auto token = authority.issue(claims);
  auto against_api = authority.verify(token, now);
  ASSERT_FALSE(against_api);
  EXPECT_TRUE(is_error(against_api.error(), errc::wrong_audience));
  EXPECT_EQ(
      error_message(against_api.error()),
      R"(token audiences ["aiperf-results"] is invalid for the target audiences )"
      R"(["https://kubernetes.default.svc.cluster.local"])");
  EXPECT_TRUE(authority.verify(token, now, {"other", "aiperf-results"}));
}

TEST(k8s_sim_auth_tokens, a_token_without_aud_counts_as_one_for_the_api) {
  token_authority authority{"k1"};
  auto claims = pod_bound_claims();
  claims.audiences.clear();
  auto token = authority.issue(claims);
  EXPECT_TRUE(authority.verify(token, now));
  EXPECT_FALSE(authority.verify(token, now, {"aiperf-results"}));
}

TEST(k8s_sim_auth_tokens,
     another_key_or_a_changed_payload_breaks_the_signature) {
  token_authority authority{"k1"};
  token_authority forger{"k2"};
  auto forged = authority.verify(forger.issue(pod_bound_claims()), now);
  ASSERT_FALSE(forged);
  EXPECT_TRUE(is_error(forged.error(), errc::bad_signature));
  EXPECT_EQ(error_message(forged.error()),
            "go-jose/go-jose: error in cryptographic primitive");

  auto token = authority.issue(pod_bound_claims());
  auto other = pod_bound_claims();
  other.namespace_name = "kube-system";
  auto tampered = part(token, 0) + "." + part(forger.issue(other), 1) + "."
                  + part(token, 2);
  auto r = authority.verify(tampered, now);
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), errc::bad_signature));
}

TEST(k8s_sim_auth_tokens, a_token_of_another_issuer_is_not_ours) {
  token_authority authority{"k1"};
  token_authority other{"k1", "https://elsewhere.example"};
  auto r = authority.verify(other.issue(pod_bound_claims()), now);
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), errc::wrong_issuer));
  EXPECT_EQ(error_message(r.error()),
            R"(token issuer "https://elsewhere.example" is invalid)");
}

TEST(k8s_sim_auth_tokens, malformed_tokens_name_what_is_wrong) {
  token_authority authority{"k1"};
  auto good = authority.issue(pod_bound_claims());
  for (std::string bad :
       {std::string{""}, std::string{"abc"}, std::string{"a.b"}, good + ".x",
        std::string{"!!.@@.##"}, std::string{"e30.e30=.x"},
        std::string{"bm90IGpzb24.bm90IGpzb24.x"}}) {
    auto r = authority.verify(bad, now);
    ASSERT_FALSE(r) << bad;
    EXPECT_TRUE(is_error(r.error(), errc::malformed))
        << bad << ": " << error_message(r.error());
    EXPECT_EQ(
        error_message(r.error()).rfind("malformed service account token: ", 0),
        0u);
  }
}

TEST(k8s_sim_auth_tokens,
     a_signed_token_without_a_service_account_is_malformed) {
  token_authority authority{"k1"};
  auto claims = pod_bound_claims();
  claims.service_account.clear();
  auto r = authority.verify(authority.issue(claims), now);
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), errc::malformed));
}

TEST(k8s_sim_auth_tokens, the_user_of_a_pod_bound_token) {
  auto u = user_of(pod_bound_claims());
  EXPECT_EQ(u.username, "system:serviceaccount:bench:default");
  EXPECT_EQ(u.uid, "sa-uid-1");
  EXPECT_EQ(u.groups, (std::vector<std::string>{"system:serviceaccounts",
                                                "system:serviceaccounts:bench",
                                                "system:authenticated"}));
  EXPECT_EQ(
      u.extra,
      (std::map<std::string, std::vector<std::string>>{
          {"authentication.kubernetes.io/credential-id", {"JTI=jti-1"}},
          {"authentication.kubernetes.io/pod-name", {"aiperf-j1-controller-0"}},
          {"authentication.kubernetes.io/pod-uid", {"pod-uid-1"}}}));
}

TEST(k8s_sim_auth_tokens, an_unbound_token_has_no_pod_extra) {
  auto claims = pod_bound_claims();
  claims.pod_name.clear();
  claims.pod_uid.clear();
  claims.token_id.clear();
  EXPECT_TRUE(user_of(claims).extra.empty());
}

TEST(k8s_sim_auth_tokens, random_keys_are_32_bytes_and_differ) {
  auto a = random_signing_key();
  auto b = random_signing_key();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
}

TEST(k8s_sim_auth_tokens, the_unauthorized_status) {
  auto st = unauthorized_status();
  EXPECT_EQ(st.reason, "Unauthorized");
  EXPECT_EQ(st.code, 401);
  EXPECT_EQ(st.message, "Unauthorized");
}

token_request_context context(const json* bound = nullptr) {
  token_request_context ctx;
  ctx.namespace_name = "bench";
  ctx.service_account = "default";
  ctx.service_account_uid = "sa-uid-1";
  ctx.bound_pod = bound;
  ctx.now_unix = now;
  ctx.token_id = "jti-9";
  return ctx;
}

TEST(k8s_sim_auth_tokens, a_token_request_defaults_to_an_hour_for_the_api) {
  token_authority authority{"k1"};
  json req = {{"apiVersion", "authentication.k8s.io/v1"},
              {"kind", "TokenRequest"},
              {"spec", json::object()}};
  auto claims = authority.token_request_claims(req, context());
  ASSERT_TRUE(claims) << error_message(claims.error());
  EXPECT_EQ(claims->audiences, std::vector<std::string>{api_audience});
  EXPECT_EQ(claims->issued_at, now);
  EXPECT_EQ(claims->expires_at, now + 3600);
  EXPECT_EQ(claims->token_id, "jti-9");
  EXPECT_TRUE(claims->pod_name.empty());

  auto token = authority.issue(*claims);
  EXPECT_EQ(
      token_request_response(req, token, *claims).dump(),
      R"({"kind":"TokenRequest","apiVersion":"authentication.k8s.io/v1",)"
      R"("metadata":{"name":"default","namespace":"bench",)"
      R"("creationTimestamp":"2026-12-02T04:00:00Z"},)"
      R"("spec":{"audiences":["https://kubernetes.default.svc.cluster.local"],)"
      R"("expirationSeconds":3600,"boundObjectRef":null},)"
      R"("status":{"token":")"
          + token + R"(","expirationTimestamp":"2026-12-02T05:00:00Z"}})");
}

TEST(k8s_sim_auth_tokens,
     a_token_request_bound_to_a_pod_carries_its_name_and_uid) {
  token_authority authority{"k1"};
  auto p = pod("pod-uid-7");
  json req = {{"spec",
               {{"audiences", {"aiperf-results"}},
                {"expirationSeconds", 600},
                {"boundObjectRef",
                 {{"kind", "Pod"},
                  {"apiVersion", "v1"},
                  {"name", "aiperf-j1-controller-0"}}}}}};
  auto claims = authority.token_request_claims(req, context(&p));
  ASSERT_TRUE(claims) << error_message(claims.error());
  EXPECT_EQ(claims->pod_name, "aiperf-j1-controller-0");
  EXPECT_EQ(claims->pod_uid, "pod-uid-7");
  EXPECT_EQ(claims->audiences, std::vector<std::string>{"aiperf-results"});
  EXPECT_EQ(claims->expires_at, now + 600);
  auto out = token_request_response(req, "t", *claims);
  EXPECT_FALSE(out["spec"]["boundObjectRef"].contains("uid"));
  EXPECT_EQ(out["status"]["expirationTimestamp"], "2026-12-02T04:10:00Z");
}

TEST(k8s_sim_auth_tokens,
     a_token_request_refuses_what_the_real_server_refuses) {
  token_authority authority{"k1"};
  auto p = pod("pod-uid-7");
  auto other_sa_pod = pod("pod-uid-8", "runner");
  auto with = [](json spec) { return json{{"spec", std::move(spec)}}; };
  json ref = {{"kind", "Pod"},
              {"apiVersion", "v1"},
              {"name", "aiperf-j1-controller-0"}};

  auto short_lived = authority.token_request_claims(
      with({{"expirationSeconds", 10}}), context());
  ASSERT_FALSE(short_lived);
  ASSERT_NE(status_of(short_lived.error()), nullptr);
  EXPECT_EQ(status_of(short_lived.error())->code, 422);
  EXPECT_EQ(
      status_of(short_lived.error())->message,
      "TokenRequest.authentication.k8s.io \"\" is invalid: "
      "spec.expirationSeconds: "
      "Invalid value: 10: may not specify a duration less than 10 minutes");
  EXPECT_EQ(status_of(short_lived.error())->details.causes.at(0).field,
            "spec.expirationSeconds");

  auto missing = authority.token_request_claims(with({{"boundObjectRef", ref}}),
                                                context());
  ASSERT_FALSE(missing);
  EXPECT_TRUE(is_error(missing.error(), k8s::errc::not_found));
  EXPECT_EQ(status_of(missing.error())->message,
            "pods \"aiperf-j1-controller-0\" not found");

  auto stale_ref = ref;
  stale_ref["uid"] = "pod-uid-old";
  auto stale = authority.token_request_claims(
      with({{"boundObjectRef", stale_ref}}), context(&p));
  ASSERT_FALSE(stale);
  EXPECT_TRUE(is_error(stale.error(), k8s::errc::conflict));
  EXPECT_EQ(status_of(stale.error())->message,
            "Operation cannot be fulfilled on Pod \"aiperf-j1-controller-0\": "
            "the UID in the "
            "bound object reference (pod-uid-old) does not match the UID in "
            "record. The object "
            "might have been deleted and then recreated");

  auto foreign = authority.token_request_claims(with({{"boundObjectRef", ref}}),
                                                context(&other_sa_pod));
  ASSERT_FALSE(foreign);
  EXPECT_EQ(status_of(foreign.error())->code, 400);
  EXPECT_EQ(status_of(foreign.error())->message,
            "cannot bind token for serviceaccount \"default\" to pod running "
            "with different "
            "serviceaccount name.");

  auto secret = authority.token_request_claims(
      with({{"boundObjectRef",
             {{"kind", "Secret"}, {"apiVersion", "v1"}, {"name", "s"}}}}),
      context());
  ASSERT_FALSE(secret);
  EXPECT_EQ(status_of(secret.error())->reason, "BadRequest");
  EXPECT_EQ(status_of(secret.error())->message,
            "cannot bind token to object of type /v1, Kind=Secret");
}

TEST(k8s_sim_auth_tokens, a_token_dies_with_its_pod_and_its_service_account) {
  auto claims = pod_bound_claims();
  auto sa = service_account("sa-uid-1");
  auto p = pod("pod-uid-1");
  EXPECT_TRUE(check_bound_objects(claims, &sa, &p, now));

  auto gone = check_bound_objects(claims, &sa, nullptr, now);
  ASSERT_FALSE(gone);
  EXPECT_TRUE(is_error(gone.error(), errc::invalidated));
  EXPECT_EQ(error_message(gone.error()),
            "service account token has been invalidated");

  auto replaced_pod = pod("pod-uid-2");
  auto replaced = check_bound_objects(claims, &sa, &replaced_pod, now);
  ASSERT_FALSE(replaced);
  EXPECT_EQ(error_message(replaced.error()),
            "pod UID (pod-uid-2) does not match service account pod ref claim "
            "(pod-uid-1)");

  // Deleted 30 s ago: still inside the minute of leeway; 2 minutes: not.
  auto terminating = pod("pod-uid-1", "default", "2026-12-02T03:59:30Z");
  EXPECT_TRUE(check_bound_objects(claims, &sa, &terminating, now));
  auto terminated = pod("pod-uid-1", "default", "2026-12-02T03:58:00Z");
  EXPECT_FALSE(check_bound_objects(claims, &sa, &terminated, now));

  auto new_sa = service_account("sa-uid-2");
  auto r = check_bound_objects(claims, &new_sa, &p, now);
  ASSERT_FALSE(r);
  EXPECT_EQ(error_message(r.error()),
            "service account UID (sa-uid-2) does not match claim (sa-uid-1)");
  auto no_sa = check_bound_objects(claims, nullptr, &p, now);
  ASSERT_FALSE(no_sa);
  EXPECT_EQ(error_message(no_sa.error()),
            "serviceaccounts \"default\" not found");
  auto deleted_sa = service_account("sa-uid-1", "2026-12-02T03:00:00Z");
  auto d = check_bound_objects(claims, &deleted_sa, &p, now);
  ASSERT_FALSE(d);
  EXPECT_EQ(error_message(d.error()),
            "service account bench/default has been deleted");

  auto unbound = claims;
  unbound.pod_name.clear();
  unbound.pod_uid.clear();
  EXPECT_TRUE(check_bound_objects(unbound, &sa, nullptr, now));
}

TEST(k8s_sim_auth_tokens, a_token_review_of_a_good_token) {
  json review = {{"apiVersion", "authentication.k8s.io/v1"},
                 {"kind", "TokenReview"},
                 {"spec", {{"token", "T"}, {"audiences", {"aiperf-results"}}}}};
  auto out = token_review_response(review, pod_bound_claims(), {api_audience});
  EXPECT_EQ(
      out.dump(),
      R"({"kind":"TokenReview","apiVersion":"authentication.k8s.io/v1",)"
      R"("metadata":{"creationTimestamp":null},)"
      R"("spec":{"token":"T","audiences":["aiperf-results"]},)"
      R"("status":{"authenticated":true,"user":{)"
      R"("username":"system:serviceaccount:bench:default","uid":"sa-uid-1",)"
      R"("groups":["system:serviceaccounts","system:serviceaccounts:bench",)"
      R"("system:authenticated"],"extra":{)"
      R"("authentication.kubernetes.io/credential-id":["JTI=jti-1"],)"
      R"("authentication.kubernetes.io/pod-name":["aiperf-j1-controller-0"],)"
      R"("authentication.kubernetes.io/pod-uid":["pod-uid-1"]}},)"
      R"("audiences":["aiperf-results"]}})");
  json no_audiences = {{"spec", {{"token", "T"}}}};
  EXPECT_EQ(token_review_response(no_audiences, pod_bound_claims(),
                                  {api_audience})["status"]["audiences"],
            json::array({api_audience}));
}

TEST(k8s_sim_auth_tokens, a_token_review_of_a_bad_token_says_why) {
  token_authority authority{"k1"};
  json review = {{"spec", {{"token", "x"}}}};
  auto expired
      = authority.verify(authority.issue(pod_bound_claims()), now + 7200);
  auto out = token_review_response(review, expired, {api_audience});
  EXPECT_EQ(
      out["status"].dump(),
      R"({"user":{},"error":"[invalid bearer token, service account token has expired]"})");

  auto garbage = authority.verify("garbage", now);
  EXPECT_EQ(
      token_review_response(review, garbage, {api_audience})["status"].dump(),
      R"({"user":{},"error":"invalid bearer token"})");

  caf::expected<token_claims> deleted_pod = make_error(
      errc::invalidated, "service account token has been invalidated");
  EXPECT_EQ(
      token_review_response(review, deleted_pod,
                            {api_audience})["status"]["error"],
      "[invalid bearer token, service account token has been invalidated]");
}

TEST(k8s_sim_auth_tokens, a_token_request_names_only_its_own_account) {
  token_authority authority{"k1"};
  json req = {{"metadata", {{"name", "other"}}}, {"spec", json::object()}};
  auto r = authority.token_request_claims(req, context());
  ASSERT_FALSE(r);
  EXPECT_EQ(status_of(r.error())->message,
            "TokenRequest.authentication.k8s.io \"default\" is invalid: "
            "metadata.name: "
            "Invalid value: \"other\": must match the service account name if "
            "specified");
  json same = {{"metadata", {{"name", "default"}, {"namespace", "bench"}}}};
  EXPECT_TRUE(authority.token_request_claims(same, context()));
}

TEST(k8s_sim_auth_tokens, a_pod_bound_token_names_the_pods_node) {
  token_authority authority{"k1"};
  auto p = pod("pod-uid-7");
  p["spec"]["nodeName"] = "sim-node-1";
  json node = {{"metadata", {{"name", "sim-node-1"}, {"uid", "node-uid-1"}}}};
  json req = {{"spec",
               {{"boundObjectRef",
                 {{"kind", "Pod"},
                  {"apiVersion", "v1"},
                  {"name", "aiperf-j1-controller-0"}}}}}};
  auto ctx = context(&p);
  auto without_node = authority.token_request_claims(req, ctx);
  ASSERT_TRUE(without_node);
  EXPECT_EQ(without_node->node_name, "sim-node-1");
  EXPECT_EQ(without_node->node_uid, "");
  ctx.bound_pod_node = &node;
  auto claims = authority.token_request_claims(req, ctx);
  ASSERT_TRUE(claims);
  EXPECT_EQ(claims->node_uid, "node-uid-1");
  auto verified = authority.verify(authority.issue(*claims), now);
  ASSERT_TRUE(verified);
  EXPECT_EQ(verified->node_name, "sim-node-1");
  auto u = user_of(*verified);
  EXPECT_EQ(u.extra.at("authentication.kubernetes.io/node-name"),
            std::vector<std::string>{"sim-node-1"});
  EXPECT_EQ(u.extra.at("authentication.kubernetes.io/node-uid"),
            std::vector<std::string>{"node-uid-1"});
}

TEST(k8s_sim_auth_tokens,
     a_projected_token_lives_a_year_and_warns_after_its_hour) {
  token_authority authority{"k1"};
  auto p = pod("pod-uid-7");
  json req = {{"spec",
               {{"expirationSeconds", 3607},
                {"boundObjectRef",
                 {{"kind", "Pod"},
                  {"apiVersion", "v1"},
                  {"name", "aiperf-j1-controller-0"}}}}}};
  auto claims = authority.token_request_claims(req, context(&p));
  ASSERT_TRUE(claims);
  EXPECT_EQ(claims->warn_after, now + 3607);
  EXPECT_EQ(claims->expires_at, now + 365 * 24 * 3600);
  auto token = authority.issue(*claims);
  EXPECT_NE(unbase64url(part(token, 1)).find("\"warnafter\":1796187607"),
            std::string::npos);
  EXPECT_TRUE(authority.verify(token, now + 7200));
  EXPECT_EQ(authority.verify(token, now + 7200)->warn_after, now + 3607);
  auto out = token_request_response(req, token, *claims);
  EXPECT_EQ(out["spec"]["expirationSeconds"], 3607);
  EXPECT_EQ(out["status"]["expirationTimestamp"], "2026-12-02T05:00:07Z");
  // Not for another audience, nor for an unbound token.
  req["spec"]["audiences"] = {"aiperf-results"};
  EXPECT_EQ(authority.token_request_claims(req, context(&p))->expires_at,
            now + 3607);
  json unbound = {{"spec", {{"expirationSeconds", 3607}}}};
  EXPECT_EQ(authority.token_request_claims(unbound, context())->expires_at,
            now + 3607);
}

// The store's objects, for the lookups of authenticate_token and
// token_request.
struct objects {
  std::map<std::string, json> by_key;
  object_lookup lookup() const {
    return [this](std::string_view resource, std::string_view ns,
                  std::string_view name) -> const json* {
      auto it = by_key.find(std::string{resource} + "/" + std::string{ns} + "/"
                            + std::string{name});
      return it == by_key.end() ? nullptr : &it->second;
    };
  }
};

TEST(k8s_sim_auth_tokens,
     a_token_request_then_a_review_then_the_pods_deletion) {
  token_authority authority{"k1"};
  objects store;
  auto sa = service_account("sa-uid-1");
  store.by_key["serviceaccounts/bench/default"] = sa;
  auto p = pod("pod-uid-1");
  p["spec"]["nodeName"] = "n1";
  store.by_key["pods/bench/aiperf-j1-controller-0"] = p;
  store.by_key["nodes//n1"]
      = json{{"metadata", {{"name", "n1"}, {"uid", "node-uid"}}}};
  json req = {{"spec",
               {{"audiences", {"aiperf-results"}},
                {"boundObjectRef",
                 {{"kind", "Pod"},
                  {"apiVersion", "v1"},
                  {"name", "aiperf-j1-controller-0"}}}}}};
  auto answered
      = token_request(authority, req, sa, now, store.lookup(), "jti-5");
  ASSERT_TRUE(answered) << error_message(answered.error());
  auto token = (*answered)["status"]["token"].get<std::string>();

  json review
      = {{"spec", {{"token", token}, {"audiences", {"aiperf-results"}}}}};
  auto ok = token_review(authority, review, now + 60, store.lookup());
  EXPECT_EQ(ok["status"]["authenticated"], true);
  EXPECT_EQ(
      ok["status"]["user"]["extra"]["authentication.kubernetes.io/pod-uid"],
      json::array({"pod-uid-1"}));
  EXPECT_EQ(
      ok["status"]["user"]["extra"]["authentication.kubernetes.io/node-uid"],
      json::array({"node-uid"}));
  EXPECT_EQ(ok["status"]["audiences"], json::array({"aiperf-results"}));

  // Not a token for the API server itself.
  auto as_api = authenticate_token(authority, token, now, store.lookup());
  ASSERT_FALSE(as_api);
  EXPECT_TRUE(is_error(as_api.error(), errc::wrong_audience));

  json wrong_audience
      = {{"spec", {{"token", token}, {"audiences", {"other"}}}}};
  EXPECT_EQ(token_review(authority, wrong_audience, now,
                         store.lookup())["status"]["error"],
            "[invalid bearer token, token audiences [\"aiperf-results\"] is "
            "invalid for the "
            "target audiences [\"other\"]]");

  store.by_key.erase("pods/bench/aiperf-j1-controller-0");
  auto gone = token_review(authority, review, now + 120, store.lookup());
  EXPECT_FALSE(gone["status"].contains("authenticated"));
  EXPECT_EQ(
      gone["status"]["error"],
      "[invalid bearer token, service account token has been invalidated]");
}

TEST(k8s_sim_auth_tokens, a_token_request_for_a_missing_pod_is_404) {
  token_authority authority{"k1"};
  objects store;
  auto sa = service_account("sa-uid-1");
  json req
      = {{"spec", {{"boundObjectRef", {{"kind", "Pod"}, {"name", "nope"}}}}}};
  auto r = token_request(authority, req, sa, now, store.lookup(), "j");
  ASSERT_FALSE(r);
  EXPECT_EQ(status_of(r.error())->code, 404);
}

TEST(k8s_sim_auth_tokens, kubectl_auth_whoami) {
  auto u = user_of(pod_bound_claims());
  EXPECT_EQ(
      self_subject_review(u, now).dump(),
      R"({"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1",)"
      R"("metadata":{"creationTimestamp":"2026-12-02T04:00:00Z"},"status":{"userInfo":{)"
      R"("username":"system:serviceaccount:bench:default","uid":"sa-uid-1",)"
      R"("groups":["system:serviceaccounts","system:serviceaccounts:bench",)"
      R"("system:authenticated"],"extra":{)"
      R"("authentication.kubernetes.io/credential-id":["JTI=jti-1"],)"
      R"("authentication.kubernetes.io/pod-name":["aiperf-j1-controller-0"],)"
      R"("authentication.kubernetes.io/pod-uid":["pod-uid-1"]}}}})");
}

} // namespace
} // namespace aiperf::k8s::sim::auth
