#include "k8s/sim/apps/detail.hpp"

#include "k8s/object/time.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace aiperf::k8s::sim {

std::string pod_template_hash(const json& pod_template,
                              std::int64_t collision_count) {
  // Keys sorted, so that the same template read back in another field order
  // hashes alike.
  auto canonical = nlohmann::json::parse(pod_template.dump()).dump();
  std::uint32_t h = 2166136261u; // FNV-32a, as upstream's ComputeHash
  auto mix = [&h](unsigned char c) {
    h ^= c;
    h *= 16777619u;
  };
  for (unsigned char c : canonical)
    mix(c);
  if (collision_count != 0) {
    auto n = static_cast<std::uint32_t>(collision_count);
    for (int i = 0; i < 8; ++i) // 4 little-endian bytes, 4 zero bytes
      mix(i < 4 ? static_cast<unsigned char>(n >> (8 * i)) : 0);
  }
  // k8s.io/apimachinery/pkg/util/rand SafeEncodeString of the decimal value.
  static constexpr char alphanums[] = "bcdfghjklmnpqrstvwxz2456789";
  auto digits = std::to_string(h);
  std::string out;
  for (unsigned char c : digits)
    out.push_back(alphanums[c % (sizeof(alphanums) - 1)]);
  return out;
}

} // namespace aiperf::k8s::sim

namespace aiperf::k8s::sim::apps_detail {

namespace {

// A resourceVersion as a number, or -1 when it is not one.
long long rv_number(const json& obj) {
  auto rv = meta(obj, "resourceVersion");
  if (rv.empty())
    return -1;
  char* end = nullptr;
  auto n = std::strtoll(rv.c_str(), &end, 10);
  return end != nullptr && *end == '\0' ? n : -1;
}

} // namespace

std::size_t watch_cache::add(std::string group, std::string version,
                             std::string resource) {
  watched_type t;
  t.ref.group = std::move(group);
  t.ref.version = std::move(version);
  t.ref.resource = std::move(resource);
  types.push_back(std::move(t));
  return types.size() - 1;
}

std::optional<std::size_t> watch_cache::by_watch(std::uint64_t id) const {
  if (id == 0)
    return std::nullopt;
  for (std::size_t i = 0; i < types.size(); ++i)
    if (types[i].watch_id == id)
      return i;
  return std::nullopt;
}

std::optional<std::size_t>
watch_cache::by_type_key(const std::string& key) const {
  for (std::size_t i = 0; i < types.size(); ++i)
    if (type_key(types[i].ref) == key)
      return i;
  return std::nullopt;
}

void watch_cache::put(std::size_t type, const json& obj) {
  auto key = key_of(obj);
  if (key.empty())
    return;
  auto uid = meta(obj, "uid");
  if (!uid.empty() && deleted_uids_.count(uid))
    return; // an event older than the delete we saw succeed
  auto& objects = types[type].objects;
  auto it = objects.find(key);
  if (it != objects.end()) {
    if (meta(it->second, "uid") == uid && rv_number(it->second) >= 0
        && rv_number(obj) >= 0 && rv_number(obj) <= rv_number(it->second))
      return; // not newer than what a write reply already showed
    json before = it->second;
    it->second = obj;
    if (on_change)
      on_change(type, key, &before, &it->second);
    return;
  }
  auto& stored = objects[key] = obj;
  if (on_change)
    on_change(type, key, nullptr, &stored);
}

void watch_cache::remove(std::size_t type, const json& obj) {
  auto key = key_of(obj);
  auto uid = meta(obj, "uid");
  if (!uid.empty())
    deleted_uids_.insert(uid);
  auto& objects = types[type].objects;
  auto it = objects.find(key);
  if (it == objects.end() || (!uid.empty() && meta(it->second, "uid") != uid))
    return;
  json before = std::move(it->second);
  objects.erase(it);
  if (on_change)
    on_change(type, key, &before, nullptr);
}

void watch_cache::replace(std::size_t type, const json& items) {
  std::map<std::string, json> fresh;
  if (items.is_array())
    for (const auto& item : items)
      if (item.is_object() && !key_of(item).empty())
        fresh[key_of(item)] = item;
  auto& objects = types[type].objects;
  std::vector<json> gone;
  for (const auto& [key, obj] : objects)
    if (!fresh.count(key))
      gone.push_back(obj);
  for (const auto& obj : gone) {
    auto key = key_of(obj);
    json before = objects[key];
    objects.erase(key);
    if (on_change)
      on_change(type, key, &before, nullptr);
  }
  for (auto& [key, obj] : fresh)
    put(type, obj);
}

const json* watch_cache::find(std::size_t type, const std::string& key) const {
  auto& objects = types[type].objects;
  auto it = objects.find(key);
  return it == objects.end() ? nullptr : &it->second;
}

std::string key_of(const json& obj) {
  auto name = meta(obj, "name");
  if (name.empty())
    return {};
  auto ns = meta(obj, "namespace");
  return ns.empty() ? name : ns + "/" + name;
}

std::string type_key(const resource_ref& ref) {
  return ref.group + "/" + ref.version + "/" + ref.resource;
}

std::optional<json> parse(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

std::string meta(const json& obj, const char* field) {
  if (!obj.is_object() || !obj.contains("metadata")
      || !obj["metadata"].is_object())
    return {};
  const auto& m = obj["metadata"];
  auto it = m.find(field);
  return it != m.end() && it->is_string() ? it->get<std::string>()
                                          : std::string{};
}

bool being_deleted(const json& obj) {
  return !meta(obj, "deletionTimestamp").empty();
}

std::string controller_uid(const json& obj, const char* kind) {
  if (!obj.is_object() || !obj.contains("metadata"))
    return {};
  const auto& m = obj["metadata"];
  if (!m.is_object() || !m.contains("ownerReferences")
      || !m["ownerReferences"].is_array())
    return {};
  for (const auto& ref : m["ownerReferences"])
    if (ref.is_object() && ref.value("controller", false)
        && ref.value("kind", "") == kind)
      return ref.value("uid", "");
  return {};
}

json controller_ref(const json& owner, const char* api_version,
                    const char* kind) {
  return json{{"apiVersion", api_version},   {"kind", kind},
              {"name", meta(owner, "name")}, {"uid", meta(owner, "uid")},
              {"controller", true},          {"blockOwnerDeletion", true}};
}

bool pod_ready(const json& pod) {
  if (!pod.contains("status") || !pod["status"].is_object())
    return false;
  const auto& conditions = pod["status"].value("conditions", json::array());
  if (!conditions.is_array())
    return false;
  for (const auto& c : conditions)
    if (c.is_object() && c.value("type", "") == "Ready")
      return c.value("status", "") == "True";
  return false;
}

bool pod_terminal(const json& pod) {
  if (!pod.contains("status") || !pod["status"].is_object())
    return false;
  auto phase = pod["status"].value("phase", "");
  return phase == "Succeeded" || phase == "Failed";
}

wall_clock::wall_clock(caf::actor_clock::time_point start)
    : base_unix_ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count()),
      start_(start) {}

std::int64_t wall_clock::unix_seconds(caf::actor_clock::time_point now) const {
  auto elapsed
      = std::chrono::duration_cast<std::chrono::nanoseconds>(now - start_)
            .count();
  return (base_unix_ns_ + elapsed) / 1'000'000'000;
}

request event_request(const json& involved, const std::string& api_version,
                      const std::string& kind, const std::string& type,
                      const std::string& reason, const std::string& message,
                      const std::string& component, std::int64_t unix_seconds) {
  auto ns = meta(involved, "namespace");
  if (ns.empty())
    ns = "default"; // cluster-scoped objects' events live in default
  auto when = format_time(unix_seconds);
  // Named as client-go's recorder names them: <object>.<nanoseconds, hex>;
  // the counter keeps events of one simulated instant apart.
  static std::atomic<std::uint64_t> sequence{0};
  char suffix[32];
  std::snprintf(suffix, sizeof(suffix), "%llx",
                static_cast<unsigned long long>(
                    static_cast<std::uint64_t>(unix_seconds) * 1'000'000'000ull
                    + sequence.fetch_add(1) % 1'000'000'000ull));
  json ev
      = {{"apiVersion", "v1"},
         {"kind", "Event"},
         {"metadata",
          {{"name", meta(involved, "name") + "." + suffix}, {"namespace", ns}}},
         {"involvedObject",
          {{"apiVersion", api_version},
           {"kind", kind},
           {"name", meta(involved, "name")},
           {"uid", meta(involved, "uid")},
           {"resourceVersion", meta(involved, "resourceVersion")}}},
         {"reason", reason},
         {"message", message},
         {"source", {{"component", component}}},
         {"firstTimestamp", when},
         {"lastTimestamp", when},
         {"count", 1},
         {"type", type}};
  if (!meta(involved, "namespace").empty())
    ev["involvedObject"]["namespace"] = ns;
  return make_request(verb::create,
                      resource_ref{"", "v1", "events", ns, {}, {}}, ev);
}

request make_request(verb v, resource_ref ref, const json& body) {
  request r;
  r.verb = v;
  r.ref = std::move(ref);
  if (!body.is_null())
    r.body = body.dump();
  return r;
}

caf::timespan failure_backoff::next(const std::string& key) {
  constexpr auto base = std::chrono::milliseconds{5};
  constexpr auto cap = std::chrono::seconds{1000};
  int n = failures_[key]++;
  if (n >= 18) // 5 ms * 2^18 > 1000 s
    return cap;
  return std::min<caf::timespan>(base * (std::int64_t{1} << n), cap);
}

} // namespace aiperf::k8s::sim::apps_detail
