#include "runtime/http/url.hpp"

#include <gtest/gtest.h>

namespace aiperf::http {
namespace {

TEST(parse_url, http_with_port_and_path) {
  auto r = parse_url("http://example.com:8080/v1/");
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.value->ep.host, "example.com");
  EXPECT_EQ(r.value->ep.port, 8080);
  EXPECT_FALSE(r.value->ep.tls);
  EXPECT_EQ(r.value->base_path, "/v1");
  EXPECT_EQ(r.value->scheme(), "http");
}

TEST(parse_url, default_ports_follow_the_scheme) {
  auto a = parse_url("http://h");
  auto b = parse_url("HTTPS://h/");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a.value->ep.port, 80);
  EXPECT_EQ(b.value->ep.port, 443);
  EXPECT_TRUE(b.value->ep.tls);
  EXPECT_EQ(b.value->base_path, "");
}

TEST(parse_url, missing_scheme_means_http_like_aiperf) {
  auto r = parse_url("localhost:8000");
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.value->ep.host, "localhost");
  EXPECT_EQ(r.value->ep.port, 8000);
  EXPECT_FALSE(r.value->ep.tls);
}

TEST(parse_url, ipv6_literal_in_brackets) {
  auto r = parse_url("http://[::1]:9000/x");
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.value->ep.host, "::1");
  EXPECT_EQ(r.value->ep.port, 9000);
  EXPECT_EQ(r.value->base_path, "/x");
}

TEST(parse_url, unsupported_scheme_names_url_and_fix) {
  auto r = parse_url("ftp://h:21");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error.find("ftp://h:21"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("http:// or https://"), std::string::npos) << r.error;
}

TEST(parse_url, bad_inputs_are_rejected_with_reasons) {
  for (auto text : {"", "http://", "http://:80", "http://h:0", "http://h:70000",
                    "http://h:12ab", "http://h:", "http://a:b:c",
                    "http://h/p?q=1", "http://u@h", "http://[::1"}) {
    auto r = parse_url(text);
    EXPECT_FALSE(r) << text;
    EXPECT_NE(r.error.find("invalid URL"), std::string::npos) << text;
  }
}

} // namespace
} // namespace aiperf::http
