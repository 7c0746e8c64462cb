#!/usr/bin/python3
"""Checks of the install manifests (k8s/deploy) and the Dockerfile.

Usage: deploy_test.py {render|apply|crds|dockerfile} path/to/aiperf-node [unittest args]
       deploy_test.py update-golden path/to/aiperf-node

render      `kubectl kustomize k8s/deploy` equals the committed rendered.yaml, and
            the rendered objects have the shape the operator needs.
apply       rendered.yaml against `aiperf-node sim-cluster --tls`: server dry run,
            the real apply, then `kubectl get` finds every object.
crds        the CRD files alone against `aiperf-node sim-cluster --tls`: client-side
            and server-dry-run apply, Established, short names and the category,
            the printer columns, AIPerf's getting-started AIPerfJob, and an
            immutable field refused on update.
dockerfile  the Dockerfile's stages, images, non-root USER and ENTRYPOINT, and the
            runtime stage's packages cover every library the binary loads.

Exits 77 (ctest: skipped) when kubectl, dpkg or PyYAML is missing; with CI=true
that is a failure instead. While the CRD files are not in k8s/deploy/crds the
render and apply checks run without them and say so (and crds fails).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DEPLOY = os.path.join(ROOT, "k8s", "deploy")
GOLDEN = os.path.join(DEPLOY, "rendered.yaml")
DOCKERFILE = os.path.join(ROOT, "Dockerfile")
CRD_FILES = ["aiperfjobs.aiperf.nvidia.com.yaml", "aiperfsweeps.aiperf.nvidia.com.yaml"]
CRD_PATHS = [os.path.join(DEPLOY, "crds", f) for f in CRD_FILES]
GETTING_STARTED = os.path.join(ROOT, "tests", "config", "benchmark", "fixtures",
                               "aiperfjob_getting_started.yaml")
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "support"))
from sim_cluster import KUBECTL, SimCluster, skip_or_fail  # noqa: E402

NODE_BIN = None
NS = "aiperf-system"


try:
    import yaml
except ImportError:
    yaml = None


def missing_crds():
    return [f for f in CRD_FILES if not os.path.exists(os.path.join(DEPLOY, "crds", f))]


def render():
    """`kubectl kustomize k8s/deploy`; without the CRD files, of a copy whose
    crds base is empty, so the rest is still checked."""
    missing = missing_crds()
    with tempfile.TemporaryDirectory() as tmp:
        target = DEPLOY
        if missing:
            print("note: k8s/deploy/crds lacks %s; rendering without the CRDs" %
                  ", ".join(missing), file=sys.stderr)
            target = os.path.join(tmp, "deploy")
            shutil.copytree(DEPLOY, target)
            with open(os.path.join(target, "crds", "kustomization.yaml"), "w") as f:
                f.write("apiVersion: kustomize.config.k8s.io/v1beta1\n"
                        "kind: Kustomization\nresources: []\n")
        r = subprocess.run([KUBECTL, "kustomize", target], capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 0:
            raise AssertionError("kubectl kustomize k8s/deploy failed: " + r.stderr)
        return r.stdout


def golden_docs():
    with open(GOLDEN) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def find(docs, kind, name):
    for d in docs:
        if d["kind"] == kind and d["metadata"]["name"] == name:
            return d
    raise AssertionError("rendered.yaml has no %s %s" % (kind, name))


# The AIPerf operator's ClusterRole (deploy/helm/aiperf-operator/templates/clusterrole.yaml).
OPERATOR_RULES = [
    (["apiextensions.k8s.io"], ["customresourcedefinitions"], ["get", "list", "watch"]),
    (["aiperf.nvidia.com"], ["aiperfjobs", "aiperfjobs/status", "aiperfjobs/finalizers"],
     ["get", "list", "watch", "create", "update", "patch", "delete"]),
    (["aiperf.nvidia.com"], ["aiperfsweeps", "aiperfsweeps/status", "aiperfsweeps/finalizers"],
     ["get", "list", "watch", "create", "update", "patch", "delete"]),
    (["jobset.x-k8s.io"], ["jobsets"], ["create", "delete", "get", "list", "patch", "update", "watch"]),
    (["jobset.x-k8s.io"], ["jobsets/status"], ["get", "list", "watch"]),
    (["kueue.x-k8s.io"], ["localqueues"], ["get", "list"]),
    (["batch"], ["jobs"], ["get", "list", "watch"]),
    (["apps"], ["deployments"], ["get", "list", "watch"]),
    ([""], ["serviceaccounts"], ["get", "list", "watch", "create"]),
    ([""], ["resourcequotas"], ["get", "list"]),
    ([""], ["secrets"], ["get"]),
    (["networking.k8s.io"], ["networkpolicies"], ["get", "list", "watch"]),
    ([""], ["configmaps"], ["create", "delete", "get", "list", "patch", "update", "watch"]),
    ([""], ["services", "endpoints"], ["create", "delete", "get", "list", "watch"]),
    (["rbac.authorization.k8s.io"], ["roles", "rolebindings"], ["create", "delete", "get", "list", "watch"]),
    ([""], ["namespaces"], ["get", "list", "watch"]),
    ([""], ["pods", "pods/log"], ["get", "list", "watch"]),
    ([""], ["nodes"], ["get", "list"]),
    ([""], ["events"], ["get", "list", "watch", "create", "patch"]),
]


class Render(unittest.TestCase):
    def test_golden_is_kustomize_output(self):
        with open(GOLDEN) as f:
            golden = f.read()
        self.assertEqual(render(), golden,
                         "k8s/deploy/rendered.yaml is stale: regenerate it with "
                         "`kubectl kustomize k8s/deploy > k8s/deploy/rendered.yaml`")

    def test_golden_has_the_crds_once_they_exist(self):
        kinds = [d["kind"] for d in golden_docs()]
        want = 0 if missing_crds() else 2
        self.assertEqual(kinds.count("CustomResourceDefinition"), want)

    def test_golden_crds_are_the_committed_files(self):
        if missing_crds():
            self.skipTest("no CRD files yet")
        rendered = {d["metadata"]["name"]: d for d in golden_docs()
                    if d["kind"] == "CustomResourceDefinition"}
        for path in CRD_PATHS:
            with open(path) as f:
                (doc,) = [d for d in yaml.safe_load_all(f) if d]
            self.assertEqual(rendered[doc["metadata"]["name"]], doc, path)

    def test_docs_example_is_the_getting_started_job(self):
        # docs/kubernetes.md shows the job the crds checks apply.
        with open(os.path.join(ROOT, "docs", "kubernetes.md")) as f:
            docs = f.read()
        at = docs.index("With the CRDs installed, AIPerf's getting-started job")
        begin = docs.index("```yaml\n", at) + len("```yaml\n")
        shown = yaml.safe_load(docs[begin:docs.index("```", begin)])
        with open(GETTING_STARTED) as f:
            self.assertEqual(shown, yaml.safe_load(f))

    def test_bases_are_separate(self):
        with open(os.path.join(DEPLOY, "kustomization.yaml")) as f:
            top = yaml.safe_load(f)
        self.assertEqual(top["resources"], ["crds", "storage", "operator"])
        with open(os.path.join(DEPLOY, "crds", "kustomization.yaml")) as f:
            self.assertEqual(yaml.safe_load(f)["resources"], CRD_FILES)
        # Removing operator/ must not remove the results or the namespace holding them.
        out = subprocess.run([KUBECTL, "kustomize", os.path.join(DEPLOY, "operator")],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        kinds = {d["kind"] for d in yaml.safe_load_all(out.stdout) if d}
        self.assertNotIn("Namespace", kinds)
        self.assertNotIn("PersistentVolumeClaim", kinds)
        self.assertNotIn("CustomResourceDefinition", kinds)

    def test_operator_cluster_role_is_aiperfs(self):
        role = find(golden_docs(), "ClusterRole", "aiperf-operator")
        got = [(r["apiGroups"], r["resources"], r["verbs"]) for r in role["rules"]]
        self.assertEqual(got, OPERATOR_RULES)
        binding = find(golden_docs(), "ClusterRoleBinding", "aiperf-operator")
        self.assertEqual(binding["roleRef"]["name"], "aiperf-operator")
        self.assertEqual(binding["subjects"],
                         [{"kind": "ServiceAccount", "name": "aiperf-operator", "namespace": NS}])

    def test_no_benchmark_role_is_shipped(self):
        # The per-job Role is built by the operator; a shipped one would drift from it.
        # The one Role shipped is the operator's own, for its leader-election Lease.
        roles = [(d["kind"], d["metadata"]["name"]) for d in golden_docs()
                 if d["kind"] in ("Role", "RoleBinding")]
        self.assertEqual(roles, [("Role", "aiperf-operator-leader-election"),
                                 ("RoleBinding", "aiperf-operator-leader-election")])
        role = find(golden_docs(), "Role", "aiperf-operator-leader-election")
        self.assertEqual(role["metadata"]["namespace"], NS)
        self.assertEqual([(r["apiGroups"], r["resources"], r["verbs"]) for r in role["rules"]],
                         [(["coordination.k8s.io"], ["leases"], ["get", "create", "update"])])

    def test_deployment(self):
        docs = golden_docs()
        dep = find(docs, "Deployment", "aiperf-operator")
        self.assertEqual(dep["metadata"]["namespace"], NS)
        self.assertEqual(dep["spec"]["replicas"], 1)
        self.assertEqual(dep["spec"]["strategy"]["type"], "Recreate")
        pod = dep["spec"]["template"]["spec"]
        self.assertEqual(pod["serviceAccountName"], "aiperf-operator")
        psc = pod["securityContext"]
        self.assertTrue(psc["runAsNonRoot"])
        self.assertEqual(psc["runAsUser"], 1000)
        self.assertEqual(psc["seccompProfile"]["type"], "RuntimeDefault")
        (c,) = pod["containers"]
        version = subprocess.run([NODE_BIN, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout.split()[-1]
        self.assertEqual(c["image"], "aiperf-node:" + version)
        self.assertEqual(c["command"], ["aiperf-node", "operator"])
        csc = c["securityContext"]
        self.assertFalse(csc["allowPrivilegeEscalation"])
        self.assertTrue(csc["readOnlyRootFilesystem"])
        self.assertEqual(csc["capabilities"]["drop"], ["ALL"])
        ports = {p["name"]: p["containerPort"] for p in c["ports"]}
        self.assertEqual(ports["results"], 8081)
        self.assertEqual(c["livenessProbe"]["httpGet"]["port"], "health")
        self.assertEqual(c["readinessProbe"]["httpGet"]["port"], "results")
        self.assertEqual(c["readinessProbe"]["httpGet"]["path"], "/readyz")
        downward = {e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in c["env"]
                    if "valueFrom" in e}
        self.assertEqual(downward, {"POD_NAME": "metadata.name",
                                    "POD_NAMESPACE": "metadata.namespace"})
        env = {e["name"]: e.get("value") for e in c["env"]}
        self.assertEqual(env["AIPERF_RESULTS_DIR"], "/data")
        self.assertEqual(env["AIPERF_RESULTS_SERVER_PORT"], "8081")
        mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
        self.assertEqual(mounts["results"], "/data")
        vols = {v["name"]: v for v in pod["volumes"]}
        claim = vols["results"]["persistentVolumeClaim"]["claimName"]
        pvc = find(docs, "PersistentVolumeClaim", claim)
        self.assertEqual(pvc["metadata"]["namespace"], NS)
        svc = find(docs, "Service", "aiperf-operator")
        self.assertEqual(svc["spec"]["selector"],
                         {k: dep["spec"]["selector"]["matchLabels"][k]
                          for k in svc["spec"]["selector"]})
        self.assertIn({"name": "results", "port": 8081, "targetPort": "results"},
                      svc["spec"]["ports"])


class Apply(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.sim = SimCluster(self.tmp.name, NODE_BIN)

    def tearDown(self):
        self.assertEqual(self.sim.stop(), 0)
        self.tmp.cleanup()

    def test_dry_run_apply_get(self):
        docs = golden_docs()
        # A server dry run creates nothing, so on an empty cluster the objects in
        # aiperf-system are refused for the namespace alone (a real kube-apiserver
        # answers the same); everything else must pass.
        r = self.sim.kubectl("apply", "--dry-run=server", "-f", GOLDEN)
        errors = [l for l in r.stderr.splitlines() if l.strip()]
        namespaced = [d for d in docs if d["metadata"].get("namespace") == NS]
        self.assertEqual(len(errors), len(namespaced), r.stderr)
        for e in errors:
            self.assertIn('namespaces "%s" not found' % NS, e)
        self.assertEqual(r.stdout.count("(server dry run)"), len(docs) - len(namespaced),
                         r.stdout)

        r = self.sim.kubectl("apply", "-f", GOLDEN)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count(" created"), len(docs), r.stdout)

        # With the namespace there, the dry run passes for every object.
        r = self.sim.kubectl("apply", "--dry-run=server", "-f", GOLDEN)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count("(server dry run)"), len(docs), r.stdout)

        r = self.sim.kubectl("get", "-f", GOLDEN, "-o", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        got = json.loads(r.stdout)
        items = got["items"] if got.get("kind") == "List" else [got]
        self.assertEqual(
            sorted((i["kind"], i["metadata"]["name"], i["metadata"].get("namespace", ""))
                   for i in items),
            sorted((d["kind"], d["metadata"]["name"], d["metadata"].get("namespace", ""))
                   for d in docs))


class Crds(unittest.TestCase):
    def setUp(self):
        missing = missing_crds()
        self.assertEqual(missing, [], "k8s/deploy/crds lacks these: run `aiperf-node kube crd`")
        self.tmp = tempfile.TemporaryDirectory()
        self.sim = SimCluster(self.tmp.name, NODE_BIN)

    def tearDown(self):
        self.assertEqual(self.sim.stop(), 0)
        self.tmp.cleanup()

    def ok(self, *args, stdin=None):
        r = self.sim.kubectl(*args, stdin=stdin)
        self.assertEqual(r.returncode, 0, "kubectl %s: %s" % (" ".join(args), r.stderr))
        return r.stdout

    def install(self):
        for path in CRD_PATHS:
            out = self.ok("apply", "--dry-run=server", "-f", path)
            self.assertIn("created (server dry run)", out)
        # Client-side apply stores the whole object as the last-applied annotation.
        for path in CRD_PATHS:
            self.assertIn(" created", self.ok("apply", "-f", path))
        self.ok("wait", "--for=condition=Established", "--timeout=30s",
                "crd/aiperfjobs.aiperf.nvidia.com", "crd/aiperfsweeps.aiperf.nvidia.com")

    def test_apply_dry_run_and_established(self):
        self.install()
        for path in CRD_PATHS:
            with open(path) as f:
                (want,) = [d for d in yaml.safe_load_all(f) if d]
            got = json.loads(self.ok("get", "crd", want["metadata"]["name"], "-o", "json"))
            self.assertEqual(got["spec"]["names"], want["spec"]["names"])
            self.assertEqual(got["spec"]["versions"][0]["schema"],
                             want["spec"]["versions"][0]["schema"])
            last = got["metadata"]["annotations"][
                "kubectl.kubernetes.io/last-applied-configuration"]
            self.assertEqual(json.loads(last)["spec"], want["spec"])
            self.assertLess(len(last), 256 * 1024)
            conds = {c["type"]: c["status"] for c in got["status"]["conditions"]}
            self.assertEqual(conds.get("Established"), "True")
        # Applying again changes nothing; the dry run of the update passes too.
        for path in CRD_PATHS:
            self.assertIn("unchanged", self.ok("apply", "-f", path))
            self.ok("apply", "--dry-run=server", "-f", path)

    def test_names_columns_and_the_getting_started_job(self):
        self.install()
        self.assertIn("No resources found", self.sim.kubectl("get", "aiperfjobs").stderr)
        self.ok("create", "namespace", "bench")
        self.assertIn("aiperfjob.aiperf.nvidia.com/dynamo-benchmark created",
                      self.ok("apply", "-n", "bench", "-f", GETTING_STARTED))
        for name in ("aiperfjobs", "aiperfjob", "apj", "aiperfjobs.aiperf.nvidia.com"):
            out = self.ok("get", "-n", "bench", name)
            header = out.splitlines()[0].split()
            self.assertEqual(header, ["NAME", "PHASE", "STAGE", "DONE", "TOTAL", "QPS",
                                      "TPS", "TTFT", "ITL", "E2E", "AGE"], name)
            self.assertTrue(out.splitlines()[1].startswith("dynamo-benchmark "), out)
        wide = self.ok("get", "-n", "bench", "apj", "-o", "wide").splitlines()[0].split()
        self.assertEqual(wide[-6:], ["TTFT_P99", "ITL_P99", "E2E_P99", "TTFT_AVG",
                                     "ITL_AVG", "E2E_P99_9"])
        self.assertEqual(self.ok("get", "-n", "bench", "aps", "-o", "name").strip(), "")
        with open(GETTING_STARTED) as f:
            job = yaml.safe_load(f)
        sweep = {"apiVersion": job["apiVersion"], "kind": "AIPerfSweep",
                 "metadata": {"name": "grid"},
                 "spec": dict(job["spec"], sweep={"type": "grid",
                                                  "variables": {"concurrency": [10, 20]}})}
        self.ok("apply", "-n", "bench", "-f", "-", stdin=json.dumps(sweep))
        header = self.ok("get", "-n", "bench", "aps").splitlines()[0].split()
        self.assertEqual(header, ["NAME", "PHASE", "COMPLETED", "TOTAL", "FAILED", "CURRENT",
                                  "AGE"])
        # kubectl expands `aiperf` as the category before the short name: both kinds.
        self.assertEqual(sorted(self.ok("get", "-n", "bench", "aiperf", "-o", "name").split()),
                         ["aiperfjob.aiperf.nvidia.com/dynamo-benchmark",
                          "aiperfsweep.aiperf.nvidia.com/grid"])

        # The image is fixed at creation; cancel may change.
        r = self.sim.kubectl("patch", "-n", "bench", "apj", "dynamo-benchmark", "--type=merge",
                             "-p", '{"spec":{"image":"aiperf-node:9.9.9"}}')
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("spec.image is immutable after creation; create a new AIPerfJob "
                      "to change it", r.stderr)
        out = self.ok("patch", "-n", "bench", "apj", "dynamo-benchmark", "--type=merge",
                      "-p", '{"spec":{"cancel":true}}')
        self.assertIn("patched", out)
        got = json.loads(self.ok("get", "-n", "bench", "apj", "dynamo-benchmark", "-o", "json"))
        self.assertIs(got["spec"]["cancel"], True)


def dockerfile_stages():
    """[(image, alias, [instructions])] with line continuations joined."""
    with open(DOCKERFILE) as f:
        text = re.sub(r"\\\n", " ", f.read())
    stages = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        op, _, rest = line.partition(" ")
        op = op.upper()
        if op == "FROM":
            m = re.match(r"(\S+)(?:\s+AS\s+(\S+))?\s*$", rest, re.I)
            stages.append((m.group(1), m.group(2), []))
        else:
            stages[-1][2].append((op, rest.strip()))
    return stages


def apt_packages(instructions):
    pkgs = []
    for op, rest in instructions:
        if op != "RUN":
            continue
        for m in re.finditer(r"apt-get install ([^;&|]*)", rest):
            pkgs += [w for w in m.group(1).split() if not w.startswith("-")]
    return pkgs


def depends_closure(pkgs):
    """Packages and their installed Depends/Pre-Depends, recursively."""
    seen, todo = set(), list(pkgs)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        r = subprocess.run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", p],
                           capture_output=True, text=True)
        for alt in r.stdout.split(","):
            # First alternative, architecture qualifier and version dropped.
            name = alt.split("|")[0].strip().split(" ")[0].split(":")[0]
            if name:
                todo.append(name)
    return seen


def package_of(path):
    real = os.path.realpath(path)
    for cand in {path, real, re.sub(r"^/usr", "", real), "/usr" + real}:
        r = subprocess.run(["dpkg", "-S", cand], capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout.split(":")[0].split(",")[0].strip()
    return None


class Dockerfile(unittest.TestCase):
    def test_stages(self):
        stages = dockerfile_stages()
        self.assertEqual(len(stages), 2)
        (build_image, build_alias, build), (run_image, _, run) = stages
        self.assertRegex(build_image, r"^debian:(12|bookworm)(-\d+)?$")
        self.assertRegex(run_image, r"^debian:(12|bookworm)(-\d+)?-slim$")
        self.assertTrue(build_alias)
        build_runs = " ".join(r for op, r in build if op == "RUN")
        self.assertIn("tools/bootstrap", build_runs)
        self.assertIn("tools/build", build_runs)
        copies = [r for op, r in run if op == "COPY"]
        self.assertTrue(any("--from=" + build_alias in c and "aiperf-node" in c for c in copies),
                        copies)

    def test_runtime_runs_as_1000(self):
        (_, _, run) = dockerfile_stages()[-1]
        users = [r for op, r in run if op == "USER"]
        self.assertTrue(users, "the runtime stage sets no USER")
        self.assertEqual(users[-1].split(":")[0], "1000")

    def test_entrypoint(self):
        (_, _, run) = dockerfile_stages()[-1]
        eps = [r for op, r in run if op == "ENTRYPOINT"]
        self.assertTrue(eps)
        self.assertEqual(json.loads(eps[-1]), ["aiperf-node"])

    def test_image_name_is_ours(self):
        with open(DOCKERFILE) as f:
            text = f.read()
        self.assertIn("aiperf-node:", text)
        self.assertNotIn("nvcr.io", text)

    def test_runtime_packages_cover_the_binary(self):
        if not shutil.which("dpkg-query"):
            skip_or_fail("dpkg is not installed")
        (_, _, run) = dockerfile_stages()[-1]
        listed = apt_packages(run)
        self.assertTrue(listed, "the runtime stage installs no packages")
        for p in listed:
            r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True,
                               text=True)
            self.assertIn("install ok installed", r.stdout,
                          "%s is not a Debian 12 package installed here" % p)
        covered = depends_closure(listed)
        r = subprocess.run(["ldd", NODE_BIN], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        libs = re.findall(r"^\s*(\S+) => (/\S+)", r.stdout, re.M)
        self.assertGreater(len(libs), 5, r.stdout)
        uncovered = []
        for name, path in libs:
            pkg = package_of(path)
            self.assertIsNotNone(pkg, "no package owns %s" % path)
            if pkg not in covered:
                uncovered.append("%s (%s)" % (name, pkg))
        self.assertEqual(uncovered, [], "the runtime stage does not install these")


def main():
    global NODE_BIN
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    mode, NODE_BIN = sys.argv[1], os.path.abspath(sys.argv[2])
    if yaml is None:
        skip_or_fail("PyYAML (python3-yaml) is not installed")
    if mode in ("render", "apply", "crds", "update-golden") and not os.access(KUBECTL, os.X_OK):
        skip_or_fail("kubectl is not installed")
    if mode == "update-golden":
        with open(GOLDEN, "w") as f:
            f.write(render())
        return
    cases = {"render": Render, "apply": Apply, "crds": Crds, "dockerfile": Dockerfile}[mode]
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(cases)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
