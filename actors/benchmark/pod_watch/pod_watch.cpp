#include "actors/benchmark/pod_watch/pod_watch.hpp"

#include "k8s/api/json.hpp"
#include "k8s/client/client.hpp"
#include "k8s/client/config.hpp"
#include "k8s/errors/errors.hpp"
#include "proto/benchmark_errors.hpp"
#include "k8s/informer/informer.hpp"
#include "runtime/log/log.hpp"

#include <caf/all.hpp>

#include <charconv>
#include <cstdlib>
#include <map>

namespace aiperf::pod_watch {

namespace {

using k8s::json;
namespace inf = k8s::informer;

// JobSet's labels on every pod it creates (sigs.k8s.io/jobset,
// api/jobset/v1alpha2/jobset_types.go).
constexpr std::string_view jobset_label = "jobset.sigs.k8s.io/jobset-name";
constexpr std::string_view replicated_job_label = "jobset.sigs.k8s.io/replicatedjob-name";
constexpr std::string_view job_index_label = "jobset.sigs.k8s.io/job-index";
/// The replicated job of the worker pods (k8s/manifests).
constexpr std::string_view workers_job = "workers";

std::string label(const json& labels, std::string_view key) {
  auto i = labels.find(std::string{key});
  return i != labels.end() && i->is_string() ? i->get<std::string>() : std::string{};
}

struct seen_pod {
  pod_view view;
  bool gone = false;
  bool ready_reported = false;
};

struct watch_state {
  static inline const char* name = "pod_watch";
  watch_config cfg;
  inf::informer_actor informer;
  /// By informer key.
  std::map<std::string, seen_pod> pods;
  /// The key of the newest pod of each index.
  std::map<std::uint32_t, std::string> newest;
};

using watch_ptr = caf::stateful_actor<watch_state>*;

std::string pod_name(std::uint32_t index) {
  return "pod" + std::to_string(index);
}

void report(watch_ptr self, const seen_pod& p, std::string reason) {
  pod_report r;
  r.pod = pod_name(p.view.index);
  r.k8s_name = p.view.name;
  r.ready = !p.gone && p.view.ready;
  r.gone = !reason.empty();
  r.reason = std::move(reason);
  if (r.gone)
    log::get("pod_watch")->warn("worker pod {} ({}) is gone: {}", r.pod, r.k8s_name, r.reason);
  else
    log::get("pod_watch")->info("worker pod {} ({}) {}", r.pod, r.k8s_name,
                                r.ready ? "is Running and Ready" : "is not Ready");
  self->send(self->state.cfg.sink, pod_report_atom::value, std::move(r));
}

void observe(watch_ptr self, const std::string& key, const pod_view& v) {
  auto& st = self->state;
  // A new pod of an index whose old pod was not seen going (a missed
  // delete): the old pod's process is gone.
  if (auto n = st.newest.find(v.index); n != st.newest.end() && n->second != key) {
    auto old = st.pods.find(n->second);
    if (old != st.pods.end() && !old->second.gone) {
      old->second.gone = true;
      report(self, old->second, "replaced by a new pod (" + v.name + ")");
    }
  }
  st.newest[v.index] = key;
  auto [i, fresh] = st.pods.try_emplace(key);
  auto& p = i->second;
  if (!fresh && p.view.uid != v.uid) {
    // Deleted and created again under the same name between two looks.
    if (!p.gone)
      report(self, p, "replaced by a new pod (" + v.name + ")");
    p = seen_pod{};
    fresh = true;
  }
  auto before = p.view;
  p.view = v;
  if (p.gone)
    return;
  if (v.deleting) {
    p.gone = true;
    return report(self, p, "deleted");
  }
  if (v.failed) {
    p.gone = true;
    return report(self, p, "failed");
  }
  if (!fresh && v.restarts > before.restarts)
    // The pod stays; only its process restarted, so a later restart is
    // reported again.
    report(self, p, "container restarted (restart count " + std::to_string(v.restarts) + ")");
  if (fresh || v.ready != before.ready || !p.ready_reported) {
    p.ready_reported = true;
    report(self, p, "");
  }
}

void vanish(watch_ptr self, const std::string& key) {
  auto& st = self->state;
  auto i = st.pods.find(key);
  if (i == st.pods.end())
    return;
  if (!i->second.gone) {
    i->second.gone = true;
    report(self, i->second, "deleted");
  }
  if (auto n = st.newest.find(i->second.view.index); n != st.newest.end() && n->second == key)
    st.newest.erase(n);
  st.pods.erase(i);
}

caf::behavior pod_watch_actor(watch_ptr self, watch_config cfg) {
  auto& st = self->state;
  st.cfg = std::move(cfg);
  inf::informer_config icfg;
  icfg.ref = k8s::resource_ref{"", "v1", "pods", st.cfg.namespace_name, "", ""};
  icfg.label_selector = selector_of(st.cfg.job_id);
  icfg.seed = st.cfg.seed;
  st.informer = inf::spawn_informer(self->system(), st.cfg.api, icfg,
                                    caf::actor_cast<inf::owner_actor>(self));
  self->link_to(st.informer);
  return {
    [=](inf::reconcile_atom, std::string& key) {
      auto& st = self->state;
      self->request(st.informer, caf::infinite, inf::cache_get_atom::value, key)
        .then(
          [=](std::string& text) {
            if (auto v = view_of(text))
              observe(self, key, *v);
            self->send(self->state.informer, inf::done_atom::value, key, caf::timespan{0},
                       false);
          },
          [=](caf::error& err) {
            bool gone = is_error(err, k8s::errc::not_found);
            if (gone)
              vanish(self, key);
            self->send(self->state.informer, inf::done_atom::value, key, caf::timespan{0},
                       !gone);
          });
    },
  };
}

} // namespace

std::optional<pod_view> view_of(std::string_view pod_json) {
  auto doc = json::parse(pod_json, nullptr, false);
  if (!doc.is_object() || doc.value("kind", std::string{}) != "Pod")
    return std::nullopt;
  auto meta = doc.value("metadata", json::object());
  auto labels = meta.value("labels", json::object());
  if (label(labels, replicated_job_label) != workers_job)
    return std::nullopt;
  auto index_text = label(labels, job_index_label);
  pod_view v;
  auto [end, ec] = std::from_chars(index_text.data(), index_text.data() + index_text.size(),
                                   v.index);
  if (index_text.empty() || ec != std::errc{} || end != index_text.data() + index_text.size())
    return std::nullopt;
  v.name = meta.value("name", std::string{});
  v.uid = meta.value("uid", std::string{});
  v.deleting = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  auto status = doc.value("status", json::object());
  auto phase = status.value("phase", std::string{});
  v.failed = phase == "Failed";
  bool ready_condition = false;
  for (auto& c : status.value("conditions", json::array()))
    if (c.value("type", std::string{}) == "Ready")
      ready_condition = c.value("status", std::string{}) == "True";
  v.ready = phase == "Running" && ready_condition;
  for (auto& c : status.value("containerStatuses", json::array()))
    v.restarts += c.value("restartCount", std::int64_t{0});
  return v;
}

std::string selector_of(std::string_view job_id) {
  // The JobSet is named as k8s::manifests::jobset_name names it.
  return std::string{jobset_label} + "=aiperf-" + std::string{job_id};
}

caf::actor spawn_pod_watch(caf::actor_system& sys, watch_config cfg) {
  return sys.spawn(pod_watch_actor, std::move(cfg));
}

caf::expected<std::optional<watch_config>> in_cluster_watch(caf::actor_system& sys) {
  auto var = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string{v ? v : ""};
  };
  if (var("KUBERNETES_SERVICE_HOST").empty())
    return std::optional<watch_config>{};
  watch_config cfg;
  cfg.job_id = var("AIPERF_JOB_ID");
  cfg.namespace_name = var("AIPERF_NAMESPACE");
  if (cfg.job_id.empty() || cfg.namespace_name.empty())
    return std::optional<watch_config>{};
  auto client_cfg = k8s::client::load_in_cluster(k8s::client::process_environment());
  if (!client_cfg)
    return make_error(benchmark::errc::invalid_config,
                      "the worker pod watch needs the in-cluster Kubernetes configuration "
                      "(the pod's service account, with list and watch on pods): "
                          + error_message(client_cfg.error()));
  auto api = k8s::client::spawn_client(sys, std::move(*client_cfg));
  if (!api)
    return std::move(api.error());
  cfg.api = std::move(*api);
  return std::optional<watch_config>{std::move(cfg)};
}

} // namespace aiperf::pod_watch
