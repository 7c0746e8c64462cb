#include "runtime/http/url.hpp"
#include "proto/redact.hpp"

#include <gtest/gtest.h>

namespace aiperf::http {
namespace {

TEST(parse_url, http_with_port_and_path) {
  auto r = parse_url("http://example.com:8080/v1/");
  ASSERT_TRUE(r) << error_message(r.error());
  EXPECT_EQ(r->ep.host, "example.com");
  EXPECT_EQ(r->ep.port, 8080);
  EXPECT_FALSE(r->ep.tls);
  EXPECT_EQ(r->base_path, "/v1");
  EXPECT_EQ(r->scheme(), "http");
}

TEST(parse_url, default_ports_follow_the_scheme) {
  auto a = parse_url("http://h");
  auto b = parse_url("HTTPS://h/");
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_EQ(a->ep.port, 80);
  EXPECT_EQ(b->ep.port, 443);
  EXPECT_TRUE(b->ep.tls);
  EXPECT_EQ(b->base_path, "");
}

TEST(parse_url, missing_scheme_means_http_like_aiperf) {
  auto r = parse_url("localhost:8000");
  ASSERT_TRUE(r) << error_message(r.error());
  EXPECT_EQ(r->ep.host, "localhost");
  EXPECT_EQ(r->ep.port, 8000);
  EXPECT_FALSE(r->ep.tls);
}

TEST(parse_url, ipv6_literal_in_brackets) {
  auto r = parse_url("http://[::1]:9000/x");
  ASSERT_TRUE(r) << error_message(r.error());
  EXPECT_EQ(r->ep.host, "::1");
  EXPECT_EQ(r->ep.port, 9000);
  EXPECT_EQ(r->base_path, "/x");
}

TEST(parse_url, unsupported_scheme_names_url_and_fix) {
  auto r = parse_url("ftp://h:21");
  ASSERT_FALSE(r);
  EXPECT_NE(error_message(r.error()).find("ftp://h:21"), std::string::npos) << error_message(r.error());
  EXPECT_NE(error_message(r.error()).find("http:// or https://"), std::string::npos) << error_message(r.error());
}

TEST(parse_url, bad_inputs_are_rejected_with_reasons) {
  for (auto text : {"", "http://", "http://:80", "http://h:0", "http://h:70000",
                    "http://h:12ab", "http://h:", "http://a:b:c",
                    "http://h/p?q=1", "http://u%zz@h", "http://[::1"}) {
    auto r = parse_url(text);
    EXPECT_FALSE(r) << text;
    EXPECT_NE(error_message(r.error()).find("invalid URL"), std::string::npos) << text;
  }
}

TEST(parse_url, user_info_is_accepted_and_percent_decoded) {
  auto r = parse_url("http://al%69ce:p%40ss%3Aw%2Fd@h:8000/v1");
  ASSERT_TRUE(r) << error_message(r.error());
  EXPECT_EQ(r->ep.host, "h");
  EXPECT_EQ(r->ep.port, 8000);
  EXPECT_EQ(r->base_path, "/v1");
  ASSERT_TRUE(r->user);
  EXPECT_EQ(*r->user, "alice");
  EXPECT_EQ(r->password, "p@ss:w/d");
  // aiohttp's BasicAuth: base64("alice:p@ss:w/d").
  EXPECT_EQ(basic_authorization(*r), "Basic YWxpY2U6cEBzczp3L2Q=");
}

TEST(parse_url, empty_user_and_missing_password) {
  auto empty_user = parse_url("http://:secret@h");
  ASSERT_TRUE(empty_user);
  EXPECT_EQ(*empty_user->user, "");
  EXPECT_EQ(empty_user->password, "secret");
  EXPECT_EQ(basic_authorization(*empty_user), "Basic OnNlY3JldA==");
  auto no_password = parse_url("https://token@h");
  ASSERT_TRUE(no_password);
  EXPECT_EQ(*no_password->user, "token");
  EXPECT_EQ(no_password->password, "");
  EXPECT_EQ(no_password->ep.port, 443);
  auto none = parse_url("http://h:1");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->user);
  EXPECT_EQ(basic_authorization(*none), "");
}

TEST(parse_url, an_unencoded_at_in_the_password_ends_at_the_last_at) {
  auto r = parse_url("http://u:p@ss@h:1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->ep.host, "h");
  EXPECT_EQ(r->password, "p@ss");
}

TEST(parse_url, bad_escape_in_user_info_is_refused_without_showing_it) {
  for (auto text : {"http://u:s3cret%@h", "http://u:s3cret%4@h", "http://u:s3cret%g1@h"}) {
    auto r = parse_url(text);
    ASSERT_FALSE(r) << text;
    auto msg = error_message(r.error());
    EXPECT_NE(msg.find("%25"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("s3cret"), std::string::npos) << msg;
    EXPECT_NE(msg.find("<redacted>@h"), std::string::npos) << msg;
  }
}

TEST(redact_url, hides_user_info_only) {
  EXPECT_EQ(proto::redact_url("http://u:p@h:1/x"), "http://<redacted>@h:1/x");
  EXPECT_EQ(proto::redact_url("http://h:1/x@y"), "http://h:1/x@y");
  EXPECT_EQ(proto::redact_url("u:p@h"), "<redacted>@h");
  EXPECT_EQ(proto::redact_url("http://h"), "http://h");
}

} // namespace
} // namespace aiperf::http
