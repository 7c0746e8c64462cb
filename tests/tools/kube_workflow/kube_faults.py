#!/usr/bin/python3
"""Direct-mode runs on a simulated cluster when things go wrong, and what a
correct run must match.

Usage: kube_faults.py path/to/aiperf-node path/to/aiperf-node-test [unittest args]

One `aiperf-node sim-cluster --tls --workloads` for the file; the namespace
enforces the `restricted` Pod Security level, so every run also shows that
our pods (and the example mock server) pass it. Each run is
`kube profile --no-detach` over a controller pod and 2 worker pods against
the mock server of k8s/deploy/examples/mock-server.yaml (with its access
log on stdout):

- a correct run's exports match a local `profile` of the same seed against
  a local mock server (request count, ISL, OSL, the set of metrics), and
  the mock's access log shows requests from each worker pod's IP;
- with every worker pod's clock shifted by 10 minutes (the test executable's
  seam, AIPERF_TEST_CLOCK_SKEW_NS), each pod's exported offset estimate is
  the skew within 0.5 ms, and every record's corrected start time lies
  within the wall-clock window the run took;
- an image that cannot be pulled: the CLI names ImagePullBackOff and exits 1
  instead of waiting;
- losing one of the 2 worker pods mid-run, by SIGKILL of its process (the
  container restarts in place), by deleting the pod, or by a 20 s network
  cut: within the default abort threshold (50 %) the run completes degraded
  (exit 5), with a 10 % threshold it aborts (exit 6); the export names the
  lost pod, and the JobSet does not fail (no worker Job used up its
  backoffLimit).

Needs root (the simulator's pod sandbox) and kubectl. Exits 77 (ctest:
skipped) when one is missing; with CI=true that is a failure instead.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "support"))
from sim_cluster import SimCluster, require_root_and_kubectl  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
MOCK_YAML = os.path.join(REPO, "k8s", "deploy", "examples", "mock-server.yaml")
NODE_BIN = None
TEST_BIN = None
NS = "bench"
MOCK_URL = "http://mock.%s.svc.cluster.local:8000" % NS
SEED = "5"
SKEW_NS = 600 * 1000 * 1000 * 1000  # 10 minutes


def run_args(name, requests, extra=()):
    return ["profile", "--no-operator", "--no-detach", "--name", name, "-n", NS,
            "--image", "aiperf-node:dev", "-m", "mock-model", "-u", MOCK_URL,
            "--total-workers", "4", "--workers-per-pod", "2",
            "--request-count", str(requests), "--concurrency", "4",
            "--isl", "64", "--osl", "40", "--random-seed", SEED, *extra]


class Faults(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.sim = SimCluster(cls.tmp.name, NODE_BIN, workloads=True, extra_args=[
            "--backoff-scale", "0.1", "--image-map", "aiperf-node-test:dev=" + TEST_BIN])
        cls.sim.kubectl_ok("create", "namespace", NS)
        cls.sim.kubectl_ok("label", "namespace", NS, "pod-security.kubernetes.io/enforce=restricted")
        cls.sim.kubectl_ok("apply", "-n", NS, "-f", MOCK_YAML)

    @classmethod
    def tearDownClass(cls):
        try:
            cls.sim.stop_ok()
        finally:
            cls.tmp.cleanup()

    # -- helpers ---------------------------------------------------------------

    def pods_of(self, name, role):
        """The run's pods of one replicated job, by job index."""
        items = self.sim.kubectl_json("get", "pods", "-n", NS, "-l",
                                      "jobset.sigs.k8s.io/jobset-name=aiperf-" + name)["items"]
        prefix = "aiperf-%s-%s-" % (name, role)
        return sorted((p for p in items if p["metadata"]["name"].startswith(prefix)
                       and p["metadata"].get("deletionTimestamp") is None),
                      key=lambda p: p["metadata"]["name"])

    def progress(self, name):
        ctl = self.pods_of(name, "controller")
        if not ctl or ctl[0]["status"].get("phase") != "Running":
            return None
        r = self.sim.kubectl("get", "--raw", "/api/v1/namespaces/%s/pods/%s:9090/proxy/api/progress"
                             % (NS, ctl[0]["metadata"]["name"]))
        return json.loads(r.stdout) if r.returncode == 0 else None

    def wait_until_profiling(self, name, proc, completed):
        """Until the run's profiling phase completed `completed` requests."""
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self.fail("kube profile ended early: %s" % (proc.communicate(),))
            p = self.progress(name)
            if p and p["phase"] == "profiling" and p["requests_completed"] >= completed:
                return
            time.sleep(0.2)
        self.fail("%s never reached %d completed requests; sim log:\n%s"
                  % (name, completed, self.sim.log()))

    def finish(self, proc, timeout=150):
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            self.fail("kube profile did not end within %d s: %s\nsim log:\n%s"
                      % (timeout, err, self.sim.log()))
        return proc.returncode, out, err

    def export(self, name, file="profile_export_aiperf.json"):
        with open(os.path.join(self.sim.cwd, "artifacts", name, file)) as f:
            return json.load(f) if file.endswith(".json") else [json.loads(l) for l in f if l.strip()]

    def lost_pods(self, name):
        return [p["name"] for p in self.export(name).get("pods", []) if p.get("lost")]

    def assert_jobset_did_not_fail(self, name):
        js = self.sim.kubectl_json("get", "jobset", "-n", NS, "aiperf-" + name)
        failed = [c for c in js.get("status", {}).get("conditions", [])
                  if c.get("type") == "Failed" and c.get("status") == "True"]
        self.assertEqual(failed, [], js.get("status"))
        jobs = self.sim.kubectl_json("get", "jobs", "-n", NS, "-l",
                                     "jobset.sigs.k8s.io/jobset-name=aiperf-" + name)["items"]
        for job in jobs:
            self.assertLess(job.get("status", {}).get("failed", 0), job["spec"]["backoffLimit"] + 1,
                            job["metadata"]["name"])

    def delete(self, name):
        r = self.sim.kube("delete", name, "-n", NS, timeout=90)
        self.assertEqual(r.returncode, 0, r.stderr)

    # -- a correct run -----------------------------------------------------------

    def test_1_a_run_matches_a_local_run_and_reaches_the_mock_from_every_worker_pod(self):
        name = "match"
        code, out, err = self.finish(self.sim.popen([NODE_BIN, "kube", *run_args(name, 24)]))
        self.assertEqual(code, 0, err + "\nsim log:\n" + self.sim.log())
        workers = self.pods_of(name, "workers")
        worker_ips = {p["status"]["podIP"] for p in workers}
        self.assertEqual(len(worker_ips), 2, workers)
        cluster = self.export(name)

        local_dir = os.path.join(self.tmp.name, "local")
        mock = subprocess.Popen([NODE_BIN, "mock-server", "-p", "0"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
        try:
            url = re.search(r"(http://\S+)", mock.stdout.readline()).group(1)
            r = subprocess.run([NODE_BIN, "profile", "--ui", "none", "-m", "mock-model", "-u", url,
                                "--request-count", "24", "--concurrency", "4", "--isl", "64",
                                "--osl", "40", "--random-seed", SEED,
                                "--output-artifact-dir", local_dir],
                               capture_output=True, text=True, timeout=120)
        finally:
            mock.terminate()
            mock.wait(timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        runs = [d for d in os.listdir(local_dir) if os.path.isdir(os.path.join(local_dir, d))]
        with open(os.path.join(local_dir, runs[0], "profile_export_aiperf.json")) as f:
            local = json.load(f)

        def metrics(export):
            return {k for k, v in export.items() if isinstance(v, dict) and "unit" in v}

        self.assertEqual(metrics(cluster), metrics(local))
        for key in ("request_count", "input_sequence_length", "output_sequence_length"):
            for stat in ("avg", "min", "max"):
                if stat in local[key]:
                    self.assertEqual(cluster[key][stat], local[key][stat], key)
        self.assertEqual(cluster["request_count"]["avg"], 24)

        mock_pod = self.sim.kubectl_json("get", "pods", "-n", NS, "-l", "app.kubernetes.io/name=mock")["items"][0]
        logs = self.sim.kubectl("logs", "-n", NS, mock_pod["metadata"]["name"])
        self.assertEqual(logs.returncode, 0, logs.stderr)
        clients = {}
        for line in logs.stdout.splitlines():
            m = re.match(r'^(\S+) - - \[[^\]]+\] "POST /v1/chat/completions HTTP/1\.1" (\d{3}) -$',
                         line)
            if m:
                clients[m.group(1)] = clients.get(m.group(1), 0) + 1
        for ip in worker_ips:
            self.assertGreater(clients.get(ip, 0), 0, (ip, clients))
        self.assertEqual(sum(clients[ip] for ip in worker_ips), 24, clients)
        self.delete(name)

    def test_2_a_skewed_worker_clock_is_corrected(self):
        name = "skew"
        before_ns = time.time_ns()
        args = run_args(name, 40, ["--env-vars.AIPERF_TEST_CLOCK_SKEW_NS", str(SKEW_NS)])
        args[args.index("aiperf-node:dev")] = "aiperf-node-test:dev"
        code, out, err = self.finish(self.sim.popen([NODE_BIN, "kube", *args]))
        after_ns = time.time_ns()
        self.assertEqual(code, 0, err + "\nsim log:\n" + self.sim.log())
        pods = [p for p in self.export(name)["pods"]]
        self.assertEqual(len(pods), 2, pods)
        for p in pods:
            offset = p["clock"]["offset_ns"]
            print("%s: clock offset estimate %d ns (injected %d ns)" % (p["name"], offset, SKEW_NS))
            self.assertLess(abs(offset - SKEW_NS), 500_000, p)
        records = self.export(name, "profile_export.jsonl")
        self.assertEqual(len(records), 40)
        for rec in records:
            start = rec["metadata"]["request_start_ns"]
            self.assertTrue(before_ns <= start <= after_ns, (before_ns, start, after_ns))
        self.delete(name)

    # -- failures ----------------------------------------------------------------

    def test_3_an_image_that_cannot_be_pulled_is_named_not_waited_for(self):
        name = "nopull"
        args = run_args(name, 10)
        args[args.index("aiperf-node:dev")] = "registry.invalid/nope:1"
        code, out, err = self.finish(self.sim.popen([NODE_BIN, "kube", *args]), timeout=90)
        self.assertEqual(code, 1, err)
        self.assertRegex(err, r"container \S+: (ImagePullBackOff|ErrImagePull)")
        self.assertIn("aiperf-node kube delete nopull -n bench", err)
        self.delete(name)

    def lose_a_worker(self, name, how, threshold=None):
        extra = []
        if threshold is not None:
            extra = ["--env-vars.AIPERF_POD_FAILURE_ABORT_THRESHOLD_PERCENT", str(threshold)]
        proc = self.sim.popen([NODE_BIN, "kube", *run_args(name, 160, extra)])
        self.wait_until_profiling(name, proc, 12)
        victim = self.pods_of(name, "workers")[1]["metadata"]["name"]
        if how == "kill":
            r = self.sim.ctl("pods", "kill", "-n", NS, victim, "--signal", "KILL")
        elif how == "delete":
            r = self.sim.kubectl("delete", "pod", "-n", NS, victim, "--wait=false")
        else:
            r = self.sim.ctl("pods", "partition", "-n", NS, victim, "--seconds", "20")
        self.assertEqual(r.returncode, 0, r.stderr)
        code, out, err = self.finish(proc)
        return code, err

    def check_loss(self, name, how, threshold, expected_code):
        code, err = self.lose_a_worker(name, how, threshold)
        self.assertEqual(code, expected_code, err + "\nsim log:\n" + self.sim.log())
        self.assertEqual(self.lost_pods(name), ["pod1"])
        self.assert_jobset_did_not_fail(name)
        self.delete(name)

    def test_4_a_killed_worker_process_degrades_the_run(self):
        self.check_loss("kill5", "kill", None, 5)

    def test_5_a_killed_worker_process_above_the_threshold_aborts(self):
        self.check_loss("kill6", "kill", 10, 6)

    def test_6_a_deleted_worker_pod_degrades_the_run(self):
        self.check_loss("del5", "delete", None, 5)

    def test_7_a_deleted_worker_pod_above_the_threshold_aborts(self):
        self.check_loss("del6", "delete", 10, 6)

    def test_8_a_cut_off_worker_pod_degrades_the_run(self):
        self.check_loss("cut5", "partition", None, 5)

    def test_9_a_cut_off_worker_pod_above_the_threshold_aborts(self):
        self.check_loss("cut6", "partition", 10, 6)


def main():
    global NODE_BIN, TEST_BIN
    if len(sys.argv) < 3:
        print("usage: kube_faults.py path/to/aiperf-node path/to/aiperf-node-test "
              "[unittest args]", file=sys.stderr)
        sys.exit(2)
    NODE_BIN = os.path.abspath(sys.argv.pop(1))
    TEST_BIN = os.path.abspath(sys.argv.pop(1))
    require_root_and_kubectl()
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
