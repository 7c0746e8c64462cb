#include "k8s/sim/builtins/tables.hpp"

#include "k8s/object/selectors.hpp"
#include "k8s/object/time.hpp"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

namespace aiperf::k8s::sim {

namespace {

// metav1.ObjectMeta{}.SwaggerDoc() of the two fields every table shows.
constexpr const char* name_doc
    = "Name must be unique within a namespace. Is required when creating "
      "resources, although some resources may allow a client to request the "
      "generation of an appropriate name automatically. Name is primarily "
      "intended for creation idempotence and configuration definition. Cannot "
      "be updated. More info: "
      "https://kubernetes.io/docs/concepts/overview/working-with-objects/"
      "names#names";
constexpr const char* created_doc
    = "CreationTimestamp is a timestamp representing the server time when this "
      "object was created. It is not guaranteed to be set in happens-before "
      "order across separate operations. Clients may not set this value. It is "
      "represented in RFC3339 form and is in UTC.\n\nPopulated by the system. "
      "Read-only. Null for lists. More info: "
      "https://git.k8s.io/community/contributors/devel/sig-architecture/"
      "api-conventions.md#metadata";

struct column {
  std::string name;
  std::string type = "string";
  std::string format;
  std::string description;
  std::int32_t priority = 0;
};

json column_json(const column& c) {
  json out = json::object();
  out["name"] = c.name;
  out["type"] = c.type;
  out["format"] = c.format;
  out["description"] = c.description;
  out["priority"] = c.priority;
  return out;
}

column name_column() {
  return {"Name", "string", "name", name_doc, 0};
}
column age_column() {
  return {"Age", "string", "", created_doc, 0};
}
column text_column(std::string name, std::string description,
                   std::int32_t priority = 0) {
  return {std::move(name), "string", "", std::move(description), priority};
}
column int_column(std::string name, std::string description,
                  std::int32_t priority = 0) {
  return {std::move(name), "integer", "", std::move(description), priority};
}

const json& member(const json& obj, const char* key) {
  static const json null_value;
  if (!obj.is_object())
    return null_value;
  auto it = obj.find(key);
  return it == obj.end() ? null_value : *it;
}

std::string str(const json& obj, const char* key) {
  const auto& v = member(obj, key);
  return v.is_string() ? v.get<std::string>() : std::string{};
}

std::int64_t integer(const json& obj, const char* key) {
  const auto& v = member(obj, key);
  return v.is_number() ? v.get<std::int64_t>() : 0;
}

bool has(const json& obj, const char* key) {
  return !member(obj, key).is_null();
}

// translateTimestampSince: "<unknown>" for a zero or unreadable time.
std::string since(const json& timestamp, std::int64_t now) {
  if (!timestamp.is_string() || timestamp.get_ref<const std::string&>().empty())
    return "<unknown>";
  auto ns = parse_time(timestamp.get<std::string>());
  if (!ns)
    return "<unknown>";
  auto seconds = *ns >= 0 ? *ns / 1'000'000'000
                          : -((-*ns + 999'999'999) / 1'000'000'000);
  return human_duration(now - seconds);
}

std::string age_of(const json& obj, std::int64_t now) {
  return since(member(member(obj, "metadata"), "creationTimestamp"), now);
}

std::string name_of(const json& obj) {
  return str(member(obj, "metadata"), "name");
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0)
      out += sep;
    out += parts[i];
  }
  return out;
}

// labels.FormatLabels: sorted k=v pairs, "<none>" when empty.
std::string format_labels(const json& labels) {
  std::vector<std::string> pairs;
  if (labels.is_object())
    for (const auto& [k, v] : labels.items())
      pairs.push_back(k + "="
                      + (v.is_string() ? v.get<std::string>() : v.dump()));
  std::sort(pairs.begin(), pairs.end());
  return pairs.empty() ? "<none>" : join(pairs, ",");
}

// metav1.FormatLabelSelector: the parsed selector's String().
std::string format_label_selector(const json& selector) {
  auto parsed = label_selector_from_json(selector);
  if (!parsed)
    return "<error>";
  std::vector<std::string> parts;
  for (const auto& r : parsed->requirements) {
    auto values = r.values;
    std::sort(values.begin(), values.end());
    switch (r.op) {
    case label_op::equals:
      parts.push_back(r.key + "=" + join(values, ","));
      break;
    case label_op::not_equals:
      parts.push_back(r.key + "!=" + join(values, ","));
      break;
    case label_op::in:
      parts.push_back(r.key + " in (" + join(values, ",") + ")");
      break;
    case label_op::not_in:
      parts.push_back(r.key + " notin (" + join(values, ",") + ")");
      break;
    case label_op::exists:
      parts.push_back(r.key);
      break;
    case label_op::does_not_exist:
      parts.push_back("!" + r.key);
      break;
    case label_op::greater_than:
      parts.push_back(r.key + ">" + join(values, ","));
      break;
    case label_op::less_than:
      parts.push_back(r.key + "<" + join(values, ","));
      break;
    }
  }
  // A null selector selects nothing and prints as "" too.
  auto out = join(parts, ",");
  return out.empty() ? "<none>" : out;
}

// layoutContainerCells: names and images, comma-separated.
std::pair<std::string, std::string> container_cells(const json& pod_spec) {
  std::vector<std::string> names;
  std::vector<std::string> images;
  const auto& containers = member(pod_spec, "containers");
  if (containers.is_array())
    for (const auto& c : containers) {
      names.push_back(str(c, "name"));
      images.push_back(str(c, "image"));
    }
  return {join(names, ","), join(images, ",")};
}

const json& template_spec(const json& obj) {
  return member(member(member(obj, "spec"), "template"), "spec");
}

bool condition_true(const json& conditions, std::string_view type) {
  if (!conditions.is_array())
    return false;
  for (const auto& c : conditions)
    if (str(c, "type") == type)
      return str(c, "status") == "True";
  return false;
}

struct row {
  json cells = json::array();
  json conditions; // null = none
};

// --- pods (printPod) --------------------------------------------------------

row print_pod(const json& pod, std::int64_t now) {
  const auto& spec = member(pod, "spec");
  const auto& status = member(pod, "status");
  std::int64_t restarts = 0;
  std::int64_t restartable_init_restarts = 0;
  std::int64_t total
      = member(spec, "containers").is_array()
            ? static_cast<std::int64_t>(member(spec, "containers").size())
            : 0;
  std::int64_t ready = 0;
  std::string last_restart;                  // RFC 3339; "" = zero time
  std::string last_restartable_init_restart; // idem
  auto later = [](std::string& current, const json& finished) {
    // RFC 3339 UTC strings of one format order as their times do.
    if (finished.is_string()
        && finished.get_ref<const std::string&>() > current)
      current = finished.get<std::string>();
  };
  auto phase = str(status, "phase");
  auto reason = str(status, "reason").empty() ? phase : str(status, "reason");
  const auto& conditions = member(status, "conditions");
  if (conditions.is_array())
    for (const auto& c : conditions)
      if (str(c, "type") == "PodScheduled"
          && str(c, "reason") == "SchedulingGated")
        reason = "SchedulingGated";
  row r;
  if (phase == "Succeeded")
    r.conditions = json::parse(
        R"([{"type":"Completed","status":"True","reason":"Succeeded",)"
        R"("message":"The pod has completed successfully."}])");
  else if (phase == "Failed")
    r.conditions = json::parse(
        R"([{"type":"Completed","status":"True","reason":"Failed",)"
        R"("message":"The pod failed."}])");

  std::set<std::string> restartable_init;
  const auto& init_specs = member(spec, "initContainers");
  if (init_specs.is_array())
    for (const auto& c : init_specs)
      if (str(c, "restartPolicy") == "Always") {
        restartable_init.insert(str(c, "name"));
        ++total;
      }

  bool initializing = false;
  const auto& init_statuses = member(status, "initContainerStatuses");
  std::int64_t init_count = init_specs.is_array()
                                ? static_cast<std::int64_t>(init_specs.size())
                                : 0;
  if (init_statuses.is_array())
    for (size_t i = 0; i < init_statuses.size(); ++i) {
      const auto& c = init_statuses[i];
      restarts += integer(c, "restartCount");
      const auto& last_term = member(member(c, "lastState"), "terminated");
      if (!last_term.is_null())
        later(last_restart, member(last_term, "finishedAt"));
      bool restartable = restartable_init.count(str(c, "name")) > 0;
      if (restartable) {
        restartable_init_restarts += integer(c, "restartCount");
        if (!last_term.is_null())
          later(last_restartable_init_restart, member(last_term, "finishedAt"));
      }
      const auto& state = member(c, "state");
      const auto& terminated = member(state, "terminated");
      const auto& waiting = member(state, "waiting");
      if (!terminated.is_null() && integer(terminated, "exitCode") == 0)
        continue;
      if (restartable && member(c, "started").is_boolean()
          && member(c, "started").get<bool>()) {
        if (member(c, "ready").is_boolean() && member(c, "ready").get<bool>())
          ++ready;
        continue;
      }
      if (!terminated.is_null()) {
        if (str(terminated, "reason").empty()) {
          if (integer(terminated, "signal") != 0)
            reason = "Init:Signal:"
                     + std::to_string(integer(terminated, "signal"));
          else
            reason = "Init:ExitCode:"
                     + std::to_string(integer(terminated, "exitCode"));
        } else {
          reason = "Init:" + str(terminated, "reason");
        }
      } else if (!waiting.is_null() && !str(waiting, "reason").empty()
                 && str(waiting, "reason") != "PodInitializing") {
        reason = "Init:" + str(waiting, "reason");
      } else {
        reason = "Init:" + std::to_string(i) + "/" + std::to_string(init_count);
      }
      initializing = true;
      break;
    }

  if (!initializing || condition_true(conditions, "Initialized")) {
    restarts = restartable_init_restarts;
    last_restart = last_restartable_init_restart;
    bool has_running = false;
    const auto& statuses = member(status, "containerStatuses");
    if (statuses.is_array())
      for (auto i = static_cast<std::ptrdiff_t>(statuses.size()) - 1; i >= 0;
           --i) {
        const auto& c = statuses[static_cast<size_t>(i)];
        restarts += integer(c, "restartCount");
        const auto& last_term = member(member(c, "lastState"), "terminated");
        if (!last_term.is_null())
          later(last_restart, member(last_term, "finishedAt"));
        const auto& state = member(c, "state");
        const auto& waiting = member(state, "waiting");
        const auto& terminated = member(state, "terminated");
        bool is_ready
            = member(c, "ready").is_boolean() && member(c, "ready").get<bool>();
        if (!waiting.is_null() && !str(waiting, "reason").empty()) {
          reason = str(waiting, "reason");
        } else if (!terminated.is_null()
                   && !str(terminated, "reason").empty()) {
          reason = str(terminated, "reason");
        } else if (!terminated.is_null()) {
          if (integer(terminated, "signal") != 0)
            reason = "Signal:" + std::to_string(integer(terminated, "signal"));
          else
            reason
                = "ExitCode:" + std::to_string(integer(terminated, "exitCode"));
        } else if (is_ready && has(state, "running")) {
          has_running = true;
          ++ready;
        }
      }
    if (reason == "Completed" && has_running)
      reason = condition_true(conditions, "Ready") ? "Running" : "NotReady";
  }

  bool deleting = has(member(pod, "metadata"), "deletionTimestamp");
  if (deleting && str(status, "reason") == "NodeLost")
    reason = "Unknown";
  else if (deleting && phase != "Failed" && phase != "Succeeded")
    reason = "Terminating";

  auto restarts_text = std::to_string(restarts);
  if (restarts != 0 && !last_restart.empty())
    restarts_text += " (" + since(json(last_restart), now) + " ago)";

  std::string pod_ip;
  const auto& ips = member(status, "podIPs");
  if (ips.is_array() && !ips.empty())
    pod_ip = str(ips[0], "ip");
  if (pod_ip.empty())
    pod_ip = "<none>";
  auto node = str(spec, "nodeName");
  if (node.empty())
    node = "<none>";
  auto nominated = str(status, "nominatedNodeName");
  if (nominated.empty())
    nominated = "<none>";
  std::string gates = "<none>";
  const auto& readiness_gates = member(spec, "readinessGates");
  if (readiness_gates.is_array() && !readiness_gates.empty()) {
    std::int64_t true_conditions = 0;
    for (const auto& g : readiness_gates) {
      auto type = str(g, "conditionType");
      if (conditions.is_array())
        for (const auto& c : conditions)
          if (str(c, "type") == type) {
            if (str(c, "status") == "True")
              ++true_conditions;
            break;
          }
    }
    gates = std::to_string(true_conditions) + "/"
            + std::to_string(readiness_gates.size());
  }
  r.cells = json::array({name_of(pod),
                         std::to_string(ready) + "/" + std::to_string(total),
                         reason, restarts_text, age_of(pod, now), pod_ip, node,
                         nominated, gates});
  return r;
}

// --- the other built-ins ----------------------------------------------------

row print_job(const json& job, std::int64_t now) {
  const auto& spec = member(job, "spec");
  const auto& status = member(job, "status");
  auto succeeded = integer(status, "succeeded");
  std::string completions;
  if (has(spec, "completions")) {
    completions = std::to_string(succeeded) + "/"
                  + std::to_string(integer(spec, "completions"));
  } else {
    auto parallelism = integer(spec, "parallelism");
    completions = parallelism > 1 ? std::to_string(succeeded) + "/1 of "
                                        + std::to_string(parallelism)
                                  : std::to_string(succeeded) + "/1";
  }
  std::string duration;
  if (has(status, "startTime")) {
    auto start = parse_time(str(status, "startTime"));
    if (start) {
      std::int64_t end_s = now;
      if (has(status, "completionTime"))
        if (auto end = parse_time(str(status, "completionTime")))
          end_s = *end / 1'000'000'000;
      duration = human_duration(end_s - *start / 1'000'000'000);
    }
  }
  const auto& conditions = member(status, "conditions");
  std::string state;
  if (condition_true(conditions, "Complete"))
    state = "Complete";
  else if (condition_true(conditions, "Failed"))
    state = "Failed";
  else if (has(member(job, "metadata"), "deletionTimestamp"))
    state = "Terminating";
  else if (condition_true(conditions, "Suspended"))
    state = "Suspended";
  else if (condition_true(conditions, "FailureTarget"))
    state = "FailureTarget";
  else
    state = "Running";
  auto [names, images] = container_cells(template_spec(job));
  row r;
  r.cells = json::array({name_of(job), state, completions, duration,
                         age_of(job, now), names, images,
                         format_label_selector(member(spec, "selector"))});
  return r;
}

row print_deployment(const json& d, std::int64_t now) {
  const auto& spec = member(d, "spec");
  const auto& status = member(d, "status");
  auto [names, images] = container_cells(template_spec(d));
  row r;
  r.cells = json::array({name_of(d),
                         std::to_string(integer(status, "readyReplicas")) + "/"
                             + std::to_string(integer(spec, "replicas")),
                         integer(status, "updatedReplicas"),
                         integer(status, "availableReplicas"), age_of(d, now),
                         names, images,
                         format_label_selector(member(spec, "selector"))});
  return r;
}

row print_replica_set(const json& rs, std::int64_t now) {
  const auto& spec = member(rs, "spec");
  const auto& status = member(rs, "status");
  auto [names, images] = container_cells(template_spec(rs));
  row r;
  r.cells = json::array(
      {name_of(rs), integer(spec, "replicas"), integer(status, "replicas"),
       integer(status, "readyReplicas"), age_of(rs, now), names, images,
       format_label_selector(member(spec, "selector"))});
  return r;
}

row print_service(const json& svc, std::int64_t now) {
  const auto& spec = member(svc, "spec");
  auto type = str(spec, "type");
  std::string internal_ip = "<none>";
  const auto& ips = member(spec, "clusterIPs");
  if (ips.is_array() && !ips.empty() && ips[0].is_string())
    internal_ip = ips[0].get<std::string>();
  std::vector<std::string> external;
  const auto& external_ips = member(spec, "externalIPs");
  if (external_ips.is_array())
    for (const auto& ip : external_ips)
      if (ip.is_string())
        external.push_back(ip.get<std::string>());
  std::string external_ip;
  if (type == "ClusterIP" || type == "NodePort") {
    external_ip = external.empty() ? "<none>" : join(external, ",");
  } else if (type == "LoadBalancer") {
    std::set<std::string> lb;
    const auto& ingress
        = member(member(member(svc, "status"), "loadBalancer"), "ingress");
    if (ingress.is_array())
      for (const auto& i : ingress) {
        if (!str(i, "ip").empty())
          lb.insert(str(i, "ip"));
        else if (!str(i, "hostname").empty())
          lb.insert(str(i, "hostname"));
      }
    std::vector<std::string> all(lb.begin(), lb.end());
    all.insert(all.end(), external.begin(), external.end());
    external_ip = all.empty() ? "<pending>" : join(all, ",");
  } else if (type == "ExternalName") {
    external_ip = str(spec, "externalName");
  } else {
    external_ip = "<unknown>";
  }
  std::vector<std::string> ports;
  const auto& port_list = member(spec, "ports");
  if (port_list.is_array())
    for (const auto& p : port_list) {
      auto node_port = integer(p, "nodePort");
      auto text = std::to_string(integer(p, "port"));
      if (node_port > 0)
        text += ":" + std::to_string(node_port);
      ports.push_back(text + "/" + str(p, "protocol"));
    }
  auto port_text = join(ports, ",");
  if (port_text.empty())
    port_text = "<none>";
  row r;
  r.cells = json::array({name_of(svc), type, internal_ip, external_ip,
                         port_text, age_of(svc, now),
                         format_labels(member(spec, "selector"))});
  return r;
}

// printEvent, wide cells. events.k8s.io/v1 objects are read under their
// core/v1 names (the API server converts them to one internal type).
row print_event(const json& e, bool events_v1, std::int64_t now) {
  auto field = [&](const char* core, const char* v1) -> const json& {
    return member(e, events_v1 ? v1 : core);
  };
  const auto& involved = field("involvedObject", "regarding");
  std::string first
      = since(field("firstTimestamp", "deprecatedFirstTimestamp"), now);
  if (!field("firstTimestamp", "deprecatedFirstTimestamp").is_string())
    first = since(member(e, "eventTime"), now);
  std::string last
      = since(field("lastTimestamp", "deprecatedLastTimestamp"), now);
  if (!field("lastTimestamp", "deprecatedLastTimestamp").is_string())
    last = first;
  auto count = integer(e, events_v1 ? "deprecatedCount" : "count");
  const auto& series = member(e, "series");
  if (!series.is_null()) {
    last = since(member(series, "lastObservedTime"), now);
    count = integer(series, "count");
  } else if (count == 0) {
    count = 1;
  }
  std::string kind = str(involved, "kind");
  std::transform(kind.begin(), kind.end(), kind.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  auto target = str(involved, "name").empty()
                    ? kind
                    : kind + "/" + str(involved, "name");
  const auto& source = field("source", "deprecatedSource");
  auto component = str(source, "component");
  if (component.empty())
    component
        = str(e, events_v1 ? "reportingController" : "reportingComponent");
  auto instance = str(source, "host");
  if (instance.empty())
    instance = str(e, "reportingInstance");
  auto source_text = instance.empty() ? component : component + ", " + instance;
  auto message = str(e, events_v1 ? "note" : "message");
  auto begin = message.find_first_not_of(" \t\r\n\v\f");
  auto end = message.find_last_not_of(" \t\r\n\v\f");
  message = begin == std::string::npos ? ""
                                       : message.substr(begin, end - begin + 1);
  row r;
  r.cells = json::array({last, str(e, "type"), str(e, "reason"), target,
                         str(involved, "fieldPath"), source_text, message,
                         first, count, name_of(e)});
  return r;
}

row print_node(const json& node, std::int64_t now) {
  const auto& status = member(node, "status");
  std::vector<std::string> states;
  const auto& conditions = member(status, "conditions");
  if (conditions.is_array())
    for (const auto& c : conditions)
      if (str(c, "type") == "Ready") {
        states.push_back(str(c, "status") == "True" ? "Ready" : "NotReady");
        break;
      }
  if (states.empty())
    states.emplace_back("Unknown");
  const auto& unschedulable = member(member(node, "spec"), "unschedulable");
  if (unschedulable.is_boolean() && unschedulable.get<bool>())
    states.emplace_back("SchedulingDisabled");
  std::set<std::string> roles;
  const auto& labels = member(member(node, "metadata"), "labels");
  if (labels.is_object())
    for (const auto& [k, v] : labels.items()) {
      constexpr std::string_view prefix = "node-role.kubernetes.io/";
      if (k.compare(0, prefix.size(), prefix) == 0 && k.size() > prefix.size())
        roles.insert(k.substr(prefix.size()));
      else if (k == "kubernetes.io/role" && v.is_string()
               && !v.get<std::string>().empty())
        roles.insert(v.get<std::string>());
    }
  auto role_text
      = join(std::vector<std::string>(roles.begin(), roles.end()), ",");
  if (role_text.empty())
    role_text = "<none>";
  auto address = [&](const char* type) {
    const auto& addresses = member(status, "addresses");
    if (addresses.is_array())
      for (const auto& a : addresses)
        if (str(a, "type") == type)
          return str(a, "address");
    return std::string{"<none>"};
  };
  const auto& info = member(status, "nodeInfo");
  auto or_unknown
      = [](std::string s) { return s.empty() ? std::string{"<unknown>"} : s; };
  row r;
  r.cells = json::array({name_of(node), join(states, ","), role_text,
                         age_of(node, now), str(info, "kubeletVersion"),
                         address("InternalIP"), address("ExternalIP"),
                         or_unknown(str(info, "osImage")),
                         or_unknown(str(info, "kernelVersion")),
                         or_unknown(str(info, "containerRuntimeVersion"))});
  return r;
}

row print_endpoints(const json& ep, std::int64_t now) {
  // formatEndpoints: up to three addresses, then "+ N more...".
  std::vector<std::string> list;
  std::int64_t count = 0;
  bool more = false;
  const auto& subsets = member(ep, "subsets");
  if (subsets.is_array())
    for (const auto& ss : subsets) {
      const auto& addresses = member(ss, "addresses");
      const auto& ports = member(ss, "ports");
      auto n = addresses.is_array()
                   ? static_cast<std::int64_t>(addresses.size())
                   : 0;
      if (!ports.is_array() || ports.empty()) {
        count += n;
        for (std::int64_t i = 0; i < n; ++i) {
          if (list.size() == 3) {
            more = true;
            break;
          }
          list.push_back(str(addresses[static_cast<size_t>(i)], "ip"));
        }
        continue;
      }
      for (const auto& port : ports) {
        count += n;
        for (std::int64_t i = 0; i < n; ++i) {
          if (list.size() == 3) {
            more = true;
            break;
          }
          auto ip = str(addresses[static_cast<size_t>(i)], "ip");
          auto host = ip.find(':') != std::string::npos ? "[" + ip + "]" : ip;
          list.push_back(host + ":" + std::to_string(integer(port, "port")));
        }
      }
    }
  std::string text = list.empty() && (!subsets.is_array() || subsets.empty())
                         ? std::string{"<none>"}
                         : join(list, ",");
  if (more)
    text += " + " + std::to_string(count - 3) + " more...";
  row r;
  r.cells = json::array({name_of(ep), text, age_of(ep, now)});
  return r;
}

std::string subjects_of(const json& binding, const char* kind) {
  std::vector<std::string> out;
  const auto& subjects = member(binding, "subjects");
  if (subjects.is_array())
    for (const auto& s : subjects) {
      if (str(s, "kind") != kind)
        continue;
      if (std::string_view{kind} == "ServiceAccount"
          && !str(s, "namespace").empty())
        out.push_back(str(s, "namespace") + "/" + str(s, "name"));
      else
        out.push_back(str(s, "name"));
    }
  return join(out, ", ");
}

struct printer {
  std::vector<column> columns;
  std::function<row(const json&, std::int64_t)> print;
};

// The printer of a built-in, or null for the default table.
const printer* builtin_printer(const resource_type& type) {
  static const std::map<std::string, printer> printers = [] {
    std::map<std::string, printer> m;
    const column containers = text_column(
        "Containers", "Names of each container in the template.", 1);
    const column images = text_column(
        "Images", "Images referenced by each container in the template.", 1);
    m["v1 Pod"] = {
        {name_column(),
         text_column("Ready", "The aggregate readiness state of this pod for "
                              "accepting traffic."),
         text_column("Status",
                     "The aggregate status of the containers in this pod."),
         text_column("Restarts",
                     "The number of times the containers in this pod have been "
                     "restarted and when the last container in this pod has "
                     "restarted."),
         age_column(),
         text_column(
             "IP",
             "podIP address allocated to the pod. Routable at least within the "
             "cluster. Empty if not yet allocated.",
             1),
         text_column("Node",
                     "NodeName indicates in which node this pod is scheduled.",
                     1),
         text_column("Nominated Node",
                     "nominatedNodeName is set only when this pod preempts "
                     "other pods on the node.",
                     1),
         text_column("Readiness Gates",
                     "If specified, all readiness gates will be evaluated "
                     "for pod readiness.",
                     1)},
        print_pod};
    m["batch/v1 Job"]
        = {{name_column(), text_column("Status", "Status of the job."),
            text_column("Completions",
                        "The number of pods which reached phase Succeeded."),
            text_column("Duration", "Time required to complete the job."),
            age_column(), containers, images,
            text_column(
                "Selector",
                "A label query over pods that should match the pod count.", 1)},
           print_job};
    m["apps/v1 Deployment"]
        = {{name_column(),
            text_column("Ready", "Number of the pod with ready state"),
            text_column("Up-to-date",
                        "Total number of non-terminated pods targeted by "
                        "this deployment that have the desired template "
                        "spec."),
            text_column("Available",
                        "Total number of available pods (ready for at "
                        "least minReadySeconds) targeted by this "
                        "deployment."),
            age_column(), containers, images,
            text_column("Selector", "Label selector for pods.", 1)},
           print_deployment};
    m["apps/v1 ReplicaSet"] = {
        {name_column(),
         int_column("Desired", "Replicas is the number of desired replicas."),
         int_column("Current",
                    "Replicas is the most recently observed number of "
                    "replicas."),
         int_column("Ready",
                    "The number of ready replicas for this replica set."),
         age_column(), containers, images,
         text_column("Selector",
                     "Selector is a label query over pods that should "
                     "match the replica count.",
                     1)},
        print_replica_set};
    m["v1 Service"]
        = {{name_column(),
            text_column("Type", "type determines how the Service is exposed."),
            text_column("Cluster-IP",
                        "clusterIP is the IP address of the service."),
            text_column("External-IP",
                        "externalIPs is a list of IP addresses for which "
                        "nodes in the cluster will also accept traffic for "
                        "this service."),
            text_column("Port(s)",
                        "The list of ports that are exposed by this service."),
            age_column(),
            text_column("Selector",
                        "Route service traffic to pods with label keys and "
                        "values matching this selector.",
                        1)},
           print_service};
    std::vector<column> event_columns = {
        text_column("Last Seen", "The time at which the most recent occurrence "
                                 "of this event was recorded."),
        text_column("Type", "Type of this event (Normal, Warning), new types "
                            "could be added in the future"),
        text_column(
            "Reason",
            "This should be a short, machine understandable string that gives "
            "the "
            "reason for the transition into the object's current status."),
        text_column("Object", "The object that this event is about."),
        text_column(
            "Subobject",
            "If referring to a piece of an object instead of an entire object, "
            "this "
            "string should contain a valid JSON/Go field access statement.",
            1),
        text_column("Source", "The component reporting this event.", 1),
        text_column(
            "Message",
            "A human-readable description of the status of this operation."),
        text_column("First Seen",
                    "The time at which the event was first recorded.", 1),
        text_column("Count", "The number of times this event has occurred.", 1),
        {"Name", "string", "name", name_doc, 1}};
    m["v1 Event"] = {event_columns, [](const json& e, std::int64_t now) {
                       return print_event(e, false, now);
                     }};
    m["events.k8s.io/v1 Event"]
        = {event_columns, [](const json& e, std::int64_t now) {
             return print_event(e, true, now);
           }};
    m["v1 Namespace"]
        = {{name_column(), text_column("Status", "The status of the namespace"),
            age_column()},
           [](const json& ns, std::int64_t now) {
             row r;
             r.cells
                 = json::array({name_of(ns), str(member(ns, "status"), "phase"),
                                age_of(ns, now)});
             return r;
           }};
    m["v1 ConfigMap"]
        = {{name_column(),
            text_column("Data", "Data contains the configuration data."),
            age_column()},
           [](const json& cm, std::int64_t now) {
             std::int64_t n = 0;
             for (const char* key : {"data", "binaryData"})
               if (member(cm, key).is_object())
                 n += static_cast<std::int64_t>(member(cm, key).size());
             row r;
             r.cells = json::array({name_of(cm), n, age_of(cm, now)});
             return r;
           }};
    m["v1 Secret"] = {
        {name_column(),
         text_column("Type", "Used to facilitate programmatic handling of "
                             "secret data."),
         text_column("Data", "Data contains the secret data."), age_column()},
        [](const json& s, std::int64_t now) {
          auto n = member(s, "data").is_object()
                       ? static_cast<std::int64_t>(member(s, "data").size())
                       : 0;
          row r;
          r.cells
              = json::array({name_of(s), str(s, "type"), n, age_of(s, now)});
          return r;
        }};
    m["v1 ServiceAccount"] = {
        {name_column(),
         text_column("Secrets", "Secrets is a list of the secrets in the same "
                                "namespace that pods running using this "
                                "ServiceAccount are allowed to use."),
         age_column()},
        [](const json& sa, std::int64_t now) {
          auto n = member(sa, "secrets").is_array()
                       ? static_cast<std::int64_t>(member(sa, "secrets").size())
                       : 0;
          row r;
          r.cells = json::array({name_of(sa), n, age_of(sa, now)});
          return r;
        }};
    m["coordination.k8s.io/v1 Lease"] = {
        {name_column(),
         text_column("Holder",
                     "holderIdentity contains the identity of the holder of a "
                     "current lease."),
         age_column()},
        [](const json& l, std::int64_t now) {
          row r;
          r.cells = json::array({name_of(l),
                                 str(member(l, "spec"), "holderIdentity"),
                                 age_of(l, now)});
          return r;
        }};
    for (const char* kind : {"RoleBinding", "ClusterRoleBinding"}) {
      std::string k = kind;
      std::string lower_kind
          = k == "RoleBinding" ? "roleBinding" : "clusterRoleBinding";
      m["rbac.authorization.k8s.io/v1 " + k] = {
          {name_column(),
           text_column(
               "Role",
               "RoleRef can reference a Role in the current namespace or a "
               "ClusterRole in the global namespace."),
           age_column(), text_column("Users", "Users in the " + lower_kind, 1),
           text_column("Groups", "Groups in the " + lower_kind, 1),
           text_column("ServiceAccounts",
                       "ServiceAccounts in the " + lower_kind, 1)},
          [](const json& b, std::int64_t now) {
            const auto& ref = member(b, "roleRef");
            row r;
            r.cells = json::array(
                {name_of(b), str(ref, "kind") + "/" + str(ref, "name"),
                 age_of(b, now), subjects_of(b, "User"),
                 subjects_of(b, "Group"), subjects_of(b, "ServiceAccount")});
            return r;
          }};
    }
    m["v1 Node"] = {
        {name_column(), text_column("Status", "The status of the node"),
         text_column("Roles", "The roles of the node"), age_column(),
         text_column("Version", "Kubelet Version reported by the node."),
         text_column("Internal-IP", "List of addresses reachable to the node.",
                     1),
         text_column("External-IP", "List of addresses reachable to the node.",
                     1),
         text_column("OS-Image",
                     "OS Image reported by the node from /etc/os-release.", 1),
         text_column("Kernel-Version", "Kernel Version reported by the node.",
                     1),
         text_column("Container-Runtime",
                     "ContainerRuntime Version reported by the node.", 1)},
        print_node};
    m["v1 Endpoints"] = {
        {name_column(),
         text_column("Endpoints",
                     "The set of all endpoints is the union of all subsets."),
         age_column()},
        print_endpoints};
    return m;
  }();
  if (type.custom)
    return nullptr;
  auto it = printers.find(type.api_version() + " " + type.kind);
  return it == printers.end() ? nullptr : &it->second;
}

// --- JSONPath (k8s.io/client-go/util/jsonpath, the subset CRDs use) --------

struct step {
  enum class kind { field, index, all, filter } k = kind::field;
  std::string name; // field
  std::int64_t index = 0;
  // filter: @<path> <op> <literal>
  std::vector<std::string> filter_path;
  std::string op;
  json literal;
};

bool parse_steps(std::string_view path, std::vector<step>& out) {
  size_t i = 0;
  if (!path.empty() && path.front() == '{' && path.back() == '}')
    path = path.substr(1, path.size() - 2);
  while (i < path.size()) {
    char c = path[i];
    if (c == '.') {
      ++i;
      size_t start = i;
      std::string name;
      while (i < path.size() && path[i] != '.' && path[i] != '[') {
        if (path[i] == '\\' && i + 1 < path.size())
          ++i; // an escaped dot belongs to the name
        name += path[i++];
      }
      if (i == start && name.empty())
        continue;
      step s;
      s.name = name;
      out.push_back(std::move(s));
    } else if (c == '[') {
      auto close = path.find(']', i);
      if (close == std::string_view::npos)
        return false;
      auto inner = path.substr(i + 1, close - i - 1);
      // A filter's literal may hold ']': find the closing ")]" instead.
      if (!inner.empty() && inner.front() == '?') {
        auto end = path.find(")]", i);
        if (end == std::string_view::npos)
          return false;
        inner = path.substr(i + 1, end - i);
        close = end + 1;
        // ?(@.a.b == "x")
        auto expr = inner.substr(2, inner.size() - 3);
        size_t at = expr.find('@');
        if (at == std::string_view::npos)
          return false;
        size_t op_at = expr.find_first_of("=!<>", at);
        if (op_at == std::string_view::npos)
          return false;
        step s;
        s.k = step::kind::filter;
        auto lhs = expr.substr(at + 1, op_at - at - 1);
        while (!lhs.empty() && lhs.back() == ' ')
          lhs.remove_suffix(1);
        size_t p = 0;
        while (p < lhs.size()) {
          if (lhs[p] == '.') {
            ++p;
            continue;
          }
          auto dot = lhs.find('.', p);
          s.filter_path.emplace_back(lhs.substr(p, dot == std::string_view::npos
                                                       ? std::string_view::npos
                                                       : dot - p));
          p = dot == std::string_view::npos ? lhs.size() : dot;
        }
        size_t op_end = op_at;
        while (op_end < expr.size()
               && std::string_view{"=!<>"}.find(expr[op_end])
                      != std::string_view::npos)
          ++op_end;
        s.op = std::string{expr.substr(op_at, op_end - op_at)};
        auto rhs = expr.substr(op_end);
        while (!rhs.empty() && rhs.front() == ' ')
          rhs.remove_prefix(1);
        while (!rhs.empty() && rhs.back() == ' ')
          rhs.remove_suffix(1);
        if (rhs.size() >= 2 && (rhs.front() == '"' || rhs.front() == '\''))
          s.literal = std::string{rhs.substr(1, rhs.size() - 2)};
        else {
          try {
            s.literal = json::parse(rhs);
          } catch (const json::exception&) {
            return false;
          }
        }
        out.push_back(std::move(s));
      } else if (inner == "*") {
        step s;
        s.k = step::kind::all;
        out.push_back(std::move(s));
      } else if (inner.size() >= 2
                 && (inner.front() == '\'' || inner.front() == '"')) {
        step s;
        s.name = std::string{inner.substr(1, inner.size() - 2)};
        out.push_back(std::move(s));
      } else {
        step s;
        s.k = step::kind::index;
        try {
          s.index = std::stoll(std::string{inner});
        } catch (const std::exception&) {
          return false;
        }
        out.push_back(std::move(s));
      }
      i = close + 1;
    } else {
      // A bare leading name ("status.phase").
      step s;
      while (i < path.size() && path[i] != '.' && path[i] != '[')
        s.name += path[i++];
      out.push_back(std::move(s));
    }
  }
  return true;
}

bool filter_matches(const step& s, const json& item) {
  const json* v = &item;
  for (const auto& key : s.filter_path) {
    if (!v->is_object() || !v->contains(key))
      return false;
    v = &(*v)[key];
  }
  bool equal = *v == s.literal;
  if (s.op == "==")
    return equal;
  if (s.op == "!=")
    return !equal;
  if (v->is_number() && s.literal.is_number()) {
    auto a = v->get<double>();
    auto b = s.literal.get<double>();
    if (s.op == "<")
      return a < b;
    if (s.op == ">")
      return a > b;
    if (s.op == "<=")
      return a <= b;
    if (s.op == ">=")
      return a >= b;
  }
  return false;
}

void evaluate(const std::vector<step>& steps, size_t at, const json& value,
              std::vector<const json*>& out) {
  if (at == steps.size()) {
    out.push_back(&value);
    return;
  }
  const auto& s = steps[at];
  switch (s.k) {
  case step::kind::field:
    if (value.is_object() && value.contains(s.name))
      evaluate(steps, at + 1, value[s.name], out);
    return;
  case step::kind::index:
    if (value.is_array()) {
      auto n = static_cast<std::int64_t>(value.size());
      auto idx = s.index < 0 ? n + s.index : s.index;
      if (idx >= 0 && idx < n)
        evaluate(steps, at + 1, value[static_cast<size_t>(idx)], out);
    }
    return;
  case step::kind::all:
    if (value.is_array())
      for (const auto& item : value)
        evaluate(steps, at + 1, item, out);
    else if (value.is_object())
      for (const auto& [k, item] : value.items())
        evaluate(steps, at + 1, item, out);
    return;
  case step::kind::filter:
    if (value.is_array())
      for (const auto& item : value)
        if (filter_matches(s, item))
          evaluate(steps, at + 1, item, out);
    return;
  }
}

// What jsonpath's text printer writes for a value (fmt.Fprint of the
// decoded Go value): strings bare, numbers and booleans as printed, maps
// and lists in Go's map[k:v] / [a b] form.
std::string go_print(const json& v) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_null())
    return "<nil>";
  if (v.is_array()) {
    std::vector<std::string> parts;
    for (const auto& item : v)
      parts.push_back(go_print(item));
    return "[" + join(parts, " ") + "]";
  }
  if (v.is_object()) {
    std::vector<std::pair<std::string, std::string>> items;
    for (const auto& [k, item] : v.items())
      items.emplace_back(k, go_print(item));
    std::sort(items.begin(), items.end());
    std::vector<std::string> parts;
    for (const auto& [k, s] : items)
      parts.push_back(k + ":" + s);
    return "map[" + join(parts, " ") + "]";
  }
  return v.dump();
}

json custom_cell(const printer_column& col, const json& object,
                 std::int64_t now) {
  auto value = json_path_first(object, col.json_path);
  if (value.is_null())
    return nullptr;
  const auto& t = col.type;
  if (t == "string")
    return go_print(value);
  if (t == "integer")
    return value.is_number() ? json(value.get<std::int64_t>()) : json(nullptr);
  if (t == "number")
    return value.is_number() ? json(value.get<double>()) : json(nullptr);
  if (t == "boolean")
    return value.is_boolean() ? value : json(nullptr);
  if (t == "date") {
    if (!value.is_string())
      return nullptr;
    auto ns = parse_time(value.get<std::string>());
    if (!ns)
      return "<invalid>";
    return since(value, now);
  }
  return nullptr;
}

json row_object(const json& item, const resource_type& type,
                table_include include) {
  switch (include) {
  case table_include::none:
    return nullptr;
  case table_include::object: {
    json full = item;
    if (!full.contains("kind")) {
      // Items of a typed list carry no kind of their own.
      json with = json::object();
      with["kind"] = type.kind;
      with["apiVersion"] = type.api_version();
      for (auto& [k, v] : full.items())
        with[k] = v;
      full = std::move(with);
    }
    return full;
  }
  case table_include::metadata:
    break;
  }
  json partial = json::object();
  partial["kind"] = "PartialObjectMetadata";
  partial["apiVersion"] = "meta.k8s.io/v1";
  partial["metadata"] = member(item, "metadata").is_object()
                            ? member(item, "metadata")
                            : json::object();
  return partial;
}

} // namespace

std::string human_duration(std::int64_t seconds) {
  auto s = [](std::int64_t v) { return std::to_string(v); };
  if (seconds < -1)
    return "<invalid>";
  if (seconds < 0)
    return "0s";
  if (seconds < 60 * 2)
    return s(seconds) + "s";
  auto minutes = seconds / 60;
  if (minutes < 10) {
    auto rest = seconds % 60;
    return rest == 0 ? s(minutes) + "m" : s(minutes) + "m" + s(rest) + "s";
  }
  if (minutes < 60 * 3)
    return s(minutes) + "m";
  auto hours = seconds / 3600;
  if (hours < 8) {
    auto rest = minutes % 60;
    return rest == 0 ? s(hours) + "h" : s(hours) + "h" + s(rest) + "m";
  }
  if (hours < 48)
    return s(hours) + "h";
  if (hours < 24 * 8) {
    auto rest = hours % 24;
    return rest == 0 ? s(hours / 24) + "d"
                     : s(hours / 24) + "d" + s(rest) + "h";
  }
  if (hours < 24 * 365 * 2)
    return s(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    auto days = (hours / 24) % 365;
    return days == 0 ? s(hours / 24 / 365) + "y"
                     : s(hours / 24 / 365) + "y" + s(days) + "d";
  }
  return s(hours / 24 / 365) + "y";
}

json json_path_first(const json& object, std::string_view path) {
  std::vector<step> steps;
  if (!parse_steps(path, steps))
    return nullptr;
  std::vector<const json*> results;
  evaluate(steps, 0, object, results);
  if (results.empty())
    return nullptr;
  return *results.front();
}

json to_table(const resource_type& type, const json& object_or_list,
              std::int64_t now_unix, table_include include) {
  std::vector<const json*> items;
  bool is_list = object_or_list.is_object() && object_or_list.contains("items")
                 && object_or_list["items"].is_array();
  if (is_list)
    for (const auto& item : object_or_list["items"])
      items.push_back(&item);
  else
    items.push_back(&object_or_list);

  std::vector<column> columns;
  std::function<row(const json&)> print;
  if (type.custom) {
    columns.push_back(name_column());
    auto crd_columns = type.printer_columns;
    if (crd_columns.empty())
      crd_columns.push_back(
          {"Age", "date", "", created_doc, ".metadata.creationTimestamp", 0});
    for (const auto& c : crd_columns)
      columns.push_back(
          {c.name, c.type, c.format,
           c.description.empty()
               ? "Custom resource definition column (in JSONPath format): "
                     + c.json_path
               : c.description,
           c.priority});
    print = [crd_columns, now_unix](const json& obj) {
      row r;
      r.cells.push_back(name_of(obj));
      for (const auto& c : crd_columns)
        r.cells.push_back(custom_cell(c, obj, now_unix));
      return r;
    };
  } else if (const auto* p = builtin_printer(type)) {
    columns = p->columns;
    print = [p, now_unix](const json& obj) { return p->print(obj, now_unix); };
  } else {
    columns = {name_column(), {"Created At", "date", "", created_doc, 0}};
    print = [](const json& obj) {
      row r;
      const auto& created
          = member(member(obj, "metadata"), "creationTimestamp");
      r.cells = json::array(
          {name_of(obj), created.is_string()
                             ? created.get<std::string>()
                             : std::string{"0001-01-01T00:00:00Z"}});
      return r;
    };
  }

  json table = json::object();
  table["kind"] = "Table";
  table["apiVersion"] = "meta.k8s.io/v1";
  json meta = json::object();
  const auto& source_meta = member(object_or_list, "metadata");
  for (const char* key : {"resourceVersion", "continue", "remainingItemCount"})
    if (has(source_meta, key)
        && !(member(source_meta, key).is_string()
             && member(source_meta, key).get_ref<const std::string&>().empty()))
      meta[key] = member(source_meta, key);
  table["metadata"] = meta;
  json defs = json::array();
  for (const auto& c : columns)
    defs.push_back(column_json(c));
  table["columnDefinitions"] = defs;
  json rows = json::array();
  for (const auto* item : items) {
    auto r = print(*item);
    json out = json::object();
    out["cells"] = r.cells;
    if (!r.conditions.is_null())
      out["conditions"] = r.conditions;
    auto object = row_object(*item, type, include);
    if (!object.is_null())
      out["object"] = object;
    rows.push_back(std::move(out));
  }
  table["rows"] = rows;
  return table;
}

} // namespace aiperf::k8s::sim
