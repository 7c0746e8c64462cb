// The client self-check of every `profile` run: it watches the loop lag of
// each HTTP I/O thread and the process CPU, and says when the client, not
// the server, limited the results (console warning + JSON object).
#pragma once

#include "runtime/selfcheck/selfcheck.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace aiperf::http {
class io_pool;
} // namespace aiperf::http

namespace aiperf::selfcheck {
class monitor;
} // namespace aiperf::selfcheck

namespace aiperf::profile_command {

class client_self_check {
public:
  /// A probe for every io_context of `io` (which must outlive this).
  explicit client_self_check(http::io_pool& io);
  ~client_self_check();

  /// Starts measuring: call it when the load starts, so the start-up (which
  /// may run long actor handlers on an I/O thread, see io_scheduler.hpp) is
  /// not judged as client lag. Thread-safe; later calls do nothing.
  void start();

  /// Stops measuring and returns the warnings (empty when the client kept
  /// up) and the measurements as one JSON object. Without a start() the
  /// window is empty and nothing is judged. Thread-safe, runs once: later
  /// calls return the first result.
  std::pair<std::vector<std::string>, std::string> finish();

private:
  void start_locked();

  std::vector<std::unique_ptr<selfcheck::monitor>> monitors_;
  /// The lines judged against (AIPERF_SELF_CHECK_LAG_P99_US moves the lag's).
  selfcheck::thresholds limits_;
  std::unique_ptr<std::pair<std::vector<std::string>, std::string>> result_;
  bool started_ = false;
  std::mutex mtx_; // guards start() and finish()
};

} // namespace aiperf::profile_command
