// kubelet's httpGet probe (kubernetes/kubernetes pkg/probe/http): a GET from
// the node into the pod network, the status code of the answer. The error
// texts are those kubelet shows in a probe's failure output.
#include "k8s/sim/sandbox/detail.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace aiperf::k8s::sim::sandbox::detail {

namespace {

using clock_type = std::chrono::steady_clock;

struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0)
      ::close(fd);
  }
};

int remaining_ms(clock_type::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - clock_type::now())
                  .count();
  return left > 0 ? static_cast<int>(left) : 0;
}

} // namespace

caf::expected<std::int32_t> run_probe(const cluster& c, const http_probe& p) {
  auto host_port = p.ip + ":" + std::to_string(p.port);
  auto path = p.path.empty() ? std::string{"/"} : p.path;
  if (path.front() != '/')
    path.insert(path.begin(), '/');
  auto url = "http://" + host_port + path;
  auto fail = [&](const std::string& why) {
    return make_error(errc::probe_failed, "Get \"" + url + "\": " + why);
  };
  auto deadline_exceeded = [&] {
    return fail("context deadline exceeded (Client.Timeout exceeded while "
                "awaiting headers)");
  };
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(p.port);
  if (inet_pton(AF_INET, p.ip.c_str(), &addr.sin_addr) != 1)
    return fail("dial tcp " + host_port + ": the probe's address \"" + p.ip
                + "\" is not an IPv4 address");
  auto deadline = clock_type::now()
                  + std::chrono::milliseconds{std::max(p.timeout_ms, 1)};
  auto sock
      = c.open_socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (!sock)
    return std::move(sock.error());
  fd_guard guard{*sock};
  int fd = *sock;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS)
      return fail("dial tcp " + host_port
                  + ": connect: " + std::strerror(errno));
    pollfd pfd{fd, POLLOUT, 0};
    int n = ::poll(&pfd, 1, remaining_ms(deadline));
    if (n == 0)
      return fail("dial tcp " + host_port + ": i/o timeout");
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (n < 0 || err != 0)
      return fail("dial tcp " + host_port
                  + ": connect: " + std::strerror(err != 0 ? err : errno));
  }
  std::string req = "GET " + path + " HTTP/1.1\r\n";
  bool has_host = false;
  bool has_agent = false;
  bool has_accept = false;
  for (const auto& [name, value] : p.headers) {
    auto lower = name;
    for (auto& ch : lower)
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    has_host |= lower == "host";
    has_agent |= lower == "user-agent";
    has_accept |= lower == "accept";
    req += name + ": " + value + "\r\n";
  }
  if (!has_host)
    req += "Host: " + host_port + "\r\n";
  if (!has_agent)
    req += "User-Agent: kube-probe/1.32\r\n";
  if (!has_accept)
    req += "Accept: */*\r\n";
  req += "Connection: close\r\n\r\n";
  std::size_t sent = 0;
  while (sent < req.size()) {
    auto n = ::send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR)
      return fail(std::string{"write: "} + std::strerror(errno));
    pollfd pfd{fd, POLLOUT, 0};
    if (::poll(&pfd, 1, remaining_ms(deadline)) <= 0)
      return deadline_exceeded();
  }
  std::string head;
  while (head.find("\r\n") == std::string::npos) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, remaining_ms(deadline)) <= 0)
      return deadline_exceeded();
    char buf[1024];
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
      continue;
    if (n < 0)
      return fail(std::string{"read: "} + std::strerror(errno));
    if (n == 0)
      return fail("EOF");
    head.append(buf, static_cast<std::size_t>(n));
    if (head.size() > 8192)
      break;
  }
  // "HTTP/1.1 200 OK"
  auto line = head.substr(0, head.find("\r\n"));
  auto sp = line.find(' ');
  if (line.rfind("HTTP/", 0) != 0 || sp == std::string::npos
      || line.size() < sp + 4)
    return fail("net/http: malformed HTTP response \"" + line + "\"");
  auto code = line.substr(sp + 1, 3);
  if (code.find_first_not_of("0123456789") != std::string::npos)
    return fail("net/http: malformed HTTP status code \"" + code + "\"");
  return static_cast<std::int32_t>(std::stoi(code));
}

} // namespace aiperf::k8s::sim::sandbox::detail
