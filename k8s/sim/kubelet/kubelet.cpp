// The emulated kubelet. One actor keeps, per pod of its nodes, what kubelet's
// pod workers keep (kubernetes pkg/kubelet: pod_workers.go, kuberuntime/,
// status/, prober/), drives the runtime through sandbox::runtime_actor and
// writes pod status through the status subresource, fenced by
// resourceVersion.
//
// A pod goes through: volumes (FailedMount while a ConfigMap, Secret, token
// or claim is missing), the sandbox (ContainerCreating), init containers in
// order, then every container (image, securityContext, env; waiting
// ErrImagePull/ImagePullBackOff or CreateContainerConfigError when one of
// them fails, retried as kubelet retries), probes, exits and restarts with
// kubelet's back-off, and graceful termination once the pod carries a
// deletionTimestamp.
#include "k8s/sim/kubelet/kubelet.hpp"

#include "k8s/object/selectors.hpp"
#include "k8s/object/time.hpp"
#include "k8s/sim/kubelet/detail.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace aiperf::k8s::sim::kubelet {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace sandbox; // the runtime's atoms

using tick_atom = caf::atom_constant<caf::atom("kl_tick")>;
using relist_atom = caf::atom_constant<caf::atom("kl_relist")>;

// The kubelet's own messages besides its interface: it is the sink of its
// watches and of the runtime's exits; `(tick_atom, pod uid, what, index,
// epoch)` is every timer (back-offs, probes, grace periods, token refresh);
// a timer whose epoch is stale is ignored. `(relist_atom, resource)` lists
// a resource again after its watch ended.
using impl_actor = kubelet_actor::extend_with<watch_sink_actor>::extend_with<
    sandbox::exit_sink_actor>::extend<caf::reacts_to<tick_atom, std::string,
                                                     std::string, std::int32_t,
                                                     std::uint64_t>,
                                      caf::reacts_to<relist_atom, std::string>>;

constexpr auto api_timeout = std::chrono::seconds{30};
constexpr auto runtime_timeout = std::chrono::seconds{60};
constexpr auto relist_delay = std::chrono::seconds{1};
// kubelet's back-offs (pkg/kubelet/kubelet.go: backOffPeriod,
// MaxContainerBackOff; images: pkg/kubelet/images backOff).
constexpr caf::timespan backoff_initial = std::chrono::seconds{10};
constexpr caf::timespan backoff_max = std::chrono::seconds{300};
// An entry older than twice the maximum starts over (flowcontrol.Backoff).
constexpr caf::timespan backoff_reset = std::chrono::seconds{600};

const json& member(const json& obj, const char* key) {
  static const json null_value;
  if (!obj.is_object())
    return null_value;
  auto it = obj.find(key);
  return it == obj.end() ? null_value : *it;
}

std::string str(const json& obj, const char* key) {
  const auto& v = member(obj, key);
  return v.is_string() ? v.get<std::string>() : std::string{};
}

std::int64_t integer(const json& obj, const char* key, std::int64_t fallback) {
  const auto& v = member(obj, key);
  return v.is_number_integer() ? v.get<std::int64_t>() : fallback;
}

std::optional<json> parse(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

std::uint64_t rv_of(const json& obj) {
  auto rv = str(member(obj, "metadata"), "resourceVersion");
  try {
    return rv.empty() ? 0 : std::stoull(rv);
  } catch (...) {
    return 0;
  }
}

caf::error bad_request(const std::string& message) {
  return make_error(errc::invalid, message,
                    status{"BadRequest", 400, message, {}});
}

caf::error pod_not_found(const std::string& name) {
  auto message = "pods \"" + name + "\" not found";
  status st{"NotFound", 404, message, {}};
  st.details.name = name;
  st.details.kind = "pods";
  return make_error(errc::not_found, message, st);
}

// Go's time.Duration.String for the back-off messages: "10s", "2m40s",
// "100ms".
std::string go_duration(caf::timespan d) {
  auto ns = d.count();
  if (ns == 0)
    return "0s";
  auto trim = [](std::string s) {
    if (s.find('.') != std::string::npos) {
      while (!s.empty() && s.back() == '0')
        s.pop_back();
      if (!s.empty() && s.back() == '.')
        s.pop_back();
    }
    return s;
  };
  char buf[64];
  if (ns < 1'000'000'000) {
    if (ns >= 1'000'000)
      std::snprintf(buf, sizeof buf, "%.6f", ns / 1e6);
    else
      std::snprintf(buf, sizeof buf, "%.3f", ns / 1e3);
    return trim(buf) + (ns >= 1'000'000 ? "ms" : "us");
  }
  auto h = ns / 3'600'000'000'000LL;
  auto m = (ns / 60'000'000'000LL) % 60;
  double s = static_cast<double>(ns % 60'000'000'000LL) / 1e9;
  std::snprintf(buf, sizeof buf, "%.9f", s);
  std::string out;
  if (h > 0)
    out += std::to_string(h) + "h";
  if (h > 0 || m > 0)
    out += std::to_string(m) + "m";
  return out + trim(buf) + "s";
}

struct probe_counts {
  int successes = 0;
  int failures = 0;
};

// One container of a pod, as kubelet's status of it.
struct container_rt {
  std::string name;
  bool init = false;
  json spec;
  enum class phase { waiting, running, terminated } state = phase::waiting;
  std::string reason; // waiting reason
  std::string message;
  bool starting = false;    // a start is under way
  bool blocked = false;     // waiting for a back-off timer
  bool done = false;        // terminated for good (no restart)
  bool restart_due = false; // terminated, to be started again at once
  std::int32_t pid = 0;
  int restarts = 0;
  int instances = 0; // processes started so far
  std::string started_at;
  std::string finished_at;
  std::string container_id;
  std::int32_t exit_code = 0;
  std::string term_reason;
  std::string term_message;
  json last_state = json::object();
  bool ready = false;
  bool started = false;
  caf::timespan backoff{0};
  std::optional<caf::actor_clock::time_point> last_exit;
  caf::timespan pull_backoff{0};
  std::uint64_t epoch = 0; // bumped per instance: stale probes and kills
  probe_counts startup, liveness, readiness;
  bool image_present = false;
  std::vector<std::string> logs; // one per instance
};

struct token_rt {
  std::string token;
  caf::actor_clock::time_point refresh_at;
  bool requesting = false;
};

struct pod_rt {
  json obj;
  std::string uid;
  std::string ns;
  std::string name;
  std::vector<container_rt> ctrs; // init containers first
  bool sandbox_creating = false;
  bool sandbox_ready = false;
  sandbox::sandbox_info sb;
  std::string start_time;
  bool terminating = false;
  bool finished = false;
  std::optional<std::string> final_phase;
  std::uint64_t epoch = 0;
  bool writing = false;
  bool dirty = false;
  bool delete_after_write = false;
  json last_written; // the status last sent
  std::optional<std::string> fault;
  std::set<std::string> reported_mounts;
  std::map<std::string, token_rt> tokens; // "<volume>/<path>"
  bool partitioned = false;
};

struct reflector_rt {
  resource_ref ref;
  std::uint64_t watch_id = 0;
};

struct fault_rt {
  std::string ns;
  label_selector selector;
  std::string state;
  std::int64_t count = 1;
};

struct event_rt {
  std::string name;
  std::int64_t count = 1;
};

struct kubelet_state {
  kubelet_state() = default;

  api_actor api;
  sandbox::runtime_actor runtime;
  kubelet_config cfg;
  std::int64_t base_unix_ns = 0;
  caf::actor_clock::time_point t0;
  std::map<std::string, reflector_rt> reflectors; // by resource
  std::map<std::uint64_t, std::string> watches;   // id -> resource
  std::map<std::string, std::map<std::string, json>>
      cache;                          // resource -> ns/name
  std::map<std::string, pod_rt> pods; // by uid
  std::vector<fault_rt> faults;
  std::map<std::string, event_rt> events; // aggregation key -> event
  std::uint64_t event_seq = 0;
  static inline const char* name = "k8s_sim_kubelet";
};

using self_ptr = impl_actor::stateful_pointer<kubelet_state>;

// --- clock -------------------------------------------------------------------

std::int64_t now_ns(self_ptr self) {
  auto& st = self->state;
  return st.base_unix_ns
         + std::chrono::duration_cast<std::chrono::nanoseconds>(
               self->clock().now() - st.t0)
               .count();
}

std::string now_text(self_ptr self) {
  return format_time(now_ns(self) / 1'000'000'000);
}

caf::timespan scaled(self_ptr self, caf::timespan d) {
  auto f = self->state.cfg.backoff_scale;
  if (f <= 0)
    f = 1.0;
  return caf::timespan{static_cast<caf::timespan::rep>(
      std::llround(static_cast<double>(d.count()) * f))};
}

void timer(self_ptr self, caf::timespan after, const std::string& uid,
           const std::string& what, std::int32_t idx, std::uint64_t epoch) {
  self->delayed_send(self, after, tick_atom::value, uid, what, idx, epoch);
}

pod_rt* find_pod(self_ptr self, const std::string& uid) {
  auto it = self->state.pods.find(uid);
  return it == self->state.pods.end() ? nullptr : &it->second;
}

pod_rt* find_pod(self_ptr self, const std::string& ns,
                 const std::string& name) {
  for (auto& [uid, p] : self->state.pods)
    if (p.ns == ns && p.name == name)
      return &p;
  return nullptr;
}

const json* cached(self_ptr self, const std::string& resource,
                   const std::string& ns, const std::string& name) {
  auto& c = self->state.cache[resource];
  auto it = c.find(ns + "/" + name);
  return it == c.end() ? nullptr : &it->second;
}

std::string pod_dir(self_ptr self, const pod_rt& p) {
  return self->state.cfg.work_dir + "/pods/" + p.uid;
}

std::string volume_dir(self_ptr self, const pod_rt& p,
                       const std::string& volume) {
  return pod_dir(self, p) + "/volumes/" + volume;
}

std::string host_ip(self_ptr self) {
  const auto& cfg = self->state.cfg;
  return cfg.host_ip.empty() ? cfg.api_host : cfg.host_ip;
}

const std::string& restart_policy(const pod_rt& p) {
  static const std::string always = "Always";
  const auto& v = member(member(p.obj, "spec"), "restartPolicy");
  return v.is_string() ? v.get_ref<const std::string&>() : always;
}

// --- events ------------------------------------------------------------------

// An Event about the pod (or one of its containers), aggregated as kubelet's
// event correlator does: the same reason and message again raise count.
void record(self_ptr self, pod_rt& p, const container_rt* c,
            const std::string& type, const std::string& reason,
            const std::string& message) {
  auto& st = self->state;
  std::string field_path;
  if (c != nullptr)
    field_path
        = std::string{c->init ? "spec.initContainers{" : "spec.containers{"}
          + c->name + "}";
  auto key = p.uid + "|" + field_path + "|" + reason + "|" + message;
  auto now = now_text(self);
  auto node = str(member(p.obj, "spec"), "nodeName");
  if (auto it = st.events.find(key); it != st.events.end()) {
    ++it->second.count;
    request r;
    r.verb = verb::patch;
    r.patch = patch_type::merge;
    r.ref = resource_ref{"", "v1", "events", p.ns, it->second.name, ""};
    r.body = json{{"count", it->second.count}, {"lastTimestamp", now}}.dump();
    self->request(st.api, api_timeout, std::move(r))
        .then([](response&) {}, [](caf::error&) {});
    return;
  }
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "%016llx",
                static_cast<unsigned long long>(now_ns(self) + ++st.event_seq));
  auto name = p.name + "." + suffix;
  st.events[key] = event_rt{name, 1};
  json involved = {
      {"kind", "Pod"},
      {"namespace", p.ns},
      {"name", p.name},
      {"uid", p.uid},
      {"apiVersion", "v1"},
      {"resourceVersion", str(member(p.obj, "metadata"), "resourceVersion")}};
  if (!field_path.empty())
    involved["fieldPath"] = field_path;
  json ev = {{"apiVersion", "v1"},
             {"kind", "Event"},
             {"metadata", {{"name", name}, {"namespace", p.ns}}},
             {"involvedObject", involved},
             {"reason", reason},
             {"message", message},
             {"source", {{"component", "kubelet"}, {"host", node}}},
             {"firstTimestamp", now},
             {"lastTimestamp", now},
             {"count", 1},
             {"type", type},
             {"eventTime", nullptr},
             {"reportingComponent", "kubelet"},
             {"reportingInstance", node}};
  request r;
  r.verb = verb::create;
  r.ref = resource_ref{"", "v1", "events", p.ns, "", ""};
  r.body = ev.dump();
  self->request(st.api, api_timeout, std::move(r))
      .then([](response&) {}, [](caf::error&) {});
}

// --- status ------------------------------------------------------------------

json terminated_json(const container_rt& c) {
  json t = json::object();
  t["exitCode"] = c.exit_code;
  t["reason"] = c.term_reason;
  if (!c.term_message.empty())
    t["message"] = c.term_message;
  t["startedAt"] = c.started_at.empty() ? json(nullptr) : json(c.started_at);
  t["finishedAt"] = c.finished_at;
  t["containerID"] = c.container_id;
  return t;
}

json container_status(self_ptr self, const pod_rt& p, const container_rt& c) {
  json s = json::object();
  s["name"] = c.name;
  json state = json::object();
  switch (c.state) {
  case container_rt::phase::waiting: {
    json w = json::object();
    w["reason"] = c.reason;
    if (!c.message.empty())
      w["message"] = c.message;
    state["waiting"] = w;
    break;
  }
  case container_rt::phase::running:
    state["running"] = json{{"startedAt", c.started_at}};
    break;
  case container_rt::phase::terminated:
    state["terminated"] = terminated_json(c);
    break;
  }
  s["state"] = state;
  s["lastState"] = c.last_state;
  s["ready"] = c.ready;
  s["restartCount"] = c.restarts;
  auto image = str(c.spec, "image");
  s["image"] = image;
  auto info = detail::resolve_image(self->state.cfg, image);
  s["imageID"] = c.image_present && info.found ? "sim://" + info.executable
                                               : std::string{};
  if (!c.container_id.empty())
    s["containerID"] = c.container_id;
  s["started"] = c.started;
  (void)p;
  return s;
}

// A restartable init container (restartPolicy Always): it keeps running
// beside the containers and counts as initialized once started.
bool sidecar(const container_rt& c) {
  return c.init && str(c.spec, "restartPolicy") == "Always";
}

bool init_complete(const container_rt& c) {
  if (sidecar(c))
    return c.started;
  return c.state == container_rt::phase::terminated && c.exit_code == 0
         && c.done;
}

bool initialized(const pod_rt& p) {
  for (const auto& c : p.ctrs)
    if (c.init && !init_complete(c))
      return false;
  return true;
}

bool init_failed(const pod_rt& p) {
  for (const auto& c : p.ctrs)
    if (c.init && c.done && c.exit_code != 0)
      return true;
  return false;
}

// kubelet_pods.go getPhase.
std::string compute_phase(const pod_rt& p) {
  if (p.final_phase)
    return *p.final_phase;
  if (init_failed(p))
    return "Failed";
  if (!p.sandbox_ready || !initialized(p))
    return "Pending";
  int running = 0, waiting = 0, stopped = 0, succeeded = 0;
  for (const auto& c : p.ctrs) {
    if (c.init)
      continue;
    switch (c.state) {
    case container_rt::phase::running:
      ++running;
      break;
    case container_rt::phase::terminated:
      ++stopped;
      if (c.exit_code == 0)
        ++succeeded;
      break;
    case container_rt::phase::waiting:
      if (c.instances > 0)
        ++stopped;
      else
        ++waiting;
      break;
    }
  }
  if (waiting > 0)
    return "Pending";
  if (running > 0)
    return "Running";
  if (stopped > 0) {
    const auto& policy = restart_policy(p);
    if (policy == "Always")
      return "Running";
    if (policy == "OnFailure")
      return stopped == succeeded ? "Succeeded" : "Running";
    return stopped == succeeded ? "Succeeded" : "Failed";
  }
  return "Pending";
}

json condition(const json& old_conditions, const std::string& type, bool value,
               const std::string& reason, const std::string& message,
               const std::string& now) {
  json c = json::object();
  c["type"] = type;
  c["status"] = value ? "True" : "False";
  c["lastProbeTime"] = nullptr;
  std::string since = now;
  if (old_conditions.is_array())
    for (const auto& o : old_conditions)
      if (str(o, "type") == type && str(o, "status") == c["status"]
          && !str(o, "lastTransitionTime").empty())
        since = str(o, "lastTransitionTime");
  c["lastTransitionTime"] = since;
  if (!reason.empty())
    c["reason"] = reason;
  if (!message.empty())
    c["message"] = message;
  return c;
}

json build_status(self_ptr self, const pod_rt& p) {
  json old = member(p.obj, "status");
  json s = json::object();
  auto phase = compute_phase(p);
  s["phase"] = phase;
  auto now = now_text(self);
  const auto& old_conditions = member(old, "conditions");
  bool terminal = phase == "Succeeded" || phase == "Failed";
  json conditions = json::array();
  conditions.push_back(condition(old_conditions, "PodReadyToStartContainers",
                                 p.sandbox_ready, "", "", now));
  std::vector<std::string> incomplete, unready;
  for (const auto& c : p.ctrs) {
    if (c.init && !init_complete(c))
      incomplete.push_back(c.name);
    if (!c.init && !c.ready)
      unready.push_back(c.name);
  }
  auto list = [](const std::vector<std::string>& names) {
    std::string out = "[";
    for (size_t i = 0; i < names.size(); ++i)
      out += (i ? " " : "") + names[i];
    return out + "]";
  };
  if (terminal && incomplete.empty())
    conditions.push_back(condition(old_conditions, "Initialized", true,
                                   "PodCompleted", "", now));
  else
    conditions.push_back(condition(
        old_conditions, "Initialized", incomplete.empty(),
        incomplete.empty() ? "" : "ContainersNotInitialized",
        incomplete.empty()
            ? ""
            : "containers with incomplete status: " + list(incomplete),
        now));
  for (const char* type : {"Ready", "ContainersReady"}) {
    if (terminal)
      conditions.push_back(
          condition(old_conditions, type, false, "PodCompleted", "", now));
    else
      conditions.push_back(condition(
          old_conditions, type, unready.empty(),
          unready.empty() ? "" : "ContainersNotReady",
          unready.empty() ? ""
                          : "containers with unready status: " + list(unready),
          now));
  }
  if (old_conditions.is_array())
    for (const auto& o : old_conditions) {
      auto type = str(o, "type");
      if (type != "PodReadyToStartContainers" && type != "Initialized"
          && type != "Ready" && type != "ContainersReady")
        conditions.push_back(o);
    }
  s["conditions"] = conditions;
  auto hip = host_ip(self);
  if (!hip.empty()) {
    s["hostIP"] = hip;
    s["hostIPs"] = json::array({json{{"ip", hip}}});
  }
  if (!p.sb.ip.empty()) {
    s["podIP"] = p.sb.ip;
    s["podIPs"] = json::array({json{{"ip", p.sb.ip}}});
  }
  s["startTime"] = p.start_time;
  json init_statuses = json::array();
  json statuses = json::array();
  for (const auto& c : p.ctrs)
    (c.init ? init_statuses : statuses).push_back(container_status(self, p, c));
  if (!init_statuses.empty())
    s["initContainerStatuses"] = init_statuses;
  s["containerStatuses"] = statuses;
  s["qosClass"] = str(old, "qosClass").empty()
                      ? detail::qos_class(member(p.obj, "spec"))
                      : str(old, "qosClass");
  for (const auto& [k, v] : old.items())
    if (!s.contains(k) && k != "reason" && k != "message")
      s[k] = v;
  return s;
}

void send_delete(self_ptr self, const std::string& uid);
void sync(self_ptr self, const std::string& uid);

void write_status(self_ptr self, const std::string& uid) {
  auto* p = find_pod(self, uid);
  if (p == nullptr)
    return;
  p->writing = true;
  p->dirty = false;
  json body = p->obj;
  auto status = build_status(self, *p);
  body["status"] = status;
  p->last_written = status;
  request r;
  r.verb = verb::update;
  r.ref = resource_ref{"", "v1", "pods", p->ns, p->name, "status"};
  r.body = body.dump();
  self->request(self->state.api, api_timeout, std::move(r))
      .then(
          [self, uid](response& res) {
            auto* p = find_pod(self, uid);
            if (p == nullptr)
              return;
            p->writing = false;
            if (auto obj = parse(res.body); obj && rv_of(*obj) > rv_of(p->obj))
              p->obj = std::move(*obj);
            if (p->dirty)
              write_status(self, uid);
            else if (p->delete_after_write)
              send_delete(self, uid);
          },
          [self, uid](caf::error& err) {
            auto* p = find_pod(self, uid);
            if (p == nullptr)
              return;
            p->writing = false;
            if (is_error(err, errc::not_found))
              return; // the pod is gone; its DELETED event cleans up
            if (is_error(err, errc::conflict)) {
              // Fenced out: read the pod again and write on top of it.
              request get;
              get.verb = verb::get;
              get.ref = resource_ref{"", "v1", "pods", p->ns, p->name, ""};
              p->writing = true;
              self->request(self->state.api, api_timeout, std::move(get))
                  .then(
                      [self, uid](response& res) {
                        auto* p = find_pod(self, uid);
                        if (p == nullptr)
                          return;
                        p->writing = false;
                        auto obj = parse(res.body);
                        if (obj && str(member(*obj, "metadata"), "uid") == uid)
                          p->obj = std::move(*obj);
                        write_status(self, uid);
                      },
                      [self, uid](caf::error&) {
                        if (auto* p = find_pod(self, uid))
                          p->writing = false;
                      });
              return;
            }
            p->dirty = true;
            timer(self, 1s, uid, "status", 0, 0);
          });
}

// Writes the status if it changed since the last write.
void flush(self_ptr self, pod_rt& p) {
  if (p.writing) {
    p.dirty = true;
    return;
  }
  if (!p.dirty && !p.last_written.is_null()
      && build_status(self, p) == p.last_written)
    return;
  write_status(self, p.uid);
}

// --- volumes -----------------------------------------------------------------

enum class volumes_state { ready, pending, failed };

void own_tree(const std::string& path, std::int64_t gid, bool writable,
              bool recursive) {
  auto own = [&](const fs::path& p) {
    (void)!::chown(p.c_str(), static_cast<uid_t>(-1), static_cast<gid_t>(gid));
    struct stat sb {};
    if (::lstat(p.c_str(), &sb) != 0 || S_ISLNK(sb.st_mode))
      return;
    mode_t mode = sb.st_mode & 07777;
    if (S_ISDIR(sb.st_mode))
      mode |= S_ISGID | (writable ? 0070 : 0050);
    else
      mode |= writable ? 0060 : 0040;
    ::chmod(p.c_str(), mode);
  };
  own(path);
  if (!recursive)
    return;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    own(it->path());
}

std::optional<std::int64_t> fs_group(const pod_rt& p) {
  const auto& v
      = member(member(member(p.obj, "spec"), "securityContext"), "fsGroup");
  if (v.is_number_integer())
    return v.get<std::int64_t>();
  return std::nullopt;
}

void request_token(self_ptr self, const std::string& uid,
                   const std::string& key, const json& source);

// Where a PersistentVolumeClaim's data is: the bound PV's hostPath/local
// path, else the provisioner's `<pv_dir>/<claim uid>`.
std::variant<std::string, volumes_state, std::string*>
claim_path(self_ptr self, const pod_rt& p, const std::string& claim,
           std::string& error) {
  const json* pvc = cached(self, "persistentvolumeclaims", p.ns, claim);
  if (pvc == nullptr) {
    error = "persistentvolumeclaim \"" + claim + "\" not found";
    return volumes_state::failed;
  }
  if (str(member(*pvc, "status"), "phase") != "Bound")
    return volumes_state::pending;
  auto pv_name = str(member(*pvc, "spec"), "volumeName");
  if (const json* pv = cached(self, "persistentvolumes", "", pv_name)) {
    const auto& spec = member(*pv, "spec");
    for (const char* kind : {"hostPath", "local"}) {
      auto path = str(member(spec, kind), "path");
      if (!path.empty())
        return path;
    }
  }
  auto path
      = self->state.cfg.pv_dir + "/" + str(member(*pvc, "metadata"), "uid");
  std::error_code ec;
  fs::create_directories(path, ec);
  return path;
}

// Materialises every volume of the pod. `reporting`: a missing object is a
// FailedMount Event (the first time its message is seen) and the pod waits;
// otherwise (updates of a running pod) the old content stays.
volumes_state write_volumes(self_ptr self, pod_rt& p, bool reporting) {
  const auto& volumes = member(member(p.obj, "spec"), "volumes");
  if (!volumes.is_array())
    return volumes_state::ready;
  auto result = volumes_state::ready;
  auto group = fs_group(p);
  auto fail = [&](const std::string& volume, const std::string& why) {
    result = volumes_state::failed;
    if (!reporting)
      return;
    auto message
        = "MountVolume.SetUp failed for volume \"" + volume + "\" : " + why;
    if (p.reported_mounts.insert(message).second)
      record(self, p, nullptr, "Warning", "FailedMount", message);
  };
  auto lookup
      = [&](const std::string& kind, const std::string& name) -> const json* {
    return cached(self, kind == "Secret" ? "secrets" : "configmaps", p.ns,
                  name);
  };
  for (const auto& v : volumes) {
    auto name = str(v, "name");
    auto dir = volume_dir(self, p, name);
    std::error_code ec;
    if (v.contains("emptyDir")) {
      if (!fs::exists(dir, ec)) {
        fs::create_directories(dir, ec);
        ::chmod(dir.c_str(), 0777);
        if (group)
          own_tree(dir, *group, true, false);
      }
      continue;
    }
    if (v.contains("configMap") || v.contains("secret")) {
      bool secret = v.contains("secret");
      const auto& src = member(v, secret ? "secret" : "configMap");
      auto obj_name = str(src, secret ? "secretName" : "name");
      bool optional = member(src, "optional").is_boolean()
                      && member(src, "optional").get<bool>();
      auto mode = static_cast<std::uint32_t>(integer(src, "defaultMode", 0644));
      const json* obj = lookup(secret ? "Secret" : "ConfigMap", obj_name);
      detail::payload files;
      if (obj == nullptr) {
        if (!optional) {
          fail(name, std::string{secret ? "secret" : "configmap"} + " \""
                         + obj_name + "\" not found");
          continue;
        }
      } else {
        auto projected = detail::project_keys(
            *obj, secret, member(src, "items"), mode, optional);
        if (auto* why = std::get_if<std::string>(&projected)) {
          fail(name, *why);
          continue;
        }
        files = std::get<detail::payload>(projected);
      }
      if (auto err = detail::atomic_write(dir, files, now_ns(self), group))
        fail(name, *err);
      continue;
    }
    if (v.contains("projected") || v.contains("downwardAPI")) {
      bool projected_volume = v.contains("projected");
      const auto& src
          = member(v, projected_volume ? "projected" : "downwardAPI");
      auto mode = static_cast<std::uint32_t>(integer(src, "defaultMode", 0644));
      detail::payload files;
      bool ok = true;
      auto downward = [&](const json& items) {
        if (!items.is_array())
          return;
        for (const auto& item : items) {
          auto item_mode
              = static_cast<std::uint32_t>(integer(item, "mode", mode));
          std::string value;
          if (item.contains("fieldRef")) {
            value = detail::field_ref_value(
                        p.obj, str(member(item, "fieldRef"), "fieldPath"),
                        p.sb.ip, host_ip(self))
                        .value_or("");
          } else if (item.contains("resourceFieldRef")) {
            const auto& ref = member(item, "resourceFieldRef");
            json container;
            for (const auto& c : p.ctrs)
              if (c.name == str(ref, "containerName"))
                container = c.spec;
            value = detail::resource_field_value(container, ref);
          }
          files[str(item, "path")] = detail::file_entry{value, item_mode};
        }
      };
      if (!projected_volume) {
        downward(member(src, "items"));
      } else if (member(src, "sources").is_array()) {
        for (const auto& s : src["sources"]) {
          if (s.contains("serviceAccountToken")) {
            const auto& t = s["serviceAccountToken"];
            auto key = name + "/" + str(t, "path");
            auto it = p.tokens.find(key);
            if (it == p.tokens.end() || it->second.token.empty()) {
              if (it == p.tokens.end() || !it->second.requesting)
                request_token(self, p.uid, key, t);
              ok = false;
              if (result == volumes_state::ready)
                result = volumes_state::pending;
              continue;
            }
            files[str(t, "path")] = detail::file_entry{it->second.token, mode};
          } else if (s.contains("configMap") || s.contains("secret")) {
            bool secret = s.contains("secret");
            const auto& ref = s[secret ? "secret" : "configMap"];
            auto obj_name = str(ref, "name");
            bool optional = member(ref, "optional").is_boolean()
                            && member(ref, "optional").get<bool>();
            const json* obj = lookup(secret ? "Secret" : "ConfigMap", obj_name);
            if (obj == nullptr) {
              if (!optional) {
                fail(name, std::string{secret ? "secret" : "configmap"} + " \""
                               + obj_name + "\" not found");
                ok = false;
              }
              continue;
            }
            auto keys = detail::project_keys(*obj, secret, member(ref, "items"),
                                             mode, optional);
            if (auto* why = std::get_if<std::string>(&keys)) {
              fail(name, *why);
              ok = false;
              continue;
            }
            for (auto& [path, entry] : std::get<detail::payload>(keys))
              files[path] = entry;
          } else if (s.contains("downwardAPI")) {
            downward(member(s["downwardAPI"], "items"));
          }
        }
      }
      if (!ok)
        continue;
      if (auto err = detail::atomic_write(dir, files, now_ns(self), group))
        fail(name, *err);
      continue;
    }
    if (v.contains("persistentVolumeClaim")) {
      std::string error;
      auto where = claim_path(
          self, p, str(v["persistentVolumeClaim"], "claimName"), error);
      if (auto* state = std::get_if<volumes_state>(&where)) {
        if (*state == volumes_state::failed)
          fail(name, error);
        else if (result == volumes_state::ready)
          result = volumes_state::pending;
      } else if (auto* path = std::get_if<std::string>(&where); path && group) {
        own_tree(*path, *group, true, true);
      }
      continue;
    }
  }
  return result;
}

// The mounts of one container: its volumeMounts (ConfigMap, Secret,
// projected and downwardAPI volumes always read-only, as kubelet mounts
// them) and kubelet's /etc/hosts.
std::vector<sandbox::mount> mounts_of(self_ptr self, const pod_rt& p,
                                      const json& container) {
  std::vector<sandbox::mount> out;
  std::map<std::string, const json*> volumes;
  const auto& vs = member(member(p.obj, "spec"), "volumes");
  if (vs.is_array())
    for (const auto& v : vs)
      volumes[str(v, "name")] = &v;
  bool own_hosts = false;
  const auto& vm = member(container, "volumeMounts");
  if (vm.is_array())
    for (const auto& m : vm) {
      auto it = volumes.find(str(m, "name"));
      if (it == volumes.end())
        continue;
      const json& v = *it->second;
      sandbox::mount mnt;
      mnt.target = str(m, "mountPath");
      mnt.read_only
          = member(m, "readOnly").is_boolean() && m["readOnly"].get<bool>();
      if (mnt.target == "/etc/hosts")
        own_hosts = true;
      if (v.contains("persistentVolumeClaim")) {
        std::string error;
        auto where = claim_path(
            self, p, str(v["persistentVolumeClaim"], "claimName"), error);
        if (auto* path = std::get_if<std::string>(&where))
          mnt.source = *path;
        if (member(v["persistentVolumeClaim"], "readOnly").is_boolean()
            && v["persistentVolumeClaim"]["readOnly"].get<bool>())
          mnt.read_only = true;
      } else if (v.contains("hostPath")) {
        mnt.source = str(v["hostPath"], "path");
      } else {
        mnt.source = volume_dir(self, p, str(v, "name"));
        if (!v.contains("emptyDir"))
          mnt.read_only = true;
      }
      auto sub = str(m, "subPath");
      if (!sub.empty())
        mnt.source += "/" + sub;
      if (!mnt.source.empty())
        out.push_back(std::move(mnt));
    }
  if (!own_hosts && p.sandbox_ready)
    out.push_back(
        sandbox::mount{pod_dir(self, p) + "/etc-hosts", "/etc/hosts", false});
  return out;
}

void request_token(self_ptr self, const std::string& uid,
                   const std::string& key, const json& source) {
  auto* p = find_pod(self, uid);
  if (p == nullptr)
    return;
  auto& tok = p->tokens[key];
  tok.requesting = true;
  const auto& cfg = self->state.cfg;
  std::int64_t seconds = integer(source, "expirationSeconds", 3600);
  if (cfg.token_expiration_seconds > 0
      && cfg.token_expiration_seconds < seconds)
    seconds = std::max<std::int64_t>(600, cfg.token_expiration_seconds);
  json spec = {{"expirationSeconds", seconds},
               {"boundObjectRef",
                {{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"name", p->name},
                 {"uid", p->uid}}}};
  auto audience = str(source, "audience");
  spec["audiences"]
      = audience.empty() ? json::array() : json::array({audience});
  json body = {{"apiVersion", "authentication.k8s.io/v1"},
               {"kind", "TokenRequest"},
               {"spec", spec}};
  auto sa = str(member(p->obj, "spec"), "serviceAccountName");
  if (sa.empty())
    sa = "default";
  request r;
  r.verb = verb::create;
  r.ref = resource_ref{"", "v1", "serviceaccounts", p->ns, sa, "token"};
  r.body = body.dump();
  auto issued = self->clock().now();
  auto volume = key.substr(0, key.find('/'));
  self->request(self->state.api, api_timeout, std::move(r))
      .then(
          [self, uid, key, issued, seconds](response& res) {
            auto* p = find_pod(self, uid);
            if (p == nullptr)
              return;
            auto& tok = p->tokens[key];
            tok.requesting = false;
            auto doc = parse(res.body);
            tok.token = doc ? str(member(*doc, "status"), "token") : "";
            // kubelet's token manager refreshes at 80 % of the lifetime.
            std::int64_t lifetime = seconds;
            if (doc) {
              auto exp = parse_time(
                  str(member(*doc, "status"), "expirationTimestamp"));
              if (exp)
                lifetime = std::max<std::int64_t>(1, (*exp - now_ns(self))
                                                         / 1'000'000'000);
            }
            auto refresh = std::chrono::seconds{lifetime * 8 / 10};
            tok.refresh_at = issued + refresh;
            timer(self, refresh, uid, "token", 0, 0);
            if (p->sandbox_ready)
              write_volumes(self, *p, false);
            sync(self, uid);
          },
          [self, uid, key, volume](caf::error& err) {
            auto* p = find_pod(self, uid);
            if (p == nullptr)
              return;
            p->tokens[key].requesting = false;
            const auto* st = status_of(err);
            auto message = "MountVolume.SetUp failed for volume \"" + volume
                           + "\" : failed to fetch token: "
                           + (st ? st->message : error_message(err));
            if (p->reported_mounts.insert(message).second)
              record(self, *p, nullptr, "Warning", "FailedMount", message);
            timer(self, 2s, uid, "resync", 0, 0);
          });
}

// --- containers --------------------------------------------------------------

std::string search_path(const std::string& name) {
  if (name.find('/') != std::string::npos)
    return name;
  for (const char* dir : {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin",
                          "/usr/bin", "/sbin", "/bin"}) {
    auto candidate = std::string{dir} + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return name;
}

bool is_aiperf_node(const std::string& arg0) {
  static const std::string suffix = "/aiperf-node";
  return arg0 == "aiperf-node"
         || (arg0.size() > suffix.size()
             && arg0.compare(arg0.size() - suffix.size(), suffix.size(), suffix)
                    == 0);
}

std::vector<std::string> string_list(const json& v) {
  std::vector<std::string> out;
  if (v.is_array())
    for (const auto& s : v)
      if (s.is_string())
        out.push_back(s.get<std::string>());
  return out;
}

void start_probes(self_ptr self, pod_rt& p, std::int32_t idx);
void on_exit(self_ptr self, const std::string& uid, std::int32_t idx,
             std::int32_t code, const std::string& message);

void set_waiting(container_rt& c, std::string reason, std::string message) {
  c.state = container_rt::phase::waiting;
  c.reason = std::move(reason);
  c.message = std::move(message);
}

// The image can be pulled by no node: ErrImagePull now, ImagePullBackOff on
// the next sync, the next pull after the back-off (images/image_manager.go).
void pull_failed(self_ptr self, pod_rt& p, std::int32_t idx) {
  auto& c = p.ctrs[static_cast<size_t>(idx)];
  auto image = str(c.spec, "image");
  auto why = detail::pull_error_message(image);
  record(self, p, &c, "Normal", "Pulling", "Pulling image \"" + image + "\"");
  record(self, p, &c, "Warning", "Failed",
         "Failed to pull image \"" + image + "\": " + why);
  record(self, p, &c, "Warning", "Failed", "Error: ErrImagePull");
  set_waiting(c, "ErrImagePull", why);
  c.blocked = true;
  c.pull_backoff = c.pull_backoff.count() == 0
                       ? backoff_initial
                       : std::min(c.pull_backoff * 2, backoff_max);
  auto wait = scaled(self, c.pull_backoff);
  timer(self, std::min<caf::timespan>(1s, wait / 2), p.uid, "pullbk", idx,
        c.epoch);
  timer(self, wait, p.uid, "pull", idx, c.epoch);
  flush(self, p);
}

void config_error(self_ptr self, pod_rt& p, container_rt& c,
                  const std::string& message) {
  bool again = c.reason == "CreateContainerConfigError" && c.message == message;
  set_waiting(c, "CreateContainerConfigError", message);
  if (!again)
    record(self, p, &c, "Warning", "Failed", "Error: " + message);
  flush(self, p);
}

void start_container(self_ptr self, pod_rt& p, std::int32_t idx) {
  auto& st = self->state;
  auto& c = p.ctrs[static_cast<size_t>(idx)];
  auto image = str(c.spec, "image");
  auto info = detail::resolve_image(st.cfg, image);
  if (p.fault == "ErrImagePull" || p.fault == "ImagePullBackOff")
    info.found = false;
  if (!info.found) {
    pull_failed(self, p, idx);
    return;
  }
  if (!c.image_present) {
    c.image_present = true;
    c.pull_backoff = caf::timespan{0};
  }
  if (p.fault == "CreateContainerConfigError") {
    config_error(self, p, c,
                 "injected fault (sim/v1 podfaults): "
                 "CreateContainerConfigError");
    return;
  }
  auto sec = detail::resolve_security(p.obj, c.spec, info);
  if (auto* why = std::get_if<std::string>(&sec)) {
    config_error(self, p, c, *why);
    return;
  }
  auto lookup
      = [&](const std::string& kind, const std::string& name) -> const json* {
    return cached(self, kind == "Secret" ? "secrets" : "configmaps", p.ns,
                  name);
  };
  auto env = detail::make_env(
      p.obj, c.spec, lookup, p.sb.ip, host_ip(self),
      detail::kubernetes_service_env(st.cfg.api_host, st.cfg.api_port));
  if (auto* why = std::get_if<std::string>(&env)) {
    config_error(self, p, c, *why);
    return;
  }
  const auto& security = std::get<detail::security>(sec);
  sandbox::container_spec spec;
  spec.name = c.name;
  spec.env = std::get<std::vector<std::string>>(env);
  auto command
      = detail::expand_args(string_list(member(c.spec, "command")), spec.env);
  auto args
      = detail::expand_args(string_list(member(c.spec, "args")), spec.env);
  if (command.empty()) {
    spec.argv.push_back(info.executable);
  } else if (is_aiperf_node(command[0])) {
    // "aiperf-node" names the product's executable in any image: the
    // image's own when it is an aiperf-node image (--image-map can point
    // one at a test build), else the simulator's default.
    spec.argv.push_back(info.found && image.find("aiperf-node") != std::string::npos
                            ? info.executable
                            : st.cfg.aiperf_node_path);
    spec.argv.insert(spec.argv.end(), command.begin() + 1, command.end());
  } else {
    spec.argv = command;
    spec.argv[0] = search_path(spec.argv[0]);
  }
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  if (p.fault == "CrashLoop")
    spec.argv = {"/bin/sh", "-c", "exit 1"};
  spec.working_dir = str(c.spec, "workingDir");
  spec.uid = security.uid;
  spec.gid = security.gid;
  spec.groups = security.groups;
  spec.read_only_root = security.read_only_root;
  spec.drop_all_capabilities = security.drop_all_capabilities;
  spec.no_new_privileges = security.no_new_privileges;
  spec.mounts = mounts_of(self, p, c.spec);
  auto log_dir = pod_dir(self, p) + "/logs/" + c.name;
  std::error_code ec;
  fs::create_directories(log_dir, ec);
  spec.log_path = log_dir + "/" + std::to_string(c.instances) + ".log";
  record(self, p, &c, "Normal", "Pulled",
         "Container image \"" + image + "\" already present on machine");
  record(self, p, &c, "Normal", "Created", "Created container: " + c.name);
  c.starting = true;
  c.restart_due = false;
  auto uid = p.uid;
  auto epoch = c.epoch;
  auto log_path = spec.log_path;
  self->request(st.runtime, runtime_timeout, start_container_atom::value, uid,
                std::move(spec))
      .then(
          [self, uid, idx, epoch, log_path](std::int32_t pid) {
            auto* p = find_pod(self, uid);
            if (p == nullptr)
              return;
            auto& c = p->ctrs[static_cast<size_t>(idx)];
            if (c.epoch != epoch)
              return;
            c.starting = false;
            c.restarts = c.instances;
            ++c.instances;
            c.logs.push_back(log_path);
            c.state = container_rt::phase::running;
            c.reason.clear();
            c.message.clear();
            c.pid = pid;
            c.started_at = now_text(self);
            c.container_id = "sim://" + uid.substr(0, 8) + "-" + c.name + "-"
                             + std::to_string(c.restarts);
            c.startup = c.liveness = c.readiness = probe_counts{};
            record(self, *p, &c, "Normal", "Started",
                   "Started container " + c.name);
            if (p->terminating) {
              self->request(self->state.runtime, runtime_timeout,
                            signal_atom::value, uid, c.name, std::int32_t{15})
                  .then([] {}, [](caf::error&) {});
            } else {
              start_probes(self, *p, idx);
            }
            flush(self, *p);
          },
          [self, uid, idx, epoch, log_path](caf::error& err) {
            auto* p = find_pod(self, uid);
            if (p == nullptr)
              return;
            auto& c = p->ctrs[static_cast<size_t>(idx)];
            if (c.epoch != epoch)
              return;
            c.starting = false;
            c.restarts = c.instances;
            ++c.instances;
            c.logs.push_back(log_path);
            c.container_id = "sim://" + uid.substr(0, 8) + "-" + c.name + "-"
                             + std::to_string(c.restarts);
            c.started_at.clear();
            auto message = error_message(err);
            record(self, *p, &c, "Warning", "Failed", "Error: " + message);
            on_exit(self, uid, idx, 128, message);
          });
}

// --- probes ------------------------------------------------------------------

const char* probe_title(const std::string& kind) {
  return kind == "startup"    ? "Startup"
         : kind == "liveness" ? "Liveness"
                              : "Readiness";
}

void schedule_probe(self_ptr self, pod_rt& p, std::int32_t idx,
                    const std::string& kind, bool first) {
  auto& c = p.ctrs[static_cast<size_t>(idx)];
  const auto& probe = member(c.spec, (kind + "Probe").c_str());
  if (!probe.is_object())
    return;
  auto delay = first ? integer(probe, "initialDelaySeconds", 0)
                     : integer(probe, "periodSeconds", 10);
  timer(self, std::chrono::seconds{std::max<std::int64_t>(delay, 0)}, p.uid,
        "probe-" + kind, idx, c.epoch);
}

void start_probes(self_ptr self, pod_rt& p, std::int32_t idx) {
  auto& c = p.ctrs[static_cast<size_t>(idx)];
  if (member(c.spec, "startupProbe").is_object()) {
    schedule_probe(self, p, idx, "startup", true);
    return;
  }
  c.started = true;
  if (!member(c.spec, "readinessProbe").is_object())
    c.ready = !c.init || sidecar(c);
  schedule_probe(self, p, idx, "liveness", true);
  schedule_probe(self, p, idx, "readiness", true);
}

void kill_container(self_ptr self, pod_rt& p, container_rt& c,
                    std::int64_t grace) {
  if (grace < 2)
    grace = 2; // kuberuntime minimumGracePeriodInSeconds
  self->request(self->state.runtime, runtime_timeout, signal_atom::value, p.uid,
                c.name, std::int32_t{15})
      .then([] {}, [](caf::error&) {});
  std::int32_t idx = 0;
  for (size_t i = 0; i < p.ctrs.size(); ++i)
    if (&p.ctrs[i] == &c)
      idx = static_cast<std::int32_t>(i);
  timer(self, std::chrono::seconds{grace}, p.uid, "kill", idx, c.epoch);
}

void probe_result(self_ptr self, const std::string& uid, std::int32_t idx,
                  const std::string& kind, std::uint64_t epoch, bool ok,
                  const std::string& output) {
  auto* p = find_pod(self, uid);
  if (p == nullptr || p->terminating)
    return;
  auto& c = p->ctrs[static_cast<size_t>(idx)];
  if (c.epoch != epoch || c.state != container_rt::phase::running)
    return;
  const auto& probe = member(c.spec, (kind + "Probe").c_str());
  auto success_threshold = integer(probe, "successThreshold", 1);
  auto failure_threshold = integer(probe, "failureThreshold", 3);
  auto& counts = kind == "startup"    ? c.startup
                 : kind == "liveness" ? c.liveness
                                      : c.readiness;
  if (ok) {
    ++counts.successes;
    counts.failures = 0;
  } else {
    ++counts.failures;
    counts.successes = 0;
    record(self, *p, &c, "Warning", "Unhealthy",
           std::string{probe_title(kind)} + " probe failed: " + output);
  }
  auto grace = integer(
      probe, "terminationGracePeriodSeconds",
      integer(member(p->obj, "spec"), "terminationGracePeriodSeconds", 30));
  if (kind == "startup") {
    if (ok && counts.successes >= success_threshold) {
      c.started = true;
      if (!member(c.spec, "readinessProbe").is_object())
        c.ready = !c.init || sidecar(c);
      schedule_probe(self, *p, idx, "liveness", true);
      schedule_probe(self, *p, idx, "readiness", true);
      flush(self, *p);
      return;
    }
    if (!ok && counts.failures >= failure_threshold) {
      record(self, *p, &c, "Normal", "Killing",
             "Container " + c.name
                 + " failed startup probe, will be restarted");
      kill_container(self, *p, c, grace);
      return;
    }
  } else if (kind == "liveness") {
    if (!ok && counts.failures >= failure_threshold) {
      record(self, *p, &c, "Normal", "Killing",
             "Container " + c.name
                 + " failed liveness probe, will be restarted");
      counts = probe_counts{};
      kill_container(self, *p, c, grace);
      return;
    }
  } else {
    if (ok && counts.successes >= success_threshold && !c.ready) {
      c.ready = true;
      flush(self, *p);
    } else if (!ok && counts.failures >= failure_threshold && c.ready) {
      c.ready = false;
      flush(self, *p);
    }
  }
  schedule_probe(self, *p, idx, kind, false);
}

// httpGet through the runtime; tcpSocket as an HTTP GET whose failure to
// connect fails it (any answer means the port is open); exec and grpc
// probes are not emulated and succeed.
void run_probe(self_ptr self, pod_rt& p, std::int32_t idx,
               const std::string& kind) {
  auto& c = p.ctrs[static_cast<size_t>(idx)];
  const auto& probe = member(c.spec, (kind + "Probe").c_str());
  auto epoch = c.epoch;
  auto uid = p.uid;
  const json* action = nullptr;
  bool tcp = false;
  if (probe.contains("httpGet"))
    action = &probe["httpGet"];
  else if (probe.contains("tcpSocket")) {
    action = &probe["tcpSocket"];
    tcp = true;
  }
  if (action == nullptr) {
    probe_result(self, uid, idx, kind, epoch, true, "");
    return;
  }
  sandbox::http_probe hp;
  hp.ip = str(*action, "host").empty() ? p.sb.ip : str(*action, "host");
  const auto& port = member(*action, "port");
  if (port.is_number_integer()) {
    hp.port = port.get<std::uint16_t>();
  } else if (port.is_string()) {
    const auto& ports = member(c.spec, "ports");
    if (ports.is_array())
      for (const auto& cp : ports)
        if (str(cp, "name") == port.get<std::string>())
          hp.port = static_cast<std::uint16_t>(integer(cp, "containerPort", 0));
  }
  hp.path = tcp ? "/" : str(*action, "path");
  if (hp.path.empty())
    hp.path = "/";
  const auto& headers = member(*action, "httpHeaders");
  if (headers.is_array())
    for (const auto& h : headers)
      hp.headers.emplace_back(str(h, "name"), str(h, "value"));
  auto timeout = integer(probe, "timeoutSeconds", 1);
  hp.timeout_ms = static_cast<std::int32_t>(timeout * 1000);
  self->request(self->state.runtime,
                std::chrono::seconds{timeout} + std::chrono::seconds{5},
                probe_atom::value, hp)
      .then(
          [self, uid, idx, kind, epoch](std::int32_t code) {
            bool ok = code >= 200 && code < 400;
            probe_result(self, uid, idx, kind, epoch, ok,
                         "HTTP probe failed with statuscode: "
                             + std::to_string(code));
          },
          [self, uid, idx, kind, epoch, tcp](caf::error& err) {
            auto message = error_message(err);
            bool ok = tcp && message.find("connect") == std::string::npos
                      && message.find("timeout") == std::string::npos;
            probe_result(self, uid, idx, kind, epoch, ok, message);
          });
}

// --- lifecycle ---------------------------------------------------------------

void remove_pod(self_ptr self, const std::string& uid) {
  auto* p = find_pod(self, uid);
  if (p == nullptr)
    return;
  if (p->sandbox_ready || p->sandbox_creating)
    self->request(self->state.runtime, runtime_timeout,
                  remove_sandbox_atom::value, uid)
        .then([] {}, [](caf::error&) {});
  std::error_code ec;
  fs::remove_all(pod_dir(self, *p) + "/volumes", ec);
  auto& events = self->state.events;
  for (auto it = events.begin(); it != events.end();)
    it = it->first.rfind(uid + "|", 0) == 0 ? events.erase(it) : std::next(it);
  self->state.pods.erase(uid);
}

void send_delete(self_ptr self, const std::string& uid) {
  auto* p = find_pod(self, uid);
  if (p == nullptr)
    return;
  p->delete_after_write = false;
  request r;
  r.verb = verb::remove;
  r.ref = resource_ref{"", "v1", "pods", p->ns, p->name, ""};
  r.body = json{{"kind", "DeleteOptions"},
                {"apiVersion", "v1"},
                {"gracePeriodSeconds", 0},
                {"preconditions", {{"uid", uid}}}}
               .dump();
  self->request(self->state.api, api_timeout, std::move(r))
      .then([self, uid](response&) { remove_pod(self, uid); },
            [self, uid](caf::error& err) {
              if (is_error(err, errc::not_found)
                  || is_error(err, errc::conflict))
                remove_pod(self, uid);
              else
                timer(self, 1s, uid, "delete", 0, 0);
            });
}

bool any_running(const pod_rt& p) {
  for (const auto& c : p.ctrs)
    if (c.state == container_rt::phase::running || c.starting)
      return true;
  return false;
}

void maybe_finish(self_ptr self, pod_rt& p) {
  if (p.finished || any_running(p))
    return;
  p.finished = true;
  bool all_ok = true;
  for (const auto& c : p.ctrs)
    if (!c.init
        && !(c.state == container_rt::phase::terminated && c.exit_code == 0))
      all_ok = false;
  auto phase = compute_phase(p);
  if (phase != "Succeeded" && phase != "Failed")
    phase = all_ok ? "Succeeded" : "Failed";
  p.final_phase = phase;
  p.delete_after_write = true;
  if (p.writing) {
    p.dirty = true;
  } else {
    write_status(self, p.uid);
  }
}

// Graceful termination (kuberuntime killPod): SIGTERM to every container,
// SIGKILL when the grace period ends.
void begin_termination(self_ptr self, pod_rt& p) {
  p.terminating = true;
  const auto& meta = member(p.obj, "metadata");
  auto grace = integer(meta, "deletionGracePeriodSeconds", -1);
  if (grace <= 0)
    grace = integer(member(p.obj, "spec"), "terminationGracePeriodSeconds", 30);
  if (grace < 2)
    grace = 2;
  for (auto& c : p.ctrs) {
    c.blocked = false;
    if (c.state == container_rt::phase::running) {
      record(self, p, &c, "Normal", "Killing", "Stopping container " + c.name);
      self->request(self->state.runtime, runtime_timeout, signal_atom::value,
                    p.uid, c.name, std::int32_t{15})
          .then([] {}, [](caf::error&) {});
    }
  }
  timer(self, std::chrono::seconds{grace}, p.uid, "grace", 0, ++p.epoch);
  maybe_finish(self, p);
}

void sync(self_ptr self, const std::string& uid) {
  auto* pp = find_pod(self, uid);
  if (pp == nullptr)
    return;
  auto& p = *pp;
  const auto& meta = member(p.obj, "metadata");
  if (!p.terminating && meta.contains("deletionTimestamp")
      && !meta["deletionTimestamp"].is_null()) {
    begin_termination(self, p);
    return;
  }
  if (p.terminating || p.final_phase)
    return;
  if (!p.sandbox_ready) {
    if (p.sandbox_creating)
      return;
    auto vs = write_volumes(self, p, true);
    if (vs != volumes_state::ready) {
      flush(self, p);
      return;
    }
    p.sandbox_creating = true;
    sandbox::sandbox_spec spec;
    spec.id = uid;
    spec.hostname = str(member(p.obj, "spec"), "hostname");
    if (spec.hostname.empty())
      spec.hostname = p.name.substr(0, 63);
    const auto& cfg = self->state.cfg;
    spec.hosts_file = detail::hosts_file(p.obj, "", cfg.cluster_domain);
    spec.resolv_conf
        = detail::resolv_conf(p.obj, cfg.dns_server, cfg.cluster_domain);
    flush(self, p);
    self->request(self->state.runtime, runtime_timeout,
                  create_sandbox_atom::value, std::move(spec))
        .then(
            [self, uid](sandbox::sandbox_info& info) {
              auto* p = find_pod(self, uid);
              if (p == nullptr) {
                self->request(self->state.runtime, runtime_timeout,
                              remove_sandbox_atom::value, uid)
                    .then([] {}, [](caf::error&) {});
                return;
              }
              p->sandbox_creating = false;
              p->sandbox_ready = true;
              p->sb = info;
              // kubelet's managed /etc/hosts, bind-mounted into each
              // container: the pod's address is known only now.
              auto hosts = detail::hosts_file(p->obj, info.ip,
                                              self->state.cfg.cluster_domain);
              std::error_code ec;
              fs::create_directories(pod_dir(self, *p), ec);
              std::ofstream(pod_dir(self, *p) + "/etc-hosts") << hosts;
              // downwardAPI files naming status.podIP see it from now on.
              write_volumes(self, *p, false);
              sync(self, uid);
            },
            [self, uid](caf::error& err) {
              auto* p = find_pod(self, uid);
              if (p == nullptr)
                return;
              p->sandbox_creating = false;
              record(self, *p, nullptr, "Warning", "FailedCreatePodSandBox",
                     "Failed to create pod sandbox: " + error_message(err));
              timer(self, 10s, uid, "resync", 0, 0);
            });
    return;
  }
  // Init containers one at a time, in order.
  for (size_t i = 0; i < p.ctrs.size(); ++i) {
    auto& c = p.ctrs[i];
    if (!c.init)
      continue;
    if (c.done) {
      if (c.exit_code == 0)
        continue;
      flush(self, p);
      return; // failed for good: the pod is Failed
    }
    if (sidecar(c) && c.started)
      continue;
    if (c.state != container_rt::phase::running && !c.starting && !c.blocked)
      start_container(self, p, static_cast<std::int32_t>(i));
    flush(self, p);
    return;
  }
  for (size_t i = 0; i < p.ctrs.size(); ++i) {
    auto& c = p.ctrs[i];
    if (c.init || c.done || c.starting || c.blocked
        || c.state == container_rt::phase::running)
      continue;
    if (c.state == container_rt::phase::terminated && !c.restart_due)
      continue; // on_exit decides about restarts
    start_container(self, p, static_cast<std::int32_t>(i));
  }
  flush(self, p);
}

// A container's process ended: restart it as restartPolicy says, after
// kubelet's back-off (kuberuntime_manager.go doBackOff), or leave it
// terminated.
void on_exit(self_ptr self, const std::string& uid, std::int32_t idx,
             std::int32_t code, const std::string& message) {
  auto* pp = find_pod(self, uid);
  if (pp == nullptr)
    return;
  auto& p = *pp;
  auto& c = p.ctrs[static_cast<size_t>(idx)];
  c.state = container_rt::phase::terminated;
  c.exit_code = code;
  c.term_reason
      = code == 0 ? "Completed"
                  : (code == 128 && !message.empty() ? "StartError" : "Error");
  c.term_message = message;
  c.finished_at = now_text(self);
  c.pid = 0;
  c.ready = false;
  c.started = false;
  ++c.epoch;
  if (p.terminating) {
    flush(self, p);
    maybe_finish(self, p);
    return;
  }
  const auto& policy = restart_policy(p);
  auto phase = compute_phase(p);
  bool terminal = phase == "Succeeded" || phase == "Failed";
  bool restart
      = sidecar(c) ? !terminal
        : c.init   ? (code != 0 && policy != "Never")
                 : (policy == "Always" || (policy == "OnFailure" && code != 0));
  if (!restart) {
    c.done = true;
    sync(self, uid);
    // The containers are done: the sidecars are stopped, as kubelet does
    // once only restartable init containers remain.
    auto now_phase = compute_phase(p);
    if (now_phase == "Succeeded" || now_phase == "Failed")
      for (auto& s : p.ctrs)
        if (sidecar(s) && s.state == container_rt::phase::running)
          kill_container(self, p, s,
                         integer(member(p.obj, "spec"),
                                 "terminationGracePeriodSeconds", 30));
    flush(self, p);
    return;
  }
  auto now = self->clock().now();
  if (c.last_exit && now - *c.last_exit > backoff_reset)
    c.backoff = caf::timespan{0};
  c.last_exit = now;
  auto delay = c.backoff;
  c.backoff = c.backoff.count() == 0 ? backoff_initial
                                     : std::min(c.backoff * 2, backoff_max);
  c.last_state = json{{"terminated", terminated_json(c)}};
  if (delay.count() == 0) {
    c.restart_due = true;
    sync(self, uid);
    return;
  }
  auto wait = scaled(self, delay);
  auto desc = detail::pod_desc(p.obj);
  set_waiting(c, "CrashLoopBackOff",
              "back-off " + go_duration(wait)
                  + " restarting failed container=" + c.name + " pod=" + desc);
  c.blocked = true;
  record(self, p, &c, "Warning", "BackOff",
         "Back-off restarting failed container " + c.name + " in pod " + desc);
  timer(self, wait, uid, "restart", idx, c.epoch);
  flush(self, p);
}

// --- watches -----------------------------------------------------------------

bool my_node(self_ptr self, const json& pod) {
  auto node = str(member(pod, "spec"), "nodeName");
  const auto& nodes = self->state.cfg.nodes;
  return !node.empty()
         && std::find(nodes.begin(), nodes.end(), node) != nodes.end();
}

void claim_fault(self_ptr self, pod_rt& p) {
  auto& faults = self->state.faults;
  for (auto it = faults.begin(); it != faults.end(); ++it) {
    if (!it->ns.empty() && it->ns != p.ns)
      continue;
    if (!it->selector.matches(member(member(p.obj, "metadata"), "labels")))
      continue;
    p.fault = it->state;
    if (--it->count <= 0)
      faults.erase(it);
    return;
  }
}

void upsert_pod(self_ptr self, const json& obj) {
  auto uid = str(member(obj, "metadata"), "uid");
  if (uid.empty())
    return;
  auto& st = self->state;
  auto it = st.pods.find(uid);
  if (it == st.pods.end()) {
    if (!my_node(self, obj))
      return;
    // A pod already finished before this kubelet saw it is left alone.
    auto phase = str(member(obj, "status"), "phase");
    bool deleting = member(obj, "metadata").contains("deletionTimestamp");
    if ((phase == "Succeeded" || phase == "Failed") && !deleting)
      return;
    pod_rt p;
    p.obj = obj;
    p.uid = uid;
    p.ns = str(obj["metadata"], "namespace");
    p.name = str(obj["metadata"], "name");
    p.start_time = now_text(self);
    const auto& spec = member(obj, "spec");
    const auto& inits = member(spec, "initContainers");
    if (inits.is_array())
      for (const auto& c : inits) {
        container_rt r;
        r.name = str(c, "name");
        r.init = true;
        r.spec = c;
        r.reason = "PodInitializing";
        p.ctrs.push_back(std::move(r));
      }
    bool has_init = inits.is_array() && !inits.empty();
    const auto& cs = member(spec, "containers");
    if (cs.is_array())
      for (const auto& c : cs) {
        container_rt r;
        r.name = str(c, "name");
        r.spec = c;
        r.reason = has_init ? "PodInitializing" : "ContainerCreating";
        p.ctrs.push_back(std::move(r));
      }
    if ((phase == "Succeeded" || phase == "Failed")) {
      p.final_phase = phase;
      p.finished = true;
    }
    st.pods.emplace(uid, std::move(p));
    auto& added = st.pods[uid];
    claim_fault(self, added);
    if (added.finished) {
      send_delete(self, uid);
      return;
    }
    sync(self, uid);
    return;
  }
  if (rv_of(obj) > rv_of(it->second.obj))
    it->second.obj = obj;
  sync(self, uid);
}

// ConfigMaps and Secrets: containers waiting on them try again, volumes of
// running pods get the new content (atomic writer).
void object_changed(self_ptr self) {
  std::vector<std::string> uids;
  for (const auto& [uid, p] : self->state.pods)
    uids.push_back(uid);
  for (const auto& uid : uids) {
    auto* p = find_pod(self, uid);
    if (p == nullptr || p->terminating)
      continue;
    if (p->sandbox_ready)
      write_volumes(self, *p, false);
    sync(self, uid);
  }
}

void start_reflector(self_ptr self, const std::string& resource);

void apply_event(self_ptr self, const std::string& resource,
                 const std::string& type, const json& obj) {
  auto& cache = self->state.cache[resource];
  const auto& m = member(obj, "metadata");
  auto key = str(m, "namespace") + "/" + str(m, "name");
  if (type == "DELETED")
    cache.erase(key);
  else
    cache[key] = obj;
  if (resource == "pods") {
    auto uid = str(m, "uid");
    if (type == "DELETED") {
      remove_pod(self, uid);
      return;
    }
    upsert_pod(self, obj);
  }
}

void start_reflector(self_ptr self, const std::string& resource) {
  auto& st = self->state;
  auto& r = st.reflectors[resource];
  if (r.watch_id != 0) {
    self->send(st.api, unwatch_atom::value, r.watch_id);
    st.watches.erase(r.watch_id);
    r.watch_id = 0;
  }
  request list;
  list.verb = verb::list;
  list.ref = r.ref;
  self->request(st.api, api_timeout, std::move(list))
      .then(
          [self, resource](response& res) {
            auto& st = self->state;
            auto doc = parse(res.body);
            if (!doc || !doc->contains("items")) {
              self->delayed_send(self, relist_delay, relist_atom::value,
                                 resource);
              return;
            }
            auto& cache = st.cache[resource];
            cache.clear();
            std::set<std::string> seen;
            for (const auto& item : (*doc)["items"]) {
              const auto& m = member(item, "metadata");
              cache[str(m, "namespace") + "/" + str(m, "name")] = item;
              seen.insert(str(m, "uid"));
            }
            if (resource == "pods") {
              std::vector<std::string> gone;
              for (const auto& [uid, p] : st.pods)
                if (!seen.count(uid))
                  gone.push_back(uid);
              for (const auto& uid : gone)
                remove_pod(self, uid);
              for (const auto& item : (*doc)["items"])
                upsert_pod(self, item);
            } else {
              object_changed(self);
            }
            request w;
            w.verb = verb::watch;
            w.ref = st.reflectors[resource].ref;
            w.resource_version
                = str(member(*doc, "metadata"), "resourceVersion");
            w.allow_watch_bookmarks = true;
            auto sink = caf::actor_cast<watch_sink_actor>(self);
            self->request(st.api, api_timeout, watch_atom::value, std::move(w),
                          sink)
                .then(
                    [self, resource](std::uint64_t id) {
                      auto& st = self->state;
                      st.reflectors[resource].watch_id = id;
                      st.watches[id] = resource;
                    },
                    [self, resource](caf::error&) {
                      self->delayed_send(self, relist_delay, relist_atom::value,
                                         resource);
                    });
          },
          [self, resource](caf::error&) {
            self->delayed_send(self, relist_delay, relist_atom::value,
                               resource);
          });
}

// --- nodes -------------------------------------------------------------------

void post_node_status(self_ptr self, const std::string& node) {
  request get;
  get.verb = verb::get;
  get.ref = resource_ref{"", "v1", "nodes", "", node, ""};
  self->request(self->state.api, api_timeout, std::move(get))
      .then(
          [self, node](response& res) {
            auto obj = parse(res.body);
            if (!obj)
              return;
            auto now = now_text(self);
            auto& status = (*obj)["status"];
            if (!status.is_object())
              status = json::object();
            auto cond = [&](const char* type, const char* value,
                            const char* reason, const char* message) {
              return json{{"type", type},
                          {"status", value},
                          {"lastHeartbeatTime", now},
                          {"lastTransitionTime", now},
                          {"reason", reason},
                          {"message", message}};
            };
            status["conditions"] = json::array(
                {cond("MemoryPressure", "False", "KubeletHasSufficientMemory",
                      "kubelet has sufficient memory available"),
                 cond("DiskPressure", "False", "KubeletHasNoDiskPressure",
                      "kubelet has no disk pressure"),
                 cond("PIDPressure", "False", "KubeletHasSufficientPID",
                      "kubelet has sufficient PID available"),
                 cond("Ready", "True", "KubeletReady",
                      "kubelet is posting ready status")});
            json addresses = json::array();
            if (!host_ip(self).empty())
              addresses.push_back(
                  json{{"type", "InternalIP"}, {"address", host_ip(self)}});
            addresses.push_back(json{{"type", "Hostname"}, {"address", node}});
            status["addresses"] = addresses;
            json info = member(status, "nodeInfo").is_object()
                            ? status["nodeInfo"]
                            : json::object();
            info["kubeletVersion"] = "v1.32.0";
            info["kubeProxyVersion"] = "v1.32.0";
            info["containerRuntimeVersion"] = "sim://1.0.0";
            info["operatingSystem"] = "linux";
            info["architecture"] = "amd64";
            if (!info.contains("osImage"))
              info["osImage"] = "aiperf-node simulated node";
            status["nodeInfo"] = info;
            status["daemonEndpoints"]
                = json{{"kubeletEndpoint", {{"Port", 10250}}}};
            request put;
            put.verb = verb::update;
            put.ref = resource_ref{"", "v1", "nodes", "", node, "status"};
            put.body = obj->dump();
            self->request(self->state.api, api_timeout, std::move(put))
                .then([](response&) {},
                      [self, node](caf::error&) {
                        timer(self, 1s, "", "node", 0, 0);
                        (void)node;
                      });
          },
          [self, node](caf::error& err) {
            if (!is_error(err, errc::not_found)) {
              timer(self, 1s, "", "node", 0, 0);
              return;
            }
            // kubelet registers its Node when it is missing.
            json n
                = {{"apiVersion", "v1"},
                   {"kind", "Node"},
                   {"metadata",
                    {{"name", node},
                     {"labels",
                      {{"kubernetes.io/hostname", node},
                       {"kubernetes.io/os", "linux"},
                       {"kubernetes.io/arch", "amd64"}}}}},
                   {"status",
                    {{"capacity",
                      {{"cpu", "64"}, {"memory", "256Gi"}, {"pods", "110"}}},
                     {"allocatable",
                      {{"cpu", "64"}, {"memory", "256Gi"}, {"pods", "110"}}}}}};
            request create;
            create.verb = verb::create;
            create.ref = resource_ref{"", "v1", "nodes", "", "", ""};
            create.body = n.dump();
            self->request(self->state.api, api_timeout, std::move(create))
                .then(
                    [self, node](response&) { post_node_status(self, node); },
                    [self](caf::error&) { timer(self, 1s, "", "node", 0, 0); });
          });
}

// --- the fault and inspection interface --------------------------------------

caf::expected<fault_rt> parse_fault(const std::string& text) {
  auto doc = parse(text);
  if (!doc || !doc->is_object())
    return bad_request("the pod fault is not a JSON object");
  fault_rt f;
  const auto& d = *doc;
  if (d.contains("namespace")) {
    if (!d["namespace"].is_string())
      return bad_request("namespace: must be a string");
    f.ns = d["namespace"].get<std::string>();
  }
  if (d.contains("labelSelector")) {
    if (!d["labelSelector"].is_string())
      return bad_request("labelSelector: must be a string");
    auto sel = parse_label_selector(d["labelSelector"].get<std::string>());
    if (!sel)
      return bad_request("labelSelector: " + error_message(sel.error()));
    f.selector = *sel;
  }
  f.state = str(d, "state");
  static const std::set<std::string> states
      = {"ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError",
         "CrashLoop"};
  if (!states.count(f.state))
    return bad_request(
        "state: must be one of ImagePullBackOff, ErrImagePull, "
        "CreateContainerConfigError, CrashLoop (Unschedulable is the "
        "scheduler's)");
  if (d.contains("count")) {
    if (!d["count"].is_number_integer() || d["count"].get<std::int64_t>() < 1)
      return bad_request("count: must be an integer of at least 1");
    f.count = d["count"].get<std::int64_t>();
  }
  return f;
}

std::string pod_info(const pod_rt& p) {
  json containers = json::array();
  for (const auto& c : p.ctrs)
    containers.push_back(
        json{{"name", c.name},
             {"pid", c.state == container_rt::phase::running ? c.pid : 0},
             {"restartCount", c.restarts}});
  return json{{"pid", p.sb.pid},
              {"podIP", p.sb.ip},
              {"netns", p.sb.netns},
              {"containers", containers}}
      .dump();
}

caf::expected<pod_log_source>
log_source(const pod_rt& p, const std::string& container, bool previous) {
  const container_rt* c = nullptr;
  if (container.empty()) {
    std::vector<std::string> names, inits;
    for (const auto& x : p.ctrs)
      (x.init ? inits : names).push_back(x.name);
    if (names.size() != 1) {
      auto join = [](const std::vector<std::string>& v) {
        std::string out;
        for (size_t i = 0; i < v.size(); ++i)
          out += (i ? " " : "") + v[i];
        return out;
      };
      auto message = "a container name must be specified for pod " + p.name
                     + ", choose one of: [" + join(names) + "]";
      if (!inits.empty())
        message += " or one of the init containers: [" + join(inits) + "]";
      return bad_request(message);
    }
    for (const auto& x : p.ctrs)
      if (!x.init)
        c = &x;
  } else {
    for (const auto& x : p.ctrs)
      if (x.name == container)
        c = &x;
    if (c == nullptr)
      return bad_request("container " + container + " is not valid for pod "
                         + p.name);
  }
  if (previous) {
    // The instance before the latest one (kubelet's previous=true).
    if (c->logs.size() < 2)
      return bad_request("previous terminated container \"" + c->name
                         + "\" in pod \"" + p.name + "\" not found");
    return pod_log_source{c->logs[c->logs.size() - 2], false};
  }
  if (c->logs.empty())
    return bad_request("container \"" + c->name + "\" in pod \"" + p.name
                       + "\" is waiting to start: "
                       + (c->reason.empty() ? "ContainerCreating" : c->reason));
  return pod_log_source{c->logs.back(),
                        c->state == container_rt::phase::running};
}

void on_tick(self_ptr self, const std::string& uid, const std::string& what,
             std::int32_t idx, std::uint64_t epoch) {
  if (what == "node") {
    for (const auto& n : self->state.cfg.nodes)
      post_node_status(self, n);
    return;
  }
  auto* p = find_pod(self, uid);
  if (p == nullptr)
    return;
  if (what == "status") {
    if (!p->writing)
      write_status(self, uid);
    return;
  }
  if (what == "delete") {
    send_delete(self, uid);
    return;
  }
  if (what == "resync") {
    sync(self, uid);
    return;
  }
  if (what == "link") {
    if (epoch == p->epoch) {
      p->partitioned = false;
      self->request(self->state.runtime, runtime_timeout, link_atom::value, uid,
                    true)
          .then([] {}, [](caf::error&) {});
    }
    return;
  }
  if (what == "token") {
    auto now = self->clock().now();
    const auto& volumes = member(member(p->obj, "spec"), "volumes");
    for (auto& [key, tok] : p->tokens) {
      if (tok.requesting || tok.refresh_at > now)
        continue;
      auto volume = key.substr(0, key.find('/'));
      auto path = key.substr(key.find('/') + 1);
      if (volumes.is_array())
        for (const auto& v : volumes)
          if (str(v, "name") == volume
              && member(member(v, "projected"), "sources").is_array())
            for (const auto& s : v["projected"]["sources"])
              if (s.contains("serviceAccountToken")
                  && str(s["serviceAccountToken"], "path") == path)
                request_token(self, uid, key, s["serviceAccountToken"]);
    }
    return;
  }
  if (what == "grace") {
    if (epoch != p->epoch)
      return;
    for (auto& c : p->ctrs)
      if (c.state == container_rt::phase::running || c.starting)
        self->request(self->state.runtime, runtime_timeout, signal_atom::value,
                      uid, c.name, std::int32_t{9})
            .then([] {}, [](caf::error&) {});
    return;
  }
  if (idx < 0 || static_cast<size_t>(idx) >= p->ctrs.size())
    return;
  auto& c = p->ctrs[static_cast<size_t>(idx)];
  if (c.epoch != epoch)
    return;
  if (what == "kill") {
    if (c.state == container_rt::phase::running)
      self->request(self->state.runtime, runtime_timeout, signal_atom::value,
                    uid, c.name, std::int32_t{9})
          .then([] {}, [](caf::error&) {});
    return;
  }
  if (p->terminating)
    return;
  if (what == "pullbk") {
    if (c.state == container_rt::phase::waiting && c.reason == "ErrImagePull") {
      auto image = str(c.spec, "image");
      auto message = "Back-off pulling image \"" + image + "\"";
      set_waiting(c, "ImagePullBackOff", message);
      record(self, *p, &c, "Normal", "BackOff", message);
      record(self, *p, &c, "Warning", "Failed", "Error: ImagePullBackOff");
      flush(self, *p);
    }
    return;
  }
  if (what == "pull" || what == "restart") {
    c.blocked = false;
    sync(self, uid);
    return;
  }
  if (what.rfind("probe-", 0) == 0) {
    if (c.state == container_rt::phase::running)
      run_probe(self, *p, idx, what.substr(6));
    return;
  }
}

impl_actor::behavior_type kubelet_impl(self_ptr self, api_actor api,
                                       sandbox::runtime_actor runtime,
                                       kubelet_config cfg) {
  auto& st = self->state;
  st.api = std::move(api);
  st.runtime = std::move(runtime);
  st.cfg = std::move(cfg);
  st.t0 = self->clock().now();
  st.base_unix_ns
      = st.cfg.start_unix_seconds > 0
            ? st.cfg.start_unix_seconds * 1'000'000'000
            : std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  self->request(st.runtime, runtime_timeout, subscribe_atom::value,
                caf::actor_cast<sandbox::exit_sink_actor>(self))
      .then([] {}, [](caf::error&) {});
  for (const auto& n : st.cfg.nodes)
    post_node_status(self, n);
  for (const char* r : {"configmaps", "secrets", "persistentvolumeclaims",
                        "persistentvolumes", "pods"}) {
    st.reflectors[r].ref = resource_ref{"", "v1", r, "", "", ""};
  }
  // Objects pods need first, so that the first sync of a pod finds them.
  for (const char* r : {"configmaps", "secrets", "persistentvolumeclaims",
                        "persistentvolumes", "pods"})
    start_reflector(self, r);
  return {
      [self](pod_info_atom, const std::string& ns,
             const std::string& name) -> caf::result<std::string> {
        auto* p = find_pod(self, ns, name);
        if (p == nullptr || !p->sandbox_ready)
          return pod_not_found(name);
        return pod_info(*p);
      },
      [self](pod_log_atom, const std::string& ns, const std::string& name,
             const std::string& container,
             bool previous) -> caf::result<pod_log_source> {
        auto* p = find_pod(self, ns, name);
        if (p == nullptr)
          return pod_not_found(name);
        auto src = log_source(*p, container, previous);
        if (!src)
          return src.error();
        return *src;
      },
      [self](kill_atom, const std::string& ns, const std::string& name,
             const std::string& signal) -> caf::result<void> {
        auto number = detail::signal_number(signal);
        if (!number)
          return bad_request("unknown signal \"" + signal
                             + "\": use a name such as KILL, TERM, INT, HUP, "
                               "USR1 or a number");
        auto* p = find_pod(self, ns, name);
        if (p == nullptr)
          return pod_not_found(name);
        for (const auto& c : p->ctrs)
          if (c.state == container_rt::phase::running)
            self->request(self->state.runtime, runtime_timeout,
                          signal_atom::value, p->uid, c.name, *number)
                .then([] {}, [](caf::error&) {});
        return caf::unit;
      },
      [self](partition_atom, const std::string& ns, const std::string& name,
             std::int32_t seconds) -> caf::result<void> {
        if (seconds <= 0)
          return bad_request("seconds: must be a positive integer");
        auto* p = find_pod(self, ns, name);
        if (p == nullptr || !p->sandbox_ready)
          return pod_not_found(name);
        p->partitioned = true;
        self->request(self->state.runtime, runtime_timeout, link_atom::value,
                      p->uid, false)
            .then([] {}, [](caf::error&) {});
        timer(self, std::chrono::seconds{seconds}, p->uid, "link", 0,
              ++p->epoch);
        return caf::unit;
      },
      [self](pod_fault_atom, const std::string& text) -> caf::result<void> {
        auto f = parse_fault(text);
        if (!f)
          return f.error();
        self->state.faults.push_back(std::move(*f));
        return caf::unit;
      },
      [self](events_atom, std::uint64_t id, std::vector<watch_event>& events) {
        auto& st = self->state;
        auto w = st.watches.find(id);
        if (w == st.watches.end())
          return;
        auto resource = w->second;
        for (const auto& ev : events) {
          if (ev.type == "BOOKMARK")
            continue;
          if (ev.type == "ERROR") {
            st.watches.erase(id);
            st.reflectors[resource].watch_id = 0;
            start_reflector(self, resource);
            return;
          }
          auto obj = parse(ev.object);
          if (!obj)
            continue;
          apply_event(self, resource, ev.type, *obj);
        }
        if (resource != "pods")
          object_changed(self);
      },
      [self](watch_end_atom, std::uint64_t id, caf::error&) {
        auto& st = self->state;
        auto w = st.watches.find(id);
        if (w == st.watches.end())
          return;
        auto resource = w->second;
        st.watches.erase(w);
        st.reflectors[resource].watch_id = 0;
        self->delayed_send(self, relist_delay, relist_atom::value, resource);
      },
      [self](relist_atom, const std::string& resource) {
        start_reflector(self, resource);
      },
      [self](sandbox::exited_atom, const std::string& uid,
             const std::string& name, std::int32_t pid, std::int32_t code) {
        auto* p = find_pod(self, uid);
        if (p == nullptr)
          return;
        for (size_t i = 0; i < p->ctrs.size(); ++i) {
          auto& c = p->ctrs[i];
          if (c.name == name && c.state == container_rt::phase::running
              && c.pid == pid) {
            on_exit(self, uid, static_cast<std::int32_t>(i), code, "");
            return;
          }
        }
      },
      [self](tick_atom, const std::string& uid, const std::string& what,
             std::int32_t idx,
             std::uint64_t epoch) { on_tick(self, uid, what, idx, epoch); },
  };
}

} // namespace

kubelet_actor spawn_kubelet(caf::actor_system& sys, api_actor api,
                            sandbox::runtime_actor runtime,
                            kubelet_config cfg) {
  auto impl = sys.spawn(kubelet_impl, std::move(api), std::move(runtime),
                        std::move(cfg));
  return caf::actor_cast<kubelet_actor>(impl);
}

} // namespace aiperf::k8s::sim::kubelet
