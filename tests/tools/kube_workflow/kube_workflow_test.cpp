// `kube profile/results/logs/list/cancel/delete` without a cluster: the
// namespace rule, the last-benchmark file, the request paths through the
// API server, `kube list`'s rows, profile's decisions, and the refusals that
// exit before anything is contacted.
#include "k8s/object/time.hpp"
#include "k8s/object/wire.hpp"
#include "tools/commands/commands.hpp"
#include "tools/commands/kube_cluster.hpp"
#include "tools/commands/kube_profile.hpp"
#include "tools/commands/kube_workflow.hpp"

#include "tests/support/run_main.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace aiperf;
using namespace aiperf::kube_command;

namespace {

struct temp_dir {
  fs::path path;
  temp_dir() {
    char tmpl[] = "/tmp/kube-workflow-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream{p} << text;
}

std::string kubeconfig_with_namespace(const std::string& ns) {
  return "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
         "    server: https://127.0.0.1:1\ncontexts:\n- name: x\n  context:\n"
         "    cluster: c\n    user: u\n"
         + (ns.empty() ? std::string{} : "    namespace: " + ns + "\n")
         + "users:\n- name: u\n  user:\n    token: t\ncurrent-context: x\n";
}

k8s::client::environment env_with_home(const fs::path& home) {
  return k8s::client::fixed_environment({{"HOME", home.string()}},
                                        (home / "no-sa").string());
}

/// Runs `aiperf-node args...` in process; the exit code and stderr.
std::pair<int, std::string> run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "aiperf-node");
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  testing::internal::CaptureStderr();
  int rc = commands::run_main(static_cast<int>(argv.size()), argv.data());
  return {rc, testing::internal::GetCapturedStderr()};
}

} // namespace

// --- namespace and target ---------------------------------------------------

TEST(kube_workflow, the_namespace_flag_wins_over_the_context) {
  temp_dir d;
  write(d.path / "kc", kubeconfig_with_namespace("ctx-ns"));
  cluster_flags f;
  f.namespace_name = "bench";
  EXPECT_EQ(resolve_namespace(f, {(d.path / "kc").string(), ""},
                              env_with_home(d.path)),
            "bench");
  f.namespace_name.clear();
  EXPECT_EQ(resolve_namespace(f, {(d.path / "kc").string(), ""},
                              env_with_home(d.path)),
            "ctx-ns");
}

TEST(kube_workflow, the_namespace_is_default_without_context_or_kubeconfig) {
  temp_dir d;
  write(d.path / "kc", kubeconfig_with_namespace(""));
  cluster_flags f;
  EXPECT_EQ(resolve_namespace(f, {(d.path / "kc").string(), ""},
                              env_with_home(d.path)),
            "default");
  // No kubeconfig at all: still a namespace, not an error.
  EXPECT_EQ(resolve_namespace(f, {}, env_with_home(d.path)), "default");
}

TEST(kube_workflow, last_benchmark_round_trips_through_its_file) {
  temp_dir d;
  auto path = last_benchmark_path(env_with_home(d.path));
  EXPECT_EQ(path, d.path / ".aiperf" / "last_kube_benchmark.json");
  last_benchmark x{"llama-bench", "bench", "direct"};
  ASSERT_TRUE(write_last_benchmark(path, x));
  auto back = read_last_benchmark(path);
  ASSERT_TRUE(back) << error_message(back.error());
  EXPECT_EQ(*back, x);
  // AIPerf's keys, nothing else.
  std::ifstream in{path};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  EXPECT_EQ(text, "{\n  \"name\": \"llama-bench\",\n  \"namespace\": "
                  "\"bench\",\n  \"mode\": \"direct\"\n}\n");
  // Written atomically: no temporary file is left beside it.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator{path.parent_path()})
    ++files;
  EXPECT_EQ(files, 1u);
}

TEST(kube_workflow, a_bad_last_benchmark_file_names_the_file_and_key) {
  temp_dir d;
  auto path = d.path / "last.json";
  auto missing = parse_last_benchmark(R"({"name":"x","mode":"direct"})", path);
  ASSERT_FALSE(missing);
  EXPECT_NE(error_message(missing.error()).find("\"namespace\""), std::string::npos);
  EXPECT_NE(error_message(missing.error()).find(path.string()), std::string::npos);
  EXPECT_FALSE(parse_last_benchmark("[1]", path));
  EXPECT_FALSE(parse_last_benchmark("not json", path));
  auto none = read_last_benchmark(d.path / "absent.json");
  ASSERT_FALSE(none);
  EXPECT_EQ(exit_code_of(none.error()), 2);
  EXPECT_NE(error_message(none.error()).find("name the benchmark"), std::string::npos);
}

TEST(kube_workflow, the_target_is_the_name_given_else_the_last_benchmark) {
  temp_dir d;
  auto env = env_with_home(d.path);
  cluster_flags f;
  auto named = resolve_target("mine", f, {}, env);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->name, "mine");
  EXPECT_EQ(named->namespace_name, "default");
  EXPECT_FALSE(resolve_target("Not_A_Label", f, {}, env));
  ASSERT_TRUE(write_last_benchmark(last_benchmark_path(env), {"last", "bench", "direct"}));
  auto last = resolve_target("", f, {}, env);
  ASSERT_TRUE(last);
  EXPECT_EQ(last->name, "last");
  EXPECT_EQ(last->namespace_name, "bench");
  f.namespace_name = "other";
  EXPECT_EQ(resolve_target("", f, {}, env)->namespace_name, "other");
}

TEST(kube_workflow, job_names_are_dns_labels_of_at_most_35) {
  EXPECT_EQ(validate_job_name(std::string(35, 'a')), "");
  auto long_name = validate_job_name(std::string(36, 'a'));
  EXPECT_NE(long_name.find("36 characters"), std::string::npos);
  EXPECT_NE(long_name.find("--name"), std::string::npos);
  EXPECT_NE(validate_job_name("Upper"), "");
  EXPECT_NE(validate_job_name("-first"), "");
  EXPECT_NE(validate_job_name("trail-"), "");
  EXPECT_NE(validate_job_name(""), "");
  EXPECT_EQ(validate_job_name("a-1"), "");
}

// --- paths through the API server ---------------------------------------------

TEST(kube_workflow, pods_are_reached_through_the_api_server_proxy) {
  auto list = k8s::to_http(pod_proxy("bench", "aiperf-x-controller-0-0-abcde", 9090,
                                      "/api/results/list"));
  EXPECT_EQ(list.method, "GET");
  EXPECT_EQ(list.target, "/api/v1/namespaces/bench/pods/"
                         "aiperf-x-controller-0-0-abcde:9090/proxy/api/results/list");
  auto post = pod_proxy("bench", "p", 9090, "/api/shutdown");
  post.verb = k8s::verb::create;
  auto call = k8s::to_http(post);
  EXPECT_EQ(call.method, "POST");
  EXPECT_EQ(call.target, "/api/v1/namespaces/bench/pods/p:9090/proxy/api/shutdown");
  auto log = k8s::to_http(pod_log("bench", "p", "control-plane"));
  EXPECT_EQ(log.target, "/api/v1/namespaces/bench/pods/p/log?container=control-plane");
  EXPECT_EQ(job_selector("x"), "aiperf.nvidia.com/job-id=x");
  EXPECT_EQ(jobset_name("x"), "aiperf-x");
}

TEST(kube_workflow, delete_removes_the_four_labelled_kinds_jobset_first) {
  const auto& kinds = labelled_kinds();
  ASSERT_EQ(kinds.size(), 4u);
  EXPECT_EQ(kinds[0].resource, "jobsets");
  EXPECT_EQ(kinds[0].group, "jobset.x-k8s.io");
  EXPECT_EQ(kinds[1].resource, "configmaps");
  EXPECT_EQ(kinds[2].resource, "rolebindings");
  EXPECT_EQ(kinds[3].resource, "roles");
}

// --- kube list ------------------------------------------------------------------

TEST(kube_workflow, list_rows_read_name_phase_and_age_from_the_jobset) {
  auto js = k8s::json::parse(R"({
    "metadata": {"name": "aiperf-b1", "namespace": "bench",
                 "labels": {"app": "aiperf", "aiperf.nvidia.com/job-id": "b1"},
                 "creationTimestamp": "2026-12-02T10:00:00Z"},
    "spec": {}, "status": {}})");
  auto created = *k8s::parse_time("2026-12-02T10:00:00Z") / 1'000'000'000;
  EXPECT_EQ(created, 1'796'205'600); // seconds, as now_unix
  auto row = row_of(js, created + 90);
  EXPECT_EQ(row, (jobset_row{"b1", "bench", "Running", "90s"}));
  js["metadata"]["annotations"]["aiperf.nvidia.com/progress-phase"] = "profiling";
  EXPECT_EQ(row_of(js, created).phase, "Running (profiling)");
  js["status"]["conditions"] = k8s::json::parse(
      R"([{"type":"Completed","status":"True"}])");
  EXPECT_EQ(row_of(js, created).phase, "Completed");
  js["status"]["conditions"][0]["type"] = "Failed";
  EXPECT_EQ(row_of(js, created).phase, "Failed");
  auto suspended = k8s::json::parse(R"({"metadata":{"name":"aiperf-q"},
                                        "spec":{"suspend":true}})");
  EXPECT_EQ(row_of(suspended, 0).phase, "Suspended");
  EXPECT_EQ(row_of(suspended, 0).name, "aiperf-q");
  EXPECT_EQ(row_of(suspended, 0).age, "<unknown>");
}

TEST(kube_workflow, list_rows_of_aiperfjobs_read_the_operators_phase) {
  auto job = k8s::json::parse(R"({
    "metadata": {"name": "nightly", "namespace": "bench",
                 "creationTimestamp": "2026-12-02T10:00:00Z"}})");
  auto created = *k8s::parse_time("2026-12-02T10:00:00Z") / 1'000'000'000;
  EXPECT_EQ(row_of_aiperfjob(job, created + 5), (jobset_row{"nightly", "bench", "Pending", "5s"}));
  job["status"] = {{"phase", "Running"}, {"subPhase", "profiling"}};
  EXPECT_EQ(row_of_aiperfjob(job, created).phase, "Running (profiling)");
  job["status"] = {{"phase", "Completed"}};
  EXPECT_EQ(row_of_aiperfjob(job, created).phase, "Completed");
}

TEST(kube_workflow, ages_read_like_kubectls) {
  EXPECT_EQ(format_age(5), "5s");
  EXPECT_EQ(format_age(119), "119s");
  EXPECT_EQ(format_age(192), "3m12s");
  EXPECT_EQ(format_age(42 * 60), "42m");
  EXPECT_EQ(format_age(5 * 3600 + 3 * 60), "5h3m");
  EXPECT_EQ(format_age(3 * 86400), "3d");
  EXPECT_EQ(format_age(-4), "0s");
}

TEST(kube_workflow, the_list_table_has_a_header_and_padded_columns) {
  auto text = format_rows({{"b1", "bench", "Running", "5s"},
                           {"longer-name", "ns", "Completed", "3d"}});
  EXPECT_EQ(text,
            "NAME          NAMESPACE   PHASE       AGE\n"
            "b1            bench       Running     5s\n"
            "longer-name   ns          Completed   3d\n");
  EXPECT_EQ(format_rows({}), "NAME   NAMESPACE   PHASE   AGE\n");
}

// --- kube profile's decisions -------------------------------------------------

TEST(kube_workflow, discovery_decides_the_mode) {
  k8s::response listed;
  listed.body = R"({"kind":"APIResourceList","groupVersion":"aiperf.nvidia.com/v1alpha1",
                    "resources":[{"name":"aiperfjobs"},{"name":"aiperfjobs/status"}]})";
  auto op = mode_from_discovery(caf::expected<k8s::response>{listed});
  ASSERT_TRUE(op);
  EXPECT_EQ(*op, profile_mode::operator_mode);

  k8s::status nf;
  nf.code = 404;
  nf.reason = "NotFound";
  auto direct = mode_from_discovery(
      caf::expected<k8s::response>{k8s::make_status_error("discovery", nf)});
  ASSERT_TRUE(direct);
  EXPECT_EQ(*direct, profile_mode::direct);

  k8s::status forbidden;
  forbidden.code = 403;
  forbidden.reason = "Forbidden";
  forbidden.message = "no";
  auto other = mode_from_discovery(
      caf::expected<k8s::response>{k8s::make_status_error("discovery", forbidden)});
  ASSERT_FALSE(other);
  EXPECT_EQ(exit_code_of(other.error()), 1);
  EXPECT_NE(error_message(other.error()).find("/apis/aiperf.nvidia.com/v1alpha1"),
            std::string::npos);

  k8s::response empty;
  empty.body = R"({"resources":[]})";
  EXPECT_FALSE(mode_from_discovery(caf::expected<k8s::response>{empty}));
}

TEST(kube_workflow, first_lines_are_aiperfs) {
  EXPECT_EQ(first_line("b1", "bench", profile_mode::direct),
            "jobset.jobset.x-k8s.io/aiperf-b1 created in bench (direct mode)");
  EXPECT_EQ(first_line("b1", "bench", profile_mode::operator_mode),
            "aiperfjob.aiperf.nvidia.com/b1 created in bench (operator mode)");
}

TEST(kube_workflow, detach_is_automatic_without_a_terminal_unless_no_detach) {
  std::string warning;
  EXPECT_TRUE(should_detach(true, false, true, &warning));
  EXPECT_TRUE(warning.empty());
  EXPECT_FALSE(should_detach(false, false, true, &warning));
  EXPECT_FALSE(should_detach(false, true, false, &warning));
  EXPECT_TRUE(warning.empty());
  EXPECT_TRUE(should_detach(false, false, false, &warning));
  EXPECT_NE(warning.find("--no-detach"), std::string::npos);
}

TEST(kube_workflow, startup_problems_are_named_with_pod_and_container) {
  auto pulling = k8s::json::parse(R"({"metadata":{"name":"aiperf-b-workers-0-0-x"},
    "status":{"phase":"Pending","containerStatuses":[{"name":"workers",
      "state":{"waiting":{"reason":"ImagePullBackOff",
                          "message":"Back-off pulling image \"nope:1\""}}}]}})");
  auto problem = startup_problem(pulling);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("aiperf-b-workers-0-0-x"), std::string::npos);
  EXPECT_NE(problem->find("workers: ImagePullBackOff"), std::string::npos);
  EXPECT_NE(problem->find("nope:1"), std::string::npos);
  auto creating = k8s::json::parse(R"({"metadata":{"name":"p"},
    "status":{"containerStatuses":[{"name":"c",
      "state":{"waiting":{"reason":"ContainerCreating"}}}]}})");
  EXPECT_FALSE(startup_problem(creating));
  auto unschedulable = k8s::json::parse(R"({"metadata":{"name":"p"},
    "status":{"conditions":[{"type":"PodScheduled","status":"False",
      "reason":"Unschedulable","message":"0/1 nodes"}]}})");
  ASSERT_TRUE(startup_problem(unschedulable));
  EXPECT_NE(startup_problem(unschedulable)->find("Unschedulable"), std::string::npos);
}

TEST(kube_workflow, the_run_exit_code_is_the_control_planes) {
  auto pod = k8s::json::parse(R"({"status":{"containerStatuses":[
    {"name":"results-sidecar","state":{"running":{}}},
    {"name":"control-plane","state":{"terminated":{"exitCode":5}}}]}})");
  EXPECT_EQ(controller_exit_code(pod), 5);
  pod["status"]["containerStatuses"][1]["state"]
      = k8s::json::parse(R"({"running":{}})");
  EXPECT_EQ(controller_exit_code(pod), std::nullopt);
}

TEST(kube_workflow, local_only_flags_are_named) {
  EXPECT_EQ(local_only_refusal({}), "");
  auto why = local_only_refusal({"--worker-pods"});
  EXPECT_NE(why.find("--worker-pods"), std::string::npos);
  EXPECT_NE(why.find("--total-workers"), std::string::npos);
}

// --- refusals before any cluster is contacted ---------------------------------

TEST(kube_workflow, profile_without_url_exits_2) {
  auto [rc, err] = run_cli({"kube", "profile", "-m", "mock-model", "--no-operator", "--name", "b1",
                            "--kubeconfig", "/nonexistent/kc"});
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("--url"), std::string::npos) << err;
  EXPECT_NE(err.find("required"), std::string::npos) << err;
}

TEST(kube_workflow, profile_refuses_worker_pods_by_name) {
  auto [rc, err] = run_cli({"kube", "profile", "-m", "mock-model", "--no-operator", "--name", "b1", "-u",
                            "http://mock:8000", "--worker-pods", "2", "--kubeconfig",
                            "/nonexistent/kc"});
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("--worker-pods"), std::string::npos) << err;
}

TEST(kube_workflow, profile_refuses_a_name_longer_than_35) {
  auto [rc, err] = run_cli({"kube", "profile", "-m", "mock-model", "--no-operator", "--name",
                            std::string(36, 'b'), "-u", "http://mock:8000",
                            "--kubeconfig", "/nonexistent/kc"});
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("at most 35"), std::string::npos) << err;
}

TEST(kube_workflow, profile_refuses_operator_and_no_operator_together) {
  auto [rc, err] = run_cli({"kube", "profile", "-m", "mock-model", "--operator", "--no-operator", "--name",
                            "b1", "-u", "http://mock:8000"});
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("--operator and --no-operator"), std::string::npos) << err;
}

TEST(kube_workflow, profile_operator_dry_run_prints_the_aiperfjob_and_contacts_nothing) {
  auto ran = test::run_main_captured({"kube", "profile", "--operator", "--dry-run", "--name", "b1",
                                      "-n", "bench", "-m", "mock-model", "-u", "http://mock:8000",
                                      "--kubeconfig", "/nonexistent/kc"});
  EXPECT_EQ(ran.code, 0) << ran.err;
  EXPECT_NE(ran.out.find("kind: AIPerfJob\n"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find("  name: b1\n"), std::string::npos) << ran.out;
  EXPECT_EQ(ran.out.find("kind: JobSet"), std::string::npos) << ran.out;
}

TEST(kube_workflow, an_aiperfjobs_end_is_the_exit_code) {
  using k8s::json;
  EXPECT_EQ(exit_code_of_job(json{{"phase", "Running"}}), std::nullopt);
  EXPECT_EQ(exit_code_of_job(json::object()), std::nullopt);
  EXPECT_EQ(exit_code_of_job(json{{"phase", "Completed"}}), 0);
  EXPECT_EQ(exit_code_of_job(json{{"phase", "Completed"},
                                  {"conditions", json::array({{{"type", "Degraded"},
                                                               {"status", "True"}}})}}),
            5);
  EXPECT_EQ(exit_code_of_job(json{{"phase", "Failed"}, {"exitCode", 4}}), 4);
  EXPECT_EQ(exit_code_of_job(json{{"phase", "Failed"}, {"exitCode", 6}}), 6);
  EXPECT_EQ(exit_code_of_job(json{{"phase", "Failed"}}), 1);
  EXPECT_EQ(exit_code_of_job(json{{"phase", "Failed"}, {"exitCode", 0}}), 1);
  EXPECT_EQ(exit_code_of_job(json{{"phase", "Cancelled"}}), 1);
}

TEST(kube_workflow, results_shutdown_without_from_pods_exits_2) {
  // --shutdown stops a controller pod: it means nothing for the operator's copy.
  auto [rc, err] = run_cli({"kube", "results", "b1", "--shutdown"});
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("--shutdown goes with --from-pods"), std::string::npos) << err;
  auto [rc2, err2] = run_cli({"kube", "results", "list-runs", "b1", "-o", "yaml"});
  EXPECT_EQ(rc2, 2);
  EXPECT_NE(err2.find("-o: 'yaml' is not text or json"), std::string::npos) << err2;
}

TEST(kube_workflow, commands_without_a_name_or_last_benchmark_exit_2) {
  temp_dir d;
  const char* old = std::getenv("HOME");
  std::string saved = old ? old : "";
  ::setenv("HOME", d.path.c_str(), 1);
  for (const char* cmd : {"logs", "cancel", "delete"}) {
    auto [rc, err] = run_cli({"kube", cmd});
    EXPECT_EQ(rc, 2) << cmd;
    EXPECT_NE(err.find("last_kube_benchmark.json"), std::string::npos) << cmd << err;
  }
  auto [rc, err] = run_cli({"kube", "results", "--from-pods"});
  EXPECT_EQ(rc, 2);
  if (old)
    ::setenv("HOME", saved.c_str(), 1);
  else
    ::unsetenv("HOME");
}

TEST(kube_workflow, profile_dry_run_prints_the_four_objects_and_contacts_nothing) {
  std::vector<std::string> args{"aiperf-node", "kube", "profile", "--no-operator",
                                "--dry-run", "--name", "b1", "-n", "bench", "-m",
                                "mock-model", "-u", "http://mock:8000", "--kubeconfig",
                                "/nonexistent/kc"};
  auto ran = test::run_main_captured({args.begin() + 1, args.end()});
  const auto& out = ran.out;
  EXPECT_EQ(ran.code, 0);
  auto role = out.find("kind: Role\n");
  auto binding = out.find("kind: RoleBinding\n");
  auto config_map = out.find("kind: ConfigMap\n");
  auto jobset = out.find("kind: JobSet\n");
  ASSERT_NE(jobset, std::string::npos) << out;
  EXPECT_LT(role, binding);
  EXPECT_LT(binding, config_map);
  EXPECT_LT(config_map, jobset);
  EXPECT_NE(out.find("namespace: bench"), std::string::npos);
  EXPECT_EQ(out.find("created in"), std::string::npos);
}
