#include "k8s/api/json.hpp"
#include "k8s/object/wire.hpp"

#include <gtest/gtest.h>

using namespace aiperf;
using namespace aiperf::k8s;

TEST(wire, paths_of_core_group_and_subresources) {
  EXPECT_EQ(path_of({"", "v1", "configmaps", "bench", "c1", ""}),
            "/api/v1/namespaces/bench/configmaps/c1");
  EXPECT_EQ(
      path_of({"aiperf.nvidia.com", "v1alpha1", "aiperfjobs", "bench", "j1",
               "status"}),
      "/apis/aiperf.nvidia.com/v1alpha1/namespaces/bench/aiperfjobs/j1/status");
  EXPECT_EQ(path_of({"", "v1", "namespaces", "", "bench", ""}),
            "/api/v1/namespaces/bench");
  EXPECT_EQ(path_of({"batch", "v1", "jobs", "", "", ""}),
            "/apis/batch/v1/jobs");
}

TEST(wire, a_watch_request_as_http) {
  request r;
  r.verb = verb::watch;
  r.ref = {"jobset.x-k8s.io", "v1alpha2", "jobsets", "default", "", ""};
  r.label_selector = "app=x,tier!=db";
  r.resource_version = "104";
  r.allow_watch_bookmarks = true;
  r.timeout_seconds = 300;
  auto call = to_http(r);
  EXPECT_EQ(call.method, "GET");
  EXPECT_EQ(call.target, "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/"
                         "jobsets?labelSelector=app%3Dx%2C"
                         "tier%21%3Ddb&resourceVersion=104&allowWatchBookmarks="
                         "true&timeoutSeconds=300&"
                         "watch=true");
  EXPECT_TRUE(call.body.empty());
  EXPECT_TRUE(call.content_type.empty());
}

TEST(wire, every_request_survives_the_round_trip) {
  std::vector<request> requests;
  request r;
  r.verb = verb::get;
  r.ref = {"", "v1", "configmaps", "bench", "c1", ""};
  requests.push_back(r);
  r.verb = verb::list;
  r.ref.name.clear();
  r.limit = 500;
  r.continue_token = "abc=/+";
  r.field_selector = "metadata.name=c1";
  requests.push_back(r);
  r = {};
  r.verb = verb::create;
  r.ref = {"rbac.authorization.k8s.io", "v1", "roles", "bench", "", ""};
  r.body = R"({"kind":"Role"})";
  r.dry_run = true;
  r.field_manager = "kubectl-create";
  r.field_validation = "Strict";
  requests.push_back(r);
  r.verb = verb::patch;
  r.ref.name = "r1";
  r.patch = patch_type::json;
  r.body = R"([{"op":"test","path":"/metadata/uid","value":"u"}])";
  requests.push_back(r);
  r.patch = patch_type::apply;
  r.force = true;
  r.body = R"({"apiVersion":"v1"})";
  requests.push_back(r);
  r = {};
  r.verb = verb::update;
  r.ref = {
      "aiperf.nvidia.com", "v1alpha1", "aiperfjobs", "bench", "j1", "status"};
  r.body = "{}";
  requests.push_back(r);
  r = {};
  r.verb = verb::remove;
  r.ref = {"", "v1", "namespaces", "", "bench", ""};
  r.body = R"({"propagationPolicy":"Foreground"})";
  requests.push_back(r);
  r.verb = verb::remove_collection;
  r.ref = {"", "v1", "pods", "bench", "", ""};
  requests.push_back(r);
  r = {};
  r.verb = verb::watch;
  r.ref = {"", "v1", "events", "", "", ""};
  r.resource_version = "7";
  requests.push_back(r);

  for (const auto& original : requests) {
    auto call = to_http(original);
    auto back
        = request_of(call.method, call.target, call.content_type, call.body);
    ASSERT_TRUE(back) << call.method << " " << call.target << ": "
                      << to_string(back.error());
    EXPECT_EQ(back->verb, original.verb) << call.target;
    EXPECT_EQ(back->ref, original.ref) << call.target;
    EXPECT_EQ(back->body, original.body);
    EXPECT_EQ(back->patch, original.patch);
    EXPECT_EQ(back->limit, original.limit);
    EXPECT_EQ(back->continue_token, original.continue_token);
    EXPECT_EQ(back->field_selector, original.field_selector);
    EXPECT_EQ(back->resource_version, original.resource_version);
    EXPECT_EQ(back->dry_run, original.dry_run);
    EXPECT_EQ(back->field_manager, original.field_manager);
    EXPECT_EQ(back->field_validation, original.field_validation);
    EXPECT_EQ(back->force, original.force);
  }
}

TEST(wire, the_server_reads_what_real_clients_send) {
  // python-kubernetes: watch=True.
  auto r
      = request_of("GET", "/api/v1/namespaces/default/pods?watch=True", "", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verb, verb::watch);
  r = request_of("GET", "/api/v1/namespaces/default/pods?watch=false&limit=500",
                 "", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verb, verb::list);
  // The legacy watch path.
  r = request_of("GET", "/api/v1/watch/namespaces/default/pods", "", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verb, verb::watch);
  EXPECT_EQ(r->ref.namespace_name, "default");
  EXPECT_EQ(r->ref.resource, "pods");
  // A namespace's own subresources.
  r = request_of("PUT", "/api/v1/namespaces/bench/finalize", "application/json",
                 "{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ref.resource, "namespaces");
  EXPECT_EQ(r->ref.name, "bench");
  EXPECT_EQ(r->ref.subresource, "finalize");
  // Content types with parameters; kubectl's query parameters.
  r = request_of("PATCH",
                 "/apis/batch/v1/namespaces/b/jobs/"
                 "j?fieldManager=kubectl-patch&timeout=32s",
                 "application/merge-patch+json; charset=utf-8", "{}");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->patch, patch_type::merge);
  EXPECT_EQ(r->field_manager, "kubectl-patch");
  // Query delete options join the body.
  r = request_of("DELETE",
                 "/api/v1/namespaces/b/configmaps/c?propagationPolicy=Orphan",
                 "", "");
  ASSERT_TRUE(r);
  EXPECT_EQ(json::parse(r->body)["propagationPolicy"], "Orphan");
}

TEST(wire, apply_patches_in_yaml_become_json) {
  auto r = request_of(
      "PATCH", "/api/v1/namespaces/b/configmaps/c?fieldManager=m",
      "application/apply-patch+yaml",
      "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"1\"\n  b: 2\n");
  ASSERT_TRUE(r) << to_string(r.error());
  auto j = json::parse(r->body);
  EXPECT_EQ(j["kind"], "ConfigMap");
  EXPECT_EQ(j["data"]["a"], "1");
  EXPECT_EQ(j["data"]["b"], 2);
}

TEST(wire, refusals) {
  auto r = request_of("PATCH", "/api/v1/namespaces/b/configmaps/c",
                      "text/plain", "{}");
  ASSERT_FALSE(r);
  ASSERT_NE(status_of(r.error()), nullptr);
  EXPECT_EQ(status_of(r.error())->code, 415);
  EXPECT_EQ(status_of(r.error())->message,
            "the body of the request was in an unknown format - accepted media "
            "types include: "
            "application/json-patch+json, application/merge-patch+json, "
            "application/apply-patch+yaml");
  r = request_of("GET", "/api/v1/pods?limit=abc", "", "");
  ASSERT_FALSE(r);
  EXPECT_EQ(status_of(r.error())->code, 400);
  r = request_of("GET", "/nope", "", "");
  ASSERT_FALSE(r);
  EXPECT_TRUE(is_error(r.error(), errc::not_found));
  EXPECT_EQ(status_of(r.error()), nullptr);
  for (auto path : {"/api", "/apis", "/api/v1", "/apis/batch", "/apis/batch/v1",
                    "/version", "/openapi/v2", "/healthz"})
    EXPECT_TRUE(is_non_resource_path(path)) << path;
  EXPECT_FALSE(is_non_resource_path("/api/v1/pods"));
  EXPECT_FALSE(is_non_resource_path("/apis/batch/v1/jobs"));
}

TEST(wire, encoding) {
  EXPECT_EQ(url_encode("a=b,c!=d e/f"), "a%3Db%2Cc%21%3Dd%20e%2Ff");
  EXPECT_EQ(url_decode("a%3Db%2Cc+d"), "a=b,c d");
}

TEST(wire, an_apply_patch_with_ill_formed_utf8_does_not_throw) {
  auto r
      = request_of("PATCH", "/api/v1/namespaces/b/configmaps/c?fieldManager=m",
                   "application/apply-patch+yaml", "data:\n  a: \"\xff\"\n");
  ASSERT_TRUE(r);
  EXPECT_FALSE(json::parse(r->body, nullptr, false).is_discarded());
}

TEST(wire, warning_headers_give_their_text) {
  EXPECT_EQ(warning_text(R"(299 - "unknown field \"spec.x\"")"),
            R"(unknown field "spec.x")");
  EXPECT_EQ(warning_text(R"(299 - "a \\ b" "Wed, 02 Dec 2026 05:00:00 GMT")"),
            R"(a \ b)");
  EXPECT_EQ(warning_text("plain words"), "plain words");
}
