#include "k8s/sim/endpoints/detail.hpp"

#include "k8s/object/time.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace aiperf::k8s::sim::net::detail {

std::string str(const json& obj, const char* a, const char* b) {
  if (!obj.is_object() || !obj.contains(a))
    return {};
  const json* v = &obj[a];
  if (b != nullptr) {
    if (!v->is_object() || !v->contains(b))
      return {};
    v = &(*v)[b];
  }
  return v->is_string() ? v->get<std::string>() : std::string{};
}

std::string namespace_of(const std::string& key) {
  auto slash = key.find('/');
  return slash == std::string::npos ? std::string{} : key.substr(0, slash);
}

namespace {

const json& member(const json& obj, const char* name) {
  static const json null_json;
  if (!obj.is_object())
    return null_json;
  auto it = obj.find(name);
  return it == obj.end() ? null_json : *it;
}

} // namespace

bool has_selector(const json& svc) {
  const auto& spec = member(svc, "spec");
  if (str(svc, "spec", "type") == "ExternalName")
    return false;
  // An empty selector is omitted on the wire (omitempty), so upstream
  // reads it as none.
  const auto& selector = member(spec, "selector");
  return selector.is_object() && !selector.empty();
}

bool selects(const json& svc, const json& pod) {
  const auto& selector = member(member(svc, "spec"), "selector");
  if (!selector.is_object())
    return false;
  const auto& labels = member(member(pod, "metadata"), "labels");
  for (const auto& [k, v] : selector.items()) {
    if (!labels.is_object() || !labels.contains(k) || labels[k] != v)
      return false;
  }
  return true;
}

std::vector<std::string>
services_selecting(const std::map<std::string, json>& services,
                   const std::string& pod_key, const json* before,
                   const json* after) {
  auto prefix = namespace_of(pod_key) + "/";
  std::vector<std::string> keys;
  for (const auto& [skey, svc] : services)
    if (skey.compare(0, prefix.size(), prefix) == 0
        && ((before && selects(svc, *before))
            || (after && selects(svc, *after))))
      keys.push_back(skey);
  return keys;
}

bool headless(const json& svc) {
  return str(svc, "spec", "clusterIP") == "None";
}

bool publish_not_ready(const json& svc) {
  const auto& v = member(member(svc, "spec"), "publishNotReadyAddresses");
  return v.is_boolean() && v.get<bool>();
}

bool pod_ready(const json& pod) {
  const auto& conditions = member(member(pod, "status"), "conditions");
  if (!conditions.is_array())
    return false;
  for (const auto& c : conditions)
    if (c.is_object() && c.value("type", "") == "Ready")
      return c.value("status", "") == "True";
  return false;
}

bool pod_terminating(const json& pod) {
  const auto& ts = member(member(pod, "metadata"), "deletionTimestamp");
  return !ts.is_null();
}

std::string pod_ipv4(const json& pod) {
  const auto& status = member(pod, "status");
  auto v4 = [](const std::string& ip) {
    return !ip.empty() && ip.find(':') == std::string::npos;
  };
  const auto& ips = member(status, "podIPs");
  if (ips.is_array())
    for (const auto& p : ips)
      if (p.is_object() && v4(p.value("ip", "")))
        return p.value("ip", "");
  auto ip = str(pod, "status", "podIP");
  return v4(ip) ? ip : std::string{};
}

bool should_be_in_endpoints(const json& pod, bool include_terminating) {
  auto phase = str(pod, "status", "phase");
  if (phase == "Succeeded" || phase == "Failed")
    return false;
  if (str(pod, "status", "podIP").empty()) {
    const auto& ips = member(member(pod, "status"), "podIPs");
    if (!ips.is_array() || ips.empty())
      return false;
  }
  if (!include_terminating && pod_terminating(pod))
    return false;
  return true;
}

bool should_set_hostname(const json& pod, const json& svc) {
  auto hostname = str(pod, "spec", "hostname");
  return !hostname.empty()
         && str(pod, "spec", "subdomain") == str(svc, "metadata", "name")
         && str(pod, "metadata", "namespace")
                == str(svc, "metadata", "namespace");
}

std::optional<std::int64_t> find_port(const json& pod, const json& svc_port) {
  if (!svc_port.is_object())
    return std::nullopt;
  auto protocol = svc_port.value("protocol", "TCP");
  json target
      = svc_port.contains("targetPort") ? svc_port["targetPort"] : json();
  if (target.is_null() || target == json(0) || target == json(""))
    target = svc_port.value("port", json());
  if (target.is_number_integer())
    return target.get<std::int64_t>();
  if (!target.is_string())
    return std::nullopt;
  auto name = target.get<std::string>();
  // An all-digit string is IntOrString's number form in YAML written as
  // text; upstream's intstr would have parsed it as a name, and so does
  // this (no container port is named by digits).
  const auto& spec = member(pod, "spec");
  auto search = [&](const json& containers,
                    bool sidecars_only) -> std::optional<std::int64_t> {
    if (!containers.is_array())
      return std::nullopt;
    for (const auto& c : containers) {
      if (sidecars_only && member(c, "restartPolicy") != json("Always"))
        continue;
      const auto& ports = member(c, "ports");
      if (!ports.is_array())
        continue;
      for (const auto& p : ports)
        if (p.is_object() && p.value("name", "") == name
            && p.value("protocol", "TCP") == protocol
            && p.contains("containerPort")
            && p["containerPort"].is_number_integer())
          return p["containerPort"].get<std::int64_t>();
    }
    return std::nullopt;
  };
  if (auto p = search(member(spec, "containers"), false))
    return p;
  return search(member(spec, "initContainers"), true);
}

json target_ref(const json& pod) {
  return json{{"kind", "Pod"},
              {"namespace", str(pod, "metadata", "namespace")},
              {"name", str(pod, "metadata", "name")},
              {"uid", str(pod, "metadata", "uid")}};
}

json derived_labels(const json& svc, const std::set<std::string>& skip) {
  json out = json::object();
  const auto& labels = member(member(svc, "metadata"), "labels");
  if (labels.is_object())
    for (const auto& [k, v] : labels.items())
      if (!skip.count(k) && k != headless_label)
        out[k] = v;
  if (headless(svc))
    out[headless_label] = "";
  return out;
}

bool same(const json& a, const json& b) {
  return nlohmann::json::parse(a.dump()) == nlohmann::json::parse(b.dump());
}

std::string format_rfc3339_nano(std::int64_t unix_ns) {
  auto secs = unix_ns / 1'000'000'000;
  auto frac = unix_ns % 1'000'000'000;
  if (frac < 0) {
    frac += 1'000'000'000;
    --secs;
  }
  auto text = format_time(secs); // "...:SSZ"
  if (frac == 0)
    return text;
  char digits[16];
  std::snprintf(digits, sizeof digits, ".%09lld", static_cast<long long>(frac));
  std::string f = digits;
  while (!f.empty() && f.back() == '0')
    f.pop_back();
  text.insert(text.size() - 1, f);
  return text;
}

namespace {

std::int64_t time_of(const std::string& text) {
  if (text.empty())
    return 0;
  auto t = parse_time(text);
  return t ? *t : 0;
}

std::int64_t pod_trigger_time(const json& pod) {
  const auto& conditions = member(member(pod, "status"), "conditions");
  if (!conditions.is_array())
    return 0;
  for (const auto& c : conditions)
    if (c.is_object() && c.value("type", "") == "Ready")
      return time_of(c.value("lastTransitionTime", ""));
  return 0;
}

} // namespace

std::int64_t trigger_tracker::compute(const std::string& key, const json& svc,
                                      const std::vector<const json*>& pods) {
  auto& st = services_[key];
  std::int64_t earliest = 0;
  auto consider = [&](std::int64_t t) {
    if (earliest == 0 || t < earliest)
      earliest = t;
  };
  std::map<std::string, std::int64_t> seen;
  for (const auto* pod : pods) {
    auto t = pod_trigger_time(*pod);
    if (t == 0)
      continue;
    auto name = str(*pod, "metadata", "name");
    seen[name] = t;
    auto it = st.pods.find(name);
    if (it == st.pods.end() || t > it->second)
      consider(t);
  }
  auto created = time_of(str(svc, "metadata", "creationTimestamp"));
  if (created > st.service)
    consider(created);
  st.pods = std::move(seen);
  st.service = created;
  return earliest;
}

request make_request(verb v, resource_ref ref, const std::string& ns,
                     const std::string& name, std::string body) {
  request r;
  r.verb = v;
  r.ref = std::move(ref);
  r.ref.namespace_name = ns;
  r.ref.name = name;
  r.body = std::move(body);
  return r;
}

} // namespace aiperf::k8s::sim::net::detail
