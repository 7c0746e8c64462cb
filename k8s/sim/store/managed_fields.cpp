#include "k8s/sim/store/managed_fields.hpp"

#include "k8s/sim/store/patch.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace aiperf::k8s::sim {
namespace {

/// A field path in FieldsV1 steps ("f:spec", `k:{"name":"c"}`, `v:"x"`);
/// a node that is a member and has members below it is written with ".".
using path = std::vector<std::string>;
using path_set = std::set<path>;

struct node {
  const json* value = nullptr;
  bool leaf = true;
};
using node_map = std::map<path, node>;

/// Every member node of `v` below the root: scalars, atomic lists and empty
/// maps are leaves; maps and keyed lists are members with members below.
void walk(const json& v, path& p, std::string_view field, node_map& out) {
  bool leaf = true;
  if (v.is_object() && !v.empty()) {
    leaf = false;
    for (auto it = v.begin(); it != v.end(); ++it) {
      p.push_back("f:" + it.key());
      walk(*it, p, it.key(), out);
      p.pop_back();
    }
  } else if (v.is_array() && !v.empty()) {
    if (field == "finalizers" && p.size() == 2 && p[0] == "f:metadata") {
      leaf = false;
      for (const auto& e : v) {
        p.push_back("v:" + e.dump());
        out[p] = node{&e, true};
        p.pop_back();
      }
    } else {
      std::string key{strategic_merge_key(field, v.front())};
      bool keyed = !key.empty();
      for (const auto& e : v)
        keyed = keyed && e.is_object() && e.contains(key);
      if (keyed) {
        leaf = false;
        for (const auto& e : v) {
          p.push_back("k:" + json{{key, e[key]}}.dump());
          walk(e, p, "", out);
          p.pop_back();
        }
      }
    }
  }
  if (!p.empty())
    out[p] = node{&v, leaf};
}

bool stripped(const path& p) {
  static const std::set<std::string> meta{"f:name",
                                          "f:namespace",
                                          "f:creationTimestamp",
                                          "f:selfLink",
                                          "f:uid",
                                          "f:clusterName",
                                          "f:generation",
                                          "f:managedFields",
                                          "f:resourceVersion",
                                          "f:deletionTimestamp",
                                          "f:deletionGracePeriodSeconds"};
  if (p.empty())
    return true;
  if (p[0] == "f:apiVersion" || p[0] == "f:kind")
    return true;
  if (p[0] == "f:metadata")
    return p.size() == 1 || meta.count(p[1]) != 0;
  return false;
}

/// The nodes a built-in's empty typed object already has: Go structs that
/// are always encoded, so the write that fills them does not create them.
json empty_object_of(const json& next, bool custom) {
  json skel = json::object();
  if (custom || !next.is_object())
    return skel;
  for (const char* part : {"spec", "status"})
    if (next.contains(part) && next[part].is_object())
      skel[part] = json::object();
  const json spec = next.value("spec", json::object());
  if (!spec.is_object())
    return skel;
  if (spec.contains("containers"))
    skel["spec"]["containers"] = json::array();
  if (spec.contains("strategy") && spec["strategy"].is_object())
    skel["spec"]["strategy"] = json::object();
  if (spec.contains("template") && spec["template"].is_object()) {
    json tmpl = json::object();
    tmpl["metadata"] = json::object();
    tmpl["spec"] = json{{"containers", json::array()}};
    skel["spec"]["template"] = std::move(tmpl);
  }
  return skel;
}

void from_fields_v1(const json& v, path& p, path_set& out) {
  if (!v.is_object())
    return;
  if (!p.empty() && (v.empty() || v.contains(".")))
    out.insert(p);
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (it.key() == ".")
      continue;
    p.push_back(it.key());
    from_fields_v1(*it, p, out);
    p.pop_back();
  }
}

json to_fields_v1(const path_set& set) {
  json out = json::object();
  for (const auto& p : set) {
    json* cur = &out;
    for (const auto& step : p) {
      if (!cur->contains(step))
        (*cur)[step] = json::object();
      cur = &(*cur)[step];
    }
  }
  // A member with members below it is marked ".".
  for (const auto& p : set) {
    json* cur = &out;
    for (const auto& step : p)
      cur = &(*cur)[step];
    if (!cur->empty() && !cur->contains(".")) {
      json marked = json::object();
      marked["."] = json::object();
      for (auto it = cur->begin(); it != cur->end(); ++it)
        marked[it.key()] = it.value();
      *cur = std::move(marked);
    }
  }
  return out;
}

// FieldsV1 keys sort as Go sorts a map's keys when it encodes one.
json sorted_keys(const json& v) {
  if (!v.is_object())
    return v;
  std::vector<std::string> keys;
  for (auto it = v.begin(); it != v.end(); ++it)
    keys.push_back(it.key());
  std::sort(keys.begin(), keys.end());
  json out = json::object();
  for (const auto& k : keys)
    out[k] = sorted_keys(v[k]);
  return out;
}

json entry(const std::string& manager, const std::string& api_version,
           const std::string& time, const path_set& fields,
           bool status_subresource) {
  json e = {{"manager", manager},
            {"operation", "Update"},
            {"apiVersion", api_version},
            {"time", time},
            {"fieldsType", "FieldsV1"},
            {"fieldsV1", sorted_keys(to_fields_v1(fields))}};
  if (status_subresource)
    e["subresource"] = "status";
  return e;
}

} // namespace

std::string manager_of(std::string_view field_manager,
                       std::string_view user_agent) {
  if (!field_manager.empty())
    return std::string{field_manager};
  std::string out;
  for (char c : user_agent.substr(0, user_agent.find('/'))) {
    if (!std::isprint(static_cast<unsigned char>(c)))
      continue;
    if (out.size() + 1 > 128)
      break;
    out += c;
  }
  return out;
}

json update_managed_fields(const json& live, const json& next,
                           const update_request& req) {
  json base = live.is_object() && live.contains("metadata")
                  ? live["metadata"].value("managedFields", json::array())
                  : json::array();
  if (next.contains("metadata") && next["metadata"].is_object()) {
    auto sent = next["metadata"].find("managedFields");
    if (sent != next["metadata"].end() && sent->is_array()) {
      if (sent->empty())
        base = json::array(); // an explicit [] resets them
      else if (*sent != base)
        base = *sent;
    }
  }
  if (!base.is_array())
    base = json::array();
  if (req.manager.empty())
    return base;
  // Compare the old object (or the empty one of the kind) with the new.
  const json old_object
      = live.is_object() ? live : empty_object_of(next, req.custom);
  node_map before, after;
  {
    path p;
    walk(old_object, p, "", before);
  }
  {
    path p;
    walk(next, p, "", after);
  }
  auto counted = [&](const path& p) {
    if (stripped(p))
      return false;
    bool status = p[0] == "f:status";
    if (req.skip_status && status)
      return false;
    if (req.only_status && !status)
      return false;
    return true;
  };
  path_set added, removed, modified;
  for (const auto& [p, n] : after) {
    if (!counted(p))
      continue;
    auto it = before.find(p);
    if (it == before.end())
      added.insert(p);
    else if (n.leaf && it->second.leaf && *n.value != *it->second.value)
      modified.insert(p);
  }
  for (const auto& [p, n] : before)
    if (counted(p) && after.count(p) == 0)
      removed.insert(p);
  path_set changed = added;
  changed.insert(modified.begin(), modified.end());
  // Every manager loses what this write changed or removed; the writer's
  // own Update entry gains what it changed.
  struct owned {
    json entry;
    path_set fields;
    std::size_t had = 0; // members before this write
  };
  std::vector<owned> entries;
  std::size_t mine = std::string::npos;
  for (const auto& e : base) {
    if (!e.is_object())
      continue;
    owned o;
    o.entry = e;
    path p;
    from_fields_v1(e.value("fieldsV1", json::object()), p, o.fields);
    o.had = o.fields.size();
    for (const auto& q : changed)
      o.fields.erase(q);
    for (const auto& q : removed)
      o.fields.erase(q);
    bool is_mine
        = e.value("manager", "") == req.manager
          && e.value("operation", "") == "Update"
          && (e.value("subresource", "") == "status") == req.only_status;
    if (is_mine)
      mine = entries.size();
    entries.push_back(std::move(o));
  }
  if (!changed.empty()) {
    if (mine == std::string::npos) {
      mine = entries.size();
      entries.push_back({json(), {}});
    }
    auto& o = entries[mine];
    o.fields.insert(changed.begin(), changed.end());
    o.entry = entry(req.manager, req.api_version, req.time, o.fields,
                    req.only_status);
  }
  json out = json::array();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto& o = entries[i];
    if (o.fields.empty())
      continue;
    bool rebuilt = i == mine && !changed.empty();
    if (!rebuilt && o.fields.size() != o.had)
      o.entry["fieldsV1"] = sorted_keys(to_fields_v1(o.fields));
    out.push_back(std::move(o.entry));
  }
  // sortEncodedManagedFields: operation, time, manager, apiVersion,
  // subresource.
  std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
    auto key = [](const json& e) {
      return std::make_tuple(e.value("operation", ""), e.value("time", ""),
                             e.value("manager", ""), e.value("apiVersion", ""),
                             e.value("subresource", ""));
    };
    return key(a) < key(b);
  });
  return out;
}

} // namespace aiperf::k8s::sim
