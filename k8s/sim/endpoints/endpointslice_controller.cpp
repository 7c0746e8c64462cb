#include "k8s/sim/endpoints/detail.hpp"
#include "k8s/sim/endpoints/endpoints.hpp"

#include <caf/actor_system.hpp>

#include <algorithm>
#include <map>

namespace aiperf::k8s::sim {

namespace {

using namespace net;
using namespace net::detail;

const resource_ref services_ref{"", "v1", "services", "", "", ""};
const resource_ref pods_ref{"", "v1", "pods", "", "", ""};
const resource_ref slices_ref{
    "discovery.k8s.io", "v1", "endpointslices", "", "", ""};

constexpr const char* service_name_label = "kubernetes.io/service-name";
constexpr const char* managed_by_label
    = "endpointslice.kubernetes.io/managed-by";
constexpr const char* controller_name = "endpointslice-controller.k8s.io";
// maxEndpointsPerSlice, kube-controller-manager's default.
constexpr std::size_t max_per_slice = 100;

struct eps_state {
  // Not an aggregate: CAF would build the state from the actor pointer.
  eps_state() = default;

  using ptr = ctl_ptr<eps_state>;

  api_actor api;
  watch_set ws;
  write_gate gate;
  trigger_tracker triggers;
  std::size_t services = 0;
  std::size_t pods = 0;
  std::size_t slices = 0;
  static inline const char* name = "k8s_endpointslice_controller";

  static void start(ptr self);
  static void sync(ptr self, const std::string& key);
};

const json& labels_of(const json& obj) {
  static const json empty = json::object();
  if (!obj.contains("metadata") || !obj["metadata"].is_object())
    return empty;
  const auto& m = obj["metadata"];
  return m.contains("labels") && m["labels"].is_object() ? m["labels"] : empty;
}

// The Service a slice this controller manages belongs to ("ns/name"), or "".
std::string service_key_of(const json& slice) {
  const auto& labels = labels_of(slice);
  if (labels.value(managed_by_label, "") != controller_name)
    return {};
  auto svc = labels.value(service_name_label, "");
  if (svc.empty())
    return {};
  return str(slice, "metadata", "namespace") + "/" + svc;
}

bool owned_by(const json& slice, const std::string& uid) {
  const auto& m = slice["metadata"];
  if (!m.contains("ownerReferences") || !m["ownerReferences"].is_array())
    return false;
  for (const auto& o : m["ownerReferences"])
    if (o.is_object() && o.value("uid", "") == uid
        && o.value("kind", "") == "Service"
        && o.value("apiVersion", "") == "v1")
      return true;
  return false;
}

json slice_labels(const json& svc) {
  auto labels = derived_labels(svc, {service_name_label, managed_by_label});
  labels[service_name_label] = str(svc, "metadata", "name");
  labels[managed_by_label] = controller_name;
  return labels;
}

// podToEndpoint (staging/src/k8s.io/endpointslice/utils.go).
json endpoint_of(const json& pod, const json& svc, const std::string& ip) {
  bool serving = pod_ready(pod);
  bool terminating = pod_terminating(pod);
  bool ready = publish_not_ready(svc) || (serving && !terminating);
  json ep = json::object();
  ep["addresses"] = json::array({ip});
  ep["conditions"] = json{
      {"ready", ready}, {"serving", serving}, {"terminating", terminating}};
  if (should_set_hostname(pod, svc))
    ep["hostname"] = str(pod, "spec", "hostname");
  ep["targetRef"] = target_ref(pod);
  auto node = str(pod, "spec", "nodeName");
  if (!node.empty())
    ep["nodeName"] = node;
  return ep;
}

// getEndpointPorts.
json ports_of(const json& pod, const json& svc) {
  json out = json::array();
  const auto& spec = svc["spec"];
  if (!spec.contains("ports") || !spec["ports"].is_array())
    return out;
  for (const auto& sp : spec["ports"]) {
    auto number = find_port(pod, sp);
    if (!number)
      continue;
    json p = json::object();
    p["name"] = sp.value("name", "");
    p["protocol"] = sp.value("protocol", "TCP");
    p["port"] = *number;
    if (sp.contains("appProtocol") && sp["appProtocol"].is_string())
      p["appProtocol"] = sp["appProtocol"];
    out.push_back(std::move(p));
  }
  return out;
}

struct desired_slice {
  json ports;
  json endpoints;
};

void eps_state::start(ptr self) {
  auto& st = self->state;
  st.services = st.ws.add(services_ref);
  st.pods = st.ws.add(pods_ref);
  st.slices = st.ws.add(slices_ref);
  st.ws.on_change = [self](std::size_t kind, const std::string& key,
                           const json* before, const json* after) {
    auto& st = self->state;
    if (!st.ws.all_synced())
      return;
    if (kind == st.services) {
      sync(self, key);
      return;
    }
    if (kind == st.slices) {
      auto svc = service_key_of(after ? *after : *before);
      if (!svc.empty())
        sync(self, svc);
      return;
    }
    for (const auto& k :
         services_selecting(st.ws.objects(st.services), key, before, after))
      sync(self, k);
  };
  st.ws.on_synced = [self] {
    auto& st = self->state;
    std::vector<std::string> keys;
    for (const auto& [k, svc] : st.ws.objects(st.services))
      keys.push_back(k);
    for (const auto& k : keys)
      sync(self, k);
  };
}

void eps_state::sync(ptr self, const std::string& key) {
  auto& st = self->state;
  if (!st.ws.all_synced())
    return;
  auto ns = namespace_of(key);
  auto name = key.substr(ns.size() + 1);
  const json* svc = st.ws.find(st.services, key);
  if (svc == nullptr) {
    // The slices go with their owner (the garbage collector).
    st.triggers.forget(key);
    return;
  }
  if (!has_selector(*svc))
    return;
  auto uid = str(*svc, "metadata", "uid");
  std::vector<const json*> pods;
  auto prefix = ns + "/";
  for (const auto& [pkey, pod] : st.ws.objects(st.pods))
    if (pkey.compare(0, prefix.size(), prefix) == 0 && selects(*svc, pod))
      pods.push_back(&pod);
  auto trigger = st.triggers.compute(key, *svc, pods);

  // The endpoints, grouped by their ports.
  std::map<std::string, desired_slice> by_ports;
  for (const auto* pod : pods) {
    if (!should_be_in_endpoints(*pod, true))
      continue;
    auto ip = pod_ipv4(*pod);
    if (ip.empty())
      continue;
    auto ports = ports_of(*pod, *svc);
    auto& d = by_ports[ports.dump()];
    d.ports = ports;
    if (!d.endpoints.is_array())
      d.endpoints = json::array();
    d.endpoints.push_back(endpoint_of(*pod, *svc, ip));
  }
  std::vector<desired_slice> desired;
  for (auto& [pk, d] : by_ports) {
    std::vector<json> eps(d.endpoints.begin(), d.endpoints.end());
    std::sort(eps.begin(), eps.end(), [](const json& a, const json& b) {
      return a["addresses"][0].get<std::string>()
             < b["addresses"][0].get<std::string>();
    });
    for (std::size_t i = 0; i < eps.size(); i += max_per_slice) {
      auto end = std::min(eps.size(), i + max_per_slice);
      desired.push_back({d.ports, json(std::vector<json>(eps.begin() + i,
                                                         eps.begin() + end))});
    }
  }
  if (desired.empty()) // the placeholder slice
    desired.push_back({json::array(), json::array()});

  std::vector<const json*> existing;
  for (const auto& [skey, slice] : st.ws.objects(st.slices))
    if (skey.compare(0, prefix.size(), prefix) == 0
        && service_key_of(slice) == key && owned_by(slice, uid)
        && !pod_terminating(slice) // deletionTimestamp, as for a pod
        && slice.value("addressType", "") == "IPv4")
      existing.push_back(&slice);

  auto labels = slice_labels(*svc);
  auto field = [](const json& obj, const char* f) {
    return obj.contains(f) && obj[f].is_array() ? obj[f] : json::array();
  };
  std::vector<request> writes;
  std::vector<bool> used(existing.size(), false);
  std::vector<const desired_slice*> unmatched;
  // First the slices that already hold exactly what is wanted.
  for (const auto& d : desired) {
    bool found = false;
    for (std::size_t i = 0; i < existing.size() && !found; ++i)
      if (!used[i] && same(field(*existing[i], "ports"), d.ports)
          && same(field(*existing[i], "endpoints"), d.endpoints)) {
        used[i] = true;
        found = true;
        if (!same(labels_of(*existing[i]), labels)) {
          json obj = *existing[i];
          obj["metadata"]["labels"] = labels;
          writes.push_back(make_request(verb::update, slices_ref, ns,
                                        str(obj, "metadata", "name"),
                                        obj.dump()));
        }
      }
    if (!found)
      unmatched.push_back(&d);
  }
  auto annotate = [trigger](json& obj) {
    auto& meta = obj["metadata"];
    if (!meta.contains("annotations") || !meta["annotations"].is_object())
      meta["annotations"] = json::object();
    if (trigger != 0)
      meta["annotations"][trigger_time_annotation]
          = format_rfc3339_nano(trigger);
    else
      meta["annotations"].erase(trigger_time_annotation);
    if (meta["annotations"].empty())
      meta.erase("annotations");
  };
  // Then reuse the other slices (same ports first), create the rest.
  for (const auto* d : unmatched) {
    std::size_t pick = existing.size();
    for (std::size_t i = 0; i < existing.size(); ++i)
      if (!used[i] && same(field(*existing[i], "ports"), d->ports)) {
        pick = i;
        break;
      }
    for (std::size_t i = 0; i < existing.size() && pick == existing.size(); ++i)
      if (!used[i])
        pick = i;
    json obj;
    if (pick < existing.size()) {
      used[pick] = true;
      obj = *existing[pick];
    } else {
      obj = json{{"apiVersion", "discovery.k8s.io/v1"},
                 {"kind", "EndpointSlice"},
                 {"metadata",
                  {{"generateName", name + "-"},
                   {"namespace", ns},
                   {"ownerReferences",
                    json::array({json{{"apiVersion", "v1"},
                                      {"kind", "Service"},
                                      {"name", name},
                                      {"uid", uid},
                                      {"controller", true},
                                      {"blockOwnerDeletion", true}}})}}},
                 {"addressType", "IPv4"}};
    }
    obj["metadata"]["labels"] = labels;
    annotate(obj);
    obj["endpoints"] = d->endpoints;
    obj["ports"] = d->ports;
    bool create = pick == existing.size();
    writes.push_back(make_request(
        create ? verb::create : verb::update, slices_ref, ns,
        create ? std::string{} : str(obj, "metadata", "name"), obj.dump()));
  }
  for (std::size_t i = 0; i < existing.size(); ++i)
    if (!used[i])
      writes.push_back(make_request(verb::remove, slices_ref, ns,
                                    str(*existing[i], "metadata", "name")));
  if (writes.empty())
    return;
  if (!st.gate.begin(key))
    return;
  auto batch = std::make_shared<write_batch>();
  for (auto& w : writes) {
    bool removal = w.verb == verb::remove;
    auto skey = ns + "/" + w.ref.name;
    write<eps_state>(self, key, batch, std::move(w),
                     [self, removal, skey](const json& answer) {
                       auto& st = self->state;
                       if (removal)
                         st.ws.forget(st.slices, skey);
                       else
                         st.ws.put(st.slices, answer);
                     });
  }
}

} // namespace

network_controller_actor spawn_endpointslice_controller(caf::actor_system& sys,
                                                        api_actor api) {
  return sys.spawn(run<eps_state>, std::move(api));
}

} // namespace aiperf::k8s::sim
