// Every CEL rule of the AIPerfJob and AIPerfSweep CRDs
// (data/aiperf_crd_rules.json, the list the CRD generator uses) compiled
// into a schema shaped like the generated one and run on passing and
// failing objects, creates and updates.
#include "k8s/sim/schema/schema.hpp"
#include "proto/error.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace aiperf;
using namespace aiperf::k8s;

namespace {

// The parts of the generated openAPIV3Schema the rules touch, with every
// top-level spec field (the immutability rules cover them all).
const char* const spec_schema = R"j({
  "type": "object",
  "required": ["benchmark"],
  "properties": {
    "image": {"type": "string", "minLength": 1, "default": "nvcr.io/nvidia/aiperf:latest"},
    "imagePullPolicy": {"type": "string", "enum": ["Always", "Never", "IfNotPresent"]},
    "benchmark": {
      "type": "object",
      "required": ["endpoint"],
      "properties": {
        "models": {"x-kubernetes-preserve-unknown-fields": true},
        "endpoint": {
          "type": "object",
          "required": ["urls"],
          "properties": {
            "urls": {"x-kubernetes-preserve-unknown-fields": true},
            "urlStrategy": {"type": "string", "enum": ["round_robin"], "default": "round_robin"},
            "type": {"type": "string", "enum": ["audio_transcription", "chat", "completions",
              "embeddings", "image_edit", "video_generation", "raw", "template"]},
            "path": {"type": "string"},
            "template": {"type": "object", "required": ["body"],
              "properties": {"body": {"type": "string"},
                             "responseField": {"type": "string", "default": "text"}}},
            "requestContentType": {"type": "string",
              "enum": ["application/json", "multipart/form-data"]},
            "timeout": {"type": "number", "default": 21600, "minimum": 0.0}
          }
        },
        "datasets": {"type": "array", "minItems": 1, "maxItems": 1,
          "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
        "runtime": {
          "type": "object",
          "properties": {
            "workers": {"x-kubernetes-int-or-string": true},
            "workersMin": {"x-kubernetes-int-or-string": true},
            "apiPort": {"x-kubernetes-int-or-string": true},
            "apiHost": {"type": "string"},
            "workersPerPod": {"type": "integer", "minimum": 1, "maximum": 100},
            "communication": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
          }
        }
      }
    },
    "resourceMode": {"type": "string", "enum": ["guaranteed", "burstable", "none"],
                     "default": "burstable"},
    "connectionsPerWorker": {"type": "integer", "default": 100, "minimum": 1},
    "timeoutSeconds": {"type": "number", "default": 0, "minimum": 0},
    "ttlSecondsAfterFinished": {"type": "integer", "minimum": 0, "default": 300},
    "resultsTtlDays": {"type": "integer", "minimum": 1, "maximum": 365},
    "keepFailedPods": {"type": "boolean", "default": false},
    "cancel": {"type": "boolean", "default": false},
    "podTemplate": {"type": "object", "properties": {
      "env": {"type": "array", "items": {"type": "object",
              "x-kubernetes-preserve-unknown-fields": true}},
      "nodeSelector": {"type": "object", "additionalProperties": {"type": "string"}}}},
    "scheduling": {"type": "object", "properties": {
      "queueName": {"type": "string"}, "priorityClass": {"type": "string"}}},
    "schemaVersion": {"type": "string", "enum": ["2.0"], "default": "2.0"},
    "sweep": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
    "multiRun": {"type": "object", "properties": {
      "numRuns": {"type": "integer", "default": 1, "minimum": 1, "maximum": 10},
      "convergence": {"type": "object", "required": ["metric"], "properties": {
        "metric": {"type": "string"},
        "minRuns": {"type": "integer", "default": 2, "minimum": 2}}}}},
    "plot": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
    "variables": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
    "randomSeed": {"type": "integer", "minimum": 0},
    "noSweepTable": {"type": "boolean", "default": false},
    "skipEndpointCheck": {"type": "boolean", "default": false},
    "failurePolicy": {"type": "object", "properties": {
      "onChildFailure": {"type": "string", "enum": ["continue", "abort"], "default": "continue"},
      "maxFailures": {"type": "integer", "default": 0, "minimum": 0}}}
  }
})j";

json read_rules_file() {
  std::ifstream in{std::string{AIPERF_SOURCE_DIR}
                   + "/tests/k8s/schema/data/aiperf_crd_rules.json"};
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

std::string replace_all(std::string s, const std::string& from,
                        const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// The schema node at a dotted path ("spec.benchmark.endpoint").
json& node_at(json& root, const std::string& path) {
  json* n = &root;
  std::stringstream parts{path};
  for (std::string part; std::getline(parts, part, '.');)
    n = &(*n)["properties"][part];
  return *n;
}

/// The openAPIV3Schema of `kind` with every rule of the list attached.
json crd_schema(const json& rules, const std::string& kind) {
  json spec = json::parse(spec_schema);
  if (kind == "AIPerfSweep")
    spec["properties"]["childMetadata"]
        = json::parse(R"j({"type": "object", "properties": {
      "labels": {"type": "object", "additionalProperties": {"type": "string"}},
      "annotations": {"type": "object", "additionalProperties": {"type": "string"}}}})j");
  json root = {{"type", "object"},
               {"required", {"spec"}},
               {"properties",
                {{"spec", spec},
                 {"status",
                  {{"type", "object"},
                   {"x-kubernetes-preserve-unknown-fields", true}}}}}};
  for (const auto& r : rules["shared"])
    node_at(root, r["node"].get<std::string>())["x-kubernetes-validations"]
        .push_back({{"rule", r["rule"]}, {"message", r["message"]}});
  json& spec_node = node_at(root, "spec");
  const json& k = rules["kinds"][kind];
  for (const auto& r : k["spec"])
    spec_node["x-kubernetes-validations"].push_back(
        {{"rule", r["rule"]}, {"message", r["message"]}});
  const auto& mutable_fields = k["mutable"];
  for (auto it = spec_node["properties"].begin();
       it != spec_node["properties"].end(); ++it) {
    if (std::find(mutable_fields.begin(), mutable_fields.end(), it.key())
        != mutable_fields.end())
      continue;
    std::string rule
        = replace_all(rules["immutable"]["rule"], "{field}", it.key());
    std::string message
        = replace_all(rules["immutable"]["message"], "{field}", it.key());
    message = replace_all(message, "{kind}", kind);
    spec_node["x-kubernetes-validations"].push_back(
        {{"rule", rule}, {"message", message}});
  }
  return root;
}

json resource(const std::string& kind, const json& spec) {
  return {{"apiVersion", "aiperf.nvidia.com/v1alpha1"},
          {"kind", kind},
          {"metadata", {{"name", "j1"}, {"namespace", "bench"}}},
          {"spec", spec}};
}

std::vector<std::string> texts(const sim::admission& a) {
  std::vector<std::string> out;
  for (const auto& c : a.causes)
    out.push_back(c.field + ": " + c.message);
  return out;
}

} // namespace

TEST(aiperf_crd_rules, every_rule_compiles_in_both_kinds) {
  json rules = read_rules_file();
  for (const std::string kind : {"AIPerfJob", "AIPerfSweep"}) {
    json schema = crd_schema(rules, kind);
    std::vector<status_cause> refusals;
    auto compiled = sim::compile_schema(schema, &refusals);
    ASSERT_TRUE(compiled) << kind << ": " << error_message(compiled.error());
    EXPECT_TRUE(refusals.empty());
    std::size_t spec_rules
        = schema["properties"]["spec"]["x-kubernetes-validations"].size();
    // AIPerfJob: 2 kind rules + 19 immutable fields; AIPerfSweep: 1 + 20.
    EXPECT_EQ(spec_rules, 21u) << kind;
  }
}

TEST(aiperf_crd_rules, cases_pass_and_fail_as_the_api_server_would) {
  json rules = read_rules_file();
  ASSERT_GE(rules["cases"].size(), 30u);
  for (const auto& c : rules["cases"]) {
    std::string kind = c["kind"];
    auto schema = sim::compile_schema(crd_schema(rules, kind), nullptr);
    ASSERT_TRUE(schema);
    std::vector<std::string> expect
        = c["expect"].get<std::vector<std::string>>();
    json object = resource(kind, c["spec"]);
    if (c.contains("old")) {
      json old = resource(kind, c["old"]);
      auto created = sim::admit(**schema, old, nullptr);
      ASSERT_TRUE(created.causes.empty())
          << c["name"] << ": the old object is invalid";
      auto updated = sim::admit(**schema, object, &old);
      EXPECT_EQ(texts(updated), expect) << c["name"];
    } else {
      auto created = sim::admit(**schema, object, nullptr);
      EXPECT_EQ(texts(created), expect) << c["name"];
    }
  }
}

TEST(aiperf_crd_rules, transition_rules_do_not_run_on_create) {
  json rules = read_rules_file();
  auto schema = sim::compile_schema(crd_schema(rules, "AIPerfJob"), nullptr);
  ASSERT_TRUE(schema);
  // Everything an update could not change, set at creation: accepted.
  json object
      = resource("AIPerfJob", json::parse(R"j({"image": "a:1", "randomSeed": 3,
    "benchmark": {"endpoint": {"urls": ["u"]}}, "variables": {"x": 1}})j"));
  auto created = sim::admit(**schema, object, nullptr);
  EXPECT_TRUE(created.causes.empty());
  EXPECT_EQ(object["spec"]["resourceMode"], "burstable"); // defaults applied
  EXPECT_EQ(object["spec"]["benchmark"]["endpoint"]["timeout"], 21600);
}

namespace {

/// A deterministic generator of arbitrary JSON shaped loosely like a spec.
struct shapes {
  std::uint64_t state;

  std::uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }

  json any(int depth) {
    static const char* const keys[]
        = {"benchmark", "endpoint", "urls",        "type",       "template",
           "path",      "runtime",  "workers",     "workersMin", "apiHost",
           "multiRun",  "numRuns",  "convergence", "minRuns",    "sweep",
           "image",     "x-y",      "__a",         "",           "metadata"};
    switch (next() % (depth > 4 ? 6 : 8)) {
    case 0:
      return nullptr;
    case 1:
      return next() % 2 == 0;
    case 2:
      return static_cast<std::int64_t>(next() % 21) - 10;
    case 3:
      return static_cast<double>(next() % 1000) / 7.0;
    case 4:
      return std::string{keys[next() % 20]};
    case 5:
      return "template";
    case 6: {
      json a = json::array();
      for (std::uint64_t k = next() % 4; k > 0; --k)
        a.push_back(any(depth + 1));
      return a;
    }
    default: {
      json o = json::object();
      for (std::uint64_t k = next() % 5; k > 0; --k)
        o[keys[next() % 20]] = any(depth + 1);
      return o;
    }
    }
  }
};

} // namespace

TEST(aiperf_crd_rules, arbitrary_objects_get_causes_never_a_crash) {
  json rules = read_rules_file();
  auto schema = sim::compile_schema(crd_schema(rules, "AIPerfJob"), nullptr);
  ASSERT_TRUE(schema);
  shapes gen{0x9E3779B97F4A7C15ull};
  std::size_t refused = 0;
  for (int i = 0; i < 3000; ++i) {
    json old = resource("AIPerfJob", gen.any(0));
    json now = resource("AIPerfJob", gen.any(0));
    if (i % 3 == 0)
      now["spec"]
          = json::parse(R"j({"benchmark": {"endpoint": {"urls": []}}})j");
    auto created = sim::admit(**schema, old, nullptr);
    auto updated = sim::admit(**schema, now, &old);
    for (const auto* a : {&created, &updated})
      for (const auto& c : a->causes) {
        EXPECT_FALSE(c.reason.empty());
        EXPECT_FALSE(c.message.empty());
        EXPECT_NE(c.reason, "InternalError") << c.message;
      }
    refused += created.causes.empty() ? 0 : 1;
  }
  EXPECT_GT(refused, 100u); // the generator does reach the checks
}
