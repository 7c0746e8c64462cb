#include "k8s/sim/store/store_core.hpp"

#include "k8s/sim/store/pod_security.hpp"

#include "k8s/object/status_json.hpp"
#include "k8s/object/time.hpp"
#include "k8s/sim/builtins/defaults.hpp"
#include "k8s/sim/builtins/known_fields.hpp"
#include "k8s/sim/builtins/tables.hpp"
#include "k8s/sim/schema/schema.hpp"
#include "k8s/sim/store/apply.hpp"
#include "k8s/sim/store/managed_fields.hpp"
#include "k8s/sim/store/patch.hpp"
#include "k8s/sim/store/pod_security.hpp"
#include "k8s/sim/store/scale.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <set>

namespace aiperf::k8s::sim {
namespace {

// --- statuses ---------------------------------------------------------------

std::string what_of(const request& req) {
  std::string out = to_string(req.verb);
  out += ' ';
  out += req.ref.resource;
  if (!req.ref.name.empty())
    out += "/" + req.ref.name;
  if (!req.ref.subresource.empty())
    out += "/" + req.ref.subresource;
  return out;
}

caf::error fail(const request& req, status st) {
  return make_status_error(what_of(req), std::move(st));
}

status_details details_of(const type_view& t, const std::string& name) {
  status_details d;
  d.name = name;
  d.group = t.group;
  d.kind = t.resource;
  return d;
}

status not_found_status(const type_view& t, const std::string& name) {
  return status{"NotFound", 404,
                t.qualified_resource() + " \"" + name + "\" not found",
                details_of(t, name)};
}

status bad_request(std::string message) {
  return status{"BadRequest", 400, std::move(message), {}};
}

// A body without kind: the decoder of a built-in type takes the kind of the
// endpoint (apimachinery runtime/serializer/json: gvkWithDefaults); the
// unstructured decoder of custom resources refuses it with MissingKindErr
// (apimachinery pkg/apis/meta/v1/unstructured: unstructuredJSONScheme).
bool missing_kind(const json& obj) {
  auto it = obj.find("kind");
  return it == obj.end() || !it->is_string() || it->get<std::string>().empty();
}

status internal_error(const std::string& message) {
  status st{"InternalError", 500, "Internal error occurred: " + message, {}};
  st.details.causes.push_back({"", message, ""});
  return st;
}

status conflict_status(const type_view& t, const std::string& name,
                       const std::string& why) {
  return status{"Conflict", 409,
                "Operation cannot be fulfilled on " + t.qualified_resource()
                    + " \"" + name + "\": " + why,
                details_of(t, name)};
}

constexpr std::string_view modified_text
    = "the object has been modified; please apply your changes to the latest "
      "version and try again";

/// The plain-text 404 of an unserved path (see store.hpp).
caf::error unserved() {
  return make_error(errc::not_found, "404 page not found",
                    status{"NotFound",
                           404,
                           "the server could not find the requested resource",
                           {}});
}

std::string qualified_kind(const type_view& t) {
  return t.group.empty() ? t.kind : t.kind + "." + t.group;
}

status method_not_allowed(const type_view& t, const request& req) {
  std::string verb = to_string(req.verb);
  for (auto& c : verb)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  (void)t;
  return status{"MethodNotAllowed",
                405,
                "the server does not allow this method on the requested "
                "resource",
                {}};
}

// --- JSON helpers -----------------------------------------------------------

json sorted(const json& v) {
  if (v.is_object()) {
    std::vector<std::string> keys;
    for (auto it = v.begin(); it != v.end(); ++it)
      keys.push_back(it.key());
    std::sort(keys.begin(), keys.end());
    json out = json::object();
    for (const auto& k : keys)
      out[k] = sorted(v[k]);
    return out;
  }
  if (v.is_array()) {
    json out = json::array();
    for (const auto& e : v)
      out.push_back(sorted(e));
    return out;
  }
  return v;
}

/// Go's field order of ObjectMeta (apimachinery types.go).
constexpr std::array<std::string_view, 15> meta_order{
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields"};

json ordered_meta(const json& meta) {
  json out = json::object();
  for (auto k : meta_order) {
    std::string key{k};
    if (meta.contains(key))
      out[key] = meta[key];
  }
  for (auto it = meta.begin(); it != meta.end(); ++it)
    if (!out.contains(it.key()))
      out[it.key()] = it.value();
  return out;
}

/// Typed built-ins marshal in struct order (kind, apiVersion, metadata,
/// then the type's fields); custom resources are Go maps: sorted keys.
json canonical(const type_view& t, const json& obj) {
  if (t.custom)
    return sorted(obj);
  json out = json::object();
  if (obj.contains("kind"))
    out["kind"] = obj["kind"];
  if (obj.contains("apiVersion"))
    out["apiVersion"] = obj["apiVersion"];
  if (obj.contains("metadata"))
    out["metadata"] = ordered_meta(obj["metadata"]);
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (!out.contains(it.key()))
      out[it.key()] = it.value();
  return out;
}

std::string text_of(const json& v) {
  return v.dump() + "\n";
}

std::string str(const json& obj, std::string_view a, std::string_view b) {
  auto it = obj.find(std::string{a});
  if (it == obj.end() || !it->is_object())
    return {};
  auto jt = it->find(std::string{b});
  if (jt == it->end() || !jt->is_string())
    return {};
  return jt->get<std::string>();
}

std::string meta_str(const json& obj, std::string_view field) {
  return str(obj, "metadata", field);
}

bool parse_rv(const std::string& s, std::uint64_t& out) {
  if (s.empty() || s.size() > 19)
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  out = std::stoull(s);
  return true;
}

caf::expected<json> parse_object(const request& req, std::string_view body) {
  try {
    auto v = json::parse(body);
    if (!v.is_object())
      return fail(req, bad_request("the body of the request was not a JSON "
                                   "object: json: cannot unmarshal "
                                   + std::string{v.type_name()}
                                   + " into Go value of type "
                                     "map[string]interface {}"));
    return v;
  } catch (const json::exception& e) {
    return fail(req, bad_request(std::string{"the body of the request could "
                                             "not be decoded as JSON: "}
                                 + e.what()));
  }
}

bool has_finalizers(const json& obj) {
  auto it = obj.find("metadata");
  if (it == obj.end())
    return false;
  auto f = it->find("finalizers");
  return f != it->end() && f->is_array() && !f->empty();
}

bool being_deleted(const json& obj) {
  auto it = obj.find("metadata");
  return it != obj.end() && it->contains("deletionTimestamp")
         && !(*it)["deletionTimestamp"].is_null();
}

json without(const json& obj, std::initializer_list<std::string_view> keys) {
  json out = obj;
  for (auto k : keys)
    out.erase(std::string{k});
  return out;
}

// base64url without padding, for continue tokens
constexpr char b64[]
    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string b64_encode(std::string_view in) {
  std::string out;
  std::uint32_t buf = 0;
  int bits = 0;
  for (unsigned char c : in) {
    buf = (buf << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += b64[(buf >> bits) & 0x3F];
    }
  }
  if (bits > 0)
    out += b64[(buf << (6 - bits)) & 0x3F];
  return out;
}

std::optional<std::string> b64_decode(std::string_view in) {
  std::string out;
  std::uint32_t buf = 0;
  int bits = 0;
  for (char c : in) {
    const char* p = std::find(b64, b64 + 64, c);
    if (p == b64 + 64) {
      if (c == '=')
        break;
      // standard alphabet too
      if (c == '+')
        p = b64 + 62;
      else if (c == '/')
        p = b64 + 63;
      else
        return std::nullopt;
    }
    buf = (buf << 6) | static_cast<std::uint32_t>(p - b64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buf >> bits) & 0xFF);
    }
  }
  return out;
}

status expired_status(std::uint64_t asked, std::uint64_t oldest) {
  return status{"Expired",
                410,
                "too old resource version: " + std::to_string(asked) + " ("
                    + std::to_string(oldest) + ")",
                {}};
}

} // namespace

// --- construction
// -------------------------------------------------------------

store_core::store_core(store_config cfg, clock_fn now_unix)
    : cfg_(std::move(cfg)), now_unix_(std::move(now_unix)),
      tokens_(cfg_.signing_key.empty() ? auth::random_signing_key()
                                       : cfg_.signing_key),
      random_(std::random_device{}()) {}

type_view store_core::view_of(const resource_type& rt) const {
  type_view t;
  t.group = rt.group;
  t.version = rt.version;
  t.resource = rt.resource;
  t.kind = rt.kind;
  t.list_kind = rt.list_kind;
  t.namespaced = rt.namespaced;
  t.status_subresource = rt.has_status();
  t.has_generation = rt.has_generation;
  t.custom = rt.custom;
  // The strategies that AllowCreateOnUpdate (pkg/registry/core/event,
  // core/endpoint, coordination/lease).
  t.create_on_update
      = !rt.custom
        && ((rt.group.empty()
             && (rt.resource == "events" || rt.resource == "endpoints"))
            || (rt.group == "events.k8s.io" && rt.resource == "events")
            || (rt.group == "coordination.k8s.io" && rt.resource == "leases"));
  t.create_only = rt.virtual_only;
  t.names = rt.name_rule;
  t.field_selectors = rt.selectable_fields;
  t.selector_style = rt.field_style;
  if (rt.custom) {
    auto it = schemas_.find(rt.crd_name + "/" + rt.version);
    if (it != schemas_.end())
      t.schema = it->second;
  }
  t.rt = &rt;
  return t;
}

caf::expected<type_view> store_core::find_type(const resource_ref& ref) const {
  const auto* rt = registry_.find(ref.group, ref.version, ref.resource);
  if (rt == nullptr)
    return unserved();
  // A namespaced object needs its namespace in the path; a cluster-scoped
  // type has none.
  if (!rt->namespaced && !ref.namespace_name.empty())
    return unserved();
  if (rt->namespaced && ref.namespace_name.empty() && !ref.name.empty())
    return unserved();
  if (!ref.subresource.empty()
      && (ref.name.empty() || rt->find_subresource(ref.subresource) == nullptr))
    return unserved();
  return view_of(*rt);
}

void store_core::register_crd(const json& crd) {
  if (!registry_.add_crd(crd))
    return;
  std::string name = crd.value("metadata", json::object()).value("name", "");
  for (auto it = schemas_.begin(); it != schemas_.end();)
    if (it->first.compare(0, name.size() + 1, name + "/") == 0)
      it = schemas_.erase(it);
    else
      ++it;
  for (const auto* rt : registry_.types())
    if (rt->custom && rt->crd_name == name && rt->schema.is_object())
      if (auto compiled = compile_schema(rt->schema, nullptr))
        schemas_[name + "/" + rt->version] = *compiled;
}

void store_core::unregister_crd(const json& crd) {
  std::string name = crd.value("metadata", json::object()).value("name", "");
  registry_.remove_crd(name);
  for (auto it = schemas_.begin(); it != schemas_.end();)
    if (it->first.compare(0, name.size() + 1, name + "/") == 0)
      it = schemas_.erase(it);
    else
      ++it;
}

// --- seeding
// ------------------------------------------------------------------

void store_core::seed() {
  auto admin = admin_user();
  auto run = [&](request req) {
    req.user = admin;
    auto r = handle(req);
    (void)r;
  };
  for (const auto& [resource, objects] :
       {std::pair{"clusterroles", auth::bootstrap_cluster_roles()},
        std::pair{"clusterrolebindings",
                  auth::bootstrap_cluster_role_bindings()}})
    for (const auto& obj : objects) {
      request req;
      req.verb = verb::create;
      req.ref = {"rbac.authorization.k8s.io", "v1", resource, "", "", ""};
      req.body = obj.dump();
      run(req);
    }
  for (const char* ns : {"default", "kube-system", "kube-public"}) {
    request req;
    req.verb = verb::create;
    req.ref = {"", "v1", "namespaces", "", "", ""};
    json obj
        = {{"apiVersion", "v1"},
           {"kind", "Namespace"},
           {"metadata",
            {{"name", ns}, {"labels", {{"kubernetes.io/metadata.name", ns}}}}}};
    req.body = obj.dump();
    run(req);
  }
}

// The serviceaccount controller (kubernetes/kubernetes
// pkg/controller/serviceaccount/serviceaccounts_controller.go) gives every
// namespace its `default` ServiceAccount. Done with the namespace's create,
// so a pod created right after finds it, as ServiceAccount admission
// expects (upstream it retries the lookup of `default` for that reason).
void store_core::create_default_service_account(const std::string& ns) {
  request sa;
  sa.verb = verb::create;
  sa.user = admin_user();
  sa.ref = {"", "v1", "serviceaccounts", ns, "", ""};
  sa.body = json{{"apiVersion", "v1"},
                 {"kind", "ServiceAccount"},
                 {"metadata", {{"name", "default"}, {"namespace", ns}}}}
                .dump();
  auto r = handle(sa);
  (void)r;
}

// root-ca-cert-publisher (kubernetes/kubernetes
// pkg/controller/certificates/rootcacertpublisher/publisher.go): every
// namespace holds the CA bundle pods use to verify the API server.
void store_core::publish_root_ca(const std::string& ns) {
  request cm;
  cm.verb = verb::create;
  cm.user = admin_user();
  cm.ref = {"", "v1", "configmaps", ns, "", ""};
  cm.body = json{{"apiVersion", "v1"},
                 {"kind", "ConfigMap"},
                 {"metadata",
                  {{"name", "kube-root-ca.crt"},
                   {"namespace", ns},
                   {"annotations",
                    {{"kubernetes.io/description",
                      "Contains a CA bundle that can be used to verify the "
                      "kube-apiserver when using internal endpoints such as "
                      "the internal service IP or kubernetes.default.svc. No "
                      "other usage is guaranteed across distributions of "
                      "Kubernetes clusters."}}}}},
                 {"data", {{"ca.crt", cfg_.root_ca_pem}}}}
                .dump();
  auto r = handle(cm);
  (void)r;
}

void store_core::refresh_root_ca() {
  request list;
  list.verb = verb::list;
  list.user = admin_user();
  list.ref = {"", "v1", "namespaces", "", "", ""};
  auto namespaces = handle(list);
  if (!namespaces)
    return;
  auto parsed = json::parse(namespaces->body, nullptr, false);
  if (parsed.is_discarded())
    return;
  for (const auto& item : parsed.value("items", json::array())) {
    std::string ns = meta_str(item, "name");
    const json* cm = find(view_of(*registry_.find("", "v1", "configmaps")), ns,
                          "kube-root-ca.crt");
    if (cm == nullptr
        || cm->value("data", json::object()).value("ca.crt", "")
               == cfg_.root_ca_pem)
      continue;
    request patch;
    patch.verb = verb::patch;
    patch.patch = patch_type::merge;
    patch.user = admin_user();
    patch.ref = {"", "v1", "configmaps", ns, "kube-root-ca.crt", ""};
    patch.body = json{{"data", {{"ca.crt", cfg_.root_ca_pem}}}}.dump();
    auto r = handle(patch);
    (void)r;
  }
}

void store_core::wipe() {
  // What was lost went without events: a watch or list from before the
  // wipe is 410 Expired (as after a compaction), so clients relist.
  history_.clear();
  ++revision_;
  compacted_rv_ = revision_;
  objects_.clear();
  rbac_.clear();
  registry_ = type_registry{};
  schemas_.clear();
  seed();
}

void store_core::replay(const history_event& ev) {
  auto& coll = objects_[ev.storage_key];
  std::string key
      = ev.namespace_name.empty() ? ev.name : ev.namespace_name + "/" + ev.name;
  if (ev.type == "DELETED")
    coll.erase(key);
  else
    coll[key] = ev.object;
  if (coll.empty())
    objects_.erase(ev.storage_key);
  revision_ = std::max(revision_, ev.rv);
  // Watches cannot start before what the log restored.
  compacted_rv_ = revision_;
  index_rbac(ev.storage_key, ev.type, ev.object);
  if (ev.storage_key == "apiextensions.k8s.io/customresourcedefinitions") {
    if (ev.type == "DELETED")
      unregister_crd(ev.object);
    else
      register_crd(ev.object);
  }
}

// --- helpers
// --------------------------------------------------------------------

std::string store_core::key_of(const type_view& t, const std::string& ns,
                               const std::string& name) const {
  return t.namespaced ? ns + "/" + name : name;
}

const json* store_core::find(const type_view& t, const std::string& ns,
                             const std::string& name) const {
  auto c = objects_.find(t.storage_key());
  if (c == objects_.end())
    return nullptr;
  auto it = c->second.find(key_of(t, ns, name));
  return it == c->second.end() ? nullptr : &it->second;
}

json store_core::served(const type_view& t, json object) const {
  object["apiVersion"] = t.api_version();
  return canonical(t, object);
}

std::string store_core::new_uid() {
  std::uniform_int_distribution<int> nibble(0, 15);
  const char* hex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) {
    int v = nibble(random_);
    if (i == 12)
      v = 4;
    if (i == 16)
      v = 8 + (v & 3);
    if (i == 8 || i == 12 || i == 16 || i == 20)
      out += '-';
    out += hex[v];
  }
  return out;
}

std::string store_core::random_suffix() {
  // apimachinery util/rand String: consonants and digits without look-alikes
  static constexpr std::string_view alphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
  std::string out;
  for (int i = 0; i < 5; ++i)
    out += alphabet[pick(random_)];
  return out;
}

void store_core::commit(const type_view& t, const std::string& type,
                        json object, json old_object) {
  history_event ev;
  ev.rv = revision_;
  ev.type = type;
  ev.storage_key = t.storage_key();
  ev.namespace_name = meta_str(object, "namespace");
  ev.name = meta_str(object, "name");
  ev.object = std::move(object);
  ev.old_object = std::move(old_object);
  index_rbac(ev.storage_key, ev.type, ev.object);
  if (ev.storage_key == "rbac.authorization.k8s.io/clusterroles")
    aggregation_due_ = true;
  history_.push_back(ev);
  while (history_.size() > std::max<std::size_t>(cfg_.watch_history, 1)) {
    compacted_rv_ = history_.front().rv;
    history_.pop_front();
  }
  if (on_commit)
    on_commit(history_.back());
}

store_core::collection store_core::snapshot_at(const type_view& t,
                                               std::uint64_t rv) const {
  collection out;
  auto c = objects_.find(t.storage_key());
  if (c != objects_.end())
    out = c->second;
  for (auto it = history_.rbegin(); it != history_.rend() && it->rv > rv;
       ++it) {
    if (it->storage_key != t.storage_key())
      continue;
    auto key = t.namespaced ? it->namespace_name + "/" + it->name : it->name;
    if (it->type == "ADDED")
      out.erase(key);
    else
      out[key] = it->old_object;
  }
  return out;
}

caf::expected<void> store_core::check_namespace(const type_view& t,
                                                const std::string& ns,
                                                const std::string& name) {
  if (!t.namespaced)
    return caf::unit;
  auto nt = view_of(*registry_.find("", "v1", "namespaces"));
  const json* nsobj = find(nt, "", ns);
  if (nsobj == nullptr)
    return make_status_error("create", not_found_status(nt, ns));
  if (being_deleted(*nsobj)) {
    status st{
        "Forbidden", 403,
        t.qualified_resource() + " \"" + name
            + "\" is forbidden: unable to create new content in namespace " + ns
            + " because it is being terminated",
        details_of(t, name)};
    st.details.causes.push_back({"NamespaceTerminating",
                                 "namespace " + ns + " is being terminated",
                                 "metadata.namespace"});
    return make_status_error("create", std::move(st));
  }
  return caf::unit;
}

// --- dispatch
// -------------------------------------------------------------------

caf::expected<response> store_core::handle(const request& original) {
  auto out = serve(original);
  if (aggregation_due_)
    aggregate_cluster_roles();
  return out;
}

// The clusterrole-aggregation controller (kubernetes/kubernetes
// pkg/controller/clusterroleaggregation), run as soon as a ClusterRole
// changes: a ClusterRole with an aggregationRule gets the rules of every
// other ClusterRole its selectors match, by name order, duplicates dropped.
// Written at storage level (MODIFIED) as the controller's own update.
void store_core::aggregate_cluster_roles() {
  for (int round = 0; round < 8 && aggregation_due_; ++round) {
    aggregation_due_ = false;
    const auto* rt
        = registry_.find("rbac.authorization.k8s.io", "v1", "clusterroles");
    if (rt == nullptr)
      return;
    auto t = view_of(*rt);
    auto c = objects_.find(t.storage_key());
    if (c == objects_.end())
      return;
    std::vector<std::pair<std::string, json>> updates;
    for (const auto& [key, role] : c->second) {
      auto rule = role.find("aggregationRule");
      if (rule == role.end() || !rule->is_object())
        continue;
      json rules = json::array();
      for (const auto& sel :
           rule->value("clusterRoleSelectors", json::array())) {
        auto selector = label_selector_from_json(sel);
        if (!selector)
          continue;
        for (const auto& [other_key, other] : c->second) { // sorted by name
          if (other_key == key)
            continue;
          json labels = other.value("metadata", json::object())
                            .value("labels", json::object());
          if (!selector->matches(labels))
            continue;
          for (const auto& r : other.value("rules", json::array()))
            if (std::find(rules.begin(), rules.end(), r) == rules.end())
              rules.push_back(r);
        }
      }
      if (role.value("rules", json::array()) != rules)
        updates.emplace_back(key, rules);
    }
    for (auto& [key, rules] : updates) {
      json next = c->second[key];
      next["rules"] = std::move(rules);
      store_modified(t, key, std::move(next), c->second[key]);
    }
  }
}

caf::expected<response> store_core::serve(const request& original) {
  auto authorized = authorize(original);
  if (!authorized)
    return authorized.error();
  const request& req = *authorized;
  auto t = find_type(req.ref);
  if (!t)
    return t.error();
  if (req.body.size() > max_request_bytes)
    return fail(req, status{"RequestEntityTooLarge",
                            413,
                            "Request entity too large: limit is "
                                + std::to_string(max_request_bytes),
                            {}});
  // Streams and forwarded requests are the front's; the store authorizes
  // them (above) and hands it the object they concern.
  if (req.ref.subresource == "log" || req.ref.subresource == "proxy")
    return pass_through(*t, req);
  if (t->create_only && req.verb != verb::create)
    return fail(req, method_not_allowed(*t, req));
  if (req.ref.subresource == "scale")
    return scale(*t, req);
  switch (req.verb) {
  case verb::get:
    if (req.ref.name.empty())
      return list(*t, req);
    return get(*t, req);
  case verb::list:
    return list(*t, req);
  case verb::watch:
    return fail(req, bad_request("watch requests go to watch_atom"));
  case verb::create:
    return create(*t, req);
  case verb::update:
    return update(*t, req);
  case verb::patch:
    return patch(*t, req);
  case verb::remove:
    return remove(*t, req);
  case verb::remove_collection:
    return remove_collection(*t, req);
  }
  return fail(req, method_not_allowed(*t, req));
}

caf::expected<response> store_core::get(const type_view& t,
                                        const request& req) {
  const json* obj = find(t, req.ref.namespace_name, req.ref.name);
  if (obj == nullptr)
    return fail(req, not_found_status(t, req.ref.name));
  if (req.as_table && t.rt != nullptr)
    return response{200, text_of(to_table(*t.rt, served(t, *obj), now())), {}};
  return response{200, text_of(served(t, *obj)), {}};
}

caf::expected<response> store_core::list(const type_view& t,
                                         const request& req) {
  auto labels = parse_label_selector(req.label_selector);
  if (!labels)
    return labels.error();
  std::vector<std::string> fields{"metadata.name", "metadata.namespace"};
  fields.insert(fields.end(), t.field_selectors.begin(),
                t.field_selectors.end());
  auto field_sel
      = parse_field_selector(req.field_selector, fields, t.selector_style);
  if (!field_sel)
    return field_sel.error();
  // resourceVersion semantics (k8s-semantics 1.9)
  const auto& match = req.resource_version_match;
  if (!match.empty() && req.resource_version.empty()) {
    return fail(req, invalid_status("ListOptions", "meta.k8s.io", "",
                                    {field_forbidden("resourceVersionMatch",
                                                     "resourceVersionMatch is "
                                                     "forbidden unless "
                                                     "resourceVersion is "
                                                     "provided")}));
  }
  if (!match.empty() && match != "Exact" && match != "NotOlderThan")
    return fail(
        req, invalid_status("ListOptions", "meta.k8s.io", "",
                            {field_not_supported("resourceVersionMatch", match,
                                                 {"Exact", "NotOlderThan"})}));
  if (match == "Exact" && req.resource_version == "0")
    return fail(req, invalid_status(
                         "ListOptions", "meta.k8s.io", "",
                         {field_forbidden("resourceVersionMatch",
                                          "resourceVersionMatch \"exact\" is "
                                          "forbidden for resourceVersion "
                                          "\"0\"")}));
  std::uint64_t asked = 0;
  if (!req.resource_version.empty() && !parse_rv(req.resource_version, asked))
    return fail(req, bad_request("invalid resource version \""
                                 + req.resource_version + "\""));
  std::uint64_t at = revision_;
  std::string start;
  if (!req.continue_token.empty()) {
    auto raw = b64_decode(req.continue_token);
    json tok;
    try {
      if (raw)
        tok = json::parse(*raw);
    } catch (...) {
    }
    if (!tok.is_object() || !tok.contains("rv") || !tok["rv"].is_number()
        || !tok.contains("start") || !tok["start"].is_string())
      return fail(req, bad_request("continue key is not valid: incorrect "
                                   "encoded start resourceVersion (version "
                                   "meta.k8s.io/v1)"));
    at = tok["rv"].get<std::uint64_t>();
    start = tok["start"].get<std::string>();
    if (at < compacted_rv_)
      return fail(req,
                  status{"Expired",
                         410,
                         "The provided continue parameter is too old to "
                         "display a consistent list result. You can start a "
                         "new list without the continue parameter.",
                         {}});
  } else {
    bool exact
        = match == "Exact" || (match.empty() && req.limit > 0 && asked != 0);
    if (exact && asked != 0) {
      if (asked < compacted_rv_)
        return fail(req, expired_status(asked, compacted_rv_ + 1));
      if (asked <= revision_)
        at = asked;
    }
    if (asked > revision_)
      return fail(req, [&] {
        status st{"Timeout",
                  504,
                  "Too large resource version: " + std::to_string(asked)
                      + ", current: " + std::to_string(revision_),
                  {}};
        st.details.causes.push_back(
            {"ResourceVersionTooLarge", "Too large resource version", ""});
        st.details.retry_after_seconds = 1;
        return st;
      }());
  }
  auto items = at == revision_ ? [&] {
    auto c = objects_.find(t.storage_key());
    return c == objects_.end() ? collection{} : c->second;
  }()
                               : snapshot_at(t, at);
  json out_items = json::array();
  std::string next;
  std::int64_t remaining = 0;
  bool counting = false;
  std::string prefix = t.namespaced && !req.ref.namespace_name.empty()
                           ? req.ref.namespace_name + "/"
                           : "";
  for (auto it = start.empty() ? items.begin() : items.lower_bound(start);
       it != items.end(); ++it) {
    if (!prefix.empty() && it->first.compare(0, prefix.size(), prefix) != 0)
      continue;
    const json& obj = it->second;
    if (!req.ref.name.empty() && meta_str(obj, "name") != req.ref.name)
      continue;
    json labels_of
        = obj.contains("metadata") && obj["metadata"].contains("labels")
              ? obj["metadata"]["labels"]
              : json();
    if (!labels->matches(labels_of) || !field_sel->matches(obj))
      continue;
    if (counting) {
      ++remaining;
      continue;
    }
    if (req.limit > 0
        && static_cast<std::int64_t>(out_items.size()) >= req.limit) {
      next = it->first;
      counting = true;
      ++remaining;
      continue;
    }
    json item = served(t, obj);
    if (!t.custom) {
      item.erase("kind");
      item.erase("apiVersion");
    }
    out_items.push_back(std::move(item));
  }
  json list_meta = json::object();
  list_meta["resourceVersion"] = std::to_string(at);
  if (!next.empty()) {
    json tok = {{"v", "meta.k8s.io/v1"}, {"rv", at}, {"start", next}};
    list_meta["continue"] = b64_encode(tok.dump());
    if (labels->empty() && field_sel->empty())
      list_meta["remainingItemCount"] = remaining;
  }
  json out = {{"kind", t.list_kind},
              {"apiVersion", t.api_version()},
              {"metadata", list_meta},
              {"items", out_items}};
  if (t.custom)
    out = json{{"apiVersion", t.api_version()},
               {"items", out_items},
               {"kind", t.list_kind},
               {"metadata", list_meta}};
  if (req.as_table && t.rt != nullptr)
    return response{200, text_of(to_table(*t.rt, out, now())), {}};
  return response{200, text_of(out), {}};
}

// --- admission
// --------------------------------------------------------------------

/// The one admission chain every write passes, in kube-apiserver's order:
/// decoding (which applies the defaults) -> mutating admission -> defaulting
/// and schema validation (pruning) -> CEL rules -> validating admission
/// (built-in validation). A later stage sees what the earlier ones made of
/// the object, so a mutation is validated like what the client sent.
caf::expected<json> store_core::admit(const type_view& t, const request& req,
                                      json& object, const json* old,
                                      std::vector<std::string>& warnings) {
  std::vector<status_cause> causes;
  std::string name = meta_str(object, "name");
  // Strict decoding: what the decoder does not know is an error (Strict) or
  // a warning (Warn, the default since fieldValidation went GA) and is
  // dropped either way.
  auto decoding
      = [&](const std::vector<std::string>& unknown) -> caf::expected<void> {
    if (unknown.empty() || req.field_validation == "Ignore")
      return caf::unit;
    if (req.field_validation == "Strict")
      return fail(req, bad_request(strict_decoding_message(unknown)));
    for (auto& w : strict_decoding_warnings(unknown))
      warnings.push_back(std::move(w));
    return caf::unit;
  };
  const bool schema_checked = t.custom && t.schema;
  // 1. decoding applies the defaults: built-ins by their defaulting
  //    functions, custom resources by their CRD's structural schema
  //    (defaults, pruning), as the API server's decoder does.
  if (schema_checked) {
    auto decoded = sim::decode(*t.schema, object);
    if (auto ok = decoding(decoded.unknown_fields); !ok)
      return ok.error();
    causes = std::move(decoded.causes);
  } else if (!t.custom && t.rt != nullptr) {
    if (auto ok = decoding(unknown_fields(*t.rt, object)); !ok)
      return ok.error();
    default_object(*t.rt, object, old == nullptr);
  }
  // The field manager records the decoded object, before admission.
  track_managed_fields(t, req, object, old);
  // 2. mutating admission, for every kind: the built-in plugins
  //    (ServiceAccount, Priority, DefaultStorageClass, ...) on a create, and
  //    the configured one on every write (where webhooks plug in).
  if (auto ok = mutating_admission(t, req, object, old); !ok)
    return ok.error();
  // 3. the schema, defaults again and pruning (as after a webhook's patch),
  //    then the CRD's CEL rules, on the mutated object.
  if (schema_checked && causes.empty()) {
    auto redecoded = sim::decode(*t.schema, object);
    auto checked = sim::validate(*t.schema, object, old);
    for (auto& w : checked.warnings)
      warnings.push_back(std::move(w));
    causes = std::move(redecoded.causes);
    causes.insert(causes.end(), checked.causes.begin(), checked.causes.end());
  }
  // The custom resource validator checks a declared scale's replicas on
  // every write, whichever endpoint it came through (/status: only the
  // status replicas).
  if (t.custom && t.rt != nullptr
      && t.rt->find_subresource("scale") != nullptr) {
    auto more = validate_custom_scale(t.rt->scale, object,
                                      req.ref.subresource == "status");
    causes.insert(causes.end(), more.begin(), more.end());
  }
  // 4. validating admission: RBAC's escalation prevention, then object
  //    metadata and the built-ins' checks.
  if (auto ok = check_rbac_write(t, req, object, old); !ok)
    return ok.error();
  if (t.rt != nullptr) {
    auto more = validate_object(*t.rt, object, old);
    causes.insert(causes.begin(), more.begin(), more.end());
  }
  if (!causes.empty())
    return fail(req, invalid_status(t.kind, t.group, name, std::move(causes)));
  if (auto ok = admit_pod_security(t, req, object, old, warnings); !ok)
    return ok.error();
  // The stored-object limit: etcd refuses a value over its request limit
  // (--max-request-bytes, 1.5 MiB), which kube-apiserver passes on as a 500
  // with etcd's text and no reason (responsewriters ErrorToAPIStatus).
  if (object.dump().size() > max_stored_bytes)
    return fail(req, status{"", 500, "etcdserver: request is too large", {}});
  return object;
}

// managedFields of a write that is not an apply (managed_fields.hpp); an
// in-process caller naming no manager and no user agent is not tracked.
void store_core::track_managed_fields(const type_view& t, const request& req,
                                      json& object, const json* old) {
  if (req.patch == patch_type::apply
      || !(req.ref.subresource.empty() || req.ref.subresource == "status"))
    return;
  update_request ur;
  ur.manager = manager_of(req.field_manager, req.user_agent);
  if (ur.manager.empty()) {
    // An explicit [] still resets them.
    auto meta = object.find("metadata");
    if (meta != object.end() && meta->is_object()
        && meta->contains("managedFields")
        && (*meta)["managedFields"].is_array()
        && (*meta)["managedFields"].empty())
      meta->erase("managedFields");
    return;
  }
  ur.api_version = t.api_version();
  ur.time = format_time(now());
  ur.only_status = req.ref.subresource == "status";
  ur.skip_status = t.status_subresource && !ur.only_status;
  ur.custom = t.custom;
  json entries
      = update_managed_fields(old != nullptr ? *old : json(), object, ur);
  if (!object["metadata"].is_object())
    object["metadata"] = json::object();
  if (entries.empty())
    object["metadata"].erase("managedFields");
  else
    object["metadata"]["managedFields"] = std::move(entries);
}

// --- validating admission: PodSecurity
// ---------------------------------------------------------------

caf::expected<void> store_core::admit_pod_security(
    const type_view& t, const request& req, const json& object,
    const json* old, std::vector<std::string>& warnings) {
  if (t.custom || !req.ref.subresource.empty() || req.ref.namespace_name.empty())
    return caf::unit;
  const bool is_pod = t.group.empty() && t.resource == "pods";
  const json* spec = is_pod ? nullptr
                            : pod_security::template_spec(t.group, t.resource,
                                                          object);
  if (is_pod) {
    if (old != nullptr)
      return caf::unit; // a pod's spec is immutable where it matters
    auto it = object.find("spec");
    spec = it != object.end() ? &*it : nullptr;
  } else if (spec != nullptr && old != nullptr) {
    const json* before = pod_security::template_spec(t.group, t.resource, *old);
    if (before != nullptr && *before == *spec)
      return caf::unit;
  }
  if (spec == nullptr)
    return caf::unit;
  auto ns_type = view_of(*registry_.find("", "v1", "namespaces"));
  const json* ns = find(ns_type, "", req.ref.namespace_name);
  if (ns == nullptr)
    return caf::unit;
  json labels = ns->value("metadata", json::object()).value("labels", json::object());
  auto enforce = pod_security::policy_of(labels, "enforce");
  auto warn = pod_security::policy_of(labels, "warn");
  if (is_pod && enforce) {
    auto v = pod_security::violations(*enforce, *spec);
    if (!v.empty()) {
      std::string name = meta_str(object, "name");
      std::string why = "violates " + pod_security::describe(*enforce, v);
      return fail(req, status{"Forbidden", 403,
                              name.empty() ? "pods is forbidden: " + why
                                           : "pods " + go_quote(name)
                                                 + " is forbidden: " + why,
                              details_of(t, name)});
    }
  }
  // Pods are warned of the warn level; pod templates of both, once each.
  std::vector<std::string> levels;
  if (!is_pod && enforce)
    levels.push_back(*enforce);
  if (warn && std::find(levels.begin(), levels.end(), *warn) == levels.end())
    levels.push_back(*warn);
  for (const auto& level : levels) {
    auto v = pod_security::violations(level, *spec);
    if (!v.empty())
      warnings.push_back("would violate " + pod_security::describe(level, v));
  }
  return caf::unit;
}

// --- mutating admission
// ---------------------------------------------------------------

caf::expected<void> store_core::mutating_admission(const type_view& t,
                                                   const request& req,
                                                   json& object,
                                                   const json* old) {
  if (auto ok = builtin_mutating_admission(t, req, object, old); !ok)
    return ok;
  if (!cfg_.mutating_admission)
    return caf::unit;
  return cfg_.mutating_admission(req, object, old);
}

// The built-in plugins act on the creation of core-group objects only.
caf::expected<void> store_core::builtin_mutating_admission(const type_view& t,
                                                           const request& req,
                                                           json& object,
                                                           const json* old) {
  if (!t.group.empty() || t.custom || t.rt == nullptr || old != nullptr
      || !req.ref.subresource.empty())
    return caf::unit;
  if (t.resource == "pods") {
    if (auto ok = admit_service_account(t, req, object); !ok)
      return ok;
    default_pod_admission(object);
    return admit_priority(t, req, object);
  }
  if (t.resource == "persistentvolumeclaims")
    admit_default_storage_class(object);
  return caf::unit;
}

// kubernetes/kubernetes plugin/pkg/admission/serviceaccount/admission.go
// (Admit, on create): the pod's ServiceAccount must exist; unless the pod
// or the account opts out, every container and init container mounts a
// projected `kube-api-access-<5>` volume of a bound token, the cluster CA
// and the namespace at /var/run/secrets/kubernetes.io/serviceaccount; the
// account's imagePullSecrets are copied when the pod names none.
caf::expected<void> store_core::admit_service_account(const type_view& t,
                                                      const request& req,
                                                      json& pod) {
  auto annotations = pod.value("metadata", json::object())
                         .value("annotations", json::object());
  // Mirror pods are the kubelet's; their spec is left alone.
  if (annotations.is_object()
      && annotations.contains("kubernetes.io/config.mirror"))
    return caf::unit;
  json& spec = pod["spec"];
  if (!spec.is_object())
    spec = json::object();
  std::string account = spec.value("serviceAccountName", "");
  if (account.empty()) {
    account = "default";
    spec["serviceAccountName"] = account;
  }
  const std::string& ns = req.ref.namespace_name;
  auto sa_type = view_of(*registry_.find("", "v1", "serviceaccounts"));
  const json* sa = find(sa_type, ns, account);
  if (sa == nullptr) {
    std::string name = meta_str(pod, "name");
    std::string why = "error looking up service account " + ns + "/" + account
                      + ": serviceaccount " + go_quote(account) + " not found";
    status st{"Forbidden", 403,
              name.empty()
                  ? t.resource + " is forbidden: " + why
                  : t.resource + " " + go_quote(name) + " is forbidden: " + why,
              details_of(t, name)};
    return fail(req, std::move(st));
  }
  bool automount = true;
  if (auto it = spec.find("automountServiceAccountToken");
      it != spec.end() && it->is_boolean())
    automount = it->get<bool>();
  else if (auto jt = sa->find("automountServiceAccountToken");
           jt != sa->end() && jt->is_boolean())
    automount = jt->get<bool>();
  if (automount) {
    static constexpr std::string_view mount_path
        = "/var/run/secrets/kubernetes.io/serviceaccount";
    json& volumes = spec["volumes"];
    if (!volumes.is_array())
      volumes = json::array();
    std::string volume_name;
    for (const auto& v : volumes) {
      std::string n = v.is_object() ? v.value("name", "") : "";
      if (n.rfind("kube-api-access-", 0) == 0) {
        volume_name = n;
        break;
      }
    }
    bool has_volume = !volume_name.empty();
    if (!has_volume)
      volume_name = "kube-api-access-" + random_suffix();
    bool needs_volume = false;
    for (const char* list : {"initContainers", "containers"}) {
      auto it = spec.find(list);
      if (it == spec.end() || !it->is_array())
        continue;
      for (auto& c : *it) {
        if (!c.is_object())
          continue;
        json& mounts = c["volumeMounts"];
        if (!mounts.is_array())
          mounts = json::array();
        bool mounted
            = std::any_of(mounts.begin(), mounts.end(), [](const json& m) {
                return m.is_object() && m.value("mountPath", "") == mount_path;
              });
        if (mounted)
          continue;
        mounts.push_back({{"name", volume_name},
                          {"readOnly", true},
                          {"mountPath", std::string{mount_path}}});
        needs_volume = true;
      }
    }
    if (!has_volume && needs_volume)
      volumes.push_back(
          {{"name", volume_name},
           {"projected",
            {{"sources",
              json::array(
                  {{{"serviceAccountToken",
                     {{"expirationSeconds", 3607}, {"path", "token"}}}},
                   {{"configMap",
                     {{"name", "kube-root-ca.crt"},
                      {"items", json::array({{{"key", "ca.crt"},
                                              {"path", "ca.crt"}}})}}}},
                   {{"downwardAPI",
                     {{"items",
                       json::array(
                           {{{"path", "namespace"},
                             {"fieldRef",
                              {{"apiVersion", "v1"},
                               {"fieldPath", "metadata.namespace"}}}}})}}}}})},
             {"defaultMode", 420}}}});
    if (volumes.empty())
      spec.erase("volumes");
    for (const char* list : {"initContainers", "containers"})
      if (auto it = spec.find(list); it != spec.end() && it->is_array())
        for (auto& c : *it)
          if (c.is_object() && c.contains("volumeMounts")
              && c["volumeMounts"].empty())
            c.erase("volumeMounts");
  }
  auto pull = spec.find("imagePullSecrets");
  if (pull == spec.end() || !pull->is_array() || pull->empty()) {
    auto secrets = sa->value("imagePullSecrets", json::array());
    if (secrets.is_array() && !secrets.empty()) {
      json names = json::array();
      for (const auto& s : secrets)
        if (s.is_object())
          names.push_back({{"name", s.value("name", "")}});
      spec["imagePullSecrets"] = std::move(names);
    }
  }
  return caf::unit;
}

// kubernetes/kubernetes plugin/pkg/admission/priority (admitPod, on
// create): the pod's PriorityClass gives spec.priority and
// preemptionPolicy; without one, the globalDefault class (the lowest
// value if several) or priority 0 and PreemptLowerPriority. A missing
// class, or a priority the pod sets itself that differs, is 403.
caf::expected<void> store_core::admit_priority(const type_view& t,
                                               const request& req, json& pod) {
  json& spec = pod["spec"];
  std::string class_name = spec.value("priorityClassName", "");
  std::int64_t priority = 0;
  std::string policy = "PreemptLowerPriority";
  auto forbidden = [&](const std::string& why) {
    std::string name = meta_str(pod, "name");
    status st{"Forbidden", 403,
              name.empty()
                  ? t.resource + " is forbidden: " + why
                  : t.resource + " " + go_quote(name) + " is forbidden: " + why,
              details_of(t, name)};
    return fail(req, std::move(st));
  };
  const json* pc = nullptr;
  if (const auto* rt
      = registry_.find("scheduling.k8s.io", "v1", "priorityclasses")) {
    auto c = objects_.find(view_of(*rt).storage_key());
    if (c != objects_.end()) {
      if (!class_name.empty()) {
        auto it = c->second.find(class_name);
        if (it != c->second.end())
          pc = &it->second;
      } else {
        for (const auto& [key, obj] : c->second)
          if (obj.value("globalDefault", false)
              && (pc == nullptr
                  || obj.value("value", std::int64_t{0})
                         < pc->value("value", std::int64_t{0})))
            pc = &obj;
      }
    }
  }
  if (!class_name.empty() && pc == nullptr)
    return forbidden("no PriorityClass with name " + class_name + " was found");
  if (pc != nullptr) {
    priority = pc->value("value", std::int64_t{0});
    policy = pc->value("preemptionPolicy", policy);
    if (class_name.empty())
      spec["priorityClassName"] = meta_str(*pc, "name");
  }
  if (auto it = spec.find("priority"); it != spec.end()
                                       && it->is_number_integer()
                                       && it->get<std::int64_t>() != priority)
    return forbidden("the integer value of priority ("
                     + std::to_string(it->get<std::int64_t>())
                     + ") must not be provided in pod spec; priority admission "
                       "controller computed "
                     + std::to_string(priority)
                     + " from the given PriorityClass name");
  spec["priority"] = priority;
  if (pc != nullptr && pc->contains("preemptionPolicy")) {
    std::string asked = spec.value("preemptionPolicy", "");
    if (!asked.empty() && asked != policy)
      return forbidden("the string value of PreemptionPolicy (" + asked
                       + ") must not be provided in pod spec; priority "
                         "admission controller computed "
                       + policy + " from the given PriorityClass name");
  }
  if (spec.value("preemptionPolicy", "").empty())
    spec["preemptionPolicy"] = policy;
  return caf::unit;
}

// kubernetes/kubernetes plugin/pkg/admission/storage/storageclass/
// setdefault (and pkg/volume/util GetDefaultClass): a claim that names no
// class (neither spec.storageClassName, even "", nor the beta annotation)
// gets the default StorageClass — the newest of those annotated
// is-default-class "true", ties broken by name.
void store_core::admit_default_storage_class(json& pvc) {
  auto annotations = pvc.value("metadata", json::object())
                         .value("annotations", json::object());
  json& spec = pvc["spec"];
  if (!spec.is_object())
    spec = json::object();
  if ((spec.contains("storageClassName") && !spec["storageClassName"].is_null())
      || (annotations.is_object()
          && annotations.contains("volume.beta.kubernetes.io/storage-class")))
    return;
  const auto* rt = registry_.find("storage.k8s.io", "v1", "storageclasses");
  if (rt == nullptr)
    return;
  auto c = objects_.find(view_of(*rt).storage_key());
  if (c == objects_.end())
    return;
  const json* best = nullptr;
  for (const auto& [key, sc] : c->second) {
    auto a = sc.value("metadata", json::object())
                 .value("annotations", json::object());
    if (!a.is_object())
      continue;
    auto is_default = [&](const char* k) {
      auto it = a.find(k);
      return it != a.end() && it->is_string()
             && it->get<std::string>() == "true";
    };
    if (!is_default("storageclass.kubernetes.io/is-default-class")
        && !is_default("storageclass.beta.kubernetes.io/is-default-class"))
      continue;
    if (best == nullptr) {
      best = &sc;
      continue;
    }
    auto created = meta_str(sc, "creationTimestamp");
    auto best_created = meta_str(*best, "creationTimestamp");
    if (created > best_created
        || (created == best_created
            && meta_str(sc, "name") < meta_str(*best, "name")))
      best = &sc;
  }
  if (best != nullptr)
    spec["storageClassName"] = meta_str(*best, "name");
}

// --- create
// -------------------------------------------------------------------------

caf::expected<response> store_core::create(const type_view& t,
                                           const request& req) {
  if (!req.ref.name.empty() && req.ref.subresource.empty())
    return fail(req, method_not_allowed(t, req));
  auto body = parse_object(req, req.body);
  if (!body)
    return body.error();
  if (req.ref.subresource == "binding" && t.group.empty()
      && t.resource == "pods")
    return bind(t, req, std::move(*body));
  if (req.ref.subresource == "token" || t.create_only)
    return review(t, req, std::move(*body));
  json obj = std::move(*body);
  if (missing_kind(obj)) {
    if (t.custom)
      return fail(
          req, bad_request("Object 'Kind' is missing in '" + req.body + "'"));
    obj["kind"] = t.kind;
  }
  if (obj["kind"] != t.kind)
    return fail(req,
                bad_request("the object provided is unrecognized (must "
                            "be of type "
                            + t.kind + "): " + obj["kind"].get<std::string>()));
  if (!obj.contains("metadata") || !obj["metadata"].is_object())
    obj["metadata"] = json::object();
  auto& meta = obj["metadata"];
  if (t.namespaced) {
    auto ns = meta.value("namespace", "");
    if (ns.empty())
      meta["namespace"] = req.ref.namespace_name;
    else if (ns != req.ref.namespace_name)
      return fail(req, bad_request("the namespace of the provided object does "
                                   "not match the namespace sent on the "
                                   "request"));
  } else {
    meta.erase("namespace");
  }
  if (meta.contains("resourceVersion") && meta["resourceVersion"].is_string()
      && !meta["resourceVersion"].get<std::string>().empty())
    return fail(req, internal_error("resourceVersion should not be set on "
                                    "objects to be created"));
  std::string name = meta.value("name", "");
  if (name.empty() && meta.contains("generateName")
      && meta["generateName"].is_string()
      && !meta["generateName"].get<std::string>().empty()) {
    name = meta["generateName"].get<std::string>() + random_suffix();
    meta["name"] = name;
  }
  if (auto ok = check_namespace(t, req.ref.namespace_name, name); !ok)
    return ok.error();
  // FillObjectMetaSystemFields and the strategies' PrepareForCreate.
  meta["uid"] = new_uid();
  meta["creationTimestamp"] = format_time(now());
  meta.erase("deletionTimestamp");
  meta.erase("deletionGracePeriodSeconds");
  meta.erase("resourceVersion");
  if (t.has_generation)
    meta["generation"] = 1;
  // PrepareForCreate: status is the server's (Nodes excepted: a kubelet
  // registers its node with its status).
  if (t.status_subresource && !(t.group.empty() && t.resource == "nodes"))
    obj.erase("status");
  obj["apiVersion"] = t.api_version();
  std::vector<std::string> warnings;
  auto admitted = admit(t, req, obj, nullptr, warnings);
  if (!admitted)
    return admitted.error();
  obj = std::move(*admitted);
  if (t.resource == "customresourcedefinitions") {
    // CRD names must be <plural>.<group>; the schema of every version must
    // compile (SCHEMA answers with the failing rule).
    auto spec = obj.value("spec", json::object());
    std::string expected
        = spec.value("names", json::object()).value("plural", "") + "."
          + spec.value("group", "");
    std::vector<status_cause> causes;
    if (name != expected)
      causes.push_back(field_invalid("metadata.name", name,
                                     "must be spec.names.plural+\".\"+spec."
                                     "group"));
    auto versions = spec.value("versions", json::array());
    for (std::size_t i = 0; i < versions.size(); ++i) {
      const auto& v = versions[i];
      if (v.contains("schema") && v["schema"].contains("openAPIV3Schema")) {
        std::string prefix = versions.size() == 1
                                 ? "spec.validation.openAPIV3Schema"
                                 : "spec.versions[" + std::to_string(i)
                                       + "].schema.openAPIV3Schema";
        auto compiled
            = compile_schema(v["schema"]["openAPIV3Schema"], &causes, prefix);
        (void)compiled;
      }
    }
    if (!causes.empty())
      return fail(req,
                  invalid_status(t.kind, t.group, name, std::move(causes)));
    auto accepted = spec.value("names", json::object());
    if (!accepted.contains("singular") && accepted.contains("kind")) {
      std::string s = accepted["kind"].get<std::string>();
      for (auto& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      accepted["singular"] = s;
    }
    if (!accepted.contains("listKind") && accepted.contains("kind"))
      accepted["listKind"] = accepted["kind"].get<std::string>() + "List";
    std::string ts = format_time(now());
    obj["status"] = {
        {"conditions",
         json::array({{{"type", "NamesAccepted"},
                       {"status", "True"},
                       {"lastTransitionTime", ts},
                       {"reason", "NoConflicts"},
                       {"message", "no conflicts found"}},
                      {{"type", "Established"},
                       {"status", "True"},
                       {"lastTransitionTime", ts},
                       {"reason", "InitialNamesAccepted"},
                       {"message", "the initial names have been accepted"}}})},
        {"acceptedNames", accepted},
        {"storedVersions", json::array()}};
    for (const auto& v : versions)
      if (v.value("storage", false))
        obj["status"]["storedVersions"].push_back(v.value("name", ""));
  }
  if (find(t, req.ref.namespace_name, name) != nullptr) {
    status st{"AlreadyExists", 409,
              t.qualified_resource() + " \"" + name + "\" already exists",
              details_of(t, name)};
    if (meta_str(obj, "generateName").size() > 0
        && req.body.find("\"name\"") == std::string::npos)
      st.details.retry_after_seconds = 1;
    return fail(req, std::move(st));
  }
  if (t.resource == "customresourcedefinitions"
      && t.group == "apiextensions.k8s.io") {
    // Another CRD serving the same group and plural, or names the registry
    // cannot serve, refuse the create.
    type_registry trial = registry_;
    if (auto ok = trial.add_crd(obj); !ok) {
      const auto* st = status_of(ok.error());
      return fail(req, st != nullptr
                           ? *st
                           : invalid_status(
                               t.kind, t.group, name,
                               {field_invalid("spec.names", name,
                                              error_message(ok.error()))}));
    }
  }
  if (req.dry_run) {
    obj["metadata"].erase("resourceVersion");
    return response{201, text_of(served(t, obj)), std::move(warnings)};
  }
  ++revision_;
  obj["metadata"]["resourceVersion"] = std::to_string(revision_);
  obj = canonical(t, obj);
  objects_[t.storage_key()][key_of(t, req.ref.namespace_name, name)] = obj;
  if (t.resource == "customresourcedefinitions")
    register_crd(obj);
  commit(t, "ADDED", obj, json());
  if (t.resource == "namespaces" && t.group.empty()) {
    publish_root_ca(name);
    create_default_service_account(name);
  }
  return response{201, text_of(served(t, obj)), std::move(warnings)};
}

caf::expected<response> store_core::review(const type_view& t,
                                           const request& req, json body) {
  // Reviews are answered, never stored.
  if (req.ref.subresource == "token")
    return token_request(t, req, std::move(body));
  caf::expected<json> answer = json();
  if (t.resource == "tokenreviews") {
    auto spec = body.value("spec", json::object());
    std::string token = spec.value("token", "");
    std::vector<std::string> audiences;
    for (const auto& a : spec.value("audiences", json::array()))
      if (a.is_string())
        audiences.push_back(a.get<std::string>());
    caf::expected<auth::token_claims> outcome
        = tokens_.verify(token, now(), audiences);
    if (outcome) {
      auto sa_type = view_of(*registry_.find("", "v1", "serviceaccounts"));
      auto pod_type = view_of(*registry_.find("", "v1", "pods"));
      const json* sa
          = find(sa_type, outcome->namespace_name, outcome->service_account);
      const json* pod
          = outcome->pod_name.empty()
                ? nullptr
                : find(pod_type, outcome->namespace_name, outcome->pod_name);
      if (auto ok = auth::check_bound_objects(*outcome, sa, pod, now()); !ok)
        outcome = ok.error();
    }
    answer
        = auth::token_review_response(body, outcome, tokens_.api_audiences());
  } else if (t.resource == "selfsubjectaccessreviews") {
    answer = rbac_.self_subject_access_review(req.user, body);
  } else if (t.resource == "selfsubjectrulesreviews") {
    answer = rbac_.self_subject_rules_review(req.user, body);
  } else if (t.resource == "subjectaccessreviews") {
    answer = rbac_.subject_access_review(body);
  } else if (t.resource == "selfsubjectreviews") {
    // kubectl auth whoami: the identity after impersonation.
    answer = auth::self_subject_review(req.user, now());
  } else {
    return fail(req, method_not_allowed(t, req));
  }
  if (!answer)
    return answer.error();
  return response{201, text_of(*answer), {}};
}

caf::expected<response>
store_core::token_request(const type_view& t, const request& req, json body) {
  const json* sa = find(t, req.ref.namespace_name, req.ref.name);
  if (sa == nullptr)
    return fail(req, not_found_status(t, req.ref.name));
  auth::token_request_context ctx;
  ctx.namespace_name = req.ref.namespace_name;
  ctx.service_account = req.ref.name;
  ctx.service_account_uid = meta_str(*sa, "uid");
  ctx.now_unix = now();
  ctx.token_id = new_uid();
  auto bound = body.value("spec", json::object())
                   .value("boundObjectRef", json::object());
  if (bound.value("kind", "") == "Pod") {
    auto pod_type = view_of(*registry_.find("", "v1", "pods"));
    ctx.bound_pod
        = find(pod_type, req.ref.namespace_name, bound.value("name", ""));
  }
  auto claims = tokens_.token_request_claims(body, ctx);
  if (!claims)
    return claims.error();
  auto token = tokens_.issue(*claims);
  return response{
      201, text_of(auth::token_request_response(body, token, *claims)), {}};
}

// --- pods/binding, log and proxy
// -----------------------------------------------------------

// BindingREST.Create (kubernetes/kubernetes pkg/registry/core/pod/storage/
// storage.go): validated by hand, then a storage-level update of the pod —
// no admission, no update validation — under the binding's uid and
// resourceVersion as preconditions. A refusal that is not already a status
// is a 409 on "pods/binding".
caf::expected<response> store_core::bind(const type_view& t, const request& req,
                                         json body) {
  if (missing_kind(body))
    body["kind"] = "Binding";
  if (body["kind"] != "Binding")
    return fail(req, bad_request("the object provided is unrecognized (must "
                                 "be of type Binding): "
                                 + body["kind"].get<std::string>()));
  const std::string& name = req.ref.name;
  std::string ns = meta_str(body, "namespace");
  if (!ns.empty() && ns != req.ref.namespace_name)
    return fail(req, bad_request("the namespace of the provided object does "
                                 "not match the namespace sent on the "
                                 "request"));
  if (meta_str(body, "name") != name)
    return fail(req, bad_request("name in URL does not match name in Binding "
                                 "object"));
  json target = body.value("target", json::object());
  if (!target.is_object())
    target = json::object();
  std::string kind = target.value("kind", "");
  std::string node = target.value("name", "");
  // ValidatePodBinding's errors are a plain aggregate, not a status: the
  // handler answers them as an unknown 500 carrying their text.
  std::vector<status_cause> causes;
  if (!kind.empty() && kind != "Node")
    causes.push_back(
        field_not_supported("target.kind", kind, {"Node", "<empty>"}));
  if (node.empty())
    causes.push_back(field_required("target.name"));
  if (!causes.empty())
    return fail(req, status{"", 500, aggregate_text(causes), {}});
  const json* stored = find(t, req.ref.namespace_name, name);
  if (stored == nullptr)
    return fail(req, not_found_status(t, name));
  auto refuse = [&](const std::string& why) {
    status st{"Conflict",
              409,
              "Operation cannot be fulfilled on pods/binding \"" + name
                  + "\": " + why,
              {}};
    st.details.name = name;
    st.details.kind = "pods/binding";
    return fail(req, std::move(st));
  };
  // Storage preconditions fail as a conflict on the pod itself.
  std::string want_uid = meta_str(body, "uid");
  std::string want_rv = meta_str(body, "resourceVersion");
  if (!want_uid.empty() && want_uid != meta_str(*stored, "uid"))
    return fail(req, conflict_status(t, name,
                                     "Precondition failed: UID in "
                                     "precondition: "
                                         + want_uid + ", UID in object meta: "
                                         + meta_str(*stored, "uid")));
  if (!want_rv.empty() && want_rv != meta_str(*stored, "resourceVersion"))
    return fail(req, conflict_status(
                         t, name,
                         "Precondition failed: ResourceVersion in "
                         "precondition: "
                             + want_rv + ", ResourceVersion in object meta: "
                             + meta_str(*stored, "resourceVersion")));
  if (being_deleted(*stored))
    return refuse("pod " + name
                  + " is being deleted, cannot be assigned to a host");
  json spec = stored->value("spec", json::object());
  std::string assigned = spec.value("nodeName", "");
  if (!assigned.empty())
    return refuse("pod " + name + " is already assigned to node "
                  + go_quote(assigned));
  auto gates = spec.find("schedulingGates");
  if (gates != spec.end() && gates->is_array() && !gates->empty())
    return refuse("pod " + name + " has non-empty .spec.schedulingGates");
  json next = *stored;
  next["spec"]["nodeName"] = node;
  auto annotations = body.value("metadata", json::object())
                         .value("annotations", json::object());
  if (annotations.is_object() && !annotations.empty()) {
    json& into = next["metadata"]["annotations"];
    if (!into.is_object())
      into = json::object();
    for (auto it = annotations.begin(); it != annotations.end(); ++it)
      into[it.key()] = it.value();
  }
  // podutil.UpdatePodCondition: the transition time moves only when the
  // status does; reason and message go.
  json condition = {{"type", "PodScheduled"},
                    {"status", "True"},
                    {"lastProbeTime", nullptr},
                    {"lastTransitionTime", format_time(now())}};
  json& status_obj = next["status"];
  if (!status_obj.is_object())
    status_obj = json::object();
  json& conditions = status_obj["conditions"];
  if (!conditions.is_array())
    conditions = json::array();
  bool found = false;
  for (auto& c : conditions)
    if (c.is_object() && c.value("type", "") == "PodScheduled") {
      if (c.value("status", "") == "True" && c.contains("lastTransitionTime"))
        condition["lastTransitionTime"] = c["lastTransitionTime"];
      c = condition;
      found = true;
    }
  if (!found)
    conditions.push_back(condition);
  if (!req.dry_run)
    store_modified(t, key_of(t, req.ref.namespace_name, name), std::move(next),
                   *stored);
  return response{
      201,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201})"
      "\n",
      {}};
}

json store_core::store_modified(const type_view& t, const std::string& key,
                                json next, const json& old) {
  ++revision_;
  next["metadata"]["resourceVersion"] = std::to_string(revision_);
  next = canonical(t, next);
  json before = old;
  objects_[t.storage_key()][key] = next;
  commit(t, "MODIFIED", next, std::move(before));
  return next;
}

// pods/log, pods/proxy and services/proxy: authorized as the subresource
// with the verb of the HTTP method; the answer is the pod or service, whose
// address and status the front needs to stream the log or forward the
// request. A proxy name may carry a scheme and port
// (`[scheme:]name[:port]`, apimachinery util/net SplitSchemeNamePort).
caf::expected<response> store_core::pass_through(const type_view& t,
                                                 const request& req) {
  const auto* sub
      = t.rt != nullptr ? t.rt->find_subresource(req.ref.subresource) : nullptr;
  std::string verb_name = to_string(req.verb);
  if (sub == nullptr
      || std::find(sub->verbs.begin(), sub->verbs.end(), verb_name)
             == sub->verbs.end())
    return fail(req, method_not_allowed(t, req));
  std::string name = req.ref.name;
  if (req.ref.subresource == "proxy") {
    std::vector<std::string> parts;
    std::size_t from = 0;
    for (;;) {
      auto colon = name.find(':', from);
      parts.push_back(name.substr(from, colon - from));
      if (colon == std::string::npos)
        break;
      from = colon + 1;
    }
    if (parts.size() == 2)
      name = parts[0];
    else if (parts.size() == 3)
      name = parts[1];
    else if (parts.size() > 3)
      return fail(req, bad_request(std::string{"invalid "}
                                   + (t.resource == "pods" ? "pod" : "service")
                                   + " request " + go_quote(req.ref.name)));
  }
  const json* obj = find(t, req.ref.namespace_name, name);
  if (obj == nullptr)
    return fail(req, not_found_status(t, name));
  return response{200, text_of(served(t, *obj)), {}};
}

caf::expected<request> store_core::authorize(const request& original) {
  request req = original;
  if (!req.impersonate_user.empty() || !req.impersonate_groups.empty()) {
    auto as = rbac_.impersonate(req.user, req.impersonate_user,
                                req.impersonate_groups);
    if (!as)
      return as.error();
    req.user = std::move(*as);
    req.impersonate_user.clear();
    req.impersonate_groups.clear();
  }
  auto attrs = auth::attributes_of(req, req.user);
  if (!rbac_.allowed(attrs))
    return auth::forbidden_error(attrs);
  return req;
}

caf::expected<void> store_core::check_rbac_write(const type_view& t,
                                                 const request& req,
                                                 const json& object,
                                                 const json* old) {
  if (t.group != "rbac.authorization.k8s.io" || t.custom)
    return caf::unit;
  if (t.kind == "Role" || t.kind == "ClusterRole")
    return rbac_.check_role_write(req.user, t.kind, object,
                                  req.ref.namespace_name);
  return rbac_.check_binding_write(req.user, t.kind, object,
                                   req.ref.namespace_name, old);
}

void store_core::index_rbac(const std::string& storage_key,
                            const std::string& type, const json& object) {
  static constexpr std::string_view prefix = "rbac.authorization.k8s.io/";
  if (storage_key.compare(0, prefix.size(), prefix) != 0)
    return;
  std::string kind = object.value("kind", "");
  if (!auth::rbac_index::is_rbac_kind(kind))
    return;
  if (type == "DELETED")
    rbac_.erase(kind, meta_str(object, "namespace"), meta_str(object, "name"));
  else
    rbac_.upsert(kind, object);
}

// --- update
// ---------------------------------------------------------------------------

caf::expected<store_core::write_result>
store_core::write_update(const type_view& t, const request& req, json stored,
                         json updated, bool allow_create) {
  (void)allow_create;
  const std::string& name = req.ref.name;
  if (!updated.contains("metadata") || !updated["metadata"].is_object())
    updated["metadata"] = json::object();
  auto& meta = updated["metadata"];
  const auto& old_meta = stored["metadata"];
  // Optimistic concurrency: a resourceVersion that is set must be current.
  std::string rv = meta.value("resourceVersion", "");
  if (rv.empty() && t.custom)
    return fail(req, invalid_status(t.kind, t.group, name,
                                    {field_invalid_rendered(
                                        "metadata.resourceVersion", "0x0",
                                        "must be specified for an "
                                        "update")}));
  if (!rv.empty() && rv != old_meta.value("resourceVersion", ""))
    return fail(req, conflict_status(t, name, std::string{modified_text}));
  // rest.BeforeUpdate: system fields come from the stored object.
  if (old_meta.contains("generation"))
    meta["generation"] = old_meta["generation"];
  else
    meta.erase("generation");
  if (!meta.contains("uid") || meta["uid"] == "")
    meta["uid"] = old_meta.value("uid", "");
  meta["creationTimestamp"] = old_meta.value("creationTimestamp", "");
  if (old_meta.contains("deletionTimestamp"))
    meta["deletionTimestamp"] = old_meta["deletionTimestamp"];
  if (old_meta.contains("deletionGracePeriodSeconds")
      && !meta.contains("deletionGracePeriodSeconds"))
    meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"];
  meta["resourceVersion"] = old_meta.value("resourceVersion", "");
  json managed = meta.value("managedFields", json());
  updated["apiVersion"] = stored.value("apiVersion", t.api_version());
  updated["kind"] = t.kind;
  bool status_write = req.ref.subresource == "status";
  if (status_write) {
    // /status takes status (and nothing else) from the request.
    json next = stored;
    if (updated.contains("status"))
      next["status"] = updated["status"];
    else
      next.erase("status");
    if (!managed.is_null())
      next["metadata"]["managedFields"] = managed;
    updated = std::move(next);
  } else if (req.ref.subresource == "finalize") {
    json next = stored;
    if (updated.contains("spec"))
      next["spec"] = updated["spec"];
    updated = std::move(next);
  } else if (t.status_subresource) {
    // The main resource ignores status.
    if (stored.contains("status"))
      updated["status"] = stored["status"];
    else
      updated.erase("status");
  }
  if (t.resource == "namespaces" && t.group.empty() && !status_write
      && req.ref.subresource != "finalize")
    updated["spec"] = stored.value("spec", json::object());
  std::vector<std::string> warnings;
  auto admitted = admit(t, req, updated, &stored, warnings);
  if (!admitted)
    return admitted.error();
  updated = std::move(*admitted);
  // generation: custom resources on any change outside metadata, built-ins
  // on spec changes; never through /status.
  if (!status_write && updated["metadata"].contains("generation")) {
    bool bump = false;
    if (t.custom)
      bump = without(updated, {"metadata", "apiVersion", "kind"})
             != without(stored, {"metadata", "apiVersion", "kind"});
    else if (t.has_generation)
      bump = updated.value("spec", json()) != stored.value("spec", json())
             || (t.resource == "deployments"
                 && updated["metadata"].value("annotations", json())
                        != old_meta.value("annotations", json()));
    if (bump)
      updated["metadata"]["generation"]
          = updated["metadata"]["generation"].get<std::int64_t>() + 1;
  }
  updated = canonical(t, updated);
  write_result out;
  // A no-op writes nothing, bumps nothing, tells no watch.
  if (updated == canonical(t, stored)) {
    out.object = stored;
    return out;
  }
  if (req.dry_run) {
    out.object = updated;
    return out;
  }
  std::string key = key_of(t, req.ref.namespace_name, name);
  ++revision_;
  updated["metadata"]["resourceVersion"] = std::to_string(revision_);
  // ShouldDeleteDuringUpdate: the last finalizer of a deleting object went
  // and no grace period is pending (a terminating pod lives on until its
  // kubelet deletes it with grace 0).
  auto pending_grace = old_meta.find("deletionGracePeriodSeconds");
  bool grace_left = pending_grace != old_meta.end()
                    && pending_grace->is_number_integer()
                    && pending_grace->get<std::int64_t>() > 0;
  if (being_deleted(stored) && !grace_left && !has_finalizers(updated)
      && !(t.resource == "namespaces" && t.group.empty()
           && !updated.value("spec", json::object())
                   .value("finalizers", json::array())
                   .empty())) {
    objects_[t.storage_key()].erase(key);
    if (t.resource == "customresourcedefinitions")
      unregister_crd(updated);
    commit(t, "DELETED", updated, stored);
    out.object = updated;
    out.deleted = true;
    return out;
  }
  objects_[t.storage_key()][key] = updated;
  commit(t, "MODIFIED", updated, stored);
  out.object = updated;
  return out;
}

caf::expected<response> store_core::update(const type_view& t,
                                           const request& req) {
  if (req.ref.name.empty())
    return fail(req, method_not_allowed(t, req));
  auto body = parse_object(req, req.body);
  if (!body)
    return body.error();
  json obj = std::move(*body);
  if (t.custom && missing_kind(obj))
    return fail(req,
                bad_request("Object 'Kind' is missing in '" + req.body + "'"));
  std::string body_name = meta_str(obj, "name");
  if (body_name != req.ref.name)
    return fail(req, bad_request("the name of the object (" + body_name
                                 + ") does not match the name on the URL ("
                                 + req.ref.name + ")"));
  if (t.namespaced) {
    auto ns = meta_str(obj, "namespace");
    if (!ns.empty() && ns != req.ref.namespace_name)
      return fail(req, bad_request("the namespace of the provided object does "
                                   "not match the namespace sent on the "
                                   "request"));
    obj["metadata"]["namespace"] = req.ref.namespace_name;
  }
  const json* stored = find(t, req.ref.namespace_name, req.ref.name);
  if (stored == nullptr) {
    if (t.create_on_update && req.ref.subresource.empty()) {
      request as_create = req;
      as_create.verb = verb::create;
      as_create.ref.name.clear();
      obj["metadata"].erase("resourceVersion");
      as_create.body = obj.dump();
      return create(t, as_create);
    }
    return fail(req, not_found_status(t, req.ref.name));
  }
  if (obj.contains("kind") && obj["kind"] != t.kind)
    return fail(req, bad_request("the object provided is unrecognized (must "
                                 "be of type "
                                 + t.kind + ")"));
  auto r = write_update(t, req, *stored, std::move(obj), false);
  if (!r)
    return r.error();
  return response{200, text_of(served(t, r->object)), {}};
}

// --- patch
// ------------------------------------------------------------------------------

namespace {

// `current` with the JSON, merge or strategic merge patch of `req`
// applied; unchanged for the other types (apply is the caller's).
caf::expected<json> patched_document(const json& current, const request& req) {
  switch (req.patch) {
  case patch_type::json:
    return apply_json_patch(current, req.body);
  case patch_type::merge:
    return apply_merge_patch(current, req.body);
  case patch_type::strategic:
    return apply_strategic_merge_patch(current, req.body);
  default:
    return current;
  }
}

// What the patch handler refuses before it looks at the object: a body
// type the resource does not take, and force outside an apply.
caf::expected<void> check_patch_options(const type_view& t,
                                        const request& req) {
  if (req.patch == patch_type::none
      || (t.custom && req.patch == patch_type::strategic))
    return fail(req,
                status{"UnsupportedMediaType",
                       415,
                       "the body of the request was in an unknown format - "
                       "accepted media types include: "
                       "application/json-patch+json, "
                       "application/merge-patch+json, "
                       "application/apply-patch+yaml",
                       {}});
  if (req.force && req.patch != patch_type::apply)
    return fail(
        req, invalid_status("PatchOptions", "meta.k8s.io", "",
                            {field_forbidden("force", "may not be specified "
                                                      "for non-apply patch")}));
  return caf::unit;
}

} // namespace

caf::expected<response> store_core::patch(const type_view& t,
                                          const request& req) {
  if (req.ref.name.empty())
    return fail(req, method_not_allowed(t, req));
  if (auto ok = check_patch_options(t, req); !ok)
    return ok.error();
  const json* stored = find(t, req.ref.namespace_name, req.ref.name);
  if (req.patch == patch_type::apply) {
    if (req.field_manager.empty())
      return fail(req, invalid_status("PatchOptions", "meta.k8s.io", "",
                                      {field_required("fieldManager",
                                                      "is required for apply "
                                                      "patch")}));
    auto doc = parse_object(req, req.body);
    if (!doc)
      return doc.error();
    std::string doc_name = meta_str(*doc, "name");
    if (doc_name != req.ref.name)
      return fail(req, bad_request("the name of the object (" + doc_name
                                   + ") does not match the name on the URL ("
                                   + req.ref.name + ")"));
    apply_request ar;
    ar.manager = req.field_manager;
    ar.api_version = t.api_version();
    ar.time = format_time(now());
    ar.force = req.force;
    ar.only_status = req.ref.subresource == "status";
    ar.skip_status = t.status_subresource && !ar.only_status;
    ar.schema = t.schema;
    if (stored == nullptr) {
      if (!req.ref.subresource.empty())
        return fail(req, not_found_status(t, req.ref.name));
      auto applied = server_side_apply(json::object(), *doc, ar);
      if (!applied)
        return fail(req, *status_of(applied.error()));
      request as_create = req;
      as_create.verb = verb::create;
      as_create.ref.name.clear();
      as_create.body = applied->dump();
      return create(t, as_create);
    }
    auto applied = server_side_apply(served(t, *stored), *doc, ar);
    if (!applied)
      return fail(req, *status_of(applied.error()));
    if (meta_str(*applied, "resourceVersion").empty())
      (*applied)["metadata"]["resourceVersion"]
          = meta_str(*stored, "resourceVersion");
    auto r = write_update(t, req, *stored, std::move(*applied), false);
    if (!r)
      return r.error();
    return response{200, text_of(served(t, r->object)), {}};
  }
  if (stored == nullptr)
    return fail(req, not_found_status(t, req.ref.name));
  json current = served(t, *stored);
  auto patched = patched_document(current, req);
  if (!patched)
    return fail(req, *status_of(patched.error()));
  if (!patched->is_object())
    return fail(req, invalid_patch_status());
  std::string patched_name = meta_str(*patched, "name");
  if (patched_name != req.ref.name)
    return fail(req, bad_request("the name of the object (" + patched_name
                                 + ") does not match the name on the URL ("
                                 + req.ref.name + ")"));
  if (t.namespaced && meta_str(*patched, "namespace") != req.ref.namespace_name)
    return fail(req, bad_request("the namespace of the provided object does "
                                 "not match the namespace sent on the "
                                 "request"));
  // Without a resourceVersion of its own, a patch applies to the latest
  // object: keep the stored one so that write_update sees no conflict.
  if (meta_str(*patched, "resourceVersion").empty())
    (*patched)["metadata"]["resourceVersion"]
        = meta_str(*stored, "resourceVersion");
  auto r = write_update(t, req, *stored, std::move(*patched), false);
  if (!r)
    return r.error();
  return response{200, text_of(served(t, r->object)), {}};
}

// --- scale
// ---------------------------------------------------------------------------------

// ScaleREST: GET projects the object; PUT and PATCH build the new Scale
// from the request (a PATCH applies to the projection), and the object is
// then updated as a spec write: admission, resourceVersion precondition,
// generation, watch events. Only spec.replicas is taken from the Scale.
caf::expected<response> store_core::scale(const type_view& t,
                                          const request& req) {
  if (t.rt == nullptr
      || (req.verb != verb::get && req.verb != verb::update
          && req.verb != verb::patch))
    return fail(req, method_not_allowed(t, req));
  const std::string& name = req.ref.name;
  if (req.verb == verb::patch)
    if (auto ok = check_patch_options(t, req); !ok)
      return ok.error();
  const json* stored = find(t, req.ref.namespace_name, name);
  if (req.verb == verb::get) {
    if (stored == nullptr)
      return fail(req, not_found_status(t, name));
    auto projected = scale_of(*t.rt, served(t, *stored));
    if (projected.spec_replicas_missing)
      return fail(req, internal_error("the spec replicas field "
                                      + go_quote(t.rt->scale.spec_replicas)
                                      + " does not exist"));
    return response{200, text_of(projected.scale), {}};
  }
  json scale;
  if (req.verb == verb::update) {
    auto body = parse_object(req, req.body);
    if (!body)
      return body.error();
    scale = std::move(*body);
    if (scale.contains("kind") && scale["kind"] != "Scale")
      return fail(req, bad_request("the object provided is unrecognized (must "
                                   "be of type Scale)"));
  } else {
    if (stored == nullptr)
      return fail(req, not_found_status(t, name));
    json current = scale_of(*t.rt, served(t, *stored)).scale;
    auto patched = patched_document(current, req);
    switch (req.patch) {
    case patch_type::apply: {
      if (req.field_manager.empty())
        return fail(req, invalid_status(
                             "PatchOptions", "meta.k8s.io", "",
                             {field_required("fieldManager", "is required for "
                                                             "apply patch")}));
      auto doc = parse_object(req, req.body);
      if (!doc)
        return doc.error();
      // Field ownership stays with the object's managers: the Scale is
      // applied on its own, without the parent's managedFields.
      apply_request ar;
      ar.manager = req.field_manager;
      ar.api_version = "autoscaling/v1";
      ar.time = format_time(now());
      ar.force = req.force;
      patched = server_side_apply(current, *doc, ar);
      break;
    }
    default:
      break;
    }
    if (!patched)
      return fail(req, *status_of(patched.error()));
    if (!patched->is_object())
      return fail(req, invalid_patch_status());
    scale = std::move(*patched);
    if (meta_str(scale, "resourceVersion").empty()) {
      if (!scale["metadata"].is_object())
        scale["metadata"] = json::object();
      scale["metadata"]["resourceVersion"]
          = meta_str(*stored, "resourceVersion");
    }
  }
  std::string scale_name = meta_str(scale, "name");
  if (scale_name != name)
    return fail(req, bad_request("the name of the object (" + scale_name
                                 + ") does not match the name on the URL ("
                                 + name + ")"));
  if (t.namespaced) {
    auto ns = meta_str(scale, "namespace");
    if (!ns.empty() && ns != req.ref.namespace_name)
      return fail(req, bad_request("the namespace of the provided object does "
                                   "not match the namespace sent on the "
                                   "request"));
  }
  if (stored == nullptr)
    return fail(req, not_found_status(t, name));
  return write_scale(t, req, *stored, std::move(scale));
}

caf::expected<response> store_core::write_scale(const type_view& t,
                                                const request& req,
                                                const json& stored,
                                                json scale) {
  const std::string& name = req.ref.name;
  // The Scale is decoded into autoscaling/v1's types: replicas is an int32
  // (absent = 0).
  std::int64_t replicas = 0;
  const json spec = scale.value("spec", json::object());
  if (auto it = spec.find("replicas"); it != spec.end() && !it->is_null()) {
    if (!it->is_number_integer()
        || it->get<std::int64_t>() < std::numeric_limits<std::int32_t>::min()
        || it->get<std::int64_t>() > std::numeric_limits<std::int32_t>::max()) {
      std::string type = it->is_string()    ? "string"
                         : it->is_boolean() ? "bool"
                         : it->is_object()  ? "object"
                         : it->is_array()   ? "array"
                                            : "number " + it->dump();
      return fail(req, bad_request("Scale in version \"v1\" cannot be "
                                   "handled as a Scale: json: cannot "
                                   "unmarshal "
                                   + type
                                   + " into Go struct field "
                                     "ScaleSpec.spec.replicas of type int32"));
    }
    replicas = it->get<std::int64_t>();
  }
  std::string rv = meta_str(scale, "resourceVersion");
  json next = stored;
  if (t.custom) {
    if (replicas == unset_spec_replicas)
      return fail(req, bad_request("the spec replicas field "
                                   + go_quote(t.rt->scale.spec_replicas)
                                   + " cannot be empty"));
    set_at(next, t.rt->scale.spec_replicas, replicas);
    // Without a resourceVersion the write goes to the latest object.
    if (!rv.empty())
      next["metadata"]["resourceVersion"] = rv;
  } else {
    // ValidateScale, then the UID precondition, on the Scale's names.
    if (replicas < 0)
      return fail(req,
                  invalid_status("Scale", "autoscaling", name,
                                 {field_invalid_rendered(
                                     "spec.replicas", std::to_string(replicas),
                                     "must be greater than or equal to "
                                     "0")}));
    std::string uid = meta_str(scale, "uid");
    if (!uid.empty() && uid != meta_str(stored, "uid")) {
      status st{"Conflict",
                409,
                "Operation cannot be fulfilled on " + t.resource + "/scale."
                    + t.group + " " + go_quote(name)
                    + ": Precondition failed: UID in precondition: " + uid
                    + ", UID in object meta: " + meta_str(stored, "uid"),
                {}};
      st.details.name = name;
      st.details.group = t.group;
      st.details.kind = t.resource + "/scale";
      return fail(req, std::move(st));
    }
    next["spec"]["replicas"] = replicas;
    // An empty resourceVersion is an unconditional update, which the
    // built-in strategies allow.
    next["metadata"]["resourceVersion"] = rv;
  }
  auto r = write_update(t, req, stored, std::move(next), false);
  if (!r)
    return r.error();
  return response{
      200, text_of(scale_of(*t.rt, served(t, r->object)).scale), {}};
}

// --- delete
// ---------------------------------------------------------------------------------

json store_core::delete_now(const type_view& t, const std::string& key,
                            const request& req) {
  (void)req;
  auto& coll = objects_[t.storage_key()];
  json last = coll[key];
  coll.erase(key);
  if (coll.empty())
    objects_.erase(t.storage_key());
  ++revision_;
  json at_delete = last;
  at_delete["metadata"]["resourceVersion"] = std::to_string(revision_);
  if (t.resource == "customresourcedefinitions"
      && t.group == "apiextensions.k8s.io") {
    // The CRD's custom resources go with it (the cleanup finalizer's work).
    auto spec = last.value("spec", json::object());
    std::string group = spec.value("group", "");
    std::string plural
        = spec.value("names", json::object()).value("plural", "");
    std::string cr_key = group + "/" + plural;
    std::optional<type_view> crt;
    for (const auto* rt : registry_.types())
      if (rt->custom && rt->group == group && rt->resource == plural)
        crt = view_of(*rt);
    auto c = objects_.find(cr_key);
    if (c != objects_.end() && crt) {
      auto items = std::move(c->second);
      objects_.erase(c);
      commit(t, "DELETED", at_delete, last);
      for (auto& [k, obj] : items) {
        ++revision_;
        json gone = obj;
        gone["metadata"]["resourceVersion"] = std::to_string(revision_);
        commit(*crt, "DELETED", gone, obj);
      }
      unregister_crd(last);
      return last;
    }
    unregister_crd(last);
  }
  commit(t, "DELETED", at_delete, last);
  return last;
}

store_core::grace_outcome store_core::graceful_delete(const type_view& t,
                                                      const json& options,
                                                      json& object) const {
  grace_outcome out;
  if (!(t.group.empty() && t.resource == "pods"))
    return out;
  // Negative grace periods count as 1 s.
  std::optional<std::int64_t> asked;
  if (auto it = options.find("gracePeriodSeconds");
      it != options.end() && it->is_number_integer())
    asked = it->get<std::int64_t>() < 0 ? 1 : it->get<std::int64_t>();
  json& meta = object["metadata"];
  if (being_deleted(object)) {
    auto it = meta.find("deletionGracePeriodSeconds");
    std::int64_t current = it != meta.end() && it->is_number_integer()
                               ? it->get<std::int64_t>()
                               : 0;
    if (current < 0)
      current = 1;
    // No grace left: delete now (or wait for the finalizers).
    if (current == 0)
      return out;
    // Only a shorter grace period may be given.
    if (!asked || *asked >= current) {
      out.pending = true;
      return out;
    }
    auto at = parse_time(meta_str(object, "deletionTimestamp"));
    std::int64_t deadline
        = (at ? *at / 1'000'000'000 : now()) - current + *asked;
    meta["deletionTimestamp"] = format_time(deadline);
    meta["deletionGracePeriodSeconds"] = *asked;
    out.graceful = true;
    out.seconds = *asked;
    return out;
  }
  // CheckGracefulDelete: the request's period, else the pod's; none for a
  // pod no node runs, or one that has terminated.
  std::int64_t period = 30;
  const json spec = object.value("spec", json::object());
  if (asked)
    period = *asked;
  else if (auto it = spec.find("terminationGracePeriodSeconds");
           it != spec.end() && it->is_number_integer())
    period = it->get<std::int64_t>();
  std::string phase = object.value("status", json::object()).value("phase", "");
  if (spec.value("nodeName", "").empty() || phase == "Succeeded"
      || phase == "Failed")
    period = 0;
  meta["deletionTimestamp"] = format_time(now() + period);
  meta["deletionGracePeriodSeconds"] = period;
  if (meta.contains("generation") && meta["generation"].is_number_integer()
      && meta["generation"].get<std::int64_t>() > 0)
    meta["generation"] = meta["generation"].get<std::int64_t>() + 1;
  out.graceful = true;
  out.seconds = period;
  return out;
}

caf::expected<response> store_core::remove(const type_view& t,
                                           const request& req) {
  if (req.ref.name.empty())
    return remove_collection(t, req);
  json options = json::object();
  if (!req.body.empty()) {
    auto parsed = parse_object(req, req.body);
    if (!parsed)
      return parsed.error();
    options = std::move(*parsed);
  }
  const json* stored = find(t, req.ref.namespace_name, req.ref.name);
  if (stored == nullptr)
    return fail(req, not_found_status(t, req.ref.name));
  const std::string& name = req.ref.name;
  // Preconditions (rest.BeforeDelete): named by Kind, not by resource.
  if (options.contains("preconditions")
      && options["preconditions"].is_object()) {
    const auto& pre = options["preconditions"];
    auto conflict = [&](const std::string& why) {
      status st{"Conflict",
                409,
                "Operation cannot be fulfilled on " + qualified_kind(t) + " \""
                    + name + "\": " + why,
                {}};
      st.details.name = name;
      st.details.group = t.group;
      st.details.kind = t.kind;
      return fail(req, std::move(st));
    };
    if (pre.contains("uid") && pre["uid"].is_string()) {
      auto uid = meta_str(*stored, "uid");
      if (pre["uid"] != uid)
        return conflict("the UID in the precondition ("
                        + pre["uid"].get<std::string>()
                        + ") does not match the UID in record (" + uid
                        + "). The object might have been deleted and then "
                          "recreated");
    }
    if (pre.contains("resourceVersion") && pre["resourceVersion"].is_string()) {
      auto rv = meta_str(*stored, "resourceVersion");
      if (pre["resourceVersion"] != rv)
        return conflict("the ResourceVersion in the precondition ("
                        + pre["resourceVersion"].get<std::string>()
                        + ") does not match the ResourceVersion in record ("
                        + rv + "). The object might have been modified");
    }
  }
  // DeleteOptions.propagationPolicy / orphanDependents -> GC finalizers.
  std::string policy = options.value("propagationPolicy", "");
  bool orphan_flag_set = options.contains("orphanDependents")
                         && options["orphanDependents"].is_boolean();
  if (policy.empty() && orphan_flag_set)
    policy = options["orphanDependents"].get<bool>() ? "Orphan" : "Background";
  std::int32_t code
      = orphan_flag_set && !options["orphanDependents"].get<bool>() ? 202 : 200;
  json next = *stored;
  // Graceful deletion (rest.BeforeDelete with the pod strategy's
  // CheckGracefulDelete): only pods support it.
  auto grace = graceful_delete(t, options, next);
  if (grace.pending)
    return response{code, text_of(served(t, *stored)), {}};
  json& finalizers = next["metadata"]["finalizers"];
  if (!finalizers.is_array())
    finalizers = json::array();
  auto has = [&](std::string_view f) {
    return std::find(finalizers.begin(), finalizers.end(), json(f))
           != finalizers.end();
  };
  auto drop = [&](std::string_view f) {
    json kept = json::array();
    for (const auto& x : finalizers)
      if (x != f)
        kept.push_back(x);
    finalizers = std::move(kept);
  };
  if (policy == "Orphan") {
    drop("foregroundDeletion");
    if (!has("orphan"))
      finalizers.push_back("orphan");
  } else if (policy == "Foreground") {
    drop("orphan");
    if (!has("foregroundDeletion"))
      finalizers.push_back("foregroundDeletion");
  } else if (policy == "Background") {
    drop("orphan");
    drop("foregroundDeletion");
  }
  if (finalizers.empty())
    next["metadata"].erase("finalizers");
  bool is_namespace = t.resource == "namespaces" && t.group.empty();
  bool pending = has_finalizers(next) || is_namespace;
  std::string key = key_of(t, req.ref.namespace_name, name);
  if (grace.graceful) {
    // The grace period is written first (MODIFIED); a pod without one left
    // and without finalizers is then removed in the same request (DELETED),
    // as the registry's updateForGracefulDeletionAndFinalizers does.
    next = canonical(t, next);
    if (req.dry_run)
      return response{code, text_of(served(t, next)), {}};
    if (next != canonical(t, *stored))
      store_modified(t, key, next, *stored);
    if (pending || grace.seconds > 0)
      return response{
          code, text_of(served(t, *find(t, req.ref.namespace_name, name))), {}};
    json last = delete_now(t, key, req);
    return response{200, text_of(served(t, last)), {}};
  }
  if (!pending) {
    if (req.dry_run) {
      status_details d = details_of(t, name);
      d.uid = meta_str(*stored, "uid");
      return response{200, success_body(d), {}};
    }
    json last = delete_now(t, key, req);
    if (t.resource == "pods" && t.group.empty())
      return response{200, text_of(served(t, last)), {}};
    status_details d = details_of(t, name);
    d.uid = meta_str(last, "uid");
    return response{200, success_body(d), {}};
  }
  // markAsDeleting: keep the object until its finalizers go.
  if (!being_deleted(next)) {
    next["metadata"]["deletionTimestamp"] = format_time(now());
    next["metadata"]["deletionGracePeriodSeconds"] = 0;
    if (next["metadata"].contains("generation")
        && next["metadata"]["generation"].get<std::int64_t>() > 0)
      next["metadata"]["generation"]
          = next["metadata"]["generation"].get<std::int64_t>() + 1;
    if (is_namespace)
      next["status"]["phase"] = "Terminating";
  } else if (next["metadata"].contains("deletionGracePeriodSeconds")) {
    // A pod whose grace period ended early: a deadline still ahead moves
    // to now, and no grace is left.
    auto at = parse_time(meta_str(next, "deletionTimestamp"));
    if (at && *at / 1'000'000'000 > now())
      next["metadata"]["deletionTimestamp"] = format_time(now());
    next["metadata"]["deletionGracePeriodSeconds"] = 0;
  }
  next = canonical(t, next);
  if (next == canonical(t, *stored) || req.dry_run)
    return response{code, text_of(served(t, next)), {}};
  ++revision_;
  next["metadata"]["resourceVersion"] = std::to_string(revision_);
  json old = *stored;
  objects_[t.storage_key()][key] = next;
  commit(t, "MODIFIED", next, old);
  return response{code, text_of(served(t, next)), {}};
}

caf::expected<response> store_core::remove_collection(const type_view& t,
                                                      const request& req) {
  request listing = req;
  listing.verb = verb::list;
  listing.limit = 0;
  listing.continue_token.clear();
  listing.resource_version.clear();
  auto listed = list(t, listing);
  if (!listed)
    return listed.error();
  auto doc = json::parse(listed->body);
  json items = json::array();
  for (const auto& item : doc["items"]) {
    request one = req;
    one.verb = verb::remove;
    one.ref.namespace_name = meta_str(item, "namespace");
    one.ref.name = meta_str(item, "name");
    auto r = remove(t, one);
    if (!r)
      return r.error();
    items.push_back(item);
  }
  doc["items"] = items;
  doc["metadata"]["resourceVersion"] = std::to_string(revision_);
  return response{200, text_of(doc), {}};
}

// --- watch
// ----------------------------------------------------------------------------------

caf::expected<watch_plan> store_core::plan_watch(const request& original) {
  auto authorized = authorize(original);
  if (!authorized)
    return authorized.error();
  const request& req = *authorized;
  auto t = find_type(req.ref);
  if (!t)
    return t.error();
  watch_plan plan;
  plan.filter.type = *t;
  plan.filter.type.rt = nullptr;
  plan.filter.namespace_name = t->namespaced ? req.ref.namespace_name : "";
  plan.filter.name = req.ref.name;
  plan.filter.bookmarks = req.allow_watch_bookmarks;
  plan.filter.as_table = req.as_table;
  auto labels = parse_label_selector(req.label_selector);
  if (!labels)
    return labels.error();
  plan.filter.labels = std::move(*labels);
  std::vector<std::string> fields{"metadata.name", "metadata.namespace"};
  fields.insert(fields.end(), t->field_selectors.begin(),
                t->field_selectors.end());
  auto field_sel
      = parse_field_selector(req.field_selector, fields, t->selector_style);
  if (!field_sel)
    return field_sel.error();
  plan.filter.fields = std::move(*field_sel);
  std::uint64_t from = 0;
  if (!req.resource_version.empty() && req.resource_version != "0"
      && !parse_rv(req.resource_version, from))
    return fail(req, bad_request("invalid resource version \""
                                 + req.resource_version + "\""));
  if (from == 0) {
    // "Get state and start at most recent": synthetic ADDEDs.
    auto c = objects_.find(t->storage_key());
    if (c != objects_.end())
      for (const auto& [key, obj] : c->second) {
        history_event ev;
        ev.rv = revision_;
        ev.type = "ADDED";
        ev.storage_key = t->storage_key();
        ev.namespace_name = meta_str(obj, "namespace");
        ev.name = meta_str(obj, "name");
        ev.object = obj;
        if (auto e = event_for(plan.filter, ev))
          plan.initial.push_back(std::move(*e));
      }
    plan.last_rv = revision_;
    return plan;
  }
  if (from < compacted_rv_) {
    plan.initial.push_back(
        {"ERROR",
         status_to_json(expired_status(from, compacted_rv_ + 1)).dump()});
    plan.ends_after_initial = true;
    return plan;
  }
  for (const auto& ev : history_)
    if (ev.rv > from)
      if (auto e = event_for(plan.filter, ev))
        plan.initial.push_back(std::move(*e));
  plan.last_rv = std::max(from, revision_);
  return plan;
}

std::optional<watch_event>
store_core::event_for(watch_filter& f, const history_event& ev) const {
  if (ev.storage_key != f.type.storage_key())
    return std::nullopt;
  if (!f.namespace_name.empty() && ev.namespace_name != f.namespace_name)
    return std::nullopt;
  if (!f.name.empty() && ev.name != f.name)
    return std::nullopt;
  auto selected = [&](const json& obj) {
    if (obj.is_null())
      return false;
    json labels = obj.contains("metadata") && obj["metadata"].contains("labels")
                      ? obj["metadata"]["labels"]
                      : json();
    return f.labels.matches(labels) && f.fields.matches(obj);
  };
  std::string type = ev.type;
  bool now_in = selected(ev.object);
  if (ev.type == "MODIFIED") {
    bool was_in = selected(ev.old_object);
    if (!now_in && !was_in)
      return std::nullopt;
    if (now_in && !was_in)
      type = "ADDED";
    else if (!now_in && was_in)
      type = "DELETED";
  } else if (!now_in) {
    return std::nullopt;
  }
  json obj = ev.object;
  obj["apiVersion"] = f.type.api_version();
  if (f.as_table)
    if (const auto* rt
        = registry_.find(f.type.group, f.type.version, f.type.resource)) {
      json table = to_table(*rt, canonical(f.type, obj), now());
      if (f.table_headers_sent)
        table["columnDefinitions"] = nullptr;
      f.table_headers_sent = true;
      return watch_event{type, table.dump()};
    }
  return watch_event{type, canonical(f.type, obj).dump()};
}

watch_event store_core::bookmark(const watch_filter& f) const {
  json obj = {{"kind", f.type.kind},
              {"apiVersion", f.type.api_version()},
              {"metadata", {{"resourceVersion", std::to_string(revision_)}}}};
  if (f.type.custom)
    obj = sorted(obj);
  return watch_event{"BOOKMARK", obj.dump()};
}

// --- authentication and discovery
// -------------------------------------------------------

caf::expected<user_info> store_core::authenticate(const std::string& token) {
  auto refused = [] {
    return make_status_error("authenticate", auth::unauthorized_status());
  };
  if (token.empty())
    return refused();
  if (token == cfg_.admin_token)
    return admin_user();
  auto claims = tokens_.verify(token, now());
  if (!claims)
    return refused();
  auto sa_type = view_of(*registry_.find("", "v1", "serviceaccounts"));
  auto pod_type = view_of(*registry_.find("", "v1", "pods"));
  const json* sa
      = find(sa_type, claims->namespace_name, claims->service_account);
  const json* pod
      = claims->pod_name.empty()
            ? nullptr
            : find(pod_type, claims->namespace_name, claims->pod_name);
  if (!auth::check_bound_objects(*claims, sa, pod, now()))
    return refused();
  return auth::user_of(*claims);
}

caf::expected<response> store_core::discovery(const std::string& path) const {
  if (path == "/openapi/v2")
    return response{200, "", {}};
  if (auto doc = registry_.discovery(path); !doc.is_null())
    return response{200, text_of(doc), {}};
  if (path == "/version") {
    json v = {{"major", "1"},
              {"minor", "32"},
              {"gitVersion", "v1.32.4"},
              {"gitCommit", "59526cd4867447956156ae3a602fcbac10a2c335"},
              {"gitTreeState", "clean"},
              {"buildDate", "2025-04-22T16:02:27Z"},
              {"goVersion", "go1.23.6"},
              {"compiler", "gc"},
              {"platform", "linux/amd64"}};
    return response{200, text_of(v), {}};
  }
  return unserved();
}

} // namespace aiperf::k8s::sim
