#include "runtime/system/child_process.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <set>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace aiperf::system {

namespace {

constexpr std::string_view self_exe = "/proc/self/exe";

// Steps the child reports through the error pipe when they fail.
enum class child_step : int { stdio = 1, exec = 2 };

struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0)
      ::close(fd);
  }
  int release() noexcept { return std::exchange(fd, -1); }
};

std::string errno_text(int err) {
  return std::strerror(err);
}

// Opens a pipe whose both ends are CLOEXEC, so no other child spawned
// concurrently inherits them (it would hold our EOF hostage).
bool open_pipe(fd_guard& read_end, fd_guard& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return false;
  read_end.fd = fds[0];
  write_end.fd = fds[1];
  return true;
}

// Writes all of `len` bytes; async-signal-safe (used in the child).
void write_all(int fd, const void* data, size_t len) noexcept {
  const auto* p = static_cast<const char*>(data);
  while (len > 0) {
    auto n = ::write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    p += n;
    len -= static_cast<size_t>(n);
  }
}

// Runs in the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void run_child(pid_t parent, int death_signal, int out_fd,
                            int err_fd, int report_fd, const char* path,
                            char* const* argv, char* const* envp) noexcept {
  // The parent's signal_watcher blocks SIGINT/SIGTERM in every thread, and a
  // blocked mask survives exec: without this the child could not be stopped
  // with SIGTERM. Ignored signals (SIGPIPE) also survive exec.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(SIGPIPE, &dfl, nullptr);

  ::prctl(PR_SET_PDEATHSIG, death_signal);
  // The parent may have died before prctl took effect; then no signal comes.
  if (::getppid() != parent)
    ::_exit(1);

  auto report = [report_fd](child_step step) noexcept {
    std::array<int, 2> msg{static_cast<int>(step), errno};
    write_all(report_fd, msg.data(), sizeof(msg));
    ::_exit(127);
  };
  if (out_fd >= 0 && ::dup2(out_fd, STDOUT_FILENO) < 0)
    report(child_step::stdio);
  if (err_fd >= 0 && ::dup2(err_fd, STDERR_FILENO) < 0)
    report(child_step::stdio);
  ::execve(path, argv, envp);
  report(child_step::exec);
  ::_exit(127); // unreachable: report() exits
}

} // namespace

std::string exit_status::describe() const {
  if (exited)
    return "exit code " + std::to_string(code);
  std::string out = "killed by signal " + std::to_string(signal);
  if (const char* name = ::strsignal(signal))
    out.append(" (").append(name).append(")");
  return out;
}

exit_status exit_status::from_wait_status(int status) noexcept {
  exit_status s;
  if (WIFEXITED(status)) {
    s.exited = true;
    s.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    s.signal = WTERMSIG(status);
  }
  return s;
}

caf::expected<child_process> child_process::spawn(const spawn_options& opts) {
  const std::string path
      = opts.program.empty() ? std::string{self_exe} : opts.program;
  auto fail = [&](std::string step, int err) -> caf::expected<child_process> {
    auto message = "cannot start " + path + ": " + step;
    if (err != 0)
      message.append(": ").append(errno_text(err));
    return make_error(errc::spawn_failed, std::move(message));
  };
  for (const auto& [name, value] : opts.env)
    if (name.empty() || name.find('=') != std::string::npos)
      return fail("invalid environment variable name '" + name
                      + "' (must be non-empty and contain no '=')",
                  0);
  if (opts.death_signal <= 0 || opts.death_signal >= NSIG)
    return fail("death_signal " + std::to_string(opts.death_signal)
                    + " is not a signal number",
                0);

  // argv and envp are built before fork: the child may not allocate.
  std::vector<std::string> args;
  args.reserve(opts.args.size() + 1);
  if (opts.program.empty()) {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink(self_exe, ec);
    args.push_back(ec ? std::string{"aiperf-node"} : exe.filename().string());
  } else {
    args.push_back(opts.program);
  }
  args.insert(args.end(), opts.args.begin(), opts.args.end());
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  std::set<std::string, std::less<>> overridden;
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : opts.env) {
    overridden.insert(name);
    env_strings.push_back(name + "=" + value);
  }
  std::vector<char*> envp;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry{*e};
    auto name = entry.substr(0, entry.find('='));
    if (!overridden.contains(name))
      envp.push_back(*e);
  }
  for (auto& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);

  fd_guard out_r, out_w, err_r, err_w, null_fd, report_r, report_w;
  auto setup = [&](stdio_mode mode, fd_guard& r, fd_guard& w) -> bool {
    switch (mode) {
    case stdio_mode::inherit:
      return true;
    case stdio_mode::pipe:
      return open_pipe(r, w);
    case stdio_mode::discard:
      if (null_fd.fd < 0)
        null_fd.fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
      return null_fd.fd >= 0;
    }
    return false;
  };
  if (!setup(opts.stdout_mode, out_r, out_w))
    return fail("stdout pipe", errno);
  if (!setup(opts.stderr_mode, err_r, err_w))
    return fail("stderr pipe", errno);
  if (!open_pipe(report_r, report_w))
    return fail("error pipe", errno);
  auto child_fd = [&](stdio_mode mode, const fd_guard& w) {
    return mode == stdio_mode::pipe      ? w.fd
           : mode == stdio_mode::discard ? null_fd.fd
                                         : -1;
  };
  const int child_out = child_fd(opts.stdout_mode, out_w);
  const int child_err = child_fd(opts.stderr_mode, err_w);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0)
    return fail("fork", errno);
  if (pid == 0)
    run_child(parent, opts.death_signal, child_out, child_err, report_w.fd,
              path.c_str(), argv.data(), envp.data());

  // Parent: drop the child's ends so EOF arrives when the child exits/execs.
  ::close(report_w.release());
  ::close(out_w.release());
  ::close(err_w.release());
  std::array<int, 2> msg{0, 0};
  ssize_t n;
  do {
    n = ::read(report_r.fd, msg.data(), sizeof(msg));
  } while (n < 0 && errno == EINTR);
  if (n > 0) {
    // The child failed before exec and already called _exit: reap it.
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      // retry
    }
    auto step = static_cast<child_step>(msg[0]);
    return fail(step == child_step::exec ? "execve" : "redirect stdio", msg[1]);
  }
  return child_process{pid, out_r.release(), err_r.release()};
}

child_process::child_process(child_process&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      out_fd_(std::exchange(other.out_fd_, -1)),
      err_fd_(std::exchange(other.err_fd_, -1)),
      status_(std::exchange(other.status_, std::nullopt)) {
  // nop
}

child_process& child_process::operator=(child_process&& other) noexcept {
  if (this != &other) {
    release();
    pid_ = std::exchange(other.pid_, -1);
    out_fd_ = std::exchange(other.out_fd_, -1);
    err_fd_ = std::exchange(other.err_fd_, -1);
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

child_process::~child_process() {
  release();
}

void child_process::release() noexcept {
  close_pipes();
  if (pid_ > 0 && !status_) {
    // Fail closed: an owner that forgot the child must not leak it.
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      // retry
    }
  }
  pid_ = -1;
  status_.reset();
}

void child_process::close_pipes() noexcept {
  if (out_fd_ >= 0)
    ::close(std::exchange(out_fd_, -1));
  if (err_fd_ >= 0)
    ::close(std::exchange(err_fd_, -1));
}

exit_status child_process::wait() {
  if (status_)
    return *status_;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  // r < 0 only if someone else reaped our child (ECHILD); report it as lost.
  status_ = r == pid_ ? exit_status::from_wait_status(status)
                      : exit_status{false, 0, 0};
  return *status_;
}

std::optional<exit_status> child_process::try_wait() {
  if (status_)
    return status_;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == 0)
    return std::nullopt;
  status_ = r == pid_ ? exit_status::from_wait_status(status)
                      : exit_status{false, 0, 0};
  return status_;
}

bool child_process::kill(int sig) noexcept {
  if (pid_ <= 0 || status_)
    return false;
  return ::kill(pid_, sig) == 0;
}

child_output child_process::collect_output() {
  child_output result;
  std::array<pollfd, 2> fds{pollfd{out_fd_, POLLIN, 0},
                            pollfd{err_fd_, POLLIN, 0}};
  std::array<std::string*, 2> sinks{&result.out, &result.err};
  std::array<char, 16384> buf;
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    // poll() ignores negative fds, so a finished stream simply drops out.
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0)
        continue;
      auto n = ::read(fds[i].fd, buf.data(), buf.size());
      if (n > 0)
        sinks[i]->append(buf.data(), static_cast<size_t>(n));
      else if (n == 0 || errno != EINTR)
        fds[i].fd = -1;
    }
  }
  close_pipes();
  return result;
}

} // namespace aiperf::system
