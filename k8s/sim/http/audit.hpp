// The simulator's audit log: one `audit.k8s.io/v1` Event per request, one
// JSON object per line, as kube-apiserver's log backend writes it with
// --audit-log-format=json (kubernetes/apiserver pkg/apis/audit/v1/types.go).
//
// One event per request, not one per stage: ordinary requests are logged at
// stage ResponseComplete, watches at ResponseStarted when the stream is
// established (so a watch is counted when it arrives, not minutes later when
// it ends). requestReceivedTimestamp is always the arrival, as on a real
// server where it is identical across an auditID's stages.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "proto/error.hpp"

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::http {

/// What one audit event records.
struct audit_entry {
  std::string audit_id;
  std::string stage; // "ResponseComplete" or "ResponseStarted"
  std::string
      verb; // "get", ..., or the lower-cased method of a non-resource request
  std::string request_uri;
  user_info user;
  std::string impersonated_user; // "" = none
  std::vector<std::string> impersonated_groups;
  std::string source_ip;
  std::string user_agent;
  /// Resource requests only.
  std::optional<resource_ref> object_ref;
  std::int32_t code = 200;
  /// The failure's Status (reason, message); empty for a success.
  std::string status_reason;
  std::string status_message;
  std::int64_t received_unix_ns = 0;
  std::int64_t stage_unix_ns = 0;
};

/// The Event object of `e` (kind Event, apiVersion audit.k8s.io/v1, level
/// Metadata).
[[nodiscard]] json audit_event(const audit_entry& e);

/// Appends events to a file, one line each, written through at once so a
/// reader counting lines sees every answered request. Thread-safe.
class audit_log {
public:
  audit_log() = default;
  ~audit_log();
  audit_log(const audit_log&) = delete;
  audit_log& operator=(const audit_log&) = delete;

  /// Opens `path` for appending (created if missing). Fails
  /// (io::errc::system) naming the path.
  [[nodiscard]] caf::expected<void> open(const std::string& path);

  /// Whether open() succeeded; write() is a no-op otherwise.
  [[nodiscard]] bool is_open() const noexcept { return file_ != nullptr; }

  void write(const audit_entry& e);

  /// Flushes and closes the file (SIGTERM); idempotent.
  void close();

private:
  std::mutex mutex_;
  std::FILE* file_ = nullptr;
};

} // namespace aiperf::k8s::sim::http
