#include "k8s/sim/store/scale.hpp"

#include "k8s/object/selectors.hpp"
#include "k8s/object/validation.hpp"

#include <limits>
#include <string>

namespace aiperf::k8s::sim {
namespace {

// The CRD paths are JSON paths with a leading dot; the dotted parts name
// nested fields (no array indices: the CRD validation refuses them).
std::vector<std::string> parts_of(std::string_view path) {
  if (!path.empty() && path.front() == '.')
    path.remove_prefix(1);
  std::vector<std::string> out;
  std::size_t from = 0;
  for (;;) {
    auto dot = path.find('.', from);
    out.emplace_back(path.substr(from, dot - from));
    if (dot == std::string_view::npos)
      break;
    from = dot + 1;
  }
  return out;
}

const json* node_at(const json& object, std::string_view path) {
  const json* node = &object;
  for (const auto& part : parts_of(path)) {
    if (!node->is_object())
      return nullptr;
    auto it = node->find(part);
    if (it == node->end())
      return nullptr;
    node = &*it;
  }
  return node;
}

void check_replicas(const json& object, const std::string& path,
                    std::vector<status_cause>& out) {
  auto value = integer_at(object, path);
  if (!value)
    return;
  if (*value < 0)
    out.push_back(field_invalid_rendered(path, std::to_string(*value),
                                         "should be a non-negative integer"));
  else if (*value > std::numeric_limits<std::int32_t>::max())
    out.push_back(field_invalid_rendered(
        path, std::to_string(*value),
        "should be less than or equal to "
            + std::to_string(std::numeric_limits<std::int32_t>::max())));
}

} // namespace

std::optional<std::int64_t> integer_at(const json& object,
                                       std::string_view path) {
  const json* node = node_at(object, path);
  if (node == nullptr || !node->is_number_integer())
    return std::nullopt;
  return node->get<std::int64_t>();
}

void set_at(json& object, std::string_view path, json value) {
  json* node = &object;
  for (const auto& part : parts_of(path)) {
    if (!node->is_object())
      *node = json::object();
    node = &(*node)[part];
  }
  *node = std::move(value);
}

scale_projection scale_of(const resource_type& rt, const json& parent) {
  scale_projection out;
  const json meta = parent.value("metadata", json::object());
  json scale_meta = json::object();
  for (const char* key :
       {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"})
    if (auto it = meta.find(key);
        it != meta.end()
        && !(it->is_string() && it->get<std::string>().empty()))
      scale_meta[key] = *it;
  std::int64_t spec_replicas = 0;
  std::int64_t status_replicas = 0;
  std::string selector;
  if (rt.custom) {
    if (auto v = integer_at(parent, rt.scale.spec_replicas))
      spec_replicas = *v;
    else {
      spec_replicas = unset_spec_replicas;
      out.spec_replicas_missing = true;
    }
    status_replicas = integer_at(parent, rt.scale.status_replicas).value_or(0);
    if (!rt.scale.label_selector.empty())
      if (const json* s = node_at(parent, rt.scale.label_selector);
          s != nullptr && s->is_string())
        selector = s->get<std::string>();
  } else {
    spec_replicas = integer_at(parent, ".spec.replicas").value_or(0);
    status_replicas = integer_at(parent, ".status.replicas").value_or(0);
    const json spec = parent.value("spec", json::object());
    if (auto parsed = label_selector_from_json(spec.value("selector", json())))
      selector = to_string(*parsed);
  }
  json spec = json::object();
  if (spec_replicas != 0)
    spec["replicas"] = spec_replicas;
  json status = {{"replicas", status_replicas}};
  if (!selector.empty())
    status["selector"] = selector;
  out.scale = {{"kind", "Scale"},
               {"apiVersion", "autoscaling/v1"},
               {"metadata", std::move(scale_meta)},
               {"spec", std::move(spec)},
               {"status", std::move(status)}};
  return out;
}

std::vector<status_cause> validate_custom_scale(const scale_paths& paths,
                                                const json& object,
                                                bool status_only) {
  std::vector<status_cause> out;
  if (!status_only)
    check_replicas(object, paths.spec_replicas, out);
  check_replicas(object, paths.status_replicas, out);
  return out;
}

} // namespace aiperf::k8s::sim
