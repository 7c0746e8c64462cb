// Semantic cases every implementation of k8s::api_actor must answer alike:
// the simulator's store in process, the same store behind the HTTPS front,
// and the product client in front of either. Each case is a sequence of
// requests with what the answer must hold — code, Status reason and exact
// message for a failure, fields of the returned object for a success — so
// the same table runs through every path and the paths cannot drift apart.
//
// Values that differ between runs (resourceVersions, uids) are captured by
// a step (`save_as`) and referred to later as `${name.rv}` / `${name.uid}`
// in bodies and expected values. Each case works in its own namespace,
// created by its first step, so cases run in any order on one server.
#pragma once

#include "k8s/api/api.hpp"
#include "k8s/api/json.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace aiperf::k8s::testing {

struct semantic_step {
  request req;
  /// 200/201/202 for a success; else the Status code of the failure.
  std::int32_t code = 200;
  /// Status reason of a failure ("" for a success).
  std::string reason;
  /// Exact Status message of a failure; "" = not checked.
  std::string message;
  /// JSON pointers into the answer body (success) or into the Status
  /// details (failure: "/details/kind") and the values they must hold.
  std::vector<std::pair<std::string, json>> fields;
  /// JSON pointers that must be absent from the answer body.
  std::vector<std::string> absent;
  /// Saves the answer's metadata.resourceVersion and uid as
  /// `${<save_as>.rv}` and `${<save_as>.uid}`.
  std::string save_as;
};

struct semantic_case {
  std::string name;
  std::vector<semantic_step> steps;
};

/// Replaces `${...}` references by saved values.
inline std::string substitute(std::string text,
                              const std::map<std::string, std::string>& vars) {
  for (const auto& [k, v] : vars) {
    std::string ref = "${" + k + "}";
    for (auto pos = text.find(ref); pos != std::string::npos;
         pos = text.find(ref, pos + v.size()))
      text.replace(pos, ref.size(), v);
  }
  return text;
}

inline json substitute(const json& value,
                       const std::map<std::string, std::string>& vars) {
  if (value.is_string())
    return substitute(value.get<std::string>(), vars);
  return value;
}

/// What a run of one step answered, reduced to what the table checks.
struct step_outcome {
  bool ok = false;
  std::int32_t code = 0;
  std::string reason;
  std::string message;
  json body; // success: the parsed body; failure: the Status as JSON
};

/// Runs `c` through `call` (request -> outcome) and returns every mismatch
/// as a sentence naming the case and step; empty = the case passed.
inline std::vector<std::string>
run_semantic_case(const semantic_case& c,
                  const std::function<step_outcome(const request&)>& call) {
  std::vector<std::string> problems;
  std::map<std::string, std::string> vars;
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    const auto& s = c.steps[i];
    auto where = c.name + " step " + std::to_string(i + 1);
    request req = s.req;
    req.body = substitute(req.body, vars);
    auto out = call(req);
    if (out.code != s.code) {
      problems.push_back(where + ": code " + std::to_string(out.code)
                         + " (expected " + std::to_string(s.code)
                         + "): " + out.message + out.body.dump());
      continue;
    }
    if (out.reason != s.reason)
      problems.push_back(where + ": reason \"" + out.reason + "\" (expected \""
                         + s.reason + "\")");
    if (!s.message.empty() && out.message != substitute(s.message, vars))
      problems.push_back(where + ": message \"" + out.message
                         + "\" (expected \"" + substitute(s.message, vars)
                         + "\")");
    for (const auto& [ptr, want] : s.fields) {
      json::json_pointer p{ptr};
      if (!out.body.contains(p)) {
        problems.push_back(where + ": " + ptr + " is absent");
        continue;
      }
      auto expected = substitute(want, vars);
      if (out.body[p] != expected)
        problems.push_back(where + ": " + ptr + " is " + out.body[p].dump()
                           + " (expected " + expected.dump() + ")");
    }
    for (const auto& ptr : s.absent)
      if (out.body.contains(json::json_pointer{ptr}))
        problems.push_back(where + ": " + ptr + " is present: "
                           + out.body[json::json_pointer{ptr}].dump());
    if (!s.save_as.empty() && out.body.contains("metadata")) {
      vars[s.save_as + ".rv"]
          = out.body["metadata"].value("resourceVersion", "");
      vars[s.save_as + ".uid"] = out.body["metadata"].value("uid", "");
    }
  }
  return problems;
}

namespace cases_detail {

inline request make(verb v, resource_ref ref, json body = nullptr) {
  request r;
  r.verb = v;
  r.ref = std::move(ref);
  if (!body.is_null())
    r.body = body.dump();
  return r;
}

inline resource_ref core(std::string resource, std::string ns,
                         std::string name = {}, std::string sub = {}) {
  return {"",
          "v1",
          std::move(resource),
          std::move(ns),
          std::move(name),
          std::move(sub)};
}

inline semantic_step namespace_step(const std::string& ns) {
  semantic_step s;
  s.req = make(verb::create, core("namespaces", ""),
               json{{"apiVersion", "v1"},
                    {"kind", "Namespace"},
                    {"metadata", {{"name", ns}}}});
  s.code = 201;
  s.fields = {{"/status/phase", "Active"}};
  return s;
}

inline json config_map(const std::string& ns, const std::string& name,
                       json data = json::object()) {
  return json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"data", std::move(data)}};
}

inline semantic_step step(request req, std::int32_t code,
                          std::string reason = {}, std::string message = {}) {
  semantic_step s;
  s.req = std::move(req);
  s.code = code;
  s.reason = std::move(reason);
  s.message = std::move(message);
  return s;
}

inline request patch_of(resource_ref ref, patch_type type, json body) {
  request r = make(verb::patch, std::move(ref));
  r.patch = type;
  r.body = body.dump();
  return r;
}

} // namespace cases_detail

/// The table.
inline std::vector<semantic_case> semantic_cases() {
  using namespace cases_detail;
  std::vector<semantic_case> out;

  { // create, get, update with the current resourceVersion, delete
    semantic_case c{"configmap_crud", {}};
    const std::string ns = "sc-crud";
    c.steps.push_back(namespace_step(ns));
    auto created = step(make(verb::create, core("configmaps", ns),
                             config_map(ns, "cm1", {{"a", "1"}})),
                        201);
    created.fields
        = {{"/kind", "ConfigMap"}, {"/metadata/name", "cm1"}, {"/data/a", "1"}};
    created.absent = {"/metadata/generation"};
    created.save_as = "cm1";
    c.steps.push_back(created);
    auto got = step(make(verb::get, core("configmaps", ns, "cm1")), 200);
    got.fields = {{"/metadata/resourceVersion", "${cm1.rv}"},
                  {"/metadata/uid", "${cm1.uid}"}};
    c.steps.push_back(got);
    json next = config_map(ns, "cm1", {{"a", "2"}});
    next["metadata"]["resourceVersion"] = "${cm1.rv}";
    auto updated
        = step(make(verb::update, core("configmaps", ns, "cm1"), next), 200);
    updated.fields = {{"/data/a", "2"}, {"/metadata/uid", "${cm1.uid}"}};
    c.steps.push_back(updated);
    // the stale resourceVersion now conflicts
    auto stale = step(make(verb::update, core("configmaps", ns, "cm1"), next),
                      409, "Conflict",
                      "Operation cannot be fulfilled on configmaps \"cm1\": "
                      "the object has been modified; please apply your "
                      "changes to the latest version and try again");
    stale.fields = {{"/details/kind", "configmaps"}, {"/details/name", "cm1"}};
    c.steps.push_back(stale);
    auto removed = step(make(verb::remove, core("configmaps", ns, "cm1"),
                             json{{"propagationPolicy", "Background"}}),
                        200);
    removed.fields = {{"/kind", "Status"},
                      {"/status", "Success"},
                      {"/details/kind", "configmaps"},
                      {"/details/uid", "${cm1.uid}"}};
    c.steps.push_back(removed);
    c.steps.push_back(step(make(verb::get, core("configmaps", ns, "cm1")), 404,
                           "NotFound", "configmaps \"cm1\" not found"));
    out.push_back(std::move(c));
  }

  { // AlreadyExists and a create in a missing namespace
    semantic_case c{"already_exists_and_missing_namespace", {}};
    const std::string ns = "sc-exists";
    c.steps.push_back(namespace_step(ns));
    c.steps.push_back(
        step(make(verb::create, core("configmaps", ns), config_map(ns, "cm1")),
             201));
    auto again = step(
        make(verb::create, core("configmaps", ns), config_map(ns, "cm1")), 409,
        "AlreadyExists", "configmaps \"cm1\" already exists");
    again.fields = {{"/details/name", "cm1"}, {"/details/kind", "configmaps"}};
    c.steps.push_back(again);
    auto missing = step(make(verb::create, core("configmaps", "sc-nowhere"),
                             config_map("sc-nowhere", "cm1")),
                        404, "NotFound", "namespaces \"sc-nowhere\" not found");
    missing.fields
        = {{"/details/kind", "namespaces"}, {"/details/name", "sc-nowhere"}};
    c.steps.push_back(missing);
    out.push_back(std::move(c));
  }

  { // JSON patch: a failed test applies nothing and answers the generic 422
    semantic_case c{"json_patch_test_failure", {}};
    const std::string ns = "sc-jsonpatch";
    c.steps.push_back(namespace_step(ns));
    auto created = step(make(verb::create, core("configmaps", ns),
                             config_map(ns, "cm1", {{"a", "1"}})),
                        201);
    created.save_as = "cm1";
    c.steps.push_back(created);
    auto failed = step(
        patch_of(core("configmaps", ns, "cm1"), patch_type::json,
                 json::array(
                     {{{"op", "replace"}, {"path", "/data/a"}, {"value", "2"}},
                      {{"op", "test"}, {"path", "/data/a"}, {"value", "1"}}})),
        422, "Invalid",
        "the server rejected our request due to an error in our request");
    c.steps.push_back(failed);
    auto unchanged = step(make(verb::get, core("configmaps", ns, "cm1")), 200);
    unchanged.fields
        = {{"/data/a", "1"}, {"/metadata/resourceVersion", "${cm1.rv}"}};
    c.steps.push_back(unchanged);
    auto applied = step(
        patch_of(
            core("configmaps", ns, "cm1"), patch_type::json,
            json::array(
                {{{"op", "test"}, {"path", "/data/a"}, {"value", "1"}},
                 {{"op", "replace"}, {"path", "/data/a"}, {"value", "3"}}})),
        200);
    applied.fields = {{"/data/a", "3"}};
    c.steps.push_back(applied);
    out.push_back(std::move(c));
  }

  { // merge and strategic merge patches on a built-in
    semantic_case c{"merge_and_strategic_patch", {}};
    const std::string ns = "sc-merge";
    c.steps.push_back(namespace_step(ns));
    c.steps.push_back(
        step(make(verb::create, core("configmaps", ns),
                  config_map(ns, "cm1", {{"a", "1"}, {"b", "2"}})),
             201));
    auto merged
        = step(patch_of(core("configmaps", ns, "cm1"), patch_type::merge,
                        json{{"data", {{"a", nullptr}, {"c", "3"}}}}),
               200);
    merged.fields = {{"/data/b", "2"}, {"/data/c", "3"}};
    merged.absent = {"/data/a"};
    c.steps.push_back(merged);
    auto strategic
        = step(patch_of(core("configmaps", ns, "cm1"), patch_type::strategic,
                        json{{"metadata", {{"labels", {{"app", "x"}}}}}}),
               200);
    strategic.fields = {{"/metadata/labels/app", "x"}, {"/data/b", "2"}};
    c.steps.push_back(strategic);
    out.push_back(std::move(c));
  }

  { // finalizers: delete marks, removing the last finalizer deletes
    semantic_case c{"finalizers", {}};
    const std::string ns = "sc-finalizers";
    c.steps.push_back(namespace_step(ns));
    json cm = config_map(ns, "cm1");
    cm["metadata"]["finalizers"] = json::array({"example.com/keep"});
    c.steps.push_back(
        step(make(verb::create, core("configmaps", ns), cm), 201));
    auto marked = step(make(verb::remove, core("configmaps", ns, "cm1")), 200);
    marked.fields = {{"/kind", "ConfigMap"},
                     {"/metadata/deletionGracePeriodSeconds", 0},
                     {"/metadata/finalizers/0", "example.com/keep"}};
    c.steps.push_back(marked);
    auto no_new = step(
        patch_of(core("configmaps", ns, "cm1"), patch_type::merge,
                 json{{"metadata",
                       {{"finalizers", json::array({"example.com/keep",
                                                    "example.com/new"})}}}}),
        422, "Invalid");
    c.steps.push_back(no_new);
    auto released
        = step(patch_of(core("configmaps", ns, "cm1"), patch_type::merge,
                        json{{"metadata", {{"finalizers", nullptr}}}}),
               200);
    c.steps.push_back(released);
    c.steps.push_back(step(make(verb::get, core("configmaps", ns, "cm1")), 404,
                           "NotFound", "configmaps \"cm1\" not found"));
    out.push_back(std::move(c));
  }

  { // DELETE preconditions name the Kind
    semantic_case c{"delete_preconditions", {}};
    const std::string ns = "sc-preconditions";
    c.steps.push_back(namespace_step(ns));
    auto created = step(
        make(verb::create, core("configmaps", ns), config_map(ns, "cm1")), 201);
    created.save_as = "cm1";
    c.steps.push_back(created);
    auto uid = step(
        make(verb::remove, core("configmaps", ns, "cm1"),
             json{{"preconditions",
                   {{"uid", "00000000-0000-0000-0000-000000000000"}}}}),
        409, "Conflict",
        "Operation cannot be fulfilled on ConfigMap \"cm1\": the UID in the "
        "precondition (00000000-0000-0000-0000-000000000000) does not match "
        "the "
        "UID in record (${cm1.uid}). The object might have been deleted and "
        "then recreated");
    uid.fields = {{"/details/kind", "ConfigMap"}};
    c.steps.push_back(uid);
    c.steps.push_back(step(
        make(verb::remove, core("configmaps", ns, "cm1"),
             json{{"preconditions", {{"resourceVersion", "1"}}}}),
        409, "Conflict",
        "Operation cannot be fulfilled on ConfigMap \"cm1\": the "
        "ResourceVersion in the precondition (1) does not match the "
        "ResourceVersion in record (${cm1.rv}). The object might have been "
        "modified"));
    c.steps.push_back(step(
        make(verb::remove, core("configmaps", ns, "cm1"),
             json{{"preconditions",
                   {{"uid", "${cm1.uid}"}, {"resourceVersion", "${cm1.rv}"}}}}),
        200));
    out.push_back(std::move(c));
  }

  { // generation: spec changes only, never through /status
    semantic_case c{"job_generation", {}};
    const std::string ns = "sc-generation";
    c.steps.push_back(namespace_step(ns));
    json job = json::parse(R"({"apiVersion":"batch/v1","kind":"Job",
      "metadata":{"name":"j1"},
      "spec":{"template":{"spec":{"restartPolicy":"Never",
        "containers":[{"name":"c","image":"busybox"}]}}}})");
    job["metadata"]["namespace"] = ns;
    resource_ref jobs{"batch", "v1", "jobs", ns, "", ""};
    resource_ref j1{"batch", "v1", "jobs", ns, "j1", ""};
    resource_ref j1_status{"batch", "v1", "jobs", ns, "j1", "status"};
    auto created = step(make(verb::create, jobs, job), 201);
    created.fields = {{"/metadata/generation", 1}};
    c.steps.push_back(created);
    auto labelled
        = step(patch_of(j1, patch_type::merge,
                        json{{"metadata", {{"labels", {{"a", "b"}}}}}}),
               200);
    labelled.fields = {{"/metadata/generation", 1}};
    c.steps.push_back(labelled);
    auto status_write = step(patch_of(j1_status, patch_type::merge,
                                      json{{"status", {{"active", 1}}}}),
                             200);
    status_write.fields = {{"/metadata/generation", 1}, {"/status/active", 1}};
    c.steps.push_back(status_write);
    auto ignored = step(
        patch_of(j1, patch_type::merge, json{{"status", {{"active", 5}}}}),
        200);
    ignored.fields = {{"/status/active", 1}, {"/metadata/generation", 1}};
    c.steps.push_back(ignored);
    auto spec_write = step(
        patch_of(j1, patch_type::merge, json{{"spec", {{"parallelism", 2}}}}),
        200);
    spec_write.fields = {{"/metadata/generation", 2}};
    c.steps.push_back(spec_write);
    out.push_back(std::move(c));
  }

  return out;
}

} // namespace aiperf::k8s::testing
