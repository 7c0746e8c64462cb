#include "k8s/sim/jobs/engine.hpp"

#include "k8s/errors/errors.hpp"
#include "k8s/object/time.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <functional>

namespace aiperf::k8s::sim::jobs_detail {

namespace {

const json& empty_object() {
  static const json e = json::object();
  return e;
}

constexpr auto relist_delay = std::chrono::seconds{1};

std::optional<std::int64_t> rv_number(const json& o) {
  auto rv = str(obj(o, "metadata"), "resourceVersion");
  std::int64_t n = 0;
  auto [p, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), n);
  if (ec != std::errc{} || p != rv.data() + rv.size())
    return std::nullopt;
  return n;
}

std::optional<json> parse(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

} // namespace

// ---- JSON helpers ---------------------------------------------------------

std::string str(const json& j, const char* a) {
  if (!j.is_object())
    return {};
  auto it = j.find(a);
  return it != j.end() && it->is_string() ? it->get<std::string>()
                                          : std::string{};
}

std::string str(const json& j, const char* a, const char* b) {
  return str(obj(j, a), b);
}

std::int64_t num(const json& j, const char* a, std::int64_t def) {
  if (!j.is_object())
    return def;
  auto it = j.find(a);
  if (it == j.end() || !it->is_number())
    return def;
  return it->is_number_integer() ? it->get<std::int64_t>()
                                 : static_cast<std::int64_t>(it->get<double>());
}

const json& obj(const json& j, const char* a) {
  if (!j.is_object())
    return empty_object();
  auto it = j.find(a);
  if (it == j.end() || !(it->is_object() || it->is_array()))
    return empty_object();
  return *it;
}

bool has(const json& j, const char* a) {
  return j.is_object() && j.contains(a) && !j[a].is_null();
}

bool flag(const json& j, const char* a, bool def) {
  if (!j.is_object())
    return def;
  auto it = j.find(a);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : def;
}

std::string name_of(const json& o) {
  return str(obj(o, "metadata"), "name");
}
std::string namespace_of(const json& o) {
  return str(obj(o, "metadata"), "namespace");
}
std::string uid_of(const json& o) {
  return str(obj(o, "metadata"), "uid");
}
std::string key_of(const json& o) {
  auto ns = namespace_of(o);
  return ns.empty() ? name_of(o) : ns + "/" + name_of(o);
}

bool being_deleted(const json& o) {
  return has(obj(o, "metadata"), "deletionTimestamp");
}

namespace {
const json* controller_ref(const json& o, const char* kind) {
  const auto& refs = obj(obj(o, "metadata"), "ownerReferences");
  if (!refs.is_array())
    return nullptr;
  for (const auto& r : refs)
    if (flag(r, "controller") && str(r, "kind") == kind)
      return &r;
  return nullptr;
}
} // namespace

std::string controller_uid(const json& o, const char* kind) {
  const auto* r = controller_ref(o, kind);
  return r ? str(*r, "uid") : std::string{};
}

std::string controller_name(const json& o, const char* kind) {
  const auto* r = controller_ref(o, kind);
  return r ? str(*r, "name") : std::string{};
}

json owner_reference(const json& owner, const char* api_version,
                     const char* kind) {
  return json{{"apiVersion", api_version}, {"kind", kind},
              {"name", name_of(owner)},    {"uid", uid_of(owner)},
              {"controller", true},        {"blockOwnerDeletion", true}};
}

const json* condition(const json& o, const std::string& type) {
  const auto& conds = obj(obj(o, "status"), "conditions");
  if (!conds.is_array())
    return nullptr;
  for (const auto& c : conds)
    if (str(c, "type") == type)
      return &c;
  return nullptr;
}

bool condition_true(const json& o, const std::string& type) {
  const auto* c = condition(o, type);
  return c != nullptr && str(*c, "status") == "True";
}

bool same(const json& a, const json& b) {
  return nlohmann::json::parse(a.dump()) == nlohmann::json::parse(b.dump());
}

request make_request(verb v, resource_ref ref, const json& body) {
  request r;
  r.verb = v;
  r.ref = std::move(ref);
  if (!body.is_null())
    r.body = body.dump();
  return r;
}

request delete_request(resource_ref ref, const std::string& uid,
                       const std::string& policy) {
  json options = {{"kind", "DeleteOptions"},
                  {"apiVersion", "v1"},
                  {"propagationPolicy", policy},
                  {"preconditions", {{"uid", uid}}}};
  return make_request(verb::remove, std::move(ref), options);
}

// ---- the engine -----------------------------------------------------------

engine::engine(controller_ptr self, api_actor api, jobs_config cfg,
               std::vector<resource_ref> refs, mapper map, reconciler rec,
               std::string component)
    : self_(self), api_(std::move(api)), cfg_(cfg), map_(std::move(map)),
      reconcile_(std::move(rec)), component_(std::move(component)),
      started_(self->clock().now()) {
  for (auto& r : refs)
    resources_.push_back(watched{std::move(r), 0, {}});
  base_unix_ = cfg_.start_unix_seconds;
  if (base_unix_ == 0)
    base_unix_ = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
}

std::int64_t engine::now_unix() const {
  return base_unix_
         + std::chrono::duration_cast<std::chrono::seconds>(self_->clock().now()
                                                            - started_)
               .count();
}

std::string engine::now_text() const {
  return format_time(now_unix());
}

std::optional<std::int64_t> engine::unix_of(const std::string& text) {
  auto ns = parse_time(text);
  if (!ns)
    return std::nullopt;
  return *ns / 1'000'000'000;
}

const json* engine::find(std::size_t which, const std::string& key) const {
  const auto& m = resources_[which].objects;
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

jobs_controller_actor::behavior_type engine::behavior() {
  return {
      [this](events_atom, std::uint64_t id, std::vector<watch_event>& evs) {
        on_events(id, evs);
      },
      [this](watch_end_atom, std::uint64_t id, caf::error&) { on_end(id); },
      [this](jobs_relist_atom, std::uint64_t which) {
        if (which < resources_.size())
          list(static_cast<std::size_t>(which));
      },
      [this](jobs_tick_atom) { tick(); },
  };
}

void engine::start() {
  for (std::size_t i = 0; i < resources_.size(); ++i)
    list(i);
}

void engine::relist_later(std::size_t which) {
  self_->delayed_send(self_, relist_delay, jobs_relist_atom::value,
                      static_cast<std::uint64_t>(which));
}

void engine::list(std::size_t which) {
  auto& res = resources_[which];
  if (res.watch_id != 0) {
    self_->send(api_, unwatch_atom::value, res.watch_id);
    res.watch_id = 0;
  }
  self_->request(api_, cfg_.request_timeout, make_request(verb::list, res.ref))
      .then(
          [this, which](response& answer) {
            auto doc = parse(answer.body);
            if (!doc || !doc->is_object()) {
              relist_later(which);
              return;
            }
            auto& r = resources_[which];
            std::map<std::string, json> fresh;
            for (auto& item : obj(*doc, "items"))
              if (item.is_object())
                fresh[key_of(item)] = item;
            // What vanished while no watch ran is a deletion too.
            std::vector<json> gone;
            for (auto& [k, o] : r.objects)
              if (!fresh.count(k))
                gone.push_back(o);
            r.objects = std::move(fresh);
            for (const auto& o : gone)
              for (const auto& k : map_(which, o))
                enqueue(k);
            for (const auto& [k, o] : r.objects)
              for (const auto& key : map_(which, o))
                enqueue(key);
            request w = make_request(verb::watch, r.ref);
            w.resource_version = str(obj(*doc, "metadata"), "resourceVersion");
            w.allow_watch_bookmarks = true;
            auto sink = caf::actor_cast<watch_sink_actor>(self_);
            self_
                ->request(api_, cfg_.request_timeout, watch_atom::value,
                          std::move(w), sink)
                .then(
                    [this, which](std::uint64_t id) {
                      resources_[which].watch_id = id;
                    },
                    [this, which](caf::error&) { relist_later(which); });
          },
          [this, which](caf::error&) { relist_later(which); });
}

void engine::on_events(std::uint64_t id, std::vector<watch_event>& events) {
  for (std::size_t which = 0; which < resources_.size(); ++which) {
    if (resources_[which].watch_id != id || id == 0)
      continue;
    for (const auto& ev : events) {
      if (ev.type == "ERROR") {
        resources_[which].watch_id = 0;
        list(which);
        return;
      }
      if (ev.type != "ADDED" && ev.type != "MODIFIED" && ev.type != "DELETED")
        continue;
      auto o = parse(ev.object);
      if (!o || !o->is_object())
        continue;
      apply(which, *o, ev.type == "DELETED");
    }
    return;
  }
}

void engine::on_end(std::uint64_t id) {
  for (std::size_t which = 0; which < resources_.size(); ++which)
    if (resources_[which].watch_id == id && id != 0) {
      resources_[which].watch_id = 0;
      relist_later(which);
    }
}

void engine::apply(std::size_t which, const json& object, bool deleted) {
  auto& m = resources_[which].objects;
  auto key = key_of(object);
  auto it = m.find(key);
  if (deleted) {
    // A delete of an older incarnation (other uid) leaves the newer one.
    if (it != m.end() && uid_of(it->second) == uid_of(object))
      m.erase(it);
  } else if (it == m.end()) {
    m.emplace(key, object);
  } else {
    // Our own write's answer may have been applied before its event.
    auto have = rv_number(it->second);
    auto got = rv_number(object);
    if (uid_of(it->second) != uid_of(object) || !have || !got || *got >= *have)
      it->second = object;
  }
  for (const auto& k : map_(which, object))
    enqueue(k);
}

void engine::write(const pass_ptr& p, request req,
                   std::optional<std::size_t> which,
                   std::function<void(const json&)> on_ok,
                   std::function<void(const std::string&)> on_err) {
  ++p->pending;
  const bool is_delete = req.verb == verb::remove;
  self_->request(api_, cfg_.request_timeout, std::move(req))
      .then(
          [this, p, which, on_ok, is_delete](response& answer) {
            auto o = parse(answer.body);
            // A delete may answer the object it just removed (pods do): only
            // one kept for its finalizers is known to be still there.
            bool kept
                = !is_delete
                  || (o && !obj(obj(*o, "metadata"), "finalizers").empty());
            if (o && o->is_object() && which && str(*o, "kind") != "Status"
                && kept)
              apply(*which, *o, false);
            if (on_ok)
              on_ok(o && o->is_object() ? *o : json::object());
            if (--p->pending == 0 && !p->open)
              finish(p);
          },
          [this, p, is_delete, on_err](caf::error& err) {
            if (!(is_delete && is_error(err, k8s::errc::not_found))) {
              p->failed = true;
              if (on_err) {
                const auto* st = k8s::status_of(err);
                on_err(st != nullptr && !st->message.empty()
                           ? st->message
                           : error_message(err));
              }
            }
            if (--p->pending == 0 && !p->open)
              finish(p);
          });
}

void engine::close(const pass_ptr& p) {
  p->open = false;
  if (p->pending == 0)
    finish(p);
}

void engine::finish(const pass_ptr& p) {
  auto now = self_->clock().now();
  queue_.done(p->key);
  if (p->failed)
    queue_.add_rate_limited(p->key, now);
  else
    queue_.forget(p->key);
  if (p->requeue_after)
    queue_.add_after(p->key, *p->requeue_after, now);
  schedule();
}

void engine::enqueue(const std::string& key) {
  if (key.empty())
    return;
  queue_.add(key);
  schedule();
}

void engine::schedule() {
  if (queue_.size() > 0 && !tick_pending_) {
    tick_pending_ = true;
    self_->send(self_, jobs_tick_atom::value);
  }
  if (auto due = queue_.next_due()) {
    if (!timer_due_ || *due < *timer_due_
        || *timer_due_ < self_->clock().now()) {
      timer_due_ = *due;
      auto delay = *due - self_->clock().now();
      if (delay < caf::timespan{0})
        delay = caf::timespan{0};
      self_->delayed_send(self_, delay, jobs_tick_atom::value);
    }
  }
}

void engine::tick() {
  tick_pending_ = false;
  auto now = self_->clock().now();
  if (timer_due_ && *timer_due_ <= now)
    timer_due_.reset();
  queue_.advance(now);
  while (auto key = queue_.get()) {
    auto p = std::make_shared<pass>();
    p->key = *key;
    reconcile_(*key, p);
    close(p);
  }
  schedule();
}

void engine::event(const json& object, const std::string& type,
                   const std::string& reason, const std::string& message) {
  auto ns = namespace_of(object);
  if (ns.empty())
    ns = "default";
  auto stamp = now_text();
  char suffix[17];
  // client-go names an Event <object>.<unix nanoseconds in hex>; the
  // component's hash keeps two controllers' Events apart in one second.
  std::snprintf(suffix, sizeof suffix, "%016llx",
                static_cast<unsigned long long>(now_unix()) * 1'000'000'000ULL
                    + (std::hash<std::string>{}(component_) % 1'000'000ULL)
                          * 1000ULL
                    + ++event_seq_ % 1000ULL);
  auto api_version = str(object, "apiVersion");
  json ev = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata",
       {{"name", name_of(object) + "." + suffix}, {"namespace", ns}}},
      {"involvedObject",
       {{"kind", str(object, "kind")},
        {"namespace", ns},
        {"name", name_of(object)},
        {"uid", uid_of(object)},
        {"apiVersion", api_version},
        {"resourceVersion", str(obj(object, "metadata"), "resourceVersion")}}},
      {"reason", reason},
      {"message", message},
      {"source", {{"component", component_}}},
      {"firstTimestamp", stamp},
      {"lastTimestamp", stamp},
      {"count", 1},
      {"type", type},
      {"eventTime", nullptr},
      {"reportingComponent", component_},
      {"reportingInstance", ""}};
  self_
      ->request(
          api_, cfg_.request_timeout,
          make_request(verb::create, {"", "v1", "events", ns, "", ""}, ev))
      .then([](response&) {},
            [](caf::error&) {
              // Events are best effort, as client-go's recorder.
            });
}

} // namespace aiperf::k8s::sim::jobs_detail
