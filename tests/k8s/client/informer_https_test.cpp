// The informer through the product client over HTTPS to the simulator's
// front: a watch that resumes from a resourceVersion the store no longer
// keeps history for gets 410 Expired, and the informer relists — its cache
// then holds exactly what the server holds.
#include "k8s/api/json.hpp"
#include "k8s/client/client.hpp"
#include "k8s/client/config.hpp"
#include "k8s/client/metrics.hpp"
#include "k8s/informer/informer.hpp"
#include "k8s/sim/http/front.hpp"
#include "k8s/sim/http/tls.hpp"
#include "k8s/sim/store/store.hpp"

#include <caf/all.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace aiperf::k8s::client {
namespace {

using namespace std::chrono_literals;

constexpr auto wait_limit = 20s;
constexpr const char* admin_token = "informer-https-admin";

struct keys_seen {
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<std::string> keys;

  bool wait_for(const std::string& key) {
    std::unique_lock guard{mtx};
    return cv.wait_for(guard, wait_limit, [&] {
      return std::find(keys.begin(), keys.end(), key) != keys.end();
    });
  }
};

informer::owner_actor::behavior_type
keys_owner(informer::owner_actor::pointer, std::shared_ptr<keys_seen> seen) {
  return {
      [seen](informer::reconcile_atom, std::string& key) {
        std::lock_guard guard{seen->mtx};
        seen->keys.push_back(key);
        seen->cv.notify_all();
      },
  };
}

caf::actor_system_config& with_errors(caf::actor_system_config& cfg) {
  add_error_category<k8s::errc>(cfg);
  add_error_category<errc>(cfg);
  return cfg;
}

class informer_https : public ::testing::Test {
protected:
  void SetUp() override {
    sim::store_config cfg;
    cfg.admin_token = admin_token;
    cfg.watch_history = 3;
    auto s = sim::spawn_store(sys, cfg);
    ASSERT_TRUE(s) << error_message(s.error());
    store_ = *s;
    auto identity = sim::http::make_tls_identity();
    ASSERT_TRUE(identity) << error_message(identity.error());
    sim::http::front_options fopts;
    fopts.tls = *identity;
    fopts.admin_token = admin_token;
    front_ = std::make_unique<sim::http::front>(sys, store_, fopts);
    auto port = front_->start();
    ASSERT_TRUE(port) << error_message(port.error());
    client_config ccfg;
    ccfg.server = "https://127.0.0.1:" + std::to_string(*port);
    ccfg.ca_pem = identity->ca_cert_pem;
    ccfg.token = admin_token;
    ccfg.origin = "the informer test's in-process simulator";
    client_options copts;
    copts.metrics = metrics_;
    auto c = spawn_client(sys, ccfg, copts);
    ASSERT_TRUE(c) << error_message(c.error());
    api_ = *c;
  }

  void TearDown() override {
    if (front_)
      front_->stop();
    for (auto& a : {caf::actor_cast<caf::actor>(informer_),
                    caf::actor_cast<caf::actor>(api_),
                    caf::actor_cast<caf::actor>(store_)})
      if (a)
        caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }

  caf::expected<response> call(request r) {
    caf::expected<response> out{caf::error{}};
    self->request(api_, wait_limit, std::move(r))
        .receive([&](response& x) { out = std::move(x); },
                 [&](caf::error& e) { out = std::move(e); });
    return out;
  }

  static request configmap(verb v, const std::string& ns,
                           const std::string& name) {
    request r;
    r.verb = v;
    r.ref = resource_ref{"", "v1", "configmaps", ns, "", ""};
    if (v == verb::create)
      r.body = json{{"apiVersion", "v1"},
                    {"kind", "ConfigMap"},
                    {"metadata", {{"name", name}}},
                    {"data", {{"k", name}}}}
                   .dump();
    else
      r.ref.name = name;
    return r;
  }

  /// The names the informer's cache holds.
  std::set<std::string> cached_names() {
    std::set<std::string> out;
    self->request(informer_, wait_limit, informer::cache_list_atom::value)
        .receive(
            [&](std::vector<std::string>& objects) {
              for (const auto& text : objects)
                out.insert(json::parse(text)["metadata"]["name"]);
            },
            [&](caf::error& e) { ADD_FAILURE() << error_message(e); });
    return out;
  }

  /// The names the server holds.
  std::set<std::string> server_names() {
    std::set<std::string> out;
    auto listed = call(configmap(verb::list, "default", ""));
    EXPECT_TRUE(listed) << error_message(listed.error());
    if (listed) {
      auto doc = json::parse(listed->body);
      for (const auto& item : doc["items"])
        out.insert(item["metadata"]["name"]);
    }
    return out;
  }

  caf::actor_system_config sys_cfg_;
  caf::actor_system sys{with_errors(sys_cfg_)};
  caf::scoped_actor self{sys};
  std::shared_ptr<request_metrics> metrics_
      = std::make_shared<request_metrics>();
  sim::store_actor store_;
  std::unique_ptr<sim::http::front> front_;
  api_actor api_;
  informer::informer_actor informer_;
};

TEST_F(informer_https, a_resume_from_compacted_history_relists) {
  auto seen = std::make_shared<keys_seen>();
  auto owner = sys.spawn(keys_owner, seen);
  informer::informer_config icfg;
  icfg.ref = resource_ref{"", "v1", "configmaps", "default", "", ""};
  icfg.workers = 1000; // every key at once: the test reads the cache
  icfg.backoff_initial = 20ms;
  icfg.backoff_cap = 100ms;
  informer_ = informer::spawn_informer(sys, api_, icfg, owner);
  ASSERT_TRUE(seen->wait_for("default/kube-root-ca.crt"));
  ASSERT_TRUE(call(configmap(verb::create, "default", "gone")));
  ASSERT_TRUE(seen->wait_for("default/gone"));
  // Its watches fail while the test writes behind its back: a delete and a
  // create it must learn of, and more writes elsewhere than the store keeps
  // history for, so its last resourceVersion is compacted away.
  auto fault = front_->faults().add(
      json{{"match", {{"verb", "watch"}, {"resource", "configmaps"}}},
           {"count", -1},
           {"code", 500}});
  ASSERT_TRUE(fault) << error_message(fault.error());
  std::uint64_t dropped = 0;
  self->request(store_, wait_limit, sim::drop_watches_atom::value,
                std::string{"configmaps"})
      .receive([&](std::uint64_t n) { dropped = n; },
               [&](caf::error& e) { ADD_FAILURE() << error_message(e); });
  ASSERT_EQ(dropped, 1u);
  ASSERT_TRUE(call(configmap(verb::remove, "default", "gone")));
  ASSERT_TRUE(call(configmap(verb::create, "default", "new")));
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(
        call(configmap(verb::create, "kube-system", "x" + std::to_string(i))));
  ASSERT_TRUE(front_->faults().remove(*fault));
  // The resumed watch is 410 Expired (only a relist can bring `new`): the
  // relist finds `new` and no `gone`.
  ASSERT_TRUE(seen->wait_for("default/new"));
  EXPECT_EQ(metrics_->value("list", "configmaps", "200"), 2u);
  EXPECT_EQ(cached_names(), (std::set<std::string>{"kube-root-ca.crt", "new"}));
  EXPECT_EQ(cached_names(), server_names());
  // And it follows the new watch.
  ASSERT_TRUE(call(configmap(verb::create, "default", "after")));
  ASSERT_TRUE(seen->wait_for("default/after"));
}

} // namespace
} // namespace aiperf::k8s::client
