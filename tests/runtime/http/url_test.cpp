#include "runtime/http/url.hpp"

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
                    "http://h/p?q=1", "http://u@h", "http://[::1"}) {
    auto r = parse_url(text);
    EXPECT_FALSE(r) << text;
    EXPECT_NE(error_message(r.error()).find("invalid URL"), std::string::npos) << text;
  }
}

} // namespace
} // namespace aiperf::http
