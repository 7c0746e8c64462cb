#include "k8s/sim/controllers/detail.hpp"

#include <set>

namespace aiperf::k8s::sim::detail {

std::string type_key(const resource_type& t) {
  return t.group + "/" + t.version + "/" + t.resource;
}

std::vector<resource_type> watched_types(const type_registry& reg) {
  std::vector<resource_type> out;
  std::set<std::string> crds_done;
  auto types = reg.types();
  for (const auto* t : types) {
    if (t->virtual_only || !t->serves("list") || !t->serves("watch")
        || !t->serves("delete"))
      continue;
    if (t->group == "events.k8s.io")
      continue;
    if (!t->custom) {
      out.push_back(*t);
      continue;
    }
    if (crds_done.count(t->crd_name))
      continue;
    // The storage version if it is served, else the first served one.
    const resource_type* chosen = t;
    for (const auto* other : types)
      if (other->custom && other->crd_name == t->crd_name && other->storage)
        chosen = other;
    crds_done.insert(t->crd_name);
    out.push_back(*chosen);
  }
  return out;
}

bool established(const json& crd) {
  if (!crd.is_object() || !crd.contains("status") || !crd["status"].is_object())
    return false;
  const auto& conditions = crd["status"].value("conditions", json::array());
  if (!conditions.is_array())
    return false;
  for (const auto& c : conditions)
    if (c.is_object() && c.value("type", "") == "Established")
      return c.value("status", "") == "True";
  return false;
}

resource_ref ref_of(const resource_type& t, const std::string& ns,
                    const std::string& name) {
  return resource_ref{t.group,    t.version,
                      t.resource, t.namespaced ? ns : std::string{},
                      name,       {}};
}

request list_request(const resource_type& t, const std::string& ns) {
  request r;
  r.verb = verb::list;
  r.ref = ref_of(t, ns);
  return r;
}

request watch_request(const resource_type& t,
                      const std::string& resource_version) {
  request r;
  r.verb = verb::watch;
  r.ref = ref_of(t);
  r.resource_version = resource_version;
  r.allow_watch_bookmarks = true;
  return r;
}

request delete_request(const resource_type& t, const std::string& ns,
                       const std::string& name, const std::string& uid,
                       const std::string& policy) {
  request r;
  r.verb = verb::remove;
  r.ref = ref_of(t, ns, name);
  json options = json::object();
  options["kind"] = "DeleteOptions";
  options["apiVersion"] = "v1";
  options["propagationPolicy"] = policy;
  options["preconditions"] = json{{"uid", uid}};
  r.body = options.dump();
  return r;
}

request metadata_patch(const resource_type& t, const std::string& ns,
                       const std::string& name,
                       const std::string& resource_version, const char* field,
                       const json& value) {
  request r;
  r.verb = verb::patch;
  r.patch = patch_type::json;
  r.ref = ref_of(t, ns, name);
  json ops = json::array();
  ops.push_back(json{{"op", "test"},
                     {"path", "/metadata/resourceVersion"},
                     {"value", resource_version}});
  auto path = std::string{"/metadata/"} + field;
  if (value.is_null())
    ops.push_back(json{{"op", "remove"}, {"path", path}});
  else
    ops.push_back(json{{"op", "replace"}, {"path", path}, {"value", value}});
  r.body = ops.dump();
  return r;
}

std::optional<json> parse(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

} // namespace aiperf::k8s::sim::detail
