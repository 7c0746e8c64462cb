// Child processes that cannot outlive their parent: `--worker-pods` starts
// one `aiperf-node` per simulated pod from /proc/self/exe, and a crashed or
// SIGKILLed parent must not leave orphans hammering the server.
//
// How: fork + execve, with `prctl(PR_SET_PDEATHSIG, SIGKILL)` set in the
// child between the two. PDEATHSIG has a race (the parent may die before the
// prctl runs, and then no signal ever comes), so the child also compares
// getppid() with the pid the parent had before fork and exits at once if it
// changed. Everything the child needs (argv, envp) is built before fork, so
// the child only calls async-signal-safe functions (the parent may have many
// threads). An exec failure travels back through a CLOEXEC pipe, so spawn()
// reports "No such file" synchronously instead of a mysterious exit code 127.
//
// PITFALL: PDEATHSIG fires when the *thread* that forked exits, not the
// process. Spawn from a thread that lives as long as the child should (the
// main thread), never from a temporary thread or an actor on a CAF worker.
#pragma once

#include "runtime/system/errc.hpp"

#include <csignal>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace aiperf::system {

/// What a child's stdout or stderr is connected to.
enum class stdio_mode {
  /// The parent's descriptor (logs of pods interleave with ours).
  inherit,
  /// A pipe the parent reads (stdout_fd()/stderr_fd(), collect_output()).
  pipe,
  /// /dev/null.
  discard,
};

/// How to start a child.
struct spawn_options {
  /// Executable; empty means /proc/self/exe (this very binary).
  std::string program;
  /// argv[1..]; argv[0] is `program` (or "aiperf-node" for /proc/self/exe).
  std::vector<std::string> args;
  /// Variables added to (or overriding) the parent's environment.
  std::vector<std::pair<std::string, std::string>> env;
  stdio_mode stdout_mode = stdio_mode::inherit;
  stdio_mode stderr_mode = stdio_mode::inherit;
  /// Signal the child gets when the parent (thread) dies.
  int death_signal = SIGKILL;
};

/// How a child ended.
struct exit_status {
  /// True when it called exit(); false when a signal killed it.
  bool exited = false;
  /// exit() code when `exited`.
  int code = 0;
  /// Terminating signal when !exited.
  int signal = 0;

  /// Returns whether the child exited with code 0.
  [[nodiscard]] bool success() const noexcept { return exited && code == 0; }

  /// "exit code 3" or "killed by signal 9 (Killed)".
  [[nodiscard]] std::string describe() const;

  /// Decodes a waitpid() status word.
  [[nodiscard]] static exit_status from_wait_status(int status) noexcept;

  friend bool operator==(const exit_status&, const exit_status&) = default;
};

/// Captured output of a child whose streams were piped.
struct child_output {
  std::string out;
  std::string err;
};

/// A running (or finished, not yet destroyed) child process.
///
/// RAII: the destructor of a child that was not reaped yet sends SIGKILL and
/// reaps it, so no owner can leak a zombie or an orphan; call wait() first
/// to let a child finish on its own. Move-only. Not thread-safe: one owner
/// thread calls wait/try_wait/kill.
class child_process {
public:
  /// Starts a child (see the file comment for the guarantees). Fails with
  /// errc::spawn_failed, whose message names the program and the failing
  /// step ("cannot start /x: execve: No such file or directory").
  [[nodiscard]] static caf::expected<child_process> spawn(const spawn_options& opts);

  child_process(child_process&& other) noexcept;
  child_process& operator=(child_process&& other) noexcept;
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;
  ~child_process();

  /// The child's pid (stays valid as a number after reaping).
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

  /// Blocks until the child ends, reaps it and returns how it ended. Calling
  /// it again returns the same status.
  exit_status wait();

  /// Reaps the child if it has ended; std::nullopt while it runs.
  [[nodiscard]] std::optional<exit_status> try_wait();

  /// Sends `sig`. Returns false (and sends nothing) once the child was
  /// reaped, because its pid may already belong to another process.
  bool kill(int sig = SIGKILL) noexcept;

  /// Whether the child was reaped (its status is known).
  [[nodiscard]] bool reaped() const noexcept { return status_.has_value(); }

  /// Read end of the stdout pipe; -1 unless stdout_mode was `pipe`.
  [[nodiscard]] int stdout_fd() const noexcept { return out_fd_; }

  /// Read end of the stderr pipe; -1 unless stderr_mode was `pipe`.
  [[nodiscard]] int stderr_fd() const noexcept { return err_fd_; }

  /// Reads both pipes until EOF (poll, so a child that fills one pipe while
  /// we wait on the other cannot deadlock), then closes them. Returns empty
  /// strings for streams that were not piped. Does not reap: call wait().
  child_output collect_output();

private:
  child_process(pid_t pid, int out_fd, int err_fd) noexcept
      : pid_(pid), out_fd_(out_fd), err_fd_(err_fd) {
    // nop
  }

  void close_pipes() noexcept;
  void release() noexcept;

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::optional<exit_status> status_;
};

} // namespace aiperf::system
