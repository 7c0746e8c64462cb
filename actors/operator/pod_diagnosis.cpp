#include "actors/operator/pod_diagnosis.hpp"

#include <array>
#include <string_view>

namespace aiperf::op {

namespace {

struct category_rule {
  std::string_view category;
  bool terminal;
};

// Waiting reasons of a container, by category (kubelet's spellings).
std::optional<category_rule> category_of_waiting(std::string_view reason) {
  if (reason == "ErrImagePull" || reason == "ImagePullBackOff" || reason == "InvalidImageName"
      || reason == "ErrImageNeverPull")
    return category_rule{"ImagePull", true};
  if (reason == "CreateContainerConfigError" || reason == "CreateContainerError"
      || reason == "RunContainerError")
    return category_rule{"ContainerConfig", true};
  if (reason == "CrashLoopBackOff")
    return category_rule{"CrashLoop", true};
  return std::nullopt;
}

std::string str(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

const json& sub(const json& obj, const char* key) {
  static const json none = json::object();
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : none;
}

} // namespace

int blocker_rank(std::string_view category) {
  constexpr std::array<std::string_view, 5> order{"ImagePull", "ContainerConfig", "CrashLoop",
                                                  "SchedulingConstraint", "SchedulingDelay"};
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] == category)
      return static_cast<int>(i);
  return static_cast<int>(order.size());
}

std::optional<startup_issue> diagnose_pod(const json& pod) {
  const json& status = sub(pod, "status");
  auto phase = str(status, "phase");
  if (phase == "Succeeded" || phase == "Failed")
    return std::nullopt;
  auto pod_name = str(sub(pod, "metadata"), "name");
  std::optional<startup_issue> best;
  auto offer = [&](startup_issue issue) {
    issue.pod_name = pod_name;
    issue.fingerprint = pod_name + "/" + issue.container_name + "/" + issue.reason;
    if (!best || blocker_rank(issue.category) < blocker_rank(best->category))
      best = std::move(issue);
  };
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    auto it = status.find(list);
    if (it == status.end() || !it->is_array())
      continue;
    for (const auto& c : *it) {
      const json& waiting = sub(sub(c, "state"), "waiting");
      auto rule = category_of_waiting(str(waiting, "reason"));
      if (!rule)
        continue;
      startup_issue issue;
      issue.category = rule->category;
      issue.terminal_after_threshold = rule->terminal;
      issue.container_name = str(c, "name");
      issue.reason = str(waiting, "reason");
      issue.message = str(waiting, "message");
      offer(std::move(issue));
    }
  }
  auto conditions = status.find("conditions");
  if (conditions != status.end() && conditions->is_array())
    for (const auto& c : *conditions) {
      if (str(c, "type") != "PodScheduled" || str(c, "status") != "False")
        continue;
      startup_issue issue;
      issue.reason = str(c, "reason");
      issue.message = str(c, "message");
      // The scheduler's message says why: missing capacity may clear up
      // (nodes free up, the autoscaler adds one); a selector, affinity or
      // taint that no node matches does not.
      bool capacity = issue.message.find("Insufficient") != std::string::npos
                      || issue.message.find("Too many pods") != std::string::npos;
      issue.category = capacity ? "SchedulingDelay" : "SchedulingConstraint";
      issue.terminal_after_threshold = !capacity && issue.reason == "Unschedulable";
      offer(std::move(issue));
    }
  return best;
}

json startup_issue_json(const startup_issue& issue, const std::string& first_seen) {
  return json{{"fingerprint", issue.fingerprint},
              {"podName", issue.pod_name},
              {"containerName", issue.container_name},
              {"reason", issue.reason},
              {"message", issue.message},
              {"category", issue.category},
              {"terminalAfterThreshold", issue.terminal_after_threshold},
              {"firstObservedTime", first_seen},
              {"warningEmitted", false}};
}

std::optional<controller_end> controller_termination(const json& pod) {
  const json& status = sub(pod, "status");
  auto it = status.find("containerStatuses");
  if (it == status.end() || !it->is_array())
    return std::nullopt;
  for (const auto& c : *it) {
    if (str(c, "name") != "control-plane")
      continue;
    // The container's last end: now, or before a restart.
    const json* ended = nullptr;
    if (auto t = sub(c, "state").find("terminated"); t != sub(c, "state").end())
      ended = &*t;
    else if (auto l = sub(c, "lastState").find("terminated"); l != sub(c, "lastState").end())
      ended = &*l;
    if (ended == nullptr)
      return std::nullopt;
    auto code = ended->value("exitCode", 0);
    auto reason = str(*ended, "reason");
    return controller_end{code, "controller pod " + str(sub(pod, "metadata"), "name")
                                    + ": container exited with code " + std::to_string(code)
                                    + (reason.empty() ? std::string{} : " (" + reason + ")")};
  }
  return std::nullopt;
}

bool is_benchmark_outcome(int code) noexcept {
  return code == 0 || code == 4 || code == 5 || code == 6;
}

std::vector<restart_report> restarts_past(const json& pod, int threshold) {
  std::vector<restart_report> out;
  if (threshold <= 0)
    return out;
  const json& status = sub(pod, "status");
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    auto it = status.find(list);
    if (it == status.end() || !it->is_array())
      continue;
    for (const auto& c : *it)
      if (int n = c.value("restartCount", 0); n >= threshold)
        out.push_back({str(c, "name"), n});
  }
  return out;
}

} // namespace aiperf::op
