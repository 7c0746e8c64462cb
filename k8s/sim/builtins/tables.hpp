// Server-side printing: the `meta.k8s.io/v1` Table kube-apiserver answers
// to `Accept: application/json;as=Table;v=v1;g=meta.k8s.io` (what `kubectl
// get` asks for), with the columns and cells of upstream's printers
// (kubernetes/kubernetes pkg/printers/internalversion/printers.go), the
// custom-resource printer built from a CRD's additionalPrinterColumns
// (apiextensions-apiserver pkg/registry/customresource/tableconvertor), and
// the default Name + Created At table of every other type
// (apiserver pkg/registry/rest/table.go).
//
// Like kube-apiserver, the wide (priority 1) columns are always filled;
// kubectl shows them with -o wide only.
#pragma once

#include "k8s/api/json.hpp"
#include "k8s/sim/builtins/registry.hpp"

#include <cstdint>
#include <string>

namespace aiperf::k8s::sim {

/// What each row's `object` carries (the `includeObject` parameter).
enum class table_include : std::uint8_t {
  none,     // no object
  metadata, // the default: a meta.k8s.io/v1 PartialObjectMetadata
  object,   // the whole object
};

/// The Table of `object_or_list` (one object, or a `…List` with `items`)
/// at time `now_unix` (seconds; AGE columns are computed from it).
[[nodiscard]] json to_table(const resource_type& type,
                            const json& object_or_list, std::int64_t now_unix,
                            table_include include = table_include::metadata);

/// duration.HumanDuration: "0s", "45s", "2m5s", "12m", "3h20m", "10h", "3d4h",
/// "40d", "2y10d", "9y"; "<invalid>" for more than a second in the future.
[[nodiscard]] std::string human_duration(std::int64_t seconds);

/// The first value a printer-column JSONPath selects in `object` (the subset
/// CRDs use: `.a.b`, `.a[0]`, `.a[*].b`, `.a['k.with.dots']`, filters
/// `[?(@.type=="Ready")]` with == and !=), or null when nothing matches.
[[nodiscard]] json json_path_first(const json& object, std::string_view path);

} // namespace aiperf::k8s::sim
