#include "runtime/system/child_process.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <type_traits>
#include <unistd.h>

namespace {

using aiperf::system::child_process;
using aiperf::system::exit_status;
using aiperf::system::spawn_options;
using aiperf::system::stdio_mode;

static_assert(!std::is_copy_constructible_v<child_process>);
static_assert(std::is_nothrow_move_constructible_v<child_process>);

spawn_options shell(std::string script) {
  spawn_options o;
  o.program = "/bin/sh";
  o.args = {"-c", std::move(script)};
  return o;
}

// Spawns `o` into `child`, failing the test with spawn's message if needed.
#define START(var, o)                                                          \
  auto var##_result = child_process::spawn(o);                                 \
  ASSERT_TRUE(var##_result) << aiperf::error_message(var##_result.error());            \
  auto& var = *var##_result

// True when /proc/<pid> is gone or the process is a zombie (dead, unreaped).
bool process_gone(pid_t pid) {
  std::ifstream stat{"/proc/" + std::to_string(pid) + "/stat"};
  if (!stat)
    return true;
  std::string line;
  std::getline(stat, line);
  auto close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size()
         || line[close + 2] == 'Z' || line[close + 2] == 'X';
}

TEST(child_process, reports_exit_code) {
  START(child, shell("exit 3"));
  auto st = child.wait();
  EXPECT_EQ(st, (exit_status{true, 3, 0}));
  EXPECT_FALSE(st.success());
  EXPECT_EQ(st.describe(), "exit code 3");
  // wait() is idempotent once reaped.
  EXPECT_EQ(child.wait(), st);
}

TEST(child_process, reports_terminating_signal) {
  auto o = shell("exec sleep 30");
  START(child, o);
  EXPECT_FALSE(child.try_wait().has_value());
  EXPECT_TRUE(child.kill(SIGTERM));
  auto st = child.wait();
  EXPECT_FALSE(st.exited);
  EXPECT_EQ(st.signal, SIGTERM);
  EXPECT_NE(st.describe().find("signal 15"), std::string::npos);
  // A reaped pid may be reused: kill() must refuse to signal it.
  EXPECT_FALSE(child.kill(SIGKILL));
}

TEST(child_process, try_wait_reaps_a_finished_child) {
  START(child, shell("exit 0"));
  std::optional<exit_status> st;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!(st = child.try_wait())
         && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  ASSERT_TRUE(st.has_value());
  EXPECT_TRUE(st->success());
  EXPECT_TRUE(child.reaped());
}

TEST(child_process, captures_stdout_and_stderr_separately) {
  auto o = shell("printf out; printf err >&2; exit 0");
  o.stdout_mode = stdio_mode::pipe;
  o.stderr_mode = stdio_mode::pipe;
  START(child, o);
  EXPECT_GE(child.stdout_fd(), 0);
  auto out = child.collect_output();
  EXPECT_EQ(out.out, "out");
  EXPECT_EQ(out.err, "err");
  EXPECT_TRUE(child.wait().success());
  EXPECT_EQ(child.stdout_fd(), -1);
}

TEST(child_process, large_output_on_both_pipes_does_not_deadlock) {
  // 1 MiB on each stream: far more than a pipe buffer (64 KiB).
  auto o = shell("head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2");
  o.stdout_mode = stdio_mode::pipe;
  o.stderr_mode = stdio_mode::pipe;
  START(child, o);
  auto out = child.collect_output();
  EXPECT_EQ(out.out.size(), 1048576u);
  EXPECT_EQ(out.err.size(), 1048576u);
  EXPECT_TRUE(child.wait().success());
}

TEST(child_process, discard_sends_output_to_dev_null) {
  auto o = shell("echo lost; exit 5");
  o.stdout_mode = stdio_mode::discard;
  START(child, o);
  EXPECT_EQ(child.stdout_fd(), -1);
  EXPECT_EQ(child.wait().code, 5);
}

TEST(child_process, extra_env_is_added_and_overrides) {
  ::setenv("AIPERF_CHILD_TEST_OVERRIDE", "parent", 1);
  auto o = shell(
      R"(printf '%s,%s' "$AIPERF_CHILD_TEST_NEW" "$AIPERF_CHILD_TEST_OVERRIDE")");
  o.env = {{"AIPERF_CHILD_TEST_NEW", "a=b"},
           {"AIPERF_CHILD_TEST_OVERRIDE", "child"}};
  o.stdout_mode = stdio_mode::pipe;
  START(child, o);
  EXPECT_EQ(child.collect_output().out, "a=b,child");
  EXPECT_TRUE(child.wait().success());
  ::unsetenv("AIPERF_CHILD_TEST_OVERRIDE");
}

TEST(child_process, exec_failure_is_reported_by_spawn) {
  spawn_options o;
  o.program = "/nonexistent/aiperf-node";
  auto r = child_process::spawn(o);
  ASSERT_FALSE(r);
  EXPECT_TRUE(aiperf::is_error(r.error(), aiperf::system::errc::spawn_failed));
  const auto message = aiperf::error_message(r.error());
  EXPECT_NE(message.find("/nonexistent/aiperf-node"), std::string::npos)
      << message;
  EXPECT_NE(message.find("execve"), std::string::npos) << message;
  EXPECT_NE(message.find("No such file"), std::string::npos) << message;
  // The failed child was reaped by spawn(): no child of ours is left.
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(child_process, invalid_env_name_is_rejected_before_fork) {
  auto o = shell("exit 0");
  o.env = {{"BAD=NAME", "x"}};
  auto r = child_process::spawn(o);
  ASSERT_FALSE(r);
  EXPECT_TRUE(aiperf::is_error(r.error(), aiperf::system::errc::spawn_failed));
  EXPECT_NE(aiperf::error_message(r.error()).find("BAD=NAME"), std::string::npos)
      << aiperf::error_message(r.error());
}

TEST(child_process, empty_program_runs_this_binary) {
  // /proc/self/exe is this gtest binary: list its tests.
  spawn_options o;
  o.args = {"--gtest_list_tests", "--gtest_filter=child_process.*"};
  o.stdout_mode = stdio_mode::pipe;
  START(child, o);
  auto out = child.collect_output().out;
  EXPECT_TRUE(child.wait().success());
  EXPECT_NE(out.find("empty_program_runs_this_binary"), std::string::npos)
      << out;
}

TEST(child_process, child_starts_with_empty_signal_mask) {
  // The node's signal_watcher blocks SIGTERM in every thread; the child must
  // not inherit that, or it could never be stopped with SIGTERM.
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &block, &old), 0);
  START(child, shell("exec sleep 30"));
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  child.kill(SIGTERM);
  auto st = child.wait();
  EXPECT_FALSE(st.exited);
  EXPECT_EQ(st.signal, SIGTERM);
}

TEST(child_process, destructor_kills_and_reaps) {
  pid_t pid = -1;
  {
    START(child, shell("exec sleep 30"));
    pid = child.pid();
    ASSERT_FALSE(process_gone(pid));
  }
  // Reaped: not a zombie, not our child any more.
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  EXPECT_FALSE(std::filesystem::exists("/proc/" + std::to_string(pid)));
}

TEST(child_process, wait_leaves_no_zombie) {
  START(child, shell("exit 0"));
  auto pid = child.pid();
  EXPECT_TRUE(child.wait().success());
  EXPECT_FALSE(std::filesystem::exists("/proc/" + std::to_string(pid)));
}

TEST(child_process, move_transfers_ownership) {
  START(a, shell("exit 7"));
  auto pid = a.pid();
  child_process b = std::move(a);
  EXPECT_EQ(b.pid(), pid);
  EXPECT_EQ(a.pid(), -1); // NOLINT(bugprone-use-after-move): moved-from state
  EXPECT_EQ(b.wait().code, 7);
}

// Verifies what PR_SET_PDEATHSIG promises: a parent that is SIGKILLed (no
// destructor, no cleanup) takes its child with it.
TEST(child_process, grandchild_dies_with_killed_parent) {
  // Orphans are re-parented to us instead of init, so we can reap the
  // grandchild and see *how* it died.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t helper = ::fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    ::close(fds[0]);
    auto r = child_process::spawn(shell("exec sleep 60"));
    pid_t grandchild = r ? r->pid() : -1;
    (void)!::write(fds[1], &grandchild, sizeof(grandchild));
    ::pause(); // until SIGKILLed
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t grandchild = -1;
  ASSERT_EQ(::read(fds[0], &grandchild, sizeof(grandchild)),
            static_cast<ssize_t>(sizeof(grandchild)));
  ::close(fds[0]);
  ASSERT_GT(grandchild, 0);
  EXPECT_FALSE(process_gone(grandchild));

  ASSERT_EQ(::kill(helper, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(helper, &status, 0), helper);
  EXPECT_TRUE(WIFSIGNALED(status));

  // Poll with a bounded deadline (not a timing assertion: PDEATHSIG is
  // delivered at once, the deadline only keeps a broken build from hanging).
  bool reaped = false;
  int gstatus = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!reaped && std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(grandchild, &gstatus, WNOHANG) == grandchild)
      reaped = true;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!reaped) {
    ::kill(grandchild, SIGKILL);
    ::waitpid(grandchild, nullptr, 0);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  ASSERT_TRUE(reaped) << "grandchild " << grandchild << " outlived its parent";
  EXPECT_TRUE(WIFSIGNALED(gstatus));
  EXPECT_EQ(WTERMSIG(gstatus), SIGKILL);
  EXPECT_TRUE(process_gone(grandchild));
}

} // namespace
