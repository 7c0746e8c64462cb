// The Deployment controller (kubernetes pkg/controller/deployment): one
// ReplicaSet per pod template, rolled over by the Deployment's strategy, and
// the Deployment's status and conditions computed from its ReplicaSets.
#include "k8s/object/time.hpp"
#include "k8s/sim/apps/apps.hpp"
#include "k8s/sim/apps/detail.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace aiperf::k8s::sim {

namespace {

using namespace apps_detail;

constexpr const char* component = "deployment-controller";
constexpr const char* revision_key = "deployment.kubernetes.io/revision";
constexpr const char* desired_key = "deployment.kubernetes.io/desired-replicas";
constexpr const char* max_key = "deployment.kubernetes.io/max-replicas";
constexpr const char* hash_key = "pod-template-hash";

struct deploy_state {
  deploy_state() = default;

  api_actor api;
  watch_cache cache;
  std::size_t deploy_type = 0;
  std::size_t rs_type = 0;
  std::map<std::string, int> in_flight;
  std::set<std::string> dirty;
  std::set<std::string> queued;
  failure_backoff backoff; // after failed writes
  /// Deployments whose new ReplicaSet this controller just created: their
  /// Progressing condition says NewReplicaSetCreated.
  std::map<std::string, std::string> created;
  wall_clock wall;
  static inline const char* name = "k8s_deployment_controller";
};

using deploy_ptr = apps_controller_actor::stateful_pointer<deploy_state>;

void queue(deploy_ptr self, const std::string& key) {
  if (self->state.queued.insert(key).second)
    self->send(self, apps_sync_atom::value, key);
}

std::int64_t int_at(const json& obj, const char* a, const char* b,
                    std::int64_t fallback) {
  if (!obj.is_object() || !obj.contains(a) || !obj[a].is_object())
    return fallback;
  auto it = obj[a].find(b);
  return it != obj[a].end() && it->is_number_integer() ? it->get<std::int64_t>()
                                                       : fallback;
}

std::int64_t spec_replicas(const json& obj) {
  return int_at(obj, "spec", "replicas", 1);
}

std::int64_t status_count(const json& obj, const char* field) {
  return int_at(obj, "status", field, 0);
}

std::int64_t revision_of(const json& rs) {
  if (!rs.contains("metadata") || !rs["metadata"].contains("annotations"))
    return 0;
  const auto& a = rs["metadata"]["annotations"];
  if (!a.is_object() || !a.contains(revision_key)
      || !a[revision_key].is_string())
    return 0;
  try {
    return std::stoll(a[revision_key].get<std::string>());
  } catch (const std::exception&) {
    return 0;
  }
}

// An IntOrString of the rolling update: "25%" of `total`, rounded up for
// maxSurge and down for maxUnavailable (intstr.GetScaledValueFromIntOrPercent).
std::int64_t scaled(const json& value, std::int64_t total, bool round_up) {
  if (value.is_number_integer())
    return value.get<std::int64_t>();
  if (!value.is_string())
    return 0;
  auto text = value.get<std::string>();
  if (text.empty() || text.back() != '%')
    return 0;
  double pct = 0;
  try {
    pct = std::stod(text.substr(0, text.size() - 1));
  } catch (const std::exception&) {
    return 0;
  }
  double v = pct * static_cast<double>(total) / 100.0;
  return static_cast<std::int64_t>(round_up ? std::ceil(v) : std::floor(v));
}

bool rolling(const json& d) {
  const auto& strategy = d["spec"].value("strategy", json::object());
  return strategy.value("type", "RollingUpdate") != "Recreate";
}

// deploymentutil.ResolveFenceposts: {maxSurge, maxUnavailable}.
std::pair<std::int64_t, std::int64_t> fenceposts(const json& d) {
  if (!rolling(d))
    return {0, 0};
  auto replicas = spec_replicas(d);
  const auto& ru = d["spec"]["strategy"].value("rollingUpdate", json::object());
  auto surge = scaled(ru.value("maxSurge", json("25%")), replicas, true);
  auto unavailable
      = scaled(ru.value("maxUnavailable", json("25%")), replicas, false);
  if (surge == 0 && unavailable == 0)
    unavailable = 1;
  return {surge, unavailable};
}

// deploymentutil.MaxUnavailable: 0 for Recreate and for no replicas.
std::int64_t max_unavailable(const json& d) {
  auto replicas = spec_replicas(d);
  if (!rolling(d) || replicas == 0)
    return 0;
  return std::min(fenceposts(d).second, replicas);
}

void write_done(deploy_ptr self, const std::string& key) {
  auto& st = self->state;
  if (--st.in_flight[key] > 0)
    return;
  st.in_flight.erase(key);
  if (st.dirty.erase(key))
    queue(self, key);
}

void record(deploy_ptr self, const json& d, const std::string& message) {
  auto now = self->state.wall.unix_seconds(self->clock().now());
  self->request(self->state.api, request_timeout,
                event_request(d, "apps/v1", "Deployment", "Normal",
                              "ScalingReplicaSet", message, component, now))
      .then([](response&) {}, [](caf::error&) {});
}

resource_ref rs_ref(const std::string& ns, const std::string& name = {}) {
  return resource_ref{"apps", "v1", "replicasets", ns, name, {}};
}

// Sends an update of a ReplicaSet; the reply refreshes the cache.
void update_rs(deploy_ptr self, const std::string& key, json rs,
               std::function<void()> on_ok = {}) {
  auto& st = self->state;
  ++st.in_flight[key];
  auto req = make_request(verb::update,
                          rs_ref(meta(rs, "namespace"), meta(rs, "name")), rs);
  self->request(st.api, request_timeout, std::move(req))
      .then(
          [self, key, on_ok](response& res) {
            self->state.backoff.forget(key);
            if (auto obj = parse(res.body))
              self->state.cache.put(self->state.rs_type, *obj);
            if (on_ok)
              on_ok();
            write_done(self, key);
          },
          [self, key](caf::error&) {
            write_done(self, key);
            retry_later(self, key);
          });
}

// Sets a ReplicaSet's spec.replicas (and the desired/max annotations), with
// upstream's ScalingReplicaSet event.
void scale_rs(deploy_ptr self, const std::string& key, const json& d,
              const json& rs, std::int64_t to) {
  auto from = spec_replicas(rs);
  json next = rs;
  next["spec"]["replicas"] = to;
  auto& annotations = next["metadata"]["annotations"];
  if (!annotations.is_object())
    annotations = json::object();
  annotations[desired_key] = std::to_string(spec_replicas(d));
  annotations[max_key] = std::to_string(spec_replicas(d) + fenceposts(d).first);
  if (from == to && next == rs)
    return;
  auto name = meta(rs, "name");
  update_rs(self, key, std::move(next), [self, d, name, from, to] {
    if (from != to)
      record(self, d,
             "Scaled " + std::string{from < to ? "up" : "down"}
                 + " replica set " + name + " from " + std::to_string(from)
                 + " to " + std::to_string(to));
  });
}

json new_replica_set(const json& d, const std::string& hash,
                     std::int64_t replicas, std::int64_t revision) {
  json tmpl = d["spec"].value("template", json::object());
  auto& tmeta = tmpl["metadata"];
  if (!tmeta.is_object())
    tmeta = json::object();
  if (!tmeta["labels"].is_object())
    tmeta["labels"] = json::object();
  tmeta["labels"][hash_key] = hash;
  json selector = d["spec"].value("selector", json::object());
  if (!selector["matchLabels"].is_object())
    selector["matchLabels"] = json::object();
  selector["matchLabels"][hash_key] = hash;
  auto surge = fenceposts(d).first;
  json annotations = json::object();
  if (d["metadata"].contains("annotations")
      && d["metadata"]["annotations"].is_object())
    for (const auto& [k, v] : d["metadata"]["annotations"].items())
      if (k != revision_key
          && k != "kubectl.kubernetes.io/last-applied-configuration")
        annotations[k] = v;
  annotations[desired_key] = std::to_string(spec_replicas(d));
  annotations[max_key] = std::to_string(spec_replicas(d) + surge);
  annotations[revision_key] = std::to_string(revision);
  json spec
      = {{"replicas", replicas}, {"selector", selector}, {"template", tmpl}};
  if (d["spec"].contains("minReadySeconds"))
    spec["minReadySeconds"] = d["spec"]["minReadySeconds"];
  return json{{"apiVersion", "apps/v1"},
              {"kind", "ReplicaSet"},
              {"metadata",
               {{"name", meta(d, "name") + "-" + hash},
                {"namespace", meta(d, "namespace")},
                {"labels", tmeta["labels"]},
                {"annotations", annotations},
                {"ownerReferences",
                 json::array({controller_ref(d, "apps/v1", "Deployment")})}}},
              {"spec", spec}};
}

json condition(const std::string& type, const std::string& status,
               const std::string& reason, const std::string& message,
               const std::string& when) {
  return json{{"type", type},           {"status", status},
              {"lastUpdateTime", when}, {"lastTransitionTime", when},
              {"reason", reason},       {"message", message}};
}

// deploymentutil.SetDeploymentCondition: same status and reason keeps the
// condition as it is; same status keeps its lastTransitionTime.
void set_condition(json& status, json cond) {
  auto& conditions = status["conditions"];
  if (!conditions.is_array())
    conditions = json::array();
  json kept = json::array();
  for (const auto& c : conditions) {
    if (c.value("type", "") != cond["type"]) {
      kept.push_back(c);
      continue;
    }
    if (c.value("status", "") == cond["status"]
        && c.value("reason", "") == cond["reason"]
        && c.value("message", "") == cond["message"])
      return;
    if (c.value("status", "") == cond["status"]
        && c.contains("lastTransitionTime"))
      cond["lastTransitionTime"] = c["lastTransitionTime"];
  }
  kept.push_back(std::move(cond));
  conditions = std::move(kept);
}

const json* find_condition(const json& status, const std::string& type) {
  if (!status.contains("conditions") || !status["conditions"].is_array())
    return nullptr;
  for (const auto& c : status["conditions"])
    if (c.value("type", "") == type)
      return &c;
  return nullptr;
}

void sync_status(deploy_ptr self, const std::string& key, const json& d,
                 const json* new_rs, const std::vector<json>& all) {
  auto& st = self->state;
  auto replicas = spec_replicas(d);
  const json previous = d.value("status", json::object());
  json status = previous;
  std::int64_t total = 0;
  std::int64_t ready = 0;
  std::int64_t available = 0;
  for (const auto& rs : all) {
    total += status_count(rs, "replicas");
    ready += status_count(rs, "readyReplicas");
    available += status_count(rs, "availableReplicas");
  }
  auto updated = new_rs != nullptr ? status_count(*new_rs, "replicas") : 0;
  if (d["metadata"].contains("generation"))
    status["observedGeneration"] = d["metadata"]["generation"];
  status["replicas"] = total;
  status["updatedReplicas"] = updated;
  status["readyReplicas"] = ready;
  status["availableReplicas"] = available;
  status["unavailableReplicas"]
      = std::max<std::int64_t>(replicas - available, 0);
  // Zero counts are omitted on the wire, as upstream's omitempty does.
  for (const char* field : {"replicas", "updatedReplicas", "readyReplicas",
                            "availableReplicas", "unavailableReplicas"})
    if (status[field] == 0)
      status.erase(field);
  auto when = format_time(st.wall.unix_seconds(self->clock().now()));
  if (available >= replicas - max_unavailable(d))
    set_condition(status,
                  condition("Available", "True", "MinimumReplicasAvailable",
                            "Deployment has minimum availability.", when));
  else
    set_condition(status,
                  condition("Available", "False", "MinimumReplicasUnavailable",
                            "Deployment does not have minimum availability.",
                            when));
  if (new_rs != nullptr) {
    auto name = meta(*new_rs, "name");
    bool complete
        = updated == replicas && total == replicas && available == replicas;
    auto created = st.created.find(key);
    bool progressing = updated > status_count(d, "updatedReplicas")
                       || ready > status_count(d, "readyReplicas")
                       || available > status_count(d, "availableReplicas")
                       || total < status_count(d, "replicas");
    if (complete) {
      st.created.erase(key);
      set_condition(
          status,
          condition("Progressing", "True", "NewReplicaSetAvailable",
                    "ReplicaSet \"" + name + "\" has successfully progressed.",
                    when));
    } else if (created != st.created.end() && created->second == name) {
      set_condition(
          status, condition("Progressing", "True", "NewReplicaSetCreated",
                            "Created new replica set \"" + name + "\"", when));
    } else if (progressing) {
      auto cond
          = condition("Progressing", "True", "ReplicaSetUpdated",
                      "ReplicaSet \"" + name + "\" is progressing.", when);
      set_condition(status, cond);
    } else if (find_condition(status, "Progressing") == nullptr) {
      set_condition(status,
                    condition("Progressing", "True", "FoundNewReplicaSet",
                              "Found new replica set \"" + name + "\"", when));
    }
  }
  // Upstream lists Available before Progressing.
  if (status.contains("conditions") && status["conditions"].is_array())
    std::stable_sort(status["conditions"].begin(), status["conditions"].end(),
                     [](const json& a, const json& b) {
                       return a.value("type", "") == "Available"
                              && b.value("type", "") != "Available";
                     });
  if (status == previous)
    return;
  json next = d;
  next["status"] = status;
  ++st.in_flight[key];
  auto req = make_request(verb::update,
                          resource_ref{"apps", "v1", "deployments",
                                       meta(d, "namespace"), meta(d, "name"),
                                       "status"},
                          next);
  self->request(st.api, request_timeout, std::move(req))
      .then(
          [self, key](response& res) {
            self->state.backoff.forget(key);
            if (auto obj = parse(res.body))
              self->state.cache.put(self->state.deploy_type, *obj);
            write_done(self, key);
          },
          [self, key](caf::error&) {
            write_done(self, key);
            retry_later(self, key);
          });
}

// Deletes old ReplicaSets with no replicas beyond revisionHistoryLimit,
// oldest revision first.
void cleanup(deploy_ptr self, const std::string& key, const json& d,
             std::vector<json> olds) {
  auto limit = int_at(d, "spec", "revisionHistoryLimit", 10);
  std::vector<json> idle;
  for (auto& rs : olds)
    if (spec_replicas(rs) == 0 && status_count(rs, "replicas") == 0
        && !being_deleted(rs))
      idle.push_back(rs);
  if (static_cast<std::int64_t>(idle.size()) <= limit)
    return;
  std::sort(idle.begin(), idle.end(), [](const json& a, const json& b) {
    return revision_of(a) < revision_of(b);
  });
  auto extra = static_cast<std::int64_t>(idle.size()) - limit;
  for (std::int64_t i = 0; i < extra; ++i) {
    json options = {{"kind", "DeleteOptions"},
                    {"apiVersion", "v1"},
                    {"propagationPolicy", "Background"},
                    {"preconditions", {{"uid", meta(idle[i], "uid")}}}};
    auto rs = idle[i];
    ++self->state.in_flight[key];
    self->request(self->state.api, request_timeout,
                  make_request(verb::remove,
                               rs_ref(meta(rs, "namespace"), meta(rs, "name")),
                               options))
        .then(
            [self, key, rs](response&) {
              self->state.backoff.forget(key);
              self->state.cache.remove(self->state.rs_type, rs);
              write_done(self, key);
            },
            [self, key](caf::error&) { write_done(self, key); });
  }
}

void sync(deploy_ptr self, const std::string& key) {
  auto& st = self->state;
  for (const auto& t : st.cache.types)
    if (!t.synced)
      return;
  if (st.in_flight.count(key)) {
    st.dirty.insert(key);
    return;
  }
  const json* found = st.cache.find(st.deploy_type, key);
  if (found == nullptr) {
    st.created.erase(key);
    return;
  }
  const json d = *found;
  if (being_deleted(d))
    return; // the garbage collector removes its ReplicaSets
  auto ns = meta(d, "namespace");
  auto uid = meta(d, "uid");
  auto hash = pod_template_hash(d["spec"].value("template", json::object()),
                                int_at(d, "status", "collisionCount", 0));
  auto new_name = meta(d, "name") + "-" + hash;
  std::optional<json> new_rs;
  std::vector<json> olds;
  for (const auto& [rkey, rs] : st.cache.types[st.rs_type].objects) {
    if (meta(rs, "namespace") != ns || controller_uid(rs, "Deployment") != uid)
      continue;
    if (meta(rs, "name") == new_name)
      new_rs = rs;
    else
      olds.push_back(rs);
  }
  std::sort(olds.begin(), olds.end(), [](const json& a, const json& b) {
    auto ca = meta(a, "creationTimestamp");
    auto cb = meta(b, "creationTimestamp");
    return ca != cb ? ca < cb : meta(a, "name") < meta(b, "name");
  });
  std::int64_t max_old_revision = 0;
  for (const auto& rs : olds)
    max_old_revision = std::max(max_old_revision, revision_of(rs));
  auto replicas = spec_replicas(d);
  auto surge = fenceposts(d).first;
  bool paused = d["spec"].value("paused", false);
  auto all = olds;
  if (new_rs)
    all.push_back(*new_rs);
  auto sum_spec = [](const std::vector<json>& rss) {
    std::int64_t n = 0;
    for (const auto& rs : rss)
      n += spec_replicas(rs);
    return n;
  };

  if (!paused && !new_rs) {
    std::int64_t count = replicas;
    if (!rolling(d)) {
      // Recreate: every old pod is gone before the new ReplicaSet exists.
      bool waiting = false;
      for (const auto& rs : olds) {
        if (spec_replicas(rs) > 0) {
          scale_rs(self, key, d, rs, 0);
          waiting = true;
        } else if (status_count(rs, "replicas") > 0) {
          waiting = true;
        }
      }
      if (waiting) {
        sync_status(self, key, d, nullptr, all);
        return;
      }
    } else {
      auto current = sum_spec(olds);
      count = current >= replicas + surge
                  ? 0
                  : std::min(replicas + surge - current, replicas);
    }
    auto rs = new_replica_set(d, hash, count, max_old_revision + 1);
    ++st.in_flight[key];
    self->request(st.api, request_timeout,
                  make_request(verb::create, rs_ref(ns), rs))
        .then(
            [self, key, d, count](response& res) {
              self->state.backoff.forget(key);
              if (auto obj = parse(res.body)) {
                self->state.cache.put(self->state.rs_type, *obj);
                self->state.created[key] = meta(*obj, "name");
                if (count > 0)
                  record(self, d,
                         "Scaled up replica set " + meta(*obj, "name")
                             + " from 0 to " + std::to_string(count));
              }
              self->state.dirty.insert(key);
              write_done(self, key);
            },
            [self, key](caf::error&) {
              // AlreadyExists from a ReplicaSet we have not seen yet, or a
              // refusal: try again, backing off.
              write_done(self, key);
              retry_later(self, key);
            });
    return;
  }

  // The Deployment's revision follows its new ReplicaSet's, which is the
  // newest (a template rolled back to gets a new revision).
  if (new_rs && revision_of(*new_rs) <= max_old_revision) {
    json next = *new_rs;
    next["metadata"]["annotations"][revision_key]
        = std::to_string(max_old_revision + 1);
    update_rs(self, key, std::move(next));
    return;
  }
  if (new_rs) {
    auto rev = std::to_string(revision_of(*new_rs));
    const auto& annotations
        = d["metadata"].value("annotations", json::object());
    if (annotations.value(revision_key, "") != rev) {
      json next = d;
      if (!next["metadata"]["annotations"].is_object())
        next["metadata"]["annotations"] = json::object();
      next["metadata"]["annotations"][revision_key] = rev;
      ++st.in_flight[key];
      self->request(
              st.api, request_timeout,
              make_request(
                  verb::update,
                  resource_ref{
                      "apps", "v1", "deployments", ns, meta(d, "name"), {}},
                  next))
          .then(
              [self, key](response& res) {
                self->state.backoff.forget(key);
                if (auto obj = parse(res.body))
                  self->state.cache.put(self->state.deploy_type, *obj);
                self->state.dirty.insert(key);
                write_done(self, key);
              },
              [self, key](caf::error&) {
                write_done(self, key);
                retry_later(self, key);
              });
      return;
    }
  }

  if (!paused && new_rs) {
    auto current_new = spec_replicas(*new_rs);
    if (!rolling(d)) {
      bool waiting = false;
      for (const auto& rs : olds) {
        if (spec_replicas(rs) > 0) {
          scale_rs(self, key, d, rs, 0);
          waiting = true;
        } else if (status_count(rs, "replicas") > 0) {
          waiting = true;
        }
      }
      if (!waiting && current_new != replicas)
        scale_rs(self, key, d, *new_rs, replicas);
    } else {
      // reconcileNewReplicaSet; the old ones wait for the next sync when
      // it scaled, as upstream returns there.
      bool scaled_new = false;
      if (current_new > replicas) {
        scale_rs(self, key, d, *new_rs, replicas);
        scaled_new = true;
      } else if (current_new < replicas) {
        auto current = sum_spec(all);
        if (current < replicas + surge) {
          scale_rs(self, key, d, *new_rs,
                   current_new
                       + std::min(replicas + surge - current,
                                  replicas - current_new));
          scaled_new = true;
        }
      }
      // reconcileOldReplicaSets
      if (!scaled_new && sum_spec(olds) > 0) {
        auto min_available = replicas - max_unavailable(d);
        auto new_unavailable
            = current_new - status_count(*new_rs, "availableReplicas");
        auto budget = sum_spec(all) - min_available - new_unavailable;
        if (budget > 0) {
          std::map<std::string, std::int64_t> target;
          for (const auto& rs : olds)
            target[meta(rs, "name")] = spec_replicas(rs);
          // cleanupUnhealthyReplicas: old pods that are not available go
          // first.
          for (const auto& rs : olds) {
            if (budget <= 0)
              break;
            auto& t = target[meta(rs, "name")];
            auto unhealthy = t - status_count(rs, "availableReplicas");
            auto down = std::min(budget, std::max<std::int64_t>(unhealthy, 0));
            t -= down;
            budget -= down;
          }
          // scaleDownOldReplicaSetsForRollingUpdate: then available ones,
          // down to minAvailable.
          std::int64_t available_pods = 0;
          for (const auto& rs : all)
            available_pods += status_count(rs, "availableReplicas");
          auto left = available_pods - min_available;
          for (const auto& rs : olds) {
            if (left <= 0)
              break;
            auto& t = target[meta(rs, "name")];
            auto down = std::min(left, t);
            t -= down;
            left -= down;
          }
          for (const auto& rs : olds)
            if (target[meta(rs, "name")] != spec_replicas(rs))
              scale_rs(self, key, d, rs, target[meta(rs, "name")]);
        }
      }
    }
    cleanup(self, key, d, olds);
  }
  sync_status(self, key, d, new_rs ? &*new_rs : nullptr, all);
}

void on_change(deploy_ptr self, std::size_t type, const std::string& key,
               const json* before, const json* after) {
  auto& st = self->state;
  if (type == st.deploy_type) {
    queue(self, key);
    return;
  }
  const json& rs = after != nullptr ? *after : *before;
  auto uid = controller_uid(rs, "Deployment");
  if (uid.empty())
    return;
  for (const auto& ref : rs["metadata"]["ownerReferences"])
    if (ref.value("uid", "") == uid)
      queue(self, meta(rs, "namespace") + "/" + ref.value("name", ""));
}

apps_controller_actor::behavior_type deploy_impl(deploy_ptr self,
                                                 api_actor api) {
  auto& st = self->state;
  st.api = std::move(api);
  st.wall = wall_clock{self->clock().now()};
  st.deploy_type = st.cache.add("apps", "v1", "deployments");
  st.rs_type = st.cache.add("apps", "v1", "replicasets");
  st.cache.on_change = [self](std::size_t type, const std::string& key,
                              const json* before, const json* after) {
    on_change(self, type, key, before, after);
  };
  st.cache.on_listed = [self](std::size_t) {
    for (const auto& [key, d] :
         self->state.cache.types[self->state.deploy_type].objects)
      queue(self, key);
  };
  relist(self, st.deploy_type);
  relist(self, st.rs_type);
  return controller_behavior(
      self, [self](const std::string& key) { sync(self, key); });
}

} // namespace

apps_controller_actor spawn_deployment_controller(caf::actor_system& sys,
                                                  api_actor api) {
  return sys.spawn(deploy_impl, std::move(api));
}

} // namespace aiperf::k8s::sim
