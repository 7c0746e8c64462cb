// Pure configuration of the ZMQ bridge: channels, ports and their
// environment variables, endpoint naming and selection, and the readiness
// probe's schedule. No sockets here, so all of it is unit-testable.
#pragma once

#include "proto/ports.hpp"
#include "proto/error.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace aiperf::zmq_bridge {

/// Why the bridge refused or failed an operation.
enum class errc : std::uint8_t {
  bad_config = 1, // an endpoint, identity or directory is unusable
  not_running,    // start() not called yet, called twice, or stop() begun
  not_open,       // the channel does not send in this role
  os_error,       // a system call failed (the message has the OS reason)
};

[[nodiscard]] const char* to_string(errc x) noexcept;

} // namespace aiperf::zmq_bridge

AIPERF_ERROR_ENUM(aiperf::zmq_bridge::errc, "bridge")

namespace aiperf::zmq_bridge {

/// The four inter-process channels (docs/distributed.md).
enum class channel : std::uint8_t {
  control = 0,       // controller ROUTER <-> DEALER per process
  credit = 1,        // controller ROUTER <-> DEALER per process
  credit_return = 2, // worker PUSH -> controller PULL
  records = 3,       // PUSH -> controller PULL
};

inline constexpr std::size_t channel_count = 4;

/// Returns "control", "credit", "credit_return" or "records".
[[nodiscard]] const char* to_string(channel x) noexcept;

/// Which side of the channels a process is.
enum class role : std::uint8_t {
  /// Binds every channel (ROUTER, ROUTER, PULL, PULL).
  controller,
  /// Connects (DEALER, DEALER, PUSH, PUSH) to the channels it has an
  /// endpoint for.
  worker,
};

/// TCP ports of one node (proto/ports.hpp).
using port_config = proto::node_ports;

/// The port of bridge channel `ch`.
[[nodiscard]] std::uint16_t port_of(const port_config& ports, channel ch) noexcept;

/// One endpoint per channel ("tcp://host:port", "ipc:///path"); empty =
/// channel not used.
struct endpoints {
  std::string control;
  std::string credit;
  std::string credit_return;
  std::string records;

  [[nodiscard]] std::string& operator[](channel ch) noexcept;
  [[nodiscard]] const std::string& operator[](channel ch) const noexcept;
};

/// What a controller bridge bound; `ipc` is empty unless an ipc_dir was set.
/// Pass these to the processes the controller starts.
struct bound_endpoints {
  endpoints tcp;
  endpoints ipc;
};

/// The endpoints a worker process connects. With a controller host (from
/// AIPERF_K8S_ZMQ_CONTROLLER_HOST) it is tcp://<host>:<port> for every
/// channel; without one, the controller's IPC endpoints when it bound them
/// (same machine), else its TCP ones.
[[nodiscard]] endpoints
select_worker_endpoints(const std::optional<std::string>& controller_host,
                        const port_config& ports, const bound_endpoints& bound);

/// Returns "ipc://<dir>/<channel>.ipc", or bad_config naming `ipc_dir` when
/// the path exceeds the 107-byte limit of a Unix socket path.
[[nodiscard]] caf::expected<std::string> ipc_endpoint(std::string_view ipc_dir, channel ch);

/// Budget of the return-channel readiness probe: `attempts` NOBLOCK sends
/// spaced by `retry_delay`. 0 attempts disables the probe (it answers at
/// once, connected=false, with a warning).
struct probe_budget {
  std::uint32_t attempts = 50;
  std::chrono::milliseconds retry_delay{100};
};

/// The probe's state machine, driven by the I/O thread's clock.
class probe_schedule {
public:
  using time_point = std::chrono::steady_clock::time_point;

  probe_schedule(probe_budget budget, time_point now) noexcept
    : budget_(budget), next_(now) {}

  /// An attempt is due at or after this time.
  [[nodiscard]] time_point next_attempt() const noexcept { return next_; }
  [[nodiscard]] bool due(time_point now) const noexcept { return now >= next_; }
  /// Records a failed attempt at `now`; returns true when the budget is
  /// spent (the probe degrades open).
  bool failed_attempt(time_point now) noexcept {
    ++attempts_;
    next_ = now + budget_.retry_delay;
    return attempts_ >= budget_.attempts;
  }
  [[nodiscard]] std::uint32_t attempts() const noexcept { return attempts_; }
  [[nodiscard]] const probe_budget& budget() const noexcept { return budget_; }

private:
  probe_budget budget_;
  std::uint32_t attempts_ = 0;
  time_point next_;
};

} // namespace aiperf::zmq_bridge
