#!/usr/bin/python3
"""`aiperf-node kube profile --no-operator` and friends on a simulated cluster.

Usage: kube_direct.py path/to/aiperf-node [unittest args]

One `aiperf-node sim-cluster --tls --workloads --audit-log FILE` for the
file (checks run in the order of their names), the mock server from
k8s/deploy/examples/mock-server.yaml, and the CLI under test:

- a missing namespace is exit 2 with the fix, and nothing is created;
- `kube profile` (stdout not a terminal, so it detaches with a warning)
  prints AIPerf's first line, creates the Role, RoleBinding, ConfigMap and
  JobSet labelled with the job id, writes ~/.aiperf/last_kube_benchmark.json,
  and refuses a second run of the same name naming the object;
- `kube results --from-pods` reaches the controller pod only through the
  API server: the audit log shows pods/proxy requests to its results API
  from the CLI's user agent (the CLI never dials a pod address);
- `kube profile --no-detach` follows a run of 2 worker pods to its end,
  downloads the exports (20 requests) and exits 0, the run's code;
- `kube logs` prefixes every line with pod/container, `kube list` shows the
  run, and `kube delete` (no name: the last benchmark) returns when no
  labelled object and no pod of the run remains.

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
MOCK_YAML = os.path.join(REPO, "k8s", "deploy", "examples", "mock-server.yaml")
NODE_BIN = None
NS = "bench"
JOB = "e2e"
LABEL = "aiperf.nvidia.com/job-id=" + JOB


def profile_args(name, ns):
    return ["profile", "--no-operator", "--name", name, "-n", ns, "--image", "aiperf-node:dev",
            "-m", "mock-model", "-u", "http://mock.%s.svc.cluster.local:8000" % NS,
            "--total-workers", "2", "--workers-per-pod", "1", "--request-count", "20",
            "--concurrency", "2"]


class Direct(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.sim = SimCluster(cls.tmp.name, NODE_BIN, workloads=True, audit=True,
                             extra_args=["--backoff-scale", "0.1"])
        cls.sim.kubectl_ok("create", "namespace", NS)
        cls.sim.kubectl_ok("apply", "-n", NS, "-f", MOCK_YAML)

    @classmethod
    def tearDownClass(cls):
        try:
            cls.sim.stop_ok()
        finally:
            cls.tmp.cleanup()

    def labelled(self, kinds="jobsets,configmaps,roles,rolebindings"):
        r = self.sim.kubectl("get", kinds, "-n", NS, "-l", LABEL, "-o", "name")
        self.assertEqual(r.returncode, 0, r.stderr)
        return sorted(r.stdout.split())

    def test_1_a_missing_namespace_is_exit_2_and_creates_nothing(self):
        r = self.sim.kube(*profile_args(JOB, "nope"))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn('namespace "nope" not found: create it (kubectl create namespace nope) '
                      "or pass --namespace", r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertNotEqual(self.sim.kubectl("get", "namespace", "nope").returncode, 0)
        r = self.sim.kube("results", JOB, "--from-pods", "-n", "nope")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn('namespace "nope" not found', r.stderr)

    def test_2_profile_creates_the_four_objects_and_remembers_the_run(self):
        r = self.sim.kube(*profile_args(JOB, NS))
        self.assertEqual(r.returncode, 0, r.stderr + "\nsim log:\n" + self.sim.log())
        self.assertEqual(r.stdout.splitlines()[0],
                         "jobset.jobset.x-k8s.io/aiperf-e2e created in bench (direct mode)")
        self.assertIn("--no-detach", r.stderr)  # detached: stdout is a pipe
        self.assertEqual(self.labelled(), [
            "configmap/aiperf-e2e-config",
            "jobset.jobset.x-k8s.io/aiperf-e2e",
            "role.rbac.authorization.k8s.io/aiperf-e2e-role",
            "rolebinding.rbac.authorization.k8s.io/aiperf-e2e-binding"])
        with open(os.path.join(self.sim.home, ".aiperf", "last_kube_benchmark.json")) as f:
            self.assertEqual(json.load(f), {"name": JOB, "namespace": NS, "mode": "direct"})
        again = self.sim.kube(*profile_args(JOB, NS))
        self.assertEqual(again.returncode, 1, again.stderr)
        self.assertIn("role.rbac.authorization.k8s.io/aiperf-e2e-role already exists in bench",
                      again.stderr)

    def test_3_results_come_through_the_pods_proxy(self):
        # Until the controller pod runs, the proxy answers an error; then the
        # results API answers (files once the run exported, else none yet).
        deadline = time.monotonic() + 40
        while True:
            r = self.sim.kube("results", "--from-pods", "--output", "out")
            if r.returncode == 0 or "lists no results yet" in r.stderr:
                break
            if time.monotonic() > deadline:
                self.fail("kube results never reached the results API: %s\nsim log:\n%s"
                          % (r.stderr, self.sim.log()))
            time.sleep(0.5)
        proxied = [e for e in self.sim.audit()
                   if e.get("objectRef", {}).get("subresource") == "proxy"
                   and e.get("objectRef", {}).get("resource") == "pods"
                   and e.get("userAgent") == "aiperf-node/kube"]
        self.assertTrue(proxied, "no pods/proxy request in the audit log")
        answered = [e for e in proxied if e["responseStatus"]["code"] == 200]
        self.assertTrue(answered, [e["requestURI"] for e in proxied])
        for e in answered:
            self.assertRegex(e["requestURI"],
                             r"^/api/v1/namespaces/bench/pods/aiperf-e2e-controller-0-0-[a-z0-9]+"
                             r":909[01]/proxy/api/results/")
        if r.returncode == 0:
            files = [f for f in os.listdir(os.path.join(self.sim.cwd, "out"))]
            self.assertTrue(files)
            got = [e for e in answered if "/proxy/api/results/files/" in e["requestURI"]]
            self.assertEqual(len(got), len(files))

    def test_4_logs_are_prefixed_by_pod_and_container(self):
        r = self.sim.kube("logs")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertTrue(lines, r.stderr)
        for line in lines:
            self.assertRegex(line, r"^\[aiperf-e2e-(controller|workers)-\d-0-[a-z0-9]+/"
                                   r"[a-z-]+\] ")
        self.assertTrue(any("/results-sidecar] " in l for l in lines), lines)

    def test_5_list_shows_the_run(self):
        r = self.sim.kube("list", "-n", NS)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0].split(), ["NAME", "NAMESPACE", "PHASE", "AGE"])
        self.assertEqual([l.split()[:2] for l in lines[1:]], [[JOB, NS]])

    def test_7_foreground_run_downloads_the_exports_and_exits_with_the_runs_code(self):
        name = "fg"
        r = self.sim.kube(*profile_args(name, NS), "--no-detach", timeout=100)
        self.assertEqual(r.returncode, 0, r.stderr + "\nsim log:\n" + self.sim.log())
        out = os.path.join(self.sim.cwd, "artifacts", name)
        with open(os.path.join(out, "profile_export_aiperf.json")) as f:
            export = json.load(f)
        self.assertEqual(export["request_count"]["avg"], 20, export["request_count"])
        for key in ("request_latency", "input_sequence_length", "output_sequence_length"):
            self.assertIn(key, export)
        # The console table a local run prints, rendered from the export.
        self.assertIn("aiperf-node | LLM Metrics", r.stdout)
        rows = [l for l in r.stdout.splitlines() if l.startswith("│ Request Count (requests)")]
        self.assertEqual(len(rows), 1, r.stdout)
        self.assertEqual(rows[0].split("│")[2].strip(), "20", rows[0])
        self.assertNotIn("Request Count (requests),20", r.stdout)
        self.assertEqual(self.sim.kube("delete", name, "-n", NS).returncode, 0)

    def test_8_a_local_input_file_travels_in_run_config(self):
        # The pods have no such path: the CLI embeds the file in
        # run_config.json (artifacts.user_files) and every pod writes it out.
        name = "files"
        path = os.path.join(self.tmp.name, "prompts.jsonl")
        with open(path, "w") as f:
            for _ in range(5):
                f.write('{"text": "alpha beta gamma delta"}\n')
        args = profile_args(name, NS)
        args[args.index("--request-count") + 1] = "5"
        r = self.sim.kube(*args, "--input-file", path, "--no-detach", timeout=100)
        self.assertEqual(r.returncode, 0, r.stderr + "\nsim log:\n" + self.sim.log())
        with open(os.path.join(self.sim.cwd, "artifacts", name, "profile_export_aiperf.json")) as f:
            export = json.load(f)
        self.assertEqual(export["request_count"]["avg"], 5, export["request_count"])
        isl = export["input_sequence_length"]
        # Five copies of one short line, not synthetic prompts.
        self.assertEqual(isl["min"], isl["max"], isl)
        self.assertLess(isl["avg"], 50, isl)
        cm = self.sim.kubectl("get", "configmap", "-n", NS, "aiperf-%s-config" % name,
                              "-o", "json")
        run_config = json.loads(json.loads(cm.stdout)["data"]["run_config.json"])
        files = run_config["artifacts"]["user_files"]
        self.assertEqual([(e["option"], e["name"]) for e in files],
                         [("input_file", "prompts.jsonl")])
        self.assertEqual(self.sim.kube("delete", name, "-n", NS).returncode, 0)

    def test_6_delete_leaves_no_labelled_object(self):
        r = self.sim.kube("delete")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("none left in bench", r.stdout)
        self.assertEqual(self.labelled(), [])
        pods = self.sim.kubectl("get", "pods", "-n", NS, "-o", "name", "-l",
                                "jobset.sigs.k8s.io/jobset-name=aiperf-" + JOB)
        self.assertEqual(pods.stdout.split(), [])
        r = self.sim.kube("list", "-n", NS)
        self.assertEqual(r.stdout.splitlines()[1:], [])


def main():
    global NODE_BIN
    if len(sys.argv) < 2:
        print("usage: kube_direct.py path/to/aiperf-node [unittest args]", file=sys.stderr)
        sys.exit(2)
    NODE_BIN = os.path.abspath(sys.argv.pop(1))
    require_root_and_kubectl()
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
