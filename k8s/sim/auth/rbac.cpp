#include "k8s/sim/auth/rbac.hpp"

namespace aiperf::k8s::sim::auth {

policy_rule rule_of(const json&) {
  return {};
}
json to_json(const policy_rule&) {
  return json::object();
}
std::string compact_string(const policy_rule&) {
  return {};
}
attributes attributes_of(const request&, const user_info& user) {
  return attributes{user};
}
attributes non_resource_attributes(const user_info& user, std::string_view verb,
                                   std::string_view path) {
  attributes a{user};
  a.verb = verb;
  a.resource_request = false;
  a.path = path;
  return a;
}
std::string forbidden_reason_text(const attributes&, std::string_view) {
  return {};
}
std::string forbidden_message(const attributes&, std::string_view) {
  return {};
}
status forbidden_status(const attributes&, std::string_view) {
  return status{"Forbidden", 403, "", {}};
}
caf::error forbidden_error(const attributes& a, std::string_view r) {
  auto st = forbidden_status(a, r);
  auto msg = st.message;
  return make_error(k8s::errc::forbidden, std::move(msg), std::move(st));
}
std::vector<json> bootstrap_cluster_roles() {
  return {};
}
std::vector<json> bootstrap_cluster_role_bindings() {
  return {};
}

bool rbac_index::is_rbac_kind(std::string_view kind) noexcept {
  return kind == "Role" || kind == "ClusterRole" || kind == "RoleBinding"
         || kind == "ClusterRoleBinding";
}
void rbac_index::upsert(std::string_view, const json&) {}
void rbac_index::erase(std::string_view, std::string_view, std::string_view) {}
void rbac_index::clear() {}
decision rbac_index::authorize(const attributes&) const {
  return {};
}
std::vector<policy_rule>
rbac_index::rules_for(const user_info&, std::string_view,
                      std::vector<std::string>*) const {
  return {};
}
caf::expected<void> rbac_index::check_role_write(const user_info&,
                                                 std::string_view, const json&,
                                                 std::string_view) const {
  return {};
}
caf::expected<void>
rbac_index::check_binding_write(const user_info&, std::string_view, const json&,
                                std::string_view, const json*) const {
  return {};
}
caf::expected<user_info>
rbac_index::impersonate(const user_info& requester, std::string_view,
                        const std::vector<std::string>&) const {
  return requester;
}
caf::expected<json> rbac_index::self_subject_access_review(const user_info&,
                                                           const json&) const {
  return json{};
}
caf::expected<json> rbac_index::subject_access_review(const json&) const {
  return json{};
}
caf::expected<json> rbac_index::self_subject_rules_review(const user_info&,
                                                          const json&) const {
  return json{};
}

} // namespace aiperf::k8s::sim::auth
