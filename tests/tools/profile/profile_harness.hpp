// Black-box harness for `aiperf-node`: runs the real binary as a child
// process (stdout/stderr captured to files), starts `aiperf-node mock-server
// -p 0` children, reads artifact files and speaks just enough HTTP to read
// the mock's /metrics. Every wait is a poll with a bounded deadline; nothing
// here measures time.
#pragma once

#include <rapidjson/document.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <sys/types.h>

namespace aiperf::itest {

namespace fs = std::filesystem;

/// Generous bound for one child run; only a guard against hangs.
inline constexpr std::chrono::seconds run_deadline{60};

/// Path of the aiperf-node binary (env AIPERF_NODE_BIN, set by ctest).
[[nodiscard]] std::string node_bin();

/// Path of aiperf-node-test, the build with test seams read from
/// AIPERF_TEST_* variables (next to aiperf-node's build tree).
[[nodiscard]] std::string node_test_bin();

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class temp_dir {
public:
  temp_dir();
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  [[nodiscard]] const fs::path& path() const noexcept { return path_; }

private:
  fs::path path_;
};

/// A running child process whose stdout/stderr go to files. The destructor
/// kills (SIGKILL) and reaps it if it is still running.
class child {
public:
  /// Starts `argv[0]` with `argv`; output files are `<log_prefix>.out/.err`.
  child(const std::vector<std::string>& argv, const fs::path& log_prefix);
  ~child();
  child(const child&) = delete;
  child& operator=(const child&) = delete;

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

  /// Sends `sig` if the child has not been reaped yet.
  void signal(int sig);

  /// Waits up to `deadline` for the child to end. Returns its exit code, or
  /// 128 + signal if a signal ended it; nullopt on timeout (still running).
  [[nodiscard]] std::optional<int>
  wait(std::chrono::milliseconds deadline = run_deadline);

  /// Everything written to stdout / stderr so far.
  [[nodiscard]] std::string out() const;
  [[nodiscard]] std::string err() const;

  /// Polls stdout until it holds a full first line (or the deadline/child
  /// exit); returns it without the newline.
  [[nodiscard]] std::optional<std::string>
  first_line(std::chrono::milliseconds deadline = run_deadline);

private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  fs::path out_path_;
  fs::path err_path_;
};

/// Result of a finished `aiperf-node` run.
struct run_result {
  int exit_code = -1; // -1: did not end within the deadline (then killed)
  std::string out;
  std::string err;
};

/// Runs `aiperf-node <args...>` to completion.
/// `binary` empty = aiperf-node.
[[nodiscard]] run_result run_node(const std::vector<std::string>& args,
                                  const fs::path& log_prefix,
                                  const std::string& binary = {});

/// A server on loopback that answers every HTTP request (after reading its
/// body) with status 200, `content_type` and the bytes of `body_python` (a
/// Python bytes expression, e.g. "b'data: x\\n\\n'"), then closes the
/// connection. It binds port 0 and prints the port it got.
class canned_server {
public:
  canned_server(const std::string& content_type, const std::string& body_python,
                const fs::path& log);
  /// The URL ("http://127.0.0.1:PORT"); empty when the server did not start.
  [[nodiscard]] const std::string& url() const noexcept { return url_; }
  [[nodiscard]] std::string err() const { return proc_->err(); }

private:
  std::unique_ptr<child> proc_;
  std::string url_;
};

/// `aiperf-node mock-server -p 0 <args...>`; the URL is read from its first
/// stdout line `mock-server listening on http://HOST:PORT`.
class mock_process {
public:
  mock_process(const std::vector<std::string>& args, const fs::path& dir);
  ~mock_process();
  mock_process(const mock_process&) = delete;
  mock_process& operator=(const mock_process&) = delete;

  /// True once the server printed its listening line.
  [[nodiscard]] bool ok() const noexcept { return port_ != 0; }
  [[nodiscard]] const std::string& url() const noexcept { return url_; }
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] child& process() noexcept { return *proc_; }

  /// Value of the Prometheus sample whose line starts with `series`
  /// (e.g. `aiperf_mock_requests_total{endpoint="chat"}`); nullopt when
  /// /metrics cannot be read or has no such line.
  [[nodiscard]] std::optional<double> metric(const std::string& series) const;

private:
  std::unique_ptr<child> proc_;
  std::string url_;
  std::uint16_t port_ = 0;
};

/// GET http://127.0.0.1:<port><path>; returns the body, nullopt on failure.
[[nodiscard]] std::optional<std::string> http_get(std::uint16_t port,
                                                  const std::string& path);

/// Reads a Prometheus sample from /metrics text (see mock_process::metric).
[[nodiscard]] std::optional<double> prometheus_value(const std::string& text,
                                                     const std::string& series);

/// Polls `condition` every few ms until it holds or `deadline` passes.
template <class Condition>
bool poll_until(Condition condition,
                std::chrono::milliseconds deadline = run_deadline);

/// A loopback TCP port that refuses connections while this lives: its
/// socket is bound, so the kernel gives the port to nobody else, and never
/// listens.
class closed_port {
public:
  closed_port();
  ~closed_port();
  closed_port(const closed_port&) = delete;
  closed_port& operator=(const closed_port&) = delete;
  /// 0 when no socket could be bound.
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

/// The file's whole text ("" when missing).
[[nodiscard]] std::string read_file(const fs::path& path);

/// The file's non-empty lines.
[[nodiscard]] std::vector<std::string> read_lines(const fs::path& path);

/// Parses JSON; a parse error leaves the document's HasParseError() set.
[[nodiscard]] rapidjson::Document parse_json(const std::string& text);

/// The one run directory `<artifact_root>/<run-name>/`; empty path when
/// there is none or more than one.
[[nodiscard]] fs::path run_dir(const fs::path& artifact_root);

/// Regular files below `root` (recursively), relative paths, sorted.
[[nodiscard]] std::vector<std::string> files_under(const fs::path& root);

// --- template implementation ---------------------------------------------

void sleep_briefly(); // one poll interval

template <class Condition>
bool poll_until(Condition condition, std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    if (condition())
      return true;
    if (std::chrono::steady_clock::now() >= until)
      return false;
    sleep_briefly();
  }
}

} // namespace aiperf::itest
