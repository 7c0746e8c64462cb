#include "k8s/sim/endpoints/detail.hpp"
#include "k8s/sim/endpoints/endpoints.hpp"

#include <caf/actor_system.hpp>

namespace aiperf::k8s::sim {

namespace {

using namespace net;
using namespace net::detail;

const resource_ref namespaces_ref{"", "v1", "namespaces", "", "", ""};
const resource_ref accounts_ref{"", "v1", "serviceaccounts", "", "", ""};
const resource_ref configmaps_ref{"", "v1", "configmaps", "", "", ""};

constexpr const char* account_name = "default";
constexpr const char* root_ca_name = "kube-root-ca.crt";
constexpr const char* description_annotation = "kubernetes.io/description";
// rootcacertpublisher's Description, as the store writes it.
constexpr const char* description
    = "Contains a CA bundle that can be used to verify the kube-apiserver "
      "when using internal endpoints such as the internal service IP or "
      "kubernetes.default.svc. No other usage is guaranteed across "
      "distributions of Kubernetes clusters.";

struct sa_state {
  // Not an aggregate: CAF would build the state from the actor pointer.
  sa_state() = default;

  using ptr = ctl_ptr<sa_state>;

  api_actor api;
  watch_set ws;
  write_gate gate;
  std::string root_ca;
  std::size_t namespaces = 0;
  std::size_t accounts = 0;
  std::size_t configmaps = 0;
  static inline const char* name = "k8s_serviceaccount_controller";

  static void start(ptr self);
  static void sync(ptr self, const std::string& ns);
};

std::string name_in(const std::string& key) {
  auto slash = key.find('/');
  return slash == std::string::npos ? key : key.substr(slash + 1);
}

void sa_state::start(ptr self) {
  auto& st = self->state;
  st.namespaces = st.ws.add(namespaces_ref);
  st.accounts = st.ws.add(accounts_ref);
  st.configmaps = st.ws.add(configmaps_ref);
  st.ws.on_change = [self](std::size_t kind, const std::string& key,
                           const json*, const json* after) {
    auto& st = self->state;
    if (!st.ws.all_synced())
      return;
    if (kind == st.namespaces) {
      if (after != nullptr)
        sync(self, key);
    } else if (kind == st.accounts) {
      if (after == nullptr && name_in(key) == account_name)
        sync(self, namespace_of(key));
    } else if (name_in(key) == root_ca_name) {
      sync(self, namespace_of(key));
    }
  };
  st.ws.on_synced = [self] {
    auto& st = self->state;
    std::vector<std::string> keys;
    for (const auto& [k, ns] : st.ws.objects(st.namespaces))
      keys.push_back(k);
    for (const auto& k : keys)
      sync(self, k);
  };
}

json root_ca_config_map(const std::string& ns, const std::string& pem) {
  return json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata",
               {{"name", root_ca_name},
                {"namespace", ns},
                {"annotations", {{description_annotation, description}}}}},
              {"data", {{"ca.crt", pem}}}};
}

void sa_state::sync(ptr self, const std::string& ns) {
  auto& st = self->state;
  if (!st.ws.all_synced())
    return;
  const json* obj = st.ws.find(st.namespaces, ns);
  if (obj == nullptr || pod_terminating(*obj))
    return;
  auto phase = str(*obj, "status", "phase");
  if (!phase.empty() && phase != "Active")
    return;
  std::vector<request> writes;
  if (st.ws.find(st.accounts, ns + "/" + account_name) == nullptr) {
    json sa = {{"apiVersion", "v1"},
               {"kind", "ServiceAccount"},
               {"metadata", {{"name", account_name}, {"namespace", ns}}}};
    writes.push_back(
        make_request(verb::create, accounts_ref, ns, {}, sa.dump()));
  }
  const json* cm = st.ws.find(st.configmaps, ns + "/" + root_ca_name);
  if (cm == nullptr) {
    writes.push_back(make_request(verb::create, configmaps_ref, ns, {},
                                  root_ca_config_map(ns, st.root_ca).dump()));
  } else {
    json want = json{{"ca.crt", st.root_ca}};
    json have = cm->contains("data") ? (*cm)["data"] : json::object();
    auto annotation
        = str((*cm)["metadata"], "annotations", description_annotation);
    if (!same(have, want) || annotation.empty()) {
      json next = *cm;
      next["data"] = want;
      auto& meta = next["metadata"];
      if (!meta.contains("annotations") || !meta["annotations"].is_object())
        meta["annotations"] = json::object();
      meta["annotations"][description_annotation] = description;
      writes.push_back(make_request(verb::update, configmaps_ref, ns,
                                    root_ca_name, next.dump()));
    }
  }
  if (writes.empty() || !st.gate.begin(ns))
    return;
  auto batch = std::make_shared<write_batch>();
  for (auto& w : writes) {
    auto kind
        = w.ref.resource == "serviceaccounts" ? st.accounts : st.configmaps;
    write<sa_state>(
        self, ns, batch, std::move(w),
        [self, kind](const json& answer) { self->state.ws.put(kind, answer); });
  }
}

} // namespace

network_controller_actor
spawn_serviceaccount_controller(caf::actor_system& sys, api_actor api,
                                std::string root_ca_pem) {
  return sys.spawn(
      [pem = std::move(root_ca_pem)](sa_state::ptr self, api_actor a) mutable {
        self->state.root_ca = std::move(pem);
        return run<sa_state>(self, std::move(a));
      },
      std::move(api));
}

} // namespace aiperf::k8s::sim
