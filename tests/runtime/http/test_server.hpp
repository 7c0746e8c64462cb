// A tiny scripted HTTP/1.1 server for client tests: blocking Asio sockets, a
// thread per connection, loopback only, port 0. Each request is answered by
// a test-supplied function with a list of raw writes (so a test controls
// exactly where chunk boundaries fall across TCP writes).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace aiperf::http::testing {

struct received_request {
  std::string head; ///< request line + headers, up to and including CRLFCRLF
  std::string body;
};

struct scripted_reply {
  std::vector<std::string> writes; ///< each one is a separate send()
  bool close_after = false;        ///< close the connection after the writes
  bool stall = false;              ///< never answer (until the server stops)
};

class test_server {
public:
  using handler = std::function<scripted_reply(const received_request&)>;

  explicit test_server(handler h);
  ~test_server();

  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  /// Connections accepted so far.
  [[nodiscard]] int accepted() const noexcept { return accepted_.load(); }
  /// Complete requests received so far.
  [[nodiscard]] int requests() const noexcept { return requests_.load(); }
  /// Closes every connection that is waiting for its next request and
  /// returns how many it closed.
  int close_idle_connections();

  /// Builds "HTTP/1.1 200 OK" with Content-Length and the given body.
  static std::string content_length_response(const std::string& body,
                                             const std::string& content_type
                                             = "text/plain");

private:
  struct conn;
  void accept_loop();
  void serve(std::shared_ptr<conn> c);

  handler handler_;
  struct impl;
  std::unique_ptr<impl> impl_;
  std::uint16_t port_ = 0;
  std::atomic<int> accepted_{0};
  std::atomic<int> requests_{0};
  std::atomic<bool> stopping_{false};
  std::mutex mtx_;
  std::vector<std::shared_ptr<conn>> conns_;
  std::vector<std::thread> threads_;
  std::thread acceptor_thread_;
};

} // namespace aiperf::http::testing
