// What the three controllers of k8s/sim/jobs share: a local copy of the
// resources they list and watch, a work queue of keys ("namespace/name")
// with client-go's semantics, fenced writes whose answers update the copy
// at once (so a reconcile never acts on a view older than its own writes),
// Events, and the wall clock derived from the actor clock. Internal to
// k8s/sim/jobs.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "k8s/informer/work_queue.hpp"
#include "k8s/sim/jobs/jobs.hpp"

#include <caf/actor_clock.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::jobs_detail {

// ---- JSON helpers ---------------------------------------------------------

/// j[a] as a string, "" when absent or not a string.
[[nodiscard]] std::string str(const json& j, const char* a);
/// j[a][b] as a string.
[[nodiscard]] std::string str(const json& j, const char* a, const char* b);
/// j[a] as an integer, or `def`.
[[nodiscard]] std::int64_t num(const json& j, const char* a,
                               std::int64_t def = 0);
/// j[a] when it is an object (or array), else an empty object.
[[nodiscard]] const json& obj(const json& j, const char* a);
[[nodiscard]] bool has(const json& j, const char* a);
[[nodiscard]] bool flag(const json& j, const char* a, bool def = false);

[[nodiscard]] std::string name_of(const json& o);
[[nodiscard]] std::string namespace_of(const json& o);
[[nodiscard]] std::string uid_of(const json& o);
[[nodiscard]] std::string key_of(const json& o);
[[nodiscard]] bool being_deleted(const json& o);
/// The uid of the controller ownerReference of kind `kind`, or "".
[[nodiscard]] std::string controller_uid(const json& o, const char* kind);
/// The name of that controller, or "".
[[nodiscard]] std::string controller_name(const json& o, const char* kind);
/// A controller ownerReference to `owner`.
[[nodiscard]] json owner_reference(const json& owner, const char* api_version,
                                   const char* kind);
/// The condition of `type` in status.conditions, or null.
[[nodiscard]] const json* condition(const json& o, const std::string& type);
[[nodiscard]] bool condition_true(const json& o, const std::string& type);
/// Equal as JSON values, whatever the order of object members (a server
/// may answer an object with its keys in another order than written).
[[nodiscard]] bool same(const json& a, const json& b);

// ---- the engine -----------------------------------------------------------

using controller_ptr = jobs_controller_actor::pointer;

/// One reconcile of one key: the writes it started; the key is done when
/// the last of them is answered.
struct pass {
  std::string key;
  int pending = 0;
  bool open = true; // the reconcile function has not returned yet
  bool failed = false;
  std::optional<caf::timespan> requeue_after;
  /// Asks for the key again after `d` (the earliest such request wins).
  void again_after(caf::timespan d) {
    if (!requeue_after || d < *requeue_after)
      requeue_after = d;
  }
};
using pass_ptr = std::shared_ptr<pass>;

struct watched {
  resource_ref ref; // the collection across namespaces
  std::uint64_t watch_id = 0;
  std::map<std::string, json> objects; // by key
};

class engine {
public:
  /// The keys of the queue a changed (or deleted) object of the which-th
  /// resource asks to reconcile.
  using mapper
      = std::function<std::vector<std::string>(std::size_t, const json&)>;
  using reconciler = std::function<void(const std::string&, const pass_ptr&)>;

  engine(controller_ptr self, api_actor api, jobs_config cfg,
         std::vector<resource_ref> refs, mapper map, reconciler rec,
         std::string component);

  /// The behavior of the controller actor.
  [[nodiscard]] jobs_controller_actor::behavior_type behavior();

  /// Lists (and then watches) every resource.
  void start();

  [[nodiscard]] const std::map<std::string, json>&
  objects(std::size_t which) const {
    return resources_[which].objects;
  }
  [[nodiscard]] const json* find(std::size_t which,
                                 const std::string& key) const;

  /// Seconds since the epoch, from the actor clock.
  [[nodiscard]] std::int64_t now_unix() const;
  /// now_unix() as metav1.Time.
  [[nodiscard]] std::string now_text() const;
  /// A metav1.Time as Unix seconds, nullopt if it does not parse.
  [[nodiscard]] static std::optional<std::int64_t>
  unix_of(const std::string& text);

  /// Sends `req` as part of `p`; its answer (an object of the which-th
  /// resource, if `which` is set) replaces the cached copy. `on_ok` runs
  /// with the answered object. NotFound of a delete counts as done; any
  /// other error fails the pass (the key is retried with back-off) and is
  /// handed to `on_err` with the server's message.
  void write(const pass_ptr& p, request req, std::optional<std::size_t> which,
             std::function<void(const json&)> on_ok = nullptr,
             std::function<void(const std::string&)> on_err = nullptr);

  /// Ends `p`'s reconcile function (call when it returns).
  void close(const pass_ptr& p);

  /// Queues `key` now.
  void enqueue(const std::string& key);

  /// A core/v1 Event about `object` (fire and forget).
  void event(const json& object, const std::string& type,
             const std::string& reason, const std::string& message);

  [[nodiscard]] const jobs_config& config() const { return cfg_; }

private:
  void list(std::size_t which);
  void relist_later(std::size_t which);
  void on_events(std::uint64_t id, std::vector<watch_event>& events);
  void on_end(std::uint64_t id);
  void apply(std::size_t which, const json& object, bool deleted);
  void finish(const pass_ptr& p);
  void schedule();
  void tick();

  controller_ptr self_;
  api_actor api_;
  jobs_config cfg_;
  std::vector<watched> resources_;
  mapper map_;
  reconciler reconcile_;
  std::string component_;
  informer::work_queue queue_;
  caf::actor_clock::time_point started_;
  std::int64_t base_unix_;
  bool tick_pending_ = false;
  std::optional<caf::actor_clock::time_point> timer_due_;
  std::uint64_t event_seq_ = 0;
};

/// A request with `verb` on `ref` carrying `body`.
[[nodiscard]] request make_request(verb v, resource_ref ref,
                                   const json& body = nullptr);
/// A DELETE with a uid precondition and `propagationPolicy`.
[[nodiscard]] request delete_request(resource_ref ref, const std::string& uid,
                                     const std::string& policy);

/// The state of every controller actor: the engine, made in the behavior
/// function (it needs the actor pointer).
struct controller_state {
  controller_state() = default; // not an aggregate (see CAF's stateful_actor)
  std::unique_ptr<engine> eng;
  static inline const char* name = "k8s_jobs_controller";
};

using stateful_ptr = jobs_controller_actor::stateful_pointer<controller_state>;

} // namespace aiperf::k8s::sim::jobs_detail
