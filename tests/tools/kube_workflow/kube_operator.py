#!/usr/bin/python3
"""`aiperf-node operator` installed on a simulated cluster runs AIPerfJobs.

Usage: kube_operator.py path/to/aiperf-node [unittest args]

One `aiperf-node sim-cluster --tls --workloads --audit-log FILE` for the
file (checks run in the order of their names): `kubectl apply -k k8s/deploy`
installs the CRDs, the results claim and the operator Deployment, whose pod
runs `aiperf-node operator` with its own ServiceAccount; the mock server from
k8s/deploy/examples/mock-server.yaml is the endpoint.

- the Deployment runs 2 replicas: one holds the Lease, logs that it leads
  and is the one Ready pod (the standby's /readyz is 503), so the Service's
  endpoints name the leader alone;
- an AIPerfJob from `kube generate --operator` (2 worker pods, 20 streaming
  requests) reaches condition Complete (`kubectl wait`), with the summary,
  the stored results and the printer columns of `kubectl get aiperfjob`;
  `kube results` fetches the stored run from the operator's results server
  and `list-runs` lists it; its JobSet is deleted after the harvest;
- every request the operator made used its ServiceAccount, and the
  controller pod's status pushes used the job's pod identity (audit log);
- a spec aiperf-node cannot run fails at once with ConfigValid=False and a
  Warning event `kubectl describe` shows, and nothing is created for it;
- `spec.cancel: true` deletes the JobSet and ends the job Cancelled;
- `kube profile --operator --no-detach` submits an AIPerfJob, follows it to
  Completed and prints its summary (exit 0);
- a SIGKILLed controller fails its job with status.error naming the pod and
  exit code 137;
- with lowered watchdog thresholds (the operator restarts with them), a job
  whose image cannot be pulled records status.startupIssue, warns, claims
  the startup failure and ends Failed, its JobSet deleted;
- `kube list` shows the AIPerfJobs with their phase; `kube cancel` sets
  spec.cancel (the job ends Cancelled) and `kube delete` removes the
  AIPerfJob and, through garbage collection, all it owned;
- the operator's /metrics counts its reconciles and API requests;
- the same name run twice (deleted and submitted again at once) lands in
  two epochs; `kube results --run` fetches each;
- deleting the leader's pod mid-run hands the Lease to the standby, which
  completes the job (the completion claim comes from the new leader's pod
  address).

Needs root (the simulator's pod sandbox) and kubectl. Exits 77 (ctest:
skipped) when one is missing; with CI=true that is a failure instead.
"""

import json
import os
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "..", "support"))
from sim_cluster import SimCluster, require_root_and_kubectl  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
DEPLOY = os.path.join(REPO, "k8s", "deploy")
MOCK_YAML = os.path.join(DEPLOY, "examples", "mock-server.yaml")
NODE_BIN = None
NS = "bench"
OPERATOR_SA = "system:serviceaccount:aiperf-system:aiperf-operator"


def generate_args(name, requests):
    return ["generate", "--operator", "--name", name, "-n", NS, "--image", "aiperf-node:dev",
            "-m", "mock-model", "-u", "http://mock.%s.svc.cluster.local:8000" % NS,
            "--total-workers", "2", "--workers-per-pod", "1", "--request-count", str(requests),
            "--concurrency", "2", "--streaming"]


class Operator(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.sim = SimCluster(cls.tmp.name, NODE_BIN, workloads=True, audit=True,
                             extra_args=["--backoff-scale", "0.1"])
        cls.sim.kubectl_ok("apply", "-k", DEPLOY)
        # Every check runs with two operator replicas: one leads, one stands by.
        cls.sim.kubectl_ok("scale", "deployment/aiperf-operator", "-n", "aiperf-system",
                           "--replicas=2")
        cls.sim.kubectl_ok("create", "namespace", NS)
        cls.sim.kubectl_ok("apply", "-n", NS, "-f", MOCK_YAML)

    @classmethod
    def tearDownClass(cls):
        try:
            cls.sim.stop_ok()
        finally:
            cls.tmp.cleanup()

    def submit(self, name, requests, edit=None):
        gen = self.sim.kube(*generate_args(name, requests))
        self.assertEqual(gen.returncode, 0, gen.stderr)
        path = os.path.join(self.tmp.name, name + ".yaml")
        text = gen.stdout if edit is None else edit(gen.stdout)
        with open(path, "w") as f:
            f.write(text)
        self.sim.kubectl_ok("apply", "-f", path)

    def job(self, name):
        return self.sim.kubectl_json("get", "aiperfjob", name, "-n", NS)

    def wait_phase(self, name, phases, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            status = self.job(name).get("status", {})
            if status.get("phase") in phases:
                return status
            time.sleep(0.5)
        self.fail("%s never reached %s: %s\noperator log:\n%s" % (
            name, phases, json.dumps(self.job(name).get("status", {}))[:2000],
            self.sim.kubectl("logs", "-n", "aiperf-system", "deploy/aiperf-operator").stdout))

    def test_01_one_of_two_operator_pods_leads_and_is_ready(self):
        leader, pods = self.wait_one_leader()
        logs = self.sim.kubectl("logs", "-n", "aiperf-system", leader).stdout
        self.assertIn("operator watching AIPerfJobs in every namespace", logs)
        self.assertIn("leader election on Lease aiperf-system/aiperf-operator-leader as " + leader,
                      logs)
        self.assertIn("operator: leading; reconciling AIPerfJobs", logs)
        standby = [n for n in pods if n != leader][0]
        self.assertNotIn("operator: leading",
                         self.sim.kubectl("logs", "-n", "aiperf-system", standby).stdout)
        # The standby's /readyz is 503, so the Service routes to the leader alone.
        ready = self.sim.kubectl("get", "--raw", "/api/v1/namespaces/aiperf-system/pods/%s:8081"
                                 "/proxy/readyz" % standby)
        self.assertNotEqual(ready.returncode, 0)
        self.assertIn("ServiceUnavailable", ready.stderr)  # the 503, as kubectl names it
        endpoints = self.sim.kubectl_json("get", "endpoints", "aiperf-operator",
                                          "-n", "aiperf-system")
        addresses = [a["ip"] for sub in endpoints.get("subsets", [])
                     for a in sub.get("addresses", [])]
        self.assertEqual(addresses, [pods[leader][1]])

    def test_02_a_job_runs_to_complete_with_its_summary(self):
        self.submit("op1", 20)
        r = self.sim.kubectl("wait", "--for=condition=Complete", "aiperfjob/op1", "-n", NS,
                             "--timeout=180s")
        self.assertEqual(r.returncode, 0, r.stderr + "\n" + json.dumps(
            self.job("op1").get("status", {}))[:3000])
        status = self.job("op1")["status"]
        self.assertEqual(status["phase"], "Completed")
        self.assertEqual(status["exitCode"], 0)
        self.assertTrue(status["resultsExported"])
        self.assertEqual(status["summary"]["request_count"]["avg"], 20)
        self.assertEqual(status["summary"]["total_requests"], 20)
        self.assertIn("time_to_first_token", status["summary"])
        self.assertIn("profile_export_aiperf.json", status["results"]["files"])
        self.assertTrue(status["resultsPath"].startswith("/data/bench/op1/"), status["resultsPath"])
        self.assertEqual(str(status["runEpoch"]), status["resultsPath"].rsplit("/", 1)[1])
        self.assertNotIn("subPhase", status)  # cleared by the terminal write
        # The printer columns: every figure is there.
        table = self.sim.kubectl_ok("get", "aiperfjob", "op1", "-n", NS).stdout.splitlines()
        header, row = table[0].split(), table[1].split()
        self.assertEqual(header, ["NAME", "PHASE", "STAGE", "DONE", "TOTAL", "QPS", "TPS",
                                  "TTFT", "ITL", "E2E", "AGE"])
        self.assertEqual(row[:4], ["op1", "Completed", "20", "20"])
        self.assertEqual(len(row), len(header) - 1, table)  # only STAGE is empty
        # The operator's results server serves the stored run (through the
        # API server's service proxy): kube results fetches every file.
        epoch = status["resultsPath"].rsplit("/", 1)[1]
        out = os.path.join(self.tmp.name, "op1-results")
        r = self.sim.kube("results", "op1", "-n", NS, "--output", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("of run %s of bench/op1 from the operator" % epoch, r.stdout)
        with open(os.path.join(out, "profile_export_aiperf.json")) as f:
            self.assertEqual(json.load(f)["request_count"]["avg"], 20)
        listed = self.sim.kube("results", "list-runs", "op1", "-n", NS, "-o", "json")
        self.assertEqual(listed.returncode, 0, listed.stderr)
        runs = json.loads(listed.stdout)
        self.assertEqual(runs["latest_epoch"], epoch)
        self.assertEqual([x["epoch"] for x in runs["runs"]], [epoch])
        proxy = "/api/v1/namespaces/aiperf-system/services/aiperf-operator:8081/proxy"
        no_epoch = self.sim.kubectl("get", "--raw", proxy + "/api/v1/results/bench/op1")
        self.assertNotEqual(no_epoch.returncode, 0)  # 409: an epoch is required
        self.assertIn("Conflict", no_epoch.stderr)
        # The harvest is over: the JobSet goes (its UID as precondition).
        deadline = time.monotonic() + 30
        while self.sim.kubectl("get", "jobset", "aiperf-op1", "-n", NS).returncode == 0:
            self.assertLess(time.monotonic(), deadline, "the JobSet was not deleted")
            time.sleep(0.5)

    def test_03_each_side_used_its_own_identity(self):
        events = self.sim.audit()
        operator = [e for e in events if e.get("userAgent") == "aiperf-node/operator"]
        self.assertTrue(operator)
        self.assertEqual({e["user"]["username"] for e in operator}, {OPERATOR_SA})
        creates = {e["objectRef"]["resource"] for e in operator
                   if e["verb"] == "create" and e["objectRef"].get("namespace") == NS}
        self.assertTrue({"roles", "rolebindings", "configmaps", "jobsets"} <= creates, creates)
        pushes = [e for e in events if e.get("userAgent") == "aiperf-node/controller"
                  and e["objectRef"].get("resource") == "aiperfjobs"]
        self.assertTrue(pushes)
        self.assertEqual({e["user"]["username"] for e in pushes},
                         {"system:serviceaccount:%s:default" % NS})
        self.assertEqual({e["verb"] for e in pushes} - {"get", "list", "watch"}, {"patch"})

    def test_04_a_spec_aiperf_node_cannot_run_fails_at_once(self):
        self.submit("bad", 5, edit=lambda t: t.replace(
            "      urls:", "      type: nim_rankings\n      urls:", 1))
        status = self.wait_phase("bad", {"Failed"}, 30)
        cond = {c["type"]: c for c in status["conditions"]}
        self.assertEqual(cond["ConfigValid"]["status"], "False")
        self.assertTrue(cond["ConfigValid"]["message"].startswith("spec.benchmark.endpoint.type: "),
                        cond["ConfigValid"]["message"])
        described = self.sim.kubectl_ok("describe", "aiperfjob", "bad", "-n", NS).stdout
        self.assertIn("SpecInvalid", described)
        self.assertIn("Warning", described)
        self.assertNotEqual(self.sim.kubectl("get", "jobset", "aiperf-bad", "-n", NS).returncode, 0)

    def test_05_cancel_ends_the_job_and_deletes_its_jobset(self):
        self.submit("long", 100000)
        self.wait_phase("long", {"Initializing", "Running"}, 60)
        self.sim.kubectl_ok("patch", "aiperfjob", "long", "-n", NS, "--type=merge",
                            "-p", '{"spec":{"cancel":true}}')
        status = self.wait_phase("long", {"Cancelled"}, 30)
        self.assertEqual(status["observedGeneration"], 2)
        self.assertNotEqual(self.sim.kubectl("get", "jobset", "aiperf-long", "-n", NS).returncode,
                            0)

    def test_06_kube_profile_submits_and_follows_an_aiperfjob(self):
        args = generate_args("cli", 10)
        args[0:2] = ["profile", "--operator", "--no-detach"]
        r = self.sim.kube(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines()[0],
                         "aiperfjob.aiperf.nvidia.com/cli created in bench (operator mode)")
        self.assertIn("job: Completed", r.stderr)
        self.assertRegex(r.stdout, r"request_count\s+10 ")
        self.assertIn("results stored by the operator in /data/bench/cli/", r.stdout)
        with open(os.path.join(self.sim.home, ".aiperf", "last_kube_benchmark.json")) as f:
            self.assertEqual(json.load(f), {"name": "cli", "namespace": NS, "mode": "operator"})

    def test_07_a_killed_controller_fails_the_job_naming_it(self):
        self.submit("killed", 100000)
        self.wait_phase("killed", {"Running"}, 90)
        pods = self.sim.kubectl_json(
            "get", "pods", "-n", NS, "-l",
            "jobset.sigs.k8s.io/jobset-name=aiperf-killed,"
            "jobset.sigs.k8s.io/replicatedjob-name=controller")["items"]
        self.assertEqual(len(pods), 1, pods)
        pod = pods[0]["metadata"]["name"]
        self.sim.ctl("pods", "kill", "-n", NS, pod, "--signal", "KILL")
        status = self.wait_phase("killed", {"Failed"}, 60)
        self.assertTrue(status["error"].startswith(
            "controller pod %s: container exited with code 137" % pod), status["error"])
        described = self.sim.kubectl_ok("describe", "aiperfjob", "killed", "-n", NS).stdout
        self.assertIn("ControllerTerminated", described)

    def operator_with(self, **env):
        """Sets env on the operator Deployment; waits for its new pod to be Ready."""
        self.sim.kubectl_ok("set", "env", "deployment/aiperf-operator", "-n", "aiperf-system",
                            *["%s=%s" % kv for kv in env.items()])
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            pods = self.sim.kubectl_json("get", "pods", "-n", "aiperf-system")["items"]
            for p in pods:
                names = {e["name"] for e in p["spec"]["containers"][0].get("env", [])}
                ready = any(c["type"] == "Ready" and c["status"] == "True"
                            for c in p.get("status", {}).get("conditions", []))
                if set(env) <= names and ready and "deletionTimestamp" not in p["metadata"]:
                    return
            time.sleep(0.5)
        self.fail("the operator did not restart with %s" % env)

    def test_08_a_pod_that_cannot_pull_fails_after_the_critical_threshold(self):
        # Lowered thresholds; the operator restarts with them (Recreate).
        self.operator_with(AIPERF_K8S_WATCHDOG_PENDING_THRESHOLD_SECONDS="1",
                           AIPERF_K8S_WATCHDOG_PENDING_CRITICAL_THRESHOLD_SECONDS="4")
        self.submit("nopull", 10, edit=lambda t: t.replace("image: aiperf-node:dev",
                                                           "image: registry.invalid/nope:1"))
        status = self.wait_phase("nopull", {"Failed"}, 90)
        self.assertRegex(status["error"], r"^pod aiperf-nopull-\S+ container \S+: "
                                          r"(ImagePullBackOff|ErrImagePull).*\(unchanged for 4 s\)$")
        self.assertEqual(status["startupIssue"]["category"], "ImagePull")
        described = self.sim.kubectl_ok("describe", "aiperfjob", "nopull", "-n", NS).stdout
        self.assertIn("StartupBlocked", described)
        self.assertIn("StartupFailed", described)
        self.assertNotEqual(self.sim.kubectl("get", "jobset", "aiperf-nopull", "-n", NS).returncode,
                            0)

    def test_09_kube_list_cancel_and_delete_act_on_aiperfjobs(self):
        self.submit("viacli", 100000)
        self.wait_phase("viacli", {"Initializing", "Running"}, 60)
        r = self.sim.kube("list", "-n", NS)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = {l.split()[0]: l.split()[2] for l in r.stdout.splitlines()[1:]}
        self.assertEqual(rows["op1"], "Completed")
        self.assertEqual(rows["bad"], "Failed")
        self.assertIn(rows["viacli"], {"Initializing", "Running"})
        self.assertNotIn("aiperf-viacli", rows)  # its JobSet is the AIPerfJob's
        r = self.sim.kube("cancel", "viacli", "-n", NS)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("aiperfjob.aiperf.nvidia.com/viacli cancel requested", r.stdout)
        self.assertEqual(self.wait_phase("viacli", {"Cancelled"}, 60)["phase"], "Cancelled")
        r = self.sim.kube("delete", "viacli", "-n", NS, "--timeout", "60")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("aiperfjobs/viacli deleted", r.stdout)
        self.assertNotEqual(self.sim.kubectl("get", "aiperfjob", "viacli", "-n", NS).returncode, 0)
        left = self.sim.kubectl_ok("get", "configmaps,roles,rolebindings", "-n", NS, "-o", "name",
                                   "-l", "aiperf.nvidia.com/job-id=viacli").stdout.split()
        self.assertEqual(left, [])

    def test_10_metrics_count_reconciles_and_requests(self):
        pod = [n for n, (ready, _) in self.operator_pods().items() if ready][0]
        text = self.sim.kubectl_ok(
            "get", "--raw",
            "/api/v1/namespaces/aiperf-system/pods/%s:9090/proxy/metrics" % pod).stdout
        samples = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                samples[name] = float(value)
        self.assertGreater(samples['aiperf_operator_reconciles_total{result="success"}'], 0)
        self.assertEqual(samples["aiperf_operator_leader"], 1)
        self.assertIn('aiperf_operator_workqueue_depth{name="aiperfjobs"}', samples)
        patches = [v for k, v in samples.items()
                   if k.startswith('aiperf_k8s_client_requests_total{verb="patch",'
                                   'resource="aiperfjobs/status",code="200"')]
        self.assertTrue(patches and patches[0] > 0, text)

    def test_11_the_same_name_run_twice_lands_in_two_epochs(self):
        epochs = []
        for attempt in range(2):
            self.submit("twice", 10)
            r = self.sim.kubectl("wait", "--for=condition=Complete", "aiperfjob/twice", "-n", NS,
                                 "--timeout=180s")
            self.assertEqual(r.returncode, 0, r.stderr)
            epochs.append(str(self.job("twice")["status"]["runEpoch"]))
            if attempt == 0:
                # Deleted and submitted again at once: a new UID, a new epoch.
                self.sim.kubectl_ok("delete", "aiperfjob", "twice", "-n", NS, "--wait=true")
        self.assertNotEqual(epochs[0], epochs[1])
        listed = self.sim.kube("results", "list-runs", "twice", "-n", NS, "-o", "json")
        self.assertEqual(listed.returncode, 0, listed.stderr)
        runs = json.loads(listed.stdout)
        self.assertEqual(sorted(x["epoch"] for x in runs["runs"]), sorted(epochs))
        self.assertEqual(runs["latest_epoch"], epochs[1])  # the later store, even in one second
        for epoch in epochs:
            out = os.path.join(self.tmp.name, "twice-" + epoch)
            r = self.sim.kube("results", "twice", "-n", NS, "--run", epoch, "--output", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(out, "profile_export_aiperf.json")) as f:
                self.assertEqual(json.load(f)["request_count"]["avg"], 10)

    def operator_pods(self):
        pods = self.sim.kubectl_json("get", "pods", "-n", "aiperf-system", "-l",
                                     "app.kubernetes.io/component=operator")["items"]
        out = {}
        for p in pods:
            if "deletionTimestamp" in p["metadata"] or p["status"].get("phase") != "Running":
                continue
            ready = any(c["type"] == "Ready" and c["status"] == "True"
                        for c in p["status"].get("conditions", []))
            out[p["metadata"]["name"]] = (ready, p["status"].get("podIP"))
        return out

    def lease(self):
        return self.sim.kubectl_json("get", "lease", "aiperf-operator-leader",
                                     "-n", "aiperf-system")["spec"]

    def wait_one_leader(self, other_than=None, seconds=90):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            pods = self.operator_pods()
            ready = [n for n, (r, _) in pods.items() if r]
            if len(pods) == 2 and len(ready) == 1 and ready[0] != other_than:
                if self.lease().get("holderIdentity") == ready[0]:
                    return ready[0], pods
            time.sleep(0.5)
        self.fail("no single leader: pods %s, lease %s" % (self.operator_pods(), self.lease()))

    def test_12_the_standby_takes_over_when_the_leader_goes(self):
        leader, pods = self.wait_one_leader()
        transitions = self.lease().get("leaseTransitions", 0)
        args = generate_args("handover", 10)
        i = args.index("--request-count")
        args[i:i + 2] = ["--benchmark-duration", "25"]
        gen = self.sim.kube(*args)
        self.assertEqual(gen.returncode, 0, gen.stderr)
        path = os.path.join(self.tmp.name, "handover.yaml")
        with open(path, "w") as f:
            f.write(gen.stdout)
        self.sim.kubectl_ok("apply", "-f", path)
        self.assertEqual(self.wait_phase("handover", {"Running"}, 90)["phase"], "Running")
        # kubectl delete: SIGTERM, the leader stops writing and releases the Lease.
        self.sim.kubectl_ok("delete", "pod", leader, "-n", "aiperf-system", "--wait=false")
        successor, pods = self.wait_one_leader(other_than=leader, seconds=60)
        self.assertNotEqual(successor, leader)
        self.assertEqual(self.lease()["leaseTransitions"], transitions + 1)
        status = self.wait_phase("handover", {"Completed", "Failed"}, 120)
        self.assertEqual(status["phase"], "Completed", json.dumps(status)[:2000])
        self.assertEqual(status["exitCode"], 0)
        self.assertTrue(status["resultsPath"].startswith("/data/bench/handover/"))
        # The new leader claimed and completed it: the claim came from its pod.
        claims = [e for e in self.sim.audit()
                  if e.get("userAgent") == "aiperf-node/operator" and e["verb"] == "patch"
                  and e["objectRef"].get("name") == "handover"
                  and e["objectRef"].get("resource") == "aiperfjobs"
                  and "subresource" not in e["objectRef"]
                  and e["responseStatus"]["code"] == 200]
        self.assertTrue(claims)
        self.assertEqual(claims[-1]["sourceIPs"], [pods[successor][1]])


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    NODE_BIN = os.path.abspath(sys.argv.pop(1))
    require_root_and_kubectl()
    unittest.main(verbosity=2)
