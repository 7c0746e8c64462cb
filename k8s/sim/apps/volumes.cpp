// The volume provisioner: the PersistentVolume binder of
// kubernetes pkg/controller/volume/persistentvolume for the claims of our
// own provisioner, plus that provisioner (a folder on this machine per
// claim, as a hostPath volume), with the annotations a real cluster's
// binder and external provisioner write.
#include "k8s/sim/apps/apps.hpp"
#include "k8s/sim/apps/detail.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <system_error>

namespace aiperf::k8s::sim {

namespace {

using namespace apps_detail;
namespace fs = std::filesystem;

constexpr const char* component = "persistentvolume-controller";
constexpr const char* default_class_key
    = "storageclass.kubernetes.io/is-default-class";

struct pv_state {
  pv_state() = default;

  api_actor api;
  watch_cache cache;
  std::size_t pvc_type = 0;
  std::size_t pv_type = 0;
  std::size_t sc_type = 0;
  std::string pv_dir;
  std::map<std::string, int> in_flight; // by claim or volume key
  std::set<std::string> dirty;
  std::set<std::string> queued;
  failure_backoff backoff; // after failed writes
  std::set<std::string> warned; // claims told ProvisioningFailed once
  wall_clock wall;
  static inline const char* name = "k8s_volume_provisioner";
};

using pv_ptr = apps_controller_actor::stateful_pointer<pv_state>;

// Keys: "pvc:<ns>/<name>" and "pv:<name>".
void queue(pv_ptr self, const std::string& key) {
  if (self->state.queued.insert(key).second)
    self->send(self, apps_sync_atom::value, key);
}

void write_done(pv_ptr self, const std::string& key) {
  auto& st = self->state;
  if (--st.in_flight[key] > 0)
    return;
  st.in_flight.erase(key);
  if (st.dirty.erase(key))
    queue(self, key);
}

// Sends a write for `key`; the reply refreshes the cache (type `type`).
void write(pv_ptr self, const std::string& key, std::size_t type, request req,
           std::function<void(const json&)> on_ok = {}) {
  auto& st = self->state;
  ++st.in_flight[key];
  self->request(st.api, request_timeout, std::move(req))
      .then(
          [self, key, type, on_ok](response& res) {
            self->state.backoff.forget(key);
            auto obj = parse(res.body);
            if (obj && obj->value("kind", "") != "Status")
              self->state.cache.put(type, *obj);
            if (on_ok)
              on_ok(obj ? *obj : json{});
            self->state.dirty.insert(key);
            write_done(self, key);
          },
          [self, key](caf::error&) {
            write_done(self, key);
            retry_later(self, key);
          });
}

void record(pv_ptr self, const json& pvc, const std::string& type,
            const std::string& reason, const std::string& message) {
  auto now = self->state.wall.unix_seconds(self->clock().now());
  self->request(self->state.api, request_timeout,
                event_request(pvc, "v1", "PersistentVolumeClaim", type, reason,
                              message, component, now))
      .then([](response&) {}, [](caf::error&) {});
}

const json* default_class(pv_ptr self) {
  for (const auto& [key, sc] :
       self->state.cache.types[self->state.sc_type].objects) {
    const auto& a = sc["metadata"].value("annotations", json::object());
    if (a.is_object() && a.value(default_class_key, "") == "true")
      return &sc;
  }
  return nullptr;
}

std::string folder_of(pv_ptr self, const std::string& claim_uid) {
  return (fs::path{self->state.pv_dir} / claim_uid).string();
}

void sync_claim(pv_ptr self, const std::string& key, const json& pvc) {
  auto& st = self->state;
  if (being_deleted(pvc))
    return;
  const auto& spec = pvc.value("spec", json::object());
  const auto& status = pvc.value("status", json::object());
  auto uid = meta(pvc, "uid");
  auto pv_name = "pvc-" + uid;
  const json* sc = nullptr;
  if (!spec.contains("storageClassName") || spec["storageClassName"].is_null())
    sc = default_class(self); // until the store's admission sets it
  else if (spec["storageClassName"].is_string())
    sc = st.cache.find(st.sc_type, spec["storageClassName"].get<std::string>());
  if (sc == nullptr || sc->value("provisioner", "") != provisioner_name)
    return; // not ours: another provisioner, or static binding
  const json* pv = st.cache.find(st.pv_type, pv_name);
  if (pv == nullptr) {
    if (!spec.value("volumeName", "").empty())
      return; // asks for a given volume: static binding, not ours
    auto dir = folder_of(self, uid);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (!ec)
      fs::permissions(dir, fs::perms::all, fs::perm_options::replace, ec);
    if (ec) {
      if (st.warned.insert(key).second)
        record(self, pvc, "Warning", "ProvisioningFailed",
               "failed to provision volume with StorageClass \""
                   + meta(*sc, "name") + "\": mkdir " + dir + ": "
                   + ec.message());
      self->delayed_send(self, std::chrono::seconds{5}, apps_sync_atom::value,
                         key);
      return;
    }
    auto class_name = meta(*sc, "name");
    json storage = spec.value("resources", json::object())
                       .value("requests", json::object())
                       .value("storage", json("1Gi"));
    json volume
        = {{"apiVersion", "v1"},
           {"kind", "PersistentVolume"},
           {"metadata",
            {{"name", pv_name},
             {"annotations",
              {{"pv.kubernetes.io/provisioned-by", provisioner_name}}}}},
           {"spec",
            {{"capacity", {{"storage", storage}}},
             {"accessModes",
              spec.value("accessModes", json::array({"ReadWriteOnce"}))},
             {"persistentVolumeReclaimPolicy",
              sc->value("reclaimPolicy", "Delete")},
             {"storageClassName", class_name},
             {"volumeMode", spec.value("volumeMode", "Filesystem")},
             {"hostPath", {{"path", dir}, {"type", ""}}},
             {"claimRef",
              {{"kind", "PersistentVolumeClaim"},
               {"namespace", meta(pvc, "namespace")},
               {"name", meta(pvc, "name")},
               {"uid", uid},
               {"apiVersion", "v1"},
               {"resourceVersion", meta(pvc, "resourceVersion")}}}}}};
    write(self, key, st.pv_type,
          make_request(verb::create,
                       resource_ref{"", "v1", "persistentvolumes", {}, {}, {}},
                       volume),
          [self, pvc, pv_name, class_name](const json&) {
            record(self, pvc, "Normal", "ProvisioningSucceeded",
                   "Successfully provisioned volume " + pv_name);
          });
    return;
  }
  // The volume exists: bind it, then the claim (the binder's order).
  if (pv->value("status", json::object()).value("phase", "") != "Bound") {
    json next = *pv;
    next["status"] = {{"phase", "Bound"}};
    write(
        self, key, st.pv_type,
        make_request(
            verb::update,
            resource_ref{"", "v1", "persistentvolumes", {}, pv_name, "status"},
            next));
    return;
  }
  if (spec.value("volumeName", "") != pv_name) {
    json next = pvc;
    next["spec"]["volumeName"] = pv_name;
    auto& a = next["metadata"]["annotations"];
    if (!a.is_object())
      a = json::object();
    a["pv.kubernetes.io/bind-completed"] = "yes";
    a["pv.kubernetes.io/bound-by-controller"] = "yes";
    a["volume.beta.kubernetes.io/storage-provisioner"] = provisioner_name;
    a["volume.kubernetes.io/storage-provisioner"] = provisioner_name;
    if (!spec.contains("storageClassName")
        || spec["storageClassName"].is_null())
      next["spec"]["storageClassName"] = meta(*sc, "name");
    write(self, key, st.pvc_type,
          make_request(verb::update,
                       resource_ref{"",
                                    "v1",
                                    "persistentvolumeclaims",
                                    meta(pvc, "namespace"),
                                    meta(pvc, "name"),
                                    {}},
                       next));
    return;
  }
  if (status.value("phase", "") != "Bound") {
    json next = pvc;
    next["status"]
        = {{"phase", "Bound"},
           {"accessModes", (*pv)["spec"].value("accessModes", json::array())},
           {"capacity", (*pv)["spec"].value("capacity", json::object())}};
    write(self, key, st.pvc_type,
          make_request(verb::update,
                       resource_ref{"", "v1", "persistentvolumeclaims",
                                    meta(pvc, "namespace"), meta(pvc, "name"),
                                    "status"},
                       next));
  }
}

// A volume of ours whose claim is gone: reclaimPolicy Delete removes it
// and its data.
void sync_volume(pv_ptr self, const std::string& key, const json& pv) {
  auto& st = self->state;
  const auto& a = pv["metadata"].value("annotations", json::object());
  if (!a.is_object()
      || a.value("pv.kubernetes.io/provisioned-by", "") != provisioner_name)
    return;
  const auto& spec = pv.value("spec", json::object());
  const auto& claim = spec.value("claimRef", json::object());
  if (!claim.is_object() || claim.value("uid", "").empty())
    return;
  auto claim_key = claim.value("namespace", "") + "/" + claim.value("name", "");
  const json* pvc = st.cache.find(st.pvc_type, claim_key);
  if (pvc != nullptr && meta(*pvc, "uid") == claim.value("uid", ""))
    return;
  if (spec.value("persistentVolumeReclaimPolicy", "Delete") != "Delete"
      || being_deleted(pv))
    return;
  auto dir = folder_of(self, claim.value("uid", ""));
  json options = {{"kind", "DeleteOptions"},
                  {"apiVersion", "v1"},
                  {"preconditions", {{"uid", meta(pv, "uid")}}}};
  ++st.in_flight[key];
  self->request(
          st.api, request_timeout,
          make_request(
              verb::remove,
              resource_ref{
                  "", "v1", "persistentvolumes", {}, meta(pv, "name"), {}},
              options))
      .then(
          [self, key, pv, dir](response&) {
            std::error_code ec;
            fs::remove_all(dir, ec);
            self->state.cache.remove(self->state.pv_type, pv);
            write_done(self, key);
          },
          [self, key, dir](caf::error& err) {
            if (is_error(err, errc::not_found)) {
              std::error_code ec;
              fs::remove_all(dir, ec);
            } else {
              self->state.dirty.insert(key);
            }
            write_done(self, key);
          });
}

void sync(pv_ptr self, const std::string& key) {
  auto& st = self->state;
  for (const auto& t : st.cache.types)
    if (!t.synced)
      return;
  if (st.in_flight.count(key)) {
    st.dirty.insert(key);
    return;
  }
  if (key.rfind("pvc:", 0) == 0) {
    if (const json* pvc = st.cache.find(st.pvc_type, key.substr(4)))
      sync_claim(self, key, json(*pvc));
    else
      st.warned.erase(key);
  } else if (key.rfind("pv:", 0) == 0) {
    if (const json* pv = st.cache.find(st.pv_type, key.substr(3)))
      sync_volume(self, key, json(*pv));
  }
}

void queue_all(pv_ptr self) {
  auto& st = self->state;
  for (const auto& [key, pvc] : st.cache.types[st.pvc_type].objects)
    queue(self, "pvc:" + key);
  for (const auto& [key, pv] : st.cache.types[st.pv_type].objects)
    queue(self, "pv:" + key);
}

apps_controller_actor::behavior_type pv_impl(pv_ptr self, api_actor api,
                                             std::string pv_dir) {
  auto& st = self->state;
  st.api = std::move(api);
  st.pv_dir = std::move(pv_dir);
  st.wall = wall_clock{self->clock().now()};
  std::error_code ec;
  fs::create_directories(st.pv_dir, ec);
  st.pvc_type = st.cache.add("", "v1", "persistentvolumeclaims");
  st.pv_type = st.cache.add("", "v1", "persistentvolumes");
  st.sc_type = st.cache.add("storage.k8s.io", "v1", "storageclasses");
  st.cache.on_change = [self](std::size_t type, const std::string& key,
                              const json* before, const json* after) {
    auto& st = self->state;
    if (type == st.pvc_type) {
      queue(self, "pvc:" + key);
      if (after == nullptr) // its volume may go now
        for (const auto& [pkey, pv] : st.cache.types[st.pv_type].objects)
          if (pv.value("spec", json::object())
                  .value("claimRef", json::object())
                  .value("uid", "")
              == meta(*before, "uid"))
            queue(self, "pv:" + pkey);
    } else if (type == st.pv_type) {
      queue(self, "pv:" + key);
      const json& pv = after != nullptr ? *after : *before;
      const auto& claim
          = pv.value("spec", json::object()).value("claimRef", json::object());
      if (claim.is_object() && claim.contains("name"))
        queue(self, "pvc:" + claim.value("namespace", "") + "/"
                        + claim.value("name", ""));
    } else {
      for (const auto& [ckey, pvc] : st.cache.types[st.pvc_type].objects)
        queue(self, "pvc:" + ckey);
    }
  };
  st.cache.on_listed = [self](std::size_t) { queue_all(self); };
  relist(self, st.pvc_type);
  relist(self, st.pv_type);
  relist(self, st.sc_type);
  return controller_behavior(
      self, [self](const std::string& key) { sync(self, key); });
}

} // namespace

apps_controller_actor spawn_volume_provisioner(caf::actor_system& sys,
                                               api_actor api,
                                               std::string pv_dir) {
  return sys.spawn(pv_impl, std::move(api), std::move(pv_dir));
}

json default_storage_class() {
  return json{
      {"apiVersion", "storage.k8s.io/v1"},
      {"kind", "StorageClass"},
      {"metadata",
       {{"name", "standard"}, {"annotations", {{default_class_key, "true"}}}}},
      {"provisioner", provisioner_name},
      {"reclaimPolicy", "Delete"},
      {"volumeBindingMode", "Immediate"},
      {"allowVolumeExpansion", false}};
}

} // namespace aiperf::k8s::sim
