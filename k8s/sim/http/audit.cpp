#include "k8s/sim/http/audit.hpp"

#include "k8s/object/time.hpp"
#include "runtime/io/durable_file.hpp"

#include <cerrno>

namespace aiperf::k8s::sim::http {

json audit_event(const audit_entry& e) {
  json ev = json::object();
  ev["kind"] = "Event";
  ev["apiVersion"] = "audit.k8s.io/v1";
  ev["level"] = "Metadata";
  ev["auditID"] = e.audit_id;
  ev["stage"] = e.stage;
  ev["requestURI"] = e.request_uri;
  ev["verb"] = e.verb;
  json user = json::object();
  user["username"] = e.user.username;
  if (!e.user.uid.empty())
    user["uid"] = e.user.uid;
  if (!e.user.groups.empty())
    user["groups"] = e.user.groups;
  if (!e.user.extra.empty()) {
    json extra = json::object();
    for (const auto& [k, v] : e.user.extra)
      extra[k] = v;
    user["extra"] = extra;
  }
  ev["user"] = user;
  if (!e.impersonated_user.empty()) {
    json imp = json::object();
    imp["username"] = e.impersonated_user;
    if (!e.impersonated_groups.empty())
      imp["groups"] = e.impersonated_groups;
    ev["impersonatedUser"] = imp;
  }
  ev["sourceIPs"] = json::array({e.source_ip});
  if (!e.user_agent.empty())
    ev["userAgent"] = e.user_agent;
  if (e.object_ref) {
    const auto& r = *e.object_ref;
    json ref = json::object();
    ref["resource"] = r.resource;
    if (!r.namespace_name.empty())
      ref["namespace"] = r.namespace_name;
    else if (r.resource == "namespaces" && !r.name.empty())
      ref["namespace"]
          = r.name; // requestinfo.go: a namespace is its own namespace
    if (!r.name.empty())
      ref["name"] = r.name;
    if (!r.group.empty())
      ref["apiGroup"] = r.group;
    ref["apiVersion"] = r.version;
    if (!r.subresource.empty())
      ref["subresource"] = r.subresource;
    ev["objectRef"] = ref;
  }
  json rs = json::object();
  rs["metadata"] = json::object();
  if (e.code >= 300 && !e.status_reason.empty()) {
    rs["status"] = "Failure";
    if (!e.status_message.empty())
      rs["message"] = e.status_message;
    rs["reason"] = e.status_reason;
  }
  rs["code"] = e.code;
  ev["responseStatus"] = rs;
  ev["requestReceivedTimestamp"] = format_micro_time(e.received_unix_ns);
  ev["stageTimestamp"] = format_micro_time(e.stage_unix_ns);
  if (e.code != 401)
    ev["annotations"] = {
        {"authorization.k8s.io/decision", e.code == 403 ? "forbid" : "allow"}};
  return ev;
}

audit_log::~audit_log() {
  close();
}

caf::expected<void> audit_log::open(const std::string& path) {
  std::lock_guard guard{mutex_};
  file_ = std::fopen(path.c_str(), "a");
  if (file_ == nullptr)
    return io::errno_error(errno, "open", path, "the audit log");
  return {};
}

void audit_log::write(const audit_entry& e) {
  std::string line
      = audit_event(e).dump(-1, ' ', false, json::error_handler_t::replace);
  line += '\n';
  std::lock_guard guard{mutex_};
  if (file_ == nullptr)
    return;
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

void audit_log::close() {
  std::lock_guard guard{mutex_};
  if (file_ != nullptr) {
    std::fflush(file_);
    std::fclose(file_);
    file_ = nullptr;
  }
}

} // namespace aiperf::k8s::sim::http
