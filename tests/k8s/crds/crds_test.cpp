// The generated CRDs (k8s/crds): the names, columns and rules AIPerf's
// generator writes (ai-dynamo/aiperf tools/generate_crd.py), a schema the
// simulated API server compiles with every CEL rule, a size client-side
// `kubectl apply` can store, and YAML text another parser reads back as the
// same object.
#include "k8s/crds/crds.hpp"

#include "config/benchmark/cel_rules.hpp"
#include "k8s/sim/schema/schema.hpp"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <vector>

using namespace aiperf;
using aiperf::k8s::json;
namespace crds = aiperf::k8s::crds;

namespace {

using strings = std::vector<std::string>;

const json& served_version(const json& crd) {
  return crd["spec"]["versions"][0];
}

const json& spec_schema(const json& crd) {
  return served_version(crd)["schema"]["openAPIV3Schema"]["properties"]["spec"];
}

std::vector<std::pair<std::string, std::string>> columns(const json& crd) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& c : served_version(crd)["additionalPrinterColumns"])
    out.emplace_back(
        c["name"].get<std::string>()
            + (c.value("priority", 0) == 1 ? " (wide)" : ""),
        c["jsonPath"].get<std::string>());
  return out;
}

// Every x-kubernetes-validations entry under `node`, with its path.
void collect_rules(const json& node, const std::string& path,
                   std::vector<std::pair<std::string, json>>& out) {
  if (!node.is_object())
    return;
  if (auto v = node.find("x-kubernetes-validations"); v != node.end())
    for (const auto& r : *v)
      out.emplace_back(path, r);
  for (const char* key : {"items", "additionalProperties"})
    if (auto c = node.find(key); c != node.end())
      collect_rules(*c, path + "." + key, out);
  if (auto p = node.find("properties"); p != node.end())
    for (const auto& [k, child] : p->items())
      collect_rules(child, path + "." + k, out);
}

// yaml-cpp's view of a node as JSON, typed as YAML 1.2's core schema types
// plain scalars; quoted scalars stay strings.
json from_yaml(const YAML::Node& n) {
  switch (n.Type()) {
  case YAML::NodeType::Map: {
    json out = json::object();
    for (const auto& kv : n)
      out[kv.first.as<std::string>()] = from_yaml(kv.second);
    return out;
  }
  case YAML::NodeType::Sequence: {
    json out = json::array();
    for (const auto& item : n)
      out.push_back(from_yaml(item));
    return out;
  }
  case YAML::NodeType::Scalar: {
    const auto& s = n.Scalar();
    if (n.Tag() == "!")
      return s;
    if (s == "true")
      return true;
    if (s == "false")
      return false;
    if (s == "null" || s == "~")
      return nullptr;
    static const std::regex integer{"[-+]?[0-9]+"};
    static const std::regex number{
        "[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?"};
    if (std::regex_match(s, integer))
      return std::stoll(s);
    if (std::regex_match(s, number))
      return std::stod(s);
    return s;
  }
  case YAML::NodeType::Null:
    return nullptr;
  default:
    return "undefined";
  }
}

} // namespace

TEST(crds, aiperfjob_names_scope_and_version) {
  auto crd = crds::aiperfjob_crd();
  EXPECT_EQ(crd["apiVersion"], "apiextensions.k8s.io/v1");
  EXPECT_EQ(crd["kind"], "CustomResourceDefinition");
  EXPECT_EQ(crd["metadata"]["name"], "aiperfjobs.aiperf.nvidia.com");
  EXPECT_EQ(crd["metadata"]["annotations"]["helm.sh/resource-policy"], "keep");
  EXPECT_EQ(crd["spec"]["group"], "aiperf.nvidia.com");
  EXPECT_EQ(crd["spec"]["scope"], "Namespaced");
  const auto& names = crd["spec"]["names"];
  EXPECT_EQ(names["kind"], "AIPerfJob");
  EXPECT_EQ(names["listKind"], "AIPerfJobList");
  EXPECT_EQ(names["plural"], "aiperfjobs");
  EXPECT_EQ(names["singular"], "aiperfjob");
  EXPECT_EQ(names["shortNames"].get<strings>(), (strings{"apj", "aiperf"}));
  EXPECT_EQ(names["categories"].get<strings>(), (strings{"all", "aiperf"}));
  ASSERT_EQ(crd["spec"]["versions"].size(), 1u);
  const auto& v = served_version(crd);
  EXPECT_EQ(v["name"], "v1alpha1");
  EXPECT_EQ(v["served"], true);
  EXPECT_EQ(v["storage"], true);
  EXPECT_EQ(v["subresources"], (json{{"status", json::object()}}));
}

TEST(crds, aiperfsweep_names_scope_and_version) {
  auto crd = crds::aiperfsweep_crd();
  EXPECT_EQ(crd["metadata"]["name"], "aiperfsweeps.aiperf.nvidia.com");
  EXPECT_EQ(crd["spec"]["group"], "aiperf.nvidia.com");
  EXPECT_EQ(crd["spec"]["scope"], "Namespaced");
  const auto& names = crd["spec"]["names"];
  EXPECT_EQ(names["kind"], "AIPerfSweep");
  EXPECT_EQ(names["listKind"], "AIPerfSweepList");
  EXPECT_EQ(names["plural"], "aiperfsweeps");
  EXPECT_EQ(names["singular"], "aiperfsweep");
  EXPECT_EQ(names["shortNames"].get<strings>(), (strings{"aps"}));
  EXPECT_EQ(names["categories"].get<strings>(), (strings{"all", "aiperf"}));
  const auto& v = served_version(crd);
  EXPECT_EQ(v["name"], "v1alpha1");
  EXPECT_EQ(v["served"], true);
  EXPECT_EQ(v["storage"], true);
  EXPECT_EQ(v["subresources"], (json{{"status", json::object()}}));
}

TEST(crds, aiperfjob_printer_columns_are_aiperfs) {
  const std::string s = ".status.summary.";
  std::vector<std::pair<std::string, std::string>> want{
      {"Phase", ".status.phase"},
      {"Stage", ".status.currentPhase"},
      {"Done", ".status.requestsCompleted"},
      {"Total", ".status.requestsTotal"},
      {"QPS", ".status.requestsPerSecond"},
      {"TPS", s + "output_token_throughput.avg"},
      {"TTFT", s + "time_to_first_token.p50"},
      {"ITL", s + "inter_token_latency.p50"},
      {"E2E", s + "request_latency.p50"},
      {"Age", ".metadata.creationTimestamp"},
      {"TTFT_P99 (wide)", s + "time_to_first_token.p99"},
      {"ITL_P99 (wide)", s + "inter_token_latency.p99"},
      {"E2E_P99 (wide)", s + "request_latency.p99"},
      {"TTFT_AVG (wide)", s + "time_to_first_token.avg"},
      {"ITL_AVG (wide)", s + "inter_token_latency.avg"},
      {"E2E_P99_9 (wide)", s + "request_latency.p99_9"},
  };
  EXPECT_EQ(columns(crds::aiperfjob_crd()), want);
}

TEST(crds, aiperfsweep_printer_columns_are_aiperfs) {
  std::vector<std::pair<std::string, std::string>> want{
      {"Phase", ".status.phase"},
      {"Completed", ".status.completedRuns"},
      {"Total", ".status.maxTotalRuns"},
      {"Failed", ".status.failedRuns"},
      {"Current", ".status.currentCell.label"},
      {"Age", ".metadata.creationTimestamp"},
  };
  EXPECT_EQ(columns(crds::aiperfsweep_crd()), want);
}

TEST(crds, the_required_fields_and_the_status_phases) {
  auto job = crds::aiperfjob_crd();
  const auto& root = served_version(job)["schema"]["openAPIV3Schema"];
  EXPECT_EQ(root["required"], (json{"spec"}));
  const auto& spec = spec_schema(job);
  auto required = spec["required"].get<strings>();
  EXPECT_NE(std::find(required.begin(), required.end(), "benchmark"),
            required.end());
  EXPECT_EQ(root["properties"]["status"]["properties"]["phase"]["enum"],
            (json{"Pending", "Queued", "Initializing", "Running", "Completed",
                  "Failed", "Cancelled"}));
  EXPECT_EQ(root["properties"]["status"]["x-kubernetes-preserve-unknown-fields"],
            true);

  auto sweep = crds::aiperfsweep_crd();
  const auto& sroot = served_version(sweep)["schema"]["openAPIV3Schema"];
  auto srequired = spec_schema(sweep)["required"].get<strings>();
  EXPECT_NE(std::find(srequired.begin(), srequired.end(), "sweep"),
            srequired.end());
  EXPECT_EQ(spec_schema(sweep)["properties"]["sweep"]["properties"]["type"]
                ["enum"],
            (json{"grid", "zip", "scenarios", "sobol", "latin_hypercube",
                  "adaptive_search"}));
  EXPECT_EQ(sroot["properties"]["status"]["properties"]["phase"]["enum"],
            (json{"Pending", "Running", "Aggregating", "Succeeded",
                  "PartiallyFailed", "Failed", "Cancelled"}));
}

TEST(crds, every_spec_field_but_the_mutable_ones_is_immutable) {
  struct kind_case {
    json crd;
    std::string kind;
    std::vector<std::string> mutable_fields;
  };
  for (const auto& c :
       {kind_case{crds::aiperfjob_crd(), "AIPerfJob",
                  config::benchmark::job_mutable_fields()},
        kind_case{crds::aiperfsweep_crd(), "AIPerfSweep",
                  crds::sweep_mutable_fields()}}) {
    const auto& spec = spec_schema(c.crd);
    std::set<std::string> immutable;
    for (const auto& r : spec["x-kubernetes-validations"]) {
      const std::string message = r["message"];
      static const std::regex pattern{
          "spec\\.([A-Za-z]+) is immutable after creation; create a new "
          "(AIPerfJob|AIPerfSweep) to change it"};
      std::smatch m;
      if (!std::regex_match(message, m, pattern))
        continue;
      EXPECT_EQ(m[2], c.kind) << message;
      const std::string x = m[1];
      EXPECT_EQ(r["rule"], "has(oldSelf." + x + ") == has(self." + x
                               + ") && (!has(self." + x + ") || oldSelf." + x
                               + " == self." + x + ")");
      immutable.insert(x);
    }
    std::set<std::string> want;
    for (const auto& [x, node] : spec["properties"].items()) {
      (void)node;
      if (std::find(c.mutable_fields.begin(), c.mutable_fields.end(), x)
          == c.mutable_fields.end())
        want.insert(x);
    }
    EXPECT_EQ(immutable, want) << c.kind;
    EXPECT_GT(want.size(), 10u) << c.kind;
  }
  // The sweep's deadline is fixed at creation; a job's may change.
  auto job_mutable = config::benchmark::job_mutable_fields();
  EXPECT_EQ(std::set<std::string>(job_mutable.begin(), job_mutable.end()),
            (std::set<std::string>{"cancel", "timeoutSeconds"}));
  EXPECT_EQ(crds::sweep_mutable_fields(),
            (strings{"cancel", "ttlSecondsAfterFinished"}));
  const auto& sweep = crds::aiperfsweep_crd();
  EXPECT_TRUE(spec_schema(sweep)["properties"].contains("childMetadata"));
}

TEST(crds, the_kind_rules_are_the_kinds_own) {
  auto texts = [](const json& crd) {
    std::set<std::string> out;
    for (const auto& r : spec_schema(crd)["x-kubernetes-validations"])
      out.insert(r["message"].get<std::string>());
    return out;
  };
  auto job = texts(crds::aiperfjob_crd());
  auto sweep = texts(crds::aiperfsweep_crd());
  auto has_prefix = [](const std::set<std::string>& set, const std::string& p) {
    return std::any_of(set.begin(), set.end(),
                       [&](const std::string& s) { return s.starts_with(p); });
  };
  EXPECT_TRUE(has_prefix(job, "AIPerfJob.spec.sweep must be null/omitted"));
  EXPECT_FALSE(has_prefix(sweep, "AIPerfJob.spec.sweep"));
  EXPECT_TRUE(has_prefix(sweep, "AIPerfSweep.spec.sweep is required"));
  EXPECT_FALSE(has_prefix(job, "AIPerfSweep."));
}

TEST(crds, every_cel_rule_compiles_against_the_schema) {
  for (const auto& crd : {crds::aiperfjob_crd(), crds::aiperfsweep_crd()}) {
    const auto& schema = served_version(crd)["schema"]["openAPIV3Schema"];
    std::vector<std::pair<std::string, json>> rules;
    collect_rules(schema, "", rules);
    // endpoint (4), runtime (2), multiRun (1), the spec's own and one
    // immutability rule per immutable field.
    EXPECT_GT(rules.size(), 20u) << crd["metadata"]["name"];
    std::vector<k8s::status_cause> refusals;
    auto compiled = k8s::sim::compile_schema(
        schema, &refusals, "spec.versions[0].schema.openAPIV3Schema");
    EXPECT_TRUE(compiled) << crd["metadata"]["name"] << ": "
                          << (compiled ? "" : to_string(compiled.error()));
    for (const auto& r : refusals)
      ADD_FAILURE() << crd["metadata"]["name"] << ": " << r.field << ": "
                    << r.message;
  }
}

TEST(crds, a_rule_that_does_not_compile_is_refused) {
  // The check above can fail: a rule selecting an undeclared field.
  auto crd = crds::aiperfjob_crd();
  auto& schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
  schema["properties"]["spec"]["x-kubernetes-validations"].push_back(
      {{"rule", "self.noSuchField == 1"}, {"message", "x"}});
  std::vector<k8s::status_cause> refusals;
  auto compiled = k8s::sim::compile_schema(schema, &refusals);
  EXPECT_FALSE(compiled);
  ASSERT_FALSE(refusals.empty());
  EXPECT_NE(refusals.back().message.find("undefined field 'noSuchField'"),
            std::string::npos)
      << refusals.back().message;
}

TEST(crds, the_aiperfjob_crd_fits_client_side_apply) {
  // kubectl apply (client side) stores the object's compact JSON in the
  // last-applied-configuration annotation, and all annotations of an
  // object must fit in 256 KiB; 200 KiB leaves room for the others.
  constexpr std::size_t limit = 200 * 1024;
  for (const auto& crd : {crds::aiperfjob_crd(), crds::aiperfsweep_crd()}) {
    auto size = crd.dump().size();
    EXPECT_LT(size, limit) << crd["metadata"]["name"] << " is " << size
                           << " bytes of compact JSON; trim descriptions";
    EXPECT_GT(size, 10u * 1024); // the whole schema, not a stub
  }
}

TEST(crds, the_yaml_reads_back_as_the_crd) {
  auto files = crds::crd_files();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].name, "aiperfjobs.aiperf.nvidia.com.yaml");
  EXPECT_EQ(files[1].name, "aiperfsweeps.aiperf.nvidia.com.yaml");
  const json want[] = {crds::aiperfjob_crd(), crds::aiperfsweep_crd()};
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& text = files[i].text;
    EXPECT_TRUE(text.starts_with("# Generated by `aiperf-node kube crd`"));
    EXPECT_EQ(text.back(), '\n');
    auto docs = YAML::LoadAll(text);
    ASSERT_EQ(docs.size(), 1u) << files[i].name;
    auto got = from_yaml(docs[0]);
    EXPECT_EQ(got, want[i]) << files[i].name;
    // Equal as ordered trees: the key order of the file is the generator's.
    EXPECT_EQ(got.dump(), want[i].dump());
  }
}

TEST(crds, the_files_do_not_change_between_calls) {
  auto a = crds::crd_files();
  auto b = crds::crd_files();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i].text, b[i].text);
}
