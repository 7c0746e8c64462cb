// `kube generate` and the deployment flags: the normaliser of the mapping
// flags, each flag's parsing and refusal, the secret rule, and the command
// end to end through run_main (stdout, stderr, exit code). No cluster: the
// command contacts none.
#include "tools/commands/commands.hpp"
#include "tools/commands/kube_deploy_flags.hpp"
#include "tools/commands/kube_generate.hpp"

#include "config/benchmark/document.hpp"
#include "tests/support/run_main.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace aiperf;
using namespace aiperf::kube_command;
using testing::HasSubstr;
using testing::Not;
namespace fs = std::filesystem;
using strings = std::vector<std::string>;

namespace {

const std::string three = "--x.KEY VALUE, --x KEY=VALUE or --x '{\"KEY\":\"VALUE\"}'";

std::string spellings(const std::string& flag) {
  auto out = three;
  for (std::size_t at = 0; (at = out.find("--x", at)) != std::string::npos; at += flag.size())
    out.replace(at, 3, flag);
  return out;
}

// -- the normaliser -----------------------------------------------------------

TEST(mapping_normaliser, dotted_key_with_a_separate_value) {
  auto out = normalize_mapping_flag_tokens({"--labels.team", "perf", "--image", "x"});
  ASSERT_TRUE(out) << error_message(out.error());
  EXPECT_EQ(*out, (strings{"--labels", "team=perf", "--image", "x"}));
}

TEST(mapping_normaliser, dotted_key_with_an_equals_value) {
  auto out = normalize_mapping_flag_tokens({"--env-vars.A=1=2", "--annotations.x/y=", "z"});
  ASSERT_TRUE(out) << error_message(out.error());
  EXPECT_EQ(*out, (strings{"--env-vars", "A=1=2", "--annotations", "x/y=", "z"}));
}

TEST(mapping_normaliser, every_mapping_flag_and_nothing_else) {
  auto out = normalize_mapping_flag_tokens(
      {"--env-from-secrets.K", "s/k", "--node-selector.zone", "a", "--labelsx.a", "b",
       "--env-vars-x.a", "--url.x", "v", "-m", "m"});
  ASSERT_TRUE(out) << error_message(out.error());
  EXPECT_EQ(*out, (strings{"--env-from-secrets", "K=s/k", "--node-selector", "zone=a",
                           "--labelsx.a", "b", "--env-vars-x.a", "--url.x", "v", "-m", "m"}));
}

TEST(mapping_normaliser, other_spellings_pass_untouched) {
  strings in{"--labels", "a=b", "--labels", "{\"c\":\"d\"}", "--labels=e=f"};
  auto out = normalize_mapping_flag_tokens(in);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, in);
}

TEST(mapping_normaliser, nothing_after_double_dash) {
  auto out = normalize_mapping_flag_tokens({"--labels.a", "b", "--", "--labels.c", "d"});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (strings{"--labels", "a=b", "--", "--labels.c", "d"}));
}

TEST(mapping_normaliser, a_value_may_start_with_one_dash) {
  auto out = normalize_mapping_flag_tokens({"--env-vars.OFFSET", "-5"});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (strings{"--env-vars", "OFFSET=-5"}));
}

TEST(mapping_normaliser, refuses_an_empty_key) {
  auto out = normalize_mapping_flag_tokens({"--labels.", "x"});
  ASSERT_FALSE(out);
  EXPECT_THAT(error_message(out.error()), HasSubstr("--labels: '--labels.' names no key"));
  EXPECT_THAT(error_message(out.error()), HasSubstr(spellings("--labels")));
  auto eq = normalize_mapping_flag_tokens({"--labels.=x"});
  ASSERT_FALSE(eq);
}

TEST(mapping_normaliser, refuses_a_missing_value) {
  for (auto args : {strings{"--env-vars.A"}, strings{"--env-vars.A", "--image", "x"}}) {
    auto out = normalize_mapping_flag_tokens(args);
    ASSERT_FALSE(out);
    EXPECT_THAT(error_message(out.error()), HasSubstr("'--env-vars.A' needs a value"));
    EXPECT_THAT(error_message(out.error()), HasSubstr(spellings("--env-vars")));
  }
}

// -- mapping values -----------------------------------------------------------

using pairs = k8s::manifests::string_pairs;

TEST(mapping_values, equals_and_json_accumulate_in_order) {
  auto out = parse_mapping("--labels", {"b=2", "{\"a\":\"1\",\"c\":\"x=y\"}", "d=e=f"});
  ASSERT_TRUE(out) << error_message(out.error());
  EXPECT_EQ(*out, (pairs{{"b", "2"}, {"a", "1"}, {"c", "x=y"}, {"d", "e=f"}}));
}

TEST(mapping_values, a_later_value_wins_in_the_first_place) {
  auto out = parse_mapping("--env-vars", {"A=1", "B=2", "{\"A\":\"3\"}"});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (pairs{{"A", "3"}, {"B", "2"}}));
}

TEST(mapping_values, json_scalars_become_text_and_empty_values_stay) {
  auto out = parse_mapping("--env-vars", {"{\"N\":3,\"T\":true,\"F\":1.5}", "E="});
  ASSERT_TRUE(out) << error_message(out.error());
  EXPECT_EQ(*out, (pairs{{"N", "3"}, {"T", "true"}, {"F", "1.5"}, {"E", ""}}));
}

TEST(mapping_values, anything_else_names_the_three_spellings) {
  for (auto bad : {"novalue", "=x", "{\"a\":{\"b\":1}}", "{\"a\":null}", "{not json",
                   "{\"\":\"x\"}"}) {
    auto out = parse_mapping("--annotations", {bad});
    ASSERT_FALSE(out) << bad;
    EXPECT_THAT(error_message(out.error()), HasSubstr("--annotations")) << bad;
    if (std::string{bad} != "{not json") {
      EXPECT_THAT(error_message(out.error()), HasSubstr(spellings("--annotations"))) << bad;
    }
  }
}

// -- the deployment -----------------------------------------------------------

config::profile_config chat_run() {
  config::profile_config run;
  run.model_names = {"meta-llama/Llama-3.1-8B-Instruct"};
  run.urls = {"http://llm:8000"};
  return run;
}

TEST(deploy_flags, defaults_are_aiperfs) {
  auto d = to_deployment({}, chat_run(), "bench");
  ASSERT_TRUE(d) << error_message(d.error());
  EXPECT_EQ(d->ns, "bench");
  EXPECT_EQ(d->image, "aiperf-node:0.1.0");
  EXPECT_EQ(d->workers_per_pod, 10);
  EXPECT_FALSE(d->total_workers);
  EXPECT_FALSE(d->image_pull_policy);
  EXPECT_FALSE(d->ttl_seconds_after_finished);
  EXPECT_TRUE(d->tolerations.is_array() && d->tolerations.empty());
}

TEST(deploy_flags, default_name_is_the_slug_cut_to_35) {
  auto run = chat_run();
  EXPECT_EQ(default_job_name(run), "meta-llama-llama-3-1-8b-instruct-ch");
  run.model_names = {"Qwen"};
  EXPECT_EQ(default_job_name(run), "qwen-chat-concurrency");
  run.request_rate = 5;
  EXPECT_EQ(default_job_name(run), "qwen-chat-poisson");
  run.endpoint_type = config::endpoint_type::completions;
  run.request_rate.reset();
  run.fixed_schedule = true;
  EXPECT_EQ(default_job_name(run), "qwen-completions-fixed-schedule");
  run.model_names = {"--A__b--"};
  run.fixed_schedule = false;
  EXPECT_EQ(default_job_name(run), "a-b-completions-concurrency");
}

TEST(deploy_flags, every_flag_reaches_the_deployment) {
  deploy_flags f;
  f.name = "run1";
  f.image = "reg/aiperf-node:1";
  f.image_pull_policy = "Never";
  f.total_workers = 20;
  f.ttl_seconds = 60;
  f.node_selector = {"zone=a", "{\"gpu\":\"h100\"}"};
  f.tolerations = {"{\"key\":\"k\",\"operator\":\"Exists\"}",
                   "[{\"key\":\"g\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]"};
  f.image_pull_secrets = {"regcred", "other", "regcred"};
  f.secret_mounts = {"{\"name\":\"hf\",\"mount_path\":\"/s/hf\"}",
                     "[{\"name\":\"tls\",\"mount_path\":\"/s/tls\",\"sub_path\":\"ca.crt\"}]"};
  f.service_account = "bench-sa";
  f.queue_name = "q";
  f.priority_class = "high";
  f.env_vars = {"A=1"};
  f.labels = {"team=perf"};
  f.annotations = {"{\"note\":\"x\"}"};
  f.env_from_secrets = {"OPENAI_API_KEY=llm-api-key/api-key"};
  auto run = chat_run();
  run.workers_per_pod = 5;
  auto d = to_deployment(f, run, "ns1");
  ASSERT_TRUE(d) << error_message(d.error());
  EXPECT_EQ(d->name, "run1");
  EXPECT_EQ(d->image, "reg/aiperf-node:1");
  EXPECT_EQ(d->image_pull_policy, "Never");
  EXPECT_EQ(d->total_workers, 20);
  EXPECT_EQ(d->workers_per_pod, 5);
  EXPECT_EQ(d->ttl_seconds_after_finished, 60);
  EXPECT_EQ(d->node_selector, (pairs{{"zone", "a"}, {"gpu", "h100"}}));
  ASSERT_EQ(d->tolerations.size(), 2u);
  EXPECT_EQ(d->tolerations[1]["effect"], "NoSchedule");
  EXPECT_EQ(d->image_pull_secrets, (strings{"regcred", "other"}));
  ASSERT_EQ(d->secret_mounts.size(), 2u);
  EXPECT_EQ(d->secret_mounts[1].sub_path, "ca.crt");
  EXPECT_EQ(d->service_account_name, "bench-sa");
  EXPECT_EQ(d->queue_name, "q");
  EXPECT_EQ(d->priority_class, "high");
  EXPECT_EQ(d->env, (pairs{{"A", "1"}}));
  EXPECT_EQ(d->labels, (pairs{{"team", "perf"}}));
  EXPECT_EQ(d->annotations, (pairs{{"note", "x"}}));
  ASSERT_EQ(d->env_from_secrets.size(), 1u);
  EXPECT_EQ(d->env_from_secrets[0].second.secret, "llm-api-key");
  EXPECT_EQ(d->env_from_secrets[0].second.key, "api-key");
}

TEST(deploy_flags, workers_max_stands_in_for_total_workers) {
  auto run = chat_run();
  run.workers_max = 30;
  auto d = to_deployment({}, run, "default");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->total_workers, 30);
}

caf::error refusal(deploy_flags f) {
  auto d = to_deployment(f, chat_run(), "default");
  EXPECT_FALSE(d);
  return d ? caf::error{} : d.error();
}

TEST(deploy_flags, each_refusal_names_its_flag) {
  deploy_flags f;
  f.env_from_secrets = {"KEY=noslash"};
  EXPECT_THAT(error_message(refusal(f)), HasSubstr("must contain '/'"));
  f.env_from_secrets = {"KEY=/key"};
  EXPECT_THAT(error_message(refusal(f)), HasSubstr("--env-from-secrets"));
  f = {};
  f.tolerations = {"\"Exists\""};
  EXPECT_THAT(error_message(refusal(f)), HasSubstr("--tolerations"));
  f.tolerations = {"[1]"};
  EXPECT_THAT(error_message(refusal(f)), HasSubstr("--tolerations"));
  f = {};
  f.secret_mounts = {"{\"name\":\"x\"}"};
  EXPECT_THAT(error_message(refusal(f)), HasSubstr("--secret-mounts"));
  f.secret_mounts = {"{\"name\":\"x\",\"mount_path\":\"/a\",\"mode\":\"0400\"}"};
  EXPECT_THAT(error_message(refusal(f)), HasSubstr("unknown key 'mode'"));
  f = {};
  f.name = "a-name-that-is-longer-than-thirty-five";
  EXPECT_THAT(error_message(refusal(f)), HasSubstr("--name"));
  f = {};
  f.labels = {"oops"};
  EXPECT_THAT(error_message(refusal(f)), HasSubstr(spellings("--labels")));
}

// -- the secret rule ----------------------------------------------------------

const std::string api_key_refusal
    = "--api-key cannot be stored in the ConfigMap: create a Secret (kubectl create secret "
      "generic llm-api-key --from-literal=api-key=…) and pass "
      "--env-from-secrets.OPENAI_API_KEY llm-api-key/api-key";

TEST(secret_rule, an_api_key_needs_its_secret) {
  auto run = chat_run();
  run.api_key = "sk-x";
  auto d = to_deployment({}, run, "default");
  ASSERT_TRUE(d);
  auto refused = apply_secret_rule(run, *d);
  ASSERT_FALSE(refused);
  EXPECT_EQ(error_message(refused.error()), api_key_refusal);
  for (auto env : {"OPENAI_API_KEY", "AIPERF_INJECTED_API_KEY"}) {
    deploy_flags f;
    f.env_from_secrets = {std::string{env} + "=llm-api-key/api-key"};
    auto mapped = to_deployment(f, run, "default");
    ASSERT_TRUE(mapped);
    EXPECT_TRUE(apply_secret_rule(run, *mapped)) << env;
  }
}

TEST(secret_rule, credential_headers_and_user_info_need_theirs) {
  auto run = chat_run();
  run.headers = {{"authorization", "Bearer t"}};
  auto d = to_deployment({}, run, "default");
  ASSERT_TRUE(d);
  auto refused = apply_secret_rule(run, *d);
  ASSERT_FALSE(refused);
  EXPECT_THAT(error_message(refused.error()),
              HasSubstr("--env-from-secrets.AIPERF_INJECTED_HEADERS"));
  EXPECT_THAT(error_message(refused.error()), Not(HasSubstr("Bearer t")));
  run.headers.clear();
  run.urls = {"http://u:pw@llm:8000"};
  refused = apply_secret_rule(run, *d);
  ASSERT_FALSE(refused);
  EXPECT_THAT(error_message(refused.error()),
              HasSubstr("--env-from-secrets.AIPERF_INJECTED_ENDPOINT_URLS"));
  EXPECT_THAT(error_message(refused.error()), Not(HasSubstr("pw")));
}

TEST(secret_rule, plain_headers_travel_in_the_pod_env) {
  auto run = chat_run();
  run.headers = {{"X-Team", "perf"}};
  auto d = to_deployment({}, run, "default");
  ASSERT_TRUE(d);
  ASSERT_TRUE(apply_secret_rule(run, *d));
  EXPECT_EQ(d->env, (pairs{{"AIPERF_INJECTED_HEADERS", "{\"X-Team\":\"perf\"}"}}));
}

// -- the command --------------------------------------------------------------

struct scoped_env {
  scoped_env(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name))
      old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~scoped_env() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  const char* name_;
  std::optional<std::string> old_;
};

using result = test::main_result;

class kube_generate : public testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("kube-generate-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // No kubeconfig anywhere: the namespace falls back to `default`.
    kubeconfig_.emplace("KUBECONFIG", (dir_ / "absent").string());
    home_.emplace("HOME", dir_.string());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  result run(strings args) {
    args.insert(args.begin(), {"kube", "generate"});
    return test::run_main_captured(args);
  }

  fs::path dir_;
  std::optional<scoped_env> kubeconfig_;
  std::optional<scoped_env> home_;
};

const strings bench{"-m", "Qwen", "-u", "http://llm:8000", "--concurrency", "4"};

strings with(strings a, const strings& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<k8s::json> documents(const std::string& yaml) {
  std::vector<k8s::json> out;
  std::size_t from = 0;
  while (from <= yaml.size()) {
    auto sep = yaml.find("---\n", from);
    auto doc = yaml.substr(from, sep == std::string::npos ? std::string::npos : sep - from);
    auto parsed = config::benchmark::parse_yaml(doc, "stdout");
    EXPECT_TRUE(parsed) << (parsed ? "" : error_message(parsed.error()));
    if (parsed)
      out.push_back(*parsed);
    if (sep == std::string::npos)
      break;
    from = sep + 4;
  }
  return out;
}

TEST_F(kube_generate, needs_exactly_one_mode) {
  for (auto args : {bench, with(bench, {"--operator", "--no-operator"})}) {
    auto r = run(args);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, HasSubstr("exactly one of --operator"));
  }
}

TEST_F(kube_generate, direct_mode_prints_four_objects_in_order_in_the_namespace) {
  auto r = run(with(bench, {"--no-operator", "--name", "qa", "-n", "bench"}));
  ASSERT_EQ(r.code, 0) << r.err;
  auto docs = documents(r.out);
  ASSERT_EQ(docs.size(), 4u) << r.out;
  strings kinds;
  for (auto& d : docs) {
    kinds.push_back(d["kind"].get<std::string>());
    EXPECT_EQ(d["metadata"]["namespace"], "bench");
  }
  EXPECT_EQ(kinds, (strings{"Role", "RoleBinding", "ConfigMap", "JobSet"}));
  EXPECT_EQ(docs[3]["metadata"]["name"], "aiperf-qa");
  EXPECT_EQ(docs[2]["metadata"]["name"], "aiperf-qa-config");
  EXPECT_THAT(r.out, Not(HasSubstr("kind: Namespace")));
}

TEST_F(kube_generate, output_is_byte_identical_for_identical_arguments) {
  auto args = with(bench, {"--no-operator", "--labels.team", "perf"});
  auto a = run(args);
  auto b = run(args);
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  auto c = run(with(bench, {"--operator"}));
  auto e = run(with(bench, {"--operator"}));
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(c.out, e.out);
}

TEST_F(kube_generate, the_three_spellings_print_the_same) {
  auto dotted = run(with(bench, {"--no-operator", "--labels.team", "perf", "--labels.tier=gold",
                                 "--env-vars.A", "1"}));
  auto equals = run(with(bench, {"--no-operator", "--labels", "team=perf", "--labels",
                                 "tier=gold", "--env-vars", "A=1"}));
  auto json = run(with(bench, {"--no-operator", "--labels", "{\"team\":\"perf\",\"tier\":\"gold\"}",
                               "--env-vars", "{\"A\":\"1\"}"}));
  ASSERT_EQ(dotted.code, 0) << dotted.err;
  EXPECT_EQ(dotted.out, equals.out);
  EXPECT_EQ(dotted.out, json.out);
  auto docs = documents(dotted.out);
  ASSERT_EQ(docs.size(), 4u);
  auto& pod = docs[3]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"];
  EXPECT_EQ(pod["metadata"]["labels"]["team"], "perf");
  EXPECT_EQ(pod["metadata"]["labels"]["tier"], "gold");
}

TEST_F(kube_generate, a_bad_mapping_value_is_a_usage_error_naming_the_spellings) {
  for (auto args : {strings{"--labels", "oops"}, strings{"--env-vars.A"},
                    strings{"--annotations", "[1]"}}) {
    auto r = run(with(with(bench, {"--no-operator"}), args));
    EXPECT_EQ(r.code, 2) << args[0];
    EXPECT_EQ(r.out, "");
    EXPECT_THAT(r.err, HasSubstr("KEY=VALUE")) << r.err;
  }
}

TEST_F(kube_generate, flag_refusals_exit_2) {
  for (auto args : {strings{"--image-pull-policy", "Sometimes"}, strings{"--total-workers", "0"},
                    strings{"--ttl-seconds", "-1"}, strings{"--tolerations", "nope"},
                    strings{"--env-from-secrets.K", "noslash"}, strings{"--no-such-flag"},
                    strings{"--name", "Bad_Name"}, strings{"--worker-pods", "2"}}) {
    auto r = run(with(with(bench, {"--no-operator"}), args));
    EXPECT_EQ(r.code, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(r.out, "") << args[0];
    EXPECT_THAT(r.err, HasSubstr("error: ")) << args[0];
  }
}

TEST_F(kube_generate, url_is_required) {
  auto r = run({"--no-operator", "-m", "Qwen"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--url"));
}

TEST_F(kube_generate, help_lists_the_deployment_flags) {
  auto r = run({"--help"});
  EXPECT_EQ(r.code, 0);
  for (auto flag : {"--operator", "--no-operator", "--name", "--image", "--image-pull-policy",
                    "--total-workers", "--workers-per-pod", "--ttl-seconds", "--node-selector",
                    "--tolerations", "--image-pull-secrets", "--secret-mounts",
                    "--service-account", "--queue-name", "--priority-class",
                    "--skip-endpoint-check", "--env-vars", "--labels", "--annotations",
                    "--env-from-secrets", "--namespace", "--kubeconfig", "--kube-context",
                    "--config", "--url"})
    EXPECT_THAT(r.out, HasSubstr(flag));
}

TEST_F(kube_generate, namespace_comes_from_the_kubeconfig_context) {
  auto path = dir_ / "kubeconfig";
  std::ofstream{path} << "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                         "clusters:\n- name: k\n  cluster:\n    server: https://127.0.0.1:1\n"
                         "users:\n- name: u\n  user:\n    token: t\n"
                         "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n"
                         "    namespace: from-context\n";
  auto r = run(with(bench, {"--no-operator", "--kubeconfig", path.string()}));
  ASSERT_EQ(r.code, 0) << r.err;
  auto docs = documents(r.out);
  ASSERT_EQ(docs.size(), 4u);
  EXPECT_EQ(docs[0]["metadata"]["namespace"], "from-context");
  r = run(with(bench, {"--no-operator", "--kubeconfig", path.string(), "-n", "given"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(documents(r.out)[3]["metadata"]["namespace"], "given");
  r = run(with(bench, {"--no-operator"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(documents(r.out)[1]["metadata"]["namespace"], "default");
  EXPECT_EQ(r.err, "");
  // An explicit kubeconfig that cannot be read: still `default`, with a warning.
  r = run(with(bench, {"--no-operator", "--kubeconfig", (dir_ / "missing").string()}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(documents(r.out)[0]["metadata"]["namespace"], "default");
  EXPECT_THAT(r.err, HasSubstr("warning: "));
  EXPECT_THAT(r.err, HasSubstr("using namespace default"));
}

TEST_F(kube_generate, operator_mode_prints_one_aiperfjob) {
  auto r = run(with(bench, {"--operator", "--name", "qa", "-n", "bench", "--image-pull-policy",
                            "IfNotPresent", "--total-workers", "20", "--ttl-seconds", "600",
                            "--labels.team", "perf", "--node-selector.zone", "a",
                            "--tolerations", "{\"key\":\"k\",\"operator\":\"Exists\"}",
                            "--image-pull-secrets", "regcred", "--secret-mounts",
                            "{\"name\":\"hf\",\"mount_path\":\"/s/hf\"}", "--service-account",
                            "sa", "--queue-name", "q", "--priority-class", "p",
                            "--skip-endpoint-check", "--env-vars.A", "1"}));
  ASSERT_EQ(r.code, 0) << r.err;
  auto docs = documents(r.out);
  ASSERT_EQ(docs.size(), 1u);
  auto& job = docs[0];
  EXPECT_EQ(job["apiVersion"], "aiperf.nvidia.com/v1alpha1");
  EXPECT_EQ(job["kind"], "AIPerfJob");
  EXPECT_EQ(job["metadata"]["name"], "qa");
  EXPECT_EQ(job["metadata"]["namespace"], "bench");
  auto& spec = job["spec"];
  EXPECT_EQ(spec["image"], "aiperf-node:0.1.0");
  EXPECT_EQ(spec["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(spec["ttlSecondsAfterFinished"], 600);
  EXPECT_EQ(spec["benchmark"]["models"][0], "Qwen");
  EXPECT_EQ(spec["benchmark"]["endpoint"]["urls"][0], "http://llm:8000");
  EXPECT_EQ(spec["benchmark"]["runtime"]["workers"], 20);
  auto& pt = spec["podTemplate"];
  EXPECT_EQ(pt["labels"]["team"], "perf");
  EXPECT_EQ(pt["nodeSelector"]["zone"], "a");
  EXPECT_EQ(pt["tolerations"][0]["key"], "k");
  EXPECT_EQ(pt["imagePullSecrets"][0]["name"], "regcred");
  EXPECT_EQ(pt["volumes"][0]["secret"]["secretName"], "hf");
  EXPECT_EQ(pt["volumeMounts"][0]["mountPath"], "/s/hf");
  EXPECT_EQ(pt["serviceAccountName"], "sa");
  EXPECT_EQ(pt["env"][0]["name"], "A");
  EXPECT_EQ(spec["scheduling"]["queueName"], "q");
  EXPECT_EQ(spec["scheduling"]["priorityClass"], "p");
  EXPECT_EQ(spec["skipEndpointCheck"], true);
}

TEST_F(kube_generate, workers_are_aiperfs_not_this_machines) {
  auto r = run(with(bench, {"--no-operator"}));
  ASSERT_EQ(r.code, 0) << r.err;
  auto docs = documents(r.out);
  ASSERT_EQ(docs.size(), 4u);
  EXPECT_EQ(docs[3]["spec"]["replicatedJobs"][1]["replicas"], 1);
  EXPECT_THAT(docs[2]["data"]["run_config.json"].get<std::string>(),
              HasSubstr("\"workers_max\": 10"));
  r = run(with(bench, {"--no-operator", "--total-workers", "20", "--workers-per-pod", "5"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(documents(r.out)[3]["spec"]["replicatedJobs"][1]["replicas"], 4);
  r = run(with(bench, {"--no-operator", "--total-workers", "15"}));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--total-workers"));
  r = run(with(bench, {"--operator"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(documents(r.out)[0]["spec"]["benchmark"].contains("runtime")) << r.out;
}

TEST_F(kube_generate, an_api_key_without_its_secret_is_refused_exactly) {
  auto r = run(with(bench, {"--no-operator", "--api-key", "sk-do-not-leak"}));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "error: " + api_key_refusal + "\n");
  r = run(with(bench, {"--operator", "--api-key", "sk-do-not-leak"}));
  EXPECT_EQ(r.code, 2);
  r = run(with(bench, {"--no-operator", "-H", "Authorization: Bearer do-not-leak"}));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, Not(HasSubstr("do-not-leak")));
}

TEST_F(kube_generate, a_url_with_user_info_without_its_secret_exits_2) {
  auto r = run({"-m", "Qwen", "-u", "http://u:pw-do-not-leak@llm:8000", "--no-operator"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("--url http://<redacted>@llm:8000"));
  EXPECT_THAT(r.err, HasSubstr("--env-from-secrets.AIPERF_INJECTED_ENDPOINT_URLS"));
  EXPECT_THAT(r.err, Not(HasSubstr("pw-do-not-leak")));
}

TEST_F(kube_generate, a_local_input_file_travels_in_run_config) {
  auto file = dir_ / "prompts.jsonl";
  std::ofstream{file} << "{\"text\": \"hello\"}\n";
  auto r = run(with(bench, {"--no-operator", "--input-file", file.string()}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("user_files"));
  EXPECT_THAT(r.out, HasSubstr("prompts.jsonl"));
  EXPECT_THAT(r.err, Not(HasSubstr("warning: --input-file")));
}

// A path that is not on this machine is one inside the pods (mounted): it
// stays as given, is not embedded, and a warning says so; its dataset type
// cannot be read here, so it must be given.
TEST_F(kube_generate, an_input_file_not_on_this_machine_is_a_path_in_the_pods) {
  const std::string in_pod = "/mnt/prompts/not-here.jsonl";
  auto r = run(with(bench, {"--no-operator", "--input-file", in_pod, "--custom-dataset-type",
                            "single_turn"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(in_pod));
  EXPECT_THAT(r.out, Not(HasSubstr("user_files")));
  EXPECT_THAT(r.err, HasSubstr("--input-file " + in_pod + " does not exist here"));
  auto untyped = run(with(bench, {"--no-operator", "--input-file", in_pod}));
  EXPECT_EQ(untyped.code, 2);
  EXPECT_EQ(untyped.out, "");
  EXPECT_THAT(untyped.err, HasSubstr("--input-file"));
  EXPECT_THAT(untyped.err, HasSubstr("pass --custom-dataset-type"));
}

TEST_F(kube_generate, too_large_local_files_exit_2_with_nothing_printed) {
  auto file = dir_ / "big.jsonl";
  // One valid JSONL line (the CLI reads the file as a dataset too).
  std::ofstream{file} << "{\"text\": \"" << std::string(524289 - 13, 'x') << "\"}\n";
  auto r = run(with(bench, {"--no-operator", "--input-file", file.string()}));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("(524289 bytes)"));
  EXPECT_THAT(r.err, HasSubstr("--secret-mounts"));
}

TEST_F(kube_generate, no_secret_value_enters_any_generated_manifest) {
  const strings secrets{"sk-do-not-leak", "bearer-do-not-leak", "pw-do-not-leak",
                        "url-user"};
  auto args = strings{"-m", "Qwen", "-u", "http://url-user:pw-do-not-leak@llm:8000",
                      "--api-key", "sk-do-not-leak",
                      "-H", "Authorization: Bearer bearer-do-not-leak",
                      "--env-from-secrets.OPENAI_API_KEY", "llm-api-key/api-key",
                      "--env-from-secrets.AIPERF_INJECTED_HEADERS", "llm-headers/headers",
                      "--env-from-secrets.AIPERF_INJECTED_ENDPOINT_URLS", "llm-endpoint/urls"};
  for (auto mode : {"--no-operator", "--operator"}) {
    auto r = run(with(args, {mode}));
    ASSERT_EQ(r.code, 0) << mode << ": " << r.err;
    for (const auto& s : secrets) {
      EXPECT_THAT(r.out, Not(HasSubstr(s))) << mode;
      EXPECT_THAT(r.err, Not(HasSubstr(s))) << mode;
    }
    EXPECT_THAT(r.out, HasSubstr("secretKeyRef")) << mode;
    EXPECT_THAT(r.out, HasSubstr("<redacted>")) << mode;
  }
}

TEST_F(kube_generate, a_config_file_under_the_typed_flags) {
  auto path = dir_ / "bench.yaml";
  std::ofstream{path} << "benchmark:\n  models: [from-file]\n  endpoint:\n"
                         "    urls: [\"http://file:8000\"]\n"
                         "  phases:\n  - name: profiling\n    type: concurrency\n"
                         "    concurrency: 2\n    requests: 10\n";
  auto r = run({"--no-operator", "-f", path.string(), "--name", "fromfile"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("http://file:8000"));
  r = run({"--operator", "-f", path.string(), "-u", "http://flag:8000"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto docs = documents(r.out);
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0]["spec"]["benchmark"]["endpoint"]["urls"][0], "http://flag:8000");
  EXPECT_EQ(docs[0]["metadata"]["name"], "from-file-chat-concurrency");
}

} // namespace
