#include "runtime/http/http_client_actor.hpp"

#include "tests/runtime/http/test_server.hpp"

#include <caf/all.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <gtest/gtest.h>

namespace aiperf::http {
namespace {

using testing::received_request;
using testing::scripted_reply;
using testing::test_server;

struct actor_fixture : ::testing::Test {
  static caf::actor_system_config& init(caf::actor_system_config& cfg) {
    cfg.set("scheduler.max-threads", 2);
    add_error_category<errc>(cfg);
    return cfg;
  }
  actor_fixture() : sys(init(cfg)) {
    // nop
  }
  caf::actor_system_config cfg;
  caf::actor_system sys;
  io_pool io{1};
  client c{io.context(0)};
};

// Verifies a request through the actor returns status, type and body.
TEST_F(actor_fixture, request_returns_the_body) {
  test_server srv{[](const received_request& r) {
    return scripted_reply{{test_server::content_length_response(
      "got " + r.body, "application/json")}};
  }};
  auto client_actor = spawn_http_client(sys, c);
  caf::scoped_actor self{sys};
  http_request_msg msg;
  msg.method = "POST";
  msg.url = "http://127.0.0.1:" + std::to_string(srv.port()) + "/v1/x?y=1";
  msg.body = "ping";
  std::optional<http_response_msg> got;
  std::string failure;
  self->request(client_actor, std::chrono::seconds(20), msg)
    .receive([&](http_response_msg& r) { got = std::move(r); },
             [&](caf::error& e) { failure = sys.render(e); });
  ASSERT_TRUE(got) << failure;
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(got->content_type, "application/json");
  EXPECT_EQ(got->body, "got ping");
  self->send_exit(client_actor, caf::exit_reason::user_shutdown);
}

// Verifies transport failures and bad URLs come back as errors.
TEST_F(actor_fixture, failures_are_errors) {
  auto client_actor = spawn_http_client(sys, c);
  caf::scoped_actor self{sys};
  http_request_msg bad;
  bad.url = "gopher://x";
  std::string failure;
  self->request(client_actor, std::chrono::seconds(20), bad)
    .receive([](http_response_msg&) {},
             [&](caf::error& e) { failure = sys.render(e); });
  EXPECT_NE(failure.find("http.invalid_url: invalid URL 'gopher://x': unsupported scheme"),
            std::string::npos)
    << failure;

  // Bound, never listening: refuses connections, and while it is bound the
  // kernel gives the port to no one else.
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket closed{ioc};
  closed.open(boost::asio::ip::tcp::v4());
  closed.bind({boost::asio::ip::make_address("127.0.0.1"), 0});
  auto closed_port = closed.local_endpoint().port();
  http_request_msg refused;
  refused.url = "http://127.0.0.1:" + std::to_string(closed_port) + "/";
  caf::error err;
  self->request(client_actor, std::chrono::seconds(20), refused)
    .receive([](http_response_msg&) {}, [&](caf::error& e) { err = e; });
  ASSERT_TRUE(err);
  EXPECT_EQ(err.category(), caf::atom("http"));
  EXPECT_EQ(err.code(), static_cast<std::uint8_t>(error_category::connect));
  self->send_exit(client_actor, caf::exit_reason::user_shutdown);
}

} // namespace
} // namespace aiperf::http
