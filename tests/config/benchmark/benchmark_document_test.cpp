// AIPerf's own documents through the model: load (YAML), normalize,
// validate, and round-trip byte-identically through JSON.
//
// Fixtures are verbatim copies from ai-dynamo/aiperf:
//   aiperfjob_getting_started.yaml  docs/kubernetes/getting-started.md,
//                                   "Step 4: Using a Config File"
//   minimal.yaml                    src/aiperf/config/templates/minimal.yaml
//   goodput_slo.yaml src/aiperf/config/templates/goodput_slo.yaml
//   fixed_schedule.yaml src/aiperf/config/templates/fixed_schedule.yaml
// Each has a golden `<name>.json`: the normalized document as write_json()
// writes it.
#include "config/benchmark/mapping.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace aiperf;
using namespace aiperf::config::benchmark;

namespace {

std::string fixture_path(const std::string& name) {
  return std::string{AIPERF_BENCHMARK_FIXTURES} + "/" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

struct upstream_case {
  std::string file;
  document_kind kind;
  /// Errors validation must report (AIPerf fields aiperf-node lacks).
  std::vector<std::string> errors;
};

json load_normalized(const upstream_case& c) {
  auto doc = read_document(fixture_path(c.file));
  EXPECT_TRUE(doc) << error_message(doc.error());
  if (!doc)
    return {};
  json body = c.kind == document_kind::job_spec ? (*doc)["spec"] : *doc;
  if (c.kind == document_kind::job_spec) {
    EXPECT_EQ((*doc)["apiVersion"], "aiperf.nvidia.com/v1alpha1");
    EXPECT_EQ((*doc)["kind"], "AIPerfJob");
  }
  auto n = normalize(body, c.kind);
  EXPECT_TRUE(n) << error_message(n.error());
  return n ? *n : json{};
}

void PrintTo(const upstream_case& c, std::ostream* os) {
  *os << c.file;
}

class upstream_documents : public testing::TestWithParam<upstream_case> {};

} // namespace

TEST_P(upstream_documents, load_validate_and_round_trip_through_json) {
  const auto& c = GetParam();
  auto doc = load_normalized(c);
  ASSERT_TRUE(doc.is_object());

  std::vector<std::string> errors;
  for (const auto& p : check(doc, c.kind))
    if (!p.warning)
      errors.push_back(to_string(p));
  EXPECT_EQ(errors, c.errors);
  if (c.errors.empty()) {
    EXPECT_TRUE(validate(doc, c.kind));
  }

  // The canonical JSON is the golden file, byte for byte.
  auto text = write_json(doc);
  auto golden = fixture_path(c.file.substr(0, c.file.rfind('.')) + ".json");
  if (std::getenv("AIPERF_UPDATE_GOLDEN"))
    std::ofstream{golden, std::ios::binary} << text;
  EXPECT_EQ(text, slurp(golden))
      << "regenerate " << golden << " only if the change is meant";

  // JSON → tree → JSON is byte-identical, and normalizing again changes
  // nothing.
  auto again = parse_json(text, "round-trip");
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, doc);
  EXPECT_EQ(write_json(*again), text);
  auto renormalized = normalize(*again, c.kind);
  ASSERT_TRUE(renormalized);
  EXPECT_EQ(write_json(*renormalized), text);

  // YAML → tree gives the same tree.
  auto yaml = parse_yaml(write_yaml(doc), "round-trip.yaml");
  ASSERT_TRUE(yaml) << error_message(yaml.error());
  EXPECT_EQ(write_json(*yaml), text);
}

INSTANTIATE_TEST_SUITE_P(
    aiperf, upstream_documents,
    testing::Values(
        upstream_case{
            "aiperfjob_getting_started.yaml", document_kind::job_spec, {}},
        upstream_case{"minimal.yaml", document_kind::config_file, {}},
        upstream_case{"goodput_slo.yaml", document_kind::config_file, {}},
        upstream_case{"fixed_schedule.yaml", document_kind::config_file, {}}),
    [](const auto& info) {
      auto name = info.param.file.substr(0, info.param.file.rfind('.'));
      for (auto& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch)))
          ch = '_';
      return name;
    });

TEST(upstream_documents, the_getting_started_warmup_concurrency_is_a_warning) {
  auto doc = load_normalized(
      {"aiperfjob_getting_started.yaml", document_kind::job_spec, {}});
  auto found = check(doc, document_kind::job_spec);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(found[0].warning);
  EXPECT_EQ(found[0].path, "benchmark.phases[0].concurrency");
  EXPECT_NE(found[0].message.find("not supported by aiperf-node"),
            std::string::npos);
}

TEST(documents, yaml_keeps_key_order_and_scalar_types) {
  auto doc = parse_yaml(
      "b: 1\na: '2'\nc: 2.50\nd: true\ne: ~\nf: \"true\"\ng: [x, 3]\n",
      "t.yaml");
  ASSERT_TRUE(doc);
  EXPECT_EQ(
      doc->dump(),
      R"({"b":1,"a":"2","c":2.5,"d":true,"e":null,"f":"true","g":["x",3]})");
  auto yaml = write_yaml(*doc);
  auto back = parse_yaml(yaml, "back.yaml");
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, *doc) << yaml;
}

TEST(documents, syntax_errors_name_the_file_and_line) {
  auto bad = parse_yaml("a: 1\nb: [1, 2\n", "bench.yaml");
  ASSERT_FALSE(bad);
  EXPECT_EQ(error_message(bad.error()).rfind("bench.yaml:", 0), 0u)
      << error_message(bad.error());
  auto json_bad = parse_document("{\"a\": }", "bench.json");
  ASSERT_FALSE(json_bad);
  EXPECT_EQ(config::error_flag(json_bad.error()), "bench.json");
  auto missing = read_document("/nonexistent/bench.yaml");
  ASSERT_FALSE(missing);
  EXPECT_TRUE(is_error(missing.error(), config::errc::unreadable));
}

TEST(documents, snake_case_keys_become_camel_case_but_free_maps_keep_theirs) {
  auto doc = parse_yaml(
      "benchmark:\n  models: [m]\n  endpoint:\n    urls: [http://h:1]\n"
      "    api_key: k\n    extra: {max_tokens: 5}\n"
      "  phases: [{name: profiling, type: concurrency, requests: 3,"
      " prefill_concurrency: 1}]\nrandom_seed: 7\n",
      "t.yaml");
  ASSERT_TRUE(doc);
  auto n = normalize(*doc, document_kind::config_file);
  ASSERT_TRUE(n) << error_message(n.error());
  EXPECT_EQ((*n)["randomSeed"], 7);
  EXPECT_EQ((*n)["benchmark"]["endpoint"]["apiKey"], "k");
  EXPECT_EQ((*n)["benchmark"]["endpoint"]["extra"].dump(),
            R"({"max_tokens":5})");
  EXPECT_EQ((*n)["benchmark"]["phases"][0]["prefillConcurrency"], 1);
  EXPECT_TRUE(validate(*n, document_kind::config_file));
}

TEST(documents, a_value_given_twice_is_refused) {
  auto doc = parse_yaml("benchmark:\n  model: a\n  models: [b]\n", "t.yaml");
  ASSERT_TRUE(doc);
  auto n = normalize(*doc, document_kind::config_file);
  ASSERT_FALSE(n);
  EXPECT_TRUE(is_error(n.error(), config::errc::conflict));
  EXPECT_EQ(config::error_flag(n.error()), "benchmark.models");
  auto snake = parse_yaml("benchmark:\n  endpoint: {api_key: a, apiKey: b}\n",
                          "t.yaml");
  ASSERT_TRUE(snake);
  auto m = normalize(*snake, document_kind::config_file);
  ASSERT_FALSE(m);
  EXPECT_EQ(config::error_flag(m.error()), "benchmark.endpoint.apiKey");
}

TEST(upstream_documents, templates_map_onto_profile_flags) {
  auto minimal
      = load_normalized({"minimal.yaml", document_kind::config_file, {}});
  auto cfg = to_profile_config(minimal);
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  EXPECT_EQ(cfg->model_names,
            std::vector<std::string>{"meta-llama/Llama-3.1-8B-Instruct"});
  EXPECT_EQ(cfg->urls, std::vector<std::string>{"http://localhost:8000"});
  EXPECT_EQ(cfg->concurrency, 8);
  EXPECT_EQ(cfg->request_count, 100);
  EXPECT_EQ(cfg->num_dataset_entries, 100);
  EXPECT_EQ(cfg->isl_mean, 512);
  EXPECT_EQ(cfg->osl_mean, 128);

  auto job = load_normalized(
      {"aiperfjob_getting_started.yaml", document_kind::job_spec, {}});
  auto job_cfg = to_profile_config(job);
  ASSERT_TRUE(job_cfg) << error_message(job_cfg.error());
  EXPECT_TRUE(job_cfg->streaming);
  EXPECT_EQ(job_cfg->warmup_request_count, 20);
  EXPECT_EQ(job_cfg->concurrency, 50);
  EXPECT_EQ(job_cfg->request_count, 500);
  EXPECT_EQ(job_cfg->num_dataset_entries, 1000);
}

// The example of docs/profile.md ("Config files (-f)") is valid as printed.
TEST(upstream_documents, the_profile_docs_example_is_valid) {
  auto doc = load_normalized(
      {"profile_doc_example.yaml", document_kind::config_file, {}});
  std::string all;
  for (const auto& p : check(doc, document_kind::config_file))
    all += to_string(p) + "\n";
  EXPECT_EQ(all, "");
  auto cfg = to_profile_config(doc);
  ASSERT_TRUE(cfg) << error_message(cfg.error());
  EXPECT_EQ(cfg->arrival_pattern, config::arrival_pattern::poisson);
  EXPECT_EQ(cfg->request_rate, 20.0);
  EXPECT_EQ(cfg->benchmark_duration, 120.0);
  EXPECT_EQ(cfg->benchmark_grace_period, 30.0);
  EXPECT_EQ(cfg->warmup_request_count, 20);
  ASSERT_EQ(cfg->goodput.size(), 2u);
  EXPECT_TRUE(finalize(*cfg, 4)) << "the flags it gives are valid too";
}

TEST(documents, malformed_documents_give_errors_not_exceptions) {
  auto doc
      = parse_yaml("benchmark:\n  models: 5\n  warmup: 5\n  profiling: [1]\n"
                   "  datasets: oops\n  endpoint: {urls: 7}\n",
                   "t.yaml");
  ASSERT_TRUE(doc);
  auto n = normalize(*doc, document_kind::config_file);
  ASSERT_TRUE(n) << error_message(n.error());
  auto found = check(*n, document_kind::config_file);
  EXPECT_FALSE(found.empty());
  EXPECT_FALSE(validate(*n, document_kind::config_file));
  auto cfg = to_profile_config(*n);
  EXPECT_FALSE(cfg) << "a document validation refused does not map";
  auto huge = parse_yaml("x: 1e999\n", "t.yaml");
  EXPECT_FALSE(huge);
}

TEST(documents, environment_variables_are_substituted_and_typed_by_the_field) {
  auto doc
      = parse_yaml("randomSeed: ${SEED:42}\n"
                   "model: ${MODEL_NAME:meta-llama/Llama-3.1-8B-Instruct}\n"
                   "benchmark:\n  endpoint:\n    url: http://${HOST}:8000\n"
                   "    apiKey: ${KEY}\n    streaming: ${STREAM:true}\n"
                   "  phases:\n    type: concurrency\n    requests: 5\n    "
                   "concurrency: ${C:4}\n",
                   "t.yaml");
  ASSERT_TRUE(doc);
  auto n = normalize(*doc, document_kind::config_file);
  ASSERT_TRUE(n);
  env_lookup env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "HOST")
      return "gpu";
    if (name == "KEY")
      return "12345";
    if (name == "C")
      return "16";
    return std::nullopt;
  };
  auto s = substitute_environment(*n, document_kind::config_file, env);
  ASSERT_TRUE(s) << error_message(s.error());
  EXPECT_EQ((*s)["randomSeed"], 42);
  EXPECT_EQ((*s)["benchmark"]["models"][0], "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ((*s)["benchmark"]["endpoint"]["urls"][0], "http://gpu:8000");
  EXPECT_EQ((*s)["benchmark"]["endpoint"]["apiKey"], "12345")
      << "a string field stays a string";
  EXPECT_EQ((*s)["benchmark"]["endpoint"]["streaming"], true);
  EXPECT_EQ((*s)["benchmark"]["phases"][0]["concurrency"], 16);
  EXPECT_TRUE(validate(*s, document_kind::config_file));

  env_lookup none
      = [](const std::string&) { return std::optional<std::string>{}; };
  auto missing = substitute_environment(*n, document_kind::config_file, none);
  ASSERT_FALSE(missing);
  EXPECT_EQ(config::error_flag(missing.error()), "benchmark.endpoint.urls[0]");
  EXPECT_TRUE(is_error(missing.error(), config::errc::missing));
}
