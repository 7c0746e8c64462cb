// The generated CRDs installed on the simulated API server's store, as
// `kubectl apply -f k8s/deploy/crds` installs them: accepted and
// Established, an AIPerfJob of AIPerf's getting-started guide is accepted,
// the immutability rules refuse a changed field with their own message and
// let the mutable ones change, and the printer columns read the status.
#include "k8s/crds/crds.hpp"

#include "config/benchmark/cel_rules.hpp"
#include "config/benchmark/document.hpp"
#include "k8s/api/json.hpp"
#include "k8s/object/status_json.hpp"
#include "k8s/sim/store/store.hpp"
#include "tests/support/caf_gtest.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace aiperf::k8s::sim {
namespace {

constexpr std::int64_t start_unix = 1'795'000'000; // 2026-11-18T11:06:40Z

k8s::request make(verb v, resource_ref ref, const json& body = nullptr) {
  k8s::request r;
  r.verb = v;
  r.ref = std::move(ref);
  if (!body.is_null())
    r.body = body.dump();
  return r;
}

k8s::request merge_patch(resource_ref ref, const json& body) {
  auto r = make(verb::patch, std::move(ref));
  r.patch = patch_type::merge;
  r.body = body.dump();
  return r;
}

resource_ref crd_ref(std::string name = {}) {
  return {"apiextensions.k8s.io", "v1", "customresourcedefinitions",
          "",                     std::move(name), ""};
}

resource_ref jobs(std::string name = {}, std::string sub = {}) {
  return {"aiperf.nvidia.com", "v1alpha1",      "aiperfjobs",
          "default",           std::move(name), std::move(sub)};
}

resource_ref sweeps(std::string name = {}) {
  return {"aiperf.nvidia.com", "v1alpha1", "aiperfsweeps", "default",
          std::move(name),     ""};
}

// AIPerf's getting-started AIPerfJob (docs/kubernetes.md shows it too).
json getting_started_job() {
  std::ifstream in{AIPERF_SOURCE_DIR
                   "/tests/config/benchmark/fixtures/aiperfjob_getting_started.yaml"};
  std::stringstream text;
  text << in.rdbuf();
  auto doc = config::benchmark::parse_yaml(text.str(), "getting-started");
  EXPECT_TRUE(doc) << (doc ? "" : error_message(doc.error()));
  json out = doc ? *doc : json::object();
  out["metadata"]["namespace"] = "default";
  return out;
}

json grid_sweep() {
  auto job = getting_started_job();
  json out = {{"apiVersion", "aiperf.nvidia.com/v1alpha1"},
              {"kind", "AIPerfSweep"},
              {"metadata", {{"name", "grid"}, {"namespace", "default"}}},
              {"spec", job["spec"]}};
  out["spec"]["sweep"] = {
      {"type", "grid"},
      {"variables", {{"concurrency", json::array({10, 20})}}}};
  return out;
}

struct crds_store_test : caf_gtest::fixture<> {
  store_actor store;

  crds_store_test() {
    store_config cfg;
    cfg.admin_token = "admin-token";
    cfg.start_unix_seconds = start_unix;
    auto s = spawn_store(sys, std::move(cfg));
    EXPECT_TRUE(s) << (s ? "" : error_message(s.error()));
    drain();
    if (s)
      store = *s;
  }

  caf::expected<response> call(const k8s::request& r) {
    return request<response>(store, r);
  }

  json ok(const k8s::request& r) {
    auto res = call(r);
    EXPECT_TRUE(res) << (res ? "" : error_message(res.error()));
    if (!res)
      return json();
    return json::parse(res->body);
  }

  status refused(const k8s::request& r) {
    auto res = call(r);
    EXPECT_FALSE(res) << (res ? res->body.substr(0, 300) : "");
    if (res)
      return {};
    const auto* st = status_of(res.error());
    EXPECT_NE(st, nullptr) << error_message(res.error());
    return st ? *st : status{};
  }

  void install() {
    for (const auto& crd : {crds::aiperfjob_crd(), crds::aiperfsweep_crd()}) {
      auto created = ok(make(verb::create, crd_ref(), crd));
      const auto& conds = created["status"]["conditions"];
      bool established = false;
      for (const auto& c : conds)
        established = established
                      || (c["type"] == "Established" && c["status"] == "True");
      EXPECT_TRUE(established) << crd["metadata"]["name"] << ": " << conds;
      EXPECT_EQ(created["status"]["acceptedNames"]["shortNames"],
                crd["spec"]["names"]["shortNames"]);
    }
  }
};

TEST_F(crds_store_test, both_crds_are_accepted_and_established) {
  install();
  auto list = ok(make(verb::list, crd_ref()));
  std::set<std::string> names;
  for (const auto& item : list["items"])
    names.insert(item["metadata"]["name"].get<std::string>());
  EXPECT_TRUE(names.count("aiperfjobs.aiperf.nvidia.com"));
  EXPECT_TRUE(names.count("aiperfsweeps.aiperf.nvidia.com"));
}

TEST_F(crds_store_test, the_getting_started_job_is_accepted_as_written) {
  install();
  auto job = getting_started_job();
  auto strict = make(verb::create, jobs(), job);
  // Strict: the schema declares everything the guide writes, so nothing
  // is pruned from what the user applied.
  strict.field_validation = "Strict";
  auto created = ok(strict);
  EXPECT_EQ(created["metadata"]["name"], "dynamo-benchmark");
  EXPECT_EQ(created["spec"]["benchmark"]["endpoint"]["urls"],
            job["spec"]["benchmark"]["endpoint"]["urls"]);
  // The store sorts keys; the values are the guide's.
  auto unordered = [](const json& j) { return nlohmann::json::parse(j.dump()); };
  for (const char* k : {"phases", "datasets", "models"})
    EXPECT_EQ(unordered(created["spec"]["benchmark"][k]),
              unordered(job["spec"]["benchmark"][k]))
        << k;
}

TEST_F(crds_store_test, a_job_without_a_benchmark_is_invalid) {
  install();
  auto job = getting_started_job();
  job["spec"].erase("benchmark");
  job["spec"]["image"] = "aiperf-node:0.1.0";
  auto st = refused(make(verb::create, jobs(), job));
  EXPECT_EQ(st.code, 422);
  EXPECT_EQ(st.reason, "Invalid");
  ASSERT_FALSE(st.details.causes.empty());
  EXPECT_EQ(st.details.causes[0].field, "spec.benchmark");
  EXPECT_EQ(st.details.causes[0].reason, "FieldValueRequired");
}

TEST_F(crds_store_test, a_job_with_a_sweep_is_invalid) {
  install();
  auto job = getting_started_job();
  job["spec"]["sweep"] = {{"type", "grid"}};
  auto st = refused(make(verb::create, jobs(), job));
  EXPECT_EQ(st.code, 422);
  EXPECT_NE(st.message.find("AIPerfJob.spec.sweep must be null/omitted"),
            std::string::npos)
      << st.message;
}

TEST_F(crds_store_test, an_immutable_job_field_is_refused_after_creation) {
  install();
  auto job = getting_started_job();
  job["spec"]["image"] = "aiperf-node:0.1.0";
  ok(make(verb::create, jobs(), job));
  auto st = refused(
      merge_patch(jobs("dynamo-benchmark"),
                  json{{"spec", {{"image", "aiperf-node:0.2.0"}}}}));
  EXPECT_EQ(st.code, 422);
  EXPECT_EQ(st.reason, "Invalid");
  EXPECT_NE(st.message.find("spec.image is immutable after creation; create "
                            "a new AIPerfJob to change it"),
            std::string::npos)
      << st.message;
  ASSERT_FALSE(st.details.causes.empty());
  EXPECT_EQ(st.details.causes[0].field, "spec");
  // Adding a field that was absent changes it too.
  st = refused(merge_patch(jobs("dynamo-benchmark"),
                           json{{"spec", {{"randomSeed", 7}}}}));
  EXPECT_EQ(st.code, 422);
  EXPECT_NE(st.message.find("spec.randomSeed is immutable after creation"),
            std::string::npos)
      << st.message;
  // Nothing was stored.
  auto got = ok(make(verb::get, jobs("dynamo-benchmark")));
  EXPECT_EQ(got["spec"]["image"], "aiperf-node:0.1.0");
  EXPECT_FALSE(got["spec"].contains("randomSeed"));
  EXPECT_EQ(got["metadata"]["generation"], 1);
}

TEST_F(crds_store_test, the_mutable_job_fields_change) {
  install();
  ok(make(verb::create, jobs(), getting_started_job()));
  const auto& fields = config::benchmark::job_mutable_fields();
  ASSERT_FALSE(fields.empty());
  json values = {{"cancel", true}, {"timeoutSeconds", 600}};
  std::int64_t generation = 1;
  for (const auto& x : fields) {
    ASSERT_TRUE(values.contains(x)) << "no test value for mutable field " << x;
    auto patched = ok(merge_patch(jobs("dynamo-benchmark"),
                                  json{{"spec", {{x, values[x]}}}}));
    EXPECT_EQ(patched["spec"][x], values[x]) << x;
    EXPECT_EQ(patched["metadata"]["generation"], ++generation) << x;
  }
}

TEST_F(crds_store_test, the_sweep_rules_are_the_sweeps) {
  install();
  auto sweep = grid_sweep();
  sweep["spec"]["timeoutSeconds"] = 3600;
  auto strict = make(verb::create, sweeps(), sweep);
  strict.field_validation = "Strict";
  auto created = ok(strict);
  EXPECT_EQ(created["spec"]["sweep"]["variables"],
            sweep["spec"]["sweep"]["variables"]);
  // ttlSecondsAfterFinished and cancel may change; timeoutSeconds may not.
  ok(merge_patch(sweeps("grid"),
                 json{{"spec", {{"ttlSecondsAfterFinished", 60}}}}));
  ok(merge_patch(sweeps("grid"), json{{"spec", {{"cancel", true}}}}));
  auto st = refused(
      merge_patch(sweeps("grid"), json{{"spec", {{"timeoutSeconds", 60}}}}));
  EXPECT_EQ(st.code, 422);
  EXPECT_NE(st.message.find("spec.timeoutSeconds is immutable after "
                            "creation; create a new AIPerfSweep to change it"),
            std::string::npos)
      << st.message;
  st = refused(merge_patch(
      sweeps("grid"),
      json{{"spec", {{"childMetadata", {{"labels", {{"team", "perf"}}}}}}}}));
  EXPECT_EQ(st.code, 422);
  EXPECT_NE(st.message.find("spec.childMetadata is immutable"),
            std::string::npos)
      << st.message;
  // A sweep needs its sweep.
  auto bare = grid_sweep();
  bare["metadata"]["name"] = "bare";
  bare["spec"].erase("sweep");
  st = refused(make(verb::create, sweeps(), bare));
  EXPECT_EQ(st.code, 422);
  EXPECT_NE(st.message.find("spec.sweep"), std::string::npos) << st.message;
  auto typeless = grid_sweep();
  typeless["metadata"]["name"] = "typeless";
  typeless["spec"]["sweep"] = {{"variables", json::object()}};
  st = refused(make(verb::create, sweeps(), typeless));
  EXPECT_EQ(st.code, 422);
  ASSERT_FALSE(st.details.causes.empty());
  EXPECT_EQ(st.details.causes[0].field, "spec.sweep.type");
}

TEST_F(crds_store_test, the_printer_columns_read_the_status) {
  install();
  ok(make(verb::create, jobs(), getting_started_job()));
  ok(merge_patch(
      jobs("dynamo-benchmark", "status"),
      json{{"status",
            {{"phase", "Running"},
             {"currentPhase", "profiling"},
             {"requestsCompleted", 120},
             {"requestsTotal", 500},
             {"requestsPerSecond", 42.5},
             {"summary",
              {{"time_to_first_token", {{"p50", 18.25}, {"p99", 40.5}}}}}}}}));
  auto r = make(verb::get, jobs("dynamo-benchmark"));
  r.as_table = true;
  auto table = ok(r);
  ASSERT_EQ(table["kind"], "Table");
  std::vector<std::string> names;
  for (const auto& c : table["columnDefinitions"])
    names.push_back(c["name"]);
  ASSERT_GE(names.size(), 11u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 11),
            (std::vector<std::string>{"Name", "Phase", "Stage", "Done", "Total",
                                      "QPS", "TPS", "TTFT", "ITL", "E2E",
                                      "Age"}));
  ASSERT_EQ(table["rows"].size(), 1u);
  const auto& cells = table["rows"][0]["cells"];
  EXPECT_EQ(cells[0], "dynamo-benchmark");
  EXPECT_EQ(cells[1], "Running");
  EXPECT_EQ(cells[2], "profiling");
  EXPECT_EQ(cells[3], 120);
  EXPECT_EQ(cells[4], 500);
  EXPECT_EQ(cells[5], 42.5);
  EXPECT_EQ(cells[7], 18.25);
}

} // namespace
} // namespace aiperf::k8s::sim
