// The informer over the simulator's store actor on simulated time: the
// same api_actor the product client serves, with the real server's list,
// watch, dropped watches and 410 Expired after compaction.
#include "k8s/api/json.hpp"
#include "k8s/informer/informer.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"

#include <memory>

namespace aiperf::k8s::informer {
namespace {

using namespace std::chrono_literals;

struct owner_log {
  std::vector<std::string> keys;
};

owner_actor::behavior_type store_owner(owner_actor::pointer,
                                       std::shared_ptr<owner_log> log) {
  return {
      [log](reconcile_atom, std::string& key) { log->keys.push_back(key); },
  };
}

class informer_store_test : public caf_gtest::fixture<> {
protected:
  void SetUp() override {
    sim::store_config cfg;
    cfg.start_unix_seconds = 1'800'000'000;
    cfg.watch_history = 3;
    auto s = sim::spawn_store(sys, cfg);
    ASSERT_TRUE(s) << error_message(s.error());
    store = *s;
    drain();
    owner = sys.spawn(store_owner, log);
    informer_config icfg;
    icfg.ref = resource_ref{"", "v1", "configmaps", "default", "", ""};
    icfg.workers = 1000; // every key at once: this test reads the cache
    icfg.seed = 7;
    informer = spawn_informer(sys, store, icfg, owner);
    drain();
  }

  caf::expected<response> put(const std::string& name,
                              const std::string& value) {
    k8s::request r;
    r.verb = verb::create;
    r.ref = resource_ref{"", "v1", "configmaps", "default", "", ""};
    r.body = json{{"apiVersion", "v1"},
                  {"kind", "ConfigMap"},
                  {"metadata", {{"name", name}}},
                  {"data", {{"v", value}}}}
                 .dump();
    auto out = request<response>(store, std::move(r));
    drain();
    return out;
  }

  std::string cached_value(const std::string& key) {
    auto obj = request<std::string>(informer, cache_get_atom::value, key);
    if (!obj)
      return "<" + error_message(obj.error()) + ">";
    return json::parse(*obj)["data"].value("v", std::string{"<no data.v>"});
  }

  std::shared_ptr<owner_log> log = std::make_shared<owner_log>();
  sim::store_actor store;
  owner_actor owner;
  informer_actor informer;
};

TEST_F(informer_store_test, lists_then_follows_the_watch) {
  EXPECT_EQ(request<bool>(informer, synced_atom::value), true);
  // The namespace's built-in ConfigMap came with the list.
  auto root = request<std::string>(informer, cache_get_atom::value,
                                   std::string{"default/kube-root-ca.crt"});
  ASSERT_TRUE(root) << error_message(root.error());
  EXPECT_EQ(json::parse(*root)["kind"], "ConfigMap");
  ASSERT_TRUE(put("c1", "one"));
  EXPECT_EQ(cached_value("default/c1"), "one");
  EXPECT_EQ(log->keys.back(), "default/c1");
}

TEST_F(informer_store_test, a_dropped_watch_resumes_without_losing_events) {
  ASSERT_TRUE(put("c1", "one"));
  auto dropped = request<std::uint64_t>(store, sim::drop_watches_atom::value,
                                        std::string{"configmaps"});
  ASSERT_TRUE(dropped);
  EXPECT_EQ(*dropped, 1u);
  // Written while the informer waits out its back-off.
  ASSERT_TRUE(put("c2", "two"));
  EXPECT_EQ(cached_value("default/c2"),
            "<configmaps \"default/c2\" not found in the informer's cache>");
  advance_time(1s);
  EXPECT_EQ(cached_value("default/c2"), "two");
  ASSERT_TRUE(put("c3", "three"));
  EXPECT_EQ(cached_value("default/c3"), "three");
}

TEST_F(informer_store_test, a_compacted_resource_version_relists) {
  ASSERT_TRUE(put("c1", "v1"));
  ASSERT_TRUE(request<std::uint64_t>(store, sim::drop_watches_atom::value,
                                     std::string{"configmaps"}));
  // More writes than the store keeps history for: resuming from the last
  // resourceVersion is 410 Expired, so the informer lists again.
  for (int i = 2; i <= 8; ++i)
    ASSERT_TRUE(put("c" + std::to_string(i), "v" + std::to_string(i)));
  advance_time(1s);
  for (int i = 1; i <= 8; ++i)
    EXPECT_EQ(cached_value("default/c" + std::to_string(i)),
              "v" + std::to_string(i))
        << "c" << i;
  ASSERT_TRUE(put("c9", "v9"));
  EXPECT_EQ(cached_value("default/c9"), "v9");
}

} // namespace
} // namespace aiperf::k8s::informer
