#include "runtime/http/client.hpp"

#include "tests/runtime/http/test_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>

namespace aiperf::http {
namespace {

using testing::received_request;
using testing::scripted_reply;
using testing::test_server;
using namespace std::chrono_literals;

constexpr auto wait_limit = 20s; // generous bound for loaded CI machines

/// Records everything a request reports; thread-safe to wait on.
class recording_sink : public response_sink {
public:
  void on_send(std::int64_t ts) override {
    send_ts = ts;
    ++sends;
  }
  void on_headers(const response_head& head, std::int64_t ts) override {
    status = head.status;
    content_type.assign(head.content_type);
    custom.assign(head.find("x-custom"));
    headers_ts = ts;
  }
  void on_body(std::string_view bytes, std::int64_t) override {
    body.append(bytes);
    ++body_calls;
  }
  void on_complete(const error_info& e, std::int64_t ts) override {
    std::lock_guard<std::mutex> guard{mtx_};
    err = e;
    complete_ts = ts;
    ++completions;
    cv_.notify_all();
  }
  /// Waits (bounded) for on_complete; false if it never came.
  bool wait() {
    std::unique_lock<std::mutex> guard{mtx_};
    return cv_.wait_for(guard, wait_limit, [this] { return completions > 0; });
  }

  int sends = 0;
  int status = 0;
  std::string content_type;
  std::string custom;
  std::string body;
  int body_calls = 0;
  error_info err;
  std::int64_t send_ts = 0;
  std::int64_t headers_ts = 0;
  std::int64_t complete_ts = 0;
  int completions = 0;

private:
  std::mutex mtx_;
  std::condition_variable cv_;
};

class client_fixture : public ::testing::Test {
protected:
  request make_request(std::uint16_t port, std::string target = "/x") {
    request r;
    r.ep = endpoint{"127.0.0.1", port, false};
    r.method = "POST";
    r.target = std::move(target);
    r.headers = {{"Content-Type", "application/json"}};
    r.body = R"({"q":1})";
    return r;
  }

  /// Sends `n` requests one after another through `c`; each must succeed
  /// with `body`.
  void expect_sequential_bodies(client& c, std::uint16_t port, int n,
                                const std::string& body) {
    for (int i = 0; i < n; ++i) {
      recording_sink sink;
      c.submit(make_request(port), sink);
      ASSERT_TRUE(sink.wait());
      ASSERT_TRUE(sink.err.ok()) << sink.err.message;
      EXPECT_EQ(sink.body, body);
    }
  }

  /// Submits the usual request with a deadline of `timeout_ms`.
  void submit_with_timeout(client& c, std::uint16_t port,
                           std::int64_t timeout_ms, recording_sink& sink) {
    auto r = make_request(port);
    r.timeout_ms = timeout_ms;
    c.submit(std::move(r), sink);
  }

  template <class Pred>
  static bool poll_until(Pred pred) {
    auto deadline = std::chrono::steady_clock::now() + wait_limit;
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline)
        return false;
      std::this_thread::yield();
    }
    return true;
  }

  io_pool io{1};
};

std::string pattern_body(std::size_t n) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<char>((i * 131 + i / 7) & 0xff); // includes NULs
  return out;
}

// Verifies a Content-Length body larger than the read buffer arrives intact
// and that status, content type and other headers are reported.
TEST_F(client_fixture, content_length_body_is_delivered_byte_for_byte) {
  auto body = pattern_body(200 * 1024 + 17);
  test_server srv{[&](const received_request&) {
    auto head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                "X-Custom: yes\r\nContent-Length: "
                + std::to_string(body.size()) + "\r\n\r\n";
    return scripted_reply{{head + body.substr(0, 1000), body.substr(1000)}};
  }};
  client c{io.context(0)};
  recording_sink sink;
  c.submit(make_request(srv.port()), sink);
  ASSERT_TRUE(sink.wait());
  EXPECT_TRUE(sink.err.ok()) << sink.err.message;
  EXPECT_EQ(sink.status, 200);
  EXPECT_EQ(sink.content_type, "application/octet-stream");
  EXPECT_EQ(sink.custom, "yes");
  EXPECT_EQ(sink.body, body);
  EXPECT_EQ(sink.completions, 1);
  EXPECT_LE(sink.send_ts, sink.headers_ts);
  EXPECT_LE(sink.headers_ts, sink.complete_ts);
}

// A response is stamped when its bytes reached the socket (the kernel's
// receive stamp), not when the client's I/O thread got round to reading it:
// here the I/O thread is held busy while the server writes.
TEST_F(client_fixture, responses_are_stamped_at_arrival_not_at_read) {
  boost::asio::io_context acceptor_ctx;
  boost::asio::ip::tcp::acceptor acceptor{
    acceptor_ctx, {boost::asio::ip::make_address("127.0.0.1"), 0}};
  client c{io.context(0)};
  recording_sink sink;
  c.submit(make_request(acceptor.local_endpoint().port()), sink);
  auto peer = acceptor.accept();
  std::string got;
  char buf[4096];
  while (got.find(R"({"q":1})") == std::string::npos) {
    boost::system::error_code ec;
    auto n = peer.read_some(boost::asio::buffer(buf), ec);
    ASSERT_FALSE(ec) << ec.message();
    got.append(buf, n);
  }
  std::atomic<bool> holding{false}, release{false};
  boost::asio::post(io.context(0), [&] {
    holding = true;
    while (!release) // keeps the client's I/O thread busy on purpose
      std::this_thread::yield();
  });
  ASSERT_TRUE(poll_until([&] { return holding.load(); }));
  auto before = now_ns();
  boost::asio::write(peer, boost::asio::buffer(
                             test_server::content_length_response("late")));
  auto after = now_ns();
  release = true;
  ASSERT_TRUE(sink.wait());
  EXPECT_TRUE(sink.err.ok()) << sink.err.message;
  EXPECT_EQ(sink.body, "late");
  EXPECT_GE(sink.headers_ts, before);
  EXPECT_LE(sink.headers_ts, after) << "stamped when read, not on arrival";
}

// Verifies chunked framing is removed even when chunk sizes, chunk data and
// the terminating chunk are split across separate TCP writes.
TEST_F(client_fixture, chunked_body_split_across_writes_is_decoded) {
  test_server srv{[](const received_request&) {
    return scripted_reply{{
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
      "Transfer-Encoding: chunked\r\n\r\n",
      "0", "f\r\ndata: hel", "lo\r\n\r\n\r", "\n5\r\nwor", "ld\r\n0", "\r\n\r\n"}};
  }};
  client c{io.context(0)};
  recording_sink sink;
  c.submit(make_request(srv.port()), sink);
  ASSERT_TRUE(sink.wait());
  EXPECT_TRUE(sink.err.ok()) << sink.err.message;
  EXPECT_EQ(sink.content_type, "text/event-stream");
  EXPECT_EQ(sink.body, "data: hello\r\n\r\nworld");
}

// Verifies a close-delimited body (no length, no chunking) is complete at EOF.
TEST_F(client_fixture, close_delimited_body_completes_at_eof) {
  test_server srv{[](const received_request&) {
    return scripted_reply{{"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabc",
                           "def"},
                          true};
  }};
  client c{io.context(0)};
  recording_sink sink;
  c.submit(make_request(srv.port()), sink);
  ASSERT_TRUE(sink.wait());
  EXPECT_TRUE(sink.err.ok()) << sink.err.message;
  EXPECT_EQ(sink.body, "abcdef");
}

// Verifies the server sees the method, target, Host and the body we sent.
TEST_F(client_fixture, request_is_serialized_with_host_and_body) {
  std::mutex m;
  received_request seen;
  test_server srv{[&](const received_request& r) {
    std::lock_guard<std::mutex> guard{m};
    seen = r;
    return scripted_reply{{test_server::content_length_response("ok")}};
  }};
  client c{io.context(0)};
  recording_sink sink;
  c.submit(make_request(srv.port(), "/v1/chat/completions"), sink);
  ASSERT_TRUE(sink.wait());
  std::lock_guard<std::mutex> guard{m};
  EXPECT_EQ(seen.head.rfind("POST /v1/chat/completions HTTP/1.1\r\n", 0), 0u);
  EXPECT_NE(seen.head.find("Host: 127.0.0.1:" + std::to_string(srv.port())),
            std::string::npos);
  EXPECT_NE(seen.head.find("Content-Type: application/json\r\n"),
            std::string::npos);
  EXPECT_EQ(seen.body, R"({"q":1})");
}

// Requests to one endpoint whose method, target or shared block change
// from one to the next (the head's start is kept per endpoint): each head
// is exactly what that request alone would give, with Host, User-Agent and
// Content-Length added only where neither block nor own fields set them.
TEST_F(client_fixture, request_heads_follow_each_requests_shape) {
  std::mutex m;
  std::vector<std::string> heads;
  test_server srv{[&](const received_request& r) {
    std::lock_guard<std::mutex> guard{m};
    heads.push_back(r.head);
    return scripted_reply{{test_server::content_length_response("ok")}};
  }};
  using fields = std::vector<std::pair<std::string, std::string>>;
  auto json = std::make_shared<const fields>(fields{{"Content-Type", "application/json"}});
  auto own_host = std::make_shared<const fields>(
    fields{{"host", "example.test"}, {"USER-AGENT", "mine/1"}});
  struct shape {
    std::string method;
    std::string target;
    std::shared_ptr<const fields> shared;
    fields own;
    std::string body;
  };
  const std::vector<shape> shapes = {
    {"POST", "/a", json, {{"X-Request-ID", "r1"}}, "{}"},
    {"POST", "/a", json, {{"X-Request-ID", "r2"}}, "{\"k\":1}"},
    {"POST", "/b", json, {}, ""},                         // target only
    {"GET", "/b", json, {}, ""},                          // method only
    {"POST", "/b", json, {}, "w"},
    {"POST", "/b", own_host, {{"X-Request-ID", "r3"}}, "x"}, // block only
    {"POST", "/b", json, {{"Host", "other.test"}}, "y"},
    {"POST", "/b", nullptr, {{"content-length", "1"}}, "z"},
    {"POST", "/a", json, {{"X-Request-ID", "r4"}}, "{}"},
  };
  const std::string host = "Host: 127.0.0.1:" + std::to_string(srv.port()) + "\r\n";
  std::vector<std::string> want;
  client c{io.context(0)};
  for (auto& sh : shapes) {
    request r;
    r.ep = endpoint{"127.0.0.1", srv.port(), false};
    r.method = sh.method;
    r.target = sh.target;
    r.shared_headers = sh.shared;
    r.headers = sh.own;
    r.body = sh.body;
    recording_sink sink;
    c.submit(std::move(r), sink);
    ASSERT_TRUE(sink.wait());
    ASSERT_TRUE(sink.err.ok()) << sink.err.message;
    fields all = sh.shared ? *sh.shared : fields{};
    all.insert(all.end(), sh.own.begin(), sh.own.end());
    auto sets = [&](std::string_view lower_name) {
      return std::any_of(all.begin(), all.end(), [&](const auto& f) {
        std::string name = f.first;
        for (auto& ch : name)
          ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return name == lower_name;
      });
    };
    std::string w = sh.method + " " + sh.target + " HTTP/1.1\r\n";
    for (auto& [k, v] : all)
      w += k + ": " + v + "\r\n";
    if (!sets("host"))
      w += host;
    if (!sets("user-agent"))
      w += "User-Agent: aiperf-node\r\n";
    if (!sets("accept-encoding"))
      w += "Accept-Encoding: identity\r\n";
    if (!sets("content-length") && (sh.method == "POST" || !sh.body.empty()))
      w += "Content-Length: " + std::to_string(sh.body.size()) + "\r\n";
    want.push_back(w + "\r\n");
  }
  std::lock_guard<std::mutex> guard{m};
  ASSERT_EQ(heads.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(heads[i], want[i]) << "request " << i;
  EXPECT_EQ(c.connections_opened(), 1u);
}

// Verifies sequential requests share one keep-alive connection.
TEST_F(client_fixture, sequential_requests_reuse_one_connection) {
  test_server srv{[](const received_request&) {
    return scripted_reply{{test_server::content_length_response("hello")}};
  }};
  client c{io.context(0)};
  expect_sequential_bodies(c, srv.port(), 5, "hello");
  EXPECT_EQ(srv.accepted(), 1);
  EXPECT_EQ(c.connections_opened(), 1u);
}

// Verifies a keep-alive connection closed by the server while idle is
// replaced transparently: the request succeeds on a second connection.
TEST_F(client_fixture, idle_connection_closed_by_server_is_retried) {
  test_server srv{[](const received_request&) {
    return scripted_reply{{test_server::content_length_response("hello")}};
  }};
  client c{io.context(0)};
  recording_sink first;
  c.submit(make_request(srv.port()), first);
  ASSERT_TRUE(first.wait());
  ASSERT_TRUE(first.err.ok()) << first.err.message;
  ASSERT_TRUE(poll_until([&] { return srv.close_idle_connections() == 1; }));
  recording_sink second;
  c.submit(make_request(srv.port()), second);
  ASSERT_TRUE(second.wait());
  EXPECT_TRUE(second.err.ok()) << second.err.message;
  EXPECT_EQ(second.body, "hello");
  EXPECT_EQ(second.completions, 1);
  EXPECT_EQ(srv.accepted(), 2);
}

// Verifies a response cut off mid-body is an io error, not retried.
TEST_F(client_fixture, truncated_response_is_an_io_error) {
  test_server srv{[](const received_request&) {
    return scripted_reply{
      {"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part"}, true};
  }};
  client c{io.context(0)};
  recording_sink sink;
  c.submit(make_request(srv.port()), sink);
  ASSERT_TRUE(sink.wait());
  EXPECT_EQ(sink.err.category, error_category::io) << sink.err.message;
  EXPECT_EQ(sink.sends, 1);
  EXPECT_EQ(srv.requests(), 1);
}

// Verifies a stalled server yields a timeout error (category only).
TEST_F(client_fixture, stalling_server_times_out) {
  test_server srv{[](const received_request&) {
    return scripted_reply{{}, false, true};
  }};
  client c{io.context(0)};
  recording_sink sink;
  auto req = make_request(srv.port());
  req.timeout_ms = 200;
  c.submit(std::move(req), sink);
  ASSERT_TRUE(sink.wait());
  EXPECT_EQ(sink.err.category, error_category::timeout) << sink.err.message;
  EXPECT_EQ(sink.completions, 1);
}

// Verifies a keep-alive connection's deadline timer, still armed for the
// first request's (short) deadline, does not expire the second request,
// whose own deadline is far away: it re-arms instead.
TEST_F(client_fixture, earlier_requests_deadline_does_not_expire_a_later_one) {
  std::atomic<int> seen{0};
  std::atomic<std::int64_t> release_at{0}; // steady ns since epoch
  test_server srv{[&](const received_request&) {
    if (seen.fetch_add(1) > 0) {
      // Answer only once the first request's deadline has passed (bounded).
      poll_until([&] {
        return std::chrono::steady_clock::now().time_since_epoch().count()
               >= release_at.load();
      });
    }
    return scripted_reply{{test_server::content_length_response("hello")}};
  }};
  client c{io.context(0)};
  recording_sink first;
  auto first_deadline = std::chrono::steady_clock::now() + 100ms;
  submit_with_timeout(c, srv.port(), 100, first);
  ASSERT_TRUE(first.wait());
  ASSERT_TRUE(first.err.ok()) << first.err.message;
  release_at = (first_deadline + 100ms).time_since_epoch().count();
  recording_sink second;
  submit_with_timeout(c, srv.port(), 60'000, second);
  ASSERT_TRUE(second.wait());
  EXPECT_TRUE(second.err.ok()) << second.err.message;
  EXPECT_EQ(second.body, "hello");
  EXPECT_EQ(c.connections_opened(), 1u);
}

// Verifies a short deadline on a connection whose timer is armed for a
// previous request's long deadline still fires (the timer moves earlier).
TEST_F(client_fixture, short_deadline_after_a_long_one_times_out) {
  std::atomic<int> seen{0};
  test_server srv{[&](const received_request&) {
    if (seen.fetch_add(1) > 0)
      return scripted_reply{{}, false, true};
    return scripted_reply{{test_server::content_length_response("hello")}};
  }};
  client c{io.context(0)};
  recording_sink first;
  submit_with_timeout(c, srv.port(), 600'000, first);
  ASSERT_TRUE(first.wait());
  ASSERT_TRUE(first.err.ok()) << first.err.message;
  recording_sink second;
  submit_with_timeout(c, srv.port(), 200, second);
  ASSERT_TRUE(second.wait());
  EXPECT_EQ(second.err.category, error_category::timeout)
    << second.err.message;
  EXPECT_EQ(second.completions, 1);
  EXPECT_EQ(c.connections_opened(), 1u);
}

// Verifies many sequential requests with deadlines on one connection all
// succeed and leave no stray timeout behind.
TEST_F(client_fixture, many_requests_with_deadlines_reuse_the_timer) {
  test_server srv{[](const received_request&) {
    return scripted_reply{{test_server::content_length_response("ok")}};
  }};
  client c{io.context(0)};
  for (int i = 0; i < 50; ++i) {
    recording_sink sink;
    // Later every time, like a closed loop.
    submit_with_timeout(c, srv.port(), 30'000 + i, sink);
    ASSERT_TRUE(sink.wait());
    ASSERT_TRUE(sink.err.ok()) << sink.err.message;
    EXPECT_EQ(sink.completions, 1);
  }
  EXPECT_EQ(c.connections_opened(), 1u);
}

// Verifies Content-Length responses read the same whichever head path
// (fast path or Beast) a read split sends them down: head split mid-field,
// head and body split, body in pieces.
TEST_F(client_fixture, content_length_responses_split_anywhere_read_intact) {
  const std::string body = pattern_body(3000);
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream"
                           "\r\nX-Custom: yes\r\nContent-Length: 3000\r\n\r\n";
  const std::string whole = head + body;
  for (std::size_t cut : {std::size_t{5}, std::size_t{30}, head.size() - 1,
                          head.size(), head.size() + 1, head.size() + 1500}) {
    test_server srv{[&](const received_request&) {
      return scripted_reply{{whole.substr(0, cut), whole.substr(cut)}};
    }};
    client c{io.context(0)};
    for (int i = 0; i < 2; ++i) {
      recording_sink sink;
      c.submit(make_request(srv.port()), sink);
      ASSERT_TRUE(sink.wait());
      ASSERT_TRUE(sink.err.ok()) << sink.err.message;
      EXPECT_EQ(sink.status, 200);
      EXPECT_EQ(sink.content_type, "text/event-stream") << "cut at " << cut;
      EXPECT_EQ(sink.custom, "yes") << "cut at " << cut;
      EXPECT_EQ(sink.body, body) << "cut at " << cut;
    }
    EXPECT_EQ(c.connections_opened(), 1u) << "cut at " << cut;
  }
}

// Verifies "Connection: close" (left to Beast) is honoured: the next
// request opens a new connection.
TEST_F(client_fixture, connection_close_response_is_not_reused) {
  test_server srv{[](const received_request&) {
    return scripted_reply{
      {"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"},
      true};
  }};
  client c{io.context(0)};
  expect_sequential_bodies(c, srv.port(), 2, "ok");
  EXPECT_EQ(c.connections_opened(), 2u);
}

// Verifies bytes after a complete Content-Length response (never asked
// for: we do not pipeline) drop the connection instead of being read as
// the next response.
TEST_F(client_fixture, bytes_after_a_content_length_body_drop_the_connection) {
  test_server srv{[](const received_request&) {
    return scripted_reply{
      {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n"}};
  }};
  client c{io.context(0)};
  expect_sequential_bodies(c, srv.port(), 2, "ok");
  EXPECT_EQ(c.connections_opened(), 2u);
}

// Verifies connecting to a closed port reports a connect error.
TEST_F(client_fixture, refused_connection_is_a_connect_error) {
  // Bound, never listening: refuses connections, and while it is bound the
  // kernel gives the port to no one else.
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket closed{ioc};
  closed.open(boost::asio::ip::tcp::v4());
  closed.bind({boost::asio::ip::make_address("127.0.0.1"), 0});
  auto port = closed.local_endpoint().port();
  client c{io.context(0)};
  recording_sink sink;
  c.submit(make_request(port), sink);
  ASSERT_TRUE(sink.wait());
  EXPECT_EQ(sink.err.category, error_category::connect);
  EXPECT_NE(sink.err.message.find(std::to_string(port)), std::string::npos)
    << sink.err.message;
}

// Verifies cancel() completes an in-flight request with `cancelled`, and the
// connection is not reused afterwards.
TEST_F(client_fixture, cancel_in_flight_completes_with_cancelled) {
  std::atomic<int> n{0};
  test_server srv{[&](const received_request&) {
    if (n++ == 0)
      return scripted_reply{{}, false, true};
    return scripted_reply{{test_server::content_length_response("later")}};
  }};
  client c{io.context(0)};
  recording_sink sink;
  auto id = c.submit(make_request(srv.port()), sink);
  ASSERT_TRUE(poll_until([&] { return srv.requests() == 1; }));
  c.cancel(id);
  ASSERT_TRUE(sink.wait());
  EXPECT_EQ(sink.err.category, error_category::cancelled);
  recording_sink next;
  c.submit(make_request(srv.port()), next);
  ASSERT_TRUE(next.wait());
  EXPECT_TRUE(next.err.ok()) << next.err.message;
  EXPECT_EQ(next.body, "later");
  EXPECT_EQ(srv.accepted(), 2);
  EXPECT_EQ(sink.completions, 1);
}

// Verifies cancel() also reaches a request still queued for a connection.
TEST_F(client_fixture, cancel_of_queued_request_completes_it) {
  test_server srv{[](const received_request&) {
    return scripted_reply{{}, false, true};
  }};
  client_options opts;
  opts.max_connections_per_endpoint = 1;
  client c{io.context(0), opts};
  recording_sink busy;
  recording_sink queued;
  c.submit(make_request(srv.port()), busy);
  auto id = c.submit(make_request(srv.port()), queued);
  c.cancel(id);
  ASSERT_TRUE(queued.wait());
  EXPECT_EQ(queued.err.category, error_category::cancelled);
  EXPECT_EQ(queued.sends, 0);
  c.shutdown(); // completes the stalled one too
  ASSERT_TRUE(busy.wait());
  EXPECT_EQ(busy.err.category, error_category::cancelled);
}

// Verifies a malformed status line is a protocol error.
TEST_F(client_fixture, garbage_response_is_a_protocol_error) {
  test_server srv{[](const received_request&) {
    return scripted_reply{{"NOT HTTP AT ALL\r\n\r\n"}, true};
  }};
  client c{io.context(0)};
  recording_sink sink;
  c.submit(make_request(srv.port()), sink);
  ASSERT_TRUE(sink.wait());
  EXPECT_EQ(sink.err.category, error_category::protocol) << sink.err.message;
}

// 1xx interim responses (100 Continue, 103 Early Hints) are skipped: the
// final response is the one reported, even when an interim head is split
// across writes or several come first.
TEST_F(client_fixture, interim_1xx_responses_are_skipped) {
  test_server srv{[](const received_request&) {
    return scripted_reply{{"HTTP/1.1 100 Continue\r\n\r\n",
                           "HTTP/1.1 103 Ear", "ly Hints\r\nLink: </a>\r\n\r\n"
                           + test_server::content_length_response("final")}};
  }};
  client c{io.context(0)};
  for (int i = 0; i < 2; ++i) { // the connection stays reusable
    recording_sink sink;
    c.submit(make_request(srv.port()), sink);
    ASSERT_TRUE(sink.wait());
    ASSERT_TRUE(sink.err.ok()) << sink.err.message;
    EXPECT_EQ(sink.status, 200);
    EXPECT_EQ(sink.body, "final");
  }
  EXPECT_EQ(c.connections_opened(), 1u);
}

// Every request asks for an uncompressed body; a response that is encoded
// all the same fails naming the encoding (Content-Length and chunked heads
// take different parsing paths).
TEST_F(client_fixture, encoded_response_fails_naming_the_encoding) {
  std::mutex m;
  std::string seen;
  test_server srv{[&](const received_request& r) {
    std::lock_guard<std::mutex> guard{m};
    seen = r.head;
    if (r.head.find("POST /chunked") == 0)
      return scripted_reply{{"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                             "Content-Encoding: gzip\r\nTransfer-Encoding: chunked"
                             "\r\n\r\n3\r\n\x1f\x8b\x08\r\n0\r\n\r\n"}};
    return scripted_reply{{"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n"
                           "Content-Length: 3\r\n\r\nabc"}};
  }};
  client c{io.context(0)};
  for (auto [target, encoding] : {std::pair{"/chunked", "'gzip'"},
                                  std::pair{"/length", "'br'"}}) {
    recording_sink sink;
    c.submit(make_request(srv.port(), target), sink);
    ASSERT_TRUE(sink.wait());
    EXPECT_EQ(sink.err.category, error_category::protocol) << target;
    EXPECT_NE(sink.err.message.find(encoding), std::string::npos) << sink.err.message;
    EXPECT_NE(sink.err.message.find("Content-Encoding"), std::string::npos);
    std::lock_guard<std::mutex> guard{m};
    EXPECT_NE(seen.find("Accept-Encoding: identity\r\n"), std::string::npos) << seen;
  }
}

// http:// against a TLS port: the server's first byte is a TLS record (an
// alert, 0x15, or a handshake, 0x16); a server that just closes gets a hint.
TEST_F(client_fixture, plain_http_to_a_tls_server_says_use_https) {
  test_server alert{[](const received_request&) {
    return scripted_reply{{std::string{"\x15\x03\x01\x00\x02\x02\x46", 7}}, true};
  }};
  client c{io.context(0)};
  recording_sink sink;
  c.submit(make_request(alert.port()), sink);
  ASSERT_TRUE(sink.wait());
  EXPECT_FALSE(sink.err.ok());
  EXPECT_NE(sink.err.message.find("speaks TLS: use https://"), std::string::npos)
    << sink.err.message;
  test_server closes{[](const received_request&) {
    return scripted_reply{{}, true};
  }};
  recording_sink closed;
  c.submit(make_request(closes.port()), closed);
  ASSERT_TRUE(closed.wait());
  EXPECT_EQ(closed.err.category, error_category::io);
  EXPECT_NE(closed.err.message.find("if it speaks TLS, use https://"),
            std::string::npos)
    << closed.err.message;
}

// A server that answers before reading the body (413 Payload Too Large) and
// closes makes the write fail (EPIPE/ECONNRESET): the answer is reported,
// not the reset.
TEST_F(client_fixture, early_answer_to_a_large_body_is_reported_not_the_reset) {
  boost::asio::io_context acceptor_ctx;
  boost::asio::ip::tcp::acceptor acceptor{
    acceptor_ctx, {boost::asio::ip::make_address("127.0.0.1"), 0}};
  client c{io.context(0)};
  recording_sink sink;
  auto r = make_request(acceptor.local_endpoint().port());
  r.body.assign(32 << 20, 'x');
  c.submit(std::move(r), sink);
  auto peer = acceptor.accept();
  std::string got;
  char buf[4096];
  while (got.find("\r\n\r\n") == std::string::npos) {
    boost::system::error_code ec;
    auto n = peer.read_some(boost::asio::buffer(buf), ec);
    ASSERT_FALSE(ec) << ec.message();
    got.append(buf, n);
  }
  boost::asio::write(peer, boost::asio::buffer(std::string{
                             "HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n"
                             "Content-Length: 9\r\n\r\ntoo large"}));
  peer.close(); // unread body bytes: the kernel resets the connection
  ASSERT_TRUE(sink.wait());
  EXPECT_TRUE(sink.err.ok()) << sink.err.message;
  EXPECT_EQ(sink.status, 413);
  EXPECT_EQ(sink.body, "too large");
}

// Verifies 200 concurrent requests over at most 16 connections all complete
// exactly once with the right body.
TEST_F(client_fixture, many_concurrent_requests_share_a_bounded_pool) {
  test_server srv{[](const received_request& r) {
    return scripted_reply{{test_server::content_length_response(
      "echo:" + r.head.substr(5, r.head.find(' ', 5) - 5))}};
  }};
  client_options opts;
  opts.max_connections_per_endpoint = 16;
  client c{io.context(0), opts};
  constexpr int n = 200;
  std::vector<std::unique_ptr<recording_sink>> sinks;
  for (int i = 0; i < n; ++i) {
    sinks.push_back(std::make_unique<recording_sink>());
    c.submit(make_request(srv.port(), "/r" + std::to_string(i)), *sinks.back());
  }
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(sinks[i]->wait()) << "request " << i;
    EXPECT_TRUE(sinks[i]->err.ok()) << sinks[i]->err.message;
    EXPECT_EQ(sinks[i]->body, "echo:/r" + std::to_string(i));
  }
  // Give any stray duplicate completion a chance to show up.
  c.shutdown();
  for (auto& s : sinks)
    EXPECT_EQ(s->completions, 1);
  EXPECT_LE(srv.accepted(), 16);
  EXPECT_EQ(srv.requests(), n);
}

// Verifies bad header input is rejected with a message naming the header.
TEST_F(client_fixture, header_with_line_break_is_rejected) {
  client c{io.context(0)};
  recording_sink sink;
  auto req = make_request(1);
  req.headers.emplace_back("X-Evil", "a\r\nInjected: 1");
  c.submit(std::move(req), sink);
  ASSERT_TRUE(sink.wait());
  EXPECT_EQ(sink.err.category, error_category::protocol);
  EXPECT_NE(sink.err.message.find("X-Evil"), std::string::npos);
}

// Verifies a CR or LF anywhere in a long value (inside a 16-byte block or
// in the tail) is found, and that clean long values pass.
TEST_F(client_fixture, line_break_anywhere_in_a_long_value_is_rejected) {
  test_server srv{[](const received_request&) {
    return scripted_reply{{test_server::content_length_response("ok")}};
  }};
  client c{io.context(0)};
  for (std::size_t len : {std::size_t{15}, std::size_t{16}, std::size_t{37}}) {
    for (std::size_t at = 0; at < len; ++at) {
      for (char brk : {'\r', '\n'}) {
        std::string value(len, 'v');
        value[at] = brk;
        recording_sink sink;
        auto req = make_request(srv.port());
        req.headers.emplace_back("X-Long", value);
        c.submit(std::move(req), sink);
        ASSERT_TRUE(sink.wait());
        EXPECT_EQ(sink.err.category, error_category::protocol)
          << "len " << len << " at " << at;
      }
    }
    recording_sink clean;
    auto req = make_request(srv.port());
    req.headers.emplace_back("X-Long", std::string(len, 'v'));
    c.submit(std::move(req), clean);
    ASSERT_TRUE(clean.wait());
    EXPECT_TRUE(clean.err.ok()) << clean.err.message;
  }
  EXPECT_EQ(srv.requests(), 3);
}

// Verifies shared header fields are sent before the request's own fields,
// and are validated like them.
TEST_F(client_fixture, shared_headers_are_sent_and_validated) {
  std::mutex m;
  received_request seen;
  test_server srv{[&](const received_request& r) {
    std::lock_guard<std::mutex> guard{m};
    seen = r;
    return scripted_reply{{test_server::content_length_response("ok")}};
  }};
  client c{io.context(0)};
  auto shared = std::make_shared<
    const std::vector<std::pair<std::string, std::string>>>(
    std::vector<std::pair<std::string, std::string>>{{"X-Shared", "1"}});
  recording_sink sink;
  auto req = make_request(srv.port(), "/x");
  req.shared_headers = shared;
  req.headers.emplace_back("X-Own", "2");
  c.submit(std::move(req), sink);
  ASSERT_TRUE(sink.wait());
  {
    std::lock_guard<std::mutex> guard{m};
    auto a = seen.head.find("X-Shared: 1\r\n");
    auto b = seen.head.find("X-Own: 2\r\n");
    ASSERT_NE(a, std::string::npos);
    ASSERT_NE(b, std::string::npos);
    EXPECT_LT(a, b);
  }
  recording_sink bad_sink;
  auto bad = make_request(srv.port(), "/x");
  bad.shared_headers = std::make_shared<
    const std::vector<std::pair<std::string, std::string>>>(
    std::vector<std::pair<std::string, std::string>>{{"X-Bad", "a\nb"}});
  c.submit(std::move(bad), bad_sink);
  ASSERT_TRUE(bad_sink.wait());
  EXPECT_EQ(bad_sink.err.category, error_category::protocol);
  EXPECT_NE(bad_sink.err.message.find("X-Bad"), std::string::npos);
}

// Verifies shutdown completes requests submitted afterwards as cancelled.
TEST_F(client_fixture, submit_after_shutdown_is_cancelled) {
  client c{io.context(0)};
  c.shutdown();
  recording_sink sink;
  c.submit(make_request(1), sink);
  ASSERT_TRUE(sink.wait());
  EXPECT_EQ(sink.err.category, error_category::cancelled);
}

// Verifies submit_here on the I/O thread writes the request at once on an
// idle connection (on_send before it returns) and stores the id first.
TEST_F(client_fixture, submit_here_on_io_thread_sends_before_returning) {
  test_server srv{[](const received_request&) {
    return scripted_reply{{test_server::content_length_response("hi")}};
  }};
  client c{io.context(0)};
  recording_sink warm;
  c.submit(make_request(srv.port()), warm);
  ASSERT_TRUE(warm.wait());
  ASSERT_TRUE(warm.err.ok()) << warm.err.message;
  recording_sink sink;
  request_id id = 0;
  std::promise<int> sends_at_return;
  auto req = make_request(srv.port()); // lent: lives until on_complete
  boost::asio::post(io.context(0), [&] {
    c.submit_here(req, sink, id);
    sends_at_return.set_value(sink.sends);
  });
  auto fut = sends_at_return.get_future();
  ASSERT_EQ(fut.wait_for(wait_limit), std::future_status::ready);
  EXPECT_EQ(fut.get(), 1);
  ASSERT_TRUE(sink.wait());
  EXPECT_TRUE(sink.err.ok()) << sink.err.message;
  EXPECT_EQ(sink.body, "hi");
  EXPECT_NE(id, 0u);
  EXPECT_EQ(c.connections_opened(), 1u); // reused the idle connection
}

/// Completes inside submit_here and checks the id was stored before.
class id_checking_sink : public recording_sink {
public:
  explicit id_checking_sink(const request_id& id) : id_(id) {}
  void on_complete(const error_info& e, std::int64_t ts) override {
    id_at_complete = id_;
    recording_sink::on_complete(e, ts);
  }
  request_id id_at_complete = 0;

private:
  const request_id& id_;
};

// Verifies a request that fails at once inside submit_here completes before
// it returns, with its id already stored (callers must not touch the sink
// afterwards), and that off the I/O thread it behaves like submit().
TEST_F(client_fixture, submit_here_stores_the_id_before_any_callback) {
  client c{io.context(0)};
  request_id id = 0;
  id_checking_sink sink{id};
  std::promise<int> completions_at_return;
  auto req = make_request(1);
  req.headers.emplace_back("X-Evil", "a\nb");
  boost::asio::post(io.context(0), [&] {
    c.submit_here(req, sink, id);
    completions_at_return.set_value(sink.completions);
  });
  auto fut = completions_at_return.get_future();
  ASSERT_EQ(fut.wait_for(wait_limit), std::future_status::ready);
  EXPECT_EQ(fut.get(), 1);
  EXPECT_NE(id, 0u);
  EXPECT_EQ(sink.id_at_complete, id);
  EXPECT_EQ(sink.err.category, error_category::protocol);

  request_id other = 0;
  id_checking_sink off_thread{other};
  c.submit_here(req, off_thread, other);
  ASSERT_TRUE(off_thread.wait());
  EXPECT_EQ(off_thread.id_at_complete, other);
  EXPECT_GT(other, id);
}

// Verifies io_pool threads ask for io_thread_nice when told to: applied when
// the process may raise priorities, left at 0 otherwise (never an error).
TEST(io_pool_priority, threads_run_at_io_thread_nice_when_allowed) {
  io_pool pool{1, true};
  std::promise<int> nice_seen;
  boost::asio::post(pool.context(0), [&] {
    errno = 0;
    nice_seen.set_value(::getpriority(PRIO_PROCESS,
                                      static_cast<id_t>(::gettid())));
  });
  auto fut = nice_seen.get_future();
  ASSERT_EQ(fut.wait_for(wait_limit), std::future_status::ready);
  auto nice = fut.get();
  // Which one depends on CAP_SYS_NICE; anything else would be a bug.
  EXPECT_TRUE(nice == io_thread_nice || nice == 0) << nice;
}

// Verifies the default leaves the threads' priority alone.
TEST(io_pool_priority, default_keeps_normal_priority) {
  io_pool pool{1};
  std::promise<int> nice_seen;
  boost::asio::post(pool.context(0), [&] {
    nice_seen.set_value(::getpriority(PRIO_PROCESS,
                                      static_cast<id_t>(::gettid())));
  });
  auto fut = nice_seen.get_future();
  ASSERT_EQ(fut.wait_for(wait_limit), std::future_status::ready);
  EXPECT_EQ(fut.get(), ::getpriority(PRIO_PROCESS, 0));
}

} // namespace
} // namespace aiperf::http
