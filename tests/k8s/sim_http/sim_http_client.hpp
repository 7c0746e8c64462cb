// Small blocking HTTP/1.1 clients for the front's tests: one request per
// connection over plain TCP or TLS (trusting the simulator's CA), and a raw
// reader for chunked watch streams that tells a terminating chunk from a
// connection that went away.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace aiperf::k8s::sim::http::testing {

struct reply {
  unsigned status = 0; // 0 = no answer (connection closed or reset)
  std::map<std::string, std::string> headers; // lower-case names
  std::string body;
};

using header_list = std::vector<std::pair<std::string, std::string>>;

/// A client certificate and key (PEM) to present over HTTPS.
struct client_identity {
  std::string cert_pem;
  std::string key_pem;
};

/// One request on a fresh connection. `ca_pem` non-empty = HTTPS verifying
/// the server against that CA and the name 127.0.0.1, presenting `client`
/// when it holds a certificate.
reply fetch(std::uint16_t port, const std::string& method,
            const std::string& target, const std::string& body = {},
            const header_list& headers = {}, const std::string& ca_pem = {},
            const client_identity& client = {});

/// Sends raw bytes on a fresh plain connection and returns everything the
/// server wrote until it closed (or `timeout`).
std::string raw_exchange(std::uint16_t port, const std::string& bytes,
                         std::chrono::milliseconds timeout
                         = std::chrono::milliseconds(3000));

/// A plain-HTTP streaming GET read on its own thread.
class stream_reader {
public:
  stream_reader(std::uint16_t port, const std::string& target,
                const header_list& headers = {});
  ~stream_reader();
  stream_reader(const stream_reader&) = delete;
  stream_reader& operator=(const stream_reader&) = delete;

  /// Waits until the de-chunked body holds `n` lines; returns them.
  std::vector<std::string> wait_lines(std::size_t n,
                                      std::chrono::milliseconds timeout);
  /// Waits until the server closed the connection; true if it did.
  bool wait_closed(std::chrono::milliseconds timeout);
  /// Everything received, raw (headers and chunk framing included).
  std::string raw();
  /// Whether the body ended with the terminating chunk.
  bool clean_end();

private:
  void run();
  int fd_ = -1;
  std::thread thread_;
  std::mutex mutex_;
  std::string raw_;
  bool closed_ = false;
};

/// The body of a chunked message whose headers end at `raw`'s first blank
/// line; `complete` says whether the terminating chunk was seen.
std::string dechunk(const std::string& raw, bool* complete);

} // namespace aiperf::k8s::sim::http::testing
