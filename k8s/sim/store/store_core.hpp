// The store's state and REST semantics without the actor around it: the
// objects, the one resourceVersion counter, the watch history, and every
// verb. The actor (store.cpp) owns one, feeds it requests, and fans the
// events it commits out to watches and the state log.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "k8s/object/selectors.hpp"
#include "k8s/object/validation.hpp"
#include "k8s/sim/auth/rbac.hpp"
#include "k8s/sim/auth/tokens.hpp"
#include "k8s/sim/builtins/registry.hpp"
#include "k8s/sim/store/store.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace aiperf::k8s::sim {

class compiled_schema;

/// What the store needs to know of a served type.
struct type_view {
  std::string group;
  std::string version;
  std::string resource; // plural
  std::string kind;
  std::string list_kind;
  bool namespaced = true;
  bool status_subresource = false;
  /// metadata.generation is kept (built-ins: by their strategy; CRs: always).
  bool has_generation = false;
  /// Installed by a CRD: no strategic merge patch, no unconditional update,
  /// generation bumped by any change outside metadata.
  bool custom = false;
  /// A PUT of a missing object creates it (Events, Endpoints, Leases).
  bool create_on_update = false;
  /// Only `create` is served (reviews: TokenReview, SelfSubjectAccessReview).
  bool create_only = false;
  name_rule names = name_rule::dns1123_subdomain;
  /// Field selectors beyond metadata.name and metadata.namespace.
  std::vector<std::string> field_selectors;
  field_label_style selector_style = field_label_style::default_conversion;
  /// CRs: the schema of the served version, null = none.
  std::shared_ptr<const compiled_schema> schema;
  /// The registry's entry; valid while one request is served (a CRD write
  /// may replace it), so watch filters keep none.
  const resource_type* rt = nullptr;

  [[nodiscard]] std::string storage_key() const {
    return group + "/" + resource;
  }
  [[nodiscard]] std::string api_version() const {
    return group.empty() ? version : group + "/" + version;
  }
  /// "configmaps", "jobs.batch": how NotFound/AlreadyExists name it.
  [[nodiscard]] std::string qualified_resource() const {
    return group.empty() ? resource : resource + "." + group;
  }
};

/// One committed change, as watches and the state log see it.
struct history_event {
  std::uint64_t rv = 0;
  std::string type; // ADDED, MODIFIED, DELETED
  std::string storage_key;
  std::string namespace_name;
  std::string name;
  json object;     // the new state; DELETED: the last state at the delete RV
  json old_object; // the state before (null for ADDED)
};

/// What a watch filters on, resolved once when it starts.
struct watch_filter {
  type_view type;
  std::string namespace_name; // "" = all
  std::string name;           // "" = all
  label_selector labels;
  field_selector fields;
  bool bookmarks = false;
  /// Objects as meta.k8s.io/v1 Tables (Accept: as=Table). Only the first
  /// carries columnDefinitions: kube-apiserver's watch encoder sets
  /// NoHeaders once it has sent them.
  bool as_table = false;
  bool table_headers_sent = false;
};

/// A watch ready to run: its filter, the events it starts with (synthetic
/// ADDEDs, or the history after its resourceVersion, or one ERROR 410), and
/// whether it ends right after them.
struct watch_plan {
  watch_filter filter;
  std::vector<watch_event> initial;
  bool ends_after_initial = false;
  std::uint64_t last_rv = 0;
};

/// kube-apiserver's limit on a request body (MaxRequestBodyBytes, 3 MiB).
inline constexpr std::size_t max_request_bytes = 3 * 1024 * 1024;
/// etcd's default request limit (--max-request-bytes): the largest object
/// the store keeps.
inline constexpr std::size_t max_stored_bytes = 1536 * 1024;

class store_core {
public:
  using clock_fn = std::function<std::int64_t()>; // Unix seconds

  store_core(store_config cfg, clock_fn now_unix);

  /// Creates the built-in namespaces and their contents (a fresh cluster).
  void seed();
  /// After a replay: the `kube-root-ca.crt` ConfigMaps that hold another CA
  /// (the previous run's) get cfg.root_ca_pem, as the publisher would.
  void refresh_root_ca();

  /// Serves any verb but watch. Committed changes go to the hook.
  caf::expected<response> handle(const request& req);

  /// Resolves a watch; error replies as handle() answers.
  caf::expected<watch_plan> plan_watch(const request& req);

  /// The event of `ev` for a watch with `filter`, if it concerns it (label
  /// and field selectors turn MODIFIED into ADDED/DELETED when an object
  /// enters or leaves them). A Table when the watch asked for one; the
  /// filter then records that its column definitions went out.
  [[nodiscard]] std::optional<watch_event>
  event_for(watch_filter& filter, const history_event& ev) const;

  /// A BOOKMARK at the current resourceVersion for `filter`'s type.
  [[nodiscard]] watch_event bookmark(const watch_filter& filter) const;

  caf::expected<user_info> authenticate(const std::string& token);
  caf::expected<response> discovery(const std::string& path) const;

  /// Forgets every object (not the resourceVersion) and seeds again.
  void wipe();

  /// Applies a logged event during replay (no hook, no validation).
  void replay(const history_event& ev);

  [[nodiscard]] std::uint64_t revision() const noexcept { return revision_; }
  [[nodiscard]] bool empty() const noexcept { return objects_.empty(); }

  /// Called for every committed change, in resourceVersion order.
  std::function<void(const history_event&)> on_commit;

private:
  using collection = std::map<std::string, json>; // "ns/name" or "name"

  // types
  caf::expected<type_view> find_type(const resource_ref& ref) const;
  [[nodiscard]] type_view view_of(const resource_type& rt) const;
  void register_crd(const json& crd);
  /// Creates the namespace's `kube-root-ca.crt` ConfigMap (cfg_.root_ca_pem).
  void publish_root_ca(const std::string& ns);
  void unregister_crd(const json& crd);
  /// Creates the namespace's `default` ServiceAccount.
  void create_default_service_account(const std::string& ns);

  // verbs
  caf::expected<response> serve(const request& req);
  /// Fills the rules of aggregated ClusterRoles (aggregationRule).
  void aggregate_cluster_roles();
  caf::expected<response> get(const type_view& t, const request& req);
  caf::expected<response> list(const type_view& t, const request& req);
  caf::expected<response> create(const type_view& t, const request& req);
  caf::expected<response> update(const type_view& t, const request& req);
  caf::expected<response> patch(const type_view& t, const request& req);
  caf::expected<response> remove(const type_view& t, const request& req);
  caf::expected<response> remove_collection(const type_view& t,
                                            const request& req);
  caf::expected<response> review(const type_view& t, const request& req,
                                 json body);
  caf::expected<response> token_request(const type_view& t, const request& req,
                                        json body);
  /// POST pods/<name>/binding: the scheduler's assignment of a pod to a node.
  caf::expected<response> bind(const type_view& t, const request& req,
                               json body);
  /// GET, PUT and PATCH of <resource>/<name>/scale: an autoscaling/v1
  /// Scale projected from the object; writes set its spec.replicas.
  caf::expected<response> scale(const type_view& t, const request& req);
  /// `scale` (the request's Scale after its PUT or PATCH) written into
  /// `stored`: validation, preconditions, then an update of the object.
  caf::expected<response> write_scale(const type_view& t, const request& req,
                                      const json& stored, json scale);
  /// pods/log, pods/proxy, services/proxy: the object itself, for the front.
  caf::expected<response> pass_through(const type_view& t, const request& req);
  /// Impersonation, then RBAC: the request as its effective user, or the
  /// 403 (401 for nobody) the real server answers.
  caf::expected<request> authorize(const request& req);
  /// RBAC's escalation checks for writes of roles and bindings.
  caf::expected<void> check_rbac_write(const type_view& t, const request& req,
                                       const json& object, const json* old);
  void index_rbac(const std::string& storage_key, const std::string& type,
                  const json& object);

  // the write path
  struct write_result {
    json object;
    bool created = false;
    bool deleted = false;
  };
  caf::expected<write_result> write_update(const type_view& t,
                                           const request& req, json stored,
                                           json updated, bool allow_create);
  caf::expected<json> admit(const type_view& t, const request& req,
                            json& object, const json* old,
                            std::vector<std::string>& warnings);
  /// The field manager's Update entry for a non-apply write.
  void track_managed_fields(const type_view& t, const request& req,
                            json& object, const json* old);
  /// Mutating admission: the built-in plugins, then store_config's.
  caf::expected<void> mutating_admission(const type_view& t, const request& req,
                                         json& object, const json* old);
  /// The built-in mutating admission plugins, on create.
  caf::expected<void> builtin_mutating_admission(const type_view& t,
                                                 const request& req,
                                                 json& object, const json* old);
  caf::expected<void> admit_service_account(const type_view& t,
                                            const request& req, json& pod);
  /// Pod Security admission (pod_security.hpp): a pod create that breaks
  /// its namespace's enforce level is Forbidden; warn levels, and both
  /// levels for pod templates, add warnings.
  caf::expected<void> admit_pod_security(const type_view& t, const request& req,
                                         const json& object, const json* old,
                                         std::vector<std::string>& warnings);
  caf::expected<void> admit_priority(const type_view& t, const request& req,
                                     json& pod);
  void admit_default_storage_class(json& pvc);
  caf::expected<void> check_namespace(const type_view& t, const std::string& ns,
                                      const std::string& name);
  json delete_now(const type_view& t, const std::string& key,
                  const request& req);
  /// rest.BeforeDelete's grace period for `object` (pods only): `graceful`
  /// when the object gets (or shortens) a deletionTimestamp and
  /// deletionGracePeriodSeconds of `seconds`; `pending` when a grace period
  /// already runs and this request does not shorten it (nothing changes).
  struct grace_outcome {
    bool graceful = false;
    bool pending = false;
    std::int64_t seconds = 0;
  };
  grace_outcome graceful_delete(const type_view& t, const json& options,
                                json& object) const;
  /// Stores `next` in place of `old` at a new resourceVersion and tells the
  /// watches (MODIFIED), bypassing admission: the storage-level updates of
  /// subresources such as binding. Returns the stored object.
  json store_modified(const type_view& t, const std::string& key, json next,
                      const json& old);
  void commit(const type_view& t, const std::string& type, json object,
              json old_object);

  // helpers
  json served(const type_view& t, json object) const;
  std::string key_of(const type_view& t, const std::string& ns,
                     const std::string& name) const;
  const json* find(const type_view& t, const std::string& ns,
                   const std::string& name) const;
  collection snapshot_at(const type_view& t, std::uint64_t rv) const;
  std::string new_uid();
  std::string random_suffix();
  std::int64_t now() const { return now_unix_(); }

  store_config cfg_;
  clock_fn now_unix_;
  std::uint64_t revision_ = 0;
  std::map<std::string, collection> objects_; // by storage key
  std::deque<history_event> history_;
  std::uint64_t compacted_rv_ = 0; // events at or below it are gone
  type_registry registry_;
  auth::token_authority tokens_;
  auth::rbac_index rbac_;
  /// Compiled schemas of served CRD versions, by "<crd name>/<version>".
  std::map<std::string, std::shared_ptr<const compiled_schema>> schemas_;
  std::mt19937_64 random_;
  /// A ClusterRole changed: aggregated roles may need their rules again.
  bool aggregation_due_ = false;
};

} // namespace aiperf::k8s::sim
