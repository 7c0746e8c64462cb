#include "k8s/sim/store/patch.hpp"

#include "k8s/errors/errors.hpp"
#include "k8s/object/status_json.hpp"

#include <string>

namespace aiperf::k8s::sim {
namespace {

caf::error bad_request(std::string message) {
  return make_status_error("patch",
                           status{"BadRequest", 400, std::move(message), {}});
}

caf::expected<json> parse_body(std::string_view body) {
  try {
    return json::parse(body);
  } catch (const json::exception& e) {
    // Go's encoding/json wording for the common case; the position is ours.
    return bad_request(std::string{"invalid JSON in the patch body: "}
                       + e.what());
  }
}

constexpr std::string_view delete_from_primitive_list
    = "$deleteFromPrimitiveList/";
constexpr std::string_view set_element_order = "$setElementOrder/";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

json merge_list(std::string_view field, const json& target, const json& patch);

json merge_map(const json& target, const json& patch) {
  if (patch.contains("$patch")) {
    const auto& directive = patch["$patch"];
    if (directive == "replace") {
      json out = patch;
      out.erase("$patch");
      return out;
    }
    if (directive == "delete")
      return json(); // caller removes the key
  }
  json out = target.is_object() ? target : json::object();
  // Removals from primitive lists first, so that a patch that also sets the
  // list sees the list the directive left.
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    std::string_view key = it.key();
    if (!starts_with(key, delete_from_primitive_list))
      continue;
    auto name = std::string{key.substr(delete_from_primitive_list.size())};
    if (!out.contains(name) || !out[name].is_array() || !it->is_array())
      continue;
    json kept = json::array();
    for (const auto& v : out[name]) {
      bool removed = false;
      for (const auto& r : *it)
        removed = removed || r == v;
      if (!removed)
        kept.push_back(v);
    }
    out[name] = std::move(kept);
  }
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const std::string& key = it.key();
    if (key == "$patch" || key == "$retainKeys"
        || starts_with(key, delete_from_primitive_list)
        || starts_with(key, set_element_order))
      continue;
    const json& value = *it;
    if (value.is_null()) {
      out.erase(key);
      continue;
    }
    auto existing = out.find(key);
    if (value.is_object()) {
      if (value.contains("$patch") && value["$patch"] == "delete") {
        out.erase(key);
        continue;
      }
      out[key] = merge_map(existing != out.end() ? *existing : json::object(),
                           value);
      continue;
    }
    if (value.is_array() && existing != out.end() && existing->is_array()) {
      out[key] = merge_list(key, *existing, value);
      continue;
    }
    if (value.is_array()) {
      // A new list: directives inside it are dropped.
      out[key] = merge_list(key, json::array(), value);
      continue;
    }
    out[key] = value;
  }
  return out;
}

json merge_list(std::string_view field, const json& target, const json& patch) {
  json sample = !patch.empty() ? patch.front() : json();
  if (field == "finalizers") {
    json out = target;
    for (const auto& v : patch) {
      bool present = false;
      for (const auto& o : out)
        present = present || o == v;
      if (!present)
        out.push_back(v);
    }
    return out;
  }
  auto key = strategic_merge_key(field, sample);
  if (key.empty()) {
    // Atomic: the patch's list replaces, minus directive-only entries.
    json out = json::array();
    for (const auto& v : patch)
      if (!(v.is_object() && v.contains("$patch")))
        out.push_back(v);
    return out;
  }
  std::string k{key};
  // `$patch: replace` as a list element replaces the whole list.
  for (const auto& v : patch)
    if (v.is_object() && v.contains("$patch") && v["$patch"] == "replace") {
      json out = json::array();
      for (const auto& w : patch)
        if (!(w.is_object() && w.contains("$patch")))
          out.push_back(w);
      return out;
    }
  json out = target;
  for (const auto& v : patch) {
    if (!v.is_object() || !v.contains(k)) {
      out.push_back(v);
      continue;
    }
    auto found = out.end();
    for (auto it = out.begin(); it != out.end(); ++it)
      if (it->is_object() && it->contains(k) && (*it)[k] == v[k]) {
        found = it;
        break;
      }
    bool remove = v.contains("$patch") && v["$patch"] == "delete";
    if (remove) {
      if (found != out.end())
        out.erase(found);
      continue;
    }
    if (found != out.end())
      *found = merge_map(*found, v);
    else
      out.push_back(merge_map(json::object(), v));
  }
  return out;
}

} // namespace

std::string_view strategic_merge_key(std::string_view name,
                                     const json& sample) {
  if (name == "containers" || name == "initContainers"
      || name == "ephemeralContainers" || name == "env" || name == "volumes"
      || name == "imagePullSecrets")
    return "name";
  if (name == "volumeMounts")
    return "mountPath";
  if (name == "volumeDevices")
    return "devicePath";
  if (name == "conditions")
    return "type";
  if (name == "ownerReferences")
    return "uid";
  if (name == "hostAliases")
    return "ip";
  if (name == "ports") {
    if (sample.is_object() && sample.contains("containerPort"))
      return "containerPort";
    return "port";
  }
  return {};
}

json strategic_merge(const json& target, const json& patch) {
  auto out = merge_map(target, patch);
  return out.is_null() ? json::object() : out;
}

caf::expected<json> apply_json_patch(const json& target,
                                     std::string_view patch) {
  auto doc = parse_body(patch);
  if (!doc)
    return doc.error();
  if (!doc->is_array())
    return bad_request("json: cannot unmarshal " + std::string{doc->type_name()}
                       + " into Go value of type jsonpatch.Patch");
  for (const auto& op : *doc)
    if (!op.is_object())
      return bad_request("json: cannot unmarshal " + std::string{op.type_name()}
                         + " into Go value of type jsonpatch.Operation");
  if (doc->size() > max_json_patch_operations)
    return make_status_error(
        "patch",
        status{"RequestEntityTooLarge",
               413,
               "Request entity too large: The allowed maximum operations in a "
               "JSON patch is "
                   + std::to_string(max_json_patch_operations) + ", got "
                   + std::to_string(doc->size()),
               {}});
  try {
    return target.patch(*doc);
  } catch (const json::exception&) {
    return make_status_error("patch", invalid_patch_status());
  }
}

caf::expected<json> apply_merge_patch(const json& target,
                                      std::string_view patch) {
  auto doc = parse_body(patch);
  if (!doc)
    return doc.error();
  if (!doc->is_object())
    return bad_request("Invalid JSON Patch");
  json out = target;
  out.merge_patch(*doc);
  return out;
}

caf::expected<json> apply_strategic_merge_patch(const json& target,
                                                std::string_view patch) {
  auto doc = parse_body(patch);
  if (!doc)
    return doc.error();
  if (!doc->is_object())
    return bad_request("json: cannot unmarshal " + std::string{doc->type_name()}
                       + " into Go value of type map[string]interface {}");
  return strategic_merge(target, *doc);
}

} // namespace aiperf::k8s::sim
