// What the two controllers share: which types they list and watch, and the
// requests they send. Internal to k8s/sim/controllers.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"
#include "k8s/sim/builtins/registry.hpp"

#include <optional>
#include <string>
#include <vector>

namespace aiperf::k8s::sim::detail {

/// "group/version/resource".
[[nodiscard]] std::string type_key(const resource_type& t);

/// The types a controller lists and watches: every stored type that serves
/// list, watch and delete — one version per CRD (its storage version when
/// served) and not events.k8s.io (the same objects as core events).
[[nodiscard]] std::vector<resource_type>
watched_types(const type_registry& reg);

/// Whether a CRD object has the condition Established=True.
[[nodiscard]] bool established(const json& crd);

[[nodiscard]] resource_ref ref_of(const resource_type& t,
                                  const std::string& ns = {},
                                  const std::string& name = {});

[[nodiscard]] request list_request(const resource_type& t,
                                   const std::string& ns = {});
[[nodiscard]] request watch_request(const resource_type& t,
                                    const std::string& resource_version);
/// A DELETE with `propagationPolicy` and a uid precondition.
[[nodiscard]] request delete_request(const resource_type& t,
                                     const std::string& ns,
                                     const std::string& name,
                                     const std::string& uid,
                                     const std::string& policy);
/// A JSON patch that applies only to `resource_version` and sets (or, for
/// null, removes) /metadata/<field>.
[[nodiscard]] request metadata_patch(const resource_type& t,
                                     const std::string& ns,
                                     const std::string& name,
                                     const std::string& resource_version,
                                     const char* field, const json& value);

/// The JSON of an API answer, or nullopt if it is not JSON.
[[nodiscard]] std::optional<json> parse(const std::string& text);

} // namespace aiperf::k8s::sim::detail
