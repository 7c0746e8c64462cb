// The type registry and its discovery documents, in the shapes kubectl 1.32
// and python's DynamicClient read (kube-apiserver's legacy discovery).
#include "k8s/errors/errors.hpp"
#include "k8s/sim/builtins/registry.hpp"

#include <gtest/gtest.h>

namespace aiperf::k8s::sim {
namespace {

const json* find_resource(const json& list, std::string_view name) {
  for (const auto& r : list.at("resources"))
    if (r.at("name") == name)
      return &r;
  return nullptr;
}

json jobset_crd() {
  return json::parse(R"({
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "jobsets.jobset.x-k8s.io"},
    "spec": {
      "group": "jobset.x-k8s.io",
      "names": {"kind": "JobSet", "plural": "jobsets", "shortNames": ["js"],
                "categories": ["all"]},
      "scope": "Namespaced",
      "versions": [
        {"name": "v1alpha1", "served": true, "storage": false},
        {"name": "v1alpha2", "served": true, "storage": true,
         "subresources": {"status": {}},
         "selectableFields": [{"jsonPath": ".spec.suspend"}],
         "additionalPrinterColumns": [
           {"name": "TerminalState", "type": "string",
            "jsonPath": ".status.terminalState"},
           {"name": "Age", "type": "date",
            "jsonPath": ".metadata.creationTimestamp"}],
         "schema": {"openAPIV3Schema": {"type": "object"}}},
        {"name": "v1", "served": false, "storage": false}]}})");
}

TEST(registry, core_v1_lists_resources_as_kube_apiserver_does) {
  type_registry reg;
  auto doc = reg.discovery("/api/v1");
  EXPECT_EQ(doc.at("kind"), "APIResourceList");
  EXPECT_EQ(doc.at("apiVersion"), "v1");
  EXPECT_EQ(doc.at("groupVersion"), "v1");
  const auto* cm = find_resource(doc, "configmaps");
  ASSERT_NE(cm, nullptr);
  EXPECT_EQ(
      cm->dump(),
      R"({"name":"configmaps","singularName":"configmap","namespaced":true,)"
      R"("kind":"ConfigMap","verbs":["create","delete","deletecollection",)"
      R"("get","list","patch","update","watch"],"shortNames":["cm"]})");
  const auto* status = find_resource(doc, "pods/status");
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->dump(),
            R"({"name":"pods/status","singularName":"","namespaced":true,)"
            R"("kind":"Pod","verbs":["get","patch","update"]})");
  const auto* token = find_resource(doc, "serviceaccounts/token");
  ASSERT_NE(token, nullptr);
  EXPECT_EQ(token->at("group"), "authentication.k8s.io");
  EXPECT_EQ(token->at("kind"), "TokenRequest");
  const auto* ns = find_resource(doc, "namespaces");
  ASSERT_NE(ns, nullptr);
  EXPECT_FALSE(ns->at("namespaced").get<bool>());
  EXPECT_EQ(ns->at("shortNames"), json::array({"ns"}));
  EXPECT_EQ(find_resource(doc, "pods")->at("categories"), json::array({"all"}));
  // Sorted by storage path, subresources right after their resource.
  std::vector<std::string> names;
  for (const auto& r : doc.at("resources"))
    names.push_back(r.at("name"));
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char* n : {"endpoints", "events", "nodes", "secrets",
                        "serviceaccounts", "services", "namespaces/finalize"})
    EXPECT_NE(find_resource(doc, n), nullptr) << n;
}

TEST(registry, group_documents_carry_short_names_and_subresources) {
  type_registry reg;
  auto apps = reg.discovery("/apis/apps/v1");
  const auto* deploy = find_resource(apps, "deployments");
  ASSERT_NE(deploy, nullptr);
  EXPECT_EQ(deploy->at("shortNames"), json::array({"deploy"}));
  const auto* scale = find_resource(apps, "deployments/scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(
      scale->dump(),
      R"({"name":"deployments/scale","singularName":"","namespaced":true,)"
      R"("group":"autoscaling","version":"v1","kind":"Scale",)"
      R"("verbs":["get","patch","update"]})");
  auto crds = reg.discovery("/apis/apiextensions.k8s.io/v1");
  EXPECT_EQ(find_resource(crds, "customresourcedefinitions")->at("shortNames"),
            json::array({"crd", "crds"}));
  auto authz = reg.discovery("/apis/authorization.k8s.io/v1");
  EXPECT_EQ(find_resource(authz, "selfsubjectaccessreviews")->at("verbs"),
            json::array({"create"}));
  EXPECT_TRUE(reg.discovery("/apis/batch/v2").is_null());
  EXPECT_TRUE(reg.discovery("/apis/nope.io/v1").is_null());
  EXPECT_TRUE(reg.discovery("/healthz").is_null());
}

TEST(registry, api_and_apis_and_version) {
  type_registry reg;
  auto api = reg.discovery("/api", "10.0.0.1:443");
  EXPECT_EQ(api.dump(), R"({"kind":"APIVersions","versions":["v1"],)"
                        R"("serverAddressByClientCIDRs":[{"clientCIDR":)"
                        R"("0.0.0.0/0","serverAddress":"10.0.0.1:443"}]})");
  auto apis = reg.discovery("/apis");
  EXPECT_EQ(apis.at("kind"), "APIGroupList");
  EXPECT_EQ(apis.at("groups").at(0).dump(),
            R"({"name":"apps","versions":[{"groupVersion":"apps/v1",)"
            R"("version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1",)"
            R"("version":"v1"}})");
  auto group = reg.discovery("/apis/batch");
  EXPECT_EQ(group.at("kind"), "APIGroup");
  EXPECT_EQ(group.at("name"), "batch");
  auto version = reg.discovery("/version");
  EXPECT_EQ(version.at("gitVersion"), "v1.32.0");
  EXPECT_EQ(version.at("major"), "1");
  EXPECT_EQ(version.at("minor"), "32");
}

TEST(registry, lookups_by_resource_and_by_kind) {
  type_registry reg;
  const auto* jobs = reg.find("batch", "v1", "jobs");
  ASSERT_NE(jobs, nullptr);
  EXPECT_EQ(jobs->kind, "Job");
  EXPECT_EQ(jobs->list_kind, "JobList");
  EXPECT_TRUE(jobs->has_generation);
  EXPECT_TRUE(jobs->has_status());
  EXPECT_EQ(jobs->qualified_resource(), "jobs.batch");
  EXPECT_EQ(jobs->qualified_kind(), "Job.batch");
  const auto* cm = reg.find_kind("v1", "ConfigMap");
  ASSERT_NE(cm, nullptr);
  EXPECT_FALSE(cm->has_generation);
  EXPECT_FALSE(cm->has_status());
  EXPECT_EQ(cm->qualified_resource(), "configmaps");
  EXPECT_EQ(reg.find_kind("rbac.authorization.k8s.io/v1", "Role")->name_rule,
            k8s::name_rule::path_segment);
  EXPECT_EQ(reg.find("", "v1", "services")->name_rule,
            k8s::name_rule::dns1035_label);
  EXPECT_EQ(reg.find("", "v1", "namespaces")->selectable_fields,
            (std::vector<std::string>{"status.phase", "metadata.name"}));
  EXPECT_TRUE(
      reg.find("authentication.k8s.io", "v1", "tokenreviews")->virtual_only);
  EXPECT_EQ(reg.find("", "v1", "pods"), reg.find_kind("v1", "Pod"));
  EXPECT_EQ(reg.find("", "v2", "pods"), nullptr);
}

TEST(registry, a_crd_adds_its_served_versions_to_discovery) {
  type_registry reg;
  ASSERT_TRUE(reg.add_crd(jobset_crd()));
  const auto* js = reg.find("jobset.x-k8s.io", "v1alpha2", "jobsets");
  ASSERT_NE(js, nullptr);
  EXPECT_TRUE(js->custom);
  EXPECT_EQ(js->singular, "jobset");
  EXPECT_EQ(js->list_kind, "JobSetList");
  EXPECT_TRUE(js->has_status());
  EXPECT_TRUE(js->has_generation);
  EXPECT_TRUE(js->storage);
  EXPECT_EQ(js->printer_columns.size(), 2u);
  EXPECT_EQ(js->schema, json::parse(R"({"type":"object"})"));
  EXPECT_EQ(js->selectable_fields,
            (std::vector<std::string>{"metadata.name", "metadata.namespace",
                                      "spec.suspend"}));
  EXPECT_EQ(reg.find("jobset.x-k8s.io", "v1", "jobsets"),
            nullptr); // not served
  EXPECT_FALSE(
      reg.find("jobset.x-k8s.io", "v1alpha1", "jobsets")->has_status());

  auto apis = reg.discovery("/apis");
  const auto& last = apis.at("groups").back();
  EXPECT_EQ(
      last.dump(),
      R"({"name":"jobset.x-k8s.io","versions":[{"groupVersion":)"
      R"("jobset.x-k8s.io/v1alpha2","version":"v1alpha2"},)"
      R"({"groupVersion":"jobset.x-k8s.io/v1alpha1","version":"v1alpha1"}],)"
      R"("preferredVersion":{"groupVersion":"jobset.x-k8s.io/v1alpha2",)"
      R"("version":"v1alpha2"}})");
  auto list = reg.discovery("/apis/jobset.x-k8s.io/v1alpha2");
  ASSERT_EQ(list.at("resources").size(), 2u);
  EXPECT_EQ(list.at("resources").at(0).dump(),
            R"({"name":"jobsets","singularName":"jobset","namespaced":true,)"
            R"("kind":"JobSet","verbs":["delete","deletecollection","get",)"
            R"("list","patch","create","update","watch"],"shortNames":["js"],)"
            R"("categories":["all"]})");
  EXPECT_EQ(list.at("resources").at(1).at("name"), "jobsets/status");

  reg.remove_crd("jobsets.jobset.x-k8s.io");
  EXPECT_EQ(reg.find("jobset.x-k8s.io", "v1alpha2", "jobsets"), nullptr);
  EXPECT_TRUE(reg.discovery("/apis/jobset.x-k8s.io/v1alpha2").is_null());
  EXPECT_EQ(reg.discovery("/apis").at("groups").back().at("name"),
            "discovery.k8s.io");
}

TEST(registry, a_crd_update_replaces_its_types_and_names_are_defaulted) {
  type_registry reg;
  auto crd = jobset_crd();
  ASSERT_TRUE(reg.add_crd(crd));
  crd["spec"]["versions"][0]["served"] = false;
  crd["spec"]["scope"] = "Cluster";
  ASSERT_TRUE(reg.add_crd(crd));
  EXPECT_EQ(reg.find("jobset.x-k8s.io", "v1alpha1", "jobsets"), nullptr);
  const auto* js = reg.find("jobset.x-k8s.io", "v1alpha2", "jobsets");
  ASSERT_NE(js, nullptr);
  EXPECT_FALSE(js->namespaced);
  EXPECT_EQ(js->selectable_fields,
            (std::vector<std::string>{"metadata.name", "spec.suspend"}));
  auto other = jobset_crd();
  other["metadata"]["name"] = "other.jobset.x-k8s.io";
  auto refused = reg.add_crd(other);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(is_error(refused.error(), errc::invalid));
  auto nameless
      = json::parse(R"({"spec":{"group":"g.io","names":{"plural":"xs"}}})");
  EXPECT_FALSE(reg.add_crd(nameless));
}

TEST(registry, versions_sort_the_kubernetes_way) {
  type_registry reg;
  auto crd = json::parse(R"({
    "metadata": {"name": "things.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
      "names": {"kind": "Thing", "plural": "things"},
      "versions": [{"name": "v1beta1", "served": true},
                   {"name": "foo", "served": true},
                   {"name": "v2alpha1", "served": true},
                   {"name": "v1", "served": true},
                   {"name": "v1beta2", "served": true},
                   {"name": "v2", "served": true}]}})");
  ASSERT_TRUE(reg.add_crd(crd));
  auto group = reg.discovery("/apis/example.com");
  std::vector<std::string> order;
  for (const auto& v : group.at("versions"))
    order.push_back(v.at("version"));
  EXPECT_EQ(order, (std::vector<std::string>{"v2", "v1", "v1beta2", "v1beta1",
                                             "v2alpha1", "foo"}));
  EXPECT_EQ(group.at("preferredVersion").at("version"), "v2");
}

} // namespace
} // namespace aiperf::k8s::sim
