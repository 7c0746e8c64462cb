#include "k8s/errors/errors.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <gtest/gtest.h>

namespace aiperf::k8s {
namespace {

status conflict_status() {
  status st{"Conflict", 409, "Operation cannot be fulfilled on jobs \"demo\"", {}};
  st.details.name = "demo";
  st.details.kind = "jobs";
  st.details.causes.push_back({"FieldValueInvalid", "stale", "metadata.resourceVersion"});
  return st;
}

TEST(k8s_errors, a_status_error_carries_code_message_and_the_status) {
  auto err = make_status_error("update jobs/demo", conflict_status());
  EXPECT_TRUE(is_error(err, errc::conflict));
  EXPECT_EQ(error_message(err),
            "update jobs/demo: Operation cannot be fulfilled on jobs \"demo\"");
  const auto* st = status_of(err);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(*st, conflict_status());
  EXPECT_EQ(st->details.causes.at(0).field, "metadata.resourceVersion");
}

TEST(k8s_errors, an_error_survives_a_copy_into_caf_expected) {
  caf::expected<int> r = make_status_error("get pods/p", status{"NotFound", 404, "gone", {}});
  ASSERT_FALSE(r);
  auto copy = r.error();
  EXPECT_TRUE(is_error(copy, errc::not_found));
  ASSERT_NE(status_of(copy), nullptr);
  EXPECT_EQ(status_of(copy)->code, 404);
}

TEST(k8s_errors, an_error_without_a_status_has_none) {
  auto err = make_error(errc::transport, "connect 127.0.0.1:6443: refused");
  EXPECT_EQ(status_of(err), nullptr);
  EXPECT_EQ(error_message(err), "connect 127.0.0.1:6443: refused");
}

TEST(k8s_errors, http_codes_map_to_errc) {
  EXPECT_EQ(errc_of(404, "NotFound"), errc::not_found);
  EXPECT_EQ(errc_of(409, "AlreadyExists"), errc::already_exists);
  EXPECT_EQ(errc_of(409, "Conflict"), errc::conflict);
  EXPECT_EQ(errc_of(422, "Invalid"), errc::invalid);
  EXPECT_EQ(errc_of(400, "BadRequest"), errc::invalid);
  EXPECT_EQ(errc_of(403, "Forbidden"), errc::forbidden);
  EXPECT_EQ(errc_of(401, "Unauthorized"), errc::forbidden);
  EXPECT_EQ(errc_of(415, "UnsupportedMediaType"), errc::unsupported_media_type);
  EXPECT_EQ(errc_of(410, "Expired"), errc::gone);
  EXPECT_EQ(errc_of(429, "TooManyRequests"), errc::too_many_requests);
  EXPECT_EQ(errc_of(503, "ServiceUnavailable"), errc::unavailable);
  EXPECT_EQ(errc_of(500, "InternalError"), errc::unavailable);
  EXPECT_EQ(errc_of(504, "Timeout"), errc::timeout);
  EXPECT_EQ(errc_of(0, ""), errc::transport);
}

TEST(k8s_errors, caf_renders_the_registered_category) {
  caf::actor_system_config cfg;
  add_error_category<errc>(cfg);
  caf::actor_system sys{cfg};
  auto text = sys.render(make_error(errc::gone, "watch pods: too old resource version"));
  EXPECT_NE(text.find("k8s.gone: watch pods: too old resource version"), std::string::npos)
    << text;
}

} // namespace
} // namespace aiperf::k8s
