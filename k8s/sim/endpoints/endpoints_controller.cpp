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
const resource_ref endpoints_ref{"", "v1", "endpoints", "", "", ""};

// Endpoints objects a leader election writes (no Service behind them).
constexpr const char* leader_annotation
    = "control-plane.alpha.kubernetes.io/leader";

struct ep_state {
  // Not an aggregate: CAF would build the state from the actor pointer.
  ep_state() = default;

  using ptr = ctl_ptr<ep_state>;

  api_actor api;
  watch_set ws;
  write_gate gate;
  trigger_tracker triggers;
  std::size_t services = 0;
  std::size_t pods = 0;
  std::size_t endpoints = 0;
  static inline const char* name = "k8s_endpoints_controller";

  static void start(ptr self);
  static void sync(ptr self, const std::string& key);
};

// One pod's address for one port of the Service (nullopt: no ports).
struct entry {
  json address;
  bool ready = false;
  std::optional<json> port;
};

std::string address_key(const json& a) {
  return a.value("ip", "") + "/" + a["targetRef"].value("uid", "");
}

json endpoint_port(const json& svc_port, std::int64_t number) {
  json p = json::object();
  auto name = svc_port.value("name", "");
  if (!name.empty())
    p["name"] = name;
  p["port"] = number;
  p["protocol"] = svc_port.value("protocol", "TCP");
  if (svc_port.contains("appProtocol") && svc_port["appProtocol"].is_string())
    p["appProtocol"] = svc_port["appProtocol"];
  return p;
}

bool address_less(const json& a, const json& b) {
  return address_key(a) < address_key(b);
}

bool port_less(const json& a, const json& b) {
  auto ka = a.value("name", "") + "/" + std::to_string(a.value("port", 0));
  auto kb = b.value("name", "") + "/" + std::to_string(b.value("port", 0));
  return ka < kb;
}

// RepackSubsets (kubernetes pkg/api/v1/endpoints): every address offering
// the same set of ports, ready or not, shares one subset.
json repack(const std::vector<entry>& entries) {
  std::map<std::string, json> addresses; // by address key
  // port (its JSON text; "" = no ports) -> address key -> ready
  std::map<std::string, std::map<std::string, bool>> by_port;
  std::map<std::string, json> ports;
  for (const auto& e : entries) {
    auto ak = address_key(e.address);
    addresses[ak] = e.address;
    auto pk = e.port ? e.port->dump() : std::string{};
    if (e.port)
      ports[pk] = *e.port;
    auto& set = by_port[pk];
    auto it = set.find(ak);
    if (it == set.end())
      set[ak] = e.ready;
    else
      it->second = it->second || e.ready;
  }
  // The address sets (as text) -> the ports that have exactly that set.
  std::map<std::string,
           std::pair<std::map<std::string, bool>, std::vector<json>>>
      groups;
  for (const auto& [pk, set] : by_port) {
    std::string sk;
    for (const auto& [ak, ready] : set)
      sk += ak + (ready ? "+" : "-") + ";";
    auto& g = groups[sk];
    g.first = set;
    if (!pk.empty())
      g.second.push_back(ports[pk]);
  }
  std::vector<json> subsets;
  for (auto& [sk, g] : groups) {
    std::vector<json> ready;
    std::vector<json> not_ready;
    for (const auto& [ak, r] : g.first)
      (r ? ready : not_ready).push_back(addresses[ak]);
    std::sort(ready.begin(), ready.end(), address_less);
    std::sort(not_ready.begin(), not_ready.end(), address_less);
    std::sort(g.second.begin(), g.second.end(), port_less);
    json subset = json::object();
    if (!ready.empty())
      subset["addresses"] = ready;
    if (!not_ready.empty())
      subset["notReadyAddresses"] = not_ready;
    if (!g.second.empty())
      subset["ports"] = g.second;
    subsets.push_back(std::move(subset));
  }
  std::sort(subsets.begin(), subsets.end(),
            [](const json& a, const json& b) { return a.dump() < b.dump(); });
  return json(subsets);
}

void ep_state::start(ptr self) {
  auto& st = self->state;
  st.services = st.ws.add(services_ref);
  st.pods = st.ws.add(pods_ref);
  st.endpoints = st.ws.add(endpoints_ref);
  st.ws.on_change = [self](std::size_t kind, const std::string& key,
                           const json* before, const json* after) {
    auto& st = self->state;
    if (!st.ws.all_synced())
      return;
    if (kind == st.services) {
      sync(self, key);
      return;
    }
    if (kind == st.endpoints) {
      // Only a deletion, as upstream's informer handler: an Endpoints
      // object written before its Service is not taken for a leftover.
      if (after == nullptr)
        sync(self, key);
      return;
    }
    // A pod: every Service of its namespace that selected it before or
    // selects it now.
    for (const auto& k :
         services_selecting(st.ws.objects(st.services), key, before, after))
      sync(self, k);
  };
  st.ws.on_synced = [self] {
    auto& st = self->state;
    std::vector<std::string> keys;
    for (const auto& [k, svc] : st.ws.objects(st.services))
      keys.push_back(k);
    for (const auto& [k, ep] : st.ws.objects(st.endpoints))
      if (!st.ws.find(st.services, k))
        keys.push_back(k);
    for (const auto& k : keys)
      sync(self, k);
  };
}

void ep_state::sync(ptr self, const std::string& key) {
  auto& st = self->state;
  if (!st.ws.all_synced())
    return;
  auto ns = namespace_of(key);
  auto name = key.substr(ns.size() + 1);
  const json* svc = st.ws.find(st.services, key);
  const json* current = st.ws.find(st.endpoints, key);
  if (svc == nullptr) {
    st.triggers.forget(key);
    if (current == nullptr
        || ((*current)["metadata"].contains("annotations")
            && (*current)["metadata"]["annotations"].is_object()
            && (*current)["metadata"]["annotations"].contains(
                leader_annotation)))
      return;
    if (!st.gate.begin(key))
      return;
    // The two caches list apart: a Service made between the lists is
    // missing from the older one. Only the API's 404 makes it a leftover.
    auto uid = str(*current, "metadata", "uid");
    self->request(st.api, api_timeout,
                  make_request(verb::get, services_ref, ns, name))
        .then(
            [self, key](response&) {
              finish<ep_state>(self, key, true); // its watch event follows
            },
            [self, key, ns, name, uid](caf::error& err) {
              if (!is_error(err, errc::not_found)) {
                finish<ep_state>(self, key, false);
                return;
              }
              auto del = make_request(verb::remove, endpoints_ref, ns, name);
              del.body = json{{"kind", "DeleteOptions"},
                              {"apiVersion", "v1"},
                              {"preconditions", {{"uid", uid}}}}
                             .dump();
              auto batch = std::make_shared<write_batch>();
              write<ep_state>(
                  self, key, batch, std::move(del), [self, key](const json&) {
                    self->state.ws.forget(self->state.endpoints, key);
                  });
            });
    return;
  }
  if (!has_selector(*svc))
    return;
  std::vector<const json*> pods;
  auto prefix = ns + "/";
  for (const auto& [pkey, pod] : st.ws.objects(st.pods))
    if (pkey.compare(0, prefix.size(), prefix) == 0 && selects(*svc, pod))
      pods.push_back(&pod);
  auto trigger = st.triggers.compute(key, *svc, pods);
  bool tolerate = publish_not_ready(*svc);
  const auto& spec = (*svc)["spec"];
  json svc_ports = spec.contains("ports") && spec["ports"].is_array()
                       ? spec["ports"]
                       : json::array();
  std::vector<entry> entries;
  for (const auto* pod : pods) {
    if (!should_be_in_endpoints(*pod, tolerate))
      continue;
    auto ip = pod_ipv4(*pod);
    if (ip.empty())
      continue;
    json address = json::object();
    address["ip"] = ip;
    if (should_set_hostname(*pod, *svc))
      address["hostname"] = str(*pod, "spec", "hostname");
    address["nodeName"] = str(*pod, "spec", "nodeName");
    address["targetRef"] = target_ref(*pod);
    bool ready = tolerate || pod_ready(*pod);
    if (svc_ports.empty()) {
      if (headless(*svc))
        entries.push_back({address, ready, std::nullopt});
      continue;
    }
    for (const auto& sp : svc_ports) {
      auto number = find_port(*pod, sp);
      if (!number)
        continue;
      entries.push_back({address, ready, endpoint_port(sp, *number)});
    }
  }
  auto subsets = repack(entries);
  auto labels = derived_labels(*svc, {});
  if (current != nullptr) {
    const auto& meta = (*current)["metadata"];
    json have_subsets
        = current->contains("subsets") && (*current)["subsets"].is_array()
              ? (*current)["subsets"]
              : json::array();
    json have_labels = meta.contains("labels") && meta["labels"].is_object()
                           ? meta["labels"]
                           : json::object();
    if (same(have_subsets, subsets) && same(have_labels, labels))
      return;
  }
  if (!st.gate.begin(key))
    return;
  json obj;
  if (current != nullptr) {
    obj = *current;
  } else {
    obj = json{{"apiVersion", "v1"},
               {"kind", "Endpoints"},
               {"metadata", {{"name", name}, {"namespace", ns}}}};
  }
  auto& meta = obj["metadata"];
  if (labels.empty())
    meta.erase("labels");
  else
    meta["labels"] = labels;
  if (!meta.contains("annotations") || !meta["annotations"].is_object())
    meta["annotations"] = json::object();
  if (trigger != 0)
    meta["annotations"][trigger_time_annotation] = format_rfc3339_nano(trigger);
  else
    meta["annotations"].erase(trigger_time_annotation);
  if (meta["annotations"].empty())
    meta.erase("annotations");
  if (subsets.empty())
    obj.erase("subsets");
  else
    obj["subsets"] = subsets;
  auto batch = std::make_shared<write_batch>();
  auto v = current != nullptr ? verb::update : verb::create;
  write<ep_state>(self, key, batch,
                  make_request(v, endpoints_ref, ns,
                               v == verb::update ? name : std::string{},
                               obj.dump()),
                  [self](const json& answer) {
                    self->state.ws.put(self->state.endpoints, answer);
                  });
}

} // namespace

network_controller_actor spawn_endpoints_controller(caf::actor_system& sys,
                                                    api_actor api) {
  return sys.spawn(run<ep_state>, std::move(api));
}

} // namespace aiperf::k8s::sim
