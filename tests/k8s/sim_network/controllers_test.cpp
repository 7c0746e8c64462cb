// The Endpoints, EndpointSlice and ServiceAccount controllers against the
// store actor on the deterministic test coordinator.
#include "k8s/api/json.hpp"
#include "k8s/sim/controllers/controllers.hpp"
#include "k8s/sim/endpoints/endpoints.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aiperf::k8s::sim {
namespace {

const resource_ref pods_ref{"", "v1", "pods", "default", "", ""};
const resource_ref services_ref{"", "v1", "services", "default", "", ""};
const resource_ref endpoints_ref{"", "v1", "endpoints", "default", "", ""};
const resource_ref slices_ref{"discovery.k8s.io", "v1", "endpointslices",
                              "default",          "",   ""};

resource_ref named(resource_ref r, const std::string& name,
                   const std::string& sub = {}) {
  r.name = name;
  r.subresource = sub;
  return r;
}

struct network_test : caf_gtest::fixture<> {
  store_actor store;
  api_actor api;
  std::vector<caf::actor> controllers;

  network_test() {
    store_config cfg;
    cfg.start_unix_seconds = 1'795'000'000;
    auto s = spawn_store(sys, cfg);
    EXPECT_TRUE(s) << (s ? "" : error_message(s.error()));
    store = *s;
    api = caf::actor_cast<api_actor>(store);
    drain();
  }

  ~network_test() override {
    for (auto& c : controllers)
      caf::anon_send_exit(c, caf::exit_reason::user_shutdown);
  }

  void start_endpoint_controllers() {
    controllers.push_back(
        caf::actor_cast<caf::actor>(spawn_endpoints_controller(sys, api)));
    controllers.push_back(
        caf::actor_cast<caf::actor>(spawn_endpointslice_controller(sys, api)));
    controllers.push_back(
        caf::actor_cast<caf::actor>(spawn_garbage_collector(sys, api)));
    drain();
  }

  caf::expected<response> call(verb v, resource_ref ref,
                               const json& body = nullptr,
                               patch_type pt = patch_type::none) {
    k8s::request r;
    r.verb = v;
    r.ref = std::move(ref);
    r.patch = pt;
    if (!body.is_null())
      r.body = body.dump();
    auto res = request<response>(api, r);
    drain();
    return res;
  }

  json get(const resource_ref& ref) {
    auto res = call(verb::get, ref);
    return res ? json::parse(res->body) : json{};
  }

  json list(const resource_ref& ref) {
    auto res = call(verb::list, ref);
    return res ? json::parse(res->body)["items"] : json::array();
  }

  void create(const resource_ref& ref, const json& obj) {
    auto res = call(verb::create, ref, obj);
    ASSERT_TRUE(res) << error_message(res.error());
  }

  void create_service(const std::string& name, json spec) {
    create(services_ref, json{{"apiVersion", "v1"},
                              {"kind", "Service"},
                              {"metadata",
                               {{"name", name},
                                {"namespace", "default"},
                                {"labels", {{"team", "perf"}}}}},
                              {"spec", spec}});
  }

  void create_pod(const std::string& name, json labels, json extra_spec = {},
                  json finalizers = nullptr) {
    json spec = {
        {"nodeName", "sim-node-0"},
        {"containers",
         json::array({{{"name", "c"},
                       {"image", "aiperf-node:dev"},
                       {"ports", json::array({{{"name", "web"},
                                               {"containerPort", 9090}}})}}})}};
    if (extra_spec.is_object())
      for (auto& [k, v] : extra_spec.items())
        spec[k] = v;
    json meta = {{"name", name}, {"namespace", "default"}, {"labels", labels}};
    if (!finalizers.is_null())
      meta["finalizers"] = finalizers;
    create(pods_ref, json{{"apiVersion", "v1"},
                          {"kind", "Pod"},
                          {"metadata", meta},
                          {"spec", spec}});
  }

  void set_status(const std::string& pod, const std::string& ip, bool ready) {
    json status
        = {{"phase", "Running"},
           {"podIP", ip},
           {"podIPs", json::array({{{"ip", ip}}})},
           {"conditions",
            json::array({{{"type", "Ready"},
                          {"status", ready ? "True" : "False"},
                          {"lastTransitionTime", "2026-11-18T11:10:00Z"}}})}};
    auto res = call(verb::patch, named(pods_ref, pod, "status"),
                    json{{"status", status}}, patch_type::merge);
    ASSERT_TRUE(res) << error_message(res.error());
  }

  static std::vector<std::string> ips(const json& addresses) {
    std::vector<std::string> out;
    if (addresses.is_array())
      for (const auto& a : addresses)
        out.push_back(a.value("ip", ""));
    return out;
  }

  json slices_of(const std::string& svc) {
    json out = json::array();
    for (const auto& s : list(slices_ref))
      if (s["metadata"]["labels"].value("kubernetes.io/service-name", "")
          == svc)
        out.push_back(s);
    return out;
  }
};

json web_service(const std::string& target = "") {
  json port = {{"name", "http"}, {"port", 8000}};
  if (!target.empty())
    port["targetPort"] = target;
  return json{{"selector", {{"app", "mock"}}}, {"ports", json::array({port})}};
}

TEST_F(network_test, endpoints_follow_pod_readiness) {
  start_endpoint_controllers();
  create_service("mock", web_service());
  create_pod("a", {{"app", "mock"}});
  create_pod("b", {{"app", "mock"}});
  create_pod("other", {{"app", "else"}});
  set_status("a", "10.1.0.5", true);
  set_status("b", "10.1.0.6", false);
  set_status("other", "10.1.0.7", true);
  auto ep = get(named(endpoints_ref, "mock"));
  ASSERT_TRUE(ep.contains("subsets")) << ep.dump();
  ASSERT_EQ(ep["subsets"].size(), 1u) << ep.dump();
  const auto& subset = ep["subsets"][0];
  EXPECT_EQ(ips(subset["addresses"]), std::vector<std::string>{"10.1.0.5"});
  EXPECT_EQ(ips(subset["notReadyAddresses"]),
            std::vector<std::string>{"10.1.0.6"});
  EXPECT_EQ(subset["ports"],
            json::parse(R"([{"name":"http","port":8000,"protocol":"TCP"}])"));
  const auto& a = subset["addresses"][0];
  EXPECT_EQ(a["nodeName"], "sim-node-0");
  EXPECT_EQ(a["targetRef"]["kind"], "Pod");
  EXPECT_EQ(a["targetRef"]["name"], "a");
  EXPECT_EQ(a["targetRef"]["uid"],
            get(named(pods_ref, "a"))["metadata"]["uid"]);
  EXPECT_FALSE(a.contains("hostname"));
  EXPECT_EQ(ep["metadata"]["labels"], json({{"team", "perf"}}));
  // The earliest change not yet seen: the pods' Ready transition.
  EXPECT_EQ(ep["metadata"]["annotations"]
              ["endpoints.kubernetes.io/last-change-trigger-time"],
            "2026-11-18T11:10:00Z");

  set_status("b", "10.1.0.6", true);
  ep = get(named(endpoints_ref, "mock"));
  EXPECT_EQ(ips(ep["subsets"][0]["addresses"]),
            (std::vector<std::string>{"10.1.0.5", "10.1.0.6"}));
  EXPECT_FALSE(ep["subsets"][0].contains("notReadyAddresses"));

  // The pod goes: so does its address.
  ASSERT_TRUE(call(verb::remove, named(pods_ref, "a")));
  ep = get(named(endpoints_ref, "mock"));
  EXPECT_EQ(ips(ep["subsets"][0]["addresses"]),
            std::vector<std::string>{"10.1.0.6"});
}

TEST_F(network_test, a_named_target_port_resolves_to_the_container_port) {
  start_endpoint_controllers();
  create_service("mock", web_service("web"));
  create_pod("a", {{"app", "mock"}});
  // A pod without a port named web offers nothing on that port.
  create(pods_ref,
         json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata",
               {{"name", "bare"},
                {"namespace", "default"},
                {"labels", {{"app", "mock"}}}}},
              {"spec",
               {{"nodeName", "sim-node-0"},
                {"containers",
                 json::array({{{"name", "c"}, {"image", "x:1"}}})}}}});
  set_status("a", "10.1.0.5", true);
  set_status("bare", "10.1.0.9", true);
  auto ep = get(named(endpoints_ref, "mock"));
  ASSERT_EQ(ep["subsets"].size(), 1u) << ep.dump();
  EXPECT_EQ(ips(ep["subsets"][0]["addresses"]),
            std::vector<std::string>{"10.1.0.5"});
  EXPECT_EQ(ep["subsets"][0]["ports"][0]["port"], 9090);
  auto slices = slices_of("mock");
  ASSERT_EQ(slices.size(), 2u) << slices.dump();
  // One slice per port set: 9090 for a, none for bare.
  std::vector<std::size_t> port_counts;
  for (const auto& s : slices)
    port_counts.push_back(s["ports"].size());
  std::sort(port_counts.begin(), port_counts.end());
  EXPECT_EQ(port_counts, (std::vector<std::size_t>{0, 1}));
}

TEST_F(network_test, publish_not_ready_addresses_and_hostnames) {
  start_endpoint_controllers();
  json spec = web_service();
  spec["clusterIP"] = "None";
  spec["publishNotReadyAddresses"] = true;
  create_service("run", spec);
  create_pod("w-0", {{"app", "mock"}},
             {{"hostname", "run-w-0"}, {"subdomain", "run"}});
  create_pod("w-1", {{"app", "mock"}},
             {{"hostname", "run-w-1"}, {"subdomain", "elsewhere"}});
  set_status("w-0", "10.1.0.5", false);
  set_status("w-1", "10.1.0.6", false);
  auto ep = get(named(endpoints_ref, "run"));
  ASSERT_EQ(ep["subsets"].size(), 1u) << ep.dump();
  EXPECT_EQ(ips(ep["subsets"][0]["addresses"]),
            (std::vector<std::string>{"10.1.0.5", "10.1.0.6"}));
  EXPECT_EQ(ep["subsets"][0]["addresses"][0]["hostname"], "run-w-0");
  EXPECT_FALSE(ep["subsets"][0]["addresses"][1].contains("hostname"));
  EXPECT_EQ(ep["metadata"]["labels"]["service.kubernetes.io/headless"], "");
  auto slices = slices_of("run");
  ASSERT_EQ(slices.size(), 1u);
  const auto& eps = slices[0]["endpoints"];
  ASSERT_EQ(eps.size(), 2u);
  EXPECT_EQ(
      eps[0]["conditions"],
      json({{"ready", true}, {"serving", false}, {"terminating", false}}));
  EXPECT_EQ(eps[0]["hostname"], "run-w-0");
}

TEST_F(network_test, terminating_pods_leave_endpoints_but_stay_in_slices) {
  start_endpoint_controllers();
  create_service("mock", web_service());
  create_pod("a", {{"app", "mock"}}, {}, json::array({"test.io/hold"}));
  create_pod("b", {{"app", "mock"}});
  set_status("a", "10.1.0.5", true);
  set_status("b", "10.1.0.6", true);
  ASSERT_TRUE(call(verb::remove, named(pods_ref, "a")));
  ASSERT_TRUE(
      get(named(pods_ref, "a"))["metadata"].contains("deletionTimestamp"));
  auto ep = get(named(endpoints_ref, "mock"));
  EXPECT_EQ(ips(ep["subsets"][0]["addresses"]),
            std::vector<std::string>{"10.1.0.6"});
  EXPECT_FALSE(ep["subsets"][0].contains("notReadyAddresses"));
  auto slices = slices_of("mock");
  ASSERT_EQ(slices.size(), 1u);
  const auto& eps = slices[0]["endpoints"];
  ASSERT_EQ(eps.size(), 2u) << slices.dump();
  EXPECT_EQ(eps[0]["addresses"][0], "10.1.0.5");
  EXPECT_EQ(eps[0]["conditions"],
            json({{"ready", false}, {"serving", true}, {"terminating", true}}));
  EXPECT_EQ(eps[1]["conditions"],
            json({{"ready", true}, {"serving", true}, {"terminating", false}}));
}

TEST_F(network_test, endpointslices_name_label_and_own_their_service) {
  start_endpoint_controllers();
  create_service("mock", web_service());
  auto slices = slices_of("mock");
  ASSERT_EQ(slices.size(), 1u); // the placeholder
  EXPECT_EQ(slices[0]["endpoints"], json::array());
  create_pod("a", {{"app", "mock"}});
  set_status("a", "10.1.0.5", true);
  slices = slices_of("mock");
  ASSERT_EQ(slices.size(), 1u);
  const auto& s = slices[0];
  std::string name = s["metadata"]["name"];
  EXPECT_EQ(name.substr(0, 5), "mock-");
  EXPECT_EQ(name.size(), 10u);
  EXPECT_EQ(s["addressType"], "IPv4");
  EXPECT_EQ(s["metadata"]["labels"],
            json({{"team", "perf"},
                  {"kubernetes.io/service-name", "mock"},
                  {"endpointslice.kubernetes.io/managed-by",
                   "endpointslice-controller.k8s.io"}}));
  auto svc = get(named(services_ref, "mock"));
  ASSERT_EQ(s["metadata"]["ownerReferences"].size(), 1u);
  const auto& owner = s["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "Service");
  EXPECT_EQ(owner["uid"], svc["metadata"]["uid"]);
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(s["ports"],
            json::parse(R"([{"name":"http","protocol":"TCP","port":8000}])"));
  EXPECT_EQ(s["endpoints"][0]["targetRef"]["name"], "a");
  EXPECT_EQ(s["endpoints"][0]["nodeName"], "sim-node-0");
  EXPECT_EQ(s["endpoints"][0]["conditions"]["ready"], true);
  set_status("a", "10.1.0.5", false);
  EXPECT_EQ(slices_of("mock")[0]["endpoints"][0]["conditions"]["ready"], false);

  // Gone with their Service: the slices (garbage collector), the
  // Endpoints (the controller).
  ASSERT_TRUE(call(verb::remove, named(services_ref, "mock")));
  EXPECT_TRUE(slices_of("mock").empty());
  EXPECT_FALSE(call(verb::get, named(endpoints_ref, "mock")));
}

TEST_F(network_test, deleted_endpoints_come_back_and_selectorless_are_left) {
  start_endpoint_controllers();
  create_service("mock", web_service());
  create_service("manual", json{{"ports", json::array({{{"port", 80}}})}});
  create_pod("a", {{"app", "mock"}});
  set_status("a", "10.1.0.5", true);
  ASSERT_TRUE(call(verb::get, named(endpoints_ref, "mock")));
  ASSERT_TRUE(call(verb::remove, named(endpoints_ref, "mock")));
  auto ep = get(named(endpoints_ref, "mock"));
  ASSERT_TRUE(ep.is_object());
  EXPECT_EQ(ips(ep["subsets"][0]["addresses"]),
            std::vector<std::string>{"10.1.0.5"});
  EXPECT_FALSE(call(verb::get, named(endpoints_ref, "manual")));
  EXPECT_TRUE(slices_of("manual").empty());
  // Endpoints written by hand for the selector-less Service, and for one
  // that does not exist yet, stay.
  for (auto name : {"manual", "later"})
    create(
        endpoints_ref,
        json{{"apiVersion", "v1"},
             {"kind", "Endpoints"},
             {"metadata", {{"name", name}, {"namespace", "default"}}},
             {"subsets",
              json::array({{{"addresses", json::array({{{"ip", "10.9.0.1"}}})},
                            {"ports", json::array({{{"port", 80}}})}}})}});
  EXPECT_EQ(ips(get(named(endpoints_ref, "manual"))["subsets"][0]["addresses"]),
            std::vector<std::string>{"10.9.0.1"});
  EXPECT_TRUE(call(verb::get, named(endpoints_ref, "later")));
}

TEST_F(network_test, a_leftover_endpoints_object_goes_at_start) {
  create(endpoints_ref,
         json{{"apiVersion", "v1"},
              {"kind", "Endpoints"},
              {"metadata", {{"name", "orphan"}, {"namespace", "default"}}}});
  create_service("kept", json{{"ports", json::array({{{"port", 80}}})}});
  create(endpoints_ref,
         json{{"apiVersion", "v1"},
              {"kind", "Endpoints"},
              {"metadata", {{"name", "kept"}, {"namespace", "default"}}}});
  start_endpoint_controllers();
  EXPECT_FALSE(call(verb::get, named(endpoints_ref, "orphan")));
  EXPECT_TRUE(call(verb::get, named(endpoints_ref, "kept")));
}

TEST_F(network_test, controllers_relist_after_their_watches_drop) {
  start_endpoint_controllers();
  create_service("mock", web_service());
  create_pod("a", {{"app", "mock"}});
  auto dropped
      = request<std::uint64_t>(store, drop_watches_atom::value, std::string{});
  ASSERT_TRUE(dropped);
  EXPECT_GE(*dropped, 6u); // 3 + 3 watches of the two controllers (+ GC)
  drain();
  // Changed while nobody watches: seen by the relist a second later.
  set_status("a", "10.1.0.5", true);
  EXPECT_FALSE(get(named(endpoints_ref, "mock")).contains("subsets"));
  advance_time(std::chrono::seconds{1});
  auto ep = get(named(endpoints_ref, "mock"));
  ASSERT_TRUE(ep.contains("subsets")) << ep.dump();
  EXPECT_EQ(ips(ep["subsets"][0]["addresses"]),
            std::vector<std::string>{"10.1.0.5"});
  EXPECT_EQ(slices_of("mock")[0]["endpoints"].size(), 1u);
  // And the new watches deliver again.
  set_status("a", "10.1.0.5", false);
  ep = get(named(endpoints_ref, "mock"));
  EXPECT_EQ(ips(ep["subsets"][0]["notReadyAddresses"]),
            std::vector<std::string>{"10.1.0.5"});
}

// --- ServiceAccounts and kube-root-ca.crt ---

struct serviceaccount_test : network_test {
  void start(const std::string& pem) {
    controllers.push_back(caf::actor_cast<caf::actor>(
        spawn_serviceaccount_controller(sys, api, pem)));
    drain();
  }

  void create_namespace(const std::string& name) {
    create({"", "v1", "namespaces", "", "", ""},
           json{{"apiVersion", "v1"},
                {"kind", "Namespace"},
                {"metadata", {{"name", name}}}});
  }

  static resource_ref sa(const std::string& ns) {
    return {"", "v1", "serviceaccounts", ns, "default", ""};
  }
  static resource_ref ca(const std::string& ns) {
    return {"", "v1", "configmaps", ns, "kube-root-ca.crt", ""};
  }
};

TEST_F(serviceaccount_test, every_namespace_gets_a_default_account_again) {
  start("");
  create_namespace("bench");
  auto account = get(sa("bench"));
  ASSERT_TRUE(account.is_object());
  auto uid = account["metadata"]["uid"];
  ASSERT_TRUE(call(verb::remove, sa("bench")));
  account = get(sa("bench"));
  ASSERT_TRUE(account.is_object());
  EXPECT_NE(account["metadata"]["uid"], uid);
  // The built-in namespaces too.
  ASSERT_TRUE(call(verb::remove, sa("kube-system")));
  EXPECT_TRUE(get(sa("kube-system")).is_object());
}

TEST_F(serviceaccount_test, the_root_ca_config_map_is_made_again_and_restored) {
  start("");
  create_namespace("bench");
  auto original = get(ca("bench"));
  ASSERT_TRUE(original.is_object());
  ASSERT_TRUE(call(verb::remove, ca("bench")));
  auto again = get(ca("bench"));
  ASSERT_TRUE(again.is_object());
  EXPECT_NE(again["metadata"]["uid"], original["metadata"]["uid"]);
  EXPECT_EQ(again["data"], original["data"]);
  EXPECT_EQ(again["metadata"]["annotations"],
            original["metadata"]["annotations"]);
  EXPECT_EQ(again["data"], json({{"ca.crt", ""}}));

  auto res = call(verb::patch, ca("bench"),
                  json{{"data", {{"ca.crt", "forged"}, {"extra", "x"}}}},
                  patch_type::merge);
  ASSERT_TRUE(res);
  EXPECT_EQ(get(ca("bench"))["data"], json({{"ca.crt", ""}}));
}

TEST_F(serviceaccount_test, a_terminating_namespace_is_left_alone) {
  start("PEM");
  create_namespace("gone");
  // The store's own ConfigMap held "" (no CA in its config): the
  // controller puts its CA in.
  EXPECT_EQ(get(ca("gone"))["data"], json({{"ca.crt", "PEM"}}));
  ASSERT_TRUE(call(verb::remove, {"", "v1", "namespaces", "", "gone", ""}));
  ASSERT_TRUE(call(verb::remove, sa("gone")));
  // No namespace controller runs: the namespace stays Terminating, and no
  // account is made in it.
  EXPECT_FALSE(call(verb::get, sa("gone")));
}

} // namespace
} // namespace aiperf::k8s::sim
