// The HTTP/HTTPS front over a small fake store: what the codec adds on the
// wire (Status bodies, the plain 404, chunked watches, Warning and Audit-ID
// headers, authentication, faults, the audit log), independent of the real
// store's semantics, which the conformance suite covers through kubectl.
#include "k8s/api/json.hpp"
#include "k8s/object/status_json.hpp"
#include "k8s/sim/http/front.hpp"
#include "k8s/sim/http/protobuf.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/k8s/sim_http/sim_http_client.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <unistd.h>

namespace aiperf::k8s::sim::http {
namespace {

using namespace std::chrono_literals;
using testing::fetch;
using testing::reply;
using testing::stream_reader;

/// What the fake store saw, for the test to read.
struct recorder {
  std::mutex mutex;
  std::vector<request> requests;
  std::vector<bool> resets;
  std::vector<request> last() {
    std::lock_guard guard{mutex};
    return requests;
  }
};

struct fake_state {
  std::map<std::string, json> objects; // name -> ConfigMap
  std::uint64_t rv = 100;
  std::map<std::uint64_t, watch_sink_actor> sinks;
  std::uint64_t next_watch = 1;
};

status not_found(const std::string& name) {
  status st{"NotFound", 404, "configmaps \"" + name + "\" not found", {}};
  st.details.name = name;
  st.details.kind = "configmaps";
  return st;
}

store_actor::behavior_type
fake_store(store_actor::stateful_pointer<fake_state> self,
           std::shared_ptr<recorder> rec) {
  auto broadcast = [self](const std::string& type, const json& obj) {
    for (auto& [id, sink] : self->state.sinks)
      self->send(
          sink, events_atom::value, id,
          std::vector<watch_event>{{type, obj.dump()}, {type, obj.dump()}});
  };
  return {
      [self, rec, broadcast](request& r) -> caf::result<response> {
        {
          std::lock_guard guard{rec->mutex};
          rec->requests.push_back(r);
        }
        if (r.ref.resource != "configmaps")
          return make_status_error(
              "fake", status{"NotFound",
                             404,
                             "the server could not find the requested "
                             "resource",
                             {}});
        auto& st = self->state;
        switch (r.verb) {
        case verb::create: {
          auto obj = json::parse(r.body, nullptr, false);
          if (obj.is_discarded())
            return make_status_error("fake",
                                     status{"BadRequest", 400, "bad json", {}});
          auto name = obj["metadata"]["name"].get<std::string>();
          if (st.objects.count(name) != 0) {
            status s{"AlreadyExists",
                     409,
                     "configmaps \"" + name + "\" already exists",
                     {}};
            s.details.name = name;
            s.details.kind = "configmaps";
            return make_status_error("fake", s);
          }
          obj["metadata"]["resourceVersion"] = std::to_string(++st.rv);
          st.objects[name] = obj;
          broadcast("ADDED", obj);
          return response{201, obj.dump(), {"the fake store warns \"you\""}};
        }
        case verb::get: {
          auto it = st.objects.find(r.ref.name);
          if (it == st.objects.end())
            return make_status_error("fake", not_found(r.ref.name));
          return response{200, it->second.dump(), {}};
        }
        case verb::list: {
          json list
              = {{"kind", "ConfigMapList"},
                 {"apiVersion", "v1"},
                 {"metadata", {{"resourceVersion", std::to_string(st.rv)}}},
                 {"items", json::array()}};
          for (auto& [n, o] : st.objects)
            list["items"].push_back(o);
          return response{200, list.dump(), {}};
        }
        default:
          return response{200, "{}", {}};
        }
      },
      [self, rec](watch_atom, request& r,
                  watch_sink_actor& sink) -> caf::result<std::uint64_t> {
        {
          std::lock_guard guard{rec->mutex};
          rec->requests.push_back(r);
        }
        if (r.label_selector == "bad=")
          return make_status_error(
              "fake", status{"BadRequest", 400, "bad selector", {}});
        auto id = self->state.next_watch++;
        self->state.sinks[id] = sink;
        return id;
      },
      [self](unwatch_atom, std::uint64_t id) {
        auto it = self->state.sinks.find(id);
        if (it != self->state.sinks.end()) {
          self->send(it->second, watch_end_atom::value, id, caf::error{});
          self->state.sinks.erase(it);
        }
      },
      [](authenticate_atom, std::string& token) -> caf::result<user_info> {
        if (token == "sa-token")
          return user_info{"system:serviceaccount:bench:default",
                           "u1",
                           {"system:serviceaccounts", "system:authenticated"},
                           {{"authentication.kubernetes.io/pod-name", {"p1"}}}};
        return make_status_error(
            "authenticate", status{"Unauthorized", 401, "Unauthorized", {}});
      },
      [](discovery_atom, std::string& path) -> caf::result<response> {
        if (path == "/api")
          return response{
              200, R"({"kind":"APIVersions","versions":["v1"]})", {}};
        if (path == "/openapi/v2")
          return response{200, "", {}};
        return make_error(errc::not_found, "no such discovery path");
      },
      [rec](reset_atom, bool keep) -> std::string {
        std::lock_guard guard{rec->mutex};
        rec->resets.push_back(keep);
        return "200";
      },
      [self](drop_watches_atom, std::string&) -> std::uint64_t {
        std::uint64_t n = 0;
        for (auto& [id, sink] : self->state.sinks) {
          self->send(sink, watch_end_atom::value, id,
                     make_error(errc::transport, "dropped by the simulator"));
          ++n;
        }
        self->state.sinks.clear();
        return n;
      },
  };
}

class front_test : public ::testing::Test {
protected:
  void start(bool tls) {
    rec = std::make_shared<recorder>();
    store = sys.spawn(fake_store, rec);
    front_options opts;
    opts.admin_token = "admin-token";
    audit_path = std::filesystem::temp_directory_path()
                 / ("sim_http_audit_" + std::to_string(::getpid()) + ".log");
    std::filesystem::remove(audit_path);
    opts.audit_log_path = audit_path.string();
    if (tls) {
      auto id = make_tls_identity();
      ASSERT_TRUE(id) << error_message(id.error());
      ca = id->ca_cert_pem;
      identity = *id;
      opts.tls = *id;
    }
    srv = std::make_unique<front>(sys, store, opts);
    auto p = srv->start();
    ASSERT_TRUE(p) << error_message(p.error());
    port = *p;
  }
  void TearDown() override {
    if (srv)
      srv->stop();
    caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
    std::filesystem::remove(audit_path);
  }
  std::vector<json> audit_lines() {
    std::vector<json> out;
    std::ifstream in{audit_path};
    for (std::string line; std::getline(in, line);) {
      auto j = json::parse(line, nullptr, false);
      EXPECT_FALSE(j.is_discarded()) << line;
      out.push_back(j);
    }
    return out;
  }
  reply get(const std::string& target, const testing::header_list& h = {}) {
    return fetch(port, "GET", target, {}, h, ca);
  }
  reply post(const std::string& target, const std::string& body,
             const testing::header_list& h
             = {{"Content-Type", "application/json"}}) {
    return fetch(port, "POST", target, body, h, ca);
  }

  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  std::shared_ptr<recorder> rec;
  store_actor store;
  std::unique_ptr<front> srv;
  std::uint16_t port = 0;
  std::string ca;
  tls_identity identity;
  std::filesystem::path audit_path;
};

const std::string cm1
    = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"}})";

TEST_F(front_test, objects_statuses_and_the_plain_404) {
  start(false);
  auto created = post(
      "/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create", cm1);
  EXPECT_EQ(created.status, 201u);
  EXPECT_EQ(created.headers["content-type"], "application/json");
  EXPECT_EQ(created.headers["warning"],
            R"(299 - "the fake store warns \"you\"")");
  EXPECT_EQ(created.headers["audit-id"].size(), 36u);
  EXPECT_EQ(json::parse(created.body)["metadata"]["resourceVersion"], "101");

  auto again = post("/api/v1/namespaces/default/configmaps", cm1);
  EXPECT_EQ(again.status, 409u);
  EXPECT_EQ(
      again.body,
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
      "\"Failure\","
      "\"message\":\"configmaps \\\"c1\\\" already "
      "exists\",\"reason\":\"AlreadyExists\","
      "\"details\":{\"name\":\"c1\",\"kind\":\"configmaps\"},\"code\":409}\n");

  auto missing = get("/api/v1/namespaces/default/configmaps/nope");
  EXPECT_EQ(missing.status, 404u);
  auto st = parse_status(missing.body);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->reason, "NotFound");
  EXPECT_EQ(st->message, "configmaps \"nope\" not found");

  for (const char* path :
       {"/nothing/here", "/api/v1/namespaces/default/configmaps/a/b/c/d",
        "/openapi/v3", "/apis/nope.io/v1"}) {
    auto plain = get(path);
    EXPECT_EQ(plain.status, 404u) << path;
    EXPECT_EQ(plain.body, "404 page not found\n") << path;
    EXPECT_EQ(plain.headers["content-type"], "text/plain; charset=utf-8")
        << path;
  }
  auto api = get("/api?timeout=32s");
  EXPECT_EQ(api.status, 200u);
  EXPECT_EQ(api.body, R"({"kind":"APIVersions","versions":["v1"]})");
  auto openapi = get("/openapi/v2");
  EXPECT_EQ(openapi.status, 200u);
  EXPECT_EQ(openapi.headers["content-type"], "application/octet-stream");
  EXPECT_EQ(get("/healthz").body, "ok");

  auto bad_patch
      = fetch(port, "PATCH", "/api/v1/namespaces/default/configmaps/c1", "{}",
              {{"Content-Type", "text/plain"}});
  EXPECT_EQ(bad_patch.status, 415u);
  EXPECT_EQ(parse_status(bad_patch.body)->reason, "UnsupportedMediaType");
}

TEST_F(front_test, request_fields_come_from_headers) {
  start(false);
  get("/api/v1/namespaces/default/configmaps?limit=500",
      {{"Accept",
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"},
       {"Impersonate-User", "jane"},
       {"Impersonate-Group", "devs"},
       {"Impersonate-Group", "ops"},
       {"User-Agent", "kubectl/v1.32.4"}});
  auto seen = rec->last();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].verb, verb::list);
  EXPECT_TRUE(seen[0].as_table);
  EXPECT_EQ(seen[0].limit, 500);
  EXPECT_EQ(seen[0].impersonate_user, "jane");
  EXPECT_EQ(seen[0].impersonate_groups,
            (std::vector<std::string>{"devs", "ops"}));
  EXPECT_EQ(seen[0].user_agent, "kubectl/v1.32.4");
  EXPECT_EQ(seen[0].user, admin_user()); // plain HTTP without a token
}

TEST_F(front_test, https_checks_bearer_tokens) {
  start(true);
  auto admin = get("/api/v1/namespaces/default/configmaps",
                   {{"Authorization", "Bearer admin-token"}});
  EXPECT_EQ(admin.status, 200u);
  auto sa = get("/api/v1/namespaces/default/configmaps/x",
                {{"Authorization", "Bearer sa-token"}});
  EXPECT_EQ(sa.status, 404u);
  auto bad = get("/api/v1/namespaces/default/configmaps",
                 {{"Authorization", "Bearer wrong"}});
  EXPECT_EQ(bad.status, 401u);
  EXPECT_EQ(parse_status(bad.body)->reason, "Unauthorized");
  get("/api/v1/namespaces/default/configmaps");
  auto seen = rec->last();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].user, admin_user());
  EXPECT_EQ(seen[1].user.username, "system:serviceaccount:bench:default");
  EXPECT_EQ(seen[2].user.username, "system:anonymous");
  // Fault routes are the admin's only.
  auto refused = post("/sim/v1/faults", R"({"code":503})", {});
  EXPECT_EQ(refused.status, 403u);
  auto ok = post("/sim/v1/faults", R"({"code":503})",
                 {{"Authorization", "Bearer admin-token"}});
  EXPECT_EQ(ok.status, 201u);
  EXPECT_EQ(get("/api/v1/namespaces/default/configmaps").status, 503u);
}

TEST_F(front_test, https_authenticates_client_certificates_of_the_cluster_ca) {
  start(true);
  auto jane = make_client_certificate(identity, "jane", {"devs", "qa"});
  ASSERT_TRUE(jane) << error_message(jane.error());
  const std::string target = "/api/v1/namespaces/default/configmaps";
  auto r = fetch(port, "GET", target, {}, {}, ca,
                 {jane->cert_pem, jane->key_pem});
  EXPECT_EQ(r.status, 200u);
  // The certificate wins over a token, as kube-apiserver asks its x509
  // authenticator first.
  fetch(port, "GET", target, {}, {{"Authorization", "Bearer admin-token"}},
        ca, {jane->cert_pem, jane->key_pem});
  // A certificate from another CA ends the handshake: no answer at all.
  auto other = make_tls_identity();
  ASSERT_TRUE(other);
  auto stranger = make_client_certificate(*other, "mallory", {"system:masters"});
  ASSERT_TRUE(stranger);
  EXPECT_EQ(fetch(port, "GET", target, {}, {}, ca,
                  {stranger->cert_pem, stranger->key_pem})
                .status,
            0u);
  auto seen = rec->last();
  ASSERT_EQ(seen.size(), 2u);
  for (const auto& req : seen) {
    EXPECT_EQ(req.user.username, "jane");
    EXPECT_EQ(req.user.groups, (std::vector<std::string>{"devs", "qa"}));
  }
  auto lines = audit_lines();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back()["user"]["username"], "jane");
  EXPECT_FALSE(make_client_certificate(identity, "", {}));
}

TEST_F(front_test, watches_stream_one_json_event_per_line) {
  start(false);
  stream_reader watch{port, "/api/v1/namespaces/default/configmaps?watch=True"};
  // The watch is registered once the store has seen it.
  for (int i = 0; i < 400 && rec->last().empty(); ++i)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(rec->last().size(), 1u);
  EXPECT_EQ(rec->last()[0].verb, verb::watch);
  ASSERT_EQ(post("/api/v1/namespaces/default/configmaps", cm1).status, 201u);
  auto lines = watch.wait_lines(2, 5s);
  ASSERT_EQ(lines.size(), 2u) << watch.raw();
  for (const auto& line : lines) {
    auto ev = json::parse(line);
    EXPECT_EQ(ev["type"], "ADDED");
    EXPECT_EQ(ev["object"]["metadata"]["name"], "c1");
  }
  auto raw = watch.raw();
  EXPECT_NE(raw.find("Transfer-Encoding: chunked"), std::string::npos);
  EXPECT_NE(raw.find("Content-Type: application/json"), std::string::npos);
  // Both events of the store's one message went out in one chunk.
  bool complete = false;
  auto first_chunk = raw.substr(raw.find("\r\n\r\n") + 4);
  EXPECT_EQ(std::stoul(first_chunk, nullptr, 16),
            lines[0].size() + lines[1].size() + 2);
  EXPECT_EQ(testing::dechunk(raw, &complete).size(),
            lines[0].size() + lines[1].size() + 2);

  // Dropped: the connection goes without the terminating chunk.
  auto dropped = post("/sim/v1/watches:drop", "{}", {});
  EXPECT_EQ(dropped.status, 200u);
  EXPECT_EQ(json::parse(dropped.body)["dropped"], 1);
  EXPECT_TRUE(watch.wait_closed(5s));
  EXPECT_FALSE(watch.clean_end());

  auto refused = get(
      "/api/v1/namespaces/default/configmaps?watch=1&labelSelector=bad%3D");
  EXPECT_EQ(refused.status, 400u);
  EXPECT_EQ(parse_status(refused.body)->message, "bad selector");
}

TEST_F(front_test, faults_answer_then_expire) {
  start(false);
  post("/api/v1/namespaces/default/configmaps", cm1);
  auto added = post(
      "/sim/v1/faults",
      R"({"match":{"verb":"get","resource":"configmaps","namespace":"default"},)"
      R"("count":2,"code":429,"retryAfterSeconds":2})",
      {});
  ASSERT_EQ(added.status, 201u) << added.body;
  auto id = json::parse(added.body)["id"].get<std::string>();
  EXPECT_EQ(get("/api/v1/namespaces/other/configmaps/c2").status,
            404u); // no match
  for (int i = 0; i < 2; ++i) {
    auto r = get("/api/v1/namespaces/default/configmaps/c1");
    EXPECT_EQ(r.status, 429u);
    EXPECT_EQ(r.headers["retry-after"], "2");
    auto st = parse_status(r.body);
    ASSERT_TRUE(st);
    EXPECT_EQ(st->reason, "TooManyRequests");
    EXPECT_EQ(st->details.retry_after_seconds, 2);
  }
  EXPECT_EQ(get("/api/v1/namespaces/default/configmaps/c1").status, 200u);
  EXPECT_EQ(fetch(port, "DELETE", "/sim/v1/faults/" + id).status,
            404u); // used up

  auto reset
      = post("/sim/v1/faults",
             R"({"match":{"verb":"list"},"count":-1,"code":"reset"})", {});
  ASSERT_EQ(reset.status, 201u);
  EXPECT_EQ(get("/api/v1/namespaces/default/configmaps").status,
            0u); // no answer
  EXPECT_EQ(get("/api/v1/namespaces/default/configmaps").status, 0u);
  auto rid = json::parse(reset.body)["id"].get<std::string>();
  EXPECT_EQ(fetch(port, "DELETE", "/sim/v1/faults/" + rid).status, 200u);
  EXPECT_EQ(get("/api/v1/namespaces/default/configmaps").status, 200u);

  auto slow = post("/sim/v1/faults", R"({"delayMs":300})", {});
  ASSERT_EQ(slow.status, 201u);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(get("/api/v1/namespaces/default/configmaps/c1").status, 200u);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms);

  auto bad = post("/sim/v1/faults", R"({"code":418})", {});
  EXPECT_EQ(bad.status, 400u);
  EXPECT_NE(parse_status(bad.body)->message.find("409, 429, 500, 503, 504"),
            std::string::npos);
}

TEST_F(front_test, restart_resets_connections_and_reopens) {
  start(false);
  stream_reader watch{port, "/api/v1/namespaces/default/configmaps?watch=true"};
  for (int i = 0; i < 400 && rec->last().empty(); ++i)
    std::this_thread::sleep_for(5ms);
  auto r = post("/sim/v1/apiserver:restart",
                R"({"downSeconds":1,"keepState":false})", {});
  EXPECT_EQ(r.status, 200u);
  EXPECT_TRUE(watch.wait_closed(5s));
  EXPECT_EQ(get("/healthz").status, 0u); // down
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(get("/healthz").status, 200u);
  std::lock_guard guard{rec->mutex};
  EXPECT_EQ(rec->resets, std::vector<bool>{false});
}

TEST_F(front_test, audit_log_has_one_event_per_request) {
  start(false);
  post("/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create", cm1,
       {{"Content-Type", "application/json"}, {"User-Agent", "test/1"}});
  get("/api/v1/namespaces/default/configmaps/nope");
  get("/version/nothing");
  post("/sim/v1/faults", R"({"code":500,"match":{"verb":"deletecollection"}})",
       {});
  {
    stream_reader watch{port,
                        "/api/v1/namespaces/default/configmaps?watch=true"};
    // The create, the get and the watch reached the store.
    for (int i = 0; i < 400 && rec->last().size() < 3; ++i)
      std::this_thread::sleep_for(5ms);
    ASSERT_EQ(post("/api/v1/namespaces/default/configmaps",
                   R"({"metadata":{"name":"c2"}})")
                  .status,
              201u);
    watch.wait_lines(2, 5s);
  }
  auto lines = audit_lines();
  ASSERT_EQ(lines.size(), 5u);
  const auto& create = lines[0];
  EXPECT_EQ(create["kind"], "Event");
  EXPECT_EQ(create["apiVersion"], "audit.k8s.io/v1");
  EXPECT_EQ(create["stage"], "ResponseComplete");
  EXPECT_EQ(create["verb"], "create");
  EXPECT_EQ(
      create["requestURI"],
      "/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create");
  EXPECT_EQ(create["user"]["username"], "system:admin");
  EXPECT_EQ(create["sourceIPs"], json::array({"127.0.0.1"}));
  EXPECT_EQ(create["userAgent"], "test/1");
  EXPECT_EQ(create["objectRef"], json({{"resource", "configmaps"},
                                       {"namespace", "default"},
                                       {"apiVersion", "v1"}}));
  EXPECT_EQ(create["responseStatus"],
            json({{"metadata", json::object()}, {"code", 201}}));
  EXPECT_EQ(create["auditID"].get<std::string>().size(), 36u);
  EXPECT_EQ(create["requestReceivedTimestamp"].get<std::string>().size(), 27u);
  EXPECT_LE(create["requestReceivedTimestamp"], create["stageTimestamp"]);
  EXPECT_EQ(lines[1]["responseStatus"]["code"], 404);
  EXPECT_EQ(lines[1]["responseStatus"]["reason"], "NotFound");
  EXPECT_EQ(lines[1]["objectRef"]["name"], "nope");
  EXPECT_EQ(lines[2]["verb"], "get");
  EXPECT_FALSE(lines[2].contains("objectRef"));
  // The fault route is not audited; the watch is, when established.
  EXPECT_EQ(lines[3]["verb"], "watch");
  EXPECT_EQ(lines[3]["stage"], "ResponseStarted");
  EXPECT_EQ(lines[4]["verb"], "create");
}

TEST_F(front_test, audit_records_user_extra_and_the_impersonated_user) {
  start(true);
  get("/api/v1/namespaces/default/configmaps/x",
      {{"Authorization", "Bearer sa-token"}});
  get("/api/v1/namespaces/default/configmaps/x",
      {{"Authorization", "Bearer admin-token"},
       {"Impersonate-User", "jane"},
       {"Impersonate-Group", "devs"}});
  get("/api/v1/namespaces/default/configmaps/x",
      {{"Authorization", "Bearer admin-token"},
       {"Impersonate-User", "system:serviceaccount:bench:robot"}});
  auto lines = audit_lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["user"]["username"],
            "system:serviceaccount:bench:default");
  EXPECT_EQ(lines[0]["user"]["extra"],
            json({{"authentication.kubernetes.io/pod-name", {"p1"}}}));
  EXPECT_FALSE(lines[0].contains("impersonatedUser"));
  // `user` stays the requester; the identity it acts as, with the groups
  // the API server gives it, is impersonatedUser.
  EXPECT_EQ(lines[1]["user"]["username"], admin_user().username);
  EXPECT_FALSE(lines[1]["user"].contains("extra"));
  EXPECT_EQ(lines[1]["impersonatedUser"],
            json({{"username", "jane"},
                  {"groups", {"devs", "system:authenticated"}}}));
  EXPECT_EQ(lines[2]["impersonatedUser"],
            json({{"username", "system:serviceaccount:bench:robot"},
                  {"groups",
                   {"system:serviceaccounts", "system:serviceaccounts:bench",
                    "system:authenticated"}}}));
}

TEST_F(front_test, faults_match_the_user_and_the_subresource) {
  start(true);
  const testing::header_list admin{{"Authorization", "Bearer admin-token"}};
  auto by_user = fetch(
      port, "POST", "/sim/v1/faults",
      R"({"match":{"user":"system:serviceaccount:bench:default"},)"
      R"("count":-1,"code":503})",
      admin, ca);
  ASSERT_EQ(by_user.status, 201u) << by_user.body;
  const std::string cm = "/api/v1/namespaces/default/configmaps/x";
  EXPECT_EQ(get(cm, admin).status, 404u);
  EXPECT_EQ(get(cm, {{"Authorization", "Bearer sa-token"}}).status, 503u);
  // An impersonated request is the impersonated user's.
  auto as = admin;
  as.emplace_back("Impersonate-User", "system:serviceaccount:bench:default");
  EXPECT_EQ(get(cm, as).status, 503u);
  auto uid = json::parse(by_user.body)["id"].get<std::string>();
  ASSERT_EQ(
      fetch(port, "DELETE", "/sim/v1/faults/" + uid, {}, admin, ca).status,
      200u);

  auto by_sub = fetch(
      port, "POST", "/sim/v1/faults",
      R"({"match":{"resource":"configmaps","subresource":"status"},)"
      R"("count":-1,"code":409})",
      admin, ca);
  ASSERT_EQ(by_sub.status, 201u) << by_sub.body;
  auto status = get(cm + "/status", admin);
  EXPECT_EQ(status.status, 409u);
  EXPECT_EQ(parse_status(status.body)->reason, "Conflict");
  EXPECT_EQ(get(cm, admin).status, 404u);
}

TEST_F(front_test, malformed_requests_get_a_status) {
  start(false);
  auto out = testing::raw_exchange(
      port, "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
            "Transfer-Encoding: chunked\r\n\r\nzz\r\n");
  ASSERT_EQ(out.substr(0, 12), "HTTP/1.1 400") << out;
  auto body = out.substr(out.find("\r\n\r\n") + 4);
  EXPECT_EQ(parse_status(body)->reason, "BadRequest");
  // A head that cannot be parsed is answered as Go's net/http answers it,
  // before any handler: plain text, and the connection closes.
  auto head = testing::raw_exchange(
      port, "GET /api HTTP/1.1\r\nHost: x\r\nBad Header Without Colon\r\n"
            "\r\n");
  EXPECT_EQ(head, "HTTP/1.1 400 Bad Request\r\n"
                  "Content-Type: text/plain; charset=utf-8\r\n"
                  "Connection: close\r\nContent-Length: 15\r\n\r\n"
                  "400 Bad Request");
  // Refused from the Content-Length alone, before the body is read.
  auto too_big = testing::raw_exchange(
      port,
      "POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
      "Content-Type: application/json\r\nContent-Length: 4194304\r\n\r\n{");
  ASSERT_EQ(too_big.substr(0, 12), "HTTP/1.1 413") << too_big;
  EXPECT_EQ(parse_status(too_big.substr(too_big.find("\r\n\r\n") + 4))->message,
            "Request entity too large: limit is 3145728");
}

/// Protobuf wire helpers for the tests: a length-delimited field and a
/// varint field.
std::string pb_bytes(unsigned number, const std::string& value) {
  std::string out;
  out += static_cast<char>((number << 3) | 2);
  std::size_t n = value.size();
  do {
    unsigned char b = n & 0x7f;
    n >>= 7;
    out += static_cast<char>(n ? (b | 0x80) : b);
  } while (n);
  return out + value;
}

std::string pb_varint(unsigned number, unsigned value) {
  std::string out;
  out += static_cast<char>(number << 3);
  out += static_cast<char>(value);
  return out;
}

std::string pb_envelope(const std::string& api_version, const std::string& kind,
                        const std::string& raw) {
  return std::string("k8s\0", 4)
         + pb_bytes(1, pb_bytes(1, api_version) + pb_bytes(2, kind))
         + pb_bytes(2, raw);
}

TEST(protobuf_bodies, decode_as_kubectl_sends_them) {
  // kubectl create configmap c1 --from-literal=a=b, with a label and the
  // immutable flag.
  auto meta = pb_bytes(1, "c1") + pb_bytes(3, "default")
              + pb_bytes(11, pb_bytes(1, "app") + pb_bytes(2, "x"));
  auto raw
      = pb_bytes(1, meta) + pb_bytes(2, pb_bytes(1, "a") + pb_bytes(2, "b"))
        + pb_bytes(3, pb_bytes(1, "bin") + pb_bytes(2, "hi")) + pb_varint(4, 1);
  auto obj = decode_protobuf_object(pb_envelope("v1", "ConfigMap", raw));
  ASSERT_TRUE(obj) << error_message(obj.error());
  EXPECT_EQ(
      obj->dump(),
      R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c1","namespace":)"
      R"("default","labels":{"app":"x"}},"data":{"a":"b"},"binaryData":{"bin":"aGk="},)"
      R"("immutable":true})");

  // kubectl auth can-i delete configmaps -n bench
  auto attrs = pb_bytes(1, "bench") + pb_bytes(2, "delete")
               + pb_bytes(5, "configmaps");
  auto ssar = decode_protobuf_object(
      pb_envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview",
                  pb_bytes(1, "") + pb_bytes(2, pb_bytes(1, attrs))));
  ASSERT_TRUE(ssar);
  EXPECT_EQ((*ssar)["spec"]["resourceAttributes"],
            json({{"namespace", "bench"},
                  {"verb", "delete"},
                  {"resource", "configmaps"}}));

  auto role = decode_protobuf_object(pb_envelope(
      "rbac.authorization.k8s.io/v1", "Role",
      pb_bytes(1, pb_bytes(1, "r"))
          + pb_bytes(2, pb_bytes(1, "get") + pb_bytes(1, "list")
                            + pb_bytes(2, "") + pb_bytes(3, "pods"))));
  ASSERT_TRUE(role);
  EXPECT_EQ((*role)["rules"][0]["verbs"], json({"get", "list"}));
  EXPECT_EQ((*role)["rules"][0]["apiGroups"], json({""}));

  auto unknown
      = decode_protobuf_object(pb_envelope("apps/v1", "Deployment", ""));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(status_of(unknown.error())->code, 415);
  for (std::string bad : {std::string{"{}"}, std::string("k8s\0\x0a\xff", 6),
                          pb_envelope("v1", "ConfigMap",
                                      std::string("\x0a\x05"
                                                  "ab"))}) {
    auto r = decode_protobuf_object(bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(status_of(r.error())->code, 400);
  }
}

} // namespace
} // namespace aiperf::k8s::sim::http
