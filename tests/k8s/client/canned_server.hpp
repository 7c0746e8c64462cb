// A small HTTP/HTTPS server on loopback for the client's socket tests: a
// handler answers each request (whole responses, or a chunked stream fed by
// the test), and every request is recorded. Certificates are made by the
// openssl CLI at test time (a CA, a server certificate for 127.0.0.1 and
// localhost, a client certificate).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace aiperf::k8s::client::test {

/// Files of a test PKI in `dir`: ca.pem, server.pem/.key, client.pem/.key.
struct pki {
  std::string dir;
  std::string ca_pem() const;
  std::string client_cert_pem() const;
  std::string client_key_pem() const;
};

/// Makes the PKI with the openssl CLI; false when that failed.
bool make_pki(const std::string& dir);

struct canned_request {
  std::string method;
  std::string target;
  std::string body;
  std::map<std::string, std::string> headers; // lower-case names
  int connection = 0; // which accepted connection carried it (1, 2, ...)
};

/// What a handler answers with.
class exchange {
public:
  virtual ~exchange() = default;
  /// A whole response.
  virtual void reply(int status, std::string body,
                     std::vector<std::pair<std::string, std::string>> headers
                     = {})
      = 0;
  /// A chunked 200 whose chunks come from the server's feed (push_line,
  /// end_streams, drop_streams); returns when the stream is over.
  virtual void stream() = 0;
  /// Closes the connection without answering.
  virtual void drop() = 0;
};

class canned_server {
public:
  struct options {
    bool tls = true;
    std::string pki_dir;
    bool require_client_cert = false;
  };
  using handler = std::function<void(const canned_request&, exchange&)>;

  canned_server(options opts, handler h);
  ~canned_server();

  std::uint16_t port() const { return port_; }
  std::string url() const;

  std::vector<canned_request> requests() const;
  /// Waits (up to 20 s) until `n` requests have arrived.
  bool wait_requests(std::size_t n);
  int connections() const;

  /// Streams: one line (a newline is added) to the open stream.
  void push_line(std::string line);
  /// Streams: bytes as one chunk, no newline added (an event split across
  /// chunks).
  void push_raw(std::string bytes);
  /// Ends the open stream cleanly (the last chunk).
  void end_streams();
  /// Closes the open stream's connection abruptly.
  void drop_streams();
  /// Waits (up to 20 s) until a stream is open.
  bool wait_stream();

  // Internal, for the connection threads.
  struct feed_item {
    enum kind_t { line, raw, end, drop } kind;
    std::string text;
  };
  bool next_item(feed_item& out);
  void record(canned_request r);
  void stream_opened(bool open);
  handler handle;

private:
  void accept_loop();

  options opts_;
  std::uint16_t port_ = 0;
  int listen_fd_ = -1;
  std::thread acceptor_;
  std::vector<std::thread> workers_;
  std::vector<int> fds_;
  mutable std::mutex mtx_;
  std::condition_variable cv_;
  std::vector<canned_request> requests_;
  std::deque<feed_item> feed_;
  int open_streams_ = 0;
  int connections_ = 0;
  bool stopping_ = false;
  void* ssl_ctx_ = nullptr; // boost::asio::ssl::context*
};

} // namespace aiperf::k8s::client::test
