#include "k8s/sim/builtins/defaults.hpp"

#include "k8s/object/selectors.hpp"
#include "k8s/object/validation.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace aiperf::k8s::sim {

namespace {

// The member `key` of `obj`, made an object if it is absent or null.
json& object_member(json& obj, const char* key) {
  auto& m = obj[key];
  if (!m.is_object())
    m = json::object();
  return m;
}

void set_if_absent(json& obj, const char* key, json value) {
  if (!obj.contains(key) || obj[key].is_null())
    obj[key] = std::move(value);
}

bool empty_string(const json& obj, const char* key) {
  if (!obj.is_object())
    return true;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null()
         || (it->is_string() && it->get_ref<const std::string&>().empty());
}

std::string text(const json& obj, const char* key) {
  if (!obj.is_object())
    return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>()
                                            : std::string{};
}

std::string base64(std::string_view in) {
  static constexpr char table[]
      = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    auto n = (static_cast<unsigned char>(in[i]) << 16)
             | (static_cast<unsigned char>(in[i + 1]) << 8)
             | static_cast<unsigned char>(in[i + 2]);
    out += table[(n >> 18) & 63];
    out += table[(n >> 12) & 63];
    out += table[(n >> 6) & 63];
    out += table[n & 63];
  }
  if (i + 1 == in.size()) {
    auto n = static_cast<unsigned char>(in[i]) << 16;
    out += table[(n >> 18) & 63];
    out += table[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    auto n = (static_cast<unsigned char>(in[i]) << 16)
             | (static_cast<unsigned char>(in[i + 1]) << 8);
    out += table[(n >> 18) & 63];
    out += table[(n >> 12) & 63];
    out += table[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

// The tag of an image reference as docker's parser reads it: "latest" when
// neither a tag nor a digest is given.
std::string image_tag(const std::string& image) {
  auto at = image.find('@');
  auto name = image.substr(0, at);
  auto slash = name.rfind('/');
  auto colon = name.rfind(':');
  if (colon != std::string::npos
      && (slash == std::string::npos || colon > slash))
    return name.substr(colon + 1);
  return at == std::string::npos ? "latest" : "";
}

// SetDefaults_HTTPGetAction: path "/", scheme HTTP.
void default_http_get(json& handler) {
  if (!handler.is_object())
    return;
  auto it = handler.find("httpGet");
  if (it == handler.end() || !it->is_object())
    return;
  if (empty_string(*it, "path"))
    (*it)["path"] = "/";
  if (empty_string(*it, "scheme"))
    (*it)["scheme"] = "HTTP";
}

// SetDefaults_Probe: timeout 1 s, period 10 s, thresholds 1 and 3.
void default_probe(json& probe) {
  if (!probe.is_object())
    return;
  default_http_get(probe);
  for (auto [key, value] :
       {std::pair{"timeoutSeconds", 1}, std::pair{"periodSeconds", 10},
        std::pair{"successThreshold", 1}, std::pair{"failureThreshold", 3}})
    if (!probe.contains(key) || probe[key].is_null()
        || (probe[key].is_number_integer() && probe[key].get<int>() == 0))
      probe[key] = value;
}

// SetDefaults_ObjectFieldSelector: apiVersion v1.
void default_field_ref(json& holder) {
  if (!holder.is_object())
    return;
  auto it = holder.find("fieldRef");
  if (it != holder.end() && it->is_object() && empty_string(*it, "apiVersion"))
    (*it)["apiVersion"] = "v1";
}

// SetDefaults_{ConfigMap,Secret,DownwardAPI,Projected}VolumeSource
// (defaultMode 0644), ServiceAccountTokenProjection (expirationSeconds 3600).
void default_volume(json& v) {
  if (!v.is_object())
    return;
  for (const char* source : {"configMap", "secret", "downwardAPI", "projected"})
    if (auto it = v.find(source); it != v.end() && it->is_object())
      set_if_absent(*it, "defaultMode", 420);
  if (auto it = v.find("downwardAPI"); it != v.end() && it->is_object())
    if (auto items = it->find("items"); items != it->end() && items->is_array())
      for (auto& item : *items)
        default_field_ref(item);
  auto projected = v.find("projected");
  if (projected == v.end() || !projected->is_object())
    return;
  auto sources = projected->find("sources");
  if (sources == projected->end() || !sources->is_array())
    return;
  for (auto& src : *sources) {
    if (!src.is_object())
      continue;
    if (auto t = src.find("serviceAccountToken");
        t != src.end() && t->is_object())
      set_if_absent(*t, "expirationSeconds", 3600);
    if (auto d = src.find("downwardAPI"); d != src.end() && d->is_object())
      if (auto items = d->find("items"); items != d->end() && items->is_array())
        for (auto& item : *items)
          default_field_ref(item);
  }
}

// SetDefaults_Container (+ its ports, probes, lifecycle hooks, env).
void default_container(json& c) {
  if (!c.is_object())
    return;
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"})
    if (auto it = c.find(probe); it != c.end() && it->is_object())
      default_probe(*it);
  if (auto it = c.find("lifecycle"); it != c.end() && it->is_object())
    for (const char* hook : {"postStart", "preStop"})
      if (auto h = it->find(hook); h != it->end() && h->is_object())
        default_http_get(*h);
  if (auto it = c.find("env"); it != c.end() && it->is_array())
    for (auto& e : *it)
      if (e.is_object())
        if (auto from = e.find("valueFrom");
            from != e.end() && from->is_object())
          default_field_ref(*from);
  set_if_absent(c, "resources", json::object());
  // SetDefaults_Pod: limits without requests request what they limit.
  if (auto& res = c["resources"]; res.is_object()) {
    auto limits = res.find("limits");
    if (limits != res.end() && limits->is_object() && !limits->empty()) {
      json requests = res.value("requests", json::object());
      if (!requests.is_object())
        requests = json::object();
      for (auto it = limits->begin(); it != limits->end(); ++it)
        if (!requests.contains(it.key()))
          requests[it.key()] = it.value();
      res["requests"] = std::move(requests);
    }
  }
  if (empty_string(c, "terminationMessagePath"))
    c["terminationMessagePath"] = "/dev/termination-log";
  if (empty_string(c, "terminationMessagePolicy"))
    c["terminationMessagePolicy"] = "File";
  if (empty_string(c, "imagePullPolicy"))
    c["imagePullPolicy"]
        = image_tag(text(c, "image")) == "latest" ? "Always" : "IfNotPresent";
  if (c.contains("ports") && c["ports"].is_array())
    for (auto& p : c["ports"])
      if (p.is_object() && empty_string(p, "protocol"))
        p["protocol"] = "TCP";
}

// SetDefaults_PodSpec, for pods and pod templates alike.
void default_pod_spec(json& spec) {
  if (!spec.is_object())
    return;
  if (empty_string(spec, "restartPolicy"))
    spec["restartPolicy"] = "Always";
  if (empty_string(spec, "dnsPolicy"))
    spec["dnsPolicy"] = "ClusterFirst";
  set_if_absent(spec, "terminationGracePeriodSeconds", 30);
  set_if_absent(spec, "securityContext", json::object());
  if (empty_string(spec, "schedulerName"))
    spec["schedulerName"] = "default-scheduler";
  for (const char* list : {"containers", "initContainers"})
    if (spec.contains(list) && spec[list].is_array())
      for (auto& c : spec[list])
        default_container(c);
  if (spec.contains("volumes") && spec["volumes"].is_array())
    for (auto& v : spec["volumes"])
      default_volume(v);
}

void default_template(json& owner_spec) {
  auto& tmpl = object_member(owner_spec, "template");
  default_pod_spec(object_member(tmpl, "spec"));
}

// qos.GetPodQOS, on cpu and memory only.
std::string qos_class(const json& spec) {
  bool any = false;
  bool guaranteed = true;
  for (const char* list : {"containers", "initContainers"}) {
    if (!spec.contains(list) || !spec[list].is_array())
      continue;
    for (const auto& c : spec[list]) {
      auto res = c.is_object() ? c.value("resources", json::object())
                               : json::object();
      auto requests
          = res.is_object() ? res.value("requests", json::object()) : json{};
      auto limits
          = res.is_object() ? res.value("limits", json::object()) : json{};
      for (const char* r : {"cpu", "memory"}) {
        bool has_req = requests.is_object() && requests.contains(r);
        bool has_lim = limits.is_object() && limits.contains(r);
        any = any || has_req || has_lim;
        if (!has_lim || (has_req && requests[r] != limits[r]))
          guaranteed = false;
      }
    }
  }
  if (!any)
    return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

void default_pod(json& pod, bool creating) {
  auto& spec = object_member(pod, "spec");
  default_pod_spec(spec);
  set_if_absent(spec, "enableServiceLinks", true);
  if (creating) {
    json status = json::object();
    status["phase"] = "Pending";
    status["qosClass"] = qos_class(spec);
    pod["status"] = std::move(status);
  }
}

void default_job(json& job, bool creating) {
  // References into an ordered_json object die when a member is inserted
  // into it: each step looks its members up afresh.
  object_member(job, "metadata");
  object_member(job, "spec");
  {
    auto& spec = job["spec"];
    bool no_completions
        = !spec.contains("completions") || spec["completions"].is_null();
    bool no_parallelism
        = !spec.contains("parallelism") || spec["parallelism"].is_null();
    if (no_completions && no_parallelism)
      spec["completions"] = 1;
    if (no_parallelism)
      spec["parallelism"] = 1;
    if (!spec.contains("backoffLimit") || spec["backoffLimit"].is_null())
      spec["backoffLimit"] = spec.contains("backoffLimitPerIndex")
                                     && !spec["backoffLimitPerIndex"].is_null()
                                 ? 2147483647
                                 : 6;
    if (empty_string(spec, "completionMode"))
      spec["completionMode"] = "NonIndexed";
    set_if_absent(spec, "suspend", false);
    if (empty_string(spec, "podReplacementPolicy"))
      spec["podReplacementPolicy"]
          = spec.contains("podFailurePolicy")
                    && !spec["podFailurePolicy"].is_null()
                ? "Failed"
                : "TerminatingOrFailed";
    object_member(spec, "template");
    default_template(spec);
  }
  const json template_labels
      = job["spec"]["template"].is_object()
                && job["spec"]["template"].contains("metadata")
                && job["spec"]["template"]["metadata"].is_object()
            ? job["spec"]["template"]["metadata"].value("labels", json{})
            : json{};
  {
    auto& meta = job["metadata"];
    auto own = meta.value("labels", json{});
    if (template_labels.is_object() && (!own.is_object() || own.empty()))
      meta["labels"] = template_labels;
  }
  // The job strategy's generateSelector (pkg/registry/batch/job/strategy.go).
  auto uid = text(job["metadata"], "uid");
  auto name = text(job["metadata"], "name");
  bool manual = job["spec"].value("manualSelector", false);
  if (!manual && !uid.empty()) {
    auto& tmpl = job["spec"]["template"];
    object_member(tmpl, "metadata");
    auto& labels = object_member(tmpl["metadata"], "labels");
    for (const auto& [key, value] :
         std::vector<std::pair<const char*, std::string>>{
             {"batch.kubernetes.io/controller-uid", uid},
             {"batch.kubernetes.io/job-name", name},
             {"controller-uid", uid},
             {"job-name", name}})
      if (!labels.contains(key))
        labels[key] = value;
    auto& selector = object_member(job["spec"], "selector");
    auto& match = object_member(selector, "matchLabels");
    if (!match.contains("batch.kubernetes.io/controller-uid"))
      match["batch.kubernetes.io/controller-uid"] = uid;
  }
  if (creating)
    job["status"] = json::object();
}

void default_deployment(json& d, bool creating) {
  auto& spec = object_member(d, "spec");
  set_if_absent(spec, "replicas", 1);
  auto& strategy = object_member(spec, "strategy");
  if (empty_string(strategy, "type"))
    strategy["type"] = "RollingUpdate";
  if (text(strategy, "type") == "RollingUpdate") {
    auto& ru = object_member(strategy, "rollingUpdate");
    set_if_absent(ru, "maxUnavailable", "25%");
    set_if_absent(ru, "maxSurge", "25%");
  }
  set_if_absent(spec, "revisionHistoryLimit", 10);
  set_if_absent(spec, "progressDeadlineSeconds", 600);
  default_template(spec);
  if (creating)
    d["status"] = json::object();
}

void default_replica_set(json& rs, bool creating) {
  auto& spec = object_member(rs, "spec");
  set_if_absent(spec, "replicas", 1);
  default_template(spec);
  if (creating)
    rs["status"] = json{{"replicas", 0}};
}

void default_service(json& svc) {
  auto& spec = object_member(svc, "spec");
  if (empty_string(spec, "sessionAffinity"))
    spec["sessionAffinity"] = "None";
  if (text(spec, "sessionAffinity") == "None")
    spec.erase("sessionAffinityConfig");
  if (empty_string(spec, "type"))
    spec["type"] = "ClusterIP";
  if (spec.contains("ports") && spec["ports"].is_array())
    for (auto& p : spec["ports"]) {
      if (!p.is_object())
        continue;
      if (empty_string(p, "protocol"))
        p["protocol"] = "TCP";
      auto target = p.value("targetPort", json{});
      if (target.is_null() || target == json(0) || target == json(""))
        p["targetPort"] = p.value("port", json(0));
    }
  auto type = text(spec, "type");
  if ((type == "NodePort" || type == "LoadBalancer")
      && empty_string(spec, "externalTrafficPolicy"))
    spec["externalTrafficPolicy"] = "Cluster";
  if (type == "NodePort" || type == "LoadBalancer" || type == "ClusterIP") {
    if (empty_string(spec, "internalTrafficPolicy"))
      spec["internalTrafficPolicy"] = "Cluster";
    // What the service IP allocator records next to the address.
    if (empty_string(spec, "ipFamilyPolicy"))
      spec["ipFamilyPolicy"] = "SingleStack";
    set_if_absent(spec, "ipFamilies", json::array({"IPv4"}));
  }
  if (type == "LoadBalancer")
    set_if_absent(spec, "allocateLoadBalancerNodePorts", true);
  set_if_absent(svc, "status", json{{"loadBalancer", json::object()}});
}

void default_namespace(json& ns, bool creating) {
  auto& meta = object_member(ns, "metadata");
  auto name = text(meta, "name");
  if (!name.empty())
    object_member(meta, "labels")["kubernetes.io/metadata.name"] = name;
  if (!creating)
    return;
  auto& spec = object_member(ns, "spec");
  auto& finalizers = spec["finalizers"];
  if (!finalizers.is_array())
    finalizers = json::array();
  if (std::find(finalizers.begin(), finalizers.end(), json("kubernetes"))
      == finalizers.end())
    finalizers.push_back("kubernetes");
  ns["status"] = json{{"phase", "Active"}};
}

// SetDefaults_PersistentVolumeClaim(Spec): volumeMode Filesystem; status
// phase Pending (the strategy empties status on create, decoding defaults
// the phase again).
void default_claim(json& pvc, bool creating) {
  auto& spec = object_member(pvc, "spec");
  if (empty_string(spec, "volumeMode"))
    spec["volumeMode"] = "Filesystem";
  if (creating)
    pvc["status"] = json{{"phase", "Pending"}};
}

// SetDefaults_PersistentVolume: reclaim policy Retain, volumeMode
// Filesystem, phase Pending.
void default_volume_object(json& pv, bool creating) {
  auto& spec = object_member(pv, "spec");
  if (empty_string(spec, "persistentVolumeReclaimPolicy"))
    spec["persistentVolumeReclaimPolicy"] = "Retain";
  if (empty_string(spec, "volumeMode"))
    spec["volumeMode"] = "Filesystem";
  if (creating)
    pv["status"] = json{{"phase", "Pending"}};
}

void default_secret(json& secret) {
  if (empty_string(secret, "type"))
    secret["type"] = "Opaque";
  if (secret.contains("stringData") && secret["stringData"].is_object()) {
    auto& data = object_member(secret, "data");
    for (const auto& [key, value] : secret["stringData"].items())
      if (value.is_string())
        data[key] = base64(value.get_ref<const std::string&>());
    secret.erase("stringData");
  }
}

void default_binding(json& binding) {
  if (binding.contains("roleRef") && binding["roleRef"].is_object()
      && empty_string(binding["roleRef"], "apiGroup"))
    binding["roleRef"]["apiGroup"] = "rbac.authorization.k8s.io";
  if (binding.contains("subjects") && binding["subjects"].is_array())
    for (auto& s : binding["subjects"]) {
      if (!s.is_object() || !empty_string(s, "apiGroup"))
        continue;
      auto kind = text(s, "kind");
      if (kind == "User" || kind == "Group")
        s["apiGroup"] = "rbac.authorization.k8s.io";
      else if (kind == "ServiceAccount")
        s["apiGroup"] = "";
    }
}

void default_crd(json& crd, bool creating) {
  auto& spec = object_member(crd, "spec");
  auto& names = object_member(spec, "names");
  auto kind = text(names, "kind");
  if (empty_string(names, "singular") && !kind.empty()) {
    std::string singular = kind;
    std::transform(singular.begin(), singular.end(), singular.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    names["singular"] = singular;
  }
  if (empty_string(names, "listKind") && !kind.empty())
    names["listKind"] = kind + "List";
  auto& conversion = object_member(spec, "conversion");
  if (empty_string(conversion, "strategy"))
    conversion["strategy"] = "None";
  if (creating)
    crd["status"] = json::object();
}

// Go's `%#v` of a map[string]string: keys sorted.
std::string go_string_map(const json& m) {
  std::vector<std::pair<std::string, std::string>> items;
  if (m.is_object())
    for (const auto& [k, v] : m.items())
      items.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  std::sort(items.begin(), items.end());
  std::string out = "map[string]string{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += go_quote(items[i].first) + ":" + go_quote(items[i].second);
  }
  return out + "}";
}

void append(std::vector<status_cause>& out, std::vector<status_cause> more) {
  out.insert(out.end(), std::make_move_iterator(more.begin()),
             std::make_move_iterator(more.end()));
}

void nonnegative(const json& spec, const std::string& path, const char* key,
                 std::vector<status_cause>& out) {
  if (!spec.is_object())
    return;
  auto it = spec.find(key);
  if (it != spec.end() && it->is_number_integer()
      && it->get<std::int64_t>() < 0)
    out.push_back(field_invalid_rendered(
        path + "." + key, std::to_string(it->get<std::int64_t>()),
        "must be greater than or equal to 0"));
}

// ValidatePodTemplateSpec: the template's labels and annotations, its spec.
void validate_template(const json& tmpl, const std::string& path,
                       std::vector<status_cause>& out) {
  auto meta = tmpl.is_object() ? tmpl.value("metadata", json::object())
                               : json::object();
  if (meta.is_object()) {
    append(out, validate_labels(meta.value("labels", json{}),
                                path + ".metadata.labels"));
    append(out, validate_annotations(meta.value("annotations", json{}),
                                     path + ".metadata.annotations"));
  }
  append(out,
         validate_pod_spec(tmpl.is_object() ? tmpl.value("spec", json::object())
                                            : json::object(),
                           path + ".spec"));
}

// The selector of a Job/Deployment/ReplicaSet against its template labels.
void validate_selector(const json& spec, bool deployment,
                       std::vector<status_cause>& out) {
  auto selector = spec.is_object() ? spec.value("selector", json{}) : json{};
  if (selector.is_null()) {
    out.push_back(field_required("spec.selector"));
    return;
  }
  auto labels = json::object();
  if (spec.contains("template") && spec["template"].is_object()
      && spec["template"].contains("metadata")
      && spec["template"]["metadata"].is_object())
    labels = spec["template"]["metadata"].value("labels", json::object());
  auto invalid = validate_label_selector(selector, "spec.selector");
  if (!invalid.empty()) {
    append(out, std::move(invalid));
    return;
  }
  auto parsed = label_selector_from_json(selector);
  bool empty
      = !selector.is_object()
        || (selector.value("matchLabels", json::object()).empty()
            && selector.value("matchExpressions", json::array()).empty());
  if (deployment && empty) {
    out.push_back(
        field_invalid_rendered("spec.selector", selector.dump(),
                               "empty selector is invalid for deployment"));
    return;
  }
  if (!parsed) {
    out.push_back(field_invalid_rendered("spec.selector", selector.dump(),
                                         "invalid label selector"));
    return;
  }
  if (!parsed->empty() && !parsed->matches(labels))
    out.push_back(field_invalid_rendered(
        "spec.template.metadata.labels", go_string_map(labels),
        "`selector` does not match template `labels`"));
}

void validate_policy_rules(const json& object, bool namespaced,
                           std::vector<status_cause>& out) {
  auto rules = object.value("rules", json::array());
  if (!rules.is_array())
    return;
  auto non_empty = [](const json& r, const char* key) {
    return r.contains(key) && r[key].is_array() && !r[key].empty();
  };
  for (size_t i = 0; i < rules.size(); ++i) {
    const auto& r = rules[i];
    auto path = "rules[" + std::to_string(i) + "]";
    if (!r.is_object())
      continue;
    if (!non_empty(r, "verbs"))
      out.push_back(field_required(path + ".verbs",
                                   "verbs must contain at least one value"));
    if (non_empty(r, "nonResourceURLs")) {
      auto urls = r["nonResourceURLs"].dump();
      if (namespaced)
        out.push_back(field_invalid_rendered(
            path + ".nonResourceURLs", urls,
            "namespaced rules cannot apply to non-resource URLs"));
      if (non_empty(r, "apiGroups") || non_empty(r, "resources")
          || non_empty(r, "resourceNames"))
        out.push_back(
            field_invalid_rendered(path + ".nonResourceURLs", urls,
                                   "rules cannot apply to both regular "
                                   "resources and non-resource URLs"));
      continue;
    }
    if (!non_empty(r, "apiGroups"))
      out.push_back(
          field_required(path + ".apiGroups",
                         "resource rules must supply at least one api group"));
    if (!non_empty(r, "resources"))
      out.push_back(
          field_required(path + ".resources",
                         "resource rules must supply at least one resource"));
  }
}

void validate_binding(const json& object, bool namespaced, const json* old,
                      std::vector<status_cause>& out) {
  const std::string rbac = "rbac.authorization.k8s.io";
  auto ref = object.value("roleRef", json::object());
  if (!ref.is_object())
    ref = json::object();
  auto group = text(ref, "apiGroup");
  if (!group.empty() && group != rbac)
    out.push_back(field_not_supported("roleRef.apiGroup", group, {rbac}));
  auto kind = text(ref, "kind");
  if (namespaced) {
    if (kind != "Role" && kind != "ClusterRole")
      out.push_back(
          field_not_supported("roleRef.kind", kind, {"Role", "ClusterRole"}));
  } else if (kind != "ClusterRole") {
    out.push_back(field_not_supported("roleRef.kind", kind, {"ClusterRole"}));
  }
  auto name = text(ref, "name");
  if (name.empty())
    out.push_back(field_required("roleRef.name"));
  else
    for (const auto& msg : validate_name(name_rule::path_segment, name, false))
      out.push_back(field_invalid("roleRef.name", name, msg));
  auto subjects = object.value("subjects", json::array());
  if (subjects.is_array())
    for (size_t i = 0; i < subjects.size(); ++i) {
      const auto& s = subjects[i];
      auto path = "subjects[" + std::to_string(i) + "]";
      auto sname = text(s, "name");
      if (sname.empty())
        out.push_back(field_required(path + ".name"));
      auto skind = text(s, "kind");
      auto sgroup = text(s, "apiGroup");
      if (skind == "ServiceAccount") {
        if (!sgroup.empty())
          out.push_back(field_not_supported(path + ".apiGroup", sgroup, {""}));
        if (!sname.empty())
          for (const auto& msg : is_dns1123_subdomain(sname))
            out.push_back(field_invalid(path + ".name", sname, msg));
        if (!namespaced && text(s, "namespace").empty())
          out.push_back(field_required(path + ".namespace"));
      } else if (skind == "User" || skind == "Group") {
        if (sgroup != rbac)
          out.push_back(
              field_not_supported(path + ".apiGroup", sgroup, {rbac}));
      } else {
        out.push_back(field_not_supported(path + ".kind", skind,
                                          {"ServiceAccount", "User", "Group"}));
      }
    }
  if (old != nullptr && old->is_object()
      && old->value("roleRef", json{}) != object.value("roleRef", json{}))
    out.push_back(field_invalid_rendered("roleRef",
                                         object.value("roleRef", json{}).dump(),
                                         "cannot change roleRef"));
}

void validate_service(const json& svc, std::vector<status_cause>& out) {
  auto spec = svc.value("spec", json::object());
  if (!spec.is_object())
    return;
  auto type = text(spec, "type");
  if (type != "ClusterIP" && type != "NodePort" && type != "LoadBalancer"
      && type != "ExternalName")
    out.push_back(field_not_supported(
        "spec.type", type,
        {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}));
  auto ports = spec.value("ports", json::array());
  bool headless = text(spec, "clusterIP") == "None";
  if ((!ports.is_array() || ports.empty()) && !headless
      && type != "ExternalName")
    out.push_back(field_required("spec.ports"));
  if (ports.is_array()) {
    std::set<std::string> names;
    for (size_t i = 0; i < ports.size(); ++i) {
      const auto& p = ports[i];
      auto path = "spec.ports[" + std::to_string(i) + "]";
      auto name = text(p, "name");
      if (ports.size() > 1 && name.empty())
        out.push_back(field_required(path + ".name"));
      else if (!name.empty()) {
        for (const auto& msg : is_dns1123_label(name))
          out.push_back(field_invalid(path + ".name", name, msg));
        if (!names.insert(name).second)
          out.push_back(status_cause{"FieldValueDuplicate",
                                     "Duplicate value: " + go_quote(name),
                                     path + ".name"});
      }
      auto port = p.is_object() ? p.value("port", json(0)) : json(0);
      auto n = port.is_number_integer() ? port.get<std::int64_t>() : 0;
      if (n < 1 || n > 65535)
        out.push_back(
            field_invalid_rendered(path + ".port", std::to_string(n),
                                   "must be between 1 and 65535, inclusive"));
    }
  }
}

// The paths where two JSON values differ, as "-"/"+" lines: the part of
// the Forbidden message upstream fills with a go-cmp diff of the specs.
void spec_diff(const json& a, const json& b, const std::string& path,
               std::string& out) {
  if (a == b)
    return;
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (auto it = a.begin(); it != a.end(); ++it)
      keys.insert(it.key());
    for (auto it = b.begin(); it != b.end(); ++it)
      keys.insert(it.key());
    for (const auto& k : keys)
      spec_diff(a.contains(k) ? a[k] : json(), b.contains(k) ? b[k] : json(),
                path + "." + k, out);
    return;
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    for (std::size_t i = 0; i < a.size(); ++i)
      spec_diff(a[i], b[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  if (!a.is_null())
    out += "  - " + path + ": " + a.dump() + "\n";
  if (!b.is_null())
    out += "  + " + path + ": " + b.dump() + "\n";
}

// ValidatePodUpdate (kubernetes/kubernetes pkg/apis/core/validation):
// a pod's spec is immutable but for its containers' images, a shorter or
// first activeDeadlineSeconds, added tolerations (or tolerationSeconds
// changed), and a negative terminationGracePeriodSeconds set to 1.
void validate_pod_update(const json& pod, const json& old,
                         std::vector<status_cause>& out) {
  json spec = pod.value("spec", json::object());
  json old_spec = old.value("spec", json::object());
  if (!spec.is_object() || !old_spec.is_object())
    return;
  for (const char* list : {"containers", "initContainers"}) {
    auto a = spec.value(list, json::array());
    auto b = old_spec.value(list, json::array());
    if ((a.is_array() ? a.size() : 0) != (b.is_array() ? b.size() : 0)) {
      out.push_back(field_forbidden(std::string{"spec."} + list,
                                    "pod updates may not add or remove "
                                    "containers"));
      return;
    }
  }
  json munged = spec;
  for (const char* list : {"containers", "initContainers"}) {
    if (!munged.contains(list) || !munged[list].is_array())
      continue;
    for (std::size_t i = 0; i < munged[list].size(); ++i) {
      const auto& was = old_spec[list][i];
      if (!munged[list][i].is_object())
        continue;
      if (was.is_object() && was.contains("image"))
        munged[list][i]["image"] = was["image"];
      else
        munged[list][i].erase("image");
    }
  }
  auto deadline = spec.find("activeDeadlineSeconds");
  auto old_deadline = old_spec.find("activeDeadlineSeconds");
  bool has_new = deadline != spec.end() && deadline->is_number_integer();
  bool has_old
      = old_deadline != old_spec.end() && old_deadline->is_number_integer();
  if (has_new) {
    auto n = deadline->get<std::int64_t>();
    if (n < 0 || n > 2147483647) {
      out.push_back(field_invalid_rendered(
          "spec.activeDeadlineSeconds", std::to_string(n),
          "must be between 0 and 2147483647, inclusive"));
      return;
    }
    if (has_old && old_deadline->get<std::int64_t>() < n) {
      out.push_back(field_invalid_rendered(
          "spec.activeDeadlineSeconds", std::to_string(n),
          "must be less than or equal to previous value"));
      return;
    }
  } else if (has_old) {
    out.push_back(field_invalid_rendered("spec.activeDeadlineSeconds", "null",
                                         "must not update from a positive "
                                         "integer to nil value"));
  }
  for (const char* key :
       {"activeDeadlineSeconds", "schedulingGates", "tolerations"}) {
    if (old_spec.contains(key))
      munged[key] = old_spec[key];
    else
      munged.erase(key);
  }
  auto grace = old_spec.find("terminationGracePeriodSeconds");
  if (grace != old_spec.end() && grace->is_number_integer()
      && grace->get<std::int64_t>() < 0
      && munged.value("terminationGracePeriodSeconds", json()) == json(1))
    munged["terminationGracePeriodSeconds"] = *grace;
  if (munged != old_spec) {
    std::string diff;
    spec_diff(old_spec, munged, "spec", diff);
    out.push_back(field_forbidden(
        "spec",
        "pod updates may not change fields other than "
        "`spec.containers[*].image`,`spec.initContainers[*].image`,"
        "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
        "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it "
        "to be set to 1 if it was previously negative)\n"
            + diff));
  }
  // validateOnlyAddedTolerations
  auto tolerations = spec.value("tolerations", json::array());
  for (const auto& was : old_spec.value("tolerations", json::array())) {
    bool found = false;
    for (const auto& now :
         tolerations.is_array() ? tolerations : json::array()) {
      json clone = was;
      if (now.is_object() && now.contains("tolerationSeconds"))
        clone["tolerationSeconds"] = now["tolerationSeconds"];
      else if (clone.is_object())
        clone.erase("tolerationSeconds");
      if (clone == now) {
        found = true;
        break;
      }
    }
    if (!found) {
      out.push_back(field_forbidden("spec.tolerations",
                                    "existing toleration can not be modified "
                                    "except its tolerationSeconds"));
      break;
    }
  }
}

// SetDefaults_StorageClass: reclaimPolicy Delete, volumeBindingMode
// Immediate.
void default_storage_class(json& sc) {
  if (empty_string(sc, "reclaimPolicy"))
    sc["reclaimPolicy"] = "Delete";
  if (empty_string(sc, "volumeBindingMode"))
    sc["volumeBindingMode"] = "Immediate";
}

} // namespace

void default_object(const resource_type& type, json& object, bool creating) {
  if (!object.is_object() || type.custom)
    return;
  const auto& g = type.group;
  const auto& k = type.kind;
  if (g.empty() && k == "Pod")
    default_pod(object, creating);
  else if (g == "batch" && k == "Job")
    default_job(object, creating);
  else if (g == "apps" && k == "Deployment")
    default_deployment(object, creating);
  else if (g == "apps" && k == "ReplicaSet")
    default_replica_set(object, creating);
  else if (g.empty() && k == "Service")
    default_service(object);
  else if (g.empty() && k == "Namespace")
    default_namespace(object, creating);
  else if (g.empty() && k == "Secret")
    default_secret(object);
  else if (g.empty() && k == "PersistentVolumeClaim")
    default_claim(object, creating);
  else if (g.empty() && k == "PersistentVolume")
    default_volume_object(object, creating);
  else if (g == "storage.k8s.io" && k == "StorageClass")
    default_storage_class(object);
  else if (g == "rbac.authorization.k8s.io"
           && (k == "RoleBinding" || k == "ClusterRoleBinding"))
    default_binding(object);
  else if (g == "apiextensions.k8s.io" && k == "CustomResourceDefinition")
    default_crd(object, creating);
}

// ServiceAccount's defaulting (serviceAccountName, and the deprecated
// serviceAccount the v1 encoding mirrors it into) and DefaultTolerationSeconds
// (plugin/pkg/admission/defaulttolerationseconds: not-ready and unreachable
// tolerated for 300 s).
void default_pod_admission(json& pod) {
  if (!pod.is_object())
    return;
  auto& spec = object_member(pod, "spec");
  if (empty_string(spec, "serviceAccountName"))
    spec["serviceAccountName"] = empty_string(spec, "serviceAccount")
                                     ? std::string{"default"}
                                     : text(spec, "serviceAccount");
  if (empty_string(spec, "serviceAccount")) {
    json name = spec["serviceAccountName"]; // a copy: the insert may move it
    spec["serviceAccount"] = std::move(name);
  }
  auto& tolerations = spec["tolerations"];
  if (!tolerations.is_array())
    tolerations = json::array();
  for (const char* key :
       {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}) {
    bool present = std::any_of(
        tolerations.begin(), tolerations.end(), [&](const json& t) {
          return t.is_object() && text(t, "key") == key
                 && (empty_string(t, "effect")
                     || text(t, "effect") == "NoExecute");
        });
    if (!present)
      tolerations.push_back(json{{"key", key},
                                 {"operator", "Exists"},
                                 {"effect", "NoExecute"},
                                 {"tolerationSeconds", 300}});
  }
}

std::vector<status_cause> validate_object(const resource_type& type,
                                          const json& object, const json* old) {
  std::vector<status_cause> out;
  auto meta = object.is_object() ? object.value("metadata", json::object())
                                 : json::object();
  if (old == nullptr)
    out = validate_object_meta(meta, type.namespaced, type.name_rule);
  else
    out = validate_object_meta_update(
        meta, old->is_object() ? old->value("metadata", json::object())
                               : json::object());
  if (type.custom || !object.is_object())
    return out;
  const auto& g = type.group;
  const auto& k = type.kind;
  if (g.empty() && k == "ConfigMap") {
    append(out, validate_config_map(object));
    if (old != nullptr && old->is_object() && old->value("immutable", false)) {
      if (!object.value("immutable", false))
        out.push_back(field_forbidden(
            "immutable", "field is immutable when `immutable` is set"));
      for (const char* key : {"data", "binaryData"})
        if (old->value(key, json{}) != object.value(key, json{}))
          out.push_back(field_forbidden(
              key, "field is immutable when `immutable` is set"));
    }
  } else if (g.empty() && k == "Secret") {
    append(out, validate_secret(object));
  } else if (g.empty() && k == "Pod") {
    append(out,
           validate_pod_spec(object.value("spec", json::object()), "spec"));
    if (old != nullptr && old->is_object())
      validate_pod_update(object, *old, out);
  } else if (g == "batch" && k == "Job") {
    auto spec = object.value("spec", json::object());
    for (const char* key : {"parallelism", "completions",
                            "activeDeadlineSeconds", "backoffLimit"})
      nonnegative(spec, "spec", key, out);
    validate_selector(spec, false, out);
    auto tmpl = spec.is_object() ? spec.value("template", json::object())
                                 : json::object();
    validate_template(tmpl, "spec.template", out);
    auto restart = tmpl.is_object() && tmpl.contains("spec")
                       ? text(tmpl["spec"], "restartPolicy")
                       : std::string{};
    if (restart != "OnFailure" && restart != "Never")
      out.push_back(field_not_supported("spec.template.spec.restartPolicy",
                                        restart, {"OnFailure", "Never"}));
  } else if (g == "apps" && (k == "Deployment" || k == "ReplicaSet")) {
    auto spec = object.value("spec", json::object());
    nonnegative(spec, "spec", "replicas", out);
    validate_selector(spec, k == "Deployment", out);
    auto tmpl = spec.is_object() ? spec.value("template", json::object())
                                 : json::object();
    validate_template(tmpl, "spec.template", out);
    auto restart = tmpl.is_object() && tmpl.contains("spec")
                       ? text(tmpl["spec"], "restartPolicy")
                       : std::string{};
    if (restart != "Always")
      out.push_back(field_not_supported("spec.template.spec.restartPolicy",
                                        restart, {"Always"}));
  } else if (g.empty() && k == "Service") {
    validate_service(object, out);
  } else if (g == "rbac.authorization.k8s.io"
             && (k == "Role" || k == "ClusterRole")) {
    validate_policy_rules(object, k == "Role", out);
  } else if (g == "rbac.authorization.k8s.io"
             && (k == "RoleBinding" || k == "ClusterRoleBinding")) {
    validate_binding(object, k == "RoleBinding", old, out);
  }
  return out;
}

} // namespace aiperf::k8s::sim
