// The semantic table (tests/k8s/support/semantic_cases.hpp) run twice:
// through k8s::api_actor on a store actor, and through the product client
// (k8s/client) over HTTPS to the simulator's front over a second store with
// the same configuration. Both stores start from the same state and see the
// same requests in the same order, so everything they answer must be equal:
// codes, bodies, resourceVersions, warnings, and the k8s::status of every
// failure field by field. Only what is random per store is normalized: uids
// (mapped to their order of first appearance, so "the same uid" still
// compares) and timestamps (each store's clock starts at spawn).
#include "k8s/api/json.hpp"
#include "k8s/client/client.hpp"
#include "k8s/client/config.hpp"
#include "k8s/errors/errors.hpp"
#include "k8s/object/status_json.hpp"
#include "k8s/sim/controllers/controllers.hpp"
#include "k8s/sim/http/front.hpp"
#include "k8s/sim/http/tls.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/k8s/support/semantic_cases.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

namespace aiperf::k8s::semantics {
namespace {

using namespace std::chrono_literals;
using testing::semantic_case;
using testing::semantic_step;
using testing::step_outcome;

constexpr auto wait_limit = 20s;
constexpr std::int64_t start_unix = 1'795'000'000; // 2026-11-18T11:06:40Z
constexpr const char* admin_token = "semantics-admin-token";

caf::actor_system_config& with_errors(caf::actor_system_config& cfg) {
  add_error_category<k8s::errc>(cfg);
  add_error_category<client::errc>(cfg);
  return cfg;
}

// --- normalization
// ------------------------------------------------------------

/// Rewrites what is random per store: each uid becomes "<uid-N>" (N = order
/// of first appearance in its run, kept across the run's steps) and each
/// metav1.Time / MicroTime becomes "<time>".
class normalizer {
public:
  std::string text(const std::string& s) {
    static const std::regex uid{
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"};
    static const std::regex time{
        "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?Z$"};
    if (std::regex_match(s, time))
      return "<time>";
    std::string out;
    auto last = s.cbegin();
    for (std::sregex_iterator it{s.begin(), s.end(), uid}, end; it != end;
         ++it) {
      out.append(last, (*it)[0].first);
      auto [pos, fresh] = uids_.try_emplace(
          it->str(), "<uid-" + std::to_string(uids_.size() + 1) + ">");
      out += pos->second;
      last = (*it)[0].second;
    }
    out.append(last, s.cend());
    return out;
  }

  json value(const json& v) {
    if (v.is_string())
      return text(v.get<std::string>());
    if (v.is_array()) {
      json out = json::array();
      for (const auto& x : v)
        out.push_back(value(x));
      return out;
    }
    if (v.is_object()) {
      json out = json::object();
      // Keys too: managedFields name list elements by uid
      // (`k:{"uid":"…"}`).
      for (const auto& [k, x] : v.items())
        out[text(k)] = value(x);
      return out;
    }
    return v;
  }

private:
  std::map<std::string, std::string> uids_;
};

/// One step's answer as both runs compare it.
struct answer {
  std::string what; // "create configmaps sc-crud/" for the report
  std::int32_t code = 0;
  bool ok = false;
  std::string reason;
  std::string message;
  json body; // success: the body; failure: the Status as JSON
  std::vector<std::string> warnings;
};

answer answer_of(const request& r, const caf::expected<response>& res,
                 normalizer& norm) {
  answer a;
  a.what = std::string{to_string(r.verb)} + " " + r.ref.resource
           + (r.ref.subresource.empty() ? "" : "/" + r.ref.subresource) + " "
           + r.ref.namespace_name + "/" + r.ref.name;
  if (res) {
    a.ok = true;
    a.code = res->code;
    if (!res->body.empty()) {
      auto parsed = json::parse(res->body, nullptr, false);
      a.body = parsed.is_discarded() ? json(res->body) : norm.value(parsed);
    }
    for (const auto& w : res->warnings)
      a.warnings.push_back(norm.text(w));
    return a;
  }
  const auto* st = status_of(res.error());
  if (st == nullptr) {
    a.code = -1;
    a.message = error_message(res.error());
    return a;
  }
  a.code = st->code;
  a.reason = st->reason;
  a.message = norm.text(st->message);
  a.body = norm.value(status_to_json(*st));
  return a;
}

step_outcome outcome_of(const caf::expected<response>& res) {
  step_outcome out;
  if (res) {
    out.ok = true;
    out.code = res->code;
    if (!res->body.empty()) {
      auto parsed = json::parse(res->body, nullptr, false);
      out.body = parsed.is_discarded() ? json(res->body) : parsed;
    }
    return out;
  }
  const auto* st = status_of(res.error());
  if (st == nullptr) {
    out.code = -1;
    out.message = error_message(res.error());
    return out;
  }
  out.code = st->code;
  out.reason = st->reason;
  out.message = st->message;
  out.body = status_to_json(*st);
  return out;
}

/// Every difference between two answers, each a sentence naming `where`.
std::vector<std::string> differences(const std::string& where,
                                     const answer& actor, const answer& https) {
  std::vector<std::string> out;
  auto both = [&](const std::string& field, const std::string& a,
                  const std::string& b) {
    out.push_back(where + " (" + actor.what + "): " + field + " differs: actor "
                  + a + ", https " + b);
  };
  if (actor.ok != https.ok)
    both("success", actor.ok ? "true" : "false", https.ok ? "true" : "false");
  if (actor.code != https.code)
    both("code", std::to_string(actor.code), std::to_string(https.code));
  if (actor.reason != https.reason)
    both("reason", "\"" + actor.reason + "\"", "\"" + https.reason + "\"");
  if (actor.message != https.message)
    both("message", "\"" + actor.message + "\"", "\"" + https.message + "\"");
  if (actor.warnings != https.warnings)
    both("warnings", json(actor.warnings).dump(), json(https.warnings).dump());
  if (actor.body != https.body) {
    // One sentence per differing JSON pointer, so a Status reads field by
    // field (details/name, details/causes/0/field, ...).
    for (const auto& op : json::diff(actor.body, https.body)) {
      json::json_pointer p{op["path"].get<std::string>()};
      auto at = [&](const json& body) {
        return body.contains(p) ? body[p].dump() : std::string{"(absent)"};
      };
      both("body " + p.to_string(), at(actor.body), at(https.body));
    }
  }
  return out;
}

// --- the two paths ----------------------------------------------------------

/// Records what a watch delivers, for a test thread to wait on.
struct watch_log {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<watch_event> events;
  int ends = 0;

  bool wait_for_events(std::size_t n) {
    std::unique_lock guard{mtx};
    return cv.wait_for(guard, wait_limit, [&] { return events.size() >= n; });
  }
};

watch_sink_actor::behavior_type sink_impl(watch_sink_actor::pointer,
                                          std::shared_ptr<watch_log> log) {
  return {
      [log](events_atom, std::uint64_t, std::vector<watch_event>& evs) {
        std::lock_guard guard{log->mtx};
        for (auto& e : evs)
          log->events.push_back(std::move(e));
        log->cv.notify_all();
      },
      [log](watch_end_atom, std::uint64_t, caf::error&) {
        std::lock_guard guard{log->mtx};
        ++log->ends;
        log->cv.notify_all();
      },
  };
}

/// One implementation of the API under test: a store with the simulator's
/// controllers, asked either directly or through client -> HTTPS -> front.
class path_under_test {
public:
  path_under_test(caf::actor_system& sys, bool over_https,
                  std::size_t watch_history = 10'000)
      : sys_(sys) {
    sim::store_config cfg;
    cfg.watch_history = watch_history;
    cfg.admin_token = admin_token;
    cfg.start_unix_seconds = start_unix;
    cfg.signing_key = "semantics-signing-key";
    auto store = sim::spawn_store(sys, cfg);
    EXPECT_TRUE(store) << (store ? "" : error_message(store.error()));
    if (!store)
      return;
    store_ = *store;
    api_actor api = store_;
    gc_ = sim::spawn_garbage_collector(sys, api);
    ns_controller_ = sim::spawn_namespace_controller(sys, api);
    if (!over_https) {
      api_ = api;
      in_process_ = true;
      return;
    }
    auto identity = sim::http::make_tls_identity();
    EXPECT_TRUE(identity) << (identity ? "" : error_message(identity.error()));
    if (!identity)
      return;
    sim::http::front_options fopts;
    fopts.tls = *identity;
    fopts.admin_token = admin_token;
    front_ = std::make_unique<sim::http::front>(sys, store_, fopts);
    auto port = front_->start();
    EXPECT_TRUE(port) << (port ? "" : error_message(port.error()));
    if (!port)
      return;
    client::client_config ccfg;
    ccfg.server = "https://127.0.0.1:" + std::to_string(*port);
    ccfg.ca_pem = identity->ca_cert_pem;
    ccfg.token = admin_token;
    ccfg.origin = "the semantics test's in-process simulator";
    client::client_options copts;
    copts.max_retries = 0;
    auto c = client::spawn_client(sys, ccfg, copts);
    EXPECT_TRUE(c) << (c ? "" : error_message(c.error()));
    if (c)
      api_ = *c;
  }

  ~path_under_test() {
    if (front_)
      front_->stop();
    for (auto& a :
         std::vector<caf::actor>{caf::actor_cast<caf::actor>(api_),
                                 caf::actor_cast<caf::actor>(gc_),
                                 caf::actor_cast<caf::actor>(ns_controller_),
                                 caf::actor_cast<caf::actor>(store_)})
      if (a)
        caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }

  bool ready() const { return static_cast<bool>(api_); }

  caf::expected<response> call(const request& r) {
    caf::scoped_actor self{sys_};
    caf::expected<response> out{caf::error{}};
    self->request(api_, wait_limit, as_sent(r))
        .receive([&](response& x) { out = std::move(x); },
                 [&](caf::error& e) { out = std::move(e); });
    return out;
  }

  caf::expected<std::uint64_t> watch(const request& r,
                                     const watch_sink_actor& sink) {
    caf::scoped_actor self{sys_};
    caf::expected<std::uint64_t> out{caf::error{}};
    self->request(api_, wait_limit, watch_atom::value, as_sent(r), sink)
        .receive([&](std::uint64_t id) { out = id; },
                 [&](caf::error& e) { out = std::move(e); });
    return out;
  }

  void unwatch(std::uint64_t id) {
    caf::anon_send(api_, unwatch_atom::value, id);
  }

  normalizer norm;

private:
  /// What the store sees of `r` over HTTPS: the product client's
  /// User-Agent, which names the field manager of its writes.
  request as_sent(const request& r) const {
    request out = r;
    if (in_process_ && out.user_agent.empty())
      out.user_agent = client::client_options{}.user_agent;
    return out;
  }

  caf::actor_system& sys_;
  bool in_process_ = false;
  sim::store_actor store_;
  sim::garbage_collector_actor gc_;
  sim::namespace_controller_actor ns_controller_;
  std::unique_ptr<sim::http::front> front_;
  api_actor api_;
};

/// A case of this file's own: a table case whose listed steps are repeated
/// (bounded by wait_limit) until their code is the expected one — what a
/// controller (garbage collector, namespace controller) does happens after
/// the reply to the request that asked for it.
struct eventual_case {
  semantic_case c;
  std::vector<std::size_t> eventually; // 0-based step indexes
};

/// Runs `c` on `path`, recording every answer; table mismatches go to
/// `problems` prefixed by `label`.
std::vector<answer> run_on(path_under_test& path, const eventual_case& ec,
                           const std::string& label,
                           std::vector<std::string>& problems) {
  std::vector<answer> answers;
  std::size_t index = 0;
  auto found = testing::run_semantic_case(ec.c, [&](const request& r) {
    bool retry = std::find(ec.eventually.begin(), ec.eventually.end(), index)
                 != ec.eventually.end();
    auto want = ec.c.steps[index].code;
    ++index;
    auto res = path.call(r);
    auto deadline = std::chrono::steady_clock::now() + wait_limit;
    while (retry && outcome_of(res).code != want
           && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
      res = path.call(r);
    }
    answers.push_back(answer_of(r, res, path.norm));
    return outcome_of(res);
  });
  for (auto& p : found)
    problems.push_back(label + ": " + p);
  return answers;
}

// --- this file's own cases
// ------------------------------------------------------

namespace own {

using namespace testing::cases_detail;

/// Owner references: a Background delete of the owner lets the garbage
/// collector delete the dependent; an Orphan delete leaves it and removes
/// the ownerReference.
eventual_case garbage_collection() {
  eventual_case ec{{"garbage_collection", {}}, {}};
  auto& steps = ec.c.steps;
  const std::string ns = "sc-gc";
  steps.push_back(namespace_step(ns));
  auto owner = step(
      make(verb::create, core("configmaps", ns), config_map(ns, "owner")), 201);
  owner.save_as = "owner";
  steps.push_back(owner);
  json dep = config_map(ns, "dependent");
  dep["metadata"]["ownerReferences"] = json::array({{{"apiVersion", "v1"},
                                                     {"kind", "ConfigMap"},
                                                     {"name", "owner"},
                                                     {"uid", "${owner.uid}"}}});
  auto dependent = step(make(verb::create, core("configmaps", ns), dep), 201);
  dependent.fields = {{"/metadata/ownerReferences/0/uid", "${owner.uid}"}};
  steps.push_back(dependent);
  steps.push_back(step(make(verb::remove, core("configmaps", ns, "owner"),
                            json{{"propagationPolicy", "Background"}}),
                       200));
  ec.eventually.push_back(steps.size());
  steps.push_back(step(make(verb::get, core("configmaps", ns, "dependent")),
                       404, "NotFound", "configmaps \"dependent\" not found"));
  // Orphan: the dependent stays, without its ownerReference.
  auto owner2 = step(
      make(verb::create, core("configmaps", ns), config_map(ns, "owner2")),
      201);
  owner2.save_as = "owner2";
  steps.push_back(owner2);
  json dep2 = config_map(ns, "dependent2");
  dep2["metadata"]["ownerReferences"]
      = json::array({{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"name", "owner2"},
                      {"uid", "${owner2.uid}"}}});
  steps.push_back(step(make(verb::create, core("configmaps", ns), dep2), 201));
  steps.push_back(step(make(verb::remove, core("configmaps", ns, "owner2"),
                            json{{"propagationPolicy", "Orphan"}}),
                       200));
  ec.eventually.push_back(steps.size());
  steps.push_back(step(make(verb::get, core("configmaps", ns, "owner2")), 404,
                       "NotFound", "configmaps \"owner2\" not found"));
  auto kept = step(make(verb::get, core("configmaps", ns, "dependent2")), 200);
  kept.absent = {"/metadata/ownerReferences"};
  steps.push_back(kept);
  return ec;
}

/// A CRD with a CEL rule: admission refuses a violating object with the
/// same 422 on both paths.
eventual_case crd_cel() {
  eventual_case ec{{"crd_cel", {}}, {}};
  auto& steps = ec.c.steps;
  const std::string ns = "sc-cel";
  steps.push_back(namespace_step(ns));
  json crd = json::parse(R"({
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.twice.example.com"},
    "spec": {
      "group": "twice.example.com",
      "scope": "Namespaced",
      "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                "listKind": "WidgetList"},
      "versions": [{
        "name": "v1", "served": true, "storage": true,
        "subresources": {"status": {}},
        "schema": {"openAPIV3Schema": {
          "type": "object",
          "properties": {
            "spec": {
              "type": "object",
              "x-kubernetes-validations": [
                {"rule": "self.replicas <= self.maxReplicas",
                 "message": "replicas must not exceed maxReplicas"}],
              "properties": {
                "replicas": {"type": "integer", "minimum": 0},
                "maxReplicas": {"type": "integer", "default": 3}
              }
            },
            "status": {"type": "object",
                       "properties": {"ready": {"type": "integer"}}}
          }
        }}
      }]
    }
  })");
  resource_ref crds{
      "apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""};
  steps.push_back(step(make(verb::create, crds, crd), 201));
  resource_ref widgets{"twice.example.com", "v1", "widgets", ns, "", ""};
  json good = {{"apiVersion", "twice.example.com/v1"},
               {"kind", "Widget"},
               {"metadata", {{"name", "w1"}, {"namespace", ns}}},
               {"spec", {{"replicas", 2}}}};
  // The type is served once the CRD is Established.
  ec.eventually.push_back(steps.size());
  auto created = step(make(verb::create, widgets, good), 201);
  created.fields = {{"/spec/maxReplicas", 3}, {"/metadata/generation", 1}};
  steps.push_back(created);
  json bad = good;
  bad["metadata"]["name"] = "w2";
  bad["spec"]["replicas"] = 5;
  auto refused = step(make(verb::create, widgets, bad), 422, "Invalid");
  refused.fields = {{"/details/kind", "Widget"}, {"/details/name", "w2"}};
  steps.push_back(refused);
  resource_ref w1{"twice.example.com", "v1", "widgets", ns, "w1", ""};
  steps.push_back(
      step(patch_of(w1, patch_type::merge, json{{"spec", {{"replicas", 4}}}}),
           422, "Invalid"));
  auto status_write
      = step(patch_of(resource_ref{"twice.example.com", "v1", "widgets", ns,
                                   "w1", "status"},
                      patch_type::merge, json{{"status", {{"ready", 2}}}}),
             200);
  status_write.fields = {{"/status/ready", 2}, {"/metadata/generation", 1}};
  steps.push_back(status_write);
  return ec;
}

/// Lists: limit/continue, a label selector, and the errors of a bad one.
eventual_case lists() {
  eventual_case ec{{"lists_and_selectors", {}}, {}};
  auto& steps = ec.c.steps;
  const std::string ns = "sc-lists";
  steps.push_back(namespace_step(ns));
  for (const char* name : {"a", "b", "c"}) {
    json cm = config_map(ns, name);
    cm["metadata"]["labels"] = {{"tier", std::string{name} == "b" ? "x" : "y"}};
    steps.push_back(step(make(verb::create, core("configmaps", ns), cm), 201));
  }
  request page = make(verb::list, core("configmaps", ns));
  page.limit = 2;
  auto first = step(page, 200);
  first.fields = {{"/kind", "ConfigMapList"}, {"/items/1/metadata/name", "b"}};
  steps.push_back(first);
  request sel = make(verb::list, core("configmaps", ns));
  sel.label_selector = "tier=x";
  auto selected = step(sel, 200);
  selected.fields = {{"/items/0/metadata/name", "b"}};
  selected.absent = {"/items/1"};
  steps.push_back(selected);
  request bad = make(verb::list, core("configmaps", ns));
  bad.label_selector = "tier in (x";
  steps.push_back(step(bad, 400, "BadRequest"));
  request old = make(verb::get, core("configmaps", ns, "a"));
  steps.push_back(step(old, 200));
  return ec;
}

/// Deleting a namespace: Terminating at once, gone once the namespace
/// controller has emptied it and removed its finalizer.
eventual_case namespace_deletion() {
  eventual_case ec{{"namespace_deletion", {}}, {}};
  auto& steps = ec.c.steps;
  const std::string ns = "sc-nsdelete";
  steps.push_back(namespace_step(ns));
  steps.push_back(step(
      make(verb::create, core("configmaps", ns), config_map(ns, "cm1")), 201));
  auto terminating = step(make(verb::remove, core("namespaces", "", ns)), 200);
  terminating.fields = {{"/status/phase", "Terminating"}};
  steps.push_back(terminating);
  auto refused
      = step(make(verb::create, core("configmaps", ns), config_map(ns, "cm2")),
             403, "Forbidden");
  steps.push_back(refused);
  ec.eventually.push_back(steps.size());
  steps.push_back(step(make(verb::get, core("namespaces", "", ns)), 404,
                       "NotFound", "namespaces \"" + ns + "\" not found"));
  return ec;
}

/// What the front translates rather than the store: dry runs, Warning
/// headers, an unknown resource (plain-text 404 on the wire), an invalid
/// name's causes, an update of a missing object.
eventual_case codec_edges() {
  eventual_case ec{{"codec_edges", {}}, {}};
  auto& steps = ec.c.steps;
  const std::string ns = "sc-codec";
  steps.push_back(namespace_step(ns));
  request dry = make(verb::create, core("configmaps", ns), config_map(ns, "d"));
  dry.dry_run = true;
  auto dried = step(dry, 201);
  dried.fields = {{"/metadata/name", "d"}};
  steps.push_back(dried);
  steps.push_back(step(make(verb::get, core("configmaps", ns, "d")), 404,
                       "NotFound", "configmaps \"d\" not found"));
  json unknown = config_map(ns, "u");
  unknown["spec"] = {{"x", 1}};
  request warn = make(verb::create, core("configmaps", ns), unknown);
  warn.field_validation = "Warn";
  steps.push_back(step(warn, 201));
  request strict = make(verb::create, core("configmaps", ns), unknown);
  strict.field_validation = "Strict";
  strict.ref.name = "";
  steps.push_back(step(strict, 400, "BadRequest"));
  steps.push_back(step(
      make(verb::get, resource_ref{"", "v1", "gadgets", ns, "g1", ""}), 404,
      "NotFound", "the server could not find the requested resource"));
  steps.push_back(step(
      make(verb::create, core("configmaps", ns), config_map(ns, "Bad_Name")),
      422, "Invalid"));
  steps.push_back(step(make(verb::update, core("configmaps", ns, "missing"),
                            config_map(ns, "missing")),
                       404, "NotFound", "configmaps \"missing\" not found"));
  steps.push_back(step(
      make(verb::update, core("configmaps", ns, "other"), config_map(ns, "u")),
      400, "BadRequest"));
  return ec;
}

/// deletecollection with a label selector answers the deleted items; an
/// update of /status with a stale resourceVersion conflicts.
eventual_case collections_and_status() {
  eventual_case ec{{"deletecollection_and_status_update", {}}, {}};
  auto& steps = ec.c.steps;
  const std::string ns = "sc-collection";
  steps.push_back(namespace_step(ns));
  for (const char* name : {"a", "b"}) {
    json cm = config_map(ns, name);
    cm["metadata"]["labels"]
        = {{"drop", std::string{name} == "a" ? "yes" : "no"}};
    steps.push_back(step(make(verb::create, core("configmaps", ns), cm), 201));
  }
  request drop = make(verb::remove_collection, core("configmaps", ns));
  drop.label_selector = "drop=yes";
  auto dropped = step(drop, 200);
  dropped.fields
      = {{"/kind", "ConfigMapList"}, {"/items/0/metadata/name", "a"}};
  dropped.absent = {"/items/1"};
  steps.push_back(dropped);
  // Every namespace also holds the kube-root-ca.crt ConfigMap, which sorts
  // after "b".
  auto left = step(make(verb::list, core("configmaps", ns)), 200);
  left.fields = {{"/items/0/metadata/name", "b"},
                 {"/items/1/metadata/name", "kube-root-ca.crt"}};
  left.absent = {"/items/2"};
  steps.push_back(left);
  json job = json::parse(R"({"apiVersion":"batch/v1","kind":"Job",
    "metadata":{"name":"j1"},
    "spec":{"template":{"spec":{"restartPolicy":"Never",
      "containers":[{"name":"c","image":"busybox"}]}}}})");
  job["metadata"]["namespace"] = ns;
  auto created = step(
      make(verb::create, resource_ref{"batch", "v1", "jobs", ns, "", ""}, job),
      201);
  created.save_as = "j1";
  steps.push_back(created);
  resource_ref status{"batch", "v1", "jobs", ns, "j1", "status"};
  json with_status = job;
  with_status["metadata"]["resourceVersion"] = "${j1.rv}";
  with_status["status"] = {{"active", 1}};
  auto written = step(make(verb::update, status, with_status), 200);
  written.fields = {{"/status/active", 1}, {"/metadata/generation", 1}};
  steps.push_back(written);
  steps.push_back(
      step(make(verb::update, status, with_status), 409, "Conflict"));
  return ec;
}

/// Strategic merge by the merge key of a list (containers by name), and a
/// JSON patch on a path that does not exist.
eventual_case strategic_lists() {
  eventual_case ec{{"strategic_merge_keys", {}}, {}};
  auto& steps = ec.c.steps;
  const std::string ns = "sc-strategic";
  steps.push_back(namespace_step(ns));
  json deploy = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"d1"},
    "spec":{"replicas":1,"selector":{"matchLabels":{"app":"d1"}},
      "template":{"metadata":{"labels":{"app":"d1"}},
        "spec":{"containers":[{"name":"c","image":"busybox:1"},
                              {"name":"d","image":"busybox:1"}]}}}})");
  deploy["metadata"]["namespace"] = ns;
  resource_ref deployments{"apps", "v1", "deployments", ns, "", ""};
  resource_ref d1{"apps", "v1", "deployments", ns, "d1", ""};
  auto created = step(make(verb::create, deployments, deploy), 201);
  created.fields = {{"/metadata/generation", 1}};
  steps.push_back(created);
  auto merged
      = step(patch_of(d1, patch_type::strategic,
                      json::parse(R"({"spec":{"template":{"spec":{"containers":
                 [{"name":"c","image":"busybox:2"}]}}}})")),
             200);
  merged.fields = {{"/spec/template/spec/containers/0/name", "c"},
                   {"/spec/template/spec/containers/0/image", "busybox:2"},
                   {"/spec/template/spec/containers/1/name", "d"},
                   {"/metadata/generation", 2}};
  steps.push_back(merged);
  steps.push_back(step(
      patch_of(d1, patch_type::json,
               json::array({{{"op", "remove"}, {"path", "/spec/nothing"}}})),
      422, "Invalid"));
  return ec;
}

/// Server-side apply: create, a conflict between managers, a forced take
/// over (managedFields' times are normalized).
eventual_case server_side_apply() {
  eventual_case ec{{"server_side_apply", {}}, {}};
  auto& steps = ec.c.steps;
  const std::string ns = "sc-apply";
  steps.push_back(namespace_step(ns));
  auto apply
      = [&](const std::string& manager, const std::string& value, bool force) {
          request r = patch_of(core("configmaps", ns, "cm1"), patch_type::apply,
                               config_map(ns, "cm1", {{"a", value}}));
          r.field_manager = manager;
          r.force = force;
          return r;
        };
  auto created = step(apply("m1", "1", false), 201);
  created.fields = {{"/data/a", "1"},
                    {"/metadata/managedFields/0/manager", "m1"},
                    {"/metadata/managedFields/0/operation", "Apply"}};
  steps.push_back(created);
  steps.push_back(step(apply("m2", "2", false), 409, "Conflict"));
  auto forced = step(apply("m2", "2", true), 200);
  forced.fields = {{"/data/a", "2"}};
  steps.push_back(forced);
  return ec;
}

} // namespace own

// --- the tests
// ------------------------------------------------------------------

/// The comparison itself must be able to fail: a Status differing in one
/// detail is one sentence naming that field and both values.
TEST(semantics_compare, a_differing_status_detail_is_named_with_both_values) {
  answer a;
  a.what = "get configmaps ns/cm1";
  a.code = 404;
  a.reason = "NotFound";
  a.message = "configmaps \"cm1\" not found";
  a.body = {{"kind", "Status"},
            {"details", {{"name", "cm1"}, {"kind", "configmaps"}}}};
  answer b = a;
  b.body["details"]["kind"] = "ConfigMap";
  auto d = differences("c step 2", a, b);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], "c step 2 (get configmaps ns/cm1): body /details/kind "
                  "differs: actor \"configmaps\", https \"ConfigMap\"");
  b = a;
  b.code = 500;
  b.message = "x";
  EXPECT_EQ(differences("c step 2", a, b).size(), 2u);
  EXPECT_TRUE(differences("c step 2", a, a).empty());
}

TEST(semantics_compare, uids_map_by_first_appearance_and_times_are_masked) {
  normalizer n;
  auto v = n.value(json{
      {"metadata",
       {{"uid", "0b8e1f5e-7a2c-4d3b-9f1e-2a3b4c5d6e7f"},
        {"creationTimestamp", "2026-11-18T11:06:40Z"},
        {"resourceVersion", "17"}}},
      {"message", "UID in record (0b8e1f5e-7a2c-4d3b-9f1e-2a3b4c5d6e7f) and "
                  "(00000000-0000-0000-0000-000000000000)"}});
  EXPECT_EQ(v["metadata"]["uid"], "<uid-1>");
  EXPECT_EQ(v["metadata"]["creationTimestamp"], "<time>");
  EXPECT_EQ(v["metadata"]["resourceVersion"], "17");
  EXPECT_EQ(v["message"], "UID in record (<uid-1>) and (<uid-2>)");
}

class semantics_twice : public ::testing::Test {
protected:
  caf::actor_system_config sys_cfg_;
  caf::actor_system sys{with_errors(sys_cfg_)};
};

void run_twice(const std::vector<eventual_case>& cases, path_under_test& actor,
               path_under_test& https) {
  for (const auto& ec : cases) {
    std::vector<std::string> problems;
    auto a = run_on(actor, ec, "actor", problems);
    auto b = run_on(https, ec, "https", problems);
    ASSERT_EQ(a.size(), b.size()) << ec.c.name;
    for (std::size_t i = 0; i < a.size(); ++i)
      for (auto& d : differences(ec.c.name + " step " + std::to_string(i + 1),
                                 a[i], b[i]))
        problems.push_back(d);
    for (const auto& p : problems)
      ADD_FAILURE() << p;
  }
}

TEST_F(semantics_twice, the_table_answers_alike_on_the_actor_and_over_https) {
  path_under_test actor{sys, false};
  path_under_test https{sys, true};
  ASSERT_TRUE(actor.ready());
  ASSERT_TRUE(https.ready());
  std::vector<eventual_case> cases;
  for (auto& c : testing::semantic_cases())
    cases.push_back({std::move(c), {}});
  cases.push_back(own::garbage_collection());
  cases.push_back(own::crd_cel());
  cases.push_back(own::lists());
  cases.push_back(own::namespace_deletion());
  cases.push_back(own::codec_edges());
  cases.push_back(own::collections_and_status());
  cases.push_back(own::strategic_lists());
  cases.push_back(own::server_side_apply());
  run_twice(cases, actor, https);
}

/// A watch from a list's resourceVersion delivers the same events, with the
/// same objects and resourceVersions, on both paths.
TEST_F(semantics_twice, a_watch_delivers_the_same_events_on_both_paths) {
  path_under_test actor{sys, false};
  path_under_test https{sys, true};
  ASSERT_TRUE(actor.ready());
  ASSERT_TRUE(https.ready());
  using namespace testing::cases_detail;
  const std::string ns = "sc-watch";
  std::vector<std::vector<json>> seen;
  std::vector<std::vector<answer>> writes;
  for (auto* path : {&actor, &https}) {
    auto label = path == &actor ? "actor" : "https";
    auto made = path->call(namespace_step(ns).req);
    ASSERT_TRUE(made) << label << ": " << error_message(made.error());
    auto list = path->call(make(verb::list, core("configmaps", ns)));
    ASSERT_TRUE(list) << label << ": " << error_message(list.error());
    auto rv = json::parse(list->body)["metadata"]["resourceVersion"]
                  .get<std::string>();
    auto log = std::make_shared<watch_log>();
    auto sink = sys.spawn(sink_impl, log);
    request w = make(verb::watch, core("configmaps", ns));
    w.resource_version = rv;
    auto id = path->watch(w, sink);
    ASSERT_TRUE(id) << label << ": " << error_message(id.error());
    std::vector<answer> answers;
    std::vector<request> reqs{make(verb::create, core("configmaps", ns),
                                   config_map(ns, "w1", {{"a", "1"}})),
                              patch_of(core("configmaps", ns, "w1"),
                                       patch_type::merge,
                                       json{{"data", {{"a", "2"}}}}),
                              make(verb::remove, core("configmaps", ns, "w1"))};
    for (const auto& r : reqs)
      answers.push_back(answer_of(r, path->call(r), path->norm));
    ASSERT_TRUE(log->wait_for_events(3))
        << label << ": " << log->events.size() << " events";
    path->unwatch(*id);
    std::vector<json> events;
    {
      std::lock_guard guard{log->mtx};
      for (const auto& e : log->events)
        events.push_back(path->norm.value(
            json{{"type", e.type}, {"object", json::parse(e.object)}}));
    }
    caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
    seen.push_back(std::move(events));
    writes.push_back(std::move(answers));
  }
  // A watch the server refuses is an error reply on both paths, alike.
  request bad = make(verb::watch, core("configmaps", ns));
  bad.label_selector = "a in (b";
  std::vector<answer> refusals;
  for (auto* path : {&actor, &https}) {
    auto log = std::make_shared<watch_log>();
    auto sink = sys.spawn(sink_impl, log);
    auto id = path->watch(bad, sink);
    EXPECT_FALSE(id) << "a watch with selector \"a in (b\" was accepted";
    caf::expected<response> as_response{caf::error{}};
    if (!id)
      as_response = id.error();
    refusals.push_back(answer_of(bad, as_response, path->norm));
    caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
  }
  EXPECT_EQ(refusals[0].code, 400);
  EXPECT_EQ(refusals[0].reason, "BadRequest");
  for (auto& d : differences("refused watch", refusals[0], refusals[1]))
    ADD_FAILURE() << d;
  ASSERT_EQ(seen[0].size(), seen[1].size()) << json(seen[0]).dump() << "\n"
                                            << json(seen[1]).dump();
  EXPECT_EQ(seen[0][0]["type"], "ADDED");
  EXPECT_EQ(seen[0][1]["type"], "MODIFIED");
  EXPECT_EQ(seen[0][2]["type"], "DELETED");
  for (std::size_t i = 0; i < writes[0].size(); ++i)
    for (auto& d : differences("watch write " + std::to_string(i + 1),
                               writes[0][i], writes[1][i]))
      ADD_FAILURE() << d;
  for (std::size_t i = 0; i < seen[0].size(); ++i)
    for (const auto& op : json::diff(seen[0][i], seen[1][i]))
      ADD_FAILURE() << "watch event " << i + 1 << ": "
                    << op["path"].get<std::string>() << " differs: actor "
                    << seen[0][i].dump() << ", https " << seen[1][i].dump();
}

/// A watch from a resourceVersion older than the kept history ends alike on
/// both paths: one ERROR event carrying 410 Expired (or the same refusal).
TEST_F(semantics_twice, a_too_old_watch_expires_alike_on_both_paths) {
  path_under_test actor{sys, false, 4};
  path_under_test https{sys, true, 4};
  ASSERT_TRUE(actor.ready());
  ASSERT_TRUE(https.ready());
  using namespace testing::cases_detail;
  const std::string ns = "sc-expired";
  std::vector<std::vector<json>> seen;
  std::vector<answer> replies;
  for (auto* path : {&actor, &https}) {
    auto label = path == &actor ? "actor" : "https";
    auto made = path->call(namespace_step(ns).req);
    ASSERT_TRUE(made) << label << ": " << error_message(made.error());
    auto rv = json::parse(made->body)["metadata"]["resourceVersion"]
                  .get<std::string>();
    for (int i = 0; i < 8; ++i) {
      auto r = make(verb::create, core("configmaps", ns),
                    config_map(ns, "cm" + std::to_string(i)));
      auto res = path->call(r);
      ASSERT_TRUE(res) << label << ": " << error_message(res.error());
    }
    auto log = std::make_shared<watch_log>();
    auto sink = sys.spawn(sink_impl, log);
    request w = make(verb::watch, core("configmaps", ns));
    w.resource_version = rv;
    auto id = path->watch(w, sink);
    caf::expected<response> as_response{response{}};
    if (!id)
      as_response = id.error();
    replies.push_back(answer_of(w, as_response, path->norm));
    std::vector<json> events;
    if (id) {
      EXPECT_TRUE(log->wait_for_events(1)) << label << ": no event";
      std::lock_guard guard{log->mtx};
      for (const auto& e : log->events)
        events.push_back(path->norm.value(
            json{{"type", e.type}, {"object", json::parse(e.object)}}));
      path->unwatch(*id);
    }
    caf::anon_send_exit(sink, caf::exit_reason::user_shutdown);
    seen.push_back(std::move(events));
  }
  for (auto& d : differences("expired watch", replies[0], replies[1]))
    ADD_FAILURE() << d;
  ASSERT_EQ(seen[0].size(), seen[1].size()) << json(seen[0]).dump() << "\n"
                                            << json(seen[1]).dump();
  if (!seen[0].empty()) {
    EXPECT_EQ(seen[0][0]["type"], "ERROR");
    EXPECT_EQ(seen[0][0]["object"]["code"], 410);
    EXPECT_EQ(seen[0][0]["object"]["reason"], "Expired");
  } else {
    EXPECT_EQ(replies[0].code, 410);
  }
  for (std::size_t i = 0; i < seen[0].size(); ++i)
    EXPECT_EQ(seen[0][i], seen[1][i]) << "expired watch event " << i + 1;
}

/// The operator's fences need the product client to tell a failed JSON patch
/// `test` (someone else won the race) from a validation 422 (the write is
/// wrong). Both are 422 Invalid; they differ only in structure, and the
/// structure survives the trip over HTTPS.
TEST_F(semantics_twice,
       a_failed_patch_test_and_a_validation_422_differ_by_structure) {
  path_under_test actor{sys, false};
  path_under_test https{sys, true};
  ASSERT_TRUE(actor.ready());
  ASSERT_TRUE(https.ready());
  using namespace testing::cases_detail;
  const std::string ns = "sc-fence";
  for (auto* path : {&actor, &https}) {
    auto label = path == &actor ? "actor" : "https";
    ASSERT_TRUE(path->call(namespace_step(ns).req)) << label;
    json cm = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", "c1"}}}};
    ASSERT_TRUE(path->call(make(verb::create, core("configmaps", ns), cm)))
        << label;
    auto patch = make(
        verb::patch, core("configmaps", ns, "c1"),
        json::parse(R"([{"op":"test","path":"/metadata/uid","value":"stale"},
                                      {"op":"add","path":"/data","value":{"a":"b"}}])"));
    patch.patch = patch_type::json;
    auto lost = path->call(patch);
    ASSERT_FALSE(lost) << label;
    ASSERT_NE(status_of(lost.error()), nullptr) << label;
    EXPECT_TRUE(is_failed_patch(*status_of(lost.error()))) << label;

    json bad = {{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"metadata", {{"name", "Bad_Name"}}}};
    auto wrong = path->call(make(verb::create, core("configmaps", ns), bad));
    ASSERT_FALSE(wrong) << label;
    ASSERT_NE(status_of(wrong.error()), nullptr) << label;
    EXPECT_EQ(status_of(wrong.error())->code, 422) << label;
    EXPECT_EQ(status_of(wrong.error())->reason, "Invalid") << label;
    EXPECT_FALSE(is_failed_patch(*status_of(wrong.error()))) << label;
  }
}

} // namespace
} // namespace aiperf::k8s::semantics
