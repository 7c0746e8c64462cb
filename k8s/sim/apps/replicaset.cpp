// The ReplicaSet controller (kubernetes pkg/controller/replicaset): keeps
// spec.replicas active pods per ReplicaSet and reports them in its status.
#include "k8s/object/selectors.hpp"
#include "k8s/sim/apps/apps.hpp"
#include "k8s/sim/apps/detail.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace aiperf::k8s::sim {

namespace {

using namespace apps_detail;

constexpr const char* component = "replicaset-controller";
// Upstream creates in slow-start batches up to burstReplicas (500) per sync.
constexpr std::int64_t burst_replicas = 500;

struct rs_state {
  rs_state() = default;

  api_actor api;
  watch_cache cache;
  std::size_t rs_type = 0;
  std::size_t pod_type = 0;
  std::map<std::string, int> in_flight; // writes per ReplicaSet key
  std::set<std::string> dirty;          // changed while writes were in flight
  std::set<std::string> queued;
  failure_backoff backoff; // after failed writes
  std::map<std::string, caf::actor_clock::time_point> ready_since; // pod uid
  wall_clock wall;
  static inline const char* name = "k8s_replicaset_controller";
};

using rs_ptr = apps_controller_actor::stateful_pointer<rs_state>;

void queue(rs_ptr self, const std::string& key) {
  if (self->state.queued.insert(key).second)
    self->send(self, apps_sync_atom::value, key);
}

std::int64_t replicas_of(const json& obj) {
  const auto& spec = obj.value("spec", json::object());
  auto it = spec.find("replicas");
  return it != spec.end() && it->is_number_integer() ? it->get<std::int64_t>()
                                                     : 1;
}

// The owner key of a pod's controller ReplicaSet, or "".
std::string owner_key(rs_ptr self, const json& pod) {
  auto uid = controller_uid(pod, "ReplicaSet");
  if (uid.empty())
    return {};
  auto ns = meta(pod, "namespace");
  for (const auto& ref : pod["metadata"]["ownerReferences"])
    if (ref.value("uid", "") == uid) {
      auto key = ns + "/" + ref.value("name", "");
      auto* rs = self->state.cache.find(self->state.rs_type, key);
      return rs != nullptr && meta(*rs, "uid") == uid ? key : std::string{};
    }
  return {};
}

void on_change(rs_ptr self, std::size_t type, const std::string& key,
               const json* before, const json* after) {
  auto& st = self->state;
  if (type == st.rs_type) {
    queue(self, key);
    return;
  }
  const json& pod = after != nullptr ? *after : *before;
  if (after == nullptr)
    st.ready_since.erase(meta(pod, "uid"));
  auto owner = owner_key(self, pod);
  if (!owner.empty())
    queue(self, owner);
}

bool all_synced(rs_ptr self) {
  for (const auto& t : self->state.cache.types)
    if (!t.synced)
      return false;
  return true;
}

// Deletion preference of upstream's ActivePods ordering: unassigned before
// assigned, Pending before Unknown before Running, not ready before ready,
// then the most recently created first.
bool delete_first(const json& a, const json& b) {
  auto assigned = [](const json& p) {
    return p.contains("spec") && !p["spec"].value("nodeName", "").empty();
  };
  auto phase_rank = [](const json& p) {
    auto phase = p.value("status", json::object()).value("phase", "");
    return phase == "Pending" ? 0 : phase == "Running" ? 2 : 1;
  };
  if (assigned(a) != assigned(b))
    return !assigned(a);
  if (phase_rank(a) != phase_rank(b))
    return phase_rank(a) < phase_rank(b);
  if (pod_ready(a) != pod_ready(b))
    return !pod_ready(a);
  return meta(a, "creationTimestamp") > meta(b, "creationTimestamp");
}

bool labels_include(const json& labels, const json& wanted) {
  if (!wanted.is_object())
    return true;
  for (const auto& [k, v] : wanted.items())
    if (!labels.is_object() || !labels.contains(k) || labels[k] != v)
      return false;
  return true;
}

void write_done(rs_ptr self, const std::string& key) {
  auto& st = self->state;
  if (--st.in_flight[key] > 0)
    return;
  st.in_flight.erase(key);
  if (st.dirty.erase(key))
    queue(self, key);
}

void record(rs_ptr self, const json& rs, const std::string& type,
            const std::string& reason, const std::string& message) {
  auto now = self->state.wall.unix_seconds(self->clock().now());
  self->request(self->state.api, request_timeout,
                event_request(rs, "apps/v1", "ReplicaSet", type, reason,
                              message, component, now))
      .then([](response&) {}, [](caf::error&) {});
}

json pod_from_template(const json& rs) {
  const auto& tmpl = rs["spec"].value("template", json::object());
  const auto& tmeta = tmpl.value("metadata", json::object());
  json m = json::object();
  m["generateName"] = meta(rs, "name") + "-";
  m["namespace"] = meta(rs, "namespace");
  for (const char* field : {"labels", "annotations", "finalizers"})
    if (tmeta.contains(field))
      m[field] = tmeta[field];
  m["ownerReferences"]
      = json::array({controller_ref(rs, "apps/v1", "ReplicaSet")});
  return json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", m},
              {"spec", tmpl.value("spec", json::object())}};
}

void create_pods(rs_ptr self, const std::string& key, const json& rs,
                 std::int64_t count) {
  auto& st = self->state;
  auto ns = meta(rs, "namespace");
  for (std::int64_t i = 0; i < count; ++i) {
    ++st.in_flight[key];
    self->request(st.api, request_timeout,
                  make_request(verb::create,
                               resource_ref{"", "v1", "pods", ns, {}, {}},
                               pod_from_template(rs)))
        .then(
            [self, key, rs](response& res) {
              self->state.backoff.forget(key);
              if (auto pod = parse(res.body)) {
                self->state.cache.put(self->state.pod_type, *pod);
                record(self, rs, "Normal", "SuccessfulCreate",
                       "Created pod: " + meta(*pod, "name"));
              }
              write_done(self, key);
            },
            [self, key, rs](caf::error& err) {
              const auto* s = status_of(err);
              record(self, rs, "Warning", "FailedCreate",
                     "Error creating: "
                         + (s != nullptr ? s->message : to_string(err)));
              write_done(self, key);
              // Quota or admission may relent: try again, backing off.
              retry_later(self, key);
            });
  }
}

void delete_pods(rs_ptr self, const std::string& key, const json& rs,
                 std::vector<const json*> victims) {
  auto& st = self->state;
  for (const auto* victim : victims) {
    json pod = *victim;
    ++st.in_flight[key];
    json options = {{"kind", "DeleteOptions"},
                    {"apiVersion", "v1"},
                    {"preconditions", {{"uid", meta(pod, "uid")}}}};
    self->request(st.api, request_timeout,
                  make_request(verb::remove,
                               resource_ref{"",
                                            "v1",
                                            "pods",
                                            meta(pod, "namespace"),
                                            meta(pod, "name"),
                                            {}},
                               options))
        .then(
            [self, key, rs, pod](response& res) {
              self->state.backoff.forget(key);
              // Removed at once, or pending its grace period: either way it
              // no longer counts as active.
              auto now = parse(res.body);
              if (now && now->value("kind", "") == "Pod")
                self->state.cache.put(self->state.pod_type, *now);
              else
                self->state.cache.remove(self->state.pod_type, pod);
              record(self, rs, "Normal", "SuccessfulDelete",
                     "Deleted pod: " + meta(pod, "name"));
              write_done(self, key);
            },
            [self, key](caf::error&) {
              write_done(self, key);
              retry_later(self, key);
            });
  }
}

void sync(rs_ptr self, const std::string& key) {
  auto& st = self->state;
  if (!all_synced(self))
    return;
  if (st.in_flight.count(key)) {
    st.dirty.insert(key);
    return;
  }
  const json* found = st.cache.find(st.rs_type, key);
  if (found == nullptr)
    return;
  const json rs = *found;
  auto ns = meta(rs, "namespace");
  auto uid = meta(rs, "uid");
  std::vector<const json*> active;
  for (const auto& [pkey, pod] : st.cache.types[st.pod_type].objects)
    if (meta(pod, "namespace") == ns && controller_uid(pod, "ReplicaSet") == uid
        && !pod_terminal(pod) && !being_deleted(pod))
      active.push_back(&pod);
  auto want = replicas_of(rs);
  auto have = static_cast<std::int64_t>(active.size());
  if (!being_deleted(rs)) {
    if (have < want) {
      create_pods(self, key, rs, std::min(want - have, burst_replicas));
      return; // the status follows once the creates are seen
    }
    if (have > want) {
      std::sort(active.begin(), active.end(), [](const json* a, const json* b) {
        return delete_first(*a, *b);
      });
      delete_pods(self, key, rs,
                  std::vector<const json*>(active.begin(),
                                           active.begin() + (have - want)));
      return;
    }
  }
  // Status, as upstream's calculateStatus.
  const auto& spec = rs.value("spec", json::object());
  auto min_ready = spec.value("minReadySeconds", std::int64_t{0});
  const auto& tlabels = spec.value("template", json::object())
                            .value("metadata", json::object())
                            .value("labels", json::object());
  auto now = self->clock().now();
  std::int64_t fully_labeled = 0;
  std::int64_t ready = 0;
  std::int64_t available = 0;
  std::optional<caf::timespan> recheck;
  for (const auto* pod : active) {
    const auto& labels = (*pod)["metadata"].value("labels", json::object());
    if (labels_include(labels, tlabels))
      ++fully_labeled;
    auto puid = meta(*pod, "uid");
    if (!pod_ready(*pod)) {
      st.ready_since.erase(puid);
      continue;
    }
    ++ready;
    auto since = st.ready_since.emplace(puid, now).first->second;
    auto needed = std::chrono::seconds{min_ready};
    if (min_ready <= 0 || now - since >= needed) {
      ++available;
    } else {
      auto left = needed - (now - since);
      if (!recheck || left < *recheck)
        recheck = left;
    }
  }
  if (recheck)
    self->delayed_send(self, *recheck, apps_sync_atom::value, key);
  json status = rs.value("status", json::object());
  json next = status;
  next["replicas"] = have;
  next["fullyLabeledReplicas"] = fully_labeled;
  next["readyReplicas"] = ready;
  next["availableReplicas"] = available;
  if (rs["metadata"].contains("generation"))
    next["observedGeneration"] = rs["metadata"]["generation"];
  if (next == status)
    return;
  json updated = rs;
  updated["status"] = next;
  ++st.in_flight[key];
  auto req = make_request(
      verb::update,
      resource_ref{"apps", "v1", "replicasets", ns, meta(rs, "name"), "status"},
      updated);
  self->request(st.api, request_timeout, std::move(req))
      .then(
          [self, key](response& res) {
            self->state.backoff.forget(key);
            if (auto obj = parse(res.body))
              self->state.cache.put(self->state.rs_type, *obj);
            write_done(self, key);
          },
          [self, key](caf::error&) {
            // A conflict: the watch brings the newer object; anything else
            // waits its back-off.
            write_done(self, key);
            retry_later(self, key);
          });
}

apps_controller_actor::behavior_type rs_impl(rs_ptr self, api_actor api) {
  auto& st = self->state;
  st.api = std::move(api);
  st.wall = wall_clock{self->clock().now()};
  st.rs_type = st.cache.add("apps", "v1", "replicasets");
  st.pod_type = st.cache.add("", "v1", "pods");
  st.cache.on_change = [self](std::size_t type, const std::string& key,
                              const json* before, const json* after) {
    on_change(self, type, key, before, after);
  };
  st.cache.on_listed = [self](std::size_t) {
    for (const auto& [key, rs] :
         self->state.cache.types[self->state.rs_type].objects)
      queue(self, key);
  };
  relist(self, st.rs_type);
  relist(self, st.pod_type);
  return controller_behavior(
      self, [self](const std::string& key) { sync(self, key); });
}

} // namespace

apps_controller_actor spawn_replicaset_controller(caf::actor_system& sys,
                                                  api_actor api) {
  return sys.spawn(rs_impl, std::move(api));
}

} // namespace aiperf::k8s::sim
