// The types the simulated API server serves: the built-ins it knows from
// birth and the custom resources each Established CustomResourceDefinition
// adds at run time, with what discovery says about them (kind, names,
// verbs, short names, categories, subresources) and what the store needs to
// treat them right (scope, metadata.generation, name rule, field selectors,
// printer columns).
//
// kubectl resolves every resource name (`cm`, `deploy`, `jobsets.jobset.
// x-k8s.io`) from the discovery documents alone, so they are written in the
// legacy shapes kube-apiserver 1.32 serves them in (APIVersions,
// APIGroupList, APIGroup, APIResourceList; field order as Go encodes them).
#pragma once

#include "k8s/api/json.hpp"
#include "k8s/object/selectors.hpp"
#include "k8s/object/validation.hpp"

#include <caf/expected.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace aiperf::k8s::sim {

/// A subresource as discovery lists it: `pods/status` answers a Pod,
/// `deployments/scale` an autoscaling/v1 Scale.
struct subresource_info {
  std::string name;    // "status", "scale", "token", "finalize"
  std::string kind;    // the kind it answers: "Pod", "Scale", "TokenRequest"
  std::string group;   // set when that kind is of another group
  std::string version; // idem
  std::vector<std::string> verbs;
};

/// Where a type's autoscaling/v1 Scale reads and writes its fields: the
/// JSON paths of a CRD version's subresources.scale (".spec.replicas"), or
/// the built-ins' fixed ones, whose selector is the metav1.LabelSelector
/// at spec.selector rather than a string.
struct scale_paths {
  std::string spec_replicas = ".spec.replicas";
  std::string status_replicas = ".status.replicas";
  std::string label_selector; // "" = none (CRs); built-ins: unused
};

/// A CRD's additionalPrinterColumns entry.
struct printer_column {
  std::string name;
  std::string type; // integer, number, string, boolean, date
  std::string format;
  std::string description;
  std::string json_path; // ".status.phase"
  std::int32_t priority = 0;
};

struct resource_type {
  std::string group; // "" = core
  std::string version;
  std::string resource; // plural: "configmaps"
  std::string kind;
  std::string list_kind;
  std::string singular;
  bool namespaced = true;
  std::vector<std::string> verbs; // discovery order
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::vector<subresource_info> subresources;
  /// Meaningful when subresources hold "scale".
  scale_paths scale;
  /// metadata.generation is kept (bumped on spec changes): Deployments,
  /// ReplicaSets, Jobs, CRDs and every custom resource.
  bool has_generation = false;
  /// Only `create` is served (TokenReview, SelfSubjectAccessReview, ...):
  /// nothing is stored, the answer is computed.
  bool virtual_only = false;
  /// metadata.name's rule.
  k8s::name_rule name_rule = k8s::name_rule::dns1123_subdomain;
  /// Fields a fieldSelector may name, metadata.name (and metadata.namespace
  /// where supported) included; and how others are refused.
  std::vector<std::string> selectable_fields;
  field_label_style field_style = field_label_style::default_conversion;
  /// From a CRD: its name ("jobsets.jobset.x-k8s.io"), the version's
  /// printer columns, the version's OpenAPI schema (null if none), whether
  /// it is the storage version.
  bool custom = false;
  std::string crd_name;
  std::vector<printer_column> printer_columns;
  json schema;
  bool storage = true;

  /// "v1", "batch/v1".
  [[nodiscard]] std::string api_version() const;
  /// "configmaps", "jobs.batch": the name in NotFound/AlreadyExists texts.
  [[nodiscard]] std::string qualified_resource() const;
  /// "ConfigMap", "Job.batch": the kind in Invalid texts.
  [[nodiscard]] std::string qualified_kind() const;
  [[nodiscard]] const subresource_info*
  find_subresource(std::string_view name) const;
  [[nodiscard]] bool has_status() const {
    return find_subresource("status") != nullptr;
  }
  [[nodiscard]] bool serves(std::string_view verb) const;
};

/// The server's /version.
[[nodiscard]] json version_info();

/// All types, built-in and custom. Not thread-safe: owned by the store actor.
class type_registry {
public:
  /// The built-ins of kube-apiserver 1.32 that the simulator serves.
  type_registry();

  /// By group, version and plural (what a request path names).
  [[nodiscard]] const resource_type* find(std::string_view group,
                                          std::string_view version,
                                          std::string_view resource) const;
  /// By apiVersion ("batch/v1", "v1") and kind ("Job").
  [[nodiscard]] const resource_type* find_kind(std::string_view api_version,
                                               std::string_view kind) const;
  /// Every served type, built-ins first, then custom in installation order.
  [[nodiscard]] std::vector<const resource_type*> types() const;

  /// Serves the resources of a CustomResourceDefinition object (its served
  /// versions; names from spec.names, with listKind and singular defaulted
  /// as the API server does). Replaces the types of an earlier version of
  /// the same CRD. Error k8s::errc::invalid when the object lacks group,
  /// names.plural, names.kind or a served version, or when another CRD
  /// already serves that group and plural.
  caf::expected<void> add_crd(const json& crd);
  /// Stops serving the types of CRD `crd_name`; unknown names are ignored.
  void remove_crd(std::string_view crd_name);

  /// The discovery document of `path` — "/api", "/apis", "/api/v1",
  /// "/apis/<g>", "/apis/<g>/<v>", "/version" — or null for a path that is
  /// not one (answer the plain-text 404). `server_address` is what /api
  /// reports in serverAddressByClientCIDRs ("127.0.0.1:6443").
  [[nodiscard]] json discovery(std::string_view path,
                               std::string_view server_address
                               = "127.0.0.1:6443") const;

private:
  std::vector<std::shared_ptr<resource_type>> types_;
};

} // namespace aiperf::k8s::sim
