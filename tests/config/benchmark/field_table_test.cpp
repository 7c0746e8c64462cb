// A table over every field of the model: its name, type, default and
// support status (fixtures/fields.txt, reviewed by hand against AIPerf's
// CRD), the message an invalid value gets, and the OpenAPI schema the CRD
// is generated from.
#include "config/benchmark/cel_rules.hpp"
#include "config/benchmark/mapping.hpp"
#include "config/benchmark/openapi.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

using namespace aiperf;
using namespace aiperf::config::benchmark;

namespace {

std::string fixture_path(const std::string& name) {
  return std::string{AIPERF_BENCHMARK_FIXTURES} + "/" + name;
}

const char* type_name(value_type t) {
  switch (t) {
  case value_type::object:
    return "object";
  case value_type::array:
    return "array";
  case value_type::string:
    return "string";
  case value_type::integer:
    return "integer";
  case value_type::number:
    return "number";
  case value_type::boolean:
    return "boolean";
  case value_type::int_or_string:
    return "int-or-string";
  case value_type::map:
    return "map";
  case value_type::any:
    return "any";
  }
  return "?";
}

const char* status_name(support s) {
  switch (s) {
  case support::supported:
    return "supported";
  case support::unsupported:
    return "unsupported";
  case support::operator_managed:
    return "operator-managed";
  case support::extension:
    return "aiperf-node";
  }
  return "?";
}

std::string table() {
  std::string out;
  std::vector<std::string> unsupported_parents;
  for_each_field(
      job_spec_schema(), "", [&](const std::string& path, const field& f) {
        if (path.empty())
          return;
        std::string status = status_name(f.status);
        for (const auto& parent : unsupported_parents)
          if (path.starts_with(parent + ".") || path.starts_with(parent + "["))
            status = "unsupported (with " + parent + ")";
        if (f.status == support::unsupported)
          unsupported_parents.push_back(path);
        if (!f.supported_values.empty() && f.status == support::supported) {
          status += ":";
          for (const auto& v : f.supported_values)
            status += " " + v;
        }
        if (!f.accepted_values.empty()) {
          status += "; accepted:";
          for (const auto& v : f.accepted_values)
            status += " " + v.dump();
        }
        out += path + " | " + type_name(f.type)
               + (f.mixed ? " (shorthand)" : "") + " | "
               + (f.default_value ? f.default_value->dump() : "-") + " | "
               + status + "\n";
      });
  return out;
}

json base_spec() {
  return json::parse(
      R"({"benchmark": {"models": ["m"], "endpoint": {"urls": ["http://h:1"]},
    "datasets": [{"name": "d", "type": "synthetic"}],
    "phases": [{"name": "profiling", "type": "concurrency", "requests": 5}]}})");
}

/// Sets `value` at a model path ("benchmark.phases[].rate"), creating
/// objects on the way; "[]" is the first entry.
void set_path(json& doc, const std::string& path, json value) {
  json* node = &doc;
  std::stringstream in{path};
  std::string part;
  std::vector<std::string> parts;
  while (std::getline(in, part, '.'))
    parts.push_back(part);
  for (size_t i = 0; i < parts.size(); ++i) {
    auto key = parts[i];
    bool item = key.ends_with("[]");
    if (item)
      key.resize(key.size() - 2);
    json& next = (*node)[key];
    if (i + 1 == parts.size() && !item) {
      next = std::move(value);
      return;
    }
    if (item) {
      if (!next.is_array() || next.empty())
        next = json::array({json::object()});
      node = &next[0];
      if (i + 1 == parts.size()) {
        *node = std::move(value);
        return;
      }
    } else {
      if (!next.is_object())
        next = json::object();
      node = &next;
    }
  }
}

/// The path as check() reports it ("benchmark.phases[0].rate").
std::string reported(std::string path) {
  for (size_t at = path.find("[]"); at != std::string::npos;
       at = path.find("[]"))
    path.replace(at, 2, "[0]");
  return path;
}

std::string num(double x) {
  if (std::floor(x) == x)
    return std::to_string(static_cast<long long>(x));
  return json(x).dump();
}

bool reports(const json& doc, document_kind kind, const std::string& path,
             const std::string& message, std::string& all) {
  all.clear();
  bool found = false;
  for (const auto& p : check(doc, kind)) {
    all += to_string(p) + "\n";
    found = found || (p.path == path && p.message == message);
  }
  return found;
}

// Shorthands normalize() rewrites before validation ever sees them.
const std::set<std::string> shorthands{
    "benchmark.model",          "benchmark.dataset",
    "benchmark.warmup",         "benchmark.profiling",
    "benchmark.datasets[].isl", "benchmark.datasets[].osl"};

// The invalid value of a shorthand union and the message it gets.
const std::map<std::string, std::pair<json, std::string>> union_cases{
    {"benchmark.models",
     {5, "must be a model name, a list of names or {strategy, items} (got 5)"}},
    {"benchmark.endpoint.urls", {5, "must be a non-empty list of server URLs"}},
    {"benchmark.artifacts.summary",
     {5, "must be a list of formats such as [json] (got 5)"}},
    {"benchmark.artifacts.records",
     {5, "must be [jsonl], true or false (got 5)"}},
    {"benchmark.datasets[].prompts.isl",
     {"x", R"(must be a token count or {mean, stddev} (got "x"))"}},
    {"benchmark.datasets[].prompts.osl",
     {"x", R"(must be a token count or {mean, stddev} (got "x"))"}},
    {"benchmark.datasets[].turns",
     {"x", R"(must be a number or {mean, stddev} (got "x"))"}},
    {"benchmark.datasets[].turnDelay",
     {"x", R"(must be a number or {mean, stddev} (got "x"))"}},
};

json unaccepted_value(const field& f) {
  auto accepted = [&](const json& v) {
    for (const auto& a : f.accepted_values)
      if (a == v)
        return true;
    return false;
  };
  switch (f.type) {
  case value_type::boolean:
    return accepted(true) ? json(false) : json(true);
  case value_type::integer:
  case value_type::int_or_string:
    return 7;
  case value_type::number:
    return 7.5;
  case value_type::string:
    return f.enum_values.empty() ? json("x") : json(f.enum_values.back());
  case value_type::array:
    return json::array({"x"});
  default:
    return json{{"x", 1}};
  }
}

} // namespace

TEST(field_table, names_types_defaults_and_status_match_the_reviewed_table) {
  auto text = table();
  auto golden = fixture_path("fields.txt");
  if (std::getenv("AIPERF_UPDATE_GOLDEN"))
    std::ofstream{golden, std::ios::binary} << text;
  std::ifstream in{golden, std::ios::binary};
  std::stringstream buf;
  buf << in.rdbuf();
  EXPECT_EQ(text, buf.str());
}

TEST(field_table, spot_checks_against_aiperfs_crd) {
  auto spec = job_spec_openapi();
  auto& b = spec["properties"]["benchmark"]["properties"];
  EXPECT_EQ(
      b["endpoint"]["properties"]["timeout"].dump(),
      json::parse(
          R"({"type":"number","description":"Request timeout in seconds. Requests exceeding this duration are marked as failed.","default":21600,"minimum":0.0})")
          .dump());
  auto& interval = b["endpoint"]["properties"]["waitForModelInterval"];
  EXPECT_EQ(interval["default"], 5.0);
  EXPECT_EQ(interval["exclusiveMinimum"], true);
  EXPECT_EQ(interval["minimum"], 0.0);
  auto& wpp = b["runtime"]["properties"]["workersPerPod"];
  EXPECT_EQ(wpp["minimum"], 1);
  EXPECT_EQ(wpp["maximum"], 100);
  EXPECT_EQ(b["runtime"]["properties"]["workers"]["x-kubernetes-int-or-string"],
            true);
  EXPECT_FALSE(b["runtime"]["properties"]["workers"].contains("type"));
  auto& runs = spec["properties"]["multiRun"]["properties"];
  EXPECT_EQ(runs["numRuns"]["default"], 1);
  EXPECT_EQ(runs["numRuns"]["maximum"], 10);
  EXPECT_EQ(runs["confidenceLevel"]["exclusiveMaximum"], true);
  EXPECT_EQ(spec["properties"]["connectionsPerWorker"]["default"], 100);
  EXPECT_EQ(spec["properties"]["ttlSecondsAfterFinished"]["default"], 300);
  EXPECT_EQ(spec["properties"]["resultsTtlDays"]["maximum"], 365);
  EXPECT_EQ(spec["properties"]["resourceMode"]["default"], "burstable");
  EXPECT_EQ(spec["properties"]["schemaVersion"]["enum"], json::array({"2.0"}));
  EXPECT_EQ(spec["required"], json::array({"benchmark"}));
  EXPECT_EQ(spec["properties"]["benchmark"]["required"],
            json::array({"endpoint"}));
  EXPECT_EQ(b["endpoint"]["required"], json::array({"urls"}));
  EXPECT_EQ(b["datasets"]["items"].dump(),
            R"({"type":"object","x-kubernetes-preserve-unknown-fields":true})");
  EXPECT_EQ(b["datasets"]["maxItems"], 1);
  EXPECT_EQ(b["phases"]["minItems"], 1);
}

TEST(field_table, every_field_refuses_an_invalid_value_naming_its_path) {
  size_t checked = 0;
  std::vector<std::string>
      under_parent; // an unsupported parent speaks for them
  for_each_field(
      job_spec_schema(), "", [&](const std::string& path, const field& f) {
        if (path.empty() || path.ends_with("[]") || path.ends_with(".*")
            || shorthands.count(path))
          return;
        for (const auto& parent : under_parent)
          if (path.starts_with(parent + ".") || path.starts_with(parent + "["))
            return;
        SCOPED_TRACE(path);
        auto where = reported(path);
        std::string all;
        if (f.status == support::unsupported) {
          under_parent.push_back(path);
          auto doc = base_spec();
          auto bad = unaccepted_value(f);
          set_path(doc, path, bad);
          std::string message = "not supported by aiperf-node; remove it";
          if (!f.accepted_values.empty())
            message += " or set it to " + f.accepted_values.front().dump();
          if (path == "sweep")
            message = find_cel_rule("job.no-sweep")->message;
          EXPECT_TRUE(
              reports(doc, document_kind::job_spec, where, message, all))
              << all;
          ++checked;
          return;
        }
        if (f.status == support::operator_managed) {
          under_parent.push_back(path);
          auto doc = base_spec();
          set_path(doc, path,
                   f.type == value_type::string ? json("kubernetes")
                                                : json::object());
          EXPECT_TRUE(validate(doc, document_kind::job_spec))
              << "the operator sets it in a CR";
          EXPECT_TRUE(reports(doc, document_kind::config_file, where,
                              "set by the AIPerf operator for Kubernetes runs; "
                              "remove it from the "
                              "file",
                              all))
              << all;
          ++checked;
          return;
        }
        json bad;
        std::string message;
        switch (f.type) {
        case value_type::object:
        case value_type::map:
          bad = 5;
          message = "must be a mapping (got 5)";
          break;
        case value_type::array:
          bad = "x";
          message = R"(must be a list (got "x"))";
          break;
        case value_type::string:
          bad = 5;
          message = "must be a string (got 5)";
          break;
        case value_type::integer:
          bad = "x";
          message = R"(must be an integer (got "x"))";
          break;
        case value_type::number:
          bad = true;
          message = "must be a number (got true)";
          break;
        case value_type::boolean:
          bad = "yes";
          message = R"(must be true or false (got "yes"))";
          break;
        case value_type::int_or_string:
          bad = true;
          message = "must be an integer or a string (got true)";
          break;
        case value_type::any: {
          auto it = union_cases.find(path);
          if (it == union_cases.end()) {
            EXPECT_FALSE(f.mixed) << "a shorthand union without a row";
            return; // free-form: every value is valid
          }
          bad = it->second.first;
          message = it->second.second;
          break;
        }
        }
        auto doc = base_spec();
        set_path(doc, path, bad);
        EXPECT_TRUE(reports(doc, document_kind::job_spec, where, message, all))
            << all;
        ++checked;
        if (!f.enum_values.empty()) {
          auto wrong = base_spec();
          set_path(wrong, path, "bogus");
          EXPECT_TRUE(reports(
              wrong, document_kind::job_spec, where,
              "must be one of " +
                  [&] {
                    std::string s;
                    for (const auto& v : f.enum_values)
                      s += (s.empty() ? "" : "|") + v;
                    return s;
                  }()
                  + " (got 'bogus')",
              all))
              << all;
        }
        for (const auto& v : f.enum_values) {
          if (f.supported_values.empty()
              || std::find(f.supported_values.begin(), f.supported_values.end(),
                           v)
                     != f.supported_values.end())
            continue;
          auto lacking = base_spec();
          set_path(lacking, path, v);
          std::string use;
          for (const auto& s : f.supported_values)
            use += (use.empty() ? "" : "|") + s;
          EXPECT_TRUE(reports(
              lacking, document_kind::job_spec, where,
              "'" + v + "' is not supported by aiperf-node; use one of " + use,
              all))
              << all;
        }
        if (f.minimum
            && (f.type == value_type::integer
                || f.type == value_type::number)) {
          double below
              = f.exclusive_minimum
                    ? *f.minimum
                    : *f.minimum - (f.type == value_type::integer ? 1 : 0.5);
          auto low = base_spec();
          set_path(low, path,
                   f.type == value_type::integer
                       ? json(static_cast<std::int64_t>(below))
                       : json(below));
          EXPECT_TRUE(reports(
              low, document_kind::job_spec, where,
              std::string{"must be "} + (f.exclusive_minimum ? "> " : "≥ ")
                  + num(*f.minimum) + " (got " + num(below) + ")",
              all))
              << all;
        }
        if (f.maximum
            && (f.type == value_type::integer
                || f.type == value_type::number)) {
          double above
              = f.exclusive_maximum
                    ? *f.maximum
                    : *f.maximum + (f.type == value_type::integer ? 1 : 0.5);
          auto high = base_spec();
          set_path(high, path,
                   f.type == value_type::integer
                       ? json(static_cast<std::int64_t>(above))
                       : json(above));
          EXPECT_TRUE(reports(
              high, document_kind::job_spec, where,
              std::string{"must be "} + (f.exclusive_maximum ? "< " : "≤ ")
                  + num(*f.maximum) + " (got " + num(above) + ")",
              all))
              << all;
        }
      });
  EXPECT_GT(checked, 150u);
}

TEST(field_table, unknown_keys_are_refused_not_pruned) {
  auto doc = base_spec();
  doc["benchmark"]["endpoint"]["urlz"] = json::array({"http://h:1"});
  auto found = validate(doc, document_kind::job_spec);
  ASSERT_FALSE(found);
  EXPECT_EQ(config::error_flag(found.error()), "benchmark.endpoint.urlz");
}

TEST(openapi, preserve_unknown_nodes_are_typed_objects_except_aiperfs_unions) {
  std::vector<std::string> untyped;
  std::function<void(const json&, const std::string&)> walk
      = [&](const json& n, const std::string& path) {
          if (!n.is_object())
            return;
          if (n.contains("x-kubernetes-preserve-unknown-fields")) {
            EXPECT_EQ(n["x-kubernetes-preserve-unknown-fields"], true) << path;
            if (!n.contains("type"))
              untyped.push_back(path);
            else
              EXPECT_EQ(n["type"], "object") << path;
          } else if (!n.contains("x-kubernetes-int-or-string")) {
            EXPECT_TRUE(n.contains("type"))
                << path << " has no type (not structural)";
          }
          if (n.contains("properties"))
            for (const auto& [k, v] : n["properties"].items())
              walk(v, path + "." + k);
          if (n.contains("items"))
            walk(n["items"], path + "[]");
          if (n.contains("additionalProperties"))
            walk(n["additionalProperties"], path + ".*");
        };
  walk(job_spec_openapi(), "spec");
  EXPECT_EQ(untyped,
            (std::vector<std::string>{
                "spec.benchmark.models", "spec.benchmark.model",
                "spec.benchmark.endpoint.urls", "spec.benchmark.dataset",
                "spec.benchmark.warmup", "spec.benchmark.profiling",
                "spec.benchmark.artifacts.summary",
                "spec.benchmark.artifacts.records",
                "spec.benchmark.artifacts.userFiles[].content",
                "spec.benchmark.gpuTelemetry", "spec.benchmark.serverMetrics",
                "spec.benchmark.networkLatency"}));
}

TEST(openapi, cel_rules_sit_on_their_shapes_from_the_one_list) {
  auto spec = job_spec_openapi();
  auto rules_of = [](const json& node) {
    std::vector<std::string> out;
    if (node.contains("x-kubernetes-validations"))
      for (const auto& r : node["x-kubernetes-validations"])
        out.push_back(r["rule"].get<std::string>());
    return out;
  };
  auto ids = [](shape s) {
    std::vector<std::string> out;
    for (const auto& r : cel_rules_for(s))
      out.push_back(r.rule);
    return out;
  };
  const auto& b = spec["properties"]["benchmark"]["properties"];
  EXPECT_EQ(rules_of(b["endpoint"]), ids(shape::endpoint));
  EXPECT_EQ(rules_of(b["runtime"]), ids(shape::runtime));
  EXPECT_EQ(rules_of(spec["properties"]["multiRun"]), ids(shape::multi_run));
  EXPECT_EQ(rules_of(spec), ids(shape::job_spec));
  EXPECT_EQ(ids(shape::endpoint).size(), 4u);
  EXPECT_EQ(ids(shape::runtime).size(), 2u);
  EXPECT_EQ(ids(shape::multi_run).size(), 1u);
  // Immutability for every top-level field but cancel and timeoutSeconds.
  size_t immutable = 0;
  for (const auto& r : cel_rules_for(shape::job_spec))
    immutable += r.transition;
  EXPECT_EQ(immutable, job_spec_schema().properties.size() - 2);
  const auto* image = find_cel_rule("job.immutable.image");
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(image->rule, "has(oldSelf.image) == has(self.image) && "
                         "(!has(self.image) || oldSelf.image == "
                         "self.image)");
  EXPECT_EQ(image->message, "spec.image is immutable after creation; create a "
                            "new AIPerfJob to change it");
  EXPECT_EQ(find_cel_rule("job.immutable.cancel"), nullptr);
  EXPECT_EQ(find_cel_rule("job.immutable.timeoutSeconds"), nullptr);
}

TEST(openapi, validation_quotes_the_cel_messages) {
  auto doc = base_spec();
  doc["benchmark"]["endpoint"]["path"] = "v1/chat/completions";
  auto bad = validate(doc, document_kind::job_spec);
  ASSERT_FALSE(bad);
  EXPECT_EQ(error_message(bad.error()),
            "benchmark.endpoint.path: "
                + find_cel_rule("endpoint.path-absolute")->message);
  auto runs = base_spec();
  runs["multiRun"] = json{{"numRuns", 3}};
  std::string all;
  EXPECT_TRUE(reports(runs, document_kind::job_spec, "multiRun",
                      find_cel_rule("job.one-run")->message, all))
      << all;
}

TEST(openapi, updates_keep_every_field_but_cancel_and_timeout) {
  auto old_spec = base_spec();
  auto new_spec = old_spec;
  new_spec["cancel"] = true;
  new_spec["timeoutSeconds"] = 60;
  EXPECT_TRUE(validate_update(old_spec, new_spec));
  new_spec["image"] = "aiperf:2";
  auto bad = validate_update(old_spec, new_spec);
  ASSERT_FALSE(bad);
  EXPECT_EQ(error_message(bad.error()),
            "spec.image is immutable after creation; create a new AIPerfJob to "
            "change it");
  EXPECT_EQ(config::error_flag(bad.error()), "spec.image");
}

// The CEL corpus and the shared validation agree: whatever a rule refuses,
// validation refuses with the rule's message (runtime's rules guard fields
// validation already refuses as not supported).
TEST(openapi, validation_agrees_with_every_cel_case) {
  size_t cases = 0;
  for (const auto& rule : cel_rules()) {
    SCOPED_TRACE(rule.id);
    EXPECT_FALSE(rule.cases.empty()) << "a rule without cases";
    for (const auto& c : rule.cases) {
      ++cases;
      if (rule.transition) {
        auto ok = validate_update(c.old_self, c.self);
        EXPECT_EQ(static_cast<bool>(ok), c.admitted)
            << c.old_self.dump() << " → " << c.self.dump();
        if (!ok) {
          EXPECT_EQ(error_message(ok.error()), rule.message);
        }
        continue;
      }
      json doc = base_spec();
      std::string where;
      switch (rule.target) {
      case shape::endpoint:
        doc["benchmark"]["endpoint"] = c.self;
        where = "benchmark.endpoint";
        break;
      case shape::multi_run:
        doc["multiRun"] = c.self;
        where = "multiRun";
        break;
      case shape::job_spec:
        for (const auto& [k, v] : c.self.items())
          if (k != "benchmark")
            doc[k] = v;
        break;
      default:
        continue; // runtime: apiHost/apiPort/workersMin are not supported;
                  // sweep: no kind yet
      }
      bool quoted = false;
      std::string all;
      for (const auto& p : check(doc, document_kind::job_spec)) {
        all += to_string(p) + "\n";
        quoted = quoted || p.message == rule.message;
      }
      EXPECT_EQ(quoted, !c.admitted) << c.self.dump() << "\n" << all;
    }
  }
  EXPECT_GT(cases, 100u);
}

// docs/kubernetes.md ("Supported AIPerfJob spec fields") lists every field
// with the model's verdict.
TEST(field_table, the_kubernetes_docs_list_every_field) {
  std::ifstream in{std::string{AIPERF_SOURCE_DIR} + "/docs/kubernetes.md"};
  std::stringstream buf;
  buf << in.rdbuf();
  auto docs = buf.str();
  ASSERT_NE(docs.find("## Supported AIPerfJob spec fields"), std::string::npos);
  std::vector<std::string> parents;
  for_each_field(
      job_spec_schema(), "", [&](const std::string& path, const field& f) {
        if (path.empty() || path.ends_with("[]") || path.ends_with(".*"))
          return;
        for (const auto& p : parents)
          if (path.starts_with(p + ".") || path.starts_with(p + "["))
            return;
        if (f.status == support::unsupported)
          parents.push_back(path);
        auto at = docs.find("| `" + path + "` |");
        ASSERT_NE(at, std::string::npos)
            << path << " is missing from docs/kubernetes.md";
        auto line = docs.substr(at, docs.find('\n', at) - at);
        switch (f.status) {
        case support::unsupported:
          EXPECT_NE(line.find("not supported by aiperf-node"),
                    std::string::npos)
              << line;
          break;
        case support::operator_managed:
          EXPECT_NE(line.find("operator-managed"), std::string::npos) << line;
          break;
        default:
          EXPECT_NE(line.find("| yes"), std::string::npos) << line;
        }
      });
}
