#include "k8s/sim/store/pod_security.hpp"

#include <algorithm>
#include <functional>
#include <set>

namespace aiperf::k8s::sim::pod_security {

namespace {

constexpr std::string_view label_prefix = "pod-security.kubernetes.io/";

std::string pluralize(const char* one, const char* many, std::size_t n) {
  return n == 1 ? one : many;
}

/// Go's %q of each, joined by ", " (upstream's joinQuote).
std::string join_quote(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty())
      out += ", ";
    out += '"';
    for (char c : s) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    out += '"';
  }
  return out;
}

/// `container "a"` or `containers "a", "b"`, as upstream names them.
std::string containers_named(const std::vector<std::string>& names) {
  return pluralize("container", "containers", names.size()) + " "
         + join_quote(names);
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty())
      out += sep;
    out += s;
  }
  return out;
}

const json* member(const json& obj, const char* key) {
  if (!obj.is_object())
    return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

std::optional<bool> flag(const json* obj, const char* key) {
  const json* v = obj != nullptr ? member(*obj, key) : nullptr;
  if (v == nullptr || !v->is_boolean())
    return std::nullopt;
  return v->get<bool>();
}

std::string text(const json* obj, const char* key) {
  const json* v = obj != nullptr ? member(*obj, key) : nullptr;
  return v != nullptr && v->is_string() ? v->get<std::string>() : "";
}

/// Every container, init containers first, then containers, then
/// ephemeral containers (upstream's visitContainers): name and
/// securityContext (nullptr when absent).
void visit_containers(
    const json& spec,
    const std::function<void(const std::string&, const json&, const json*)>&
        visit) {
  for (const char* list : {"initContainers", "containers", "ephemeralContainers"}) {
    const json* items = member(spec, list);
    if (items == nullptr || !items->is_array())
      continue;
    for (const auto& c : *items) {
      if (!c.is_object())
        continue;
      visit(text(&c, "name"), c, member(c, "securityContext"));
    }
  }
}

std::vector<std::string> strings_at(const json* obj, const char* key) {
  std::vector<std::string> out;
  const json* v = obj != nullptr ? member(*obj, key) : nullptr;
  if (v != nullptr && v->is_array())
    for (const auto& s : *v)
      if (s.is_string())
        out.push_back(s.get<std::string>());
  return out;
}

struct check_result {
  std::string reason;
  std::string detail;
};
using check = std::optional<check_result> (*)(const json& spec);

// --- baseline -------------------------------------------------------------

std::optional<check_result> host_namespaces(const json& spec) {
  std::vector<std::string> used;
  for (const char* f : {"hostIPC", "hostNetwork", "hostPID"}) // sorted
    if (flag(&spec, f).value_or(false))
      used.emplace_back(f);
  if (used.empty())
    return std::nullopt;
  return check_result{"host namespaces", join(used, ", ")};
}

std::optional<check_result> host_path_volumes(const json& spec) {
  std::vector<std::string> names;
  if (const json* vols = member(spec, "volumes"); vols && vols->is_array())
    for (const auto& v : *vols)
      if (v.is_object() && member(v, "hostPath") != nullptr)
        names.push_back(text(&v, "name"));
  if (names.empty())
    return std::nullopt;
  return check_result{"hostPath volumes",
                      pluralize("volume", "volumes", names.size()) + " "
                          + join_quote(names)};
}

std::optional<check_result> host_ports(const json& spec) {
  std::vector<std::string> bad;
  std::set<std::string> ports;
  visit_containers(spec, [&](const std::string& name, const json& c,
                             const json*) {
    bool uses = false;
    if (const json* ps = member(c, "ports"); ps && ps->is_array())
      for (const auto& p : *ps)
        if (const json* hp = member(p, "hostPort");
            hp && hp->is_number_integer() && hp->get<long long>() != 0) {
          uses = true;
          ports.insert(std::to_string(hp->get<long long>()));
        }
    if (uses)
      bad.push_back(name);
  });
  if (bad.empty())
    return std::nullopt;
  return check_result{
      "hostPort", containers_named(bad) + " "
                      + pluralize("uses", "use", bad.size()) + " "
                      + pluralize("hostPort", "hostPorts", ports.size()) + " "
                      + join({ports.begin(), ports.end()}, ", ")};
}

std::optional<check_result> privileged(const json& spec) {
  std::vector<std::string> bad;
  visit_containers(spec, [&](const std::string& name, const json&,
                             const json* sc) {
    if (flag(sc, "privileged").value_or(false))
      bad.push_back(name);
  });
  if (bad.empty())
    return std::nullopt;
  return check_result{"privileged",
                      containers_named(bad)
                          + " must not set securityContext.privileged=true"};
}

std::optional<check_result> capabilities_baseline(const json& spec) {
  static const std::set<std::string> allowed = {
      "AUDIT_WRITE", "CHOWN",  "DAC_OVERRIDE", "FOWNER",   "FSETID",
      "KILL",        "MKNOD",  "NET_BIND_SERVICE",         "SETFCAP",
      "SETGID",      "SETPCAP", "SETUID",      "SYS_CHROOT"};
  std::vector<std::string> bad;
  std::set<std::string> caps;
  visit_containers(spec, [&](const std::string& name, const json&,
                             const json* sc) {
    const json* c = sc != nullptr ? member(*sc, "capabilities") : nullptr;
    bool found = false;
    for (const auto& cap : strings_at(c, "add"))
      if (!allowed.count(cap)) {
        found = true;
        caps.insert(cap);
      }
    if (found)
      bad.push_back(name);
  });
  if (bad.empty())
    return std::nullopt;
  return check_result{"non-default capabilities",
                      containers_named(bad) + " must not include "
                          + join_quote({caps.begin(), caps.end()})
                          + " in securityContext.capabilities.add"};
}

std::string seccomp_type(const json* sc) {
  const json* p = sc != nullptr ? member(*sc, "seccompProfile") : nullptr;
  return p != nullptr ? text(p, "type") : "";
}

std::optional<check_result> seccomp_baseline(const json& spec) {
  std::vector<std::string> setters;
  if (seccomp_type(member(spec, "securityContext")) == "Unconfined")
    setters.emplace_back("pod");
  std::vector<std::string> bad;
  visit_containers(spec, [&](const std::string& name, const json&,
                             const json* sc) {
    if (seccomp_type(sc) == "Unconfined")
      bad.push_back(name);
  });
  if (!bad.empty())
    setters.push_back(containers_named(bad));
  if (setters.empty())
    return std::nullopt;
  return check_result{"seccompProfile",
                      join(setters, " and ")
                          + " must not set securityContext.seccompProfile.type "
                            "to \"Unconfined\""};
}

// --- restricted -----------------------------------------------------------

std::optional<check_result> allow_privilege_escalation(const json& spec) {
  std::vector<std::string> bad;
  visit_containers(spec, [&](const std::string& name, const json&,
                             const json* sc) {
    auto v = flag(sc, "allowPrivilegeEscalation");
    if (!v || *v)
      bad.push_back(name);
  });
  if (bad.empty())
    return std::nullopt;
  return check_result{
      "allowPrivilegeEscalation != false",
      containers_named(bad)
          + " must set securityContext.allowPrivilegeEscalation=false"};
}

std::optional<check_result> capabilities_restricted(const json& spec) {
  std::vector<std::string> missing_drop;
  std::vector<std::string> adding;
  std::set<std::string> forbidden;
  visit_containers(spec, [&](const std::string& name, const json&,
                             const json* sc) {
    const json* c = sc != nullptr ? member(*sc, "capabilities") : nullptr;
    if (c == nullptr) {
      missing_drop.push_back(name);
      return;
    }
    auto drop = strings_at(c, "drop");
    if (std::find(drop.begin(), drop.end(), "ALL") == drop.end())
      missing_drop.push_back(name);
    bool bad = false;
    for (const auto& cap : strings_at(c, "add"))
      if (cap != "NET_BIND_SERVICE") {
        bad = true;
        forbidden.insert(cap);
      }
    if (bad)
      adding.push_back(name);
  });
  std::vector<std::string> details;
  if (!missing_drop.empty())
    details.push_back(containers_named(missing_drop)
                      + " must set securityContext.capabilities.drop=[\"ALL\"]");
  if (!adding.empty())
    details.push_back(containers_named(adding) + " must not include "
                      + join_quote({forbidden.begin(), forbidden.end()})
                      + " in securityContext.capabilities.add");
  if (details.empty())
    return std::nullopt;
  return check_result{"unrestricted capabilities", join(details, "; ")};
}

std::optional<check_result> restricted_volumes(const json& spec) {
  static constexpr const char* allowed[]
      = {"configMap", "csi",       "downwardAPI",           "emptyDir",
         "ephemeral", "persistentVolumeClaim", "projected", "secret"};
  std::set<std::string> names;
  if (const json* vols = member(spec, "volumes"); vols && vols->is_array())
    for (const auto& v : *vols) {
      if (!v.is_object())
        continue;
      bool ok = std::any_of(std::begin(allowed), std::end(allowed),
                            [&](const char* k) { return member(v, k) != nullptr; });
      if (!ok)
        names.insert(text(&v, "name"));
    }
  if (names.empty())
    return std::nullopt;
  // Go's %q of a []string: ["a" "b"].
  std::string list = "[";
  for (const auto& n : names) {
    if (list.size() > 1)
      list += ' ';
    list += join_quote({n});
  }
  list += ']';
  return check_result{"restricted volume types",
                      "volumes " + list + " have restricted types"};
}

std::optional<check_result> run_as_non_root(const json& spec) {
  std::vector<std::string> setters;
  bool pod_true = false;
  if (auto v = flag(member(spec, "securityContext"), "runAsNonRoot")) {
    if (*v)
      pod_true = true;
    else
      setters.emplace_back("pod");
  }
  std::vector<std::string> explicit_bad;
  std::vector<std::string> implicit_bad;
  visit_containers(spec, [&](const std::string& name, const json&,
                             const json* sc) {
    if (auto v = flag(sc, "runAsNonRoot")) {
      if (!*v)
        explicit_bad.push_back(name);
    } else if (!pod_true) {
      implicit_bad.push_back(name);
    }
  });
  if (!explicit_bad.empty())
    setters.push_back(containers_named(explicit_bad));
  if (!setters.empty())
    return check_result{"runAsNonRoot != true",
                        join(setters, " and ")
                            + " must not set securityContext.runAsNonRoot=false"};
  if (!implicit_bad.empty())
    return check_result{
        "runAsNonRoot != true",
        "pod or " + containers_named(implicit_bad)
            + " must set securityContext.runAsNonRoot=true"};
  return std::nullopt;
}

bool runs_as_root(const json* sc) {
  const json* v = sc != nullptr ? member(*sc, "runAsUser") : nullptr;
  return v != nullptr && v->is_number_integer() && v->get<long long>() == 0;
}

std::optional<check_result> run_as_user(const json& spec) {
  std::vector<std::string> setters;
  if (runs_as_root(member(spec, "securityContext")))
    setters.emplace_back("pod");
  std::vector<std::string> bad;
  visit_containers(spec, [&](const std::string& name, const json&,
                             const json* sc) {
    if (runs_as_root(sc))
      bad.push_back(name);
  });
  if (!bad.empty())
    setters.push_back(containers_named(bad));
  if (setters.empty())
    return std::nullopt;
  return check_result{"runAsUser=0",
                      join(setters, " and ") + " must not set runAsUser=0"};
}

std::optional<check_result> seccomp_restricted(const json& spec) {
  auto valid = [](const std::string& t) {
    return t == "RuntimeDefault" || t == "Localhost";
  };
  std::vector<std::string> setters;
  std::set<std::string> bad_values;
  bool pod_set = false;
  const json* pod_sc = member(spec, "securityContext");
  if (pod_sc != nullptr && member(*pod_sc, "seccompProfile") != nullptr) {
    auto t = seccomp_type(pod_sc);
    if (valid(t)) {
      pod_set = true;
    } else {
      setters.emplace_back("pod");
      bad_values.insert(t);
    }
  }
  std::vector<std::string> explicit_bad;
  std::vector<std::string> implicit_bad;
  visit_containers(spec, [&](const std::string& name, const json&,
                             const json* sc) {
    if (sc != nullptr && member(*sc, "seccompProfile") != nullptr) {
      auto t = seccomp_type(sc);
      if (!valid(t)) {
        explicit_bad.push_back(name);
        bad_values.insert(t);
      }
    } else if (!pod_set) {
      implicit_bad.push_back(name);
    }
  });
  if (!explicit_bad.empty())
    setters.push_back(containers_named(explicit_bad));
  if (!setters.empty())
    return check_result{"seccompProfile",
                        join(setters, " and ")
                            + " must not set securityContext.seccompProfile.type to "
                            + join_quote({bad_values.begin(), bad_values.end()})};
  if (!implicit_bad.empty())
    return check_result{
        "seccompProfile",
        "pod or " + containers_named(implicit_bad)
            + " must set securityContext.seccompProfile.type to "
              "\"RuntimeDefault\" or \"Localhost\""};
  return std::nullopt;
}

constexpr check baseline_checks[]
    = {host_namespaces, host_path_volumes, host_ports, privileged};
// Superseded by restricted checks, so evaluated at the baseline level only.
constexpr check baseline_only_checks[] = {capabilities_baseline, seccomp_baseline};
constexpr check restricted_checks[]
    = {allow_privilege_escalation, capabilities_restricted, restricted_volumes,
       run_as_non_root, run_as_user, seccomp_restricted};

} // namespace

std::optional<std::string> policy_of(const json& namespace_labels,
                                     std::string_view mode) {
  std::string key = std::string{label_prefix} + std::string{mode};
  std::string level = text(&namespace_labels, key.c_str());
  if (level.empty() || level == "privileged")
    return std::nullopt;
  if (level != "baseline" && level != "restricted")
    level = "restricted";
  std::string version = text(&namespace_labels, (key + "-version").c_str());
  if (version.empty())
    version = "latest";
  return level + ":" + version;
}

std::vector<std::string> violations(std::string_view policy,
                                    const json& pod_spec) {
  std::vector<std::string> out;
  auto run = [&](check c) {
    if (auto r = c(pod_spec))
      out.push_back(r->detail.empty() ? r->reason
                                      : r->reason + " (" + r->detail + ")");
  };
  const bool restricted = policy.rfind("restricted:", 0) == 0;
  for (auto c : baseline_checks)
    run(c);
  if (restricted) {
    for (auto c : restricted_checks)
      run(c);
  } else {
    for (auto c : baseline_only_checks)
      run(c);
  }
  return out;
}

std::string describe(std::string_view policy, const std::vector<std::string>& v) {
  return "PodSecurity \"" + std::string{policy} + "\": " + join(v, ", ");
}

const json* template_spec(std::string_view group, std::string_view resource,
                          const json& object) {
  const json* spec = member(object, "spec");
  if (spec == nullptr)
    return nullptr;
  const json* tmpl = nullptr;
  if ((group == "apps"
       && (resource == "deployments" || resource == "replicasets"
           || resource == "statefulsets" || resource == "daemonsets"))
      || (group == "batch" && resource == "jobs")
      || (group.empty() && resource == "replicationcontrollers"))
    tmpl = member(*spec, "template");
  else if (group == "batch" && resource == "cronjobs") {
    const json* job = member(*spec, "jobTemplate");
    const json* job_spec = job != nullptr ? member(*job, "spec") : nullptr;
    tmpl = job_spec != nullptr ? member(*job_spec, "template") : nullptr;
  }
  return tmpl != nullptr ? member(*tmpl, "spec") : nullptr;
}

} // namespace aiperf::k8s::sim::pod_security
