#include "k8s/sim/scheduler/scheduler.hpp"

#include "k8s/object/selectors.hpp"
#include "k8s/object/time.hpp"
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

constexpr const char* component = "default-scheduler";
constexpr auto retry_period = std::chrono::seconds{10};

struct fault {
  std::string ns;
  label_selector selector;
  std::int32_t left = 0;
};

struct sched_state {
  sched_state() = default;

  api_actor api;
  watch_cache cache;
  std::size_t pod_type = 0;
  std::size_t node_type = 0;
  std::size_t pvc_type = 0;
  std::size_t pv_type = 0;
  std::set<std::string> in_flight;            // pod keys being written
  std::map<std::string, std::string> assumed; // pod key -> node, until seen
  std::set<std::string> held;                 // pod uids a fault keeps
  std::vector<fault> faults;
  bool pass_queued = false;
  bool retry_armed = false;
  wall_clock wall;
  static inline const char* name = "k8s_scheduler";
};

using sched_ptr = scheduler_actor::stateful_pointer<sched_state>;

void queue_pass(sched_ptr self) {
  if (self->state.pass_queued)
    return;
  self->state.pass_queued = true;
  self->send(self, scheduler_pass_atom::value, false);
}

const json& obj_at(const json& obj, const char* key) {
  static const json empty = json::object();
  if (!obj.is_object())
    return empty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : empty;
}

const json& arr_at(const json& obj, const char* key) {
  static const json empty = json::array();
  if (!obj.is_object())
    return empty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() ? *it : empty;
}

std::string str_at(const json& obj, const char* key) {
  if (!obj.is_object())
    return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>()
                                            : std::string{};
}

bool waiting_for_us(const json& pod) {
  const auto& spec = obj_at(pod, "spec");
  auto scheduler = str_at(spec, "schedulerName");
  return str_at(spec, "nodeName").empty() && !being_deleted(pod)
         && !pod_terminal(pod)
         && (scheduler.empty() || scheduler == "default-scheduler")
         && arr_at(spec, "schedulingGates").empty();
}

// --- resources -------------------------------------------------------------

using resources = std::map<std::string, std::int64_t>;

// cpu in millicores, everything else in whole units rounded up (as
// resource.Quantity's MilliValue and Value).
std::int64_t amount(const std::string& name, const json& q) {
  auto v = parse_quantity(q);
  if (!v)
    return 0;
  double scaled = name == "cpu" ? *v * 1000.0 : *v;
  return static_cast<std::int64_t>(std::ceil(scaled - 1e-9));
}

resources container_requests(const json& c) {
  resources out;
  const auto& res = obj_at(c, "resources");
  for (const auto& [k, v] : obj_at(res, "requests").items())
    out[k] = amount(k, v);
  // A limit without a request is the request (API defaulting).
  for (const auto& [k, v] : obj_at(res, "limits").items())
    if (!out.count(k))
      out[k] = amount(k, v);
  return out;
}

void add(resources& into, const resources& x) {
  for (const auto& [k, v] : x)
    into[k] += v;
}

void max_into(resources& into, const resources& x) {
  for (const auto& [k, v] : x)
    into[k] = std::max(into[k], v);
}

// resourcehelper.PodRequests: containers summed, sidecars (init containers
// with restartPolicy Always) added, each other init container with the
// sidecars started before it as a floor, plus the pod overhead.
resources pod_requests(const json& pod) {
  const auto& spec = obj_at(pod, "spec");
  resources sum;
  for (const auto& c : arr_at(spec, "containers"))
    add(sum, container_requests(c));
  resources sidecars;
  resources init_floor;
  for (const auto& c : arr_at(spec, "initContainers")) {
    auto r = container_requests(c);
    if (str_at(c, "restartPolicy") == "Always") {
      add(sidecars, r);
      max_into(init_floor, sidecars);
    } else {
      add(r, sidecars);
      max_into(init_floor, r);
    }
  }
  add(sum, sidecars);
  max_into(sum, init_floor);
  for (const auto& [k, v] : obj_at(spec, "overhead").items())
    sum[k] += amount(k, v);
  return sum;
}

resources allocatable(const json& node) {
  const auto& status = obj_at(node, "status");
  const auto& alloc = obj_at(status, "allocatable").empty()
                          ? obj_at(status, "capacity")
                          : obj_at(status, "allocatable");
  resources out;
  for (const auto& [k, v] : alloc.items())
    out[k] = amount(k, v);
  return out;
}

struct node_usage {
  resources requested;
  std::int64_t pods = 0;
  std::set<std::string> claims; // "ns/claim" of its pods
};

// --- filters ---------------------------------------------------------------

bool tolerates(const json& tolerations, const json& taint) {
  for (const auto& t : tolerations) {
    auto effect = str_at(t, "effect");
    if (!effect.empty() && effect != str_at(taint, "effect"))
      continue;
    auto key = str_at(t, "key");
    if (!key.empty() && key != str_at(taint, "key"))
      continue;
    auto op = str_at(t, "operator");
    if (op == "Exists")
      return true;
    if ((op.empty() || op == "Equal")
        && str_at(t, "value") == str_at(taint, "value"))
      return true;
  }
  return false;
}

bool parse_int(const std::string& s, std::int64_t& out) {
  if (s.empty())
    return false;
  char* end = nullptr;
  out = std::strtoll(s.c_str(), &end, 10);
  return end != nullptr && *end == '\0';
}

// One node selector requirement against a value that may be absent.
bool requirement_matches(const json& req, const json& values_of) {
  auto key = str_at(req, "key");
  auto op = str_at(req, "operator");
  bool present = values_of.contains(key) && values_of[key].is_string();
  auto value = present ? values_of[key].get<std::string>() : std::string{};
  const auto& values = arr_at(req, "values");
  auto listed = [&] {
    return std::find(values.begin(), values.end(), json(value)) != values.end();
  };
  if (op == "In")
    return present && listed();
  if (op == "NotIn")
    return !present || !listed();
  if (op == "Exists")
    return present;
  if (op == "DoesNotExist")
    return !present;
  if (op == "Gt" || op == "Lt") {
    std::int64_t have = 0;
    std::int64_t bound = 0;
    if (!present || values.size() != 1 || !values[0].is_string()
        || !parse_int(value, have)
        || !parse_int(values[0].get<std::string>(), bound))
      return false;
    return op == "Gt" ? have > bound : have < bound;
  }
  return false;
}

bool term_matches(const json& term, const json& node) {
  const auto& exprs = arr_at(term, "matchExpressions");
  const auto& fields = arr_at(term, "matchFields");
  if (exprs.empty() && fields.empty())
    return false; // an empty term matches no object
  const auto& labels = obj_at(obj_at(node, "metadata"), "labels");
  for (const auto& e : exprs)
    if (!requirement_matches(e, labels))
      return false;
  json node_fields = {{"metadata.name", meta(node, "name")}};
  for (const auto& f : fields)
    if (!requirement_matches(f, node_fields))
      return false;
  return true;
}

bool affinity_matches(const json& pod, const json& node) {
  const auto& spec = obj_at(pod, "spec");
  const auto& labels = obj_at(obj_at(node, "metadata"), "labels");
  for (const auto& [k, v] : obj_at(spec, "nodeSelector").items())
    if (!labels.contains(k) || labels[k] != v)
      return false;
  const auto& required
      = obj_at(obj_at(obj_at(spec, "affinity"), "nodeAffinity"),
               "requiredDuringSchedulingIgnoredDuringExecution");
  if (required.empty())
    return true;
  for (const auto& term : arr_at(required, "nodeSelectorTerms"))
    if (term_matches(term, node))
      return true;
  return false;
}

struct verdict {
  std::vector<std::string> reasons;
  bool unresolvable = false;
};

std::vector<std::string> claim_names(const json& pod) {
  std::vector<std::string> out;
  for (const auto& v : arr_at(obj_at(pod, "spec"), "volumes")) {
    auto claim = str_at(obj_at(v, "persistentVolumeClaim"), "claimName");
    if (!claim.empty())
      out.push_back(claim);
  }
  return out;
}

bool has_mode(const json& pvc, const char* mode) {
  const auto& modes = arr_at(obj_at(pvc, "spec"), "accessModes");
  return std::find(modes.begin(), modes.end(), json(mode)) != modes.end();
}

struct evaluation {
  std::string node; // chosen, or ""
  std::string message;
};

std::string join_sorted(const std::map<std::string, int>& counts) {
  std::vector<std::string> items;
  for (const auto& [reason, n] : counts)
    items.push_back(std::to_string(n) + " " + reason);
  std::sort(items.begin(), items.end()); // upstream SortReasonsHistogram
  std::string out;
  for (const auto& s : items)
    out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string preemption_suffix(const json& pod, std::size_t nodes,
                              const std::map<std::string, int>& counts) {
  if (str_at(obj_at(pod, "spec"), "preemptionPolicy") == "Never")
    return " preemption: not eligible due to preemptionPolicy=Never.";
  return " preemption: 0/" + std::to_string(nodes)
         + " nodes are available: " + join_sorted(counts) + ".";
}

// The message of a pod every node refuses for an unresolvable reason
// decided before the filters (PreFilter), or by a fault.
std::string unresolvable_message(const json& pod, std::size_t nodes,
                                 const std::string& what, bool histogram) {
  auto n = std::to_string(nodes);
  std::string head = "0/" + n + " nodes are available: "
                     + (histogram ? n + " " : std::string{}) + what + ".";
  return head
         + preemption_suffix(pod, nodes,
                             {{"Preemption is not helpful for scheduling",
                               static_cast<int>(nodes)}});
}

evaluation evaluate(sched_ptr self, const json& pod,
                    const std::vector<const json*>& nodes,
                    std::map<std::string, node_usage>& usage,
                    const std::map<std::string, int>& rwop_users) {
  auto& st = self->state;
  evaluation out;
  if (nodes.empty()) {
    out.message = "no nodes available to schedule pods";
    return out;
  }
  auto ns = meta(pod, "namespace");
  // VolumeBinding's PreFilter: every claim exists and is bound.
  std::vector<const json*> claims;
  for (const auto& name : claim_names(pod)) {
    const json* pvc = st.cache.find(st.pvc_type, ns + "/" + name);
    std::string problem;
    if (pvc == nullptr)
      problem = "persistentvolumeclaim \"" + name + "\" not found";
    else if (being_deleted(*pvc))
      problem = "persistentvolumeclaim \"" + name + "\" is being deleted";
    else if (str_at(obj_at(*pvc, "spec"), "volumeName").empty()
             || str_at(obj_at(*pvc, "status"), "phase") != "Bound")
      problem = "pod has unbound immediate PersistentVolumeClaims";
    if (!problem.empty()) {
      out.message = unresolvable_message(pod, nodes.size(), problem, false);
      return out;
    }
    claims.push_back(pvc);
  }
  auto want = pod_requests(pod);
  const auto& spec = obj_at(pod, "spec");
  const auto& tolerations = arr_at(spec, "tolerations");
  std::map<std::string, int> reasons;
  std::map<std::string, int> preemption;
  std::vector<const json*> feasible;
  for (const auto* node : nodes) {
    auto name = meta(*node, "name");
    verdict v;
    const auto& nspec = obj_at(*node, "spec");
    if (nspec.value("unschedulable", false)
        && !tolerates(tolerations,
                      json{{"key", "node.kubernetes.io/unschedulable"},
                           {"effect", "NoSchedule"}})) {
      v.reasons.push_back("node(s) were unschedulable");
      v.unresolvable = true;
    }
    if (v.reasons.empty() && !str_at(spec, "nodeName").empty()
        && str_at(spec, "nodeName") != name) {
      v.reasons.push_back("node(s) didn't match the requested node name");
      v.unresolvable = true;
    }
    if (v.reasons.empty())
      for (const auto& taint : arr_at(nspec, "taints")) {
        auto effect = str_at(taint, "effect");
        if ((effect == "NoSchedule" || effect == "NoExecute")
            && !tolerates(tolerations, taint)) {
          v.reasons.push_back("node(s) had untolerated taint {"
                              + str_at(taint, "key") + ": "
                              + str_at(taint, "value") + "}");
          v.unresolvable = true;
          break;
        }
      }
    if (v.reasons.empty() && !affinity_matches(pod, *node)) {
      v.reasons.push_back("node(s) didn't match Pod's node affinity/selector");
      v.unresolvable = true;
    }
    if (v.reasons.empty()) {
      auto alloc = allocatable(*node);
      auto& used = usage[name];
      if (used.pods + 1 > alloc["pods"])
        v.reasons.push_back("Too many pods");
      for (const auto& [res, q] : want) {
        if (q <= 0 || res == "pods")
          continue;
        if (q > alloc[res] - used.requested[res])
          v.reasons.push_back("Insufficient " + res);
      }
    }
    if (v.reasons.empty())
      for (const auto* pvc : claims)
        if (has_mode(*pvc, "ReadWriteOncePod")) {
          auto it = rwop_users.find(key_of(*pvc));
          if (it != rwop_users.end() && it->second > 0) {
            v.reasons.push_back("node has pod using PersistentVolumeClaim with "
                                "the same name and ReadWriteOncePod access "
                                "mode");
            break;
          }
        }
    if (v.reasons.empty())
      for (const auto* pvc : claims) {
        bool conflict = false;
        const json* pv = st.cache.find(
            st.pv_type, str_at(obj_at(*pvc, "spec"), "volumeName"));
        if (pv != nullptr) {
          const auto& required
              = obj_at(obj_at(obj_at(*pv, "spec"), "nodeAffinity"), "required");
          if (!required.empty()) {
            bool any = false;
            for (const auto& term : arr_at(required, "nodeSelectorTerms"))
              any = any || term_matches(term, *node);
            conflict = !any;
          }
        }
        // ReadWriteOnce: one node at a time.
        if (!conflict && has_mode(*pvc, "ReadWriteOnce"))
          for (const auto& [other, u] : usage)
            if (other != name && u.claims.count(key_of(*pvc)))
              conflict = true;
        if (conflict) {
          v.reasons.push_back("node(s) had volume node affinity conflict");
          v.unresolvable = true;
          break;
        }
      }
    if (v.reasons.empty()) {
      feasible.push_back(node);
      continue;
    }
    for (const auto& r : v.reasons)
      ++reasons[r];
    ++preemption[v.unresolvable ? "Preemption is not helpful for scheduling"
                                : "No preemption victims found for incoming "
                                  "pod"];
  }
  if (feasible.empty()) {
    auto n = std::to_string(nodes.size());
    out.message = "0/" + n + " nodes are available: " + join_sorted(reasons)
                  + "." + preemption_suffix(pod, nodes.size(), preemption);
    return out;
  }
  // NodeResourcesLeastAllocated on cpu and memory; ties go to the first name.
  double best = -1;
  for (const auto* node : feasible) {
    auto name = meta(*node, "name");
    auto alloc = allocatable(*node);
    auto& used = usage[name];
    double score = 0;
    for (const char* res : {"cpu", "memory"}) {
      auto cap = alloc[res];
      if (cap <= 0)
        continue;
      auto left = cap - used.requested[res] - want[res];
      score += std::max(0.0, static_cast<double>(left) * 100.0
                                 / static_cast<double>(cap));
    }
    if (score > best + 1e-9) {
      best = score;
      out.node = name;
    }
  }
  return out;
}

void record(sched_ptr self, const json& pod, const std::string& type,
            const std::string& reason, const std::string& message) {
  auto now = self->state.wall.unix_seconds(self->clock().now());
  self->request(self->state.api, request_timeout,
                event_request(pod, "v1", "Pod", type, reason, message,
                              component, now))
      .then([](response&) {}, [](caf::error&) {});
}

void bind_pod(sched_ptr self, const json& pod, const std::string& node) {
  auto& st = self->state;
  auto key = key_of(pod);
  st.in_flight.insert(key);
  st.assumed[key] = node;
  json binding
      = {{"apiVersion", "v1"},
         {"kind", "Binding"},
         {"metadata",
          {{"name", meta(pod, "name")},
           {"namespace", meta(pod, "namespace")},
           {"uid", meta(pod, "uid")}}},
         {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  auto req = make_request(verb::create,
                          resource_ref{"", "v1", "pods", meta(pod, "namespace"),
                                       meta(pod, "name"), "binding"},
                          binding);
  self->request(st.api, request_timeout, std::move(req))
      .then(
          [self, pod, key, node](response&) {
            self->state.in_flight.erase(key);
            record(self, pod, "Normal", "Scheduled",
                   "Successfully assigned " + key + " to " + node);
          },
          [self, key](caf::error&) {
            // Gone, bound by someone else, or refused: the watch tells.
            auto& st = self->state;
            st.in_flight.erase(key);
            st.assumed.erase(key);
            if (!st.retry_armed) {
              st.retry_armed = true;
              self->delayed_send(self, std::chrono::seconds{1},
                                 scheduler_pass_atom::value, true);
            }
          });
}

void mark_unschedulable(sched_ptr self, const json& pod,
                        const std::string& message) {
  auto& st = self->state;
  json status = obj_at(pod, "status");
  json conditions = arr_at(status, "conditions");
  for (const auto& c : conditions)
    if (str_at(c, "type") == "PodScheduled" && str_at(c, "status") == "False"
        && str_at(c, "reason") == "Unschedulable"
        && str_at(c, "message") == message)
      return; // said already
  auto when = format_time(st.wall.unix_seconds(self->clock().now()));
  json kept = json::array();
  for (const auto& c : conditions)
    if (str_at(c, "type") != "PodScheduled")
      kept.push_back(c);
  kept.push_back(json{{"type", "PodScheduled"},
                      {"status", "False"},
                      {"lastProbeTime", nullptr},
                      {"lastTransitionTime", when},
                      {"reason", "Unschedulable"},
                      {"message", message}});
  json next = pod;
  next["status"] = status;
  next["status"]["conditions"] = kept;
  if (!next["status"].contains("phase"))
    next["status"]["phase"] = "Pending";
  auto key = key_of(pod);
  st.in_flight.insert(key);
  auto req = make_request(verb::update,
                          resource_ref{"", "v1", "pods", meta(pod, "namespace"),
                                       meta(pod, "name"), "status"},
                          next);
  self->request(st.api, request_timeout, std::move(req))
      .then(
          [self, key, pod, message](response& res) {
            self->state.in_flight.erase(key);
            if (auto obj = parse(res.body))
              self->state.cache.put(self->state.pod_type, *obj);
            record(self, pod, "Warning", "FailedScheduling", message);
          },
          [self, key](caf::error&) {
            self->state.in_flight.erase(key); // a conflict: the next pass
          });
}

bool all_synced(sched_ptr self) {
  for (const auto& t : self->state.cache.types)
    if (!t.synced)
      return false;
  return true;
}

void pass(sched_ptr self) {
  auto& st = self->state;
  if (!all_synced(self))
    return;
  std::vector<const json*> nodes;
  for (const auto& [key, node] : st.cache.types[st.node_type].objects)
    nodes.push_back(&node); // by name: the map's order
  std::map<std::string, node_usage> usage;
  std::map<std::string, int> rwop_users;
  std::vector<json> pending;
  for (const auto& [key, pod] : st.cache.types[st.pod_type].objects) {
    auto node = str_at(obj_at(pod, "spec"), "nodeName");
    if (node.empty()) {
      auto it = st.assumed.find(key);
      if (it != st.assumed.end())
        node = it->second;
    }
    if (!node.empty()) {
      if (pod_terminal(pod))
        continue;
      auto& u = usage[node];
      add(u.requested, pod_requests(pod));
      ++u.pods;
      for (const auto& claim : claim_names(pod)) {
        u.claims.insert(meta(pod, "namespace") + "/" + claim);
        ++rwop_users[meta(pod, "namespace") + "/" + claim];
      }
      continue;
    }
    if (waiting_for_us(pod) && !st.in_flight.count(key))
      pending.push_back(pod);
  }
  std::stable_sort(
      pending.begin(), pending.end(), [](const json& a, const json& b) {
        auto pa = obj_at(a, "spec").value("priority", 0);
        auto pb = obj_at(b, "spec").value("priority", 0);
        if (pa != pb)
          return pa > pb;
        return meta(a, "creationTimestamp") < meta(b, "creationTimestamp");
      });
  bool waiting = false;
  for (const auto& pod : pending) {
    if (st.held.count(meta(pod, "uid"))) {
      waiting = true;
      mark_unschedulable(
          self, pod,
          unresolvable_message(pod, std::max<std::size_t>(nodes.size(), 1),
                               "node(s) didn't match Pod's node "
                               "affinity/selector",
                               true));
      continue;
    }
    auto result = evaluate(self, pod, nodes, usage, rwop_users);
    if (result.node.empty()) {
      waiting = true;
      mark_unschedulable(self, pod, result.message);
      continue;
    }
    bind_pod(self, pod, result.node);
    auto& u = usage[result.node];
    add(u.requested, pod_requests(pod));
    ++u.pods;
    for (const auto& claim : claim_names(pod)) {
      u.claims.insert(meta(pod, "namespace") + "/" + claim);
      ++rwop_users[meta(pod, "namespace") + "/" + claim];
    }
  }
  if (waiting && !st.retry_armed) {
    st.retry_armed = true;
    self->delayed_send(self, retry_period, scheduler_pass_atom::value, true);
  }
}

void on_change(sched_ptr self, std::size_t type, const std::string& key,
               const json* before, const json* after) {
  auto& st = self->state;
  if (type == st.pod_type) {
    if (after == nullptr) {
      st.assumed.erase(key);
      st.held.erase(meta(*before, "uid"));
    } else if (!str_at(obj_at(*after, "spec"), "nodeName").empty()) {
      st.assumed.erase(key);
    } else if (before == nullptr && waiting_for_us(*after)) {
      // A new pod: the faults take the next ones that match.
      for (auto& f : st.faults) {
        if (f.left <= 0 || f.ns != meta(*after, "namespace"))
          continue;
        if (!f.selector.matches(
                obj_at(*after, "metadata").value("labels", json::object())))
          continue;
        --f.left;
        st.held.insert(meta(*after, "uid"));
        break;
      }
      st.faults.erase(
          std::remove_if(st.faults.begin(), st.faults.end(),
                         [](const fault& f) { return f.left <= 0; }),
          st.faults.end());
    }
  }
  queue_pass(self);
}

scheduler_actor::behavior_type sched_impl(sched_ptr self, api_actor api) {
  auto& st = self->state;
  st.api = std::move(api);
  st.wall = wall_clock{self->clock().now()};
  st.pod_type = st.cache.add("", "v1", "pods");
  st.node_type = st.cache.add("", "v1", "nodes");
  st.pvc_type = st.cache.add("", "v1", "persistentvolumeclaims");
  st.pv_type = st.cache.add("", "v1", "persistentvolumes");
  st.cache.on_change = [self](std::size_t type, const std::string& key,
                              const json* before, const json* after) {
    on_change(self, type, key, before, after);
  };
  st.cache.on_listed = [self](std::size_t) { queue_pass(self); };
  for (auto t : {st.pod_type, st.node_type, st.pvc_type, st.pv_type})
    relist(self, t);
  return {
      [self](events_atom, std::uint64_t id, std::vector<watch_event>& evs) {
        on_events(self, id, evs);
      },
      [self](watch_end_atom, std::uint64_t id, caf::error&) {
        on_watch_end(self, id);
      },
      [self](apps_relist_atom, const std::string& type) {
        on_relist(self, type);
      },
      [self](scheduler_pass_atom, bool from_timer) {
        if (from_timer)
          self->state.retry_armed = false;
        else
          self->state.pass_queued = false;
        pass(self);
      },
      [self](scheduler_fault_atom, const std::string& ns,
             const std::string& selector,
             std::int32_t count) -> caf::result<void> {
        auto parsed = parse_label_selector(selector);
        if (!parsed)
          return parsed.error();
        if (count < 1)
          return make_error(
              errc::invalid,
              "scheduler fault: count must be at least 1, not "
                  + std::to_string(count),
              status{"BadRequest", 400, "count must be at least 1", {}});
        self->state.faults.push_back(fault{ns, std::move(*parsed), count});
        return {};
      },
  };
}

} // namespace

scheduler_actor spawn_scheduler(caf::actor_system& sys, api_actor api) {
  return sys.spawn(sched_impl, std::move(api));
}

} // namespace aiperf::k8s::sim
