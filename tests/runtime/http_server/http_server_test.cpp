#include "runtime/http_server/http_server.hpp"
#include "tests/runtime/http_server/test_client.hpp"

#include <boost/asio/this_coro.hpp>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

using namespace aiperf;
namespace http = boost::beast::http;

namespace {

// Echoes method, target and body; /stream sends three chunks on an absolute
// schedule; /none produces no response; /throw throws.
boost::asio::awaitable<void> test_handler(http_server::request& req,
                                          http_server::response_writer& w) {
  std::string_view target{req.target().data(), req.target().size()};
  if (target == "/stream") {
    w.begin_chunked(200, "text/event-stream");
    auto start = http_server::clock::now();
    for (int i = 0; i < 3; ++i) {
      co_await w.wait_until(start + std::chrono::milliseconds(2 * i));
      w.append_chunk("data: " + std::to_string(i) + "\n\n");
    }
    w.append_chunk(""); // ignored: an empty chunk would end the body
    co_await w.end_chunked();
    co_return;
  }
  if (target == "/none")
    co_return;
  if (target == "/throw")
    throw std::runtime_error("boom");
  std::string body{req.method_string()};
  body += ' ';
  body += target;
  body += ' ';
  body += req.body();
  co_await w.send(200, "text/plain", body);
}

struct http_server_fixture : ::testing::Test {
  void SetUp() override {
    http_server::options o;
    o.port = 0;
    o.body_limit = 1024;
    srv = std::make_unique<http_server::server>(o, test_handler);
    auto r = srv->start();
    ASSERT_TRUE(r) << error_message(r.error());
    port = *r;
  }
  std::unique_ptr<http_server::server> srv;
  std::uint16_t port = 0;
};

} // namespace

TEST_F(http_server_fixture, binds_an_ephemeral_port_and_reports_it) {
  EXPECT_NE(port, 0);
  EXPECT_EQ(srv->port(), port);
}

TEST_F(http_server_fixture, answers_several_requests_on_one_connection) {
  test::http_test_client c{port};
  auto a = c.request(http::verb::post, "/a", "hello");
  auto b = c.request(http::verb::get, "/b");
  EXPECT_EQ(a.status, 200u);
  EXPECT_EQ(a.body, "POST /a hello");
  EXPECT_EQ(a.content_type, "text/plain");
  EXPECT_TRUE(a.keep_alive);
  EXPECT_EQ(b.body, "GET /b ");
}

TEST_F(http_server_fixture, streams_chunks_and_ends_the_body) {
  test::http_test_client c{port};
  auto r = c.request(http::verb::get, "/stream");
  EXPECT_EQ(r.status, 200u);
  EXPECT_TRUE(r.chunked);
  EXPECT_EQ(r.body, "data: 0\n\ndata: 1\n\ndata: 2\n\n");
  // The connection is still usable after a chunked response.
  EXPECT_EQ(c.request(http::verb::get, "/x").body, "GET /x ");
}

TEST_F(http_server_fixture, malformed_request_gets_400_and_close) {
  test::http_test_client c{port};
  c.write_raw("THIS IS NOT HTTP\r\n\r\n");
  auto r = c.read();
  EXPECT_EQ(r.status, 400u);
  EXPECT_NE(r.body.find("\"error\""), std::string::npos);
  EXPECT_TRUE(c.closed_by_peer());
}

TEST_F(http_server_fixture, body_over_limit_gets_413) {
  test::http_test_client c{port};
  auto r = c.request(http::verb::post, "/big", std::string(4096, 'x'));
  EXPECT_EQ(r.status, 413u);
}

TEST_F(http_server_fixture, handler_without_response_or_throwing_gets_500) {
  test::http_test_client c{port};
  EXPECT_EQ(c.request(http::verb::get, "/none").status, 500u);
  EXPECT_EQ(c.request(http::verb::get, "/throw").status, 500u);
  EXPECT_EQ(c.request(http::verb::get, "/ok").status, 200u);
}

TEST_F(http_server_fixture, connection_close_is_honoured) {
  test::http_test_client c{port};
  c.write_raw("GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  auto r = c.read();
  EXPECT_EQ(r.status, 200u);
  EXPECT_FALSE(r.keep_alive);
  EXPECT_TRUE(c.closed_by_peer());
}

TEST_F(http_server_fixture, stop_closes_idle_keep_alive_connections) {
  test::http_test_client c{port};
  EXPECT_EQ(c.request(http::verb::get, "/x").status, 200u);
  srv->stop();
  EXPECT_TRUE(c.closed_by_peer());
  EXPECT_EQ(srv->open_connections(), 0u);
}

TEST(http_server, refuses_a_port_in_use_and_a_bad_host) {
  http_server::server first{{}, test_handler};
  auto r = first.start();
  ASSERT_TRUE(r) << error_message(r.error());
  http_server::options o;
  o.port = *r;
  http_server::server second{o, test_handler};
  auto r2 = second.start();
  ASSERT_FALSE(r2);
  EXPECT_TRUE(is_error(r2.error(), http_server::errc::bind_failed));
  EXPECT_NE(error_message(r2.error()).find(std::to_string(*r)), std::string::npos);
  http_server::options bad;
  bad.host = "not-an-address";
  http_server::server third{bad, test_handler};
  auto r3 = third.start();
  ASSERT_FALSE(r3);
  EXPECT_TRUE(is_error(r3.error(), http_server::errc::bad_config));
  EXPECT_NE(error_message(r3.error()).find("not-an-address"), std::string::npos);
  auto again = first.start();
  ASSERT_FALSE(again);
  EXPECT_TRUE(is_error(again.error(), http_server::errc::already_started));
}

TEST(http_server, several_io_threads_share_one_port) {
  http_server::options o;
  o.threads = 3;
  http_server::server srv{o, test_handler};
  auto r = srv.start();
  ASSERT_TRUE(r) << error_message(r.error());
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(test::http_fetch(*r, http::verb::get, "/t").body, "GET /t ");
}

TEST(http_server, reason_phrases) {
  EXPECT_EQ(http_server::reason_phrase(200), "OK");
  EXPECT_EQ(http_server::reason_phrase(404), "Not Found");
  EXPECT_EQ(http_server::reason_phrase(599), "Unknown");
}

namespace {

/// Waits (at most 10 s) until `flag` is set.
bool wait_for(const std::atomic<bool>& flag) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!flag && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return flag;
}

/// Answers "late" after `delay`; sets `started` once the answer has begun,
/// i.e. once the request is in flight (an accepted connection whose request
/// is not read yet is idle, and stop() closes idle connections).
http_server::handler delayed_handler(std::chrono::milliseconds delay,
                                     std::atomic<bool>& started) {
  return
      [delay, &started](http_server::request&, http_server::response_writer& w)
        -> boost::asio::awaitable<void> {
        w.begin_chunked(200, "text/plain");
        started = true;
        co_await w.wait_until(http_server::clock::now() + delay);
        w.append_chunk("late");
        co_await w.end_chunked();
      };
}

} // namespace

TEST(http_server, stop_lets_an_in_flight_response_finish) {
  http_server::options o;
  o.stop_grace = std::chrono::seconds(30);
  std::atomic<bool> started{false};
  http_server::server srv{o,
                          delayed_handler(std::chrono::milliseconds(50), started)};
  auto r = srv.start();
  ASSERT_TRUE(r) << error_message(r.error());
  test::http_test_client c{*r};
  c.write_raw("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  // Wait (bounded) until the request is being answered, then stop.
  ASSERT_TRUE(wait_for(started)) << "the handler never started";
  std::thread stopper{[&] { srv.stop(); }};
  test::http_reply reply;
  // A throw here must fail the test, not unwind past the joinable thread.
  EXPECT_NO_THROW(reply = c.read());
  stopper.join();
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(reply.body, "late");
  EXPECT_TRUE(c.closed_by_peer()); // no keep-alive once stopping
}

TEST(http_server, stop_cuts_responses_that_outlast_the_grace_period) {
  http_server::options o;
  o.stop_grace = std::chrono::milliseconds(20);
  std::atomic<bool> started{false};
  http_server::server srv{o, delayed_handler(std::chrono::hours(1), started)};
  auto r = srv.start();
  ASSERT_TRUE(r) << error_message(r.error());
  test::http_test_client c{*r};
  c.write_raw("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(wait_for(started)) << "the handler never started";
  srv.stop(); // returns although the handler would wait an hour
  EXPECT_TRUE(c.closed_by_peer());
}

TEST_F(http_server_fixture, answers_expect_100_continue_before_the_body) {
  test::http_test_client c{port};
  c.write_raw("POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
              "Expect: 100-continue\r\n\r\n");
  auto interim = c.read();
  EXPECT_EQ(interim.status, 100u);
  c.write_raw("hello");
  auto r = c.read();
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "POST /e hello");
}

namespace {

// /hold blocks the io thread until `release` is set; every other request
// answers with its received_at() and the time it was handled, in ns.
struct arrival_probe {
  std::atomic<bool> holding{false};
  std::atomic<bool> release{false};

  http_server::handler handler() {
    return [this](http_server::request& req, http_server::response_writer& w)
               -> boost::asio::awaitable<void> {
      auto handled = http_server::clock::now();
      if (req.target() == "/hold") {
        holding = true;
        while (!release) // keeps the single io thread busy on purpose
          std::this_thread::yield();
        co_await w.send(200, "text/plain", "held");
        co_return;
      }
      auto ns = [](http_server::clock::time_point t) {
        return std::to_string(t.time_since_epoch().count());
      };
      co_await w.send(200, "text/plain",
                      ns(w.received_at()) + " " + ns(handled));
    };
  }
};

} // namespace

// A request that waits in the socket while the server's thread is busy is
// stamped with its arrival (the kernel's receive time), not with the moment
// the server got round to it: latencies a handler promises from
// received_at() do not grow with the server's own queue.
TEST(http_server, received_at_is_the_arrival_not_the_handling) {
  arrival_probe probe;
  http_server::options o; // one io thread
  http_server::server srv{o, probe.handler()};
  auto r = srv.start();
  ASSERT_TRUE(r) << error_message(r.error());
  test::http_test_client busy{*r};
  busy.write_raw("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!probe.holding && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  ASSERT_TRUE(probe.holding);

  test::http_test_client waiting{*r};
  auto before_send = http_server::clock::now();
  waiting.write_raw("GET /when HTTP/1.1\r\nHost: x\r\n\r\n");
  auto after_send = http_server::clock::now();
  probe.release = true;
  EXPECT_EQ(busy.read().body, "held");
  auto reply = waiting.read();
  ASSERT_EQ(reply.status, 200u);
  auto space = reply.body.find(' ');
  ASSERT_NE(space, std::string::npos) << reply.body;
  auto received = std::stoll(reply.body.substr(0, space));
  auto handled = std::stoll(reply.body.substr(space + 1));
  EXPECT_GE(received, before_send.time_since_epoch().count());
  EXPECT_LE(received, after_send.time_since_epoch().count())
      << "stamped when handled, not when the bytes arrived";
  EXPECT_GT(handled, after_send.time_since_epoch().count());
}
