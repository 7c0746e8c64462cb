#!/usr/bin/python3
"""`aiperf-node kube generate` output applied by the real kubectl.

Usage: generate_apply.py path/to/aiperf-node [unittest args]

Against `aiperf-node sim-cluster --tls --workloads` (which serves the JobSet
CRD): `kube generate --no-operator ... | kubectl apply --dry-run=server -f -`
and then the real `kubectl apply -f -` succeed for all four objects, which
`kubectl get` then finds in the namespace given; no secret value is in the
output. The same for `--operator` once k8s/deploy/crds holds the AIPerfJob
CRD (installed with kubectl first); without it that half is skipped, saying
so. The pods' image is one the simulator cannot pull, so no pod process runs.

Needs root (the simulator's pod sandbox), kubectl and PyYAML. Exits 77
(ctest: skipped) when one is missing; with CI=true that is a failure instead.
"""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "..", "support"))
from sim_cluster import KUBECTL, SimCluster, skip_or_fail  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
AIPERFJOB_CRD = os.path.join(REPO, "k8s", "deploy", "crds", "aiperfjobs.aiperf.nvidia.com.yaml")
NODE_BIN = None
NS = "bench"
SECRETS = ["sk-do-not-leak", "bearer-do-not-leak"]

try:
    import yaml
except ImportError:
    yaml = None


def generate(sim, mode, name):
    args = [NODE_BIN, "kube", "generate", mode, "--name", name, "-n", NS,
            "--image", "registry.invalid/no-such-image:1",
            "-m", "Qwen", "-u", "http://llm:8000", "--concurrency", "4",
            "--api-key", "sk-do-not-leak", "-H", "Authorization: Bearer bearer-do-not-leak",
            "--env-from-secrets.OPENAI_API_KEY", "llm-api-key/api-key",
            "--env-from-secrets", "AIPERF_INJECTED_HEADERS=llm-headers/headers",
            "--env-from-secrets", '{"LLM_TOKEN":"llm-api-key/api-key"}',
            "--labels.team", "perf", "--annotations", "note=generated",
            "--env-vars.LOG_FORMAT", "json", "--node-selector.kubernetes.io/os", "linux",
            "--tolerations", '{"key":"gpu","operator":"Exists","effect":"NoSchedule"}',
            "--secret-mounts", '{"name":"hf-token","mount_path":"/secrets/hf"}',
            "--total-workers", "20", "--workers-per-pod", "10", "--ttl-seconds", "600"]
    r = sim.run(args)
    if r.returncode != 0:
        raise AssertionError("kube generate %s failed (%d): %s" % (mode, r.returncode, r.stderr))
    for s in SECRETS:
        if s in r.stdout or s in r.stderr:
            raise AssertionError("kube generate %s printed the secret %s" % (mode, s))
    return r.stdout


class Apply(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.sim = SimCluster(cls.tmp.name, NODE_BIN, workloads=True)
        cls.sim.kubectl_ok("create", "namespace", NS)

    @classmethod
    def tearDownClass(cls):
        try:
            cls.sim.stop_ok()
        finally:
            cls.tmp.cleanup()

    def apply(self, text, count):
        r = self.sim.kubectl("apply", "--dry-run=server", "-f", "-", stdin=text)
        self.assertEqual(r.returncode, 0, r.stderr + "\nsimulator log:\n" + self.sim.log())
        self.assertEqual(r.stdout.count("(server dry run)"), count, r.stdout)
        r = self.sim.kubectl("apply", "-f", "-", stdin=text)
        self.assertEqual(r.returncode, 0, r.stderr + "\nsimulator log:\n" + self.sim.log())
        self.assertEqual(r.stdout.count(" created"), count, r.stdout)

    def test_direct_mode_objects_apply(self):
        text = generate(self.sim, "--no-operator", "gen")
        docs = [d for d in yaml.safe_load_all(text) if d]
        self.assertEqual([d["kind"] for d in docs], ["Role", "RoleBinding", "ConfigMap", "JobSet"])
        self.assertTrue(all(d["metadata"]["namespace"] == NS for d in docs))
        self.apply(text, 4)
        for ref in ("role/aiperf-gen-role", "rolebinding/aiperf-gen-binding",
                    "configmap/aiperf-gen-config", "jobset.jobset.x-k8s.io/aiperf-gen"):
            r = self.sim.kubectl("get", "-n", NS, ref, "-o", "name")
            self.assertEqual(r.returncode, 0, ref + ": " + r.stderr)
        r = self.sim.kubectl("get", "-n", NS, "configmap/aiperf-gen-config", "-o", "yaml")
        for s in SECRETS:
            self.assertNotIn(s, r.stdout)

    def test_operator_mode_aiperfjob_applies(self):
        if not os.path.exists(AIPERFJOB_CRD):
            self.skipTest("k8s/deploy/crds/aiperfjobs.aiperf.nvidia.com.yaml does not exist yet; "
                          "the AIPerfJob half runs once the CRD files are generated")
        r = self.sim.kubectl("apply", "-f", AIPERFJOB_CRD)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.sim.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                             "crd/aiperfjobs.aiperf.nvidia.com")
        self.assertEqual(r.returncode, 0, r.stderr)
        text = generate(self.sim, "--operator", "genop")
        docs = [d for d in yaml.safe_load_all(text) if d]
        self.assertEqual([d["kind"] for d in docs], ["AIPerfJob"])
        self.apply(text, 1)
        r = self.sim.kubectl("get", "-n", NS, "aiperfjob/genop", "-o", "name")
        self.assertEqual(r.returncode, 0, r.stderr)


def main():
    global NODE_BIN
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    NODE_BIN = os.path.abspath(sys.argv[1])
    if yaml is None:
        skip_or_fail("PyYAML (python3-yaml) is not installed")
    if not os.access(KUBECTL, os.X_OK):
        skip_or_fail("kubectl is not installed")
    if os.geteuid() != 0:
        skip_or_fail("sim-cluster --workloads needs root (network and PID namespaces)")
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(Apply)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
