// RBAC of the simulated API server, evaluated as kube-apiserver's RBAC
// authorizer does (kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/
// rbac.go, pkg/registry/rbac/validation/rule.go): a request is allowed when
// a rule of a Role or ClusterRole bound to the user — by a ClusterRoleBinding
// anywhere, by a RoleBinding in the request's namespace — matches it. Members
// of system:masters are allowed everything before RBAC is asked, as the
// privileged-group authorizer in front of RBAC does.
//
// Also here, because they are RBAC questions: the escalation checks of
// writes to roles and bindings (pkg/registry/rbac/escalation_check.go),
// impersonation, SelfSubjectAccessReview / SelfSubjectRulesReview /
// SubjectAccessReview bodies, and the exact 403 texts.
//
// Not emulated: aggregated ClusterRoles (a ClusterRole's aggregationRule is
// kept but its rules are not gathered from other roles: the controller that
// fills them does not run; writing an aggregationRule still needs full
// authority, as on a real server), and authorizers other than RBAC (Node,
// webhooks). Pure code, no actor: the store feeds the index on every write
// of an RBAC object and asks it on every request.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "k8s/errors/errors.hpp"

#include <caf/expected.hpp>

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace aiperf::k8s::sim::auth {

/// The group whose members may do anything (user.SystemPrivilegedGroup).
inline constexpr std::string_view system_masters = "system:masters";

/// The groups of a user impersonated with `as_groups` (k8s.io/apiserver
/// pkg/endpoints/filters/impersonation.go): those asked for — a service
/// account asked for without any gets its own two — plus
/// system:authenticated unless it or system:unauthenticated is among them
/// (system:unauthenticated for system:anonymous). What the audit log
/// records as impersonatedUser.groups.
[[nodiscard]] std::vector<std::string>
impersonated_groups(std::string_view as_user,
                    const std::vector<std::string>& as_groups);

/// One `rules[]` entry of a Role or ClusterRole.
struct policy_rule {
  std::vector<std::string> verbs;
  std::vector<std::string> api_groups;
  std::vector<std::string> resources; // "pods", "pods/log", "*", "*/status"
  std::vector<std::string> resource_names;
  std::vector<std::string> non_resource_urls; // "/apis", "/apis/*", "*"

  bool operator==(const policy_rule&) const = default;
};

/// The rule of a JSON `rules[]` entry (absent lists are empty).
[[nodiscard]] policy_rule rule_of(const json& rule);
[[nodiscard]] json to_json(const policy_rule& rule);

/// Upstream's compact form for escalation messages
/// (pkg/apis/rbac/v1 CompactString): `{APIGroups:[""], Resources:["pods"],
/// Verbs:["get" "list"]}`, empty lists left out.
[[nodiscard]] std::string compact_string(const policy_rule& rule);

/// What is being asked: authorizer.Attributes.
struct attributes {
  user_info user;
  std::string verb; // "get", "list", "watch", "create", ..., "impersonate",
                    // "bind", "escalate"
  std::string group;
  std::string resource;
  std::string subresource;
  std::string namespace_name;
  std::string name;
  bool resource_request = true;
  std::string path; // non-resource requests: "/apis", "/version"
};

/// The attributes of an API request as `user` (after impersonation).
[[nodiscard]] attributes attributes_of(const request& req,
                                       const user_info& user);

/// The attributes of a GET of a non-resource path ("/api", "/version").
[[nodiscard]] attributes non_resource_attributes(const user_info& user,
                                                 std::string_view verb,
                                                 std::string_view path);

/// An authorization decision. `reason` is what SubjectAccessReviews report
/// and a 403 ends with: `RBAC: allowed by RoleBinding "b/ns" of Role "r" to
/// ServiceAccount "sa/ns"` when allowed; when denied, "" or the resolution
/// errors met on the way (`RBAC: role.rbac.authorization.k8s.io "r" not
/// found`), as RBAC reports them in its reason rather than as an error.
struct decision {
  bool allowed = false;
  std::string reason;
};

/// The forbidden text of responsewriters.Forbidden, e.g. `User "u" cannot
/// patch resource "aiperfjobs/status" in API group "aiperf.nvidia.com" in
/// the namespace "bench"` or `User "u" cannot get path "/apis"`, followed by
/// ": <reason>" when the authorizer gave one.
[[nodiscard]] std::string forbidden_reason_text(const attributes& attrs,
                                                std::string_view reason = {});

/// The whole 403 message as apierrors.NewForbidden writes it:
/// `<resource>[.<group>] "<name>" is forbidden: <text>`, without the name
/// part for a collection, and `forbidden: <text>` for a non-resource path.
[[nodiscard]] std::string forbidden_message(const attributes& attrs,
                                            std::string_view reason = {});

/// The 403 Status: reason Forbidden, the message above, details {name,
/// group, kind = resource} (empty for a non-resource path).
[[nodiscard]] status forbidden_status(const attributes& attrs,
                                      std::string_view reason = {});

/// errc::forbidden carrying forbidden_status.
[[nodiscard]] caf::error forbidden_error(const attributes& attrs,
                                         std::string_view reason = {});

/// The ClusterRoles and ClusterRoleBindings every cluster starts with, as
/// the objects the store serves (labels kubernetes.io/bootstrapping:
/// rbac-defaults, annotation rbac.authorization.kubernetes.io/autoupdate):
/// cluster-admin (bound to system:masters), system:discovery and
/// system:basic-user (bound to system:authenticated), and
/// system:public-info-viewer (system:authenticated, system:unauthenticated),
/// and system:auth-delegator (TokenReviews and SubjectAccessReviews; bound
/// by nobody until a binding names it). So an authenticated service account
/// reads /api, /apis, /version and creates SelfSubjectAccessReviews,
/// SelfSubjectRulesReviews and SelfSubjectReviews, as on a real cluster.
/// The admin/edit/view roles are aggregated ClusterRoles and not among them.
[[nodiscard]] std::vector<json> bootstrap_cluster_roles();
[[nodiscard]] std::vector<json> bootstrap_cluster_role_bindings();

/// Roles, ClusterRoles, RoleBindings and ClusterRoleBindings as the store
/// holds them, indexed for evaluation.
class rbac_index {
public:
  /// True for the four RBAC kinds ("Role", "ClusterRole", "RoleBinding",
  /// "ClusterRoleBinding").
  [[nodiscard]] static bool is_rbac_kind(std::string_view kind) noexcept;

  /// The kind of an rbac.authorization.k8s.io resource: "Role" for
  /// "roles", ..., "" for any other.
  [[nodiscard]] static std::string_view
  kind_of_resource(std::string_view resource) noexcept;

  /// Adds or replaces an object (after a create, update or patch). `kind`
  /// is one of the four; other kinds are ignored. Namespace and name come
  /// from the object's metadata.
  void upsert(std::string_view kind, const json& object);

  /// Removes an object (after its deletion); unknown ones are ignored.
  void erase(std::string_view kind, std::string_view namespace_name,
             std::string_view name);

  /// Forgets every object (a store reset).
  void clear();

  /// The authorizer: system:masters, then RBAC.
  [[nodiscard]] decision authorize(const attributes& attrs) const;
  [[nodiscard]] bool allowed(const attributes& attrs) const {
    return authorize(attrs).allowed;
  }

  /// The request filter's answer: nothing when allowed, else
  /// forbidden_error(attrs, reason) — the 403 to send.
  [[nodiscard]] caf::expected<void> check(const attributes& attrs) const;

  /// Every rule that applies to `user` in `namespace_name` ("" = cluster
  /// bindings only), in upstream's visiting order; resolution errors (a
  /// binding to a missing role) are appended to `errors` when given.
  [[nodiscard]] std::vector<policy_rule>
  rules_for(const user_info& user, std::string_view namespace_name,
            std::vector<std::string>* errors = nullptr) const;

  /// Privilege-escalation prevention for a create or update of a Role
  /// (`kind` "Role", in `namespace_name`) or ClusterRole by `requester`:
  /// allowed for system:masters, for a requester holding `escalate` on
  /// roles/clusterroles (that name), or when the requester already holds
  /// every rule; an update (`old_role` given) that only changes
  /// ownerReferences/finalizers is always allowed; setting, keeping or
  /// dropping an aggregationRule (with selectors) needs full authority.
  /// Refused: errc::forbidden, 403 `roles.rbac.authorization.k8s.io "r" is
  /// forbidden: user "u" (groups=["a" "b"]) is attempting to grant RBAC
  /// permissions not currently held:\n{APIGroups:[...], ...}`.
  [[nodiscard]] caf::expected<void>
  check_role_write(const user_info& requester, std::string_view kind,
                   const json& role, std::string_view namespace_name,
                   const json* old_role = nullptr) const;

  /// Privilege-escalation prevention for a create or update of a
  /// RoleBinding (in `namespace_name`) or ClusterRoleBinding: allowed for
  /// system:masters, for a requester holding `bind` on the referenced role,
  /// or when the requester already holds every rule of that role; an update
  /// that only changes ownerReferences/finalizers (`old_binding` given) is
  /// always allowed. Refused: 403 as for roles, resource "rolebindings" or
  /// "clusterrolebindings"; a roleRef to a missing role is 404
  /// `roles.rbac.authorization.k8s.io "r" not found`.
  [[nodiscard]] caf::expected<void>
  check_binding_write(const user_info& requester, std::string_view kind,
                      const json& binding, std::string_view namespace_name,
                      const json* old_binding = nullptr) const;

  /// kubectl --as/--as-group: the user `requester` acts as, after checking
  /// verb impersonate on users (or serviceaccounts in the account's
  /// namespace, for "system:serviceaccount:<ns>:<name>") and on groups.
  /// The result has the given groups (a service account without groups
  /// gets its own) plus system:authenticated. Refused: errc::forbidden with
  /// upstream's 403 (`users "bob" is forbidden: User "u" cannot impersonate
  /// resource "users" in API group "" at the cluster scope`); groups without
  /// a user: errc::invalid, 400 BadRequest.
  [[nodiscard]] caf::expected<user_info>
  impersonate(const user_info& requester, std::string_view as_user,
              const std::vector<std::string>& as_groups) const;

  /// The SelfSubjectAccessReview the API server writes back for `review`
  /// (spec.resourceAttributes or spec.nonResourceAttributes) asked by
  /// `user`: spec echoed, status {allowed, reason}. Neither or both
  /// attributes set: errc::invalid, 422 as upstream's validation answers.
  [[nodiscard]] caf::expected<json>
  self_subject_access_review(const user_info& user, const json& review) const;

  /// The SubjectAccessReview answer (the subject from spec.user, groups,
  /// uid, extra; requires verb create on subjectaccessreviews, which the
  /// store checks like any create).
  [[nodiscard]] caf::expected<json>
  subject_access_review(const json& review) const;

  /// The LocalSubjectAccessReview answer for a review posted in
  /// `namespace_name`: as subject_access_review, but
  /// spec.resourceAttributes.namespace must be that namespace (400) and
  /// nonResourceAttributes are refused (422).
  [[nodiscard]] caf::expected<json>
  local_subject_access_review(const json& review,
                              std::string_view namespace_name) const;

  /// The escalation check of a create/update/patch of an RBAC object, by
  /// its resource ("roles", "clusterroles", "rolebindings",
  /// "clusterrolebindings"; anything else passes): check_role_write or
  /// check_binding_write with `object` the object to store and `old` the
  /// stored one (null on create).
  [[nodiscard]] caf::expected<void>
  check_write(const user_info& requester, std::string_view resource,
              const json& object, std::string_view namespace_name,
              const json* old = nullptr) const;

  /// The SelfSubjectRulesReview answer for spec.namespace: status
  /// {resourceRules [{verbs, apiGroups, resources, resourceNames}],
  /// nonResourceRules [{verbs, nonResourceURLs}], incomplete: false,
  /// evaluationError if a binding names a missing role}. No namespace:
  /// errc::invalid, 400 "no namespace on request".
  [[nodiscard]] caf::expected<json>
  self_subject_rules_review(const user_info& user, const json& review) const;

private:
  struct subject {
    std::string kind; // User, Group, ServiceAccount
    std::string name;
    std::string namespace_name;
  };
  struct binding {
    std::string name;
    std::string namespace_name;
    std::string role_kind; // Role, ClusterRole
    std::string role_name;
    std::vector<subject> subjects;
  };
  struct role {
    std::vector<policy_rule> rules;
  };

  [[nodiscard]] caf::expected<json>
  access_review(const json& review, const std::string& kind) const;

  template <class Visitor>
  void visit_rules(const user_info& user, std::string_view namespace_name,
                   Visitor&& visit) const;
  [[nodiscard]] const role* find_role(std::string_view kind,
                                      std::string_view namespace_name,
                                      std::string_view name) const;

  // Keyed (namespace, name); cluster-scoped objects have namespace "".
  using key = std::tuple<std::string, std::string>;
  std::map<key, role, std::less<>> roles_;
  std::map<std::string, role, std::less<>> cluster_roles_;
  std::map<key, binding, std::less<>> role_bindings_;
  std::map<std::string, binding, std::less<>> cluster_role_bindings_;
};

} // namespace aiperf::k8s::sim::auth
