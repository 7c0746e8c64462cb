// The AIPerfJob reconciler against the simulator's store on the
// deterministic test coordinator. Its requests go through a recording proxy,
// so each test asserts what the operator wrote (verb, path, fences) and the
// state the API holds afterwards; a proxy hook runs a competing write just
// before one of the operator's, to stage a race.
#include "actors/operator/endpoint_probe.hpp"
#include "actors/operator/job_reconciler.hpp"
#include "actors/operator/job_status.hpp"
#include "actors/operator/pod_diagnosis.hpp"
#include "config/benchmark/document.hpp"
#include "k8s/crds/crds.hpp"
#include "k8s/manifests/aiperfjob.hpp"
#include "k8s/object/time.hpp"
#include "k8s/object/wire.hpp"
#include "k8s/sim/jobs/jobs.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace aiperf::op {
namespace {

using namespace std::chrono_literals;
using k8s::patch_type;
using k8s::request;
using k8s::resource_ref;
using k8s::response;
using k8s::verb;

constexpr std::int64_t start_unix = 1'795'000'000;

resource_ref jobs_ref(std::string name = {}, std::string sub = {}) {
  return {"aiperf.nvidia.com", "v1alpha1", "aiperfjobs", "default", std::move(name),
          std::move(sub)};
}
resource_ref jobsets_ref(std::string name = {}) {
  return {"jobset.x-k8s.io", "v1alpha2", "jobsets", "default", std::move(name), ""};
}
resource_ref core_ref(std::string resource, std::string name = {}) {
  return {"", "v1", std::move(resource), "default", std::move(name), ""};
}
resource_ref rbac_ref(std::string resource, std::string name = {}) {
  return {"rbac.authorization.k8s.io", "v1", std::move(resource), "default", std::move(name),
          ""};
}

// One request the reconciler sent, told by its user agent (the informers'
// lists and watches are not recorded: they are the informer's own
// business, tested with it).
struct recorded {
  verb v;
  std::string path;
  json body;
};

// "patch /apis/.../j1/status test=/metadata/uid,/metadata/resourceVersion":
// what the budget counts of a request. Event names carry a time and a
// counter, so events are one line per create, without their name.
std::string budget_line(const request& r) {
  std::string line = std::string{k8s::to_string(r.verb)} + " " + k8s::path_of(r.ref);
  if (!r.label_selector.empty())
    line += " labelSelector=" + r.label_selector;
  if (!r.field_selector.empty())
    line += " fieldSelector=" + r.field_selector;
  if (r.patch == patch_type::json) {
    std::string tests;
    for (const auto& op : json::parse(r.body, nullptr, false))
      if (op.is_object() && op.value("op", "") == "test")
        tests += (tests.empty() ? "" : ",") + op.value("path", std::string{});
    if (!tests.empty())
      line += " test=" + tests;
  } else if (r.patch == patch_type::merge) {
    line += " merge";
  }
  return line;
}

struct proxy_state {
  std::vector<recorded> log;
  /// Every request and watch the operator process sent (informers too), as
  /// budget lines: verb, path, label selector, the `test` paths of a JSON
  /// patch.
  std::vector<std::string> traffic;
  /// Called with each operator write before it is forwarded; the requests
  /// it returns are sent to the store first, in order (the competing writes
  /// of a race).
  std::function<std::vector<request>(const request&)> before;
};

void send_in_order(k8s::api_actor::pointer self, k8s::api_actor store,
                   std::shared_ptr<std::vector<request>> requests, std::size_t i,
                   std::function<void()> then) {
  if (i == requests->size())
    return then();
  auto next = [=] { send_in_order(self, store, requests, i + 1, then); };
  self->request(store, caf::infinite, (*requests)[i])
      .then([next](response&) { next(); }, [next](caf::error&) { next(); });
}

k8s::api_actor::behavior_type proxy(k8s::api_actor::pointer self, k8s::api_actor store,
                                    std::shared_ptr<proxy_state> st) {
  return {
      [=](request& r) -> caf::result<response> {
        st->traffic.push_back(budget_line(r));
        auto rp = self->make_response_promise<response>();
        auto forward = [=](request req) mutable {
          self->request(store, caf::infinite, std::move(req))
              .then([rp](response& res) mutable { rp.deliver(std::move(res)); },
                    [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
        };
        if (r.user_agent != "aiperf-node/operator") {
          forward(std::move(r));
          return rp;
        }
        st->log.push_back({r.verb, k8s::path_of(r.ref),
                           r.body.empty() ? json() : json::parse(r.body)});
        std::vector<request> first;
        if (st->before && r.verb != verb::get)
          first = st->before(r);
        // The competing writes one after the other, then the operator's.
        send_in_order(self, store, std::make_shared<std::vector<request>>(std::move(first)), 0,
                      [forward, r]() mutable { forward(std::move(r)); });
        return rp;
      },
      [=](k8s::watch_atom, request& r, k8s::watch_sink_actor& sink) {
        r.verb = verb::watch;
        st->traffic.push_back(budget_line(r));
        return self->delegate(store, k8s::watch_atom::value, std::move(r), std::move(sink));
      },
      [=](k8s::unwatch_atom, std::uint64_t id) {
        self->send(store, k8s::unwatch_atom::value, id);
      },
  };
}

// The results harvest, played by the test: records each request and
// answers with `result` (or `failure`), or holds the answer until release().
struct harvest_script {
  std::vector<harvest_request> requests;
  int sweeps = 0;
  harvest_result result;
  caf::error failure;
  bool hold = false;
  std::optional<caf::typed_response_promise<harvest_result>> held;
};

using release_atom = caf::atom_constant<caf::atom("release")>;

/// `(release_atom, caf::error)`: answers the held harvest with the error
/// (promises are delivered from inside their actor).
using fake_harvester_actor = harvester_actor::extend<caf::reacts_to<release_atom, caf::error>>;

fake_harvester_actor::behavior_type fake_harvester(fake_harvester_actor::pointer self,
                                                   std::shared_ptr<harvest_script> st) {
  return {
      [=](release_atom, caf::error& err) {
        if (st->held)
          st->held->deliver(std::move(err));
        st->held.reset();
      },
      [=](sweep_atom) { ++st->sweeps; },
      [=](harvest_atom, harvest_request& r) -> caf::result<harvest_result> {
        st->requests.push_back(r);
        auto rp = self->make_response_promise<harvest_result>();
        if (st->hold)
          st->held = rp;
        else if (st->failure)
          rp.deliver(st->failure);
        else
          rp.deliver(st->result);
        return rp;
      },
  };
}

// The endpoint check, played by the test: each URL probed is recorded and
// answered with `result`.
struct probe_script {
  std::vector<std::string> urls;
  probe_result result;
};

prober_actor::behavior_type fake_prober(prober_actor::pointer,
                                        std::shared_ptr<probe_script> st) {
  return {
      [=](probe_atom, std::string& url) {
        st->urls.push_back(url);
        return st->result;
      },
  };
}

json getting_started_job(const std::string& name) {
  std::ifstream in{AIPERF_SOURCE_DIR
                   "/tests/config/benchmark/fixtures/aiperfjob_getting_started.yaml"};
  std::stringstream text;
  text << in.rdbuf();
  auto doc = config::benchmark::parse_yaml(text.str(), "getting-started");
  EXPECT_TRUE(doc) << (doc ? "" : error_message(doc.error()));
  json out = doc ? *doc : json::object();
  out["metadata"] = {{"name", name}, {"namespace", "default"}};
  return out;
}

struct reconciler_test : caf_gtest::fixture<> {
  k8s::sim::store_actor store;
  k8s::api_actor api;
  std::shared_ptr<proxy_state> recorder = std::make_shared<proxy_state>();
  k8s::informer::owner_actor op;
  std::shared_ptr<harvest_script> harvests = std::make_shared<harvest_script>();
  fake_harvester_actor harvester;
  /// Set before start_operator() to check endpoints.
  std::shared_ptr<probe_script> probes;

  explicit reconciler_test(std::int64_t store_start_unix = start_unix) {
    k8s::sim::store_config cfg;
    cfg.start_unix_seconds = store_start_unix;
    auto s = k8s::sim::spawn_store(sys, cfg);
    EXPECT_TRUE(s) << (s ? "" : error_message(s.error()));
    store = *s;
    drain();
    ok(verb::create, {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""},
       k8s::crds::aiperfjob_crd());
    ok(verb::create, {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "", "", ""},
       k8s::sim::jobset_crd());
    api = sys.spawn(proxy, caf::actor_cast<k8s::api_actor>(store), recorder);
  }

  void start_operator(const std::function<void(reconciler_config&)>& adjust = {}) {
    reconciler_config cfg;
    cfg.api = api;
    cfg.cores = 4;
    cfg.start_unix_seconds = start_unix;
    cfg.seed = 11;
    harvester = sys.spawn(fake_harvester, harvests);
    cfg.harvester = caf::actor_cast<harvester_actor>(harvester);
    if (probes)
      cfg.prober = sys.spawn(fake_prober, probes);
    if (adjust)
      adjust(cfg);
    op = spawn_job_reconciler(sys, cfg);
    drain();
  }

  caf::expected<response> call(verb v, resource_ref ref, const json& body = nullptr,
                               patch_type pt = patch_type::none) {
    k8s::request r;
    r.verb = v;
    r.ref = std::move(ref);
    r.patch = pt;
    if (!body.is_null())
      r.body = body.dump();
    auto out = request<response>(caf::actor_cast<k8s::api_actor>(store), r);
    drain();
    return out;
  }

  json ok(verb v, resource_ref ref, const json& body = nullptr,
          patch_type pt = patch_type::none) {
    auto res = call(v, std::move(ref), body, pt);
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    return res ? json::parse(res->body) : json();
  }

  json get(resource_ref ref) {
    auto res = call(verb::get, std::move(ref));
    return res ? json::parse(res->body) : json();
  }

  bool exists(resource_ref ref) {
    return static_cast<bool>(call(verb::get, std::move(ref)));
  }

  json submit(const json& job) {
    return ok(verb::create, jobs_ref(), job);
  }

  json status_of(const std::string& job) {
    return get(jobs_ref(job)).value("status", json::object());
  }

  std::string condition(const std::string& job, const std::string& type,
                        const std::string& key = "status") {
    auto s = status_of(job);
    const json* c = condition_of(s, type);
    return c ? c->value(key, std::string{}) : std::string{"<none>"};
  }

  std::vector<json> events_of(const std::string& name) {
    std::vector<json> out;
    auto list = ok(verb::list, core_ref("events"));
    for (auto& e : list["items"])
      if (e["involvedObject"]["name"] == name && e["source"]["component"] == "aiperf-operator")
        out.push_back(e);
    return out;
  }

  // The operator's writes as "verb path" lines (GETs left out).
  std::vector<std::string> writes() const {
    std::vector<std::string> out;
    for (const auto& r : recorder->log)
      if (r.v != verb::get && r.path.find("/events") == std::string::npos)
        out.push_back(std::string{k8s::to_string(r.v)} + " " + r.path);
    return out;
  }

  std::vector<const recorded*> status_patches() const {
    std::vector<const recorded*> out;
    for (const auto& r : recorder->log)
      if (r.v == verb::patch && r.path.size() > 7
          && r.path.compare(r.path.size() - 7, 7, "/status") == 0)
        out.push_back(&r);
    return out;
  }
};

const std::string jobs_path = "/apis/aiperf.nvidia.com/v1alpha1/namespaces/default/aiperfjobs";

TEST_F(reconciler_test, admits_a_job_and_creates_its_objects_owned_by_it) {
  start_operator();
  auto job = submit(getting_started_job("j1"));
  auto uid = job["metadata"]["uid"].get<std::string>();
  drain();
  EXPECT_EQ(writes(),
            (std::vector<std::string>{
                "create /apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
                "create /apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
                "create /api/v1/namespaces/default/configmaps",
                "create /apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets",
                "patch " + jobs_path + "/j1/status", // Pending
                "patch " + jobs_path + "/j1/status", // Initializing: the JobSet runs
            }));
  for (auto ref : {rbac_ref("roles", "aiperf-j1-role"),
                   rbac_ref("rolebindings", "aiperf-j1-binding"),
                   core_ref("configmaps", "aiperf-j1-config"), jobsets_ref("aiperf-j1")}) {
    auto obj = get(ref);
    ASSERT_TRUE(obj.is_object()) << k8s::path_of(ref);
    EXPECT_TRUE(controlled_by(obj, "j1", uid)) << obj["metadata"].dump();
  }
  // Every status write is fenced on the job's UID and the version read.
  for (const auto* p : status_patches()) {
    ASSERT_GE(p->body.size(), 3u);
    EXPECT_EQ(p->body[0], (json{{"op", "test"}, {"path", "/metadata/uid"}, {"value", uid}}));
    EXPECT_EQ(p->body[1]["path"], "/metadata/resourceVersion");
  }
  auto s = status_of("j1");
  EXPECT_EQ(s["phase"], "Initializing");
  EXPECT_EQ(s["jobId"], "j1");
  EXPECT_EQ(s["jobSetName"], "aiperf-j1");
  EXPECT_EQ(s["workers"]["total"], 10);
  EXPECT_EQ(s["workers"]["ready"], 0);
  EXPECT_EQ(s["observedGeneration"], 1);
  EXPECT_EQ(condition("j1", "ConfigValid"), "True");
  EXPECT_EQ(condition("j1", "PreflightPassed"), "True");
  EXPECT_EQ(condition("j1", "ResourcesCreated"), "True");
  EXPECT_EQ(condition("j1", "WorkersReady"), "False");
  // The run file carries the job's epoch key (the results directory).
  auto cm = get(core_ref("configmaps", "aiperf-j1-config"));
  auto run = json::parse(cm["data"]["run_config.json"].get<std::string>());
  EXPECT_EQ(run["run_meta"]["epoch_key"], epoch_key_of(job));
}

TEST_F(reconciler_test, an_invalid_spec_fails_with_its_field_path_and_creates_nothing) {
  start_operator();
  auto job = getting_started_job("bad");
  job["spec"]["benchmark"]["endpoint"]["type"] = "nim_rankings";
  submit(job);
  auto s = status_of("bad");
  EXPECT_EQ(s["phase"], "Failed");
  EXPECT_EQ(condition("bad", "ConfigValid"), "False");
  EXPECT_EQ(condition("bad", "ConfigValid", "reason"), "SpecInvalid");
  EXPECT_EQ(condition("bad", "ConfigValid", "message").rfind("spec.benchmark.endpoint.type: ", 0),
            0u)
      << condition("bad", "ConfigValid", "message");
  EXPECT_EQ(condition("bad", "Failed"), "True");
  EXPECT_EQ(s["error"], condition("bad", "ConfigValid", "message"));
  auto events = events_of("bad");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "Warning");
  EXPECT_EQ(events[0]["reason"], "SpecInvalid");
  EXPECT_EQ(writes(), (std::vector<std::string>{"patch " + jobs_path + "/bad/status"}));
  EXPECT_FALSE(exists(rbac_ref("roles", "aiperf-bad-role")));
}

// An API server whose clock is before 1970 stamps a creationTimestamp no
// epoch key can hold: the job is refused before anything is created.
struct before_1970_test : reconciler_test {
  before_1970_test() : reconciler_test(-100) {}
};

TEST_F(before_1970_test, an_unstorable_epoch_key_rejects_the_job_at_admission) {
  start_operator();
  submit(getting_started_job("j1"));
  auto s = status_of("j1");
  EXPECT_EQ(s["phase"], "Failed");
  EXPECT_EQ(condition("j1", "ConfigValid"), "False");
  EXPECT_EQ(s["error"].get<std::string>().rfind("metadata.creationTimestamp 1969-12-31T23:58:20Z", 0),
            0u)
      << s["error"];
  EXPECT_EQ(writes(), (std::vector<std::string>{"patch " + jobs_path + "/j1/status"}));
}

TEST_F(reconciler_test, the_crds_dashboard_default_runs_headless) {
  start_operator();
  auto job = getting_started_job("ui");
  job["spec"]["benchmark"]["runtime"] = {{"workersPerPod", 5}}; // the CRD adds ui: dashboard
  submit(job);
  EXPECT_EQ(get(jobs_ref("ui"))["spec"]["benchmark"]["runtime"]["ui"], "dashboard");
  EXPECT_EQ(status_of("ui")["phase"], "Initializing");
  auto cm = get(core_ref("configmaps", "aiperf-ui-config"));
  auto run = json::parse(cm["data"]["run_config.json"].get<std::string>());
  EXPECT_EQ(run["runtime"]["workers_per_pod"], 5);
}

TEST_F(reconciler_test, an_endpoint_that_does_not_resolve_fails_the_job_and_creates_nothing) {
  probes = std::make_shared<probe_script>();
  probes->result = {probe_outcome::dns_failed, "dynamo-agg-frontend.dynamo-server.svc does not "
                                               "resolve (Name or service not known)"};
  start_operator();
  submit(getting_started_job("j1"));
  EXPECT_EQ(probes->urls,
            (std::vector<std::string>{"http://dynamo-agg-frontend.dynamo-server.svc:8000/v1"}));
  auto s = status_of("j1");
  EXPECT_EQ(s["phase"], "Failed");
  EXPECT_EQ(condition("j1", "EndpointReachable"), "False");
  EXPECT_EQ(condition("j1", "EndpointReachable", "reason"), "EndpointDNSResolutionFailed");
  EXPECT_EQ(s["error"], "endpoint http://dynamo-agg-frontend.dynamo-server.svc:8000/v1: "
                        "dynamo-agg-frontend.dynamo-server.svc does not resolve (Name or "
                        "service not known)");
  EXPECT_EQ(writes(), (std::vector<std::string>{"patch " + jobs_path + "/j1/status"}));
}

TEST_F(reconciler_test, an_unreachable_endpoint_waits_then_the_job_is_admitted) {
  probes = std::make_shared<probe_script>();
  probes->result = {probe_outcome::unreachable, "dynamo-agg-frontend.dynamo-server.svc:8000: "
                                                "Connection refused"};
  start_operator();
  submit(getting_started_job("j1"));
  EXPECT_EQ(status_of("j1").value("phase", ""), "");
  EXPECT_EQ(condition("j1", "EndpointReachable", "reason"), "EndpointUnreachable");
  EXPECT_FALSE(exists(jobsets_ref("aiperf-j1")));
  int warned = 0;
  for (const auto& e : events_of("j1"))
    warned += e["reason"] == "EndpointUnreachable";
  EXPECT_EQ(warned, 1);
  advance_time(10s); // retried, still refused: no second Warning
  EXPECT_EQ(probes->urls.size(), 2u);
  warned = 0;
  for (const auto& e : events_of("j1"))
    warned += e["reason"] == "EndpointUnreachable";
  EXPECT_EQ(warned, 1);
  probes->result = {probe_outcome::reachable, "accepts connections"};
  advance_time(10s);
  EXPECT_EQ(status_of("j1")["phase"], "Initializing");
  EXPECT_EQ(condition("j1", "EndpointReachable"), "True");
  EXPECT_TRUE(exists(jobsets_ref("aiperf-j1")));
}

TEST_F(reconciler_test, skip_endpoint_check_probes_nothing) {
  probes = std::make_shared<probe_script>();
  probes->result = {probe_outcome::dns_failed, "never asked"};
  start_operator();
  auto job = getting_started_job("j1");
  job["spec"]["skipEndpointCheck"] = true;
  submit(job);
  EXPECT_TRUE(probes->urls.empty());
  EXPECT_EQ(status_of("j1")["phase"], "Initializing");
  EXPECT_EQ(condition("j1", "EndpointReachable"), "<none>");
}

TEST(endpoint_probe, a_listening_port_is_reachable_and_a_closed_one_is_not) {
  // Two loopback ports of our own: one listens, the other is bound but not
  // listening (held, so no test running beside this one can take it).
  auto bound = [](bool listening) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    if (listening) {
      EXPECT_EQ(::listen(fd, 4), 0);
    }
    socklen_t len = sizeof addr;
    EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    return std::make_pair(fd, std::to_string(ntohs(addr.sin_port)));
  };
  auto [open_fd, open_port] = bound(true);
  auto [closed_fd, closed_port] = bound(false);
  auto open = probe_endpoint("http://127.0.0.1:" + open_port + "/v1", 2s);
  EXPECT_EQ(open.outcome, probe_outcome::reachable) << open.message;
  auto closed = probe_endpoint("http://127.0.0.1:" + closed_port, 2s);
  EXPECT_EQ(closed.outcome, probe_outcome::unreachable);
  EXPECT_EQ(closed.message, "127.0.0.1:" + closed_port + ": Connection refused");
  ::close(open_fd);
  ::close(closed_fd);
  // A URL that cannot be used is as permanent as a name that does not resolve.
  EXPECT_EQ(probe_endpoint("http://h:1/v1?x=1", 2s).outcome, probe_outcome::dns_failed);
}

TEST_F(reconciler_test, a_missing_secret_fails_preflight_naming_it) {
  start_operator();
  auto job = getting_started_job("sec");
  job["spec"]["podTemplate"]["env"] = json::array(
      {{{"name", "OPENAI_API_KEY"},
        {"valueFrom", {{"secretKeyRef", {{"name", "llm-key"}, {"key", "token"}}}}}}});
  submit(job);
  EXPECT_EQ(status_of("sec")["phase"], "Failed");
  EXPECT_EQ(condition("sec", "PreflightPassed"), "False");
  auto msg = condition("sec", "PreflightPassed", "message");
  EXPECT_NE(msg.find("Secret \"llm-key\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("OPENAI_API_KEY"), std::string::npos) << msg;
  EXPECT_FALSE(exists(rbac_ref("roles", "aiperf-sec-role")));
  EXPECT_FALSE(exists(jobsets_ref("aiperf-sec")));
}

TEST_F(reconciler_test, a_present_secret_passes_preflight) {
  start_operator();
  ok(verb::create, core_ref("secrets"),
     {{"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata", {{"name", "llm-key"}}},
      {"stringData", {{"token", "t"}}}});
  auto job = getting_started_job("sec");
  job["spec"]["podTemplate"]["env"] = json::array(
      {{{"name", "OPENAI_API_KEY"},
        {"valueFrom", {{"secretKeyRef", {{"name", "llm-key"}, {"key", "token"}}}}}}});
  submit(job);
  EXPECT_EQ(status_of("sec")["phase"], "Initializing");
  EXPECT_EQ(condition("sec", "PreflightPassed"), "True");
}

TEST_F(reconciler_test, an_ownerless_object_with_the_name_fails_the_job_naming_it) {
  start_operator();
  ok(verb::create, core_ref("configmaps"),
     {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "aiperf-j1-config"}}}});
  submit(getting_started_job("j1"));
  EXPECT_EQ(status_of("j1")["phase"], "Failed");
  EXPECT_EQ(condition("j1", "ResourcesCreated"), "False");
  auto msg = condition("j1", "ResourcesCreated", "message");
  EXPECT_NE(msg.find("ConfigMap default/aiperf-j1-config already exists"), std::string::npos)
      << msg;
  EXPECT_FALSE(exists(jobsets_ref("aiperf-j1")));
  // The ConfigMap that was there is left as it was.
  EXPECT_FALSE(get(core_ref("configmaps", "aiperf-j1-config"))["metadata"].contains(
      "ownerReferences"));
}

TEST_F(reconciler_test, an_older_incarnations_object_is_waited_for_then_replaced) {
  start_operator();
  json stale = {{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"metadata",
                 {{"name", "aiperf-j1-config"},
                  {"ownerReferences",
                   json::array({{{"apiVersion", "aiperf.nvidia.com/v1alpha1"},
                                 {"kind", "AIPerfJob"},
                                 {"name", "j1"},
                                 {"uid", "uid-of-an-earlier-j1"},
                                 {"controller", true}}})}}}};
  ok(verb::create, core_ref("configmaps"), stale);
  auto uid = submit(getting_started_job("j1"))["metadata"]["uid"].get<std::string>();
  advance_time(1s); // a few back-off rounds
  EXPECT_EQ(phase_of(get(jobs_ref("j1"))), "");
  EXPECT_FALSE(exists(jobsets_ref("aiperf-j1")));
  // The garbage collector's part: the old ConfigMap goes away.
  ok(verb::remove, core_ref("configmaps", "aiperf-j1-config"));
  advance_time(5s);
  EXPECT_EQ(status_of("j1")["phase"], "Initializing");
  EXPECT_TRUE(controlled_by(get(core_ref("configmaps", "aiperf-j1-config")), "j1", uid));
}

// The AIPerfJob is deleted and created again under the same name just
// before each of the four creates: the first incarnation's pass must write
// nothing into the second (its status fence names the old UID), and the
// second waits until the first's objects are gone, then owns all four.
TEST_F(reconciler_test, a_same_name_recreation_during_each_creation_step_is_fenced) {
  start_operator();
  const std::vector<std::string> steps{"roles", "rolebindings", "configmaps", "jobsets"};
  for (std::size_t step = 0; step < steps.size(); ++step) {
    auto name = "rc" + std::to_string(step);
    bool raced = false;
    recorder->before = [&, name, step](const k8s::request& r) -> std::vector<k8s::request> {
      if (raced || r.verb != verb::create || r.ref.resource != steps[step]
          || r.body.find("\"aiperf-" + name) == std::string::npos)
        return {};
      raced = true;
      k8s::request del;
      del.verb = verb::remove;
      del.ref = jobs_ref(name);
      k8s::request create;
      create.verb = verb::create;
      create.ref = jobs_ref();
      create.body = getting_started_job(name).dump();
      return {del, create};
    };
    auto first_uid = submit(getting_started_job(name))["metadata"]["uid"].get<std::string>();
    ASSERT_TRUE(raced) << steps[step];
    auto second = get(jobs_ref(name));
    auto second_uid = second["metadata"]["uid"].get<std::string>();
    ASSERT_NE(second_uid, first_uid);
    advance_time(2s);
    // Nothing of the first incarnation reached the second's status.
    EXPECT_EQ(status_of(name).value("phase", ""), "") << steps[step];
    EXPECT_FALSE(status_of(name).contains("jobSetName")) << steps[step];
    // The garbage collector's part: the first incarnation's objects go.
    for (auto ref : {rbac_ref("roles", "aiperf-" + name + "-role"),
                     rbac_ref("rolebindings", "aiperf-" + name + "-binding"),
                     core_ref("configmaps", "aiperf-" + name + "-config"),
                     jobsets_ref("aiperf-" + name)}) {
      auto obj = get(ref);
      if (obj.is_object() && controlled_by(obj, name, first_uid))
        ok(verb::remove, ref);
    }
    advance_time(10s);
    EXPECT_EQ(status_of(name)["phase"], "Initializing") << steps[step];
    for (auto ref : {rbac_ref("roles", "aiperf-" + name + "-role"),
                     rbac_ref("rolebindings", "aiperf-" + name + "-binding"),
                     core_ref("configmaps", "aiperf-" + name + "-config"),
                     jobsets_ref("aiperf-" + name)})
      EXPECT_TRUE(controlled_by(get(ref), name, second_uid)) << k8s::path_of(ref);
    recorder->before = nullptr;
  }
}

TEST_F(reconciler_test, a_restarted_operator_adopts_what_this_job_already_owns) {
  auto job = submit(getting_started_job("j1"));
  auto uid = job["metadata"]["uid"].get<std::string>();
  json role = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
               {"kind", "Role"},
               {"metadata",
                {{"name", "aiperf-j1-role"},
                 {"ownerReferences",
                  json::array({{{"apiVersion", "aiperf.nvidia.com/v1alpha1"},
                                {"kind", "AIPerfJob"},
                                {"name", "j1"},
                                {"uid", uid},
                                {"controller", true}}})}}},
               {"rules", json::array()}};
  auto created = ok(verb::create, rbac_ref("roles"), role);
  start_operator();
  EXPECT_EQ(status_of("j1")["phase"], "Initializing");
  // Adopted as it was, not replaced.
  EXPECT_EQ(get(rbac_ref("roles", "aiperf-j1-role"))["metadata"]["resourceVersion"],
            created["metadata"]["resourceVersion"]);
  EXPECT_TRUE(exists(jobsets_ref("aiperf-j1")));
}

TEST_F(reconciler_test, cancel_deletes_the_jobset_by_uid_and_ends_cancelled) {
  start_operator();
  submit(getting_started_job("j1"));
  auto jobset_uid = get(jobsets_ref("aiperf-j1"))["metadata"]["uid"].get<std::string>();
  recorder->log.clear();
  ok(verb::patch, jobs_ref("j1"), {{"spec", {{"cancel", true}}}}, patch_type::merge);
  drain();
  ASSERT_FALSE(recorder->log.empty());
  const recorded* del = nullptr;
  for (const auto& r : recorder->log)
    if (r.v == verb::remove)
      del = &r;
  ASSERT_NE(del, nullptr);
  EXPECT_EQ(del->path, "/apis/jobset.x-k8s.io/v1alpha2/namespaces/default/jobsets/aiperf-j1");
  EXPECT_EQ(del->body["preconditions"]["uid"], jobset_uid);
  EXPECT_FALSE(exists(jobsets_ref("aiperf-j1")));
  auto s = status_of("j1");
  EXPECT_EQ(s["phase"], "Cancelled");
  EXPECT_EQ(s["observedGeneration"], 2);
  EXPECT_EQ(condition("j1", "Complete", "reason"), "JobCancelled");
  EXPECT_TRUE(s.contains("completionTime"));
}

TEST_F(reconciler_test, a_job_cancelled_before_admission_creates_nothing) {
  start_operator();
  auto job = getting_started_job("early");
  job["spec"]["cancel"] = true;
  submit(job);
  EXPECT_EQ(status_of("early")["phase"], "Cancelled");
  EXPECT_EQ(writes(), (std::vector<std::string>{"patch " + jobs_path + "/early/status"}));
}

TEST_F(reconciler_test, a_failed_jobset_fails_its_job) {
  start_operator();
  submit(getting_started_job("j1"));
  ok(verb::patch, {"jobset.x-k8s.io", "v1alpha2", "jobsets", "default", "aiperf-j1", "status"},
     {{"status",
       {{"conditions", json::array({{{"type", "Failed"},
                                     {"status", "True"},
                                     {"reason", "FailedJobs"},
                                     {"message", "jobset failed due to one or more job failures"},
                                     {"lastTransitionTime", "2026-11-18T11:07:00Z"}}})}}}},
     patch_type::merge);
  drain();
  auto s = status_of("j1");
  EXPECT_EQ(s["phase"], "Failed");
  EXPECT_EQ(s["error"], "JobSet aiperf-j1 failed: FailedJobs: jobset failed due to one or more "
                        "job failures");
  auto events = events_of("j1");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["reason"], "JobSetFailed");
}

TEST_F(reconciler_test, a_queued_jobset_keeps_the_job_queued_until_it_is_admitted) {
  start_operator();
  auto job = getting_started_job("q1");
  job["spec"]["scheduling"] = {{"queueName", "team-a"}};
  submit(job);
  EXPECT_EQ(status_of("q1")["phase"], "Queued");
  // Kueue's part (here by hand): admit the workload.
  ok(verb::patch, jobsets_ref("aiperf-q1"), {{"spec", {{"suspend", false}}}}, patch_type::merge);
  drain();
  EXPECT_EQ(status_of("q1")["phase"], "Initializing");
}

TEST_F(reconciler_test, a_condition_written_concurrently_survives_the_operators_write) {
  start_operator();
  // Just before the operator's first status write, the controller pod
  // writes a condition of its own.
  bool raced = false;
  recorder->before = [&](const k8s::request& r) -> std::vector<k8s::request> {
    if (raced || r.ref.subresource != "status")
      return {};
    raced = true;
    k8s::request w;
    w.verb = verb::patch;
    w.patch = patch_type::merge;
    w.ref = r.ref;
    w.body = json{{"status",
                   {{"conditions", json::array({{{"type", "IndexUpdated"},
                                                 {"status", "True"},
                                                 {"reason", "Indexed"},
                                                 {"message", "written by another writer"},
                                                 {"lastTransitionTime",
                                                  "2026-11-18T11:06:40Z"}}})}}}}
                 .dump();
    return {w};
  };
  submit(getting_started_job("j1"));
  EXPECT_TRUE(raced);
  EXPECT_EQ(status_of("j1")["phase"], "Initializing");
  EXPECT_EQ(condition("j1", "IndexUpdated"), "True");
  EXPECT_EQ(condition("j1", "ResourcesCreated"), "True");
}

TEST_F(reconciler_test, workers_are_the_operators_estimate_until_the_controller_takes_over) {
  start_operator();
  auto spec = getting_started_job("w1");
  spec["spec"]["benchmark"]["runtime"] = {{"workers", 20}, {"workersPerPod", 10}};
  auto job = submit(spec);
  auto plan = k8s::manifests::plan_of(job, 4);
  ASSERT_TRUE(plan) << error_message(plan.error());
  int per_pod = static_cast<int>(plan->layout.workers_per_pod);
  int total = static_cast<int>(plan->layout.total_workers);
  ASSERT_EQ(plan->layout.pods, 2);
  auto set_ready_jobs = [&](int ready) {
    ok(verb::patch, {"jobset.x-k8s.io", "v1alpha2", "jobsets", "default", "aiperf-w1", "status"},
       {{"status",
         {{"replicatedJobsStatus",
           json::array({{{"name", "workers"},
                         {"ready", ready},
                         {"active", ready},
                         {"failed", 0},
                         {"succeeded", 0},
                         {"suspended", 0}}})}}}},
       patch_type::merge);
    drain();
  };
  // Seeded at admission, then the JobSet-derived estimate.
  EXPECT_EQ(status_of("w1")["workers"], (json{{"ready", 0}, {"total", total}}));
  set_ready_jobs(1);
  EXPECT_EQ(status_of("w1")["workers"]["ready"], per_pod);
  EXPECT_EQ(condition("w1", "WorkersReady"), "False");
  // The controller's first aggregate carries totalPods: the key is its own.
  json controller_workers = {{"ready", 3},
                             {"total", total},
                             {"dispatchable", 0},
                             {"routerConnected", 3},
                             {"readyRecordProcessors", 1},
                             {"declaredRecordProcessors", 2},
                             {"readyPods", 1},
                             {"totalPods", 2},
                             {"degradedPods", 0}};
  ok(verb::patch, jobs_ref("w1", "status"), {{"status", {{"workers", controller_workers}}}},
     patch_type::merge);
  drain();
  auto unordered = [](const json& j) { return nlohmann::json::parse(j.dump()); };
  EXPECT_EQ(unordered(status_of("w1")["workers"]), unordered(controller_workers));
  EXPECT_EQ(condition("w1", "WorkersReady"), "False");
  EXPECT_EQ(condition("w1", "WorkersReady", "message"),
            "3 of " + std::to_string(total) + " workers registered with the controller");
  // Every JobSet pod ready: the operator's estimate no longer writes.
  recorder->log.clear();
  set_ready_jobs(2);
  EXPECT_EQ(unordered(status_of("w1")["workers"]), unordered(controller_workers));
  for (const auto* p : status_patches()) {
    for (const auto& op : p->body) {
      if (op["path"] == "/status") {
        EXPECT_EQ(unordered(op["value"]["workers"]), unordered(controller_workers));
      }
    }
  }
  // WorkersReady follows the owner: the controller's ready.
  controller_workers["ready"] = total;
  controller_workers["dispatchable"] = total;
  ok(verb::patch, jobs_ref("w1", "status"), {{"status", {{"workers", controller_workers}}}},
     patch_type::merge);
  drain();
  EXPECT_EQ(condition("w1", "WorkersReady"), "True");
  // A key outside the CRD's nine is pruned by the API server.
  ok(verb::patch, jobs_ref("w1", "status"), {{"status", {{"workers", {{"readyWorkers", 1}}}}}},
     patch_type::merge);
  EXPECT_FALSE(status_of("w1")["workers"].contains("readyWorkers"));
}

TEST_F(reconciler_test, a_job_past_its_timeout_is_failed_and_its_jobset_deleted) {
  start_operator();
  auto job = getting_started_job("slow");
  job["spec"]["timeoutSeconds"] = 60;
  submit(job);
  EXPECT_EQ(status_of("slow")["phase"], "Initializing");
  advance_time(30s);
  EXPECT_EQ(status_of("slow")["phase"], "Initializing");
  advance_time(31s);
  auto s = status_of("slow");
  EXPECT_EQ(s["phase"], "Failed");
  EXPECT_EQ(s["error"], "the job did not finish within its timeout of 60 s");
  EXPECT_FALSE(exists(jobsets_ref("aiperf-slow")));
}

TEST_F(reconciler_test, a_timeout_edit_is_acknowledged_once_its_deadline_is_armed) {
  start_operator();
  auto job = getting_started_job("slow");
  job["spec"]["timeoutSeconds"] = 600;
  submit(job);
  EXPECT_EQ(status_of("slow")["observedGeneration"], 1);
  advance_time(30s);
  ok(verb::patch, jobs_ref("slow"), {{"spec", {{"timeoutSeconds", 60}}}}, patch_type::merge);
  drain();
  EXPECT_EQ(status_of("slow")["observedGeneration"], 2);
  EXPECT_EQ(status_of("slow")["phase"], "Initializing");
  advance_time(31s); // 61 s after the start: the new deadline
  EXPECT_EQ(status_of("slow")["phase"], "Failed");
  EXPECT_EQ(status_of("slow")["error"], "the job did not finish within its timeout of 60 s");
}

// -- completion -------------------------------------------------------------------

struct completion_test : reconciler_test {
  std::string uid;
  std::string jobset_uid;

  void run_to_initializing(const std::string& name = "j1") {
    if (!op)
      start_operator();
    uid = submit(getting_started_job(name))["metadata"]["uid"].get<std::string>();
    jobset_uid = get(jobsets_ref("aiperf-" + name))["metadata"]["uid"].get<std::string>();
    harvests->result.path = "/data/default/" + name + "/e";
    harvests->result.files = {"profile_export_aiperf.json", "job_spec.json"};
    harvests->result.profile_json
        = json{{"request_count", {{"unit", "requests"}, {"avg", 98}}},
               {"error_request_count", {{"unit", "requests"}, {"avg", 2}}},
               {"request_latency", {{"unit", "ms"}, {"avg", 12.3456}, {"p99", 20.0}}},
               {"input_config", json::object()}}
              .dump();
  }

  // The controller pod's part: its final status push, then the annotation.
  void controller_finishes(int exit_code, const std::string& reason = {},
                           const std::string& name = "j1") {
    ok(verb::patch, jobs_ref(name, "status"),
       {{"status", {{"resultsExported", true}, {"exitCode", exit_code}, {"exitReason", reason}}}},
       patch_type::merge);
    recorder->log.clear();
    ok(verb::patch, jobs_ref(name),
       {{"metadata", {{"annotations", {{"aiperf.nvidia.com/benchmark-complete", "true"}}}}}},
       patch_type::merge);
    drain();
  }
};

TEST_F(completion_test, a_finished_run_is_claimed_harvested_and_completed) {
  run_to_initializing();
  controller_finishes(0);
  ASSERT_FALSE(recorder->log.empty());
  // The claim: fenced on the UID, the version and the whole annotation map.
  const auto& claim = recorder->log.front();
  EXPECT_EQ(claim.v, verb::patch);
  EXPECT_EQ(claim.path, jobs_path + "/j1");
  ASSERT_EQ(claim.body.size(), 4u);
  EXPECT_EQ(claim.body[0]["path"], "/metadata/uid");
  EXPECT_EQ(claim.body[1]["path"], "/metadata/resourceVersion");
  EXPECT_EQ(claim.body[2]["path"], "/metadata/annotations");
  EXPECT_EQ(claim.body[2]["value"],
            (json{{"aiperf.nvidia.com/benchmark-complete", "true"}}));
  EXPECT_EQ(claim.body[3]["path"], "/metadata/annotations/aiperf.nvidia.com~1completion-claimed");
  ASSERT_EQ(harvests->requests.size(), 1u);
  const auto& h = harvests->requests[0];
  EXPECT_EQ(h.controller_host, "aiperf-j1-controller-0-0.aiperf-j1.default.svc.cluster.local");
  EXPECT_EQ(h.epoch, epoch_key_of(get(jobs_ref("j1"))));
  auto s = status_of("j1");
  EXPECT_EQ(s["phase"], "Completed");
  EXPECT_EQ(s["resultsPath"], "/data/default/j1/e");
  EXPECT_EQ(s["summary"]["total_requests"], 100);
  EXPECT_EQ(s["summary"]["error_rate"], 0.02);
  EXPECT_EQ(s["summary"]["request_latency"]["avg"], 12.35);
  EXPECT_FALSE(s["summary"].contains("input_config"));
  EXPECT_EQ(condition("j1", "ResultsAvailable"), "True");
  EXPECT_EQ(condition("j1", "Complete"), "True");
  EXPECT_EQ(condition("j1", "Complete", "reason"), "ResultsStored");
  // Then the JobSet goes, by UID.
  EXPECT_FALSE(exists(jobsets_ref("aiperf-j1")));
  EXPECT_EQ(recorder->log.back().v, verb::remove);
  EXPECT_EQ(recorder->log.back().body["preconditions"]["uid"], jobset_uid);
}

// The operator's API traffic on its common paths, against a committed golden
// file: a change in what it sends (a new request, a lost fence) fails here
// until the file is regenerated (AIPERF_UPDATE_GOLDEN=1) and the commit body
// says why.
TEST_F(completion_test, api_requests_of_the_common_paths_match_the_golden_file) {
  std::string text;
  auto section = [&](const std::string& title) {
    text += "## " + title + "\n";
    for (const auto& line : recorder->traffic)
      text += line + "\n";
    text += "= " + std::to_string(recorder->traffic.size()) + " requests\n\n";
    recorder->traffic.clear();
  };
  start_operator();
  section("start: the informers list and watch");
  run_to_initializing("j1");
  section("create: admit j1");
  // One steady tick: the controller's status push and heartbeat.
  ok(verb::patch, jobs_ref("j1", "status"),
     {{"status", {{"subPhase", "profiling"}, {"requestsCompleted", 10}}}}, patch_type::merge);
  ok(verb::patch, jobs_ref("j1"),
     {{"metadata",
       {{"annotations", {{"aiperf.nvidia.com/controller-heartbeat", k8s::format_time(start_unix)}}}}}},
     patch_type::merge);
  drain();
  section("steady: one controller push");
  controller_finishes(0);
  section("completion: claim, harvest, terminal status, JobSet deleted");
  submit(getting_started_job("j2"));
  recorder->traffic.clear();
  ok(verb::patch, jobs_ref("j2"), {{"spec", {{"cancel", true}}}}, patch_type::merge);
  drain();
  section("cancellation: j2");
  for (const char* name : {"r1", "r2", "r3"})
    submit(getting_started_job(name));
  caf::anon_send_exit(op, caf::exit_reason::kill);
  drain();
  recorder->traffic.clear();
  start_operator();
  section("restart with 3 running jobs (and 2 finished)");
  auto golden = std::string{AIPERF_SOURCE_DIR} + "/tests/actors/operator/api_requests.golden";
  if (std::getenv("AIPERF_UPDATE_GOLDEN"))
    std::ofstream{golden, std::ios::binary} << text;
  std::ifstream in{golden, std::ios::binary};
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_EQ(text, committed.str())
      << "the operator's API requests changed: regenerate " << golden
      << " with AIPERF_UPDATE_GOLDEN=1 and say why in the commit body";
}

TEST_F(completion_test, a_new_leader_finishes_a_job_from_status_and_annotations_alone) {
  run_to_initializing();
  ok(verb::patch, jobs_ref("j1", "status"), {{"status", {{"subPhase", "profiling"}}}},
     patch_type::merge);
  drain();
  ASSERT_EQ(status_of("j1")["phase"], "Running");
  // The leader loses its Lease mid-run: its reconciler is killed; the
  // standby's starts with nothing but what the API holds.
  caf::anon_send_exit(op, caf::exit_reason::kill);
  drain();
  recorder->log.clear();
  start_operator();
  EXPECT_EQ(writes(), std::vector<std::string>{}) << "nothing to redo for a running job";
  controller_finishes(0);
  EXPECT_EQ(harvests->requests.size(), 1u);
  auto s = status_of("j1");
  EXPECT_EQ(s["phase"], "Completed");
  EXPECT_EQ(s["summary"]["total_requests"], 100);
  EXPECT_FALSE(exists(jobsets_ref("aiperf-j1")));
  for (const auto& w : writes())
    EXPECT_EQ(w.rfind("create ", 0), std::string::npos) << w;
}

TEST_F(completion_test, a_timeout_during_export_waits_for_the_results) {
  start_operator();
  auto job = getting_started_job("j1");
  job["spec"]["timeoutSeconds"] = 60;
  uid = submit(job)["metadata"]["uid"].get<std::string>();
  harvests->result.path = "/data/default/j1/e";
  harvests->result.files = {"profile_export_aiperf.json"};
  harvests->result.profile_json = json{{"request_count", {{"unit", "requests"}, {"avg", 7}}}}.dump();
  advance_time(50s);
  // Every exporter flushed; the annotation is not written yet.
  ok(verb::patch, jobs_ref("j1", "status"),
     {{"status", {{"subPhase", "processing"}, {"resultsExported", true}, {"exitCode", 0}}}},
     patch_type::merge);
  drain();
  advance_time(20s); // past startTime + 60 s
  EXPECT_EQ(status_of("j1")["phase"], "Running") << "the deadline defers to exported results";
  EXPECT_TRUE(exists(jobsets_ref("aiperf-j1")));
  ok(verb::patch, jobs_ref("j1"),
     {{"metadata", {{"annotations", {{"aiperf.nvidia.com/benchmark-complete", "true"}}}}}},
     patch_type::merge);
  drain();
  EXPECT_EQ(status_of("j1")["phase"], "Completed");
}

TEST_F(completion_test, the_leader_sweeps_the_stored_results_an_hour_in_then_daily) {
  start_operator();
  advance_time(59min);
  EXPECT_EQ(harvests->sweeps, 0);
  advance_time(1min);
  EXPECT_EQ(harvests->sweeps, 1);
  advance_time(24h);
  EXPECT_EQ(harvests->sweeps, 2);
}

TEST_F(completion_test, the_exit_code_decides_the_outcome) {
  struct outcome {
    int code;
    std::string phase;
    std::string failed_reason; // the Failed condition's reason when Failed
  };
  for (const auto& o : {outcome{5, "Completed", ""}, outcome{4, "Failed", "FailedRequestThreshold"},
                        outcome{6, "Failed", "WorkerPodsLost"}}) {
    SCOPED_TRACE(o.code);
    auto name = "exit" + std::to_string(o.code);
    run_to_initializing(name);
    controller_finishes(o.code, "2 of 4 worker pods were lost (pod1, pod3)", name);
    auto s = status_of(name);
    EXPECT_EQ(s["phase"], o.phase);
    EXPECT_EQ(condition(name, "ResultsAvailable"), "True"); // harvested either way
    if (o.code == 5) {
      EXPECT_EQ(condition(name, "Degraded"), "True");
      EXPECT_EQ(condition(name, "Degraded", "message"),
                "2 of 4 worker pods were lost (pod1, pod3)");
    } else {
      EXPECT_EQ(condition(name, "Failed", "reason"), o.failed_reason);
      EXPECT_EQ(s["error"], "2 of 4 worker pods were lost (pod1, pod3)");
    }
  }
}

TEST_F(completion_test, a_failed_harvest_fails_the_job_with_results_fetch_failed) {
  run_to_initializing();
  harvests->failure = make_error(errc::results_fetch_failed, "no results from controller x");
  controller_finishes(0);
  auto s = status_of("j1");
  EXPECT_EQ(s["phase"], "Failed");
  EXPECT_EQ(condition("j1", "Failed", "reason"), "ResultsFetchFailed");
  EXPECT_EQ(condition("j1", "ResultsAvailable"), "False");
}

TEST_F(completion_test, a_job_deleted_during_its_harvest_gets_no_terminal_write) {
  run_to_initializing();
  harvests->hold = true;
  controller_finishes(0);
  ASSERT_EQ(harvests->requests.size(), 1u);
  EXPECT_FALSE(harvests->requests[0].cancelled->load());
  ok(verb::remove, jobs_ref("j1"));
  drain();
  // The sticky cancellation reaches the harvest in flight...
  EXPECT_TRUE(harvests->requests[0].cancelled->load());
  // ...which stops, as the real one does at its next check.
  recorder->log.clear();
  self->send(harvester, release_atom::value, make_error(errc::cancelled, "deleted"));
  drain();
  EXPECT_EQ(writes(), std::vector<std::string>{});
}

TEST_F(completion_test, a_persisted_claim_resumes_the_harvest_after_a_restart) {
  submit(getting_started_job("j1"));
  start_operator();
  harvests->result.path = "/data/default/j1/e";
  ok(verb::patch, jobs_ref("j1", "status"), {{"status", {{"exitCode", 0}}}}, patch_type::merge);
  // A claim the previous operator wrote before it died.
  ok(verb::patch, jobs_ref("j1"),
     {{"metadata",
       {{"annotations",
         {{"aiperf.nvidia.com/benchmark-complete", "true"},
          {"aiperf.nvidia.com/completion-claimed", "true"}}}}}},
     patch_type::merge);
  drain();
  EXPECT_EQ(harvests->requests.size(), 1u);
  EXPECT_EQ(status_of("j1")["phase"], "Completed");
}

TEST_F(completion_test, a_controller_failure_fails_the_job_without_a_harvest) {
  run_to_initializing();
  ok(verb::patch, jobs_ref("j1", "status"),
     {{"status", {{"controllerFailure", "timing-manager: worker floor breached"}}}},
     patch_type::merge);
  drain();
  auto s = status_of("j1");
  EXPECT_EQ(s["phase"], "Failed");
  EXPECT_EQ(s["error"], "Controller reported fatal failure: timing-manager: worker floor breached");
  EXPECT_TRUE(harvests->requests.empty());
}

// -- pods -------------------------------------------------------------------------

struct pods_test : reconciler_test {
  // A pod of job j1 as the JobSet controller would make it.
  json make_pod(const std::string& name, const std::string& rjob) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata",
                 {{"name", name},
                  {"labels",
                   {{"aiperf.nvidia.com/job-id", "j1"},
                    {"jobset.sigs.k8s.io/jobset-name", "aiperf-j1"},
                    {"jobset.sigs.k8s.io/replicatedjob-name", rjob}}}}},
                {"spec",
                 {{"containers", json::array({{{"name", rjob == "controller" ? "control-plane"
                                                                              : "workers"},
                                               {"image", "aiperf-node:dev"}}})}}}};
    return ok(verb::create, core_ref("pods"), pod);
  }

  void set_container(const std::string& pod, const std::string& container, json state,
                     json last = json::object(), int restarts = 0) {
    json cs = {{"name", container}, {"ready", false}, {"restartCount", restarts},
               {"image", "aiperf-node:dev"}, {"imageID", ""}, {"state", state}};
    if (!last.empty())
      cs["lastState"] = last;
    ok(verb::patch, {"", "v1", "pods", "default", pod, "status"},
       {{"status", {{"phase", "Pending"}, {"containerStatuses", json::array({cs})}}}},
       patch_type::merge);
    drain();
  }
};

TEST_F(pods_test, a_killed_controller_fails_the_job_naming_pod_exit_code_and_reason) {
  start_operator();
  submit(getting_started_job("j1"));
  make_pod("aiperf-j1-controller-0-0-x7k2p", "controller");
  set_container("aiperf-j1-controller-0-0-x7k2p", "control-plane",
                {{"terminated", {{"exitCode", 137}, {"reason", "Error"}}}});
  auto s = status_of("j1");
  EXPECT_EQ(s["phase"], "Failed");
  EXPECT_EQ(s["error"],
            "controller pod aiperf-j1-controller-0-0-x7k2p: container exited with code 137 (Error)");
  EXPECT_EQ(events_of("j1").back()["reason"], "ControllerTerminated");
}

TEST_F(pods_test, a_controller_that_ended_unannounced_is_salvaged_after_heartbeat_expiry) {
  start_operator();
  submit(getting_started_job("j1"));
  harvests->result.path = "/data/default/j1/e";
  harvests->result.files = {"profile_export_aiperf.json"};
  harvests->result.profile_json = json{{"request_count", {{"unit", "requests"}, {"avg", 5}}}}.dump();
  ok(verb::patch, jobs_ref("j1"),
     {{"metadata", {{"annotations", {{"aiperf.nvidia.com/controller-heartbeat",
                                      k8s::format_time(start_unix)}}}}}},
     patch_type::merge);
  make_pod("aiperf-j1-controller-0-0-x7k2p", "controller");
  // Its results are written, but the final push and the annotation never
  // reached the API; the container exits 0.
  set_container("aiperf-j1-controller-0-0-x7k2p", "control-plane",
                {{"terminated", {{"exitCode", 0}, {"reason", "Completed"}}}});
  EXPECT_EQ(status_of("j1")["phase"], "Initializing");
  EXPECT_TRUE(harvests->requests.empty()) << "a fresh heartbeat: nothing but the cache is read";
  advance_time(29s);
  EXPECT_TRUE(harvests->requests.empty());
  advance_time(2s); // past AIPERF_K8S_CONTROLLER_HEARTBEAT_EXPIRY_SECONDS
  ASSERT_EQ(harvests->requests.size(), 1u);
  auto s = status_of("j1");
  EXPECT_EQ(s["phase"], "Completed");
  EXPECT_EQ(s["exitCode"], 0);
  EXPECT_EQ(condition("j1", "ResultsAvailable"), "True");
  auto annotations = get(jobs_ref("j1"))["metadata"]["annotations"];
  EXPECT_EQ(annotations["aiperf.nvidia.com/completion-claimed"], "true");
  bool warned = false;
  for (const auto& e : events_of("j1"))
    warned = warned || e["reason"] == "ResultsSalvaging";
  EXPECT_TRUE(warned);
  EXPECT_FALSE(exists(jobsets_ref("aiperf-j1")));
}

TEST_F(pods_test, a_silent_running_controller_is_warned_about_once_per_silence) {
  start_operator();
  submit(getting_started_job("j1"));
  auto beat = [&](std::int64_t at) {
    ok(verb::patch, jobs_ref("j1"),
       {{"metadata", {{"annotations", {{"aiperf.nvidia.com/controller-heartbeat",
                                        k8s::format_time(at)}}}}}},
       patch_type::merge);
    drain();
  };
  auto warnings = [&] {
    int n = 0;
    for (const auto& e : events_of("j1"))
      n += e["reason"] == "ControllerHeartbeatExpired";
    return n;
  };
  beat(start_unix);
  make_pod("aiperf-j1-controller-0-0-x7k2p", "controller");
  set_container("aiperf-j1-controller-0-0-x7k2p", "control-plane", {{"running", json::object()}});
  advance_time(31s);
  EXPECT_EQ(warnings(), 1);
  advance_time(60s);
  EXPECT_EQ(warnings(), 1);
  beat(start_unix + 91);
  advance_time(31s);
  EXPECT_EQ(warnings(), 2);
  EXPECT_EQ(status_of("j1")["phase"], "Initializing") << "a silent controller is not failed";
  EXPECT_TRUE(harvests->requests.empty());
}

TEST_F(pods_test, a_restarting_container_is_warned_about_once) {
  start_operator();
  submit(getting_started_job("j1"));
  make_pod("aiperf-j1-workers-0-0-abcde", "workers");
  auto restarting = [&](int n) {
    set_container("aiperf-j1-workers-0-0-abcde", "workers", {{"running", json::object()}},
                  {{"terminated", {{"exitCode", 1}, {"reason", "Error"}}}}, n);
  };
  auto warnings = [&] {
    std::vector<std::string> out;
    for (const auto& e : events_of("j1"))
      if (e["reason"] == "PodRestarting")
        out.push_back(e["message"]);
    return out;
  };
  restarting(2);
  EXPECT_TRUE(warnings().empty());
  restarting(3); // AIPERF_POD_RESTART_THRESHOLD
  EXPECT_EQ(warnings(), (std::vector<std::string>{
                            "pod aiperf-j1-workers-0-0-abcde container workers restarted 3 times"}));
  restarting(4);
  EXPECT_EQ(warnings().size(), 1u);
}

TEST_F(pods_test, a_terminal_pod_event_reaches_the_status_with_every_timer_at_ten_minutes) {
  start_operator([](reconciler_config& cfg) {
    cfg.pending_threshold_seconds = 600;
    cfg.critical_threshold_seconds = 600;
    cfg.heartbeat_expiry_seconds = 600;
  });
  submit(getting_started_job("j1"));
  make_pod("aiperf-j1-controller-0-0-x7k2p", "controller");
  set_container("aiperf-j1-controller-0-0-x7k2p", "control-plane",
                {{"terminated", {{"exitCode", 1}, {"reason", "Error"}}}});
  // No simulated time passed: the pod's event alone got it there.
  EXPECT_EQ(status_of("j1")["phase"], "Failed");
}

TEST_F(pods_test, a_startup_blocker_is_recorded_warned_about_and_cleared) {
  start_operator();
  submit(getting_started_job("j1"));
  make_pod("aiperf-j1-workers-0-0-abcde", "workers");
  set_container("aiperf-j1-workers-0-0-abcde", "workers",
                {{"waiting", {{"reason", "ImagePullBackOff"},
                              {"message", "Back-off pulling image \"aiperf-node:dev\""}}}});
  auto issue = status_of("j1")["startupIssue"];
  EXPECT_EQ(issue["category"], "ImagePull");
  EXPECT_EQ(issue["podName"], "aiperf-j1-workers-0-0-abcde");
  EXPECT_EQ(issue["containerName"], "workers");
  EXPECT_EQ(issue["terminalAfterThreshold"], true);
  EXPECT_EQ(issue["warningEmitted"], false);
  auto first = issue["firstObservedTime"];
  EXPECT_TRUE(events_of("j1").empty() || events_of("j1").back()["reason"] != "StartupBlocked");
  advance_time(31s); // past AIPERF_K8S_WATCHDOG_PENDING_THRESHOLD_SECONDS, no new event needed
  issue = status_of("j1")["startupIssue"];
  EXPECT_EQ(issue["warningEmitted"], true);
  EXPECT_EQ(issue["firstObservedTime"], first); // the same blocker keeps its first sighting
  auto events = events_of("j1");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["reason"], "StartupBlocked");
  EXPECT_EQ(events.back()["type"], "Warning");
  // The image arrives: a healthy update clears the blocker.
  set_container("aiperf-j1-workers-0-0-abcde", "workers",
                {{"running", {{"startedAt", "2026-11-18T11:07:00Z"}}}});
  EXPECT_FALSE(status_of("j1").contains("startupIssue"));
  EXPECT_EQ(status_of("j1")["phase"], "Initializing"); // a blocker alone fails nothing
}

TEST_F(pods_test, a_blocker_unchanged_past_the_critical_threshold_claims_and_fails_the_job) {
  start_operator();
  submit(getting_started_job("j1"));
  auto jobset_uid = get(jobsets_ref("aiperf-j1"))["metadata"]["uid"].get<std::string>();
  make_pod("aiperf-j1-workers-0-0-abcde", "workers");
  set_container("aiperf-j1-workers-0-0-abcde", "workers",
                {{"waiting", {{"reason", "ImagePullBackOff"}, {"message", "no such image"}}}});
  advance_time(60s);
  EXPECT_EQ(status_of("j1")["phase"], "Initializing");
  recorder->log.clear();
  advance_time(31s); // 91 s unchanged: past the critical threshold (90 s)
  auto s = status_of("j1");
  EXPECT_EQ(s["phase"], "Failed");
  EXPECT_EQ(s["error"], "pod aiperf-j1-workers-0-0-abcde container workers: ImagePullBackOff: "
                        "no such image (unchanged for 90 s)");
  EXPECT_EQ(get(jobs_ref("j1"))["metadata"]["annotations"]
                ["aiperf.nvidia.com/startup-failure-claimed"],
            s["startupIssue"]["fingerprint"]);
  // The claim's fence, then the JobSet by UID, then the terminal status.
  const recorded* claim = nullptr;
  const recorded* del = nullptr;
  for (const auto& r : recorder->log) {
    if (r.v == verb::patch && r.path == jobs_path + "/j1" && !claim)
      claim = &r;
    if (r.v == verb::remove)
      del = &r;
  }
  ASSERT_NE(claim, nullptr);
  std::vector<std::string> tested;
  for (const auto& op : claim->body)
    if (op["op"] == "test")
      tested.push_back(op["path"]);
  EXPECT_EQ(tested, (std::vector<std::string>{"/metadata/uid", "/metadata/resourceVersion",
                                              "/spec/cancel", "/status/phase",
                                              "/status/startupIssue"}));
  ASSERT_NE(del, nullptr);
  EXPECT_EQ(del->body["preconditions"]["uid"], jobset_uid);
  EXPECT_EQ(events_of("j1").back()["reason"], "StartupFailed");
}

TEST_F(pods_test, a_capacity_wait_never_fails_the_job) {
  start_operator();
  submit(getting_started_job("j1"));
  make_pod("aiperf-j1-workers-0-0-abcde", "workers");
  ok(verb::patch, {"", "v1", "pods", "default", "aiperf-j1-workers-0-0-abcde", "status"},
     {{"status",
       {{"phase", "Pending"},
        {"conditions", json::array({{{"type", "PodScheduled"},
                                     {"status", "False"},
                                     {"reason", "Unschedulable"},
                                     {"message", "0/1 nodes are available: 1 Insufficient cpu."}}})}}}},
     patch_type::merge);
  drain();
  for (int i = 0; i < 5; ++i)
    advance_time(60s);
  auto s = status_of("j1");
  EXPECT_EQ(s["phase"], "Initializing");
  EXPECT_EQ(s["startupIssue"]["category"], "SchedulingDelay");
  EXPECT_EQ(s["startupIssue"]["warningEmitted"], true);
}

TEST_F(pods_test, a_persisted_startup_failure_claim_resumes_after_a_restart) {
  submit(getting_started_job("j1"));
  start_operator();
  ok(verb::patch, jobs_ref("j1", "status"),
     {{"status",
       {{"startupIssue",
         {{"podName", "p"}, {"containerName", "c"}, {"reason", "ErrImagePull"}}}}}},
     patch_type::merge);
  recorder->log.clear();
  ok(verb::patch, jobs_ref("j1"),
     {{"metadata", {{"annotations", {{"aiperf.nvidia.com/startup-failure-claimed", "true"}}}}}},
     patch_type::merge);
  drain();
  EXPECT_EQ(status_of("j1")["phase"], "Failed");
  EXPECT_FALSE(exists(jobsets_ref("aiperf-j1")));
}

TEST(pod_diagnosis, categories_priorities_and_terminality) {
  auto pod = [](json container_statuses, json conditions = json::array()) {
    return json{{"metadata", {{"name", "p"}}},
                {"status",
                 {{"phase", "Pending"},
                  {"containerStatuses", container_statuses},
                  {"conditions", conditions}}}};
  };
  auto waiting = [](std::string name, std::string reason) {
    return json{{"name", name}, {"state", {{"waiting", {{"reason", reason}}}}}};
  };
  EXPECT_EQ(diagnose_pod(pod(json::array({{{"name", "c"},
                                           {"state", {{"running", json::object()}}}}}))),
            std::nullopt);
  auto crash_and_pull = diagnose_pod(
      pod(json::array({waiting("a", "CrashLoopBackOff"), waiting("b", "ErrImagePull")})));
  ASSERT_TRUE(crash_and_pull);
  EXPECT_EQ(crash_and_pull->category, "ImagePull"); // ImagePull outranks CrashLoop
  EXPECT_EQ(crash_and_pull->container_name, "b");
  EXPECT_EQ(crash_and_pull->fingerprint, "p/b/ErrImagePull");
  auto config = diagnose_pod(pod(json::array({waiting("a", "CreateContainerConfigError")})));
  ASSERT_TRUE(config);
  EXPECT_EQ(config->category, "ContainerConfig");
  auto unschedulable = [&](std::string message) {
    return diagnose_pod(pod(json::array(), json::array({{{"type", "PodScheduled"},
                                                         {"status", "False"},
                                                         {"reason", "Unschedulable"},
                                                         {"message", message}}})));
  };
  auto capacity = unschedulable("0/3 nodes are available: 3 Insufficient cpu.");
  ASSERT_TRUE(capacity);
  EXPECT_EQ(capacity->category, "SchedulingDelay");
  EXPECT_FALSE(capacity->terminal_after_threshold);
  auto selector = unschedulable("0/3 nodes are available: 3 node(s) didn't match Pod's node "
                                "affinity/selector.");
  ASSERT_TRUE(selector);
  EXPECT_EQ(selector->category, "SchedulingConstraint");
  EXPECT_TRUE(selector->terminal_after_threshold);
  // Init containers count too.
  json init = {{"metadata", {{"name", "p"}}},
               {"status",
                {{"phase", "Pending"},
                 {"initContainerStatuses", json::array({waiting("init", "ImagePullBackOff")})}}}};
  ASSERT_TRUE(diagnose_pod(init));
  EXPECT_EQ(diagnose_pod(init)->container_name, "init");
}

TEST(pod_diagnosis, a_controller_end_carries_its_code_and_names_the_pod) {
  auto pod = [](json cs) {
    return json{{"metadata", {{"name", "aiperf-j-controller-0-0-x"}}},
                {"status", {{"containerStatuses", json::array({cs})}}}};
  };
  auto done = controller_termination(
      pod({{"name", "control-plane"}, {"state", {{"terminated", {{"exitCode", 0}}}}}}));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->exit_code, 0);
  EXPECT_TRUE(is_benchmark_outcome(done->exit_code));
  EXPECT_EQ(controller_termination(pod({{"name", "control-plane"},
                                        {"state", {{"running", json::object()}}}})),
            std::nullopt);
  auto crashed = controller_termination(
      pod({{"name", "control-plane"},
           {"state", {{"running", json::object()}}},
           {"lastState", {{"terminated", {{"exitCode", 1}, {"reason", "Error"}}}}}}));
  ASSERT_TRUE(crashed);
  EXPECT_FALSE(is_benchmark_outcome(crashed->exit_code));
  EXPECT_EQ(crashed->message,
            "controller pod aiperf-j-controller-0-0-x: container exited with code 1 (Error)");
  for (int code : {4, 5, 6})
    EXPECT_TRUE(is_benchmark_outcome(code)) << code;
  for (int code : {1, 2, 3, 137, 143})
    EXPECT_FALSE(is_benchmark_outcome(code)) << code;
  // The results sidecar ending is not the controller's end.
  EXPECT_EQ(controller_termination(pod({{"name", "results-sidecar"},
                                        {"state", {{"terminated", {{"exitCode", 2}}}}}})),
            std::nullopt);
}

TEST(pod_diagnosis, restarts_at_the_threshold_are_reported_per_container) {
  json pod = {{"status",
               {{"initContainerStatuses", json::array({{{"name", "init"}, {"restartCount", 3}}})},
                {"containerStatuses", json::array({{{"name", "workers"}, {"restartCount", 2}},
                                                   {{"name", "sidecar"}, {"restartCount", 7}}})}}}};
  auto past = restarts_past(pod, 3);
  ASSERT_EQ(past.size(), 2u);
  EXPECT_EQ(past[0].container, "init");
  EXPECT_EQ(past[0].restarts, 3);
  EXPECT_EQ(past[1].container, "sidecar");
  EXPECT_TRUE(restarts_past(pod, 0).empty());
  EXPECT_EQ(restarts_past(pod, 2).size(), 3u);
}

// -- the pure status helpers ----------------------------------------------------

TEST(job_status, a_condition_moves_its_transition_time_only_when_it_flips) {
  json s = json::object();
  set_condition(s, "WorkersReady", "False", "WorkersStarting", "0 of 2", 100);
  set_condition(s, "WorkersReady", "False", "WorkersStarting", "1 of 2", 200);
  EXPECT_EQ((*condition_of(s, "WorkersReady"))["lastTransitionTime"], k8s::format_time(100));
  EXPECT_EQ((*condition_of(s, "WorkersReady"))["message"], "1 of 2");
  set_condition(s, "WorkersReady", "True", "WorkersReady", "2 of 2", 300);
  EXPECT_EQ((*condition_of(s, "WorkersReady"))["lastTransitionTime"], k8s::format_time(300));
  EXPECT_EQ(s["conditions"].size(), 1u);
}

TEST(job_status, ownership_needs_the_name_and_the_uid_of_the_controller_reference) {
  auto owned = [](std::string name, std::string uid, bool controller) {
    return json{{"metadata",
                 {{"ownerReferences",
                   json::array({{{"apiVersion", "aiperf.nvidia.com/v1alpha1"},
                                 {"kind", "AIPerfJob"},
                                 {"name", name},
                                 {"uid", uid},
                                 {"controller", controller}}})}}}};
  };
  EXPECT_EQ(ownership_of(owned("j1", "u1", true), "j1", "u1"), ownership::ours);
  EXPECT_EQ(ownership_of(owned("j1", "u0", true), "j1", "u1"), ownership::earlier_owner);
  EXPECT_EQ(ownership_of(owned("j2", "u1", true), "j1", "u1"), ownership::foreign);
  EXPECT_EQ(ownership_of(owned("j1", "u1", false), "j1", "u1"), ownership::foreign);
  EXPECT_EQ(ownership_of(json{{"metadata", json::object()}}, "j1", "u1"), ownership::foreign);
  auto deleting = owned("j1", "u1", true);
  deleting["metadata"]["deletionTimestamp"] = "2026-11-18T11:06:40Z";
  EXPECT_EQ(ownership_of(deleting, "j1", "u1"), ownership::earlier_owner);
}

TEST(job_status, the_epoch_key_is_creation_seconds_and_a_uid_suffix) {
  json job = {{"metadata",
               {{"creationTimestamp", "2026-11-18T11:06:40Z"}, {"uid", "5f0c-11"}}}};
  auto key = epoch_key_of(job);
  ASSERT_EQ(key.size(), 16u);
  EXPECT_EQ(key.substr(0, 10), "1795000000");
  job["metadata"]["uid"] = "5f0c-12";
  EXPECT_NE(epoch_key_of(job), key);
  job["metadata"].erase("uid");
  EXPECT_EQ(epoch_key_of(job), "1795000000");
}

TEST(job_status, the_summary_rounds_and_derives_totals) {
  json doc = {{"request_count", {{"unit", "requests"}, {"avg", 3}}},
              {"error_request_count", {{"unit", "requests"}, {"avg", 0}}},
              {"time_to_first_token", {{"unit", "ms"}, {"avg", 1.005}, {"p50", 0.994}}},
              {"benchmark_id", "x"},
              {"some_other_metric", {{"avg", 1}}}};
  auto s = summary_of(doc);
  EXPECT_EQ(s["total_requests"], 3);
  EXPECT_EQ(s["error_rate"], 0.0);
  EXPECT_EQ(s["time_to_first_token"]["p50"], 0.99);
  EXPECT_FALSE(s.contains("benchmark_id"));
  EXPECT_FALSE(s.contains("some_other_metric"));
  EXPECT_EQ(summary_of(json("not an export")), json::object());
}

TEST(job_status, latest_never_moves_back_to_an_older_epoch) {
  auto dir = std::filesystem::temp_directory_path()
             / ("aiperf-latest-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  EXPECT_EQ(publish_latest(dir, "1795000100000001"), true);
  EXPECT_EQ(publish_latest(dir, "1795000000999999"), false); // an earlier second
  EXPECT_EQ(publish_latest(dir, "1795000200000500"), true);
  // Resubmitted within the same second: a smaller suffix, stored later.
  EXPECT_EQ(publish_latest(dir, "1795000200000001"), true);
  std::ifstream in{dir / "latest.txt"};
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "1795000200000001");
  std::filesystem::remove_all(dir);
}

TEST(job_status, terminal_phases_derive_complete_and_failed) {
  json s = {{"phase", "Running"}, {"subPhase", "profiling"}, {"currentPhase", "profiling"}};
  set_terminal(s, phase::failed, "boom", 10);
  EXPECT_EQ(s["phase"], "Failed");
  EXPECT_EQ(s["error"], "boom");
  EXPECT_FALSE(s.contains("subPhase"));
  EXPECT_FALSE(s.contains("currentPhase"));
  EXPECT_EQ((*condition_of(s, "Failed"))["status"], "True");
  EXPECT_EQ((*condition_of(s, "Complete"))["reason"], "JobFailed");
  json c = json::object();
  set_condition(c, "ResultsAvailable", "True", "ResultsStored", "", 5);
  set_terminal(c, phase::completed, "", 10);
  EXPECT_EQ((*condition_of(c, "Complete"))["status"], "True");
  EXPECT_EQ((*condition_of(c, "Complete"))["reason"], "ResultsStored");
}

} // namespace
} // namespace aiperf::op

namespace aiperf::op {
namespace {

// docs/kubernetes.md's operator environment table names only variables the
// code reads, with the defaults the code uses.
TEST(operator_docs, the_environment_table_matches_the_code) {
  auto read = [](const char* rel) {
    std::ifstream in{std::string{AIPERF_SOURCE_DIR} + "/" + rel};
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  auto docs = read("docs/kubernetes.md");
  auto from = docs.find("## The operator");
  ASSERT_NE(from, std::string::npos);
  auto table = docs.find("### Environment", from);
  ASSERT_NE(table, std::string::npos);
  auto end = docs.find("\n\n", docs.find("| Variable", table));
  std::stringstream rows{docs.substr(table, end - table)};
  auto code = read("tools/commands/operator_command.cpp") + read("tools/commands/local_pods.cpp")
              + read("k8s/manifests/manifests.cpp");
  int checked = 0;
  for (std::string line; std::getline(rows, line);) {
    if (line.rfind("| `AIPERF_", 0) != 0)
      continue;
    auto name_end = line.find('`', 3);
    auto name = line.substr(3, name_end - 3);
    EXPECT_NE(code.find("\"" + name + "\""), std::string::npos) << name << " is not read";
    // `| `NAME` | `DEFAULT` | ...`: the fallback of number_from().
    auto call = code.find("number_from(env, \"" + name + "\", ");
    auto d0 = line.find("| `", name_end);
    if (call != std::string::npos && d0 != std::string::npos) {
      auto d1 = line.find('`', d0 + 3);
      auto fallback = code.substr(call + name.size() + 21);
      EXPECT_EQ(std::stod(fallback), std::stod(line.substr(d0 + 3, d1 - d0 - 3))) << name;
    }
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

} // namespace
} // namespace aiperf::op
