#include "k8s/sim/auth/rbac.hpp"

#include "k8s/sim/auth/detail.hpp"

#include <algorithm>
#include <set>
#include <utility>

namespace aiperf::k8s::sim::auth {

namespace {

constexpr std::string_view rbac_group = "rbac.authorization.k8s.io";
constexpr std::string_view all_authenticated = "system:authenticated";
constexpr std::string_view all_unauthenticated = "system:unauthenticated";
constexpr std::string_view anonymous = "system:anonymous";
constexpr std::string_view sa_prefix = "system:serviceaccount:";

bool has(const std::vector<std::string>& set, std::string_view x) {
  return std::find(set.begin(), set.end(), x) != set.end();
}

bool has_all(const std::vector<std::string>& set,
             const std::vector<std::string>& xs) {
  return std::all_of(xs.begin(), xs.end(),
                     [&](const auto& x) { return has(set, x); });
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string string_at(const json& obj, std::string_view key) {
  if (!obj.is_object())
    return {};
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string())
    return {};
  return it->get<std::string>();
}

std::vector<std::string> strings_at(const json& obj, std::string_view key) {
  std::vector<std::string> out;
  if (!obj.is_object())
    return out;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array())
    return out;
  for (const auto& x : *it)
    if (x.is_string())
      out.push_back(x.get<std::string>());
  return out;
}

const json& object_at(const json& obj, std::string_view key) {
  static const json empty = json::object();
  if (!obj.is_object())
    return empty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : empty;
}

// utilerrors.NewAggregate(...).Error(): one message as is, several
// de-duplicated in brackets.
std::string aggregate(const std::vector<std::string>& errors) {
  std::vector<std::string> seen;
  for (const auto& e : errors)
    if (!has(seen, e))
      seen.push_back(e);
  if (seen.size() == 1)
    return seen.front();
  std::string out;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += seen[i];
  }
  return seen.empty() ? out : "[" + out + "]";
}

// RuleAllows (plugin/pkg/auth/authorizer/rbac/rbac.go) with the matchers of
// pkg/apis/rbac/v1/evaluation_helpers.go.
bool verb_matches(const policy_rule& r, std::string_view verb) {
  return has(r.verbs, "*") || has(r.verbs, verb);
}

bool group_matches(const policy_rule& r, std::string_view group) {
  return has(r.api_groups, "*") || has(r.api_groups, group);
}

bool resource_matches(const policy_rule& r, std::string_view combined,
                      std::string_view sub) {
  for (const auto& res : r.resources) {
    if (res == "*" || res == combined)
      return true;
    if (!sub.empty() && res.size() == sub.size() + 2 && starts_with(res, "*/")
        && std::string_view{res}.substr(2) == sub)
      return true;
  }
  return false;
}

bool name_matches(const policy_rule& r, std::string_view name) {
  return r.resource_names.empty() || has(r.resource_names, name);
}

bool url_matches(const policy_rule& r, std::string_view path) {
  for (const auto& url : r.non_resource_urls) {
    if (url == "*" || url == path)
      return true;
    if (!url.empty() && url.back() == '*') {
      auto prefix = std::string_view{url};
      while (!prefix.empty() && prefix.back() == '*')
        prefix.remove_suffix(1);
      if (starts_with(path, prefix))
        return true;
    }
  }
  return false;
}

bool rule_allows(const attributes& a, const policy_rule& r) {
  if (a.resource_request) {
    auto combined
        = a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
    return verb_matches(r, a.verb) && group_matches(r, a.group)
           && resource_matches(r, combined, a.subresource)
           && name_matches(r, a.name);
  }
  return verb_matches(r, a.verb) && url_matches(r, a.path);
}

// Covers (k8s.io/component-helpers auth/rbac/validation
// policy_comparator.go): every one-verb, one-resource, one-name piece of the
// servant rules must be covered by one owner rule.
std::vector<policy_rule> breakdown(const policy_rule& r) {
  std::vector<policy_rule> out;
  for (const auto& g : r.api_groups)
    for (const auto& res : r.resources)
      for (const auto& v : r.verbs) {
        if (r.resource_names.empty()) {
          out.push_back(policy_rule{{v}, {g}, {res}, {}, {}});
        } else {
          for (const auto& n : r.resource_names)
            out.push_back(policy_rule{{v}, {g}, {res}, {n}, {}});
        }
      }
  for (const auto& url : r.non_resource_urls)
    for (const auto& v : r.verbs)
      out.push_back(policy_rule{{v}, {}, {}, {}, {url}});
  return out;
}

bool resource_covers_all(const std::vector<std::string>& owner,
                         const std::vector<std::string>& wanted) {
  if (has(owner, "*") || has_all(owner, wanted))
    return true;
  for (const auto& path : wanted) {
    if (has(owner, path))
      continue;
    auto slash = path.find('/');
    if (slash == std::string::npos)
      return false;
    if (!has(owner, "*/" + path.substr(slash + 1)))
      return false;
  }
  return true;
}

bool url_covers(std::string_view owner, std::string_view sub) {
  if (owner == sub)
    return true;
  if (owner.empty() || owner.back() != '*')
    return false;
  while (!owner.empty() && owner.back() == '*')
    owner.remove_suffix(1);
  return starts_with(sub, owner);
}

bool urls_cover_all(const std::vector<std::string>& owner,
                    const std::vector<std::string>& wanted) {
  return std::all_of(wanted.begin(), wanted.end(), [&](const auto& path) {
    return std::any_of(owner.begin(), owner.end(),
                       [&](const auto& o) { return url_covers(o, path); });
  });
}

bool rule_covers(const policy_rule& owner, const policy_rule& sub) {
  bool verbs = has(owner.verbs, "*") || has_all(owner.verbs, sub.verbs);
  bool groups
      = has(owner.api_groups, "*") || has_all(owner.api_groups, sub.api_groups);
  bool resources = resource_covers_all(owner.resources, sub.resources);
  bool urls = urls_cover_all(owner.non_resource_urls, sub.non_resource_urls);
  bool names = sub.resource_names.empty()
                   ? owner.resource_names.empty()
                   : owner.resource_names.empty()
                         || has_all(owner.resource_names, sub.resource_names);
  return verbs && groups && resources && names && urls;
}

std::vector<policy_rule> uncovered(const std::vector<policy_rule>& owner,
                                   const std::vector<policy_rule>& servant) {
  std::vector<policy_rule> out;
  for (const auto& r : servant)
    for (auto& sub : breakdown(r))
      if (std::none_of(owner.begin(), owner.end(),
                       [&](const auto& o) { return rule_covers(o, sub); }))
        out.push_back(std::move(sub));
  return out;
}

// CompactRules (pkg/registry/rbac/validation/policy_compact.go): pieces
// with one group and one resource and nothing else merge their verbs.
std::vector<policy_rule> compact(const std::vector<policy_rule>& rules) {
  std::vector<policy_rule> out;
  std::vector<std::pair<std::pair<std::string, std::string>, policy_rule>>
      simple;
  for (const auto& r : rules) {
    bool is_simple = r.resource_names.empty() && r.non_resource_urls.empty()
                     && r.api_groups.size() == 1 && r.resources.size() == 1;
    if (!is_simple) {
      out.push_back(r);
      continue;
    }
    auto key = std::make_pair(r.api_groups[0], r.resources[0]);
    auto it = std::find_if(simple.begin(), simple.end(),
                           [&](const auto& e) { return e.first == key; });
    if (it == simple.end())
      simple.emplace_back(key, r);
    else
      it->second.verbs.insert(it->second.verbs.end(), r.verbs.begin(),
                              r.verbs.end());
  }
  for (auto& [key, r] : simple)
    out.push_back(std::move(r));
  return out;
}

const std::vector<policy_rule>& full_authority() {
  static const std::vector<policy_rule> rules{
      policy_rule{{"*"}, {"*"}, {"*"}, {}, {}},
      policy_rule{{"*"}, {}, {}, {}, {"*"}}};
  return rules;
}

bool in_masters(const user_info& u) {
  return has(u.groups, system_masters);
}

status make_status(std::string reason, std::int32_t code, std::string message,
                   std::string name = {}, std::string group = {},
                   std::string kind = {}) {
  status st{std::move(reason), code, std::move(message), {}};
  st.details.name = std::move(name);
  st.details.group = std::move(group);
  st.details.kind = std::move(kind);
  return st;
}

// apierrors.NewForbidden for a group/resource, a name and a cause.
caf::error forbidden(std::string_view group, std::string_view resource,
                     std::string_view name, std::string_view cause) {
  std::string qualified{resource};
  if (!group.empty())
    qualified.append(".").append(group);
  std::string message;
  if (resource.empty())
    message = "forbidden: " + std::string{cause};
  else if (name.empty())
    message = qualified + " is forbidden: " + std::string{cause};
  else
    message = qualified + " " + k8s::go_quote(name)
              + " is forbidden: " + std::string{cause};
  auto st = make_status("Forbidden", 403, message, std::string{name},
                        std::string{group}, std::string{resource});
  return make_error(k8s::errc::forbidden, std::move(message), std::move(st));
}

caf::error bad_request(std::string message) {
  auto st = make_status("BadRequest", 400, message);
  return make_error(k8s::errc::invalid, std::move(message), std::move(st));
}

// apierrors.NewInvalid of a review (no name): one cause as is, several as
// field.ErrorList prints them, in brackets.
caf::error invalid(const std::string& kind, std::vector<status_cause> causes) {
  std::string text;
  for (std::size_t i = 0; i < causes.size(); ++i)
    text += (i > 0 ? ", " : "") + causes[i].field + ": " + causes[i].message;
  if (causes.size() > 1)
    text = "[" + text + "]";
  auto message = kind + ".authorization.k8s.io \"\" is invalid: " + text;
  auto st
      = make_status("Invalid", 422, message, "", "authorization.k8s.io", kind);
  st.details.causes = std::move(causes);
  return make_error(k8s::errc::invalid, std::move(message), std::move(st));
}

status_cause invalid_cause(std::string field, const std::string& value,
                           const std::string& detail_text) {
  return status_cause{"FieldValueInvalid",
                      "Invalid value: " + value + ": " + detail_text,
                      std::move(field)};
}

// ValidateSubjectAccessReviewSpec's first two checks. The value printed for
// both attributes set is the internal struct as %#v writes it.
void check_attribute_kinds(const json& spec,
                           std::vector<status_cause>& causes) {
  bool has_res = spec.contains("resourceAttributes")
                 && spec["resourceAttributes"].is_object();
  bool has_non = spec.contains("nonResourceAttributes")
                 && spec["nonResourceAttributes"].is_object();
  if (has_res && has_non) {
    const auto& n = spec["nonResourceAttributes"];
    causes.push_back(invalid_cause(
        "spec.nonResourceAttributes",
        "authorization.NonResourceAttributes{Path:"
            + k8s::go_quote(string_at(n, "path"))
            + ", Verb:" + k8s::go_quote(string_at(n, "verb")) + "}",
        "cannot be specified in combination with resourceAttributes"));
  }
  if (!has_res && !has_non)
    causes.push_back(invalid_cause(
        "spec.resourceAttributes", "\"null\"",
        "exactly one of nonResourceAttributes or resourceAttributes must be "
        "specified"));
}

json review_metadata(const json& review) {
  json meta = object_at(review, "metadata");
  if (!meta.contains("creationTimestamp"))
    meta["creationTimestamp"] = nullptr;
  return meta;
}

// The spec's attributes as the API server writes them back: Go field order,
// empty fields left out.
json resource_attributes_json(const json& in) {
  json out = json::object();
  for (const char* key : {"namespace", "verb", "group", "version", "resource",
                          "subresource", "name"}) {
    auto v = string_at(in, key);
    if (!v.empty())
      out[key] = v;
  }
  for (const char* key : {"fieldSelector", "labelSelector"})
    if (in.contains(key))
      out[key] = in[key];
  return out;
}

json non_resource_attributes_json(const json& in) {
  json out = json::object();
  for (const char* key : {"path", "verb"}) {
    auto v = string_at(in, key);
    if (!v.empty())
      out[key] = v;
  }
  return out;
}

// The attributes of a review's spec (checked by check_attribute_kinds).
attributes review_attributes(const json& spec, const user_info& user) {
  bool has_res = spec.contains("resourceAttributes")
                 && spec["resourceAttributes"].is_object();
  attributes a;
  a.user = user;
  if (has_res) {
    const auto& r = spec["resourceAttributes"];
    a.verb = string_at(r, "verb");
    a.group = string_at(r, "group");
    a.resource = string_at(r, "resource");
    a.subresource = string_at(r, "subresource");
    a.namespace_name = string_at(r, "namespace");
    a.name = string_at(r, "name");
    a.resource_request = true;
  } else {
    const auto& r = spec["nonResourceAttributes"];
    a.verb = string_at(r, "verb");
    a.path = string_at(r, "path");
    a.resource_request = false;
  }
  return a;
}

json review_status(const decision& d) {
  json st = json::object();
  st["allowed"] = d.allowed;
  if (!d.reason.empty())
    st["reason"] = d.reason;
  return st;
}

json cluster_role(std::string name, std::vector<policy_rule> rules) {
  json rules_json = json::array();
  for (const auto& r : rules)
    rules_json.push_back(to_json(r));
  return json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
              {"kind", "ClusterRole"},
              {"metadata",
               {{"name", std::move(name)},
                {"labels", {{"kubernetes.io/bootstrapping", "rbac-defaults"}}},
                {"annotations",
                 {{"rbac.authorization.kubernetes.io/autoupdate", "true"}}}}},
              {"rules", std::move(rules_json)}};
}

json cluster_role_binding(std::string name, std::vector<std::string> groups) {
  json subjects = json::array();
  for (auto& g : groups)
    subjects.push_back(json{{"apiGroup", "rbac.authorization.k8s.io"},
                            {"kind", "Group"},
                            {"name", std::move(g)}});
  return json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
              {"kind", "ClusterRoleBinding"},
              {"metadata",
               {{"name", name},
                {"labels", {{"kubernetes.io/bootstrapping", "rbac-defaults"}}},
                {"annotations",
                 {{"rbac.authorization.kubernetes.io/autoupdate", "true"}}}}},
              {"roleRef",
               {{"apiGroup", "rbac.authorization.k8s.io"},
                {"kind", "ClusterRole"},
                {"name", name}}},
              {"subjects", std::move(subjects)}};
}

// The object with what only the garbage collector changes taken from `old`
// (and what the store itself rewrites on every write), for
// IsOnlyMutatingGCFields.
json without_gc_fields(json obj, const json& old) {
  if (!obj.is_object())
    return obj;
  auto& meta = obj["metadata"];
  const auto& old_meta = object_at(old, "metadata");
  for (const char* key : {"ownerReferences", "finalizers", "selfLink",
                          "resourceVersion", "managedFields", "generation"}) {
    if (old_meta.contains(key))
      meta[key] = old_meta[key];
    else if (meta.is_object())
      meta.erase(key);
  }
  return obj;
}

} // namespace

policy_rule rule_of(const json& rule) {
  return policy_rule{strings_at(rule, "verbs"), strings_at(rule, "apiGroups"),
                     strings_at(rule, "resources"),
                     strings_at(rule, "resourceNames"),
                     strings_at(rule, "nonResourceURLs")};
}

json to_json(const policy_rule& r) {
  json out = json::object();
  out["verbs"] = r.verbs;
  if (!r.api_groups.empty())
    out["apiGroups"] = r.api_groups;
  if (!r.resources.empty())
    out["resources"] = r.resources;
  if (!r.resource_names.empty())
    out["resourceNames"] = r.resource_names;
  if (!r.non_resource_urls.empty())
    out["nonResourceURLs"] = r.non_resource_urls;
  return out;
}

std::string compact_string(const policy_rule& r) {
  std::vector<std::string> parts;
  if (!r.api_groups.empty())
    parts.push_back("APIGroups:" + detail::go_quote_list(r.api_groups));
  if (!r.resources.empty())
    parts.push_back("Resources:" + detail::go_quote_list(r.resources));
  if (!r.non_resource_urls.empty())
    parts.push_back("NonResourceURLs:"
                    + detail::go_quote_list(r.non_resource_urls));
  if (!r.resource_names.empty())
    parts.push_back("ResourceNames:" + detail::go_quote_list(r.resource_names));
  if (!r.verbs.empty())
    parts.push_back("Verbs:" + detail::go_quote_list(r.verbs));
  std::string out = "{";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += parts[i];
  }
  return out + "}";
}

attributes attributes_of(const request& req, const user_info& user) {
  attributes a;
  a.user = user;
  a.verb = to_string(req.verb);
  a.group = req.ref.group;
  a.resource = req.ref.resource;
  a.subresource = req.ref.subresource;
  a.namespace_name = req.ref.namespace_name;
  a.name = req.ref.name;
  a.resource_request = true;
  return a;
}

attributes non_resource_attributes(const user_info& user, std::string_view verb,
                                   std::string_view path) {
  attributes a;
  a.user = user;
  a.verb = verb;
  a.resource_request = false;
  a.path = path;
  return a;
}

std::string forbidden_reason_text(const attributes& a,
                                  std::string_view reason) {
  const auto& user = k8s::go_quote(a.user.username);
  std::string msg;
  if (!a.resource_request) {
    msg = "User " + user + " cannot " + a.verb + " path "
          + k8s::go_quote(a.path);
  } else {
    auto resource
        = a.subresource.empty() ? a.resource : a.resource + "/" + a.subresource;
    msg = "User " + user + " cannot " + a.verb + " resource "
          + k8s::go_quote(resource) + " in API group "
          + k8s::go_quote(a.group);
    if (!a.namespace_name.empty())
      msg += " in the namespace " + k8s::go_quote(a.namespace_name);
    else
      msg += " at the cluster scope";
  }
  // responsewriters.Forbidden escapes what could read as HTML.
  std::string escaped;
  for (char c : msg) {
    if (c == '&')
      escaped += "&amp;";
    else if (c == '<')
      escaped += "&lt;";
    else if (c == '>')
      escaped += "&gt;";
    else
      escaped += c;
  }
  if (!reason.empty())
    escaped.append(": ").append(reason);
  return escaped;
}

std::string forbidden_message(const attributes& a, std::string_view reason) {
  return forbidden_status(a, reason).message;
}

status forbidden_status(const attributes& a, std::string_view reason) {
  auto err = forbidden_error(a, reason);
  return *error_payload<status>(err);
}

caf::error forbidden_error(const attributes& a, std::string_view reason) {
  auto text = forbidden_reason_text(a, reason);
  if (!a.resource_request)
    return forbidden("", "", "", text);
  return forbidden(a.group, a.resource, a.name, text);
}

std::vector<json> bootstrap_cluster_roles() {
  // plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go; the rule
  // builder sorts every list.
  return {
      cluster_role("cluster-admin", {policy_rule{{"*"}, {"*"}, {"*"}, {}, {}},
                                     policy_rule{{"*"}, {}, {}, {}, {"*"}}}),
      // Unbound: what a component that checks others' tokens binds (the
      // results server's TokenReviews).
      cluster_role(
          "system:auth-delegator",
          {policy_rule{
               {"create"}, {"authentication.k8s.io"}, {"tokenreviews"}, {}, {}},
           policy_rule{{"create"},
                       {"authorization.k8s.io"},
                       {"subjectaccessreviews"},
                       {},
                       {}}}),
      cluster_role(
          "system:basic-user",
          {policy_rule{{"create"},
                       {"authorization.k8s.io"},
                       {"selfsubjectaccessreviews", "selfsubjectrulesreviews"},
                       {},
                       {}},
           policy_rule{{"create"},
                       {"authentication.k8s.io"},
                       {"selfsubjectreviews"},
                       {},
                       {}}}),
      cluster_role("system:discovery",
                   {policy_rule{{"get"},
                                {},
                                {},
                                {},
                                {"/api", "/api/*", "/apis", "/apis/*",
                                 "/healthz", "/livez", "/openapi", "/openapi/*",
                                 "/readyz", "/version", "/version/"}}}),
      cluster_role("system:public-info-viewer",
                   {policy_rule{{"get"},
                                {},
                                {},
                                {},
                                {"/healthz", "/livez", "/readyz", "/version",
                                 "/version/"}}}),
  };
}

std::vector<json> bootstrap_cluster_role_bindings() {
  return {
      cluster_role_binding("cluster-admin", {"system:masters"}),
      cluster_role_binding("system:basic-user", {"system:authenticated"}),
      cluster_role_binding("system:discovery", {"system:authenticated"}),
      cluster_role_binding("system:public-info-viewer",
                           {"system:authenticated", "system:unauthenticated"}),
  };
}

bool rbac_index::is_rbac_kind(std::string_view kind) noexcept {
  return kind == "Role" || kind == "ClusterRole" || kind == "RoleBinding"
         || kind == "ClusterRoleBinding";
}

std::string_view
rbac_index::kind_of_resource(std::string_view resource) noexcept {
  if (resource == "roles")
    return "Role";
  if (resource == "clusterroles")
    return "ClusterRole";
  if (resource == "rolebindings")
    return "RoleBinding";
  if (resource == "clusterrolebindings")
    return "ClusterRoleBinding";
  return {};
}

void rbac_index::upsert(std::string_view kind, const json& object) {
  const auto& meta = object_at(object, "metadata");
  auto ns = string_at(meta, "namespace");
  auto name = string_at(meta, "name");
  if (kind == "Role" || kind == "ClusterRole") {
    role r;
    if (auto it = object.find("rules");
        object.is_object() && it != object.end() && it->is_array())
      for (const auto& rule : *it)
        r.rules.push_back(rule_of(rule));
    if (kind == "Role")
      roles_[key{ns, name}] = std::move(r);
    else
      cluster_roles_[name] = std::move(r);
    return;
  }
  if (kind != "RoleBinding" && kind != "ClusterRoleBinding")
    return;
  binding b;
  b.name = name;
  b.namespace_name = kind == "RoleBinding" ? ns : std::string{};
  const auto& ref = object_at(object, "roleRef");
  b.role_kind = string_at(ref, "kind");
  b.role_name = string_at(ref, "name");
  if (auto it = object.find("subjects");
      object.is_object() && it != object.end() && it->is_array())
    for (const auto& s : *it)
      b.subjects.push_back(subject{string_at(s, "kind"), string_at(s, "name"),
                                   string_at(s, "namespace")});
  if (kind == "RoleBinding")
    role_bindings_[key{ns, name}] = std::move(b);
  else
    cluster_role_bindings_[name] = std::move(b);
}

void rbac_index::erase(std::string_view kind, std::string_view namespace_name,
                       std::string_view name) {
  if (kind == "Role")
    roles_.erase(key{std::string{namespace_name}, std::string{name}});
  else if (kind == "ClusterRole")
    cluster_roles_.erase(std::string{name});
  else if (kind == "RoleBinding")
    role_bindings_.erase(key{std::string{namespace_name}, std::string{name}});
  else if (kind == "ClusterRoleBinding")
    cluster_role_bindings_.erase(std::string{name});
}

void rbac_index::clear() {
  roles_.clear();
  cluster_roles_.clear();
  role_bindings_.clear();
  cluster_role_bindings_.clear();
}

const rbac_index::role* rbac_index::find_role(std::string_view kind,
                                              std::string_view namespace_name,
                                              std::string_view name) const {
  if (kind == "Role") {
    auto it = roles_.find(key{std::string{namespace_name}, std::string{name}});
    return it == roles_.end() ? nullptr : &it->second;
  }
  if (kind == "ClusterRole") {
    auto it = cluster_roles_.find(name);
    return it == cluster_roles_.end() ? nullptr : &it->second;
  }
  return nullptr;
}

namespace {

// appliesToUser (pkg/registry/rbac/validation/rule.go).
bool applies_to(const user_info& u, std::string_view kind,
                std::string_view name, std::string_view subject_ns,
                std::string_view binding_ns) {
  if (kind == "User")
    return u.username == name;
  if (kind == "Group")
    return has(u.groups, name);
  if (kind == "ServiceAccount") {
    auto ns = subject_ns.empty() ? binding_ns : subject_ns;
    if (ns.empty())
      return false;
    std::string expected{sa_prefix};
    expected.append(ns).append(":").append(name);
    return u.username == expected;
  }
  return false;
}

std::string describe_subject(std::string_view kind, std::string_view name,
                             std::string_view subject_ns,
                             std::string_view binding_ns) {
  std::string k{kind};
  if (kind == "ServiceAccount") {
    auto ns = subject_ns.empty() ? binding_ns : subject_ns;
    return k + " "
           + k8s::go_quote(std::string{name} + "/" + std::string{ns});
  }
  return k + " " + k8s::go_quote(name);
}

// How a lister says a role is missing: the singular, lower-case resource.
std::string missing_role(std::string_view kind, std::string_view name) {
  if (kind == "Role")
    return "role.rbac.authorization.k8s.io " + k8s::go_quote(name)
           + " not found";
  if (kind == "ClusterRole")
    return "clusterrole.rbac.authorization.k8s.io " + k8s::go_quote(name)
           + " not found";
  return "unsupported role reference kind: " + k8s::go_quote(kind);
}

} // namespace

// VisitRulesFor: cluster role bindings first, then the role bindings of the
// namespace. `visit(source, rule, error)` returns false to stop.
template <class Visitor>
void rbac_index::visit_rules(const user_info& user,
                             std::string_view namespace_name,
                             Visitor&& visit) const {
  auto visit_binding = [&](const binding& b, std::string_view binding_ns,
                           const std::string& kind_word) {
    const subject* match = nullptr;
    for (const auto& s : b.subjects)
      if (applies_to(user, s.kind, s.name, s.namespace_name, binding_ns)) {
        match = &s;
        break;
      }
    if (match == nullptr)
      return true;
    const role* r = nullptr;
    if (b.role_kind == "Role" && !binding_ns.empty())
      r = find_role("Role", binding_ns, b.role_name);
    else if (b.role_kind == "ClusterRole")
      r = find_role("ClusterRole", "", b.role_name);
    if (r == nullptr)
      return visit(std::string{}, static_cast<const policy_rule*>(nullptr),
                   missing_role(b.role_kind, b.role_name));
    auto binding_name
        = binding_ns.empty() ? b.name : b.name + "/" + std::string{binding_ns};
    auto source = kind_word + " " + k8s::go_quote(binding_name) + " of "
                  + b.role_kind + " " + k8s::go_quote(b.role_name) + " to "
                  + describe_subject(match->kind, match->name,
                                     match->namespace_name, binding_ns);
    for (const auto& rule : r->rules)
      if (!visit(source, &rule, std::string{}))
        return false;
    return true;
  };
  for (const auto& [name, b] : cluster_role_bindings_)
    if (!visit_binding(b, "", "ClusterRoleBinding"))
      return;
  if (namespace_name.empty())
    return;
  auto first = role_bindings_.lower_bound(
      key{std::string{namespace_name}, std::string{}});
  for (auto it = first;
       it != role_bindings_.end() && std::get<0>(it->first) == namespace_name;
       ++it)
    if (!visit_binding(it->second, namespace_name, "RoleBinding"))
      return;
}

decision rbac_index::authorize(const attributes& attrs) const {
  // The privileged-group authorizer in front of RBAC allows without a
  // reason.
  if (in_masters(attrs.user))
    return decision{true, {}};
  decision d;
  std::vector<std::string> errors;
  visit_rules(attrs.user, attrs.namespace_name,
              [&](const std::string& source, const policy_rule* rule,
                  const std::string& error) {
                if (rule != nullptr && rule_allows(attrs, *rule)) {
                  d.allowed = true;
                  d.reason = "RBAC: allowed by " + source;
                  return false;
                }
                if (!error.empty())
                  errors.push_back(error);
                return true;
              });
  if (!d.allowed && !errors.empty())
    d.reason = "RBAC: " + aggregate(errors);
  return d;
}

std::vector<policy_rule>
rbac_index::rules_for(const user_info& user, std::string_view namespace_name,
                      std::vector<std::string>* errors) const {
  std::vector<policy_rule> out;
  visit_rules(user, namespace_name,
              [&](const std::string&, const policy_rule* rule,
                  const std::string& error) {
                if (rule != nullptr)
                  out.push_back(*rule);
                if (!error.empty() && errors != nullptr)
                  errors->push_back(error);
                return true;
              });
  return out;
}

namespace {

// ConfirmNoEscalation's message (pkg/registry/rbac/validation/rule.go), or
// "" when the owner rules cover `rules`.
std::string escalation_text(const user_info& user,
                            const std::vector<policy_rule>& owner,
                            const std::vector<std::string>& resolution_errors,
                            const std::vector<policy_rule>& rules) {
  auto missing = uncovered(owner, rules);
  if (missing.empty())
    return {};
  std::set<std::string> descriptions; // sets.String.List(): sorted, unique
  for (const auto& r : compact(missing))
    descriptions.insert(compact_string(r));
  std::string list;
  for (const auto& d : descriptions) {
    if (!list.empty())
      list += '\n';
    list += d;
  }
  auto msg = "user " + k8s::go_quote(user.username)
             + " (groups=" + detail::go_quote_list(user.groups)
             + ") is attempting to grant RBAC permissions not currently held:\n"
             + list;
  if (!resolution_errors.empty())
    msg += "; resolution errors: [" + aggregate(resolution_errors) + "]";
  return msg;
}

} // namespace

caf::expected<void> rbac_index::check_role_write(
    const user_info& requester, std::string_view kind, const json& role_object,
    std::string_view namespace_name, const json* old_role) const {
  if (in_masters(requester))
    return {};
  bool cluster = kind == "ClusterRole";
  std::string resource = cluster ? "clusterroles" : "roles";
  auto name = string_at(object_at(role_object, "metadata"), "name");
  std::string ns = cluster ? std::string{} : std::string{namespace_name};
  attributes escalate;
  escalate.user = requester;
  escalate.verb = "escalate";
  escalate.group = rbac_group;
  escalate.resource = resource;
  escalate.namespace_name = ns;
  escalate.name = name;
  if (authorize(escalate).allowed)
    return {};
  if (old_role != nullptr
      && without_gc_fields(role_object, *old_role)
             == without_gc_fields(*old_role, *old_role))
    return {};
  std::vector<policy_rule> rules;
  if (auto it = role_object.find("rules");
      role_object.is_object() && it != role_object.end() && it->is_array())
    for (const auto& r : *it)
      rules.push_back(rule_of(r));
  std::vector<std::string> errors;
  auto owner = rules_for(requester, ns, &errors);
  if (auto text = escalation_text(requester, owner, errors, rules);
      !text.empty())
    return forbidden(rbac_group, resource, name, text);
  // hasAggregationRule: at least one selector, in the new or the old role
  // (dropping the rule of an aggregated role is as strong as setting one).
  auto aggregated = [](const json* r) {
    if (r == nullptr)
      return false;
    const auto& agg = object_at(*r, "aggregationRule");
    auto it = agg.find("clusterRoleSelectors");
    return it != agg.end() && it->is_array() && !it->empty();
  };
  if (cluster && (aggregated(&role_object) || aggregated(old_role))
      && !escalation_text(requester, owner, errors, full_authority()).empty())
    return forbidden(
        rbac_group, resource, name,
        "must have cluster-admin privileges to use the aggregationRule");
  return {};
}

caf::expected<void> rbac_index::check_binding_write(
    const user_info& requester, std::string_view kind,
    const json& binding_object, std::string_view namespace_name,
    const json* old_binding) const {
  if (in_masters(requester))
    return {};
  bool cluster = kind == "ClusterRoleBinding";
  std::string resource = cluster ? "clusterrolebindings" : "rolebindings";
  std::string ns = cluster ? std::string{} : std::string{namespace_name};
  auto name = string_at(object_at(binding_object, "metadata"), "name");
  if (old_binding != nullptr
      && without_gc_fields(binding_object, *old_binding)
             == without_gc_fields(*old_binding, *old_binding))
    return {};
  const auto& ref = object_at(binding_object, "roleRef");
  auto role_kind = string_at(ref, "kind");
  auto role_name = string_at(ref, "name");
  if (role_kind == "Role" || role_kind == "ClusterRole") {
    attributes bind;
    bind.user = requester;
    bind.verb = "bind";
    bind.group = string_at(ref, "apiGroup");
    bind.resource = role_kind == "Role" ? "roles" : "clusterroles";
    bind.namespace_name = ns;
    bind.name = role_name;
    if (authorize(bind).allowed)
      return {};
  }
  const role* r = nullptr;
  if (role_kind == "Role" && !ns.empty())
    r = find_role("Role", ns, role_name);
  else if (role_kind == "ClusterRole")
    r = find_role("ClusterRole", "", role_name);
  if (r == nullptr) {
    if (role_kind != "Role" && role_kind != "ClusterRole") {
      auto message
          = "unsupported role reference kind: " + k8s::go_quote(role_kind);
      auto st = make_status("InternalError", 500,
                            "Internal error occurred: " + message);
      return make_error(k8s::errc::unavailable, st.message, std::move(st));
    }
    std::string res = role_kind == "Role" ? "roles" : "clusterroles";
    auto message = res + ".rbac.authorization.k8s.io "
                   + k8s::go_quote(role_name) + " not found";
    auto st = make_status("NotFound", 404, message, role_name,
                          std::string{rbac_group}, res);
    return make_error(k8s::errc::not_found, std::move(message), std::move(st));
  }
  std::vector<std::string> errors;
  auto owner = rules_for(requester, ns, &errors);
  if (auto text = escalation_text(requester, owner, errors, r->rules);
      !text.empty())
    return forbidden(rbac_group, resource, name, text);
  return {};
}

std::vector<std::string>
impersonated_groups(std::string_view as_user,
                    const std::vector<std::string>& as_groups) {
  std::vector<std::string> groups = as_groups;
  if (groups.empty() && starts_with(as_user, sa_prefix)) {
    auto rest = as_user.substr(sa_prefix.size());
    auto colon = rest.find(':');
    if (colon != std::string_view::npos && colon > 0 && colon + 1 < rest.size()
        && rest.find(':', colon + 1) == std::string_view::npos)
      groups = {"system:serviceaccounts",
                "system:serviceaccounts:" + std::string{rest.substr(0, colon)}};
  }
  if (as_user != anonymous) {
    if (!has(groups, all_authenticated) && !has(groups, all_unauthenticated))
      groups.emplace_back(all_authenticated);
  } else if (!has(groups, all_unauthenticated)) {
    groups.emplace_back(all_unauthenticated);
  }
  return groups;
}

caf::expected<user_info>
rbac_index::impersonate(const user_info& requester, std::string_view as_user,
                        const std::vector<std::string>& as_groups) const {
  if (as_user.empty()) {
    if (as_groups.empty())
      return requester;
    // fmt's %v of the []v1.ObjectReference asked for: Kind, Namespace,
    // Name, UID, APIVersion, ResourceVersion, FieldPath.
    std::string refs;
    for (const auto& g : as_groups)
      refs += (refs.empty() ? "{Group  " : " {Group  ") + g + "    }";
    return bad_request("requested [" + refs + "] without impersonating a user");
  }
  // k8s.io/apiserver pkg/endpoints/filters/impersonation.go: the user (or
  // service account) first, then each group.
  attributes a;
  a.user = requester;
  a.verb = "impersonate";
  a.resource_request = true;
  user_info out;
  out.username = as_user;
  bool service_account = false;
  if (starts_with(as_user, sa_prefix)) {
    auto rest = as_user.substr(sa_prefix.size());
    auto colon = rest.find(':');
    if (colon != std::string_view::npos && colon > 0 && colon + 1 < rest.size()
        && rest.find(':', colon + 1) == std::string_view::npos) {
      service_account = true;
      a.resource = "serviceaccounts";
      a.namespace_name = rest.substr(0, colon);
      a.name = rest.substr(colon + 1);
    }
  }
  if (!service_account) {
    a.resource = "users";
    a.name = as_user;
  }
  if (auto d = authorize(a); !d.allowed)
    return forbidden_error(a, d.reason);
  for (const auto& g : as_groups) {
    attributes ga;
    ga.user = requester;
    ga.verb = "impersonate";
    ga.resource = "groups";
    ga.name = g;
    if (auto d = authorize(ga); !d.allowed)
      return forbidden_error(ga, d.reason);
    out.groups.push_back(g);
  }
  out.groups = impersonated_groups(as_user, as_groups);
  return out;
}

caf::expected<json>
rbac_index::self_subject_access_review(const user_info& user,
                                       const json& review) const {
  const auto& spec = object_at(review, "spec");
  std::vector<status_cause> causes;
  check_attribute_kinds(spec, causes);
  if (!causes.empty())
    return invalid("SelfSubjectAccessReview", std::move(causes));
  auto attrs = review_attributes(spec, user);
  json out_spec = json::object();
  if (attrs.resource_request)
    out_spec["resourceAttributes"]
        = resource_attributes_json(spec["resourceAttributes"]);
  else
    out_spec["nonResourceAttributes"]
        = non_resource_attributes_json(spec["nonResourceAttributes"]);
  return json{{"kind", "SelfSubjectAccessReview"},
              {"apiVersion", "authorization.k8s.io/v1"},
              {"metadata", review_metadata(review)},
              {"spec", std::move(out_spec)},
              {"status", review_status(authorize(attrs))}};
}

caf::expected<json>
rbac_index::subject_access_review(const json& review) const {
  return access_review(review, "SubjectAccessReview");
}

caf::expected<json> rbac_index::access_review(const json& review,
                                              const std::string& kind) const {
  const auto& spec = object_at(review, "spec");
  user_info subject_user;
  subject_user.username = string_at(spec, "user");
  subject_user.uid = string_at(spec, "uid");
  subject_user.groups = strings_at(spec, "groups");
  for (const auto& [k, v] : object_at(spec, "extra").items())
    if (v.is_array())
      for (const auto& x : v)
        if (x.is_string())
          subject_user.extra[k].push_back(x.get<std::string>());
  std::vector<status_cause> causes;
  check_attribute_kinds(spec, causes);
  if (subject_user.username.empty() && subject_user.groups.empty())
    causes.push_back(
        invalid_cause("spec.user", k8s::go_quote(subject_user.username),
                      "at least one of user or group must be specified"));
  if (!causes.empty())
    return invalid(kind, std::move(causes));
  auto attrs = review_attributes(spec, subject_user);
  json out_spec = json::object();
  if (attrs.resource_request)
    out_spec["resourceAttributes"]
        = resource_attributes_json(spec["resourceAttributes"]);
  else
    out_spec["nonResourceAttributes"]
        = non_resource_attributes_json(spec["nonResourceAttributes"]);
  if (!subject_user.username.empty())
    out_spec["user"] = subject_user.username;
  if (!subject_user.groups.empty())
    out_spec["groups"] = subject_user.groups;
  if (spec.contains("extra"))
    out_spec["extra"] = spec["extra"];
  if (!subject_user.uid.empty())
    out_spec["uid"] = subject_user.uid;
  return json{{"kind", kind},
              {"apiVersion", "authorization.k8s.io/v1"},
              {"metadata", review_metadata(review)},
              {"spec", std::move(out_spec)},
              {"status", review_status(authorize(attrs))}};
}

caf::expected<json>
rbac_index::self_subject_rules_review(const user_info& user,
                                      const json& review) const {
  auto ns = string_at(object_at(review, "spec"), "namespace");
  if (ns.empty())
    return bad_request("no namespace on request");
  json resource_rules = json::array();
  json non_resource_rules = json::array();
  auto add = [&](const policy_rule& r) {
    if (!r.resources.empty()) {
      json rr = json::object();
      rr["verbs"] = r.verbs;
      if (!r.api_groups.empty())
        rr["apiGroups"] = r.api_groups;
      rr["resources"] = r.resources;
      if (!r.resource_names.empty())
        rr["resourceNames"] = r.resource_names;
      resource_rules.push_back(std::move(rr));
    }
    if (!r.non_resource_urls.empty())
      non_resource_rules.push_back(
          json{{"verbs", r.verbs}, {"nonResourceURLs", r.non_resource_urls}});
  };
  // Only RBAC resolves rules: the privileged-group authorizer allows
  // system:masters everything but lists nothing (the admin's rules come
  // from the cluster-admin binding).
  std::vector<std::string> errors;
  for (const auto& r : rules_for(user, ns, &errors))
    add(r);
  json st = json::object();
  st["resourceRules"] = std::move(resource_rules);
  st["nonResourceRules"] = std::move(non_resource_rules);
  st["incomplete"] = false;
  if (!errors.empty())
    st["evaluationError"] = aggregate(errors);
  // A new object, not the request's: metadata and spec come back empty.
  return json{{"kind", "SelfSubjectRulesReview"},
              {"apiVersion", "authorization.k8s.io/v1"},
              {"metadata", {{"creationTimestamp", nullptr}}},
              {"spec", json::object()},
              {"status", std::move(st)}};
}

caf::expected<void> rbac_index::check(const attributes& attrs) const {
  auto d = authorize(attrs);
  if (d.allowed)
    return {};
  return forbidden_error(attrs, d.reason);
}

caf::expected<void> rbac_index::check_write(const user_info& requester,
                                            std::string_view resource,
                                            const json& object,
                                            std::string_view namespace_name,
                                            const json* old) const {
  auto kind = kind_of_resource(resource);
  if (kind == "Role" || kind == "ClusterRole")
    return check_role_write(requester, kind, object, namespace_name, old);
  if (kind == "RoleBinding" || kind == "ClusterRoleBinding")
    return check_binding_write(requester, kind, object, namespace_name, old);
  return {};
}

caf::expected<json>
rbac_index::local_subject_access_review(const json& review,
                                        std::string_view namespace_name) const {
  // pkg/registry/authorization/localsubjectaccessreview/rest.go and
  // ValidateLocalSubjectAccessReview.
  const auto& spec = object_at(review, "spec");
  if (spec.contains("nonResourceAttributes")
      && spec["nonResourceAttributes"].is_object()) {
    const auto& n = spec["nonResourceAttributes"];
    return invalid(
        "LocalSubjectAccessReview",
        {invalid_cause("spec.nonResourceAttributes",
                       "authorization.NonResourceAttributes{Path:"
                           + k8s::go_quote(string_at(n, "path")) + ", Verb:"
                           + k8s::go_quote(string_at(n, "verb")) + "}",
                       "disallowed on this kind of request")});
  }
  if (spec.contains("resourceAttributes")) {
    auto ns = string_at(object_at(spec, "resourceAttributes"), "namespace");
    if (ns != namespace_name)
      return bad_request(
          "spec.resourceAttributes.namespace must match namespace: "
          + std::string{namespace_name});
  }
  return access_review(review, "LocalSubjectAccessReview");
}

} // namespace aiperf::k8s::sim::auth
