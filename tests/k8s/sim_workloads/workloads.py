#!/usr/bin/python3
"""Pods as real processes: `aiperf-node sim-cluster --tls --workloads` end to end.

Usage: workloads.py path/to/aiperf-node [unittest args]

One simulator for the whole file (the checks run in the order of their
names; the last one kills it with SIGKILL). The real kubectl drives it; pods
run a test image mapped to /bin/sh (`--image-map test-image:1=/bin/sh`) and
the mock server (`aiperf-node:dev`, which runs this aiperf-node) from
k8s/deploy/examples/mock-server.yaml. Checked: the mock reached by DNS from
two client pods with distinct addresses and from the host only through the
service proxy; a JobSet's pods resolving each other and its active child
Job deleted once it completed; a pod calling the API server as in-cluster
clients do (KUBERNETES_SERVICE_HOST/PORT, the service-account token and CA,
the certificate's kubernetes.default.svc); the STATUS column through a pod's
life; pod faults through `sim-cluster ctl` (ImagePullBackOff, Unschedulable,
partition, kill with exit 137); SIGTERM and SIGKILL of the simulator leaving no pod process, file,
interface or namespace.

Needs root (network and PID namespaces), kubectl, curl and getent. Exits 77
(ctest: skipped) when one is missing; with CI=true that is a failure instead.
"""

import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "..", "support"))
from sim_cluster import KUBECTL, SimCluster, skip_or_fail  # noqa: E402

NODE_BIN = None
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
MOCK_YAML = os.path.join(REPO, "k8s", "deploy", "examples", "mock-server.yaml")
NS = "wl"


def ip_links():
    r = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True)
    return set(line.split(":")[1].strip().split("@")[0] for line in r.stdout.splitlines())


def netns_list():
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return set(r.stdout.split())


def alive(pid):
    """True while `pid` runs (a zombie has already ended)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except FileNotFoundError:
        return False


class Sim(SimCluster):
    """The simulator with --workloads, and the pod network its second line names."""

    def __init__(self, workdir, tls=True):
        super().__init__(workdir, NODE_BIN, tls=tls, workloads=True,
                         extra_args=["--image-map", "test-image:1=/bin/sh",
                                     "--backoff-scale", "0.1"])
        words = self.pod_network.split()
        if len(words) != 5 or words[:2] != ["pod", "network"] or words[3] != "gateway":
            raise RuntimeError("sim-cluster's second line is %r; log:\n%s"
                               % (self.pod_network, self.log()))
        self.cidr = ipaddress.ip_network(words[2])
        self.gateway = ipaddress.ip_address(words[4])


SIM = None


def kubectl(*args, stdin=None, check=True, timeout=60):
    r = subprocess.run([KUBECTL, "-n", NS, *args], input=stdin, capture_output=True,
                       text=True, env=SIM.env, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError("kubectl %s failed (%d): %s\nsimulator log:\n%s"
                             % (" ".join(args), r.returncode, r.stderr, SIM.log()))
    return r


def ctl(*args):
    r = subprocess.run([NODE_BIN, "sim-cluster", "ctl", "--kubeconfig", SIM.kubeconfig, *args],
                       capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise AssertionError("ctl %s failed (%d): %s" % (" ".join(args), r.returncode, r.stderr))
    return json.loads(r.stdout)


def get(kind, name=None, selector=None):
    args = ["get", kind, "-o", "json"]
    if name:
        args.insert(2, name)
    if selector:
        args += ["-l", selector]
    return json.loads(kubectl(*args).stdout)


def status_column(pod):
    """kubectl get pods' STATUS of one pod (the server-side Table)."""
    out = kubectl("get", "pod", pod, "--no-headers").stdout.split()
    return out[2] if len(out) > 2 else ""


def wait_for(what, pred, timeout=30, every=0.2):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(every)
    raise AssertionError("timed out after %d s waiting for %s (last: %r)\nsimulator log:\n%s"
                         % (timeout, what, last, SIM.log()))


def job(name, script, completions=1, parallelism=1, labels=None):
    return json.dumps({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "completions": completions, "parallelism": parallelism, "backoffLimit": 0,
            "template": {
                "metadata": {"labels": labels or {"app": name}},
                "spec": {"restartPolicy": "Never",
                         "containers": [{"name": "c", "image": "test-image:1",
                                         "args": ["-c", script]}]}}}})


class Workloads(unittest.TestCase):
    baseline_links = set()
    baseline_netns = set()

    @classmethod
    def setUpClass(cls):
        global SIM
        cls.workdir = tempfile.mkdtemp(prefix="sim-workloads-")
        cls.baseline_links = ip_links()
        cls.baseline_netns = netns_list()
        SIM = Sim(cls.workdir)
        kubectl("create", "namespace", NS)
        wait_for("the default ServiceAccount of " + NS,
                 lambda: kubectl("get", "serviceaccount", "default", check=False).returncode == 0)

    @classmethod
    def tearDownClass(cls):
        if SIM is not None and SIM.proc.poll() is None:
            SIM.proc.send_signal(signal.SIGTERM)
            try:
                SIM.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                SIM.proc.kill()
                SIM.proc.wait()
        if SIM is not None:
            SIM.proc.stdout.close()
        shutil.rmtree(cls.workdir, ignore_errors=True)

    def test_1_mock_by_dns_and_through_the_service_proxy(self):
        kubectl("apply", "-f", MOCK_YAML)
        kubectl("wait", "--for=condition=Available", "deployment/mock", "--timeout=60s",
                timeout=70)
        mock_pods = get("pods", selector="app.kubernetes.io/name=mock")["items"]
        self.assertEqual(len(mock_pods), 1)
        mock_ip = ipaddress.ip_address(mock_pods[0]["status"]["podIP"])
        self.assertIn(mock_ip, SIM.cidr)
        self.assertNotEqual(mock_ip, SIM.gateway)

        # Two client pods reach the mock by its Service's DNS name.
        url = "http://mock.%s.svc.cluster.local:8000/v1/models" % NS
        kubectl("create", "-f", "-", stdin=job("client", "curl -sf " + url, 2, 2))
        kubectl("wait", "--for=condition=Complete", "job/client", "--timeout=60s", timeout=70)
        clients = get("pods", selector="job-name=client")["items"]
        self.assertEqual(len(clients), 2)
        ips = {c["status"].get("podIP") for c in clients}
        self.assertEqual(len(ips), 2, "client pods share an address: %r" % ips)
        for c in clients:
            self.assertIn(ipaddress.ip_address(c["status"]["podIP"]), SIM.cidr)
            self.assertEqual(c["status"]["phase"], "Succeeded")
            out = kubectl("logs", c["metadata"]["name"]).stdout
            self.assertEqual(json.loads(out)["object"], "list", out)

        # The mock answered both (its counters, read through the proxy).
        metrics = kubectl("get", "--raw", "/api/v1/namespaces/%s/services/mock:8000/proxy/metrics"
                          % NS).stdout
        models = [l for l in metrics.splitlines()
                  if l.startswith('aiperf_mock_requests_total{endpoint="models"}')]
        self.assertEqual(len(models), 1, metrics)
        self.assertGreaterEqual(float(models[0].split()[-1]), 2)

        # The host reaches the mock only through the API server's proxy.
        models = kubectl("get", "--raw",
                         "/api/v1/namespaces/%s/services/mock:8000/proxy/v1/models" % NS).stdout
        self.assertEqual(json.loads(models)["object"], "list")
        health = kubectl("get", "--raw", "/api/v1/namespaces/%s/pods/%s:8000/proxy/health"
                         % (NS, mock_pods[0]["metadata"]["name"])).stdout
        self.assertEqual(json.loads(health)["status"], "healthy")
        # The host has no address in the pod network, and a request to the
        # pod's address from here does not reach the mock (it fails, or
        # goes out the host's default route to something else).
        host_addrs = subprocess.run(["ip", "-o", "-4", "addr"], capture_output=True,
                                    text=True, check=True).stdout.split()
        for word in host_addrs:
            if "/" in word and word[0].isdigit():
                self.assertNotIn(ipaddress.ip_interface(word).ip, SIM.cidr)
        try:
            with urllib.request.urlopen("http://%s:8000/v1/models" % mock_ip, timeout=2) as r:
                self.assertNotIn(b"mock-model", r.read())
        except (OSError, ValueError):
            pass
        # A closed port is kube-apiserver's 503.
        refused = kubectl("get", "--raw", "/api/v1/namespaces/%s/pods/%s:9/proxy/"
                          % (NS, mock_pods[0]["metadata"]["name"]), check=False)
        self.assertNotEqual(refused.returncode, 0)
        self.assertIn("connection refused", refused.stderr)

    def test_2_jobset_pods_resolve_each_other(self):
        # a's pod resolves both pods' hostnames and ends; b's keeps running.
        # successPolicy Any of [a]: the JobSet is Completed with b's Job still
        # active, and JobSet deletes it (upstream deletes active child Jobs
        # of a finished JobSet).
        resolve = ("for i in $(seq 1 100); do getent hosts js-a-0-0.js >/dev/null && "
                   "getent hosts js-b-0-0.js >/dev/null && break; sleep 0.2; done; "
                   "getent hosts js-a-0-0.js && getent hosts js-b-0-0.js && sleep 1")
        rjob = lambda name, script: {
            "name": name, "replicas": 1,
            "template": {"spec": {"parallelism": 1, "completions": 1, "backoffLimit": 0,
                                  "template": {"spec": {
                                      "restartPolicy": "Never",
                                      "terminationGracePeriodSeconds": 1,
                                      "containers": [{"name": "c", "image": "test-image:1",
                                                      "args": ["-c", script]}]}}}}}
        kubectl("create", "-f", "-", stdin=json.dumps({
            "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "js"},
            "spec": {"successPolicy": {"operator": "Any", "targetReplicatedJobs": ["a"]},
                     "replicatedJobs": [rjob("a", resolve), rjob("b", "sleep 300")]}}))
        job_names = lambda: sorted(j["metadata"]["name"] for j in get(
            "jobs", selector="jobset.sigs.k8s.io/jobset-name=js")["items"])
        wait_for("the JobSet's child Jobs js-a-0 and js-b-0",
                 lambda: job_names() == ["js-a-0", "js-b-0"])
        # Each pod's address as it appears (b's pod goes once the JobSet has
        # completed).
        by_host, pod_of = {}, {}

        def both_with_addresses():
            for p in get("pods", selector="jobset.sigs.k8s.io/jobset-name=js")["items"]:
                self.assertEqual(p["spec"].get("subdomain"), "js")
                if p["status"].get("podIP"):
                    by_host[p["spec"]["hostname"]] = p["status"]["podIP"]
                    pod_of[p["spec"]["hostname"]] = p["metadata"]["name"]
            return len(by_host) == 2
        wait_for("both pods with addresses", both_with_addresses, every=0.1)
        self.assertEqual(sorted(by_host), ["js-a-0-0", "js-b-0-0"])
        self.assertNotEqual(by_host["js-a-0-0"], by_host["js-b-0-0"])
        kubectl("wait", "--for=condition=Completed", "jobset/js", "--timeout=60s", timeout=70)
        out = kubectl("logs", pod_of["js-a-0-0"]).stdout
        answers = [line.split() for line in out.splitlines()]
        for host, ip in by_host.items():
            self.assertIn([ip, "%s.js.%s.svc.cluster.local" % (host, NS)], answers, out)
        # The active child Job goes; the completed one stays.
        wait_for("the active child Job to be deleted", lambda: job_names() == ["js-a-0"],
                 timeout=30)

    def test_4_pods_reach_the_api_server_as_in_cluster_clients_do(self):
        sa = "/var/run/secrets/kubernetes.io/serviceaccount"
        script = ("curl -sf --cacert %s/ca.crt -H \"Authorization: Bearer $(cat %s/token)\" "
                  "https://kubernetes.default.svc:$KUBERNETES_SERVICE_PORT/api/v1/namespaces/%s"
                  "/pods/incluster && echo && echo host=$KUBERNETES_SERVICE_HOST"
                  % (sa, sa, NS))
        kubectl("create", "role", "pod-reader", "--verb=get", "--resource=pods")
        kubectl("create", "rolebinding", "pod-reader", "--role=pod-reader",
                "--serviceaccount=%s:default" % NS)
        kubectl("create", "-f", "-", stdin=json.dumps({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "incluster"},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "c", "image": "test-image:1",
                                     "args": ["-c", script]}]}}))
        wait_for("incluster to end", lambda: get("pod", "incluster")["status"].get(
            "phase") in ("Succeeded", "Failed"))
        out = [l for l in kubectl("logs", "incluster").stdout.splitlines() if l]
        self.assertEqual(get("pod", "incluster")["status"]["phase"], "Succeeded", out)
        self.assertEqual(json.loads(out[0])["metadata"]["name"], "incluster")
        self.assertEqual(out[1], "host=%s" % SIM.gateway)

    def test_3_status_column_through_a_pods_life(self):
        # Pending: no Node matches.
        kubectl("create", "-f", "-", stdin=json.dumps({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nowhere"},
            "spec": {"nodeSelector": {"disk": "none"},
                     "containers": [{"name": "c", "image": "test-image:1",
                                     "args": ["-c", "true"]}]}}))
        wait_for("nowhere Unschedulable", lambda: any(
            c.get("reason") == "Unschedulable"
            for c in get("pod", "nowhere")["status"].get("conditions", [])))
        self.assertEqual(status_column("nowhere"), "Pending")
        # ContainerCreating: its ConfigMap volume does not exist yet.
        kubectl("create", "-f", "-", stdin=json.dumps({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "life"},
            "spec": {"restartPolicy": "Never",
                     "volumes": [{"name": "v", "configMap": {"name": "later"}}],
                     "containers": [{"name": "c", "image": "test-image:1",
                                     "args": ["-c", "cat /cfg/k; sleep 2"],
                                     "volumeMounts": [{"name": "v", "mountPath": "/cfg"}]}]}}))
        wait_for("life ContainerCreating", lambda: status_column("life") == "ContainerCreating")
        kubectl("create", "configmap", "later", "--from-literal=k=hello")
        wait_for("life Running", lambda: status_column("life") == "Running")
        wait_for("life Completed", lambda: status_column("life") == "Completed", timeout=30)
        self.assertEqual(kubectl("logs", "life").stdout, "hello")

    def test_5_pod_faults_through_ctl(self):
        def pod(name, app, script="sleep 600"):
            kubectl("create", "-f", "-", stdin=json.dumps({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "labels": {"app": app}},
                "spec": {"restartPolicy": "Never",
                         "containers": [{"name": "c", "image": "test-image:1",
                                         "args": ["-c", script]}]}}))
        ctl("podfaults", "add", json.dumps({"namespace": NS, "labelSelector": "app=pull",
                                            "state": "ImagePullBackOff", "count": 1}))
        ctl("podfaults", "add", json.dumps({"namespace": NS, "labelSelector": "app=sched",
                                            "state": "Unschedulable", "count": 1}))
        pod("pull", "pull")
        pod("sched", "sched")
        pod("victim", "victim")
        wait_for("pull ImagePullBackOff", lambda: status_column("pull") in (
            "ErrImagePull", "ImagePullBackOff"))
        wait_for("sched Unschedulable", lambda: any(
            c.get("reason") == "Unschedulable"
            for c in get("pod", "sched")["status"].get("conditions", [])))
        self.assertEqual(status_column("sched"), "Pending")
        wait_for("victim Running", lambda: status_column("victim") == "Running")
        ctl("pods", "partition", "-n", NS, "victim", "--seconds", "1")
        ctl("pods", "kill", "-n", NS, "victim", "--signal", "KILL")
        def exit_code():
            st = get("pod", "victim")["status"].get("containerStatuses", [{}])[0]
            return st.get("state", {}).get("terminated", {}).get("exitCode")
        self.assertEqual(wait_for("victim killed", exit_code), 137)

    def test_8_sigterm_stops_the_pods_and_removes_their_files(self):
        global SIM
        main, SIM = SIM, Sim(os.path.join(self.workdir, "second"), tls=False)
        try:
            kubectl("create", "namespace", NS)
            wait_for("the default ServiceAccount of " + NS, lambda: kubectl(
                "get", "serviceaccount", "default", check=False).returncode == 0)
            kubectl("create", "-f", "-", stdin=json.dumps({
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sleeper"},
                "spec": {"containers": [{"name": "c", "image": "test-image:1",
                                         "args": ["-c", "sleep 600"]}]}}))
            wait_for("sleeper Running", lambda: status_column("sleeper") == "Running")
            info = ctl("pods", "info", "-n", NS, "sleeper")
            pids = [info["pid"]] + [c["pid"] for c in info["containers"]]
            self.assertTrue(all(alive(p) for p in pids))
            self.assertEqual(len(os.listdir(SIM.tmp)), 1)
            SIM.proc.send_signal(signal.SIGTERM)
            self.assertEqual(SIM.proc.wait(timeout=10), 0)
            self.assertFalse(any(alive(p) for p in pids))
            self.assertEqual(os.listdir(SIM.tmp), [])
        finally:
            if SIM.proc.poll() is None:
                SIM.proc.kill()
                SIM.proc.wait()
            SIM.proc.stdout.close()
            SIM = main

    def test_9_kill_9_leaves_nothing(self):
        kubectl("create", "-f", "-", stdin=json.dumps({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sleeper"},
            "spec": {"containers": [{"name": "c", "image": "test-image:1",
                                     "args": ["-c", "sleep 600"]}]}}))
        wait_for("sleeper Running", lambda: status_column("sleeper") == "Running")
        pids = set()
        netns = set()
        for pod in ["sleeper"] + [p["metadata"]["name"] for p in get(
                "pods", selector="app.kubernetes.io/name=mock")["items"]]:
            info = ctl("pods", "info", "-n", NS, pod)
            pids.add(info["pid"])
            netns.add(info["netns"])
            pids.update(c["pid"] for c in info["containers"] if c["pid"])
        self.assertTrue(all(alive(p) for p in pids), pids)
        self.assertEqual(len(netns), 2, "each pod has its own network namespace: %r" % netns)
        host_netns = os.readlink("/proc/self/ns/net")
        self.assertNotIn(host_netns, netns)

        SIM.proc.send_signal(signal.SIGKILL)
        SIM.proc.wait()
        wait_for("every pod process to end", lambda: not any(alive(p) for p in pids), timeout=5,
                 every=0.1)
        self.assertEqual({l for l in ip_links() - self.baseline_links if "veth" in l or
                          l.startswith("aiperf")}, set())
        self.assertEqual(netns_list() - self.baseline_netns, set())


def main():
    global NODE_BIN
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    NODE_BIN = os.path.abspath(sys.argv.pop(1))
    if os.geteuid() != 0:
        skip_or_fail("needs root: the pod network makes network and PID namespaces")
    for tool in (KUBECTL, shutil.which("curl"), shutil.which("getent"), shutil.which("ip")):
        if not tool or not os.access(tool, os.X_OK):
            skip_or_fail("kubectl, curl, getent and ip are needed")
    r = unittest.main(exit=False, verbosity=2).result
    return 0 if r.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
