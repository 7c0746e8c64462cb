// Scale features of the client: pooled read buffers (idle streams hold no
// buffer, bytes split across reads survive the buffer's return), source
// address binding and loopback spreading, the open-file limit.
#include "runtime/http/client.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

namespace aiperf::http {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

/// Polls `cond` until it holds or 20 s pass (loaded machines).
bool eventually(const std::function<bool()>& cond) {
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

/// Blocking loopback server, a thread per connection; `serve` gets the
/// socket after the request head (no body) was read.
class raw_server {
public:
  using serve_fn = std::function<void(tcp::socket&)>;
  explicit raw_server(serve_fn fn)
    : fn_(std::move(fn)),
      acceptor_(ioc_, tcp::endpoint{asio::ip::make_address("127.0.0.1"), 0}) {
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] {
      for (;;) {
        auto s = std::make_shared<tcp::socket>(ioc_);
        boost::system::error_code ec;
        acceptor_.accept(*s, ec);
        if (ec || stop_)
          return;
        {
          std::lock_guard<std::mutex> guard{mtx_};
          peers_.insert(s->remote_endpoint(ec).address().to_string());
          socks_.push_back(s);
        }
        workers_.emplace_back([this, s] {
          asio::streambuf buf;
          boost::system::error_code ec2;
          asio::read_until(*s, buf, "\r\n\r\n", ec2);
          if (!ec2)
            fn_(*s);
        });
      }
    });
  }
  ~raw_server() {
    stop_ = true;
    boost::system::error_code ec;
    acceptor_.close(ec);
    {
      std::lock_guard<std::mutex> guard{mtx_};
      for (auto& s : socks_)
        s->shutdown(tcp::socket::shutdown_both, ec);
    }
    // Wake accept() with a throwaway connection.
    tcp::socket poke(ioc_);
    poke.connect(tcp::endpoint{asio::ip::make_address("127.0.0.1"), port_}, ec);
    thread_.join();
    for (auto& w : workers_)
      w.join();
  }
  std::uint16_t port() const { return port_; }
  std::set<std::string> peers() {
    std::lock_guard<std::mutex> guard{mtx_};
    return peers_;
  }

private:
  serve_fn fn_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mtx_;
  std::set<std::string> peers_;
  std::vector<std::shared_ptr<tcp::socket>> socks_;
  std::thread thread_;
  std::vector<std::thread> workers_;
};

struct counting_sink : response_sink {
  void on_send(std::int64_t) override {}
  void on_headers(const response_head& h, std::int64_t) override {
    status = h.status;
    headers_seen = true;
  }
  void on_body(std::string_view b, std::int64_t) override {
    std::lock_guard<std::mutex> guard{mtx};
    body.append(b);
    got_body = true;
  }
  void on_complete(const error_info& e, std::int64_t) override {
    std::lock_guard<std::mutex> guard{mtx};
    err = e;
    done = true;
  }
  std::mutex mtx;
  std::atomic<int> status{0};
  std::atomic<bool> headers_seen{false};
  std::atomic<bool> got_body{false};
  std::atomic<bool> done{false};
  std::string body;
  error_info err;
};

request get(std::uint16_t port) {
  request r;
  r.ep = endpoint{"127.0.0.1", port, false};
  r.target = "/stream";
  return r;
}

const std::string chunked_head
  = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    "Transfer-Encoding: chunked\r\n\r\n";

TEST(client_scale, idle_streams_hold_no_read_buffer) {
  constexpr int streams = 40;
  std::mutex mtx;
  std::condition_variable cv;
  bool release = false;
  raw_server server{[&](tcp::socket& s) {
    boost::system::error_code ec;
    asio::write(s, asio::buffer(chunked_head + "5\r\nhello\r\n"), ec);
    std::unique_lock<std::mutex> guard{mtx};
    cv.wait(guard, [&] { return release; });
    asio::write(s, asio::buffer(std::string{"0\r\n\r\n"}), ec);
  }};
  io_pool io{1};
  client_options opts;
  opts.max_connections_per_endpoint = streams;
  client c{io.context(0), opts};
  std::vector<std::unique_ptr<counting_sink>> sinks;
  for (int i = 0; i < streams; ++i) {
    sinks.push_back(std::make_unique<counting_sink>());
    c.submit(get(server.port()), *sinks.back());
  }
  ASSERT_TRUE(eventually([&] {
    for (auto& s : sinks)
      if (!s->got_body)
        return false;
    return true;
  }));
  // Every stream is open and mid-response; reads were parsed one at a time
  // on one I/O thread, so the pool never needed more than one buffer.
  EXPECT_EQ(c.connections_opened(), static_cast<std::uint64_t>(streams));
  EXPECT_EQ(c.read_buffers_allocated(), 1u);
  {
    std::lock_guard<std::mutex> guard{mtx};
    release = true;
  }
  cv.notify_all();
  ASSERT_TRUE(eventually([&] {
    for (auto& s : sinks)
      if (!s->done)
        return false;
    return true;
  }));
  for (auto& s : sinks) {
    EXPECT_TRUE(s->err.ok()) << s->err.message;
    EXPECT_EQ(s->body, "hello");
  }
  c.shutdown();
}

TEST(client_scale, bytes_split_across_reads_survive_the_buffer_return) {
  // The chunk-size line "a\r\n" is split: "a" arrives with the headers and
  // must be set aside while the connection holds no buffer.
  std::atomic<counting_sink*> sink_ptr{nullptr};
  raw_server server{[&](tcp::socket& s) {
    boost::system::error_code ec;
    asio::write(s, asio::buffer(chunked_head + "a"), ec);
    eventually([&] { return sink_ptr.load() && sink_ptr.load()->headers_seen; });
    asio::write(s, asio::buffer(std::string{"\r\n0123456789\r\n0\r\n\r\n"}), ec);
  }};
  io_pool io{1};
  client c{io.context(0)};
  counting_sink sink;
  sink_ptr = &sink;
  c.submit(get(server.port()), sink);
  ASSERT_TRUE(eventually([&] { return sink.done.load(); }));
  EXPECT_TRUE(sink.err.ok()) << sink.err.message;
  EXPECT_EQ(sink.body, "0123456789");
  c.shutdown();
}

/// Answers every request with an empty 200.
void ok_reply(tcp::socket& s) {
  boost::system::error_code ec;
  asio::write(s, asio::buffer(std::string{
                   "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"}),
              ec);
}

TEST(client_scale, binds_the_configured_source_address) {
  raw_server server{ok_reply};
  io_pool io{1};
  client_options opts;
  opts.source_addresses = {"127.0.0.2"};
  client c{io.context(0), opts};
  counting_sink sink;
  c.submit(get(server.port()), sink);
  ASSERT_TRUE(eventually([&] { return sink.done.load(); }));
  EXPECT_TRUE(sink.err.ok()) << sink.err.message;
  EXPECT_EQ(server.peers(), std::set<std::string>{"127.0.0.2"});
  c.shutdown();
}

TEST(client_scale, spreads_many_loopback_connections_over_sources) {
  // Hold every reply until all four connections exist, so four are open.
  std::atomic<int> arrived{0};
  raw_server server{[&](tcp::socket& s) {
    ++arrived;
    eventually([&] { return arrived.load() >= 4; });
    ok_reply(s);
  }};
  io_pool io{1};
  client_options opts;
  opts.max_connections_per_endpoint = 4;
  opts.loopback_spread_per_address = 2; // -> 127.0.0.1 and 127.0.0.2
  client c{io.context(0), opts};
  std::vector<std::unique_ptr<counting_sink>> sinks;
  for (int i = 0; i < 4; ++i) {
    sinks.push_back(std::make_unique<counting_sink>());
    c.submit(get(server.port()), *sinks.back());
  }
  ASSERT_TRUE(eventually([&] {
    for (auto& s : sinks)
      if (!s->done)
        return false;
    return true;
  }));
  for (auto& s : sinks)
    EXPECT_TRUE(s->err.ok()) << s->err.message;
  EXPECT_EQ(server.peers(), (std::set<std::string>{"127.0.0.1", "127.0.0.2"}));
  c.shutdown();
}

TEST(client_scale, a_bad_source_address_fails_requests_naming_it) {
  io_pool io{1};
  client_options opts;
  opts.source_addresses = {"not-an-ip"};
  client c{io.context(0), opts};
  counting_sink sink;
  c.submit(get(9), sink);
  ASSERT_TRUE(eventually([&] { return sink.done.load(); }));
  EXPECT_EQ(sink.err.category, error_category::connect);
  EXPECT_NE(sink.err.message.find("'not-an-ip'"), std::string::npos)
    << sink.err.message;
  c.shutdown();
}

TEST(client_scale, raises_the_soft_open_file_limit_to_the_hard_one) {
  rlimit before{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
  auto got = raise_open_file_limit(0);
  rlimit after{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(got.soft, static_cast<std::uint64_t>(after.rlim_cur));
  EXPECT_EQ(after.rlim_cur, after.rlim_max);
  EXPECT_GE(after.rlim_cur, before.rlim_cur);
}

} // namespace
} // namespace aiperf::http
