// The CRD schema aiperf-node generates (config/benchmark) is one the
// simulated API server (k8s/sim/schema) accepts and enforces, and the CEL
// rules the generator attaches are the rules the simulator's own corpus
// (data/aiperf_crd_rules.json, AIPerf's texts) tests: the two lists cannot
// drift apart unnoticed.
#include "config/benchmark/cel_rules.hpp"
#include "config/benchmark/openapi.hpp"
#include "k8s/sim/schema/schema.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

using namespace aiperf;
using aiperf::k8s::json;

namespace {

json read_json(const std::string& path) {
  std::ifstream in{path};
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

json job_crd_schema() {
  json root = json::object();
  root["type"] = "object";
  root["properties"]["apiVersion"] = {{"type", "string"}};
  root["properties"]["kind"] = {{"type", "string"}};
  root["properties"]["metadata"] = {{"type", "object"}};
  root["properties"]["spec"] = config::benchmark::job_spec_openapi();
  root["properties"]["status"]
      = {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}};
  return root;
}

json job(const json& spec) {
  return {{"apiVersion", "aiperf.nvidia.com/v1alpha1"},
          {"kind", "AIPerfJob"},
          {"metadata", {{"name", "j1"}, {"namespace", "bench"}}},
          {"spec", spec}};
}

} // namespace

TEST(generated_crd, every_generated_rule_is_in_the_simulators_corpus) {
  auto corpus = read_json(AIPERF_SOURCE_DIR
                          "/tests/k8s/schema/data/aiperf_crd_rules.json");
  std::set<std::pair<std::string, std::string>> known;
  for (const auto& r : corpus["shared"])
    known.emplace(r["rule"], r["message"]);
  for (const auto& [kind, body] : corpus["kinds"].items())
    for (const auto& r : body["spec"])
      known.emplace(r["rule"], r["message"]);
  const std::string immutable_rule = corpus["immutable"]["rule"];
  const std::string immutable_message = corpus["immutable"]["message"];
  auto expand
      = [](std::string text, const std::string& key, const std::string& value) {
          for (auto pos = text.find(key); pos != std::string::npos;
               pos = text.find(key, pos))
            text.replace(pos, key.size(), value);
          return text;
        };
  std::size_t checked = 0;
  for (const auto& rule : config::benchmark::cel_rules()) {
    if (rule.transition) {
      // job.immutable.<field>: the corpus's template, expanded.
      auto field = rule.id.substr(rule.id.rfind('.') + 1);
      EXPECT_EQ(rule.rule, expand(immutable_rule, "{field}", field)) << rule.id;
      EXPECT_EQ(rule.message,
                expand(expand(immutable_message, "{field}", field), "{kind}",
                       "AIPerfJob"))
          << rule.id;
    } else {
      EXPECT_TRUE(known.count({rule.rule, rule.message}))
          << rule.id
          << ": the generator's rule is not in the simulator's corpus: "
          << rule.rule;
    }
    ++checked;
  }
  EXPECT_GT(checked, 10u);
}

TEST(generated_crd,
     the_generated_schema_compiles_and_admits_the_upstream_example) {
  std::vector<k8s::status_cause> refusals;
  auto compiled = k8s::sim::compile_schema(job_crd_schema(), &refusals);
  ASSERT_TRUE(compiled) << to_string(compiled.error());
  ASSERT_TRUE(refusals.empty())
      << refusals.front().field << ": " << refusals.front().message;

  auto spec = read_json(
      AIPERF_SOURCE_DIR
      "/tests/config/benchmark/fixtures/aiperfjob_getting_started.json");
  auto created = job(spec);
  auto admitted = k8s::sim::admit(**compiled, created, nullptr);
  EXPECT_TRUE(admitted.causes.empty()) << admitted.causes.front().field << ": "
                                       << admitted.causes.front().message;
  EXPECT_TRUE(admitted.unknown_fields.empty())
      << admitted.unknown_fields.front();

  // cancel is a runtime control; the benchmark is immutable after creation.
  auto cancelled = created;
  cancelled["spec"]["cancel"] = true;
  EXPECT_TRUE(k8s::sim::admit(**compiled, cancelled, &created).causes.empty());
  auto changed = created;
  changed["spec"]["benchmark"]["endpoint"]["streaming"] = false;
  auto refused = k8s::sim::admit(**compiled, changed, &created);
  ASSERT_EQ(refused.causes.size(), 1u);
  EXPECT_EQ(refused.causes[0].field, "spec");
  EXPECT_NE(refused.causes[0].message.find(
                "spec.benchmark is immutable after creation; create a new "
                "AIPerfJob to change it"),
            std::string::npos)
      << refused.causes[0].message;

  // A sweep in an AIPerfJob is refused by the rule, with AIPerf's words.
  auto swept = job(spec);
  swept["spec"]["sweep"] = json::object();
  auto no_sweep = k8s::sim::admit(**compiled, swept, nullptr);
  ASSERT_FALSE(no_sweep.causes.empty());
  EXPECT_NE(no_sweep.causes[0].message.find(
                "AIPerfJob.spec.sweep must be null/omitted"),
            std::string::npos)
      << no_sweep.causes[0].message;
}
