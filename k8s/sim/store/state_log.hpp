// The store's durability: an append-only log of committed changes, one JSON
// line each, fsynced per batch before the store replies, so that every
// acknowledged write survives a SIGKILL. Replayed in order at spawn; a last
// line cut short by a crash is dropped (it was never acknowledged).
#pragma once

#include "k8s/sim/store/store_core.hpp"

#include <caf/expected.hpp>

#include <string>
#include <vector>

namespace aiperf::k8s::sim {

class state_log {
public:
  /// Opens (creating the folder and file if needed) `dir`/store.log and
  /// reads the events it holds into `replay`. Errors name the file and the
  /// line that could not be read.
  static caf::expected<state_log> open(const std::string& dir,
                                       std::vector<history_event>& replay);

  state_log(state_log&& other) noexcept;
  state_log& operator=(state_log&& other) noexcept;
  state_log(const state_log&) = delete;
  state_log& operator=(const state_log&) = delete;
  ~state_log();

  /// Appends the batch and fsyncs it.
  caf::expected<void> append(const std::vector<history_event>& batch);

  /// Empties the log (a restart that loses the state).
  caf::expected<void> truncate();

private:
  state_log(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

} // namespace aiperf::k8s::sim
