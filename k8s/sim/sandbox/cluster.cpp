#include "k8s/sim/sandbox/detail.hpp"

#include <arpa/inet.h>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <future>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace aiperf::k8s::sim::sandbox {

namespace detail {

namespace {

constexpr auto setup_timeout = std::chrono::seconds{10};
constexpr std::size_t max_packet = 1 << 20;

std::string errno_text(int err) {
  return std::strerror(err);
}

} // namespace

caf::expected<ipv4_net> parse_cidr(std::string_view text) {
  auto bad = [&] {
    return make_error(errc::bad_cidr,
                      "pod CIDR \"" + std::string{text}
                          + "\" is not an IPv4 prefix of /8 to /28; give "
                            "one like 10.244.0.0/16");
  };
  auto slash = text.find('/');
  if (slash == std::string_view::npos)
    return bad();
  std::string addr{text.substr(0, slash)};
  std::string len{text.substr(slash + 1)};
  if (len.empty() || len.size() > 2
      || len.find_first_not_of("0123456789") != std::string::npos)
    return bad();
  int prefix = std::atoi(len.c_str());
  in_addr a{};
  if (prefix < 8 || prefix > 28 || inet_pton(AF_INET, addr.c_str(), &a) != 1)
    return bad();
  std::uint32_t host = ntohl(a.s_addr);
  std::uint32_t mask = ~std::uint32_t{0} << (32 - prefix);
  return ipv4_net{host & mask, prefix};
}

std::string format_ipv4(std::uint32_t addr) {
  in_addr a{};
  a.s_addr = htonl(addr);
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, buf, sizeof buf);
  return buf;
}

std::string find_ip_command() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
    if (::access(p, X_OK) == 0)
      return p;
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest{path};
    while (!rest.empty()) {
      auto colon = rest.find(':');
      std::string dir{rest.substr(0, colon)};
      rest = colon == std::string_view::npos ? std::string_view{}
                                             : rest.substr(colon + 1);
      if (dir.empty())
        continue;
      auto candidate = dir + "/ip";
      if (::access(candidate.c_str(), X_OK) == 0)
        return candidate;
    }
  }
  return {};
}

cluster_impl::cluster_impl(cluster_options opts, ipv4_net net)
    : opts_(std::move(opts)), net_(net) {
  gateway_ = format_ipv4(net_.gateway());
  cidr_ = format_ipv4(net_.network) + "/" + std::to_string(net_.prefix);
}

cluster_impl::~cluster_impl() {
  if (ctrl_fd_ >= 0)
    ::shutdown(ctrl_fd_, SHUT_RDWR);
  if (reader_.joinable())
    reader_.join();
  {
    std::lock_guard<std::mutex> guard{owner_mu_};
    stopping_ = true;
  }
  owner_cv_.notify_all();
  if (owner_.joinable())
    owner_.join();
  if (ctrl_fd_ >= 0)
    ::close(ctrl_fd_);
  if (netns_fd_ >= 0)
    ::close(netns_fd_);
  // Init and with it every pod process are gone: their mounts lived in
  // their own mount namespaces, so only plain folders remain.
  std::error_code ec;
  auto pods = std::filesystem::path{opts_.work_dir} / "pods";
  for (const auto& entry : std::filesystem::directory_iterator{pods, ec})
    remove_pod_files(entry.path().string());
  std::filesystem::remove(pods, ec); // only when empty
}

void remove_pod_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p{dir};
  fs::remove_all(p / "containers", ec);
  fs::remove(p / "hosts", ec);
  fs::remove(p / "resolv.conf", ec);
  fs::remove(p, ec); // only when empty
}

caf::error cluster_impl::boot() {
  std::string exe = opts_.init_executable;
  if (exe.empty()) {
    std::error_code ec;
    exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (ec)
      return make_error(errc::init_failed,
                        "cannot read /proc/self/exe to find the cluster "
                        "init executable: "
                            + ec.message()
                            + "; set cluster_options.init_executable");
  }
  if (::access(exe.c_str(), X_OK) != 0)
    return make_error(errc::bad_options,
                      "the cluster init executable " + exe + " cannot be run ("
                          + errno_text(errno)
                          + "); set cluster_options.init_executable to a "
                            "program with the sim-pod-init entry point");
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return make_error(errc::init_failed,
                      "socketpair for the cluster init: " + errno_text(errno));
  int one = 1;
  ::setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
  int big = static_cast<int>(max_packet);
  for (int fd : sv) {
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
  }
  ctrl_fd_ = sv[0];
  // Everything the child touches is prepared here: between clone and exec
  // a child of a threaded process may only make system calls.
  std::string fd_text = std::to_string(sv[1]);
  std::array<char*, 4> argv{exe.data(), const_cast<char*>("sim-pod-init"),
                            fd_text.data(), nullptr};
  int child_fd = sv[1];
  std::promise<long> forked;
  auto result = forked.get_future();
  // PR_SET_PDEATHSIG fires when the forking thread ends, so init is forked
  // by a thread that lives exactly as long as this object; it also reaps
  // init at the end.
  auto owner_body = [this, &forked, &argv, child_fd] {
    long pid = ::syscall(SYS_clone,
                         CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | SIGCHLD,
                         nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::fcntl(child_fd, F_SETFD, 0);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    forked.set_value(pid < 0 ? -errno : pid);
    if (pid <= 0)
      return;
    std::unique_lock<std::mutex> lock{owner_mu_};
    owner_cv_.wait(lock, [this] { return stopping_; });
    lock.unlock();
    ::kill(static_cast<pid_t>(pid), SIGKILL);
    ::waitpid(static_cast<pid_t>(pid), nullptr, 0);
  };
  try {
    owner_ = std::thread{owner_body};
  } catch (const std::system_error& e) {
    ::close(child_fd);
    return make_error(errc::init_failed,
                      std::string{"cannot start the thread that forks the "
                                  "cluster init: "}
                          + e.what());
  }
  long pid = result.get();
  ::close(child_fd);
  if (pid < 0) {
    int err = static_cast<int>(-pid);
    return make_error(errc::namespaces_unavailable,
                      "cannot create the cluster's PID, network and mount "
                      "namespaces (clone: "
                          + errno_text(err)
                          + "); run as root on a kernel with network and PID "
                            "namespaces, outside a seccomp profile that "
                            "forbids them");
  }
  init_pid_ = static_cast<std::int32_t>(pid);
  try {
    reader_ = std::thread{[this] { read_loop(); }};
  } catch (const std::system_error& e) {
    return make_error(errc::init_failed,
                      std::string{"cannot start the cluster init's reader "
                                  "thread: "}
                          + e.what());
  }
  json setup{{"op", "setup"}, {"gateway", gateway_}, {"prefix", net_.prefix}};
  auto r = call(std::move(setup), setup_timeout);
  if (!r)
    return std::move(r.error());
  auto ns_path = "/proc/" + std::to_string(init_pid_) + "/ns/net";
  netns_fd_ = ::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (netns_fd_ < 0)
    return make_error(errc::init_failed,
                      "cannot open " + ns_path
                          + " (the cluster's network namespace): "
                          + errno_text(errno));
  return {};
}

caf::expected<int> cluster_impl::open_socket(int domain, int type,
                                             int protocol) const {
  // setns changes only the calling thread's namespace, so the socket is made
  // on a thread of its own and the caller's thread stays where it was.
  int fd = -1;
  int err = 0;
  try {
    std::thread worker{[&] {
      if (::setns(netns_fd_, CLONE_NEWNET) != 0) {
        err = errno;
        return;
      }
      fd = ::socket(domain, type, protocol);
      if (fd < 0)
        err = errno;
    }};
    worker.join();
  } catch (const std::system_error& e) {
    err = e.code().value();
  }
  if (fd < 0)
    return make_error(errc::network_failed,
                      "cannot make a socket in the pod network: "
                          + errno_text(err));
  return fd;
}

caf::expected<reply> cluster_impl::call(json req,
                                        std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock{mu_};
  std::string op = req.value("op", "");
  if (dead_)
    return make_error(errc::init_gone,
                      "the cluster init has exited; the pod network is gone "
                      "(restart the simulator)");
  auto seq = next_seq_++;
  req["seq"] = seq;
  auto text = req.dump();
  auto& s = pending_[seq];
  if (::send(ctrl_fd_, text.data(), text.size(), MSG_NOSIGNAL) < 0) {
    int err = errno;
    pending_.erase(seq);
    return make_error(errc::init_gone,
                      "cannot send " + op
                          + " to the cluster init: " + errno_text(err));
  }
  if (!cv_.wait_for(lock, timeout, [&] { return s.done; })) {
    pending_.erase(seq);
    return make_error(errc::timeout,
                      "the cluster init did not answer " + op + " within "
                          + std::to_string(timeout.count()) + " ms");
  }
  auto result = std::move(s.result);
  pending_.erase(seq);
  return result;
}

void cluster_impl::on_event(event_handler f) {
  std::lock_guard<std::mutex> guard{mu_};
  handler_ = std::move(f);
}

void cluster_impl::fail_pending(const caf::error& err) {
  std::lock_guard<std::mutex> guard{mu_};
  dead_ = true;
  for (auto& [seq, s] : pending_) {
    if (!s.done) {
      s.done = true;
      s.result = err;
    }
  }
  cv_.notify_all();
}

void cluster_impl::read_loop() {
  std::vector<char> buf(max_packet);
  for (;;) {
    iovec iov{buf.data(), buf.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    auto n = ::recvmsg(ctrl_fd_, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      // Peek only: the owner thread reaps init, and a pid reaped here could
      // be reused before it kills it.
      siginfo_t info{};
      bool exec_failed = init_pid_ > 0
                         && ::waitid(P_PID, static_cast<id_t>(init_pid_), &info,
                                     WEXITED | WNOHANG | WNOWAIT)
                                == 0
                         && info.si_pid == init_pid_
                         && info.si_code == CLD_EXITED && info.si_status == 127;
      fail_pending(make_error(
          exec_failed ? errc::init_failed : errc::init_gone,
          "the cluster init (pid " + std::to_string(init_pid_)
              + ") closed its control channel; check that "
              + (opts_.init_executable.empty() ? std::string{"/proc/self/exe"}
                                               : opts_.init_executable)
              + " has the sim-pod-init entry point"));
      return;
    }
    std::int32_t pid = 0;
    for (auto* c = CMSG_FIRSTHDR(&msg); c != nullptr;
         c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
        ucred cred{};
        std::memcpy(&cred, CMSG_DATA(c), sizeof cred);
        pid = cred.pid;
      }
    }
    auto doc = json::parse(buf.data(), buf.data() + n, nullptr, false);
    if (!doc.is_object())
      continue;
    // Without an explicit credential the kernel attaches init's own.
    if (!doc.contains("pid"))
      pid = 0;
    if (doc.contains("event")) {
      event_handler h;
      {
        std::lock_guard<std::mutex> guard{mu_};
        h = handler_;
      }
      if (h)
        h(doc, pid);
      continue;
    }
    auto seq = doc.value("seq", std::uint64_t{0});
    std::lock_guard<std::mutex> guard{mu_};
    auto i = pending_.find(seq);
    if (i == pending_.end())
      continue; // its caller gave up waiting
    i->second.done = true;
    if (doc.value("ok", false))
      i->second.result = reply{std::move(doc), pid};
    else
      i->second.result = make_error(
          errc_from_name(doc.value("code", "")),
          doc.value("error", std::string{"the cluster init refused it"}));
    cv_.notify_all();
  }
}

} // namespace detail

caf::expected<std::shared_ptr<cluster>> cluster::start(cluster_options opts) {
  if (::geteuid() != 0)
    return make_error(errc::not_root,
                      "the pod network needs root: it creates PID, network "
                      "and mount namespaces, a bridge and veth pairs; run "
                      "the simulator as root");
  auto net = detail::parse_cidr(opts.pod_cidr);
  if (!net)
    return std::move(net.error());
  if (detail::find_ip_command().empty())
    return make_error(errc::ip_missing,
                      "the `ip` command (iproute2) is not in /usr/sbin, "
                      "/sbin, /usr/bin, /bin or PATH; install iproute2");
  if (opts.work_dir.empty())
    return make_error(errc::bad_options,
                      "cluster_options.work_dir is empty; give the folder "
                      "where pod files and logs live");
  std::error_code ec;
  std::filesystem::create_directories(
      std::filesystem::path{opts.work_dir} / "pods", ec);
  if (ec)
    return make_error(errc::io_failed, "cannot create " + opts.work_dir
                                           + "/pods: " + ec.message());
  auto impl = std::make_shared<detail::cluster_impl>(std::move(opts), *net);
  if (auto err = impl->boot())
    return err;
  return std::shared_ptr<cluster>{std::move(impl)};
}

} // namespace aiperf::k8s::sim::sandbox
