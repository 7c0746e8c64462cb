// The three PATCH bodies kube-apiserver applies to a stored object
// (kubernetes/apiserver pkg/endpoints/handlers/patch.go), each returning the
// patched object or the error the server answers.
#pragma once

#include "k8s/api/json.hpp"

#include <caf/expected.hpp>

#include <string_view>

namespace aiperf::k8s::sim {

/// The most operations a JSON patch may hold (patch.go
/// maxJSONPatchOperations); more is 413 RequestEntityTooLarge.
inline constexpr std::size_t max_json_patch_operations = 10'000;

/// RFC 6902. A body that is not a JSON array of objects is 400 BadRequest;
/// any failure while applying (a missing path, a failed `test`, an unknown
/// op) is the generic 422 of invalid_patch_status(): upstream drops the
/// patch library's message, and nothing of the patch is applied.
[[nodiscard]] caf::expected<json> apply_json_patch(const json& target,
                                                   std::string_view patch);

/// RFC 7386: objects merge recursively, `null` removes a key, anything else
/// replaces. A body that is not a JSON object is 400 BadRequest.
[[nodiscard]] caf::expected<json> apply_merge_patch(const json& target,
                                                    std::string_view patch);

/// Strategic merge patch for built-in types. Emulated: merge patch, except
/// that these lists merge element by element on their patchMergeKey —
/// containers / initContainers / ephemeralContainers / env / volumes /
/// imagePullSecrets by `name`, volumeMounts by `mountPath`, volumeDevices by
/// `devicePath`, container ports by `containerPort` (Service ports by
/// `port`), conditions by `type`, ownerReferences by `uid`, hostAliases by
/// `ip` — and metadata.finalizers merges as a set; the directives
/// `$patch: delete|replace|merge` (on maps and list elements),
/// `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`
/// (consumed; order is the original's, new elements appended) are honoured.
/// Not emulated: `$retainKeys` (dropped), per-type merge keys beyond those
/// field names (every other list replaces wholesale, as `atomic` lists do).
[[nodiscard]] caf::expected<json>
apply_strategic_merge_patch(const json& target, std::string_view patch);

/// Strategic merge of two parsed documents (what
/// apply_strategic_merge_patch does after parsing); also used to merge
/// lists of maps by key in server-side apply.
[[nodiscard]] json strategic_merge(const json& target, const json& patch);

/// The patchMergeKey the strategic merge uses for a list field `name`
/// whose elements look like `sample` ("" = the list is atomic).
[[nodiscard]] std::string_view strategic_merge_key(std::string_view name,
                                                   const json& sample);

} // namespace aiperf::k8s::sim
