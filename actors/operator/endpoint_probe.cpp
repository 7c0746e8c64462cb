#include "actors/operator/endpoint_probe.hpp"

#include "proto/error.hpp"
#include "runtime/http/url.hpp"

#include <caf/all.hpp>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace aiperf::op {

namespace {

// One connect attempt to `ai`: 0 when it connected, else the errno.
int connect_once(const addrinfo* ai, std::chrono::milliseconds timeout) {
  int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    ai->ai_protocol);
  if (fd < 0)
    return errno;
  int err = 0;
  if (::connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int n = ::poll(&p, 1, static_cast<int>(timeout.count()));
      if (n == 0) {
        err = ETIMEDOUT;
      } else if (n < 0) {
        err = errno;
      } else {
        socklen_t len = sizeof err;
        if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
          err = errno;
      }
    }
  }
  ::close(fd);
  return err;
}

caf::behavior one_probe(caf::event_based_actor* self, std::chrono::milliseconds timeout) {
  return {
      [self, timeout](probe_atom, const std::string& url) {
        auto r = probe_endpoint(url, timeout);
        self->quit();
        return r;
      },
  };
}

} // namespace

probe_result probe_endpoint(const std::string& text, std::chrono::milliseconds timeout) {
  auto u = http::parse_url(text);
  if (!u)
    return {probe_outcome::dns_failed, error_message(u.error())};
  const auto& ep = u->ep;
  auto where = ep.host + ":" + std::to_string(ep.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  auto port = std::to_string(ep.port);
  int rc = ::getaddrinfo(ep.host.c_str(), port.c_str(), &hints, &found);
  if (rc == EAI_NONAME || rc == EAI_NODATA || rc == EAI_FAIL)
    return {probe_outcome::dns_failed,
            ep.host + " does not resolve (" + ::gai_strerror(rc)
                + "): check the service name and namespace in spec.benchmark.endpoint.urls"};
  if (rc != 0) // EAI_AGAIN and the like: the resolver, not the name
    return {probe_outcome::unreachable, "resolving " + ep.host + ": " + ::gai_strerror(rc)};
  int last = 0;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    last = connect_once(ai, timeout);
    if (last == 0)
      break;
  }
  ::freeaddrinfo(found);
  if (last == 0)
    return {probe_outcome::reachable, where + " accepts connections"};
  return {probe_outcome::unreachable, where + ": " + std::strerror(last)};
}

prober_actor spawn_endpoint_prober(caf::actor_system& sys, std::chrono::milliseconds timeout) {
  return caf::actor_cast<prober_actor>(sys.spawn([timeout](caf::event_based_actor* self)
                                                     -> caf::behavior {
    return {
        [self, timeout](probe_atom a, std::string& url) {
          auto worker = self->spawn<caf::detached>(one_probe, timeout);
          return self->delegate(worker, a, std::move(url));
        },
    };
  }));
}

} // namespace aiperf::op
