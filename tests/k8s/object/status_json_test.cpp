#include "k8s/object/status_json.hpp"

#include <gtest/gtest.h>

using namespace aiperf;
using namespace aiperf::k8s;

// Bodies captured from a kube-apiserver.
TEST(status_json, already_exists_is_written_byte_for_byte) {
  status st{"AlreadyExists", 409, "configmaps \"cm1\" already exists", {}};
  st.details.name = "cm1";
  st.details.kind = "configmaps";
  EXPECT_EQ(
      status_body(st),
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
      "\"Failure\","
      "\"message\":\"configmaps \\\"cm1\\\" already "
      "exists\",\"reason\":\"AlreadyExists\","
      "\"details\":{\"name\":\"cm1\",\"kind\":\"configmaps\"},\"code\":409}\n");
  st.details.group = "jobset.x-k8s.io";
  st.details.name = "js1";
  st.details.kind = "jobsets";
  st.message = "jobsets.jobset.x-k8s.io \"js1\" already exists";
  EXPECT_EQ(
      status_body(st),
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
      "\"Failure\","
      "\"message\":\"jobsets.jobset.x-k8s.io \\\"js1\\\" already exists\","
      "\"reason\":\"AlreadyExists\",\"details\":{\"name\":\"js1\",\"group\":"
      "\"jobset.x-k8s.io\",\"kind\":\"jobsets\"},\"code\":409}\n");
}

TEST(status_json, the_generic_patch_422_keeps_an_empty_details_object) {
  EXPECT_EQ(status_body(invalid_patch_status()),
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
            "\"status\":\"Failure\","
            "\"message\":\"the server rejected our request due to an error in "
            "our request\","
            "\"reason\":\"Invalid\",\"details\":{},\"code\":422}\n");
}

TEST(status_json, errors_without_details_omit_the_key_and_escape_like_go) {
  status st{"Expired", 410, "too old resource version: 1 (5) <x&y>", {}};
  EXPECT_EQ(
      status_body(st),
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
      "\"Failure\","
      "\"message\":\"too old resource version: 1 (5) \\u003cx\\u0026y\\u003e\","
      "\"reason\":\"Expired\",\"code\":410}\n");
}

TEST(status_json, causes_and_retry_after_round_trip) {
  status st{
      "Invalid",
      422,
      "AIPerfJob.aiperf.nvidia.com \"j1\" is invalid: spec: Invalid value",
      {}};
  st.details = {"j1",
                "aiperf.nvidia.com",
                "AIPerfJob",
                "",
                {{"FieldValueInvalid", "m", "spec"}},
                3};
  auto back = parse_status(status_body(st));
  ASSERT_TRUE(back) << to_string(back.error());
  st.details_present = true;
  EXPECT_EQ(*back, st);
  auto generic = parse_status(status_body(invalid_patch_status()));
  ASSERT_TRUE(generic);
  EXPECT_TRUE(generic->details_present);
  EXPECT_TRUE(generic->details.causes.empty());
  EXPECT_TRUE(generic->details.name.empty());
}

TEST(status_json, success_body_of_a_delete) {
  status_details d;
  d.name = "cm1";
  d.kind = "configmaps";
  d.uid = "u-1";
  EXPECT_EQ(success_body(d), "{\"kind\":\"Status\",\"apiVersion\":\"v1\","
                             "\"metadata\":{},\"status\":\"Success\","
                             "\"details\":{\"name\":\"cm1\",\"kind\":"
                             "\"configmaps\",\"uid\":\"u-1\"}}\n");
}

TEST(status_json, responses_become_typed_errors) {
  auto err = error_of_response(404, "404 page not found\n", "get widgets/w1");
  EXPECT_TRUE(is_error(err, errc::not_found));
  const auto* st = status_of(err);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->reason, "NotFound");
  EXPECT_EQ(st->message, "the server could not find the requested resource");
  EXPECT_EQ(st->code, 404);

  status conflict{"Conflict", 409, "Operation cannot be fulfilled", {}};
  err = error_of_response(409, status_body(conflict), "update configmaps/c1");
  EXPECT_TRUE(is_error(err, errc::conflict));
  ASSERT_NE(status_of(err), nullptr);
  EXPECT_EQ(status_of(err)->reason, "Conflict");

  status exists{"AlreadyExists", 409, "x", {}};
  err = error_of_response(409, status_body(exists), "create");
  EXPECT_TRUE(is_error(err, errc::already_exists));

  err = error_of_response(503, "<html>busy</html>", "list pods");
  EXPECT_TRUE(is_error(err, errc::unavailable));
  EXPECT_EQ(status_of(err)->reason, "ServiceUnavailable");
}

TEST(status_json, status_json_is_the_same_object) {
  status st{"Forbidden", 403, "nope", {}};
  auto j = status_to_json(st);
  EXPECT_EQ(j["kind"], "Status");
  EXPECT_EQ(j["code"], 403);
  EXPECT_EQ(j.dump() + "\n", status_body(st));
}

TEST(status_json, ill_formed_utf8_is_written_as_go_writes_it) {
  status st{"BadRequest",
            400,
            std::string{"bad \xff byte, \xe2\x82\xac and \xed\xa0\x80"},
            {}};
  auto body = status_body(st);
  EXPECT_NE(body.find(R"(bad \ufffd byte, )"
                      "\xe2\x82\xac"
                      R"( and \ufffd\ufffd\ufffd")"),
            std::string::npos)
      << body;
  EXPECT_FALSE(json::parse(body, nullptr, false).is_discarded());
}

TEST(status_json, a_failed_patch_is_told_from_a_validation_422_by_structure) {
  auto generic = parse_status(status_body(invalid_patch_status()));
  ASSERT_TRUE(generic);
  EXPECT_TRUE(is_failed_patch(*generic));
  status schema{
      "Invalid",
      422,
      "the server rejected our request due to an error in our request",
      {}};
  schema.details = {"j1",
                    "aiperf.nvidia.com",
                    "AIPerfJob",
                    "",
                    {{"FieldValueInvalid", "m", "spec"}},
                    0};
  auto parsed = parse_status(status_body(schema));
  ASSERT_TRUE(parsed);
  EXPECT_FALSE(is_failed_patch(*parsed)) << "same message, different structure";
  status no_details{"Invalid", 422, "x", {}};
  EXPECT_FALSE(is_failed_patch(no_details));
}
