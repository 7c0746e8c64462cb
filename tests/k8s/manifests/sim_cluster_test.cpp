// The four objects against `aiperf-node sim-cluster --tls` through the real
// kubectl: a server-side dry run with strict field validation accepts them
// (the JobSet CRD installed first, as a cluster with JobSet has it), both
// without and with a queue (suspended), so no field we emit is unknown to
// the API server's schemas.
#include "k8s/manifests/manifests.hpp"

#include "k8s/sim/jobs/jobs.hpp"
#include "tests/support/skip.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

using namespace aiperf;
using namespace aiperf::k8s::manifests;
using aiperf::k8s::json;

namespace {

namespace fs = std::filesystem;

struct run_result {
  int status = -1;
  std::string out;
};

class manifests_sim_cluster : public ::testing::Test {
protected:
  void SetUp() override {
    const char* bin = std::getenv("AIPERF_NODE_BIN");
    if (bin == nullptr)
      AIPERF_SKIP_OR_FAIL("AIPERF_NODE_BIN is not set", "run the test through ctest, which sets it");
    if (!fs::exists("/usr/bin/kubectl"))
      AIPERF_SKIP_OR_FAIL("kubectl is not installed", "install kubectl 1.32 (tools/bootstrap)");
    char tmpl[] = "/tmp/aiperf-manifests-sim-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    kubeconfig_ = (dir_ / "kubeconfig").string();
    int out[2];
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    auto log = (dir_ / "sim.log").string();
    posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> args{bin, "sim-cluster", "--tls", "--kubeconfig", kubeconfig_};
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ASSERT_EQ(posix_spawn(&pid_, bin, &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    std::string line;
    char c = 0;
    while (::read(out[0], &c, 1) == 1 && c != '\n')
      line += c;
    ::close(out[0]);
    ASSERT_TRUE(line.starts_with("listening on https://127.0.0.1:")) << line;
  }

  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write(const std::string& name, const json& doc) {
    auto path = (dir_ / name).string();
    std::ofstream{path} << doc.dump(2);
    return path;
  }

  run_result kubectl(const std::string& args) {
    auto cmd = "KUBECONFIG=" + kubeconfig_ + " HOME=" + dir_.string()
               + " /usr/bin/kubectl " + args + " 2>&1";
    run_result r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr)
      return r;
    char buf[4096];
    while (auto n = std::fread(buf, 1, sizeof buf, p))
      r.out.append(buf, n);
    r.status = ::pclose(p);
    return r;
  }

  fs::path dir_;
  std::string kubeconfig_;
  pid_t pid_ = -1;
};

} // namespace

TEST_F(manifests_sim_cluster, objects_pass_a_strict_server_dry_run) {
  auto crd = kubectl("apply -f " + write("jobset-crd.json", k8s::sim::jobset_crd()));
  ASSERT_EQ(crd.status, 0) << crd.out;
  auto est = kubectl("wait --for=condition=Established --timeout=20s "
                     "crd/jobsets.jobset.x-k8s.io");
  ASSERT_EQ(est.status, 0) << est.out;
  auto ns = kubectl("create namespace bench");
  ASSERT_EQ(ns.status, 0) << ns.out;

  config::profile_config run;
  run.model_names = {"mock-model"};
  run.urls = {"http://mock-server.bench.svc:8000"};
  run.api_key = "sk-never-stored";
  deployment d;
  d.name = "demo";
  d.ns = "bench";
  d.total_workers = 20;
  d.env = {{"LOG_FORMAT", "json"}};
  d.env_from_secrets = {{"AIPERF_INJECTED_API_KEY", {"llm-api-key", "api-key"}}};
  d.secret_mounts = {{"tls-ca", "/etc/tls", "ca.crt"}};
  d.tolerations = json::array({{{"key", "gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}});
  d.affinity = {{"nodeAffinity",
                 {{"preferredDuringSchedulingIgnoredDuringExecution",
                   json::array({{{"weight", 1},
                                 {"preference",
                                  {{"matchExpressions",
                                    json::array({{{"key", "pool"},
                                                  {"operator", "In"},
                                                  {"values", json::array({"bench"})}}})}}}}})}}}};
  d.node_selector = {{"kubernetes.io/os", "linux"}};
  d.image_pull_secrets = {"regcred"};
  d.resources = resource_mode::guaranteed;
  auto no_env = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
  for (bool queued : {false, true}) {
    d.queue_name = queued ? std::optional<std::string>{"team-a"} : std::nullopt;
    auto objs = direct_mode_objects(d, run, no_env);
    ASSERT_TRUE(objs) << error_message(objs.error());
    json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", *objs}};
    auto r = kubectl("apply --dry-run=server --validate=strict -f " + write("objects.json", list));
    ASSERT_EQ(r.status, 0) << r.out;
    for (auto want : {"role.rbac.authorization.k8s.io/aiperf-demo-role created (server dry run)",
                      "rolebinding.rbac.authorization.k8s.io/aiperf-demo-binding created (server "
                      "dry run)",
                      "configmap/aiperf-demo-config created (server dry run)",
                      "jobset.jobset.x-k8s.io/aiperf-demo created (server dry run)"})
      EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("Warning"), std::string::npos) << r.out;
  }
}
