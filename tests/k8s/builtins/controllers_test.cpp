// The garbage collector and the namespace controller against the store
// actor, on the deterministic test coordinator: background, foreground and
// orphan propagation, dangling owners, and namespace deletion waiting on a
// finalizer.
#include "k8s/api/json.hpp"
#include "k8s/sim/controllers/controllers.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace aiperf::k8s::sim {
namespace {

struct deletions {
  std::vector<std::string> names; // DELETED events, in order
};

watch_sink_actor::behavior_type
record_deletions(watch_sink_actor::pointer, std::shared_ptr<deletions> log) {
  return {
      [log](events_atom, std::uint64_t, std::vector<watch_event>& events) {
        for (const auto& e : events)
          if (e.type == "DELETED")
            log->names.push_back(json::parse(e.object)["metadata"]["name"]);
      },
      [](watch_end_atom, std::uint64_t, caf::error&) {},
  };
}

struct controllers_test : caf_gtest::fixture<> {
  store_actor store;

  controllers_test() {
    store_config cfg;
    cfg.start_unix_seconds = 1'795'000'000;
    auto s = spawn_store(sys, cfg);
    EXPECT_TRUE(s) << (s ? "" : error_message(s.error()));
    store = *s;
    drain();
  }

  caf::expected<response> call(verb v, resource_ref ref,
                               const json& body = nullptr) {
    k8s::request r;
    r.verb = v;
    r.ref = std::move(ref);
    if (!body.is_null())
      r.body = body.dump();
    return request<response>(caf::actor_cast<api_actor>(store), r);
  }

  json create_config_map(const std::string& ns, const std::string& name,
                         json owners = nullptr, json finalizers = nullptr) {
    json cm = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", name}, {"namespace", ns}}}};
    if (!owners.is_null())
      cm["metadata"]["ownerReferences"] = owners;
    if (!finalizers.is_null())
      cm["metadata"]["finalizers"] = finalizers;
    auto res = call(verb::create, cm_ref(ns), cm);
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    return res ? json::parse(res->body) : json{};
  }

  static resource_ref cm_ref(const std::string& ns,
                             const std::string& name = {}) {
    return {"", "v1", "configmaps", ns, name, ""};
  }

  static json owner_ref(const json& owner, bool block = false) {
    json ref = {{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"name", owner["metadata"]["name"]},
                {"uid", owner["metadata"]["uid"]}};
    if (block)
      ref["blockOwnerDeletion"] = true;
    return ref;
  }

  bool exists(const resource_ref& ref) {
    return static_cast<bool>(call(verb::get, ref));
  }

  json get(const resource_ref& ref) {
    auto res = call(verb::get, ref);
    return res ? json::parse(res->body) : json{};
  }

  void remove(const resource_ref& ref, const std::string& policy) {
    auto res = call(verb::remove, ref, json{{"propagationPolicy", policy}});
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
  }

  std::shared_ptr<deletions> watch_config_maps() {
    auto log = std::make_shared<deletions>();
    auto sink = sys.spawn(record_deletions, log);
    k8s::request r;
    r.ref = cm_ref("default");
    auto id = request<std::uint64_t>(caf::actor_cast<api_actor>(store),
                                     watch_atom::value, r, sink);
    EXPECT_TRUE(id);
    return log;
  }

  void start_gc() {
    gc = spawn_garbage_collector(sys, caf::actor_cast<api_actor>(store));
    drain();
  }

  garbage_collector_actor gc;
};

TEST_F(controllers_test, background_deletion_collects_the_dependents) {
  start_gc();
  auto owner = create_config_map("default", "owner");
  create_config_map("default", "child-a", json::array({owner_ref(owner)}));
  create_config_map("default", "child-b", json::array({owner_ref(owner)}));
  drain();
  ASSERT_TRUE(exists(cm_ref("default", "child-a")));
  remove(cm_ref("default", "owner"), "Background");
  drain();
  EXPECT_FALSE(exists(cm_ref("default", "owner")));
  EXPECT_FALSE(exists(cm_ref("default", "child-a")));
  EXPECT_FALSE(exists(cm_ref("default", "child-b")));
}

TEST_F(controllers_test,
       a_dependent_with_a_live_owner_stays_and_loses_the_dead_one) {
  start_gc();
  auto a = create_config_map("default", "owner-a");
  auto b = create_config_map("default", "owner-b");
  create_config_map("default", "child",
                    json::array({owner_ref(a), owner_ref(b)}));
  drain();
  remove(cm_ref("default", "owner-a"), "Background");
  drain();
  auto child = get(cm_ref("default", "child"));
  ASSERT_FALSE(child.is_null());
  EXPECT_EQ(child["metadata"]["ownerReferences"], json::array({owner_ref(b)}));
}

TEST_F(controllers_test,
       foreground_deletion_removes_the_owner_after_its_dependents) {
  start_gc();
  auto log = watch_config_maps();
  auto owner = create_config_map("default", "owner");
  create_config_map("default", "child", json::array({owner_ref(owner, true)}));
  drain();
  remove(cm_ref("default", "owner"), "Foreground");
  drain();
  EXPECT_FALSE(exists(cm_ref("default", "child")));
  EXPECT_FALSE(exists(cm_ref("default", "owner")));
  EXPECT_EQ(log->names, (std::vector<std::string>{"child", "owner"}));
}

TEST_F(controllers_test,
       a_foreground_owner_waits_for_a_blocking_dependent_finalizer) {
  start_gc();
  auto owner = create_config_map("default", "owner");
  create_config_map("default", "child", json::array({owner_ref(owner, true)}),
                    json::array({"example.com/hold"}));
  drain();
  remove(cm_ref("default", "owner"), "Foreground");
  drain();
  // The dependent is being deleted but held: the owner waits, Terminating.
  auto held = get(cm_ref("default", "owner"));
  ASSERT_FALSE(held.is_null());
  EXPECT_EQ(held["metadata"]["finalizers"],
            json::array({"foregroundDeletion"}));
  auto child = get(cm_ref("default", "child"));
  ASSERT_TRUE(child["metadata"].contains("deletionTimestamp"));
  // Releasing the dependent lets both go.
  json patch
      = json::array({{{"op", "remove"}, {"path", "/metadata/finalizers"}}});
  k8s::request r;
  r.verb = verb::patch;
  r.patch = patch_type::json;
  r.ref = cm_ref("default", "child");
  r.body = patch.dump();
  ASSERT_TRUE(request<response>(caf::actor_cast<api_actor>(store), r));
  drain();
  EXPECT_FALSE(exists(cm_ref("default", "child")));
  EXPECT_FALSE(exists(cm_ref("default", "owner")));
}

TEST_F(controllers_test,
       orphan_deletion_keeps_the_dependents_without_the_reference) {
  start_gc();
  auto owner = create_config_map("default", "owner");
  auto other = create_config_map("default", "other");
  create_config_map("default", "child",
                    json::array({owner_ref(owner), owner_ref(other)}));
  create_config_map("default", "only-child", json::array({owner_ref(owner)}));
  drain();
  remove(cm_ref("default", "owner"), "Orphan");
  drain();
  EXPECT_FALSE(exists(cm_ref("default", "owner")));
  auto child = get(cm_ref("default", "child"));
  ASSERT_FALSE(child.is_null());
  EXPECT_EQ(child["metadata"]["ownerReferences"],
            json::array({owner_ref(other)}));
  auto only = get(cm_ref("default", "only-child"));
  ASSERT_FALSE(only.is_null());
  EXPECT_FALSE(only["metadata"].contains("ownerReferences"));
}

TEST_F(controllers_test,
       dependents_of_owners_that_never_existed_are_collected) {
  auto ghost = json{{"apiVersion", "v1"},
                    {"kind", "ConfigMap"},
                    {"name", "ghost"},
                    {"uid", "no-such-uid"}};
  create_config_map("default", "orphaned", json::array({ghost}));
  // An owner in another namespace does not count either.
  auto elsewhere = create_config_map("kube-public", "owner");
  create_config_map("default", "cross", json::array({owner_ref(elsewhere)}));
  // An owner of an unknown kind cannot be resolved: left alone.
  create_config_map("default", "unknown",
                    json::array({json{{"apiVersion", "example.com/v1"},
                                      {"kind", "Widget"},
                                      {"name", "w"},
                                      {"uid", "w-uid"}}}));
  drain();
  start_gc();
  EXPECT_FALSE(exists(cm_ref("default", "orphaned")));
  EXPECT_FALSE(exists(cm_ref("default", "cross")));
  EXPECT_TRUE(exists(cm_ref("kube-public", "owner")));
  EXPECT_TRUE(exists(cm_ref("default", "unknown")));
}

TEST_F(controllers_test, a_deleted_namespace_is_emptied_then_removed) {
  auto controller
      = spawn_namespace_controller(sys, caf::actor_cast<api_actor>(store));
  drain();
  resource_ref ns_ref{"", "v1", "namespaces", "", "bench", ""};
  ASSERT_TRUE(call(verb::create, {"", "v1", "namespaces", "", "", ""},
                   json{{"apiVersion", "v1"},
                        {"kind", "Namespace"},
                        {"metadata", {{"name", "bench"}}}}));
  create_config_map("bench", "plain");
  create_config_map("bench", "held", nullptr,
                    json::array({"example.com/hold"}));
  drain();
  ASSERT_TRUE(exists(cm_ref("bench", "plain")));
  EXPECT_EQ(get(ns_ref)["spec"]["finalizers"], json::array({"kubernetes"}));
  remove(ns_ref, "Background");
  drain();
  // The held object keeps the namespace Terminating; the rest is gone.
  EXPECT_FALSE(exists(cm_ref("bench", "plain")));
  auto ns = get(ns_ref);
  ASSERT_FALSE(ns.is_null());
  EXPECT_EQ(ns["status"]["phase"], "Terminating");
  advance_time(std::chrono::seconds{1});
  EXPECT_TRUE(exists(ns_ref));
  // Its finalizer released, the next pass empties and finalizes it.
  json patch
      = json::array({{{"op", "remove"}, {"path", "/metadata/finalizers"}}});
  k8s::request r;
  r.verb = verb::patch;
  r.patch = patch_type::json;
  r.ref = cm_ref("bench", "held");
  r.body = patch.dump();
  ASSERT_TRUE(request<response>(caf::actor_cast<api_actor>(store), r));
  drain();
  advance_time(std::chrono::seconds{1});
  EXPECT_FALSE(exists(cm_ref("bench", "held")));
  EXPECT_FALSE(exists(ns_ref));
}

} // namespace
} // namespace aiperf::k8s::sim
