#include "k8s/sim/store/apply.hpp"

#include "k8s/sim/schema/schema.hpp"
#include "k8s/sim/store/patch.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <vector>

namespace aiperf::k8s::sim {
namespace {

/// A field path as FieldsV1 spells its steps: "f:spec", `k:{"name":"c"}`,
/// `v:"x"`, and "." for a keyed list element itself.
using path = std::vector<std::string>;
using path_set = std::set<path>;

bool system_meta(const std::string& key) {
  return key == "name" || key == "namespace" || key == "uid"
         || key == "resourceVersion" || key == "generation"
         || key == "creationTimestamp" || key == "managedFields"
         || key == "selfLink" || key == "deletionTimestamp"
         || key == "deletionGracePeriodSeconds";
}

/// How a list merges: structured-merge-diff's list types.
struct list_rule {
  enum class kind { atomic, set, map };
  kind type = kind::atomic;
  std::vector<std::string> keys; // map: x-kubernetes-list-map-keys
};

/// The field names of `p`, list elements stepped through.
std::vector<std::string> field_names(const path& p) {
  std::vector<std::string> out;
  for (const auto& step : p)
    if (step.rfind("f:", 0) == 0)
      out.push_back(step.substr(2));
  return out;
}

/// The key of a map-list element as FieldsV1 spells it (fields sorted by
/// name, as structured-merge-diff sorts them), or null when the element has
/// none of the key fields.
json element_key(const list_rule& r, const json& e) {
  if (!e.is_object())
    return nullptr;
  std::vector<std::string> names = r.keys;
  std::sort(names.begin(), names.end());
  json k = json::object();
  for (const auto& n : names)
    if (e.contains(n))
      k[n] = e[n];
  return k.empty() ? json(nullptr) : k;
}

/// The rule for the list at `p`. A custom resource's schema decides outside
/// metadata (an undeclared list type is atomic); ObjectMeta and built-ins
/// follow their strategic merge keys, metadata.finalizers being a set. A
/// list whose elements do not fit its type is a leaf.
list_rule rule_for(const apply_request& req, const path& p, const json& list) {
  auto names = field_names(p);
  list_rule r;
  if (req.schema != nullptr && !(!names.empty() && names[0] == "metadata")) {
    auto s = list_semantics_at(*req.schema, names);
    if (s.type == "set")
      r.type = list_rule::kind::set;
    else if (s.type == "map" && !s.map_keys.empty())
      r = {list_rule::kind::map, s.map_keys};
  } else if (!names.empty() && names.back() == "finalizers") {
    r.type = list_rule::kind::set;
  } else if (!names.empty() && !list.empty()) {
    std::string key{strategic_merge_key(names.back(), list.front())};
    if (!key.empty())
      r = {list_rule::kind::map, {key}};
  }
  for (const auto& e : list) {
    bool fits
        = r.type == list_rule::kind::set
              ? !e.is_object() && !e.is_array() && !e.is_null()
              : r.type != list_rule::kind::map || !element_key(r, e).is_null();
    if (!fits)
      return {};
  }
  return r;
}

void collect(const apply_request& req, const json& v, path& p, path_set& out) {
  if (v.is_object()) {
    if (v.empty() && !p.empty()) {
      out.insert(p);
      return;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (p.empty() && (it.key() == "apiVersion" || it.key() == "kind"))
        continue;
      if (p.size() == 1 && p[0] == "f:metadata" && system_meta(it.key()))
        continue;
      p.push_back("f:" + it.key());
      collect(req, *it, p, out);
      p.pop_back();
    }
    return;
  }
  if (v.is_array() && !v.empty()) {
    auto rule = rule_for(req, p, v);
    if (rule.type == list_rule::kind::set) {
      for (const auto& e : v) {
        p.push_back("v:" + e.dump());
        out.insert(p);
        p.pop_back();
      }
      return;
    }
    if (rule.type == list_rule::kind::map) {
      for (const auto& e : v) {
        p.push_back("k:" + element_key(rule, e).dump());
        p.push_back(".");
        out.insert(p);
        p.pop_back();
        collect(req, e, p, out);
        p.pop_back();
      }
      return;
    }
  }
  if (!p.empty())
    out.insert(p);
}

/// `cfg` merged into `live` at `p`: maps field by field (null removes),
/// set and map lists element by element (live order, new elements
/// appended), anything else replaced.
json merge(const apply_request& req, const json& live, const json& cfg,
           path& p) {
  if (cfg.is_object()) {
    json out = live.is_object() ? live : json::object();
    for (auto it = cfg.begin(); it != cfg.end(); ++it) {
      if (it->is_null()) {
        out.erase(it.key());
        continue;
      }
      p.push_back("f:" + it.key());
      auto found = out.find(it.key());
      json merged = merge(req, found != out.end() ? *found : json(), *it, p);
      p.pop_back();
      out[it.key()] = std::move(merged);
    }
    return out;
  }
  if (!cfg.is_array() || !live.is_array())
    return cfg;
  auto rule = rule_for(req, p, cfg);
  if (rule.type == list_rule::kind::atomic)
    return cfg;
  json out = live;
  for (const auto& e : cfg) {
    if (rule.type == list_rule::kind::set) {
      if (std::find(out.begin(), out.end(), e) == out.end())
        out.push_back(e);
      continue;
    }
    json key = element_key(rule, e);
    auto found = std::find_if(out.begin(), out.end(), [&](const json& l) {
      return element_key(rule, l) == key;
    });
    if (found != out.end())
      *found = merge(req, *found, e, p);
    else
      out.push_back(merge(req, json(), e, p));
  }
  return out;
}

/// The node `p` names in `v`, or null.
const json* at(const json& v, const path& p) {
  const json* cur = &v;
  for (const auto& step : p) {
    if (step == ".")
      return cur;
    if (step.rfind("f:", 0) == 0) {
      if (!cur->is_object())
        return nullptr;
      auto it = cur->find(step.substr(2));
      if (it == cur->end())
        return nullptr;
      cur = &*it;
    } else if (step.rfind("k:", 0) == 0) {
      if (!cur->is_array())
        return nullptr;
      json want = json::parse(step.substr(2));
      const json* found = nullptr;
      for (const auto& e : *cur) {
        bool all = e.is_object();
        for (auto it = want.begin(); all && it != want.end(); ++it)
          all = e.contains(it.key()) && e[it.key()] == *it;
        if (all) {
          found = &e;
          break;
        }
      }
      if (found == nullptr)
        return nullptr;
      cur = found;
    } else if (step.rfind("v:", 0) == 0) {
      if (!cur->is_array())
        return nullptr;
      json want = json::parse(step.substr(2));
      auto it = std::find(cur->begin(), cur->end(), want);
      if (it == cur->end())
        return nullptr;
      cur = &*it;
    }
  }
  return cur;
}

/// Removes the node `p` names from `v` (nothing if absent).
void erase(json& v, const path& p) {
  if (p.empty())
    return;
  path parent_path(p.begin(), p.end() - 1);
  std::string last = p.back();
  if (last == ".") {
    if (parent_path.empty())
      return;
    last = parent_path.back();
    parent_path.pop_back();
  }
  json* parent = const_cast<json*>(at(v, parent_path));
  if (parent == nullptr)
    return;
  if (last.rfind("f:", 0) == 0 && parent->is_object()) {
    parent->erase(last.substr(2));
    return;
  }
  if (parent->is_array()) {
    path self = parent_path;
    self.push_back(last);
    const json* node = at(v, self);
    for (auto it = parent->begin(); it != parent->end(); ++it)
      if (&*it == node) {
        parent->erase(it);
        return;
      }
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
  return out;
}

void from_fields_v1(const json& v, path& p, path_set& out) {
  if (!v.is_object())
    return;
  for (auto it = v.begin(); it != v.end(); ++it) {
    p.push_back(it.key());
    if (it->is_object() && it->empty())
      out.insert(p);
    else
      from_fields_v1(*it, p, out);
    p.pop_back();
  }
}

std::string path_text(const path& p) {
  std::string out;
  for (const auto& step : p) {
    if (step == ".")
      continue;
    if (step.rfind("f:", 0) == 0) {
      out.push_back('.');
      out.append(step, 2, std::string::npos);
    } else if (step.rfind("k:", 0) == 0) {
      json keys = json::parse(step.substr(2));
      out += "[";
      bool first = true;
      for (auto it = keys.begin(); it != keys.end(); ++it) {
        if (!first)
          out += ",";
        first = false;
        out.append(it.key());
        out.push_back('=');
        out.append(it->dump());
      }
      out += "]";
    } else if (step.rfind("v:", 0) == 0) {
      out.append("[=");
      out.append(step, 2, std::string::npos);
      out.push_back(']');
    }
  }
  return out;
}

/// A manager as conflicts name it (managedfields printManager): quoted,
/// its subresource, and for an Update its API version and time.
std::string manager_label(const json& entry) {
  std::string out = json(entry.value("manager", "")).dump();
  if (auto sub = entry.value("subresource", ""); !sub.empty())
    out += " with subresource " + json(sub).dump();
  if (entry.value("operation", "") == "Update") {
    out += " using " + entry.value("apiVersion", "");
    if (auto t = entry.value("time", ""); !t.empty())
      out += " at " + t;
  }
  return out;
}

bool in_status(const path& p) {
  return !p.empty() && p.front() == "f:status";
}

} // namespace

caf::expected<json> server_side_apply(const json& live, const json& config,
                                      const apply_request& req) {
  json cfg = config;
  if (req.skip_status)
    cfg.erase("status");
  path_set wanted;
  {
    path p;
    collect(req, cfg, p, wanted);
  }
  if (req.only_status)
    for (auto it = wanted.begin(); it != wanted.end();)
      it = in_status(*it) ? std::next(it) : wanted.erase(it);
  // Who owns what now.
  struct owner {
    json entry;
    path_set fields;
    bool mine = false;
  };
  std::vector<owner> owners;
  json managed = live.contains("metadata")
                     ? live["metadata"].value("managedFields", json::array())
                     : json::array();
  for (const auto& e : managed) {
    owner o;
    o.entry = e;
    path p;
    from_fields_v1(e.value("fieldsV1", json::object()), p, o.fields);
    o.mine = e.value("manager", "") == req.manager
             && e.value("operation", "") == "Apply";
    owners.push_back(std::move(o));
  }
  // Conflicts: a leaf another manager owns that this apply changes.
  std::map<std::string, std::vector<path>> conflicts;
  std::size_t conflict_count = 0;
  for (auto& o : owners) {
    if (o.mine)
      continue;
    std::vector<path> taken;
    for (const auto& p : wanted) {
      if (p.back() == "." || o.fields.count(p) == 0)
        continue;
      const json* now = at(live, p);
      const json* next = at(cfg, p);
      if (now != nullptr && next != nullptr && *now == *next)
        continue;
      taken.push_back(p);
    }
    if (taken.empty())
      continue;
    if (req.force) {
      for (const auto& p : taken)
        o.fields.erase(p);
      continue;
    }
    auto& list = conflicts[manager_label(o.entry)];
    list.insert(list.end(), taken.begin(), taken.end());
    conflict_count += taken.size();
  }
  if (conflict_count > 0) {
    status st{"Conflict", 409, "", {}};
    for (const auto& [manager, paths] : conflicts)
      for (const auto& p : paths)
        st.details.causes.push_back(
            {"FieldManagerConflict", "conflict with " + manager, path_text(p)});
    if (conflict_count == 1) {
      st.message = "Apply failed with 1 conflict: conflict with "
                   + conflicts.begin()->first + ": "
                   + path_text(conflicts.begin()->second.front());
    } else {
      std::string body;
      for (const auto& [manager, paths] : conflicts) {
        if (!body.empty())
          body += "\n";
        body += "conflicts with " + manager + ":";
        for (const auto& p : paths)
          body += "\n- " + path_text(p);
      }
      st.message = "Apply failed with " + std::to_string(conflict_count)
                   + " conflicts: " + body;
    }
    return make_status_error("apply", std::move(st));
  }
  // Merge, then remove what this manager set before and nobody keeps.
  json result;
  {
    path p;
    result = merge(req, live, cfg, p);
  }
  path_set before;
  for (const auto& o : owners)
    if (o.mine)
      before = o.fields;
  std::vector<path> dropped;
  for (const auto& p : before) {
    if (wanted.count(p) != 0)
      continue;
    bool kept = false;
    for (const auto& o : owners)
      if (!o.mine)
        for (const auto& q : o.fields)
          kept = kept
                 || (q.size() >= p.size() - (p.back() == "." ? 1 : 0)
                     && std::equal(p.begin(),
                                   p.end() - (p.back() == "." ? 1 : 0),
                                   q.begin()));
    if (!kept)
      dropped.push_back(p);
  }
  std::sort(dropped.begin(), dropped.end(),
            [](const path& a, const path& b) { return a.size() > b.size(); });
  for (const auto& p : dropped)
    erase(result, p);
  // managedFields: this manager's Apply entry, the others as left.
  bool unchanged = before == wanted && [&] {
    json a = result, b = live;
    if (a.contains("metadata"))
      a["metadata"].erase("managedFields");
    if (b.contains("metadata"))
      b["metadata"].erase("managedFields");
    return a == b;
  }();
  if (unchanged && !req.force)
    return live;
  json entries = json::array();
  bool placed = false;
  for (auto& o : owners) {
    if (o.mine) {
      placed = true;
      json e = {
          {"manager", req.manager},        {"operation", "Apply"},
          {"apiVersion", req.api_version}, {"time", req.time},
          {"fieldsType", "FieldsV1"},      {"fieldsV1", to_fields_v1(wanted)}};
      if (req.only_status)
        e["subresource"] = "status";
      entries.push_back(std::move(e));
      continue;
    }
    if (o.fields.empty())
      continue;
    o.entry["fieldsV1"] = to_fields_v1(o.fields);
    entries.push_back(o.entry);
  }
  if (!placed) {
    json e
        = {{"manager", req.manager},        {"operation", "Apply"},
           {"apiVersion", req.api_version}, {"time", req.time},
           {"fieldsType", "FieldsV1"},      {"fieldsV1", to_fields_v1(wanted)}};
    if (req.only_status)
      e["subresource"] = "status";
    entries.push_back(std::move(e));
  }
  result["metadata"]["managedFields"] = std::move(entries);
  return result;
}

} // namespace aiperf::k8s::sim
