// The store actor on the test coordinator, with the calls the controller
// tests make and a stand-in for the kubelet (pod status Running and Ready).
#pragma once

#include "k8s/api/json.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aiperf::k8s::sim::testing {

struct store_fixture : caf_gtest::fixture<> {
  store_actor store;

  store_fixture() {
    store_config cfg;
    cfg.start_unix_seconds = 1'795'000'000;
    auto s = spawn_store(sys, cfg);
    EXPECT_TRUE(s) << (s ? "" : error_message(s.error()));
    store = *s;
    drain();
  }

  api_actor api() const { return caf::actor_cast<api_actor>(store); }

  caf::expected<response> call(verb v, resource_ref ref,
                               const json& body = nullptr,
                               const std::string& label_selector = {}) {
    k8s::request r;
    r.verb = v;
    r.ref = std::move(ref);
    r.label_selector = label_selector;
    if (!body.is_null())
      r.body = body.dump();
    return request<response>(api(), r);
  }

  json create(const resource_ref& ref, const json& body) {
    auto res = call(verb::create, ref, body);
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    drain();
    return res ? json::parse(res->body) : json{};
  }

  json get(const resource_ref& ref) {
    auto res = call(verb::get, ref);
    return res ? json::parse(res->body) : json{};
  }

  bool exists(const resource_ref& ref) {
    return static_cast<bool>(call(verb::get, ref));
  }

  std::vector<json> items(const resource_ref& ref,
                          const std::string& selector = {}) {
    auto res = call(verb::list, ref, nullptr, selector);
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    std::vector<json> out;
    if (res) {
      auto doc = json::parse(res->body);
      for (auto& item : doc["items"])
        out.push_back(item);
    }
    return out;
  }

  void merge_patch(const resource_ref& ref, const json& patch) {
    k8s::request r;
    r.verb = verb::patch;
    r.patch = patch_type::merge;
    r.ref = ref;
    r.body = patch.dump();
    auto res = request<response>(api(), r);
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    drain();
  }

  void remove(const resource_ref& ref) {
    auto res
        = call(verb::remove, ref, json{{"propagationPolicy", "Background"}});
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    drain();
  }

  static resource_ref pods(const std::string& ns = "default",
                           const std::string& name = {}) {
    return {"", "v1", "pods", ns, name, ""};
  }

  static resource_ref core(const std::string& resource,
                           const std::string& ns = {},
                           const std::string& name = {}) {
    return {"", "v1", resource, ns, name, ""};
  }

  static resource_ref apps(const std::string& resource,
                           const std::string& ns = "default",
                           const std::string& name = {}) {
    return {"apps", "v1", resource, ns, name, ""};
  }

  /// What the kubelet would write once the pod's containers run and pass
  /// their readiness probes.
  void make_ready(const json& pod) {
    json status = {
        {"phase", "Running"},
        {"conditions",
         json::array({json{{"type", "Ready"}, {"status", "True"}},
                      json{{"type", "ContainersReady"}, {"status", "True"}}})}};
    merge_patch(resource_ref{"", "v1", "pods", pod["metadata"]["namespace"],
                             pod["metadata"]["name"], "status"},
                json{{"status", status}});
  }

  void make_all_ready(const std::string& ns = "default") {
    for (const auto& pod : items(pods(ns)))
      if (!pod.contains("status")
          || pod["status"].value("phase", "") != "Running")
        make_ready(pod);
  }

  static std::vector<std::string> names(const std::vector<json>& objs) {
    std::vector<std::string> out;
    for (const auto& o : objs)
      out.push_back(o["metadata"]["name"]);
    return out;
  }
};

} // namespace aiperf::k8s::sim::testing
