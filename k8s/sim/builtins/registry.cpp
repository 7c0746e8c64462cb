#include "k8s/sim/builtins/registry.hpp"

#include "k8s/errors/errors.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace aiperf::k8s::sim {

namespace {

using strings = std::vector<std::string>;

// The verbs kube-apiserver lists for a built-in (sorted, as its installer
// writes them) and for a custom resource (the order of
// apiextensions-apiserver's discovery controller).
const strings all_verbs = {"create", "delete", "deletecollection", "get",
                           "list",   "patch",  "update",           "watch"};
const strings namespace_verbs
    = {"create", "delete", "get", "list", "patch", "update", "watch"};
const strings create_only = {"create"};
const strings status_verbs = {"get", "patch", "update"};
const strings custom_verbs = {"delete", "deletecollection", "get",    "list",
                              "patch",  "create",           "update", "watch"};

const strings metadata_fields = {"metadata.name", "metadata.namespace"};

subresource_info status_of(const std::string& kind) {
  return {"status", kind, "", "", status_verbs};
}

subresource_info scale_subresource() {
  return {"scale", "Scale", "autoscaling", "v1", status_verbs};
}

struct builtin {
  std::string group;
  std::string resource;
  std::string kind;
  std::string singular;
  bool namespaced = true;
  strings verbs = all_verbs;
  strings short_names;
  strings categories;
  std::vector<subresource_info> subresources;
  bool has_generation = false;
  bool virtual_only = false;
  name_rule rule = name_rule::dns1123_subdomain;
  strings fields = metadata_fields;
  field_label_style style = field_label_style::default_conversion;
};

std::vector<builtin> builtins() {
  const auto registered = field_label_style::registered;
  const strings event_fields = {"involvedObject.kind",
                                "involvedObject.namespace",
                                "involvedObject.name",
                                "involvedObject.uid",
                                "involvedObject.apiVersion",
                                "involvedObject.resourceVersion",
                                "involvedObject.fieldPath",
                                "reason",
                                "reportingComponent",
                                "source",
                                "type",
                                "metadata.namespace",
                                "metadata.name"};
  std::vector<builtin> out;
  auto add = [&](builtin b) { out.push_back(std::move(b)); };
  // Core v1 (pkg/registry/core/rest/storage_core.go), sorted as /api/v1 is.
  add({"", "configmaps", "ConfigMap", "configmap", true, all_verbs, {"cm"}});
  add({"", "endpoints", "Endpoints", "endpoints", true, all_verbs, {"ep"}});
  {
    builtin b{"", "events", "Event", "event", true, all_verbs, {"ev"}};
    b.fields = event_fields;
    b.style = registered;
    add(b);
  }
  {
    builtin b{"",    "namespaces",    "Namespace", "namespace",
              false, namespace_verbs, {"ns"}};
    b.subresources = {{"finalize", "Namespace", "", "", {"update"}},
                      status_of("Namespace")};
    b.rule = name_rule::dns1123_label;
    b.fields = {"status.phase", "metadata.name"};
    b.style = registered;
    add(b);
  }
  {
    builtin b{"", "nodes", "Node", "node", false, all_verbs, {"no"}};
    b.subresources = {status_of("Node")};
    b.fields = {"metadata.name", "spec.unschedulable"};
    b.style = registered;
    add(b);
  }
  {
    builtin b{"",
              "persistentvolumeclaims",
              "PersistentVolumeClaim",
              "persistentvolumeclaim",
              true,
              all_verbs,
              {"pvc"}};
    b.subresources = {status_of("PersistentVolumeClaim")};
    add(b);
  }
  {
    builtin b{"",    "persistentvolumes", "PersistentVolume", "persistentvolume",
              false, all_verbs,           {"pv"}};
    b.subresources = {status_of("PersistentVolume")};
    add(b);
  }
  {
    builtin b{"", "pods", "Pod", "pod", true, all_verbs, {"po"}, {"all"}};
    // Served by the store (binding, status) and by the HTTP front, which
    // reads pod logs and forwards proxy requests into the pod network.
    b.subresources = {{"binding", "Binding", "", "", create_only},
                      {"log", "Pod", "", "", {"get"}},
                      {"proxy",
                       "PodProxyOptions",
                       "",
                       "",
                       {"create", "delete", "get", "patch", "update"}},
                      status_of("Pod")};
    b.fields = {"metadata.name",
                "metadata.namespace",
                "spec.nodeName",
                "spec.restartPolicy",
                "spec.schedulerName",
                "spec.serviceAccountName",
                "spec.hostNetwork",
                "status.phase",
                "status.podIP",
                "status.podIPs",
                "status.nominatedNodeName"};
    b.style = registered;
    add(b);
  }
  {
    builtin b{"", "secrets", "Secret", "secret"};
    b.fields = {"type", "metadata.namespace", "metadata.name"};
    b.style = registered;
    add(b);
  }
  {
    builtin b{"",
              "serviceaccounts",
              "ServiceAccount",
              "serviceaccount",
              true,
              all_verbs,
              {"sa"}};
    b.subresources = {
        {"token", "TokenRequest", "authentication.k8s.io", "v1", create_only}};
    add(b);
  }
  {
    builtin b{"",   "services", "Service", "service",
              true, all_verbs,  {"svc"},   {"all"}};
    b.subresources = {{"proxy",
                       "ServiceProxyOptions",
                       "",
                       "",
                       {"create", "delete", "get", "patch", "update"}},
                      status_of("Service")};
    b.rule = name_rule::dns1035_label;
    b.fields = {"metadata.namespace", "metadata.name", "spec.clusterIP",
                "spec.type"};
    b.style = registered;
    add(b);
  }
  // apps/v1
  {
    builtin b{"apps", "deployments", "Deployment", "deployment",
              true,   all_verbs,     {"deploy"},   {"all"}};
    b.subresources = {scale_subresource(), status_of("Deployment")};
    b.has_generation = true;
    add(b);
  }
  {
    builtin b{"apps", "replicasets", "ReplicaSet", "replicaset",
              true,   all_verbs,     {"rs"},       {"all"}};
    b.subresources = {scale_subresource(), status_of("ReplicaSet")};
    b.has_generation = true;
    add(b);
  }
  // events.k8s.io/v1: the same events as core, under the new schema.
  {
    builtin b{"events.k8s.io", "events", "Event", "event", true,
              all_verbs,       {"ev"}};
    add(b);
  }
  // authentication.k8s.io/v1 and authorization.k8s.io/v1: computed answers.
  for (const auto& [resource, kind] :
       std::vector<std::pair<std::string, std::string>>{
           {"selfsubjectreviews", "SelfSubjectReview"},
           {"tokenreviews", "TokenReview"}}) {
    builtin b{"authentication.k8s.io", resource, kind, "", false, create_only};
    b.singular = [&] {
      std::string s = kind;
      std::transform(s.begin(), s.end(), s.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      return s;
    }();
    b.virtual_only = true;
    add(b);
  }
  for (const auto& [resource, kind, namespaced] :
       std::vector<std::tuple<std::string, std::string, bool>>{
           {"localsubjectaccessreviews", "LocalSubjectAccessReview", true},
           {"selfsubjectaccessreviews", "SelfSubjectAccessReview", false},
           {"selfsubjectrulesreviews", "SelfSubjectRulesReview", false},
           {"subjectaccessreviews", "SubjectAccessReview", false}}) {
    std::string singular = kind;
    std::transform(singular.begin(), singular.end(), singular.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    builtin b{"authorization.k8s.io",
              resource,
              kind,
              singular,
              namespaced,
              create_only};
    b.virtual_only = true;
    add(b);
  }
  // batch/v1
  {
    builtin b{"batch", "jobs", "Job", "job", true, all_verbs, {}, {"all"}};
    b.subresources = {status_of("Job")};
    b.has_generation = true;
    b.fields = {"metadata.name", "metadata.namespace", "status.successful"};
    b.style = registered;
    add(b);
  }
  // rbac.authorization.k8s.io/v1
  for (const auto& [resource, kind, namespaced] :
       std::vector<std::tuple<std::string, std::string, bool>>{
           {"clusterrolebindings", "ClusterRoleBinding", false},
           {"clusterroles", "ClusterRole", false},
           {"rolebindings", "RoleBinding", true},
           {"roles", "Role", true}}) {
    std::string singular = kind;
    std::transform(singular.begin(), singular.end(), singular.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    builtin b{"rbac.authorization.k8s.io", resource, kind, singular,
              namespaced};
    b.rule = name_rule::path_segment;
    add(b);
  }
  // apiextensions.k8s.io/v1
  {
    builtin b{"apiextensions.k8s.io",
              "customresourcedefinitions",
              "CustomResourceDefinition",
              "customresourcedefinition",
              false,
              all_verbs,
              {"crd", "crds"},
              {"api-extensions"}};
    b.subresources = {status_of("CustomResourceDefinition")};
    b.has_generation = true;
    add(b);
  }
  // storage.k8s.io/v1
  {
    builtin b{"storage.k8s.io", "storageclasses", "StorageClass", "storageclass",
              false,            all_verbs,        {"sc"}};
    add(b);
  }
  // scheduling.k8s.io/v1
  {
    builtin b{"scheduling.k8s.io", "priorityclasses", "PriorityClass",
              "priorityclass",     false,             all_verbs,
              {"pc"}};
    add(b);
  }
  // coordination.k8s.io/v1
  add({"coordination.k8s.io", "leases", "Lease", "lease"});
  // discovery.k8s.io/v1
  add({"discovery.k8s.io", "endpointslices", "EndpointSlice", "endpointslice"});
  return out;
}

// The groups of /apis in kube-apiserver's order (by group priority); custom
// resource groups follow, by name.
const strings builtin_group_order = {"apps",
                                     "events.k8s.io",
                                     "authentication.k8s.io",
                                     "authorization.k8s.io",
                                     "batch",
                                     "rbac.authorization.k8s.io",
                                     "storage.k8s.io",
                                     "apiextensions.k8s.io",
                                     "scheduling.k8s.io",
                                     "coordination.k8s.io",
                                     "discovery.k8s.io"};

caf::error invalid_crd(std::string message) {
  status st{"BadRequest", 400, message, {}};
  return make_status_error("CustomResourceDefinition", std::move(st));
}

strings string_list(const json& value) {
  strings out;
  if (value.is_array())
    for (const auto& item : value)
      if (item.is_string())
        out.push_back(item.get<std::string>());
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Kubernetes' version order (k8s.io/apimachinery/pkg/version
// CompareKubeAwareVersionStrings): GA before beta before alpha, higher
// numbers first; strings that are not vN[alpha|betaM] last, alphabetically.
struct kube_version {
  bool kube_like = false;
  int major = 0;
  int stage = 0; // 2 GA, 1 beta, 0 alpha
  int minor = 0;
};

kube_version parse_kube_version(std::string_view v) {
  kube_version out;
  if (v.size() < 2 || v[0] != 'v'
      || !std::isdigit(static_cast<unsigned char>(v[1])))
    return out;
  size_t i = 1;
  int major = 0;
  while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])))
    major = major * 10 + (v[i++] - '0');
  if (i == v.size()) {
    out = {true, major, 2, 0};
    return out;
  }
  auto rest = v.substr(i);
  int stage = 0;
  if (rest.substr(0, 4) == "beta") {
    stage = 1;
    rest.remove_prefix(4);
  } else if (rest.substr(0, 5) == "alpha") {
    stage = 0;
    rest.remove_prefix(5);
  } else {
    return out;
  }
  if (rest.empty() || !std::all_of(rest.begin(), rest.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      }))
    return out;
  out = {true, major, stage, std::stoi(std::string{rest})};
  return out;
}

bool version_before(const std::string& a, const std::string& b) {
  auto va = parse_kube_version(a);
  auto vb = parse_kube_version(b);
  if (va.kube_like != vb.kube_like)
    return va.kube_like;
  if (!va.kube_like)
    return a < b;
  if (va.stage != vb.stage)
    return va.stage > vb.stage;
  if (va.major != vb.major)
    return va.major > vb.major;
  return va.minor > vb.minor;
}

json group_version_json(const std::string& group, const std::string& version) {
  json out = json::object();
  out["groupVersion"] = group.empty() ? version : group + "/" + version;
  out["version"] = version;
  return out;
}

json resource_json(const resource_type& t) {
  json r = json::object();
  r["name"] = t.resource;
  r["singularName"] = t.singular;
  r["namespaced"] = t.namespaced;
  r["kind"] = t.kind;
  r["verbs"] = t.verbs;
  if (!t.short_names.empty())
    r["shortNames"] = t.short_names;
  if (!t.categories.empty())
    r["categories"] = t.categories;
  return r;
}

json subresource_json(const resource_type& t, const subresource_info& s) {
  json r = json::object();
  r["name"] = t.resource + "/" + s.name;
  r["singularName"] = "";
  r["namespaced"] = t.namespaced;
  if (!s.group.empty())
    r["group"] = s.group;
  if (!s.version.empty())
    r["version"] = s.version;
  r["kind"] = s.kind;
  r["verbs"] = s.verbs;
  return r;
}

} // namespace

std::string resource_type::api_version() const {
  return group.empty() ? version : group + "/" + version;
}

std::string resource_type::qualified_resource() const {
  return group.empty() ? resource : resource + "." + group;
}

std::string resource_type::qualified_kind() const {
  return group.empty() ? kind : kind + "." + group;
}

const subresource_info*
resource_type::find_subresource(std::string_view name) const {
  for (const auto& s : subresources)
    if (s.name == name)
      return &s;
  return nullptr;
}

bool resource_type::serves(std::string_view verb) const {
  return std::find(verbs.begin(), verbs.end(), verb) != verbs.end();
}

json version_info() {
  // What a v1.32.0 kube-apiserver answers on /version.
  return json::parse(R"({
  "major": "1",
  "minor": "32",
  "gitVersion": "v1.32.0",
  "gitCommit": "70d3cc986aa8221cd1dfb1121852688902d3bf53",
  "gitTreeState": "clean",
  "buildDate": "2024-12-11T17:59:15Z",
  "goVersion": "go1.23.3",
  "compiler": "gc",
  "platform": "linux/amd64"
})");
}

type_registry::type_registry() {
  for (auto& b : builtins()) {
    auto t = std::make_shared<resource_type>();
    t->group = b.group;
    t->version = "v1";
    t->resource = b.resource;
    t->kind = b.kind;
    t->list_kind = b.kind + "List";
    t->singular = b.singular;
    t->namespaced = b.namespaced;
    t->verbs = b.verbs;
    t->short_names = b.short_names;
    t->categories = b.categories;
    t->subresources = b.subresources;
    t->has_generation = b.has_generation;
    t->virtual_only = b.virtual_only;
    t->name_rule = b.rule;
    t->selectable_fields = b.fields;
    if (!b.namespaced) {
      auto& f = t->selectable_fields;
      f.erase(std::remove(f.begin(), f.end(), "metadata.namespace"), f.end());
    }
    t->field_style = b.style;
    types_.push_back(std::move(t));
  }
}

const resource_type* type_registry::find(std::string_view group,
                                         std::string_view version,
                                         std::string_view resource) const {
  for (const auto& t : types_)
    if (t->group == group && t->version == version && t->resource == resource)
      return t.get();
  return nullptr;
}

const resource_type* type_registry::find_kind(std::string_view api_version,
                                              std::string_view kind) const {
  for (const auto& t : types_)
    if (t->kind == kind && t->api_version() == api_version)
      return t.get();
  return nullptr;
}

std::vector<const resource_type*> type_registry::types() const {
  std::vector<const resource_type*> out;
  out.reserve(types_.size());
  for (const auto& t : types_)
    out.push_back(t.get());
  return out;
}

caf::expected<void> type_registry::add_crd(const json& crd) {
  if (!crd.is_object())
    return invalid_crd("a CustomResourceDefinition must be an object");
  auto name = crd.contains("metadata") && crd["metadata"].is_object()
                  ? crd["metadata"].value("name", "")
                  : std::string{};
  const json spec = crd.value("spec", json::object());
  if (!spec.is_object())
    return invalid_crd("CustomResourceDefinition " + name
                       + ": spec must be an object");
  auto group = spec.value("group", "");
  const json names = spec.value("names", json::object());
  auto plural = names.is_object() ? names.value("plural", "") : std::string{};
  auto kind = names.is_object() ? names.value("kind", "") : std::string{};
  if (group.empty() || plural.empty() || kind.empty())
    return invalid_crd("CustomResourceDefinition " + name
                       + ": spec.group, spec.names.plural and spec.names.kind "
                         "are required");
  if (name.empty())
    name = plural + "." + group;
  for (const auto& t : types_)
    if (t->group == group && t->resource == plural && t->crd_name != name)
      return invalid_crd("CustomResourceDefinition " + name + ": " + plural
                         + "." + group + " is already served");
  auto singular = names.value("singular", "");
  if (singular.empty())
    singular = lower(kind);
  auto list_kind = names.value("listKind", "");
  if (list_kind.empty())
    list_kind = kind + "List";
  bool namespaced = spec.value("scope", "Namespaced") != "Cluster";

  std::vector<std::shared_ptr<resource_type>> added;
  const json versions = spec.value("versions", json::array());
  if (versions.is_array())
    for (const auto& v : versions) {
      if (!v.is_object() || !v.value("served", false))
        continue;
      auto t = std::make_shared<resource_type>();
      t->group = group;
      t->version = v.value("name", "");
      t->resource = plural;
      t->kind = kind;
      t->list_kind = list_kind;
      t->singular = singular;
      t->namespaced = namespaced;
      t->verbs = custom_verbs;
      t->short_names = string_list(names.value("shortNames", json{}));
      t->categories = string_list(names.value("categories", json{}));
      t->has_generation = true;
      t->custom = true;
      t->crd_name = name;
      t->storage = v.value("storage", false);
      t->field_style = field_label_style::registered;
      t->selectable_fields = {"metadata.name"};
      if (namespaced)
        t->selectable_fields.emplace_back("metadata.namespace");
      const json selectable = v.value("selectableFields", json{});
      if (selectable.is_array())
        for (const auto& f : selectable) {
          auto path = f.is_object() ? f.value("jsonPath", "") : std::string{};
          if (!path.empty() && path.front() == '.')
            path.erase(0, 1);
          if (!path.empty())
            t->selectable_fields.push_back(path);
        }
      const json subs = v.value("subresources", json{});
      if (subs.is_object()) {
        if (subs.contains("status"))
          t->subresources.push_back(status_of(kind));
        if (subs.contains("scale") && subs["scale"].is_object()) {
          const json& sc = subs["scale"];
          t->subresources.push_back(scale_subresource());
          auto path = [&](const char* key, std::string& out) {
            auto it = sc.find(key);
            if (it != sc.end() && it->is_string())
              out = it->get<std::string>();
          };
          path("specReplicasPath", t->scale.spec_replicas);
          path("statusReplicasPath", t->scale.status_replicas);
          path("labelSelectorPath", t->scale.label_selector);
        }
      }
      const json columns = v.value("additionalPrinterColumns", json{});
      if (columns.is_array())
        for (const auto& c : columns) {
          if (!c.is_object())
            continue;
          printer_column col;
          col.name = c.value("name", "");
          col.type = c.value("type", "");
          col.format = c.value("format", "");
          col.description = c.value("description", "");
          col.json_path = c.value("jsonPath", "");
          col.priority = c.value("priority", 0);
          t->printer_columns.push_back(std::move(col));
        }
      const json schema = v.value("schema", json{});
      if (schema.is_object() && schema.contains("openAPIV3Schema"))
        t->schema = schema["openAPIV3Schema"];
      if (t->version.empty())
        continue;
      added.push_back(std::move(t));
    }
  if (added.empty())
    return invalid_crd("CustomResourceDefinition " + name
                       + " serves no version");
  remove_crd(name);
  types_.insert(types_.end(), added.begin(), added.end());
  return {};
}

void type_registry::remove_crd(std::string_view crd_name) {
  types_.erase(std::remove_if(types_.begin(), types_.end(),
                              [&](const auto& t) {
                                return t->custom && t->crd_name == crd_name;
                              }),
               types_.end());
}

json type_registry::discovery(std::string_view path,
                              std::string_view server_address) const {
  while (path.size() > 1 && path.back() == '/')
    path.remove_suffix(1);
  if (path == "/version")
    return version_info();
  if (path == "/api") {
    json out = json::object();
    out["kind"] = "APIVersions";
    out["versions"] = json::array({"v1"});
    json cidr = json::object();
    cidr["clientCIDR"] = "0.0.0.0/0";
    cidr["serverAddress"] = std::string{server_address};
    out["serverAddressByClientCIDRs"] = json::array({cidr});
    return out;
  }
  // The groups and their versions, in /apis order.
  std::vector<std::string> groups = builtin_group_order;
  std::set<std::string> custom_groups;
  for (const auto& t : types_)
    if (t->custom)
      custom_groups.insert(t->group);
  for (const auto& g : custom_groups)
    if (std::find(groups.begin(), groups.end(), g) == groups.end())
      groups.push_back(g);
  auto versions_of = [&](const std::string& group) {
    std::vector<std::string> versions;
    for (const auto& t : types_)
      if (t->group == group
          && std::find(versions.begin(), versions.end(), t->version)
                 == versions.end())
        versions.push_back(t->version);
    std::sort(versions.begin(), versions.end(), version_before);
    return versions;
  };
  auto group_json = [&](const std::string& group) {
    json g = json::object();
    g["name"] = group;
    json versions = json::array();
    auto list = versions_of(group);
    for (const auto& v : list)
      versions.push_back(group_version_json(group, v));
    g["versions"] = versions;
    if (!list.empty())
      g["preferredVersion"] = group_version_json(group, list.front());
    return g;
  };
  if (path == "/apis") {
    json out = json::object();
    out["kind"] = "APIGroupList";
    out["apiVersion"] = "v1";
    json list = json::array();
    for (const auto& g : groups)
      if (!versions_of(g).empty())
        list.push_back(group_json(g));
    out["groups"] = list;
    return out;
  }
  std::string group;
  std::string version;
  if (path == "/api/v1") {
    version = "v1";
  } else if (path.substr(0, 6) == "/apis/") {
    auto rest = path.substr(6);
    auto slash = rest.find('/');
    group = std::string{rest.substr(0, slash)};
    if (slash == std::string_view::npos) {
      if (versions_of(group).empty())
        return nullptr;
      json out = json::object();
      out["kind"] = "APIGroup";
      out["apiVersion"] = "v1";
      auto g = group_json(group);
      for (auto& [k, v] : g.items())
        out[k] = v;
      return out;
    }
    version = std::string{rest.substr(slash + 1)};
    if (version.empty() || version.find('/') != std::string::npos
        || group.empty())
      return nullptr;
  } else {
    return nullptr;
  }
  std::vector<const resource_type*> members;
  for (const auto& t : types_)
    if (t->group == group && t->version == version)
      members.push_back(t.get());
  if (members.empty())
    return nullptr;
  json resources = json::array();
  bool builtin_group = !members.front()->custom;
  if (builtin_group) {
    // The installer lists storage paths sorted: "pods", "pods/status", ...
    std::map<std::string, json> sorted;
    for (const auto* t : members) {
      sorted.emplace(t->resource, resource_json(*t));
      for (const auto& s : t->subresources)
        sorted.emplace(t->resource + "/" + s.name, subresource_json(*t, s));
    }
    for (auto& [key, r] : sorted)
      resources.push_back(std::move(r));
  } else {
    // The discovery controller lists each CRD's resource, then its status
    // and scale, in the order the CRDs are held.
    for (const auto* t : members) {
      resources.push_back(resource_json(*t));
      for (const auto& s : t->subresources)
        resources.push_back(subresource_json(*t, s));
    }
  }
  json out = json::object();
  out["kind"] = "APIResourceList";
  out["apiVersion"] = "v1";
  out["groupVersion"] = group.empty() ? version : group + "/" + version;
  out["resources"] = resources;
  return out;
}

} // namespace aiperf::k8s::sim
