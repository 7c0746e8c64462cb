// Closed-loop driver of http::client, the counterpart of `wrk -t1 -c64`:
// each of --connections sinks resubmits its request from on_complete until
// the duration is over; prints requests/s.
//
//   http_client_bench --url http://127.0.0.1:8080/v1/chat/completions
//                     [--connections 64] [--duration 5] [--threads 1]
//                     [--method POST] [--body '{...}']
#include "runtime/http/client.hpp"

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace aiperf;

std::atomic<bool> stopping{false};
std::atomic<int> in_flight{0};

/// One closed-loop "user": touched only on its client's I/O thread.
class loop_sink final : public http::response_sink {
public:
  loop_sink(http::client& c, const http::request& proto)
    : client_(c), proto_(proto) {
    // nop
  }

  void start() {
    ++in_flight;
    client_.submit(proto_, *this);
  }

  void on_send(std::int64_t) override {
    // nop
  }
  void on_headers(const http::response_head& head, std::int64_t) override {
    status_ok_ = head.status == 200;
  }
  void on_body(std::string_view bytes, std::int64_t) override {
    body_bytes += bytes.size();
  }
  void on_complete(const http::error_info& err, std::int64_t) override {
    if (err.ok() && status_ok_)
      ++completed;
    else
      ++errors;
    if (stopping.load(std::memory_order_relaxed)) {
      --in_flight;
      return;
    }
    client_.submit(proto_, *this); // copies the small request
  }

  std::uint64_t completed = 0;
  std::uint64_t errors = 0;
  std::uint64_t body_bytes = 0;

private:
  http::client& client_;
  const http::request& proto_;
  bool status_ok_ = false;
};

int usage(const char* why) {
  std::fprintf(stderr,
               "http_client_bench: %s\nusage: http_client_bench --url URL "
               "[--connections N] [--duration SECONDS] [--threads N] "
               "[--method M] [--body TEXT]\n",
               why);
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  std::string url_text;
  std::string method = "POST";
  std::string body = R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true})";
  long connections = 64;
  double duration = 5;
  long threads = 1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc)
      return usage(("missing value for " + arg).c_str());
    std::string val = argv[++i];
    if (arg == "--url")
      url_text = val;
    else if (arg == "--connections")
      connections = std::strtol(val.c_str(), nullptr, 10);
    else if (arg == "--duration")
      duration = std::strtod(val.c_str(), nullptr);
    else if (arg == "--threads")
      threads = std::strtol(val.c_str(), nullptr, 10);
    else if (arg == "--method")
      method = val;
    else if (arg == "--body")
      body = val;
    else
      return usage(("unknown option " + arg).c_str());
  }
  if (url_text.empty())
    return usage("--url is required");
  if (connections < 1 || threads < 1 || duration <= 0)
    return usage("--connections, --threads and --duration must be positive");
  auto parsed = http::parse_url(url_text);
  if (!parsed)
    return usage(error_message(parsed.error()).c_str());

  http::request proto;
  proto.ep = parsed->ep;
  proto.method = method;
  proto.target = parsed->base_path.empty() ? "/" : parsed->base_path;
  proto.headers = {{"Content-Type", "application/json"}};
  proto.body = body;

  http::io_pool io{static_cast<std::size_t>(threads)};
  std::vector<std::unique_ptr<http::client>> clients;
  auto per_thread = static_cast<std::size_t>((connections + threads - 1) / threads);
  for (long t = 0; t < threads; ++t) {
    http::client_options opts;
    opts.max_connections_per_endpoint = per_thread;
    clients.push_back(std::make_unique<http::client>(io.context(t), opts));
  }
  std::vector<std::unique_ptr<loop_sink>> sinks;
  for (long i = 0; i < connections; ++i)
    sinks.push_back(std::make_unique<loop_sink>(*clients[i % threads], proto));
  auto t0 = std::chrono::steady_clock::now();
  for (auto& s : sinks)
    s->start();
  std::this_thread::sleep_for(std::chrono::duration<double>(duration));
  stopping = true;
  auto t1 = std::chrono::steady_clock::now();
  while (in_flight.load() > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (auto& c : clients)
    c->shutdown();
  io.stop();
  std::uint64_t done = 0;
  std::uint64_t errors = 0;
  std::uint64_t bytes = 0;
  for (auto& s : sinks) {
    done += s->completed;
    errors += s->errors;
    bytes += s->body_bytes;
  }
  // Requests that finished after t1 are few (one per connection) and are
  // counted, as wrk counts its in-flight requests at the end.
  double secs = std::chrono::duration<double>(t1 - t0).count();
  std::printf("http_client_bench: %llu requests in %.2fs, %llu errors, "
              "%.1f MB body\nreq_per_s=%.1f\n",
              static_cast<unsigned long long>(done), secs,
              static_cast<unsigned long long>(errors), bytes / 1e6, done / secs);
  return errors == 0 ? 0 : 1;
}
