#include "k8s/api/json.hpp"
#include "k8s/object/status_json.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/k8s/support/semantic_cases.hpp"
#include "tests/support/caf_gtest.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace aiperf::k8s::sim {
namespace {

constexpr std::int64_t start_unix = 1'795'000'000; // 2026-11-18T11:06:40Z

/// Records what a watch delivers.
struct sink_log {
  std::vector<watch_event> events;
  int ends = 0;
  caf::error last_end;
};

watch_sink_actor::behavior_type sink_impl(watch_sink_actor::pointer,
                                          std::shared_ptr<sink_log> log) {
  return {
      [log](events_atom, std::uint64_t, std::vector<watch_event>& evs) {
        for (auto& e : evs)
          log->events.push_back(std::move(e));
      },
      [log](watch_end_atom, std::uint64_t, caf::error& err) {
        ++log->ends;
        log->last_end = std::move(err);
      },
  };
}

struct store_test : caf_gtest::fixture<> {
  store_actor store;

  store_test() { store = spawn(store_config{}); }

  store_actor spawn(store_config cfg) {
    cfg.admin_token = "admin-token";
    cfg.start_unix_seconds = start_unix;
    auto s = spawn_store(sys, std::move(cfg));
    EXPECT_TRUE(s) << (s ? "" : error_message(s.error()));
    drain();
    return s ? *s : store_actor{};
  }

  caf::expected<response> call(const k8s::request& r) {
    return request<response>(store, r);
  }

  caf::expected<response> call_on(const store_actor& s, const k8s::request& r) {
    return request<response>(s, r);
  }

  json ok_json(const k8s::request& r) {
    auto res = call(r);
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    if (!res)
      return json();
    return json::parse(res->body);
  }

  status failure(const k8s::request& r) {
    auto res = call(r);
    EXPECT_FALSE(res) << (res ? res->body.substr(0, 300) : "");
    if (res)
      return {};
    const auto* st = status_of(res.error());
    EXPECT_NE(st, nullptr) << error_message(res.error());
    return st ? *st : status{};
  }

  std::pair<std::uint64_t, std::shared_ptr<sink_log>> watch(k8s::request r) {
    auto log = std::make_shared<sink_log>();
    auto sink = sys.spawn(sink_impl, log);
    auto id
        = request<std::uint64_t>(store, watch_atom::value, std::move(r), sink);
    EXPECT_TRUE(id) << (id ? "" : error_message(id.error()));
    drain();
    return {id ? *id : 0, log};
  }
};

k8s::request make(verb v, resource_ref ref, const json& body = nullptr) {
  k8s::request r;
  r.verb = v;
  r.ref = std::move(ref);
  if (!body.is_null())
    r.body = body.dump();
  return r;
}

resource_ref core(std::string resource, std::string ns = {},
                  std::string name = {}, std::string sub = {}) {
  return {"",
          "v1",
          std::move(resource),
          std::move(ns),
          std::move(name),
          std::move(sub)};
}

json config_map(const std::string& ns, const std::string& name,
                json data = json::object()) {
  return json{{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"data", std::move(data)}};
}

k8s::request patch_req(resource_ref ref, patch_type t, const json& body) {
  auto r = make(verb::patch, std::move(ref));
  r.patch = t;
  r.body = body.dump();
  return r;
}

// --- the semantic table -----------------------------------------------------

TEST_F(store_test, every_semantic_case_holds_on_the_actor) {
  for (const auto& c : testing::semantic_cases()) {
    auto problems
        = testing::run_semantic_case(c, [this](const k8s::request& r) {
            testing::step_outcome out;
            auto res = call(r);
            if (res) {
              out.ok = true;
              out.code = res->code;
              out.body = res->body.empty() ? json() : json::parse(res->body);
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
          });
    for (const auto& p : problems)
      ADD_FAILURE() << p;
  }
}

// --- built-in state
// -----------------------------------------------------------

TEST_F(store_test, a_new_store_has_the_builtin_namespaces_and_their_contents) {
  for (const char* ns : {"default", "kube-system", "kube-public"}) {
    auto obj = ok_json(make(verb::get, core("namespaces", "", ns)));
    EXPECT_EQ(obj["status"]["phase"], "Active");
    EXPECT_EQ(obj["spec"]["finalizers"], json::array({"kubernetes"}));
    EXPECT_EQ(obj["metadata"]["labels"]["kubernetes.io/metadata.name"], ns);
    EXPECT_EQ(ok_json(make(verb::get, core("serviceaccounts", ns,
                                           "default")))["metadata"]["name"],
              "default");
    EXPECT_TRUE(ok_json(make(
        verb::get, core("configmaps", ns, "kube-root-ca.crt")))["data"]
                    .contains("ca.crt"));
  }
}

TEST_F(store_test, create_sets_uid_time_and_one_global_resource_version) {
  auto list = ok_json(make(verb::list, core("namespaces")));
  auto base
      = std::stoull(list["metadata"]["resourceVersion"].get<std::string>());
  auto cm = ok_json(make(verb::create, core("configmaps", "default"),
                         config_map("default", "a")));
  EXPECT_EQ(cm["metadata"]["resourceVersion"], std::to_string(base + 1));
  EXPECT_EQ(cm["metadata"]["uid"].get<std::string>().size(), 36u);
  EXPECT_EQ(cm["metadata"]["uid"].get<std::string>()[14], '4');
  EXPECT_EQ(cm["metadata"]["creationTimestamp"], "2026-11-18T11:06:40Z");
  // A different type shares the counter.
  auto secret = ok_json(make(verb::create, core("secrets", "default"),
                             json{{"apiVersion", "v1"},
                                  {"kind", "Secret"},
                                  {"metadata", {{"name", "s"}}}}));
  EXPECT_EQ(secret["metadata"]["resourceVersion"], std::to_string(base + 2));
  EXPECT_EQ(secret["metadata"]["namespace"], "default");
  // Simulated time moves the timestamps.
  advance_time(std::chrono::seconds(90));
  auto later = ok_json(make(verb::create, core("configmaps", "default"),
                            config_map("default", "b")));
  EXPECT_EQ(later["metadata"]["creationTimestamp"], "2026-11-18T11:08:10Z");
  // Key order is the Go struct's.
  std::vector<std::string> keys;
  for (auto it = later["metadata"].begin(); it != later["metadata"].end(); ++it)
    keys.push_back(it.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"name", "namespace", "uid",
                                      "resourceVersion", "creationTimestamp"}));
}

TEST_F(store_test, a_create_with_a_resource_version_is_an_internal_error) {
  auto cm = config_map("default", "a");
  cm["metadata"]["resourceVersion"] = "5";
  auto st = failure(make(verb::create, core("configmaps", "default"), cm));
  EXPECT_EQ(st.code, 500);
  EXPECT_EQ(st.reason, "InternalError");
  EXPECT_EQ(st.message, "Internal error occurred: resourceVersion should not "
                        "be set on objects to be created");
}

TEST_F(store_test, generate_name_appends_five_characters) {
  auto cm = config_map("default", "");
  cm["metadata"].erase("name");
  cm["metadata"]["generateName"] = "job-";
  auto obj = ok_json(make(verb::create, core("configmaps", "default"), cm));
  auto name = obj["metadata"]["name"].get<std::string>();
  ASSERT_EQ(name.size(), 9u);
  EXPECT_EQ(name.substr(0, 4), "job-");
}

TEST_F(store_test, an_invalid_name_is_422_with_the_upstream_message) {
  auto st = failure(make(verb::create, core("configmaps", "default"),
                         config_map("default", "Bad_Name")));
  EXPECT_EQ(st.code, 422);
  EXPECT_EQ(st.reason, "Invalid");
  EXPECT_EQ(st.details.kind, "ConfigMap");
  ASSERT_FALSE(st.details.causes.empty());
  EXPECT_EQ(st.details.causes[0].field, "metadata.name");
  EXPECT_EQ(st.message.substr(0, 31), "ConfigMap \"Bad_Name\" is invalid");
}

TEST_F(store_test, an_unserved_resource_is_the_plain_404) {
  auto res = call(make(verb::get, {"", "v1", "widgets", "default", "w", ""}));
  ASSERT_FALSE(res);
  EXPECT_TRUE(answers_plain_not_found(res.error()));
  ASSERT_NE(status_of(res.error()), nullptr);
  EXPECT_EQ(status_of(res.error())->message,
            "the server could not find the requested resource");
}

TEST_F(store_test, an_unconditional_update_and_a_no_op_update) {
  ok_json(make(verb::create, core("configmaps", "default"),
               config_map("default", "a", {{"k", "1"}})));
  auto updated = ok_json(make(verb::update, core("configmaps", "default", "a"),
                              config_map("default", "a", {{"k", "2"}})));
  EXPECT_EQ(updated["data"]["k"], "2");
  auto rv = updated["metadata"]["resourceVersion"];
  // The same content again writes nothing and keeps the resourceVersion.
  auto same = ok_json(make(verb::update, core("configmaps", "default", "a"),
                           config_map("default", "a", {{"k", "2"}})));
  EXPECT_EQ(same["metadata"]["resourceVersion"], rv);
  auto st = failure(make(verb::update, core("configmaps", "default", "b"),
                         config_map("default", "b")));
  EXPECT_EQ(st.code, 404);
  EXPECT_EQ(st.message, "configmaps \"b\" not found");
  st = failure(make(verb::update, core("configmaps", "default", "a"),
                    config_map("default", "c")));
  EXPECT_EQ(st.code, 400);
  EXPECT_EQ(st.message, "the name of the object (c) does not match the name "
                        "on the URL (a)");
}

TEST_F(store_test, strategic_merge_merges_containers_by_name) {
  json pod
      = {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", {{"name", "p"}}},
         {"spec",
          {{"containers", json::array({{{"name", "a"}, {"image", "x"}},
                                       {{"name", "b"}, {"image", "y"}}})}}}};
  ok_json(make(verb::create, core("pods", "default"), pod));
  auto patched = ok_json(patch_req(
      core("pods", "default", "p"), patch_type::strategic,
      json{
          {"spec",
           {{"containers", json::array({{{"name", "b"}, {"image", "z"}}})}}}}));
  ASSERT_EQ(patched["spec"]["containers"].size(), 2u);
  EXPECT_EQ(patched["spec"]["containers"][0]["image"], "x");
  EXPECT_EQ(patched["spec"]["containers"][1]["image"], "z");
  EXPECT_EQ(patched["status"]["phase"], "Pending");
}

TEST_F(store_test, delete_with_foreground_and_orphan_adds_gc_finalizers) {
  ok_json(make(verb::create, core("configmaps", "default"),
               config_map("default", "a")));
  auto obj = ok_json(make(verb::remove, core("configmaps", "default", "a"),
                          json{{"propagationPolicy", "Foreground"}}));
  EXPECT_EQ(obj["metadata"]["finalizers"], json::array({"foregroundDeletion"}));
  EXPECT_EQ(obj["metadata"]["deletionTimestamp"], "2026-11-18T11:06:40Z");
  // A second delete asking Orphan swaps the finalizer.
  obj = ok_json(make(verb::remove, core("configmaps", "default", "a"),
                     json{{"propagationPolicy", "Orphan"}}));
  EXPECT_EQ(obj["metadata"]["finalizers"], json::array({"orphan"}));
  // The GC removes it: the object goes.
  ok_json(patch_req(core("configmaps", "default", "a"), patch_type::merge,
                    json{{"metadata", {{"finalizers", nullptr}}}}));
  EXPECT_EQ(failure(make(verb::get, core("configmaps", "default", "a"))).code,
            404);
}

TEST_F(store_test, deleting_a_namespace_makes_it_terminating) {
  ok_json(make(verb::create, core("namespaces"),
               json{{"apiVersion", "v1"},
                    {"kind", "Namespace"},
                    {"metadata", {{"name", "bench"}}}}));
  auto ns = ok_json(make(verb::remove, core("namespaces", "", "bench")));
  EXPECT_EQ(ns["status"]["phase"], "Terminating");
  EXPECT_TRUE(ns["metadata"].contains("deletionTimestamp"));
  auto st = failure(make(verb::create, core("configmaps", "bench"),
                         config_map("bench", "c")));
  EXPECT_EQ(st.code, 403);
  EXPECT_EQ(st.reason, "Forbidden");
  EXPECT_EQ(st.message, "configmaps \"c\" is forbidden: unable to create new "
                        "content in namespace bench because it is being "
                        "terminated");
  ASSERT_EQ(st.details.causes.size(), 1u);
  EXPECT_EQ(st.details.causes[0].reason, "NamespaceTerminating");
  // The namespace controller finalizes it.
  ns["spec"]["finalizers"] = json::array();
  ok_json(make(verb::update, core("namespaces", "", "bench", "finalize"), ns));
  EXPECT_EQ(failure(make(verb::get, core("namespaces", "", "bench"))).code,
            404);
}

TEST_F(store_test, strategic_patch_on_a_custom_resource_is_415) {
  // Needs a CRD; the 415 comes before the object is looked up.
  json crd = {
      {"apiVersion", "apiextensions.k8s.io/v1"},
      {"kind", "CustomResourceDefinition"},
      {"metadata", {{"name", "widgets.example.com"}}},
      {"spec",
       {{"group", "example.com"},
        {"scope", "Namespaced"},
        {"names",
         {{"plural", "widgets"}, {"singular", "widget"}, {"kind", "Widget"}}},
        {"versions",
         json::array(
             {{{"name", "v1"},
               {"served", true},
               {"storage", true},
               {"schema",
                {{"openAPIV3Schema",
                  {{"type", "object"},
                   {"x-kubernetes-preserve-unknown-fields", true}}}}}}})}}}};
  auto created = ok_json(make(
      verb::create,
      {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""},
      crd));
  EXPECT_EQ(created["status"]["conditions"][1]["type"], "Established");
  auto st
      = failure(patch_req({"example.com", "v1", "widgets", "default", "w", ""},
                          patch_type::strategic, json::object()));
  EXPECT_EQ(st.code, 415);
  EXPECT_EQ(st.reason, "UnsupportedMediaType");
  EXPECT_EQ(st.message,
            "the body of the request was in an unknown format - accepted "
            "media types include: application/json-patch+json, "
            "application/merge-patch+json, application/apply-patch+yaml");
}

json widget_crd() {
  return json::parse(R"({
    "apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"widgets.example.com"},
    "spec":{"group":"example.com","scope":"Namespaced",
      "names":{"plural":"widgets","singular":"widget","kind":"Widget",
               "shortNames":["wd"]},
      "versions":[{"name":"v1","served":true,"storage":true,
        "subresources":{"status":{}},
        "schema":{"openAPIV3Schema":{"type":"object","properties":{
          "spec":{"type":"object",
            "x-kubernetes-validations":[{"rule":"self.image == oldSelf.image",
              "message":"spec.image is immutable"}],
            "properties":{
              "image":{"type":"string"},
              "replicas":{"type":"integer","minimum":1,"default":1}}},
          "status":{"type":"object","properties":{
            "phase":{"type":"string"}}}}}}}]}})");
}

json widget(const std::string& name, const std::string& image) {
  return json{{"apiVersion", "example.com/v1"},
              {"kind", "Widget"},
              {"metadata", {{"name", name}}},
              {"spec", {{"image", image}}},
              {"status", {{"phase", "Set"}}}};
}

resource_ref widgets(std::string name = {}, std::string sub = {}) {
  return {"example.com",   "v1",          "widgets", "default",
          std::move(name), std::move(sub)};
}

TEST_F(store_test, custom_resources_follow_their_crd) {
  auto crd = ok_json(make(
      verb::create,
      {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""},
      widget_crd()));
  EXPECT_EQ(crd["status"]["acceptedNames"]["kind"], "Widget");
  // Strict decoding names the pruned field.
  auto strict = make(verb::create, widgets(), [] {
    auto w = widget("w", "a:1");
    w["spec"]["x"] = 1;
    return w;
  }());
  strict.field_validation = "Strict";
  auto st = failure(strict);
  EXPECT_EQ(st.code, 400);
  EXPECT_EQ(st.message, "strict decoding error: unknown field \"spec.x\"");
  // Created: generation 1, defaults applied, status dropped, keys sorted.
  auto w = ok_json(make(verb::create, widgets(), widget("w", "a:1")));
  EXPECT_EQ(w["metadata"]["generation"], 1);
  EXPECT_EQ(w["spec"]["replicas"], 1);
  EXPECT_FALSE(w.contains("status"));
  EXPECT_EQ(w.begin().key(), "apiVersion");
  // Schema failures are 422 Invalid with causes.
  auto bad = widget("b", "a:1");
  bad["spec"]["replicas"] = 0;
  st = failure(make(verb::create, widgets(), bad));
  EXPECT_EQ(st.code, 422);
  EXPECT_EQ(st.reason, "Invalid");
  ASSERT_FALSE(st.details.causes.empty());
  EXPECT_EQ(st.details.causes[0].field, "spec.replicas");
  EXPECT_EQ(st.message.substr(0, 33), "Widget.example.com \"b\" is invalid");
  // A custom resource needs a resourceVersion to be replaced.
  st = failure(make(verb::update, widgets("w"), widget("w", "a:1")));
  EXPECT_EQ(st.code, 422);
  EXPECT_EQ(st.message, "Widget.example.com \"w\" is invalid: "
                        "metadata.resourceVersion: Invalid value: 0x0: must "
                        "be specified for an update");
  // The CEL transition rule holds on update.
  st = failure(patch_req(widgets("w"), patch_type::merge,
                         json{{"spec", {{"image", "b:2"}}}}));
  EXPECT_EQ(st.code, 422);
  EXPECT_NE(st.message.find("spec.image is immutable"), std::string::npos)
      << st.message;
  // generation: not for status or labels, yes for spec.
  auto s1 = ok_json(patch_req(widgets("w", "status"), patch_type::merge,
                              json{{"status", {{"phase", "Running"}}}}));
  EXPECT_EQ(s1["status"]["phase"], "Running");
  EXPECT_EQ(s1["metadata"]["generation"], 1);
  auto l1 = ok_json(patch_req(widgets("w"), patch_type::merge,
                              json{{"metadata", {{"labels", {{"a", "b"}}}}},
                                   {"status", {{"phase", "Ignored"}}}}));
  EXPECT_EQ(l1["metadata"]["generation"], 1);
  EXPECT_EQ(l1["status"]["phase"], "Running");
  auto g2 = ok_json(patch_req(widgets("w"), patch_type::merge,
                              json{{"spec", {{"replicas", 3}}}}));
  EXPECT_EQ(g2["metadata"]["generation"], 2);
  // Lists of custom resources carry kind and apiVersion per item.
  auto list = ok_json(make(verb::list, widgets()));
  EXPECT_EQ(list["kind"], "WidgetList");
  EXPECT_EQ(list["items"][0]["kind"], "Widget");
  // Deleting the CRD takes its resources and stops serving them.
  auto [id, log] = watch(make(verb::watch, widgets()));
  ok_json(make(verb::remove,
               {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "",
                "widgets.example.com", ""}));
  ASSERT_FALSE(log->events.empty());
  EXPECT_EQ(log->events.back().type, "DELETED");
  auto gone = call(make(verb::get, widgets("w")));
  ASSERT_FALSE(gone);
  EXPECT_TRUE(answers_plain_not_found(gone.error()));
  (void)id;
}

TEST_F(store_test, a_body_without_kind_takes_the_builtin_type_of_the_path) {
  json bare = {{"metadata", {{"name", "bare"}}}, {"data", {{"k", "v"}}}};
  auto made = ok_json(make(verb::create, core("configmaps", "default"), bare));
  EXPECT_EQ(made["kind"], "ConfigMap");
  EXPECT_EQ(made["apiVersion"], "v1");
  EXPECT_EQ(made["metadata"]["namespace"], "default");
  bare["data"]["k"] = "w";
  auto updated = ok_json(
      make(verb::update, core("configmaps", "default", "bare"), bare));
  EXPECT_EQ(updated["kind"], "ConfigMap");
  EXPECT_EQ(updated["apiVersion"], "v1");
  EXPECT_EQ(updated["data"]["k"], "w");
  auto got = ok_json(make(verb::get, core("configmaps", "default", "bare")));
  EXPECT_EQ(got["kind"], "ConfigMap");
  EXPECT_EQ(got["data"]["k"], "w");
}

TEST_F(store_test, a_custom_resource_without_kind_is_refused_by_the_decoder) {
  ok_json(make(
      verb::create,
      {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""},
      widget_crd()));
  auto bare = widget("w", "a:1");
  bare.erase("kind");
  bare.erase("apiVersion");
  auto create = make(verb::create, widgets(), bare);
  auto st = failure(create);
  EXPECT_EQ(st.code, 400);
  EXPECT_EQ(st.reason, "BadRequest");
  EXPECT_EQ(st.message, "Object 'Kind' is missing in '" + create.body + "'");
  ok_json(make(verb::create, widgets(), widget("w", "a:1")));
  auto update = make(verb::update, widgets("w"), bare);
  st = failure(update);
  EXPECT_EQ(st.code, 400);
  EXPECT_EQ(st.message, "Object 'Kind' is missing in '" + update.body + "'");
}

TEST_F(store_test, every_namespace_publishes_the_cluster_ca) {
  const std::string pem
      = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  store_config cfg;
  cfg.root_ca_pem = pem;
  store = spawn(cfg);
  for (const char* ns : {"default", "kube-system", "kube-public"})
    EXPECT_EQ(
        ok_json(make(verb::get, core("configmaps", ns,
                                     "kube-root-ca.crt")))["data"]["ca.crt"],
        pem)
        << ns;
  ok_json(make(verb::create, core("namespaces"),
               {{"apiVersion", "v1"},
                {"kind", "Namespace"},
                {"metadata", {{"name", "team-a"}}}}));
  auto cm = ok_json(
      make(verb::get, core("configmaps", "team-a", "kube-root-ca.crt")));
  EXPECT_EQ(cm["data"]["ca.crt"], pem);
  EXPECT_EQ(cm["metadata"]["annotations"]["kubernetes.io/description"]
                .get<std::string>()
                .substr(0, 25),
            "Contains a CA bundle that");
}

TEST_F(store_test, a_crd_whose_rule_does_not_compile_is_refused) {
  auto crd = widget_crd();
  crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
     ["x-kubernetes-validations"][0]["rule"]
      = "self.nope == 1";
  auto st = failure(make(
      verb::create,
      {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""},
      crd));
  EXPECT_EQ(st.code, 422);
  EXPECT_EQ(st.reason, "Invalid");
  ASSERT_FALSE(st.details.causes.empty());
  EXPECT_EQ(st.details.causes[0].field,
            "spec.validation.openAPIV3Schema.properties[spec]."
            "x-kubernetes-validations[0].rule");
  EXPECT_TRUE(
      answers_plain_not_found(call(make(verb::list, widgets())).error()));
}

TEST_F(store_test, mutating_admission_runs_before_schema_cel_and_validation) {
  // What the mutation does is chosen by the object's "mutate" label; the
  // schema, the CRD's rules and the built-in validation then judge what it
  // made of the object, not what the client sent.
  store_config cfg;
  cfg.mutating_admission = [](const k8s::request&, json& obj,
                              const json* old) -> caf::expected<void> {
    std::string how = obj.value("metadata", json::object())
                          .value("labels", json::object())
                          .value("mutate", "");
    if (how == "bad-label") {
      obj["metadata"]["labels"]["model"] = "Qwen/Qwen3-0.6B";
      return caf::unit;
    }
    if (how.empty() || obj.value("kind", "") != "Widget")
      return caf::unit;
    auto& spec = obj["spec"];
    if (how == "fix-replicas")
      spec["replicas"] = 2;
    else if (how == "zero-replicas")
      spec["replicas"] = 0;
    else if (how == "drop-replicas")
      spec.erase("replicas");
    else if (how == "add-unknown")
      spec["bogus"] = true;
    else if (how == "keep-image" && old != nullptr)
      spec["image"] = (*old)["spec"]["image"];
    return caf::unit;
  };
  store = spawn(std::move(cfg));
  ok_json(make(
      verb::create,
      {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""},
      widget_crd()));
  auto labelled = [](const std::string& name, const std::string& how) {
    auto w = widget(name, "a:1");
    w["metadata"]["labels"] = {{"mutate", how}};
    return w;
  };
  // A client's invalid object made valid by the mutation is accepted ...
  auto fixed = labelled("fixed", "fix-replicas");
  fixed["spec"]["replicas"] = 0;
  EXPECT_EQ(ok_json(make(verb::create, widgets(), fixed))["spec"]["replicas"],
            2);
  // ... and a valid one the mutation breaks is refused by the schema.
  auto st = failure(
      make(verb::create, widgets(), labelled("zeroed", "zero-replicas")));
  EXPECT_EQ(st.code, 422);
  ASSERT_EQ(st.details.causes.size(), 1u);
  EXPECT_EQ(st.details.causes[0].field, "spec.replicas");
  // Defaults and pruning apply to the mutated object too.
  auto dropped = labelled("dropped", "drop-replicas");
  dropped["spec"]["replicas"] = 5;
  auto d = ok_json(make(verb::create, widgets(), dropped));
  EXPECT_EQ(d["spec"]["replicas"], 1);
  auto u = ok_json(
      make(verb::create, widgets(), labelled("unknown", "add-unknown")));
  EXPECT_FALSE(u["spec"].contains("bogus"));
  // The CRD's rule (the image is immutable) sees the mutated update.
  auto kept = ok_json(
      make(verb::create, widgets(), labelled("kept", "keep-image")));
  kept["spec"]["image"] = "b:2";
  auto updated = ok_json(make(verb::update, widgets("kept"), kept));
  EXPECT_EQ(updated["spec"]["image"], "a:1");
  // Built-in kinds alike: validation sees the label the mutation added.
  auto cm = config_map("default", "bad");
  cm["metadata"]["labels"] = {{"mutate", "bad-label"}};
  st = failure(make(verb::create, core("configmaps", "default"), cm));
  EXPECT_EQ(st.code, 422);
  ASSERT_EQ(st.details.causes.size(), 1u);
  EXPECT_EQ(st.details.causes[0].field, "metadata.labels");
}

k8s::request apply_req(const std::string& manager, const json& body,
                       bool force = false) {
  auto r = patch_req(core("configmaps", "default", "cfg"), patch_type::apply,
                     body);
  r.field_manager = manager;
  r.force = force;
  return r;
}

TEST_F(store_test, server_side_apply_one_manager_and_disjoint_managers) {
  auto created = call(
      apply_req("m1", config_map("default", "cfg", {{"a", "1"}, {"b", "2"}})));
  ASSERT_TRUE(created) << error_message(created.error());
  EXPECT_EQ(created->code, 201);
  auto obj = json::parse(created->body);
  ASSERT_EQ(obj["metadata"]["managedFields"].size(), 1u);
  const auto& entry = obj["metadata"]["managedFields"][0];
  EXPECT_EQ(entry["manager"], "m1");
  EXPECT_EQ(entry["operation"], "Apply");
  EXPECT_EQ(entry["fieldsType"], "FieldsV1");
  EXPECT_EQ(entry["fieldsV1"],
            json::parse(R"({"f:data":{"f:a":{},"f:b":{}}})"));
  // The same apply again writes nothing.
  auto again = ok_json(
      apply_req("m1", config_map("default", "cfg", {{"a", "1"}, {"b", "2"}})));
  EXPECT_EQ(again["metadata"]["resourceVersion"],
            obj["metadata"]["resourceVersion"]);
  // A field left out of the manager's next apply goes.
  auto less
      = ok_json(apply_req("m1", config_map("default", "cfg", {{"a", "1"}})));
  EXPECT_FALSE(less["data"].contains("b"));
  // A second manager with its own fields.
  auto both
      = ok_json(apply_req("m2", config_map("default", "cfg", {{"c", "3"}})));
  EXPECT_EQ(both["data"], (json{{"a", "1"}, {"c", "3"}}));
  EXPECT_EQ(both["metadata"]["managedFields"].size(), 2u);
  // Changing the other's field conflicts ...
  auto st = failure(
      apply_req("m2", config_map("default", "cfg", {{"a", "9"}, {"c", "3"}})));
  EXPECT_EQ(st.code, 409);
  EXPECT_EQ(st.reason, "Conflict");
  EXPECT_EQ(st.message,
            "Apply failed with 1 conflict: conflict with \"m1\": .data.a");
  ASSERT_EQ(st.details.causes.size(), 1u);
  EXPECT_EQ(st.details.causes[0].reason, "FieldManagerConflict");
  EXPECT_EQ(st.details.causes[0].field, ".data.a");
  // ... unless forced, which takes it over.
  auto forced = ok_json(apply_req(
      "m2", config_map("default", "cfg", {{"a", "9"}, {"c", "3"}}), true));
  EXPECT_EQ(forced["data"]["a"], "9");
  ASSERT_EQ(forced["metadata"]["managedFields"].size(), 1u);
  EXPECT_EQ(forced["metadata"]["managedFields"][0]["manager"], "m2");
  // fieldManager is required.
  auto no_manager = apply_req("", config_map("default", "cfg"));
  EXPECT_EQ(failure(no_manager).message,
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required "
            "value: is required for apply patch");
}

TEST_F(store_test, server_side_apply_merges_containers_by_name) {
  // A Deployment's template: a pod's own containers may not change.
  json deploy = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"d"},
    "spec":{"selector":{"matchLabels":{"app":"d"}},
      "template":{"metadata":{"labels":{"app":"d"}},
        "spec":{"containers":[{"name":"a","image":"x:1"}]}}}})");
  resource_ref deployments{"apps", "v1", "deployments", "default", "d", ""};
  auto r = patch_req(deployments, patch_type::apply, deploy);
  r.field_manager = "m1";
  ok_json(r);
  json other = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"d"},
    "spec":{"template":{"spec":{"containers":[
      {"name":"a","env":[{"name":"E","value":"1"}]}]}}}})");
  r.body = other.dump();
  r.field_manager = "m2";
  auto merged = ok_json(r);
  const auto& containers = merged["spec"]["template"]["spec"]["containers"];
  ASSERT_EQ(containers.size(), 1u);
  EXPECT_EQ(containers[0]["image"], "x:1");
  EXPECT_EQ(containers[0]["env"][0]["name"], "E");
}

TEST_F(store_test, get_and_list_answer_tables_when_asked) {
  auto r = make(verb::list, core("configmaps", "default"));
  r.as_table = true;
  auto table = ok_json(r);
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["apiVersion"], "meta.k8s.io/v1");
  ASSERT_EQ(table["rows"].size(), 1u);
  EXPECT_EQ(table["rows"][0]["cells"][0], "kube-root-ca.crt");
  auto g = make(verb::get, core("namespaces", "", "default"));
  g.as_table = true;
  EXPECT_EQ(ok_json(g)["rows"].size(), 1u);
}

TEST_F(store_test, a_watch_asked_for_tables_sends_the_columns_once) {
  auto w = make(verb::watch, core("configmaps", "default"));
  w.resource_version = "0";
  w.as_table = true;
  auto [id, log] = watch(w);
  ok_json(make(verb::create, core("configmaps", "default"),
               config_map("default", "t")));
  ASSERT_EQ(log->events.size(), 2u);
  auto first = json::parse(log->events[0].object);
  EXPECT_EQ(log->events[0].type, "ADDED");
  EXPECT_EQ(first["kind"], "Table");
  EXPECT_EQ(first["columnDefinitions"][0]["name"], "Name");
  EXPECT_EQ(first["rows"][0]["cells"][0], "kube-root-ca.crt");
  auto second = json::parse(log->events[1].object);
  EXPECT_EQ(second["kind"], "Table");
  EXPECT_TRUE(second["columnDefinitions"].is_null());
  EXPECT_EQ(second["rows"][0]["cells"][0], "t");
}

// --- list
// -----------------------------------------------------------------------

TEST_F(store_test, list_pages_with_limit_and_continue_at_one_snapshot) {
  for (const char* n : {"a", "b", "c"})
    ok_json(make(verb::create, core("configmaps", "default"),
                 config_map("default", n, {{"x", "1"}})));
  auto r = make(verb::list, core("configmaps", "default"));
  r.label_selector = "";
  r.limit = 2;
  auto page1 = ok_json(r);
  ASSERT_EQ(page1["items"].size(), 2u);
  EXPECT_EQ(page1["kind"], "ConfigMapList");
  EXPECT_FALSE(page1["items"][0].contains("kind"));
  EXPECT_EQ(page1["items"][0]["metadata"]["name"], "a");
  EXPECT_EQ(page1["metadata"]["remainingItemCount"], 2); // c, kube-root-ca.crt
  auto rv = page1["metadata"]["resourceVersion"];
  // A change between pages does not show in the second page.
  ok_json(make(verb::remove, core("configmaps", "default", "c")));
  r.continue_token = page1["metadata"]["continue"];
  auto page2 = ok_json(r);
  ASSERT_EQ(page2["items"].size(), 2u);
  EXPECT_EQ(page2["items"][0]["metadata"]["name"], "c");
  EXPECT_EQ(page2["items"][1]["metadata"]["name"], "kube-root-ca.crt");
  EXPECT_EQ(page2["metadata"]["resourceVersion"], rv);
  EXPECT_FALSE(page2["metadata"].contains("continue"));
}

TEST_F(store_test, list_selectors_and_errors) {
  auto a = config_map("default", "a");
  a["metadata"]["labels"] = {{"app", "x"}};
  ok_json(make(verb::create, core("configmaps", "default"), a));
  ok_json(make(verb::create, core("configmaps", "default"),
               config_map("default", "b")));
  auto r = make(verb::list, core("configmaps", "default"));
  r.label_selector = "app=x";
  auto l = ok_json(r);
  ASSERT_EQ(l["items"].size(), 1u);
  EXPECT_EQ(l["items"][0]["metadata"]["name"], "a");
  r.label_selector.clear();
  r.field_selector = "metadata.name=b";
  l = ok_json(r);
  ASSERT_EQ(l["items"].size(), 1u);
  EXPECT_EQ(l["items"][0]["metadata"]["name"], "b");
  r.field_selector = "spec.x=1";
  EXPECT_EQ(failure(r).code, 400);
  r.field_selector.clear();
  r.resource_version_match = "Exact";
  auto st = failure(r);
  EXPECT_EQ(st.code, 422);
  EXPECT_EQ(st.message, "ListOptions.meta.k8s.io \"\" is invalid: "
                        "resourceVersionMatch: Forbidden: resourceVersionMatch "
                        "is forbidden unless resourceVersion is provided");
}

TEST_F(store_test, event_field_selectors_on_involved_object_and_reason) {
  // e3 is about an earlier pod of the same name: only its uid tells.
  for (auto [name, reason, uid] : {std::tuple{"e1", "Started", "uid-1"},
                                   std::tuple{"e2", "Failed", "uid-1"},
                                   std::tuple{"e3", "Failed", "uid-0"}}) {
    json ev = {{"apiVersion", "v1"},
               {"kind", "Event"},
               {"metadata", {{"name", name}}},
               {"involvedObject",
                {{"kind", "Pod"},
                 {"name", "p1"},
                 {"namespace", "default"},
                 {"uid", uid}}},
               {"reason", reason},
               {"type", "Normal"}};
    ok_json(make(verb::create, core("events", "default"), ev));
  }
  auto r = make(verb::list, core("events", "default"));
  r.field_selector = "involvedObject.name=p1,reason=Failed";
  auto l = ok_json(r);
  ASSERT_EQ(l["items"].size(), 2u);
  r.field_selector = "involvedObject.uid=uid-1,reason=Failed";
  l = ok_json(r);
  ASSERT_EQ(l["items"].size(), 1u);
  EXPECT_EQ(l["items"][0]["metadata"]["name"], "e2");
  r.field_selector = "involvedObject.uid!=uid-1";
  l = ok_json(r);
  ASSERT_EQ(l["items"].size(), 1u);
  EXPECT_EQ(l["items"][0]["metadata"]["name"], "e3");
}

TEST_F(store_test, an_exact_list_of_a_compacted_resource_version_is_410) {
  store_config cfg;
  cfg.watch_history = 2;
  store = spawn(cfg);
  for (const char* n : {"a", "b", "c", "d"})
    ok_json(make(verb::create, core("configmaps", "default"),
                 config_map("default", n)));
  auto r = make(verb::list, core("configmaps", "default"));
  r.resource_version = "3";
  r.resource_version_match = "Exact";
  auto st = failure(r);
  EXPECT_EQ(st.code, 410);
  EXPECT_EQ(st.reason, "Expired");
}

// --- watch
// ---------------------------------------------------------------------

TEST_F(store_test, a_watch_without_resource_version_starts_with_added) {
  auto r = make(verb::watch, core("serviceaccounts"));
  auto [id, log] = watch(r);
  ASSERT_EQ(log->events.size(), 3u);
  EXPECT_EQ(log->events[0].type, "ADDED");
  auto obj = json::parse(log->events[0].object);
  EXPECT_EQ(obj["kind"], "ServiceAccount");
  EXPECT_EQ(obj["apiVersion"], "v1");
  EXPECT_EQ(obj["metadata"]["namespace"], "default");
  ok_json(make(verb::create, core("serviceaccounts", "default"),
               json{{"apiVersion", "v1"},
                    {"kind", "ServiceAccount"},
                    {"metadata", {{"name", "x"}}}}));
  ASSERT_EQ(log->events.size(), 4u);
  EXPECT_EQ(log->events[3].type, "ADDED");
  (void)id;
}

TEST_F(store_test, a_watch_from_a_resource_version_sees_what_came_after) {
  auto cm = ok_json(make(verb::create, core("configmaps", "default"),
                         config_map("default", "a", {{"k", "1"}})));
  auto rv = cm["metadata"]["resourceVersion"].get<std::string>();
  ok_json(patch_req(core("configmaps", "default", "a"), patch_type::merge,
                    json{{"data", {{"k", "2"}}}}));
  auto r = make(verb::watch, core("configmaps", "default"));
  r.resource_version = rv;
  auto [id, log] = watch(r);
  ASSERT_EQ(log->events.size(), 1u);
  EXPECT_EQ(log->events[0].type, "MODIFIED");
  EXPECT_EQ(json::parse(log->events[0].object)["data"]["k"], "2");
  auto del = call(make(verb::remove, core("configmaps", "default", "a")));
  ASSERT_TRUE(del);
  ASSERT_EQ(log->events.size(), 2u);
  EXPECT_EQ(log->events[1].type, "DELETED");
  auto deleted = json::parse(log->events[1].object);
  // DELETED carries the deletion's resourceVersion.
  auto list = ok_json(make(verb::list, core("configmaps", "default")));
  EXPECT_EQ(deleted["metadata"]["resourceVersion"],
            list["metadata"]["resourceVersion"]);
  EXPECT_EQ(deleted["data"]["k"], "2");
  (void)id;
}

TEST_F(store_test, a_label_selector_turns_leaving_into_deleted) {
  auto a = config_map("default", "a");
  a["metadata"]["labels"] = {{"app", "x"}};
  ok_json(make(verb::create, core("configmaps", "default"), a));
  auto r = make(verb::watch, core("configmaps", "default"));
  r.label_selector = "app=x";
  auto [id, log] = watch(r);
  ASSERT_EQ(log->events.size(), 1u);
  ok_json(patch_req(core("configmaps", "default", "a"), patch_type::merge,
                    json{{"metadata", {{"labels", {{"app", "y"}}}}}}));
  ASSERT_EQ(log->events.size(), 2u);
  EXPECT_EQ(log->events[1].type, "DELETED");
  ok_json(patch_req(core("configmaps", "default", "a"), patch_type::merge,
                    json{{"metadata", {{"labels", {{"app", "x"}}}}}}));
  ASSERT_EQ(log->events.size(), 3u);
  EXPECT_EQ(log->events[2].type, "ADDED");
  (void)id;
}

TEST_F(store_test, a_too_old_watch_gets_one_expired_error_then_ends) {
  store_config cfg;
  cfg.watch_history = 2;
  store = spawn(cfg);
  for (const char* n : {"a", "b", "c", "d"})
    ok_json(make(verb::create, core("configmaps", "default"),
                 config_map("default", n)));
  auto r = make(verb::watch, core("configmaps", "default"));
  r.resource_version = "2";
  auto [id, log] = watch(r);
  ASSERT_EQ(log->events.size(), 1u);
  EXPECT_EQ(log->events[0].type, "ERROR");
  auto st = json::parse(log->events[0].object);
  EXPECT_EQ(st["code"], 410);
  EXPECT_EQ(st["reason"], "Expired");
  EXPECT_EQ(st["message"].get<std::string>().substr(0, 27),
            "too old resource version: 2");
  EXPECT_EQ(log->ends, 1);
  EXPECT_FALSE(log->last_end);
  (void)id;
}

TEST_F(store_test, bookmarks_and_the_timeout_follow_simulated_time) {
  auto r = make(verb::watch, core("configmaps", "default"));
  r.resource_version = "0";
  r.allow_watch_bookmarks = true;
  r.timeout_seconds = 150;
  auto [id, log] = watch(r);
  auto initial = log->events.size();
  EXPECT_EQ(initial, 1u); // kube-root-ca.crt
  advance_time(std::chrono::seconds(60));
  ASSERT_EQ(log->events.size(), initial + 1);
  EXPECT_EQ(log->events.back().type, "BOOKMARK");
  auto bm = json::parse(log->events.back().object);
  EXPECT_EQ(bm["kind"], "ConfigMap");
  EXPECT_TRUE(bm["metadata"].contains("resourceVersion"));
  EXPECT_EQ(log->ends, 0);
  advance_time(std::chrono::seconds(90));
  EXPECT_EQ(log->ends, 1);
  EXPECT_FALSE(log->last_end);
  (void)id;
}

TEST_F(store_test, unwatch_and_drop_end_watches) {
  auto [id, log] = watch(make(verb::watch, core("configmaps")));
  self->send(store, unwatch_atom::value, id);
  drain();
  EXPECT_EQ(log->ends, 1);
  EXPECT_TRUE(log->last_end);
  auto [id2, log2] = watch(make(verb::watch, core("configmaps")));
  auto n = request<std::uint64_t>(store, drop_watches_atom::value,
                                  std::string{"configmaps"});
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(log2->ends, 1);
  (void)id2;
}

TEST_F(store_test, dry_run_stores_nothing_and_tells_no_watch) {
  auto [id, log] = watch(make(verb::watch, core("configmaps", "default")));
  auto before = log->events.size();
  auto r = make(verb::create, core("configmaps", "default"),
                config_map("default", "dry"));
  r.dry_run = true;
  auto obj = ok_json(r);
  EXPECT_EQ(obj["metadata"]["name"], "dry");
  EXPECT_FALSE(obj["metadata"].contains("resourceVersion"));
  EXPECT_EQ(log->events.size(), before);
  EXPECT_EQ(failure(make(verb::get, core("configmaps", "default", "dry"))).code,
            404);
  (void)id;
}

// --- discovery, authentication, reset, durability
// ----------------------------------

TEST_F(store_test, version_openapi_and_unknown_paths) {
  auto v = request<response>(store, discovery_atom::value,
                             std::string{"/version"});
  ASSERT_TRUE(v);
  EXPECT_EQ(json::parse(v->body)["major"], "1");
  auto o = request<response>(store, discovery_atom::value,
                             std::string{"/openapi/v2"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->code, 200);
  EXPECT_TRUE(o->body.empty());
  auto none = request<response>(store, discovery_atom::value,
                                std::string{"/openapi/v3"});
  ASSERT_FALSE(none);
  EXPECT_TRUE(answers_plain_not_found(none.error()));
}

TEST_F(store_test, discovery_lists_builtins_and_installed_crds) {
  auto api
      = request<response>(store, discovery_atom::value, std::string{"/api/v1"});
  ASSERT_TRUE(api);
  auto doc = json::parse(api->body);
  EXPECT_EQ(doc["kind"], "APIResourceList");
  bool has_cm = false;
  for (const auto& r : doc["resources"])
    if (r["name"] == "configmaps")
      has_cm = r["shortNames"] == json::array({"cm"});
  EXPECT_TRUE(has_cm);
  auto none = request<response>(store, discovery_atom::value,
                                std::string{"/apis/example.com/v1"});
  ASSERT_FALSE(none);
  EXPECT_TRUE(answers_plain_not_found(none.error()));
}

TEST_F(store_test, field_validation_strict_warn_and_ignore_on_builtins) {
  auto cm = config_map("default", "a");
  cm["spec"] = {{"x", 1}};
  cm["bogus"] = true;
  auto r = make(verb::create, core("configmaps", "default"), cm);
  r.field_validation = "Strict";
  auto st = failure(r);
  EXPECT_EQ(st.code, 400);
  EXPECT_EQ(st.reason, "BadRequest");
  EXPECT_EQ(st.message, "strict decoding error: unknown field \"spec\", "
                        "unknown field \"bogus\"");
  r.field_validation = "Warn";
  auto res = call(r);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->warnings,
            (std::vector<std::string>{"unknown field \"spec\"",
                                      "unknown field \"bogus\""}));
  r.field_validation = "Ignore";
  cm["metadata"]["name"] = "b";
  r.body = cm.dump();
  res = call(r);
  ASSERT_TRUE(res);
  EXPECT_TRUE(res->warnings.empty());
}

TEST_F(store_test, size_limits_of_requests_and_stored_objects) {
  auto big
      = config_map("default", "big", {{"k", std::string(1600 * 1024, 'x')}});
  auto st = failure(make(verb::create, core("configmaps", "default"), big));
  // ConfigMap validation sees it first (1 MiB of data).
  EXPECT_EQ(st.code, 422);
  json secret = {
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata",
       {{"name", "s"}, {"annotations", {{"a", std::string(250 * 1024, 'y')}}}}},
      {"data", {{"k", std::string(1'386'664, 'A')}}}};
  auto r = make(verb::create, core("secrets", "default"), secret);
  st = failure(r);
  EXPECT_EQ(st.code, 500);
  EXPECT_EQ(st.message, "etcdserver: request is too large");
  r.body = std::string(3 * 1024 * 1024 + 1, ' ');
  st = failure(r);
  EXPECT_EQ(st.code, 413);
  EXPECT_EQ(st.message, "Request entity too large: limit is 3145728");
}

TEST_F(store_test, the_admin_token_authenticates_and_others_are_401) {
  auto u = request<user_info>(store, authenticate_atom::value,
                              std::string{"admin-token"});
  ASSERT_TRUE(u);
  EXPECT_EQ(*u, admin_user());
  auto bad = request<user_info>(store, authenticate_atom::value,
                                std::string{"nope"});
  ASSERT_FALSE(bad);
  ASSERT_NE(status_of(bad.error()), nullptr);
  EXPECT_EQ(status_of(bad.error())->code, 401);
  EXPECT_EQ(status_of(bad.error())->reason, "Unauthorized");
}

std::string issue_token(store_test& t, const json& spec = json::object()) {
  auto res = t.call(make(verb::create,
                         core("serviceaccounts", "default", "default", "token"),
                         json{{"apiVersion", "authentication.k8s.io/v1"},
                              {"kind", "TokenRequest"},
                              {"spec", spec}}));
  EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
  if (!res)
    return {};
  EXPECT_EQ(res->code, 201);
  return json::parse(res->body)["status"]["token"].get<std::string>();
}

TEST_F(store_test, a_token_request_issues_a_token_rbac_then_decides) {
  auto token = issue_token(*this);
  auto user = request<user_info>(store, authenticate_atom::value, token);
  ASSERT_TRUE(user) << error_message(user.error());
  EXPECT_EQ(user->username, "system:serviceaccount:default:default");
  auto list = make(verb::list, core("configmaps", "default"));
  list.user = *user;
  auto st = failure(list);
  EXPECT_EQ(st.code, 403);
  EXPECT_EQ(st.reason, "Forbidden");
  EXPECT_EQ(st.message, "configmaps is forbidden: User "
                        "\"system:serviceaccount:default:default\" cannot list "
                        "resource \"configmaps\" in API group \"\" in the "
                        "namespace \"default\"");
  // A Role and its binding grant it.
  ok_json(make(verb::create,
               {"rbac.authorization.k8s.io", "v1", "roles", "default", "", ""},
               json::parse(R"({"apiVersion":"rbac.authorization.k8s.io/v1",
                 "kind":"Role","metadata":{"name":"reader"},
                 "rules":[{"apiGroups":[""],"resources":["configmaps"],
                           "verbs":["get","list"]}]})")));
  ok_json(make(
      verb::create,
      {"rbac.authorization.k8s.io", "v1", "rolebindings", "default", "", ""},
      json::parse(R"({"apiVersion":"rbac.authorization.k8s.io/v1",
                 "kind":"RoleBinding","metadata":{"name":"reader"},
                 "roleRef":{"apiGroup":"rbac.authorization.k8s.io",
                            "kind":"Role","name":"reader"},
                 "subjects":[{"kind":"ServiceAccount","name":"default",
                              "namespace":"default"}]})")));
  EXPECT_TRUE(call(list));
  auto del
      = make(verb::remove, core("configmaps", "default", "kube-root-ca.crt"));
  del.user = *user;
  EXPECT_EQ(failure(del).code, 403);
  // kubectl auth can-i
  auto ssar = make(
      verb::create,
      {"authorization.k8s.io", "v1", "selfsubjectaccessreviews", "", "", ""},
      json::parse(R"({"apiVersion":"authorization.k8s.io/v1",
                     "kind":"SelfSubjectAccessReview",
                     "spec":{"resourceAttributes":{"namespace":"default",
                       "verb":"list","resource":"configmaps"}}})"));
  ssar.user = *user;
  auto review = ok_json(ssar);
  EXPECT_EQ(review["status"]["allowed"], true);
  // The admin impersonating the account is held to its rights.
  auto as
      = make(verb::remove, core("configmaps", "default", "kube-root-ca.crt"));
  as.impersonate_user = "system:serviceaccount:default:default";
  EXPECT_EQ(failure(as).code, 403);
}

TEST_F(store_test, a_pod_bound_token_dies_with_its_pod) {
  json pod
      = {{"apiVersion", "v1"},
         {"kind", "Pod"},
         {"metadata", {{"name", "p"}}},
         {"spec",
          {{"containers", json::array({{{"name", "a"}, {"image", "x:1"}}})}}}};
  auto created = ok_json(make(verb::create, core("pods", "default"), pod));
  auto token
      = issue_token(*this, json{{"boundObjectRef",
                                 {{"kind", "Pod"},
                                  {"apiVersion", "v1"},
                                  {"name", "p"},
                                  {"uid", created["metadata"]["uid"]}}}});
  auto user = request<user_info>(store, authenticate_atom::value, token);
  ASSERT_TRUE(user) << error_message(user.error());
  EXPECT_EQ(user->extra["authentication.kubernetes.io/pod-name"],
            std::vector<std::string>{"p"});
  auto review = ok_json(make(
      verb::create, {"authentication.k8s.io", "v1", "tokenreviews", "", "", ""},
      json{{"apiVersion", "authentication.k8s.io/v1"},
           {"kind", "TokenReview"},
           {"spec", {{"token", token}}}}));
  EXPECT_EQ(review["status"]["authenticated"], true);
  ok_json(make(verb::remove, core("pods", "default", "p")));
  auto refused = request<user_info>(store, authenticate_atom::value, token);
  ASSERT_FALSE(refused);
  EXPECT_EQ(status_of(refused.error())->code, 401);
}

TEST_F(store_test, reset_without_state_ends_watches_and_forgets_objects) {
  auto a = ok_json(make(verb::create, core("configmaps", "default"),
                        config_map("default", "a")));
  auto [id, log] = watch(make(verb::watch, core("configmaps")));
  auto rv = request<std::string>(store, reset_atom::value, false);
  ASSERT_TRUE(rv);
  EXPECT_EQ(log->ends, 1);
  EXPECT_TRUE(log->last_end);
  EXPECT_EQ(failure(make(verb::get, core("configmaps", "default", "a"))).code,
            404);
  // The built-ins are made again, after every resourceVersion seen before.
  auto ns = ok_json(make(verb::get, core("namespaces", "", "default")));
  EXPECT_GT(std::stoull(ns["metadata"]["resourceVersion"].get<std::string>()),
            std::stoull(a["metadata"]["resourceVersion"].get<std::string>()));
  auto list = ok_json(make(verb::list, core("configmaps")));
  EXPECT_EQ(list["metadata"]["resourceVersion"], *rv);
  (void)id;
}

TEST_F(store_test,
       a_second_store_on_the_state_dir_sees_every_acknowledged_write) {
  auto dir = std::filesystem::temp_directory_path()
             / ("k8s_sim_store_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  store_config cfg;
  cfg.state_dir = dir.string();
  auto first = spawn(cfg);
  ASSERT_TRUE(
      call_on(first, make(verb::create, core("configmaps", "default"),
                          config_map("default", "kept", {{"k", "v"}}))));
  ASSERT_TRUE(
      call_on(first, make(verb::remove, core("configmaps", "kube-public",
                                             "kube-root-ca.crt"))));
  auto before = call_on(first, make(verb::list, core("configmaps")));
  ASSERT_TRUE(before);
  auto second = spawn(cfg);
  auto after = call_on(second, make(verb::list, core("configmaps")));
  ASSERT_TRUE(after);
  EXPECT_EQ(json::parse(after->body), json::parse(before->body));
  // The counter continues from the log.
  auto next = call_on(second, make(verb::create, core("configmaps", "default"),
                                   config_map("default", "n")));
  ASSERT_TRUE(next);
  EXPECT_EQ(std::stoull(json::parse(next->body)["metadata"]["resourceVersion"]
                            .get<std::string>()),
            std::stoull(json::parse(before->body)["metadata"]["resourceVersion"]
                            .get<std::string>())
                + 1);
  std::filesystem::remove_all(dir);
}

TEST_F(store_test, a_restart_with_another_ca_republishes_it) {
  auto dir = std::filesystem::temp_directory_path()
             / ("k8s_sim_store_ca_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  store_config cfg;
  cfg.state_dir = dir.string();
  cfg.root_ca_pem = "first CA\n";
  auto first = spawn(cfg);
  ASSERT_TRUE(call_on(first, make(verb::create, core("namespaces"),
                                  {{"apiVersion", "v1"},
                                   {"kind", "Namespace"},
                                   {"metadata", {{"name", "team-b"}}}})));
  cfg.root_ca_pem = "second CA\n";
  auto second = spawn(cfg);
  for (const char* ns : {"default", "team-b"}) {
    auto got = call_on(
        second, make(verb::get, core("configmaps", ns, "kube-root-ca.crt")));
    ASSERT_TRUE(got) << ns;
    EXPECT_EQ(json::parse(got->body)["data"]["ca.crt"], "second CA\n") << ns;
  }
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace aiperf::k8s::sim
