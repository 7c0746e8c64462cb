// What `profile` and the worker role of `service` both set up from the run's
// configuration: the HTTP I/O threads with one client each, and the CAF
// scheduler settings.
#pragma once

#include "actors/benchmark/worker_group_manager/worker_group_manager.hpp"
#include "config/profile/profile_config.hpp"
#include "proto/error.hpp"
#include "runtime/http/client.hpp"

#include <caf/fwd.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace aiperf::profile_command {

/// The process's HTTP I/O threads and one client per thread. Declare it
/// before the actor system: it must outlive the workers that use it.
class http_io {
public:
  explicit http_io(const config::profile_config& cfg);

  [[nodiscard]] http::io_pool& pool() noexcept { return pool_; }
  /// One slot per I/O thread, for the worker group.
  [[nodiscard]] const std::vector<worker_group_manager::io_slot>&
  slots() const noexcept {
    return slots_;
  }

  /// Set when `--io-priority high` was asked for but is not allowed here.
  [[nodiscard]] const std::optional<std::string>&
  priority_warning() const noexcept {
    return priority_warning_;
  }

  /// Cancels every request still in flight. Idempotent.
  void shutdown_clients();
  /// shutdown_clients(), then stops and joins the threads. Idempotent.
  void stop();

private:
  http::io_pool pool_;
  std::vector<std::unique_ptr<http::client>> clients_;
  std::vector<worker_group_manager::io_slot> slots_;
  std::optional<std::string> priority_warning_;
};

/// Writes the run's scheduler policy and thread count into `cfg`; fails
/// (system::errc::bad_option) naming the flag when they are invalid. `io` is
/// the process's HTTP I/O (null in a process without one, the controller
/// role, which then uses `sharing`): `auto` puts the actors on its thread
/// when it has exactly one.
[[nodiscard]] caf::expected<void>
apply_scheduler(caf::actor_system_config& cfg,
                const config::profile_config& run, http_io* io);

} // namespace aiperf::profile_command
